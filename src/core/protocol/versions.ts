/** Protocol revisions, newest first. We offer the first and accept any listed. */
export const SUPPORTED_PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'] as const;
export type ProtocolVersion = (typeof SUPPORTED_PROTOCOL_VERSIONS)[number];
export const LATEST_PROTOCOL_VERSION: ProtocolVersion = SUPPORTED_PROTOCOL_VERSIONS[0];

export function isSupportedProtocolVersion(v: unknown): v is ProtocolVersion {
  return typeof v === 'string' && (SUPPORTED_PROTOCOL_VERSIONS as readonly string[]).includes(v);
}
