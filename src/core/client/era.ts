import { ErrorCode, McpError } from '../protocol/errors';
import type { DiscoverResult } from '../protocol/types';
import { MODERN_PROTOCOL_VERSIONS, isModernProtocolVersion, isSupportedProtocolVersion, type ModernProtocolVersion } from '../protocol/versions';

/**
 * Which protocol era to speak with a server: find out (`auto`: probe `server/discover`, else
 * `initialize`), or one fixed revision: 2026-07-28 (stateless) or 2025-11-25 (the initialize
 * handshake, which may still settle on an older revision the server prefers).
 */
export type ProtocolChoice = 'auto' | '2026-07-28' | '2025-11-25';

/** What one `server/discover` probe told us. */
export type ProbeVerdict =
  /** The server speaks this stateless revision. */
  | { kind: 'modern'; version: ModernProtocolVersion }
  /** Ask again with this revision: the server named it among the ones it supports (-32022). */
  | { kind: 'retry'; version: ModernProtocolVersion }
  /** Not a stateless server: use initialize. */
  | { kind: 'legacy'; reason: string };

/** A discover result means modern, if it names a revision we speak. */
export function judgeDiscoverResult(result: unknown, asked: ModernProtocolVersion): ProbeVerdict {
  if (!result || typeof result !== 'object' || !Array.isArray((result as DiscoverResult).supportedVersions)) {
    return { kind: 'legacy', reason: 'server/discover answered without supportedVersions' };
  }
  const supported = (result as DiscoverResult).supportedVersions;
  if (supported.includes(asked)) return { kind: 'modern', version: asked };
  const shared = sharedModernVersion(supported);
  return shared ? { kind: 'retry', version: shared } : { kind: 'legacy', reason: `server/discover offers ${JSON.stringify(supported)}, no stateless revision we speak` };
}

/**
 * An error answer to the probe. Only the new-style errors of 2026-07-28 (-32020…-32022) mean the
 * server is stateless; everything else (-32601, -32602, "not initialized", an HTTP refusal) means
 * an older server, whose code varies from one SDK to the next, so no single code is trusted.
 * A timeout is the caller's to judge (legacy on stdio, a failure over HTTP).
 */
export function judgeDiscoverError(error: McpError, asked: ModernProtocolVersion): ProbeVerdict {
  switch (error.code) {
    case ErrorCode.HeaderMismatch:
    case ErrorCode.MissingRequiredClientCapability:
      return { kind: 'modern', version: asked };
    case ErrorCode.UnsupportedProtocolVersion: {
      const supported = (error.data as { supported?: unknown } | undefined)?.supported;
      const list = Array.isArray(supported) ? supported : [];
      const shared = sharedModernVersion(list);
      // Also when it names the very version it refused: asked again once, as the spec's retry rule says.
      if (shared) return { kind: 'retry', version: shared };
      if (list.some(isSupportedProtocolVersion)) return { kind: 'legacy', reason: `the server supports ${JSON.stringify(list)}` };
      throw McpError.invalidParams(`The server speaks ${JSON.stringify(list)}; MCP Host speaks ${[...MODERN_PROTOCOL_VERSIONS].join(', ')} and 2025-11-25 and older`, { supported: list });
    }
    default:
      return { kind: 'legacy', reason: `server/discover failed with ${error.code} ${error.message}` };
  }
}

/** The newest stateless revision both sides speak. */
function sharedModernVersion(theirs: readonly unknown[]): ModernProtocolVersion | undefined {
  return MODERN_PROTOCOL_VERSIONS.find((v) => theirs.includes(v) && isModernProtocolVersion(v));
}

/** What a connection settled on, remembered per definition hash. */
export type EraVerdict = { era: 'modern'; version: ModernProtocolVersion } | { era: 'legacy' };

/**
 * The era each definition turned out to speak, so the next start of a legacy server skips the
 * probe (and a server that exits on it is not started twice again). In memory; `entries` and the
 * constructor let the host persist it.
 */
export class EraVerdicts {
  private readonly byHash: Map<string, EraVerdict>;

  constructor(entries: Iterable<[string, EraVerdict]> = []) {
    this.byHash = new Map(entries);
  }

  get(hash: string): EraVerdict | undefined {
    return this.byHash.get(hash);
  }

  set(hash: string, verdict: EraVerdict): void {
    this.byHash.set(hash, verdict);
  }

  delete(hash: string): void {
    this.byHash.delete(hash);
  }

  entries(): Array<[string, EraVerdict]> {
    return [...this.byHash.entries()];
  }
}

/** The protocol to connect with: the definition's own choice wins; under `auto` a remembered legacy verdict skips the probe. */
export function protocolToUse(choice: ProtocolChoice, remembered: EraVerdict | undefined): ProtocolChoice {
  if (choice !== 'auto') return choice;
  return remembered?.era === 'legacy' ? '2025-11-25' : 'auto';
}
