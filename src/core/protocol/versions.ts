/** Protocol revisions of the initialize era (2025-11-25 and before), newest first. We offer the first and accept any listed. */
export const SUPPORTED_PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'] as const;
export type ProtocolVersion = (typeof SUPPORTED_PROTOCOL_VERSIONS)[number];
export const LATEST_PROTOCOL_VERSION: ProtocolVersion = SUPPORTED_PROTOCOL_VERSIONS[0];

export function isSupportedProtocolVersion(v: unknown): v is ProtocolVersion {
  return typeof v === 'string' && (SUPPORTED_PROTOCOL_VERSIONS as readonly string[]).includes(v);
}

/**
 * Revisions of the stateless era (2026-07-28 and later: no initialize, `server/discover`, every
 * request carries its version in `_meta`), newest first.
 */
export const MODERN_PROTOCOL_VERSIONS = ['2026-07-28'] as const;
export type ModernProtocolVersion = (typeof MODERN_PROTOCOL_VERSIONS)[number];

export function isModernProtocolVersion(v: unknown): v is ModernProtocolVersion {
  return typeof v === 'string' && (MODERN_PROTOCOL_VERSIONS as readonly string[]).includes(v);
}

/** The `_meta` keys of the stateless era (2026-07-28 `basic/index`). */
export const MetaKeys = {
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
  serverInfo: 'io.modelcontextprotocol/serverInfo',
  logLevel: 'io.modelcontextprotocol/logLevel',
  /** On every notification of a `subscriptions/listen`: the id of that listen request. */
  subscriptionId: 'io.modelcontextprotocol/subscriptionId',
} as const;
