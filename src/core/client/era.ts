import { ErrorCode, McpError } from '../protocol/errors';
import type { DiscoverResult } from '../protocol/types';
import {
  MODERN_PROTOCOL_VERSIONS,
  isModernProtocolVersion,
  isSupportedProtocolVersion,
  type ModernProtocolVersion,
} from '../protocol/versions';

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
  return shared
    ? { kind: 'retry', version: shared }
    : { kind: 'legacy', reason: `server/discover offers ${JSON.stringify(supported)}, no stateless revision we speak` };
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
      throw McpError.invalidParams(
        `The server speaks ${JSON.stringify(list)}; MCP Host speaks ${[...MODERN_PROTOCOL_VERSIONS].join(', ')} and 2025-11-25 and older`,
        { supported: list },
      );
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

/** How {@link EraVerdicts} are stored (the host keeps them in its global state): hash, verdict, when. */
export type StoredEraVerdicts = Array<[string, EraVerdict & { at: number }]>;

/** Definitions remembered at most; the ones not seen for longest go first. */
export const ERA_VERDICTS_KEPT = 200;
/** A verdict older than this is asked again: a server may have been upgraded meanwhile. */
export const ERA_VERDICT_MAX_AGE_MS = 30 * 24 * 60 * 60 * 1000;

export interface EraVerdictsOptions {
  now?: () => number;
  /** Called after every change, with what to store. */
  onDidChange?: (stored: StoredEraVerdicts) => void;
}

/**
 * The era each definition turned out to speak, so the next start of a legacy server skips the
 * probe (and a server that exits on it is not started twice again). Bounded and aged; the host
 * persists it through `stored` and {@link EraVerdicts.fromStored}.
 */
export class EraVerdicts {
  private readonly byHash = new Map<string, EraVerdict & { at: number }>();
  private readonly now: () => number;

  constructor(
    entries: Iterable<[string, EraVerdict]> = [],
    private readonly options: EraVerdictsOptions = {},
  ) {
    this.now = options.now ?? Date.now;
    const at = this.now();
    for (const [hash, verdict] of entries) this.byHash.set(hash, { ...verdict, at });
  }

  /** What was stored, minus anything malformed, too old or over the bound: a damaged store only costs a probe. */
  static fromStored(value: unknown, options: EraVerdictsOptions = {}): EraVerdicts {
    const verdicts = new EraVerdicts([], options);
    if (!Array.isArray(value)) return verdicts;
    const oldest = verdicts.now() - ERA_VERDICT_MAX_AGE_MS;
    const usable = value.filter((entry): entry is StoredEraVerdicts[number] => isStoredEntry(entry) && entry[1].at >= oldest);
    for (const [hash, entry] of usable.sort((a, b) => a[1].at - b[1].at).slice(-ERA_VERDICTS_KEPT)) {
      verdicts.byHash.set(
        hash,
        entry.era === 'modern' ? { era: 'modern', version: entry.version, at: entry.at } : { era: 'legacy', at: entry.at },
      );
    }
    return verdicts;
  }

  get(hash: string): EraVerdict | undefined {
    const entry = this.byHash.get(hash);
    if (!entry) return undefined;
    if (entry.at < this.now() - ERA_VERDICT_MAX_AGE_MS) {
      this.delete(hash);
      return undefined;
    }
    const { at: _at, ...verdict } = entry;
    return verdict;
  }

  set(hash: string, verdict: EraVerdict): void {
    // Last seen goes last, so the bound drops the definitions not started for longest.
    this.byHash.delete(hash);
    this.byHash.set(hash, { ...verdict, at: this.now() });
    for (const old of this.byHash.keys()) {
      if (this.byHash.size <= ERA_VERDICTS_KEPT) break;
      this.byHash.delete(old);
    }
    this.changed();
  }

  delete(hash: string): void {
    if (this.byHash.delete(hash)) this.changed();
  }

  entries(): Array<[string, EraVerdict]> {
    return [...this.byHash.keys()].flatMap((hash) => {
      const verdict = this.get(hash);
      return verdict ? [[hash, verdict] as [string, EraVerdict]] : [];
    });
  }

  /** The form to store. */
  get stored(): StoredEraVerdicts {
    return [...this.byHash.entries()].map(([hash, entry]) => [hash, { ...entry }]);
  }

  private changed(): void {
    this.options.onDidChange?.(this.stored);
  }
}

function isStoredEntry(entry: unknown): boolean {
  if (!Array.isArray(entry) || entry.length !== 2 || typeof entry[0] !== 'string' || !/^[0-9a-f]{16}$/.test(entry[0])) return false;
  const v = entry[1] as { era?: unknown; version?: unknown; at?: unknown } | null;
  if (!v || typeof v !== 'object' || typeof v.at !== 'number' || !Number.isFinite(v.at)) return false;
  return v.era === 'legacy' || (v.era === 'modern' && isModernProtocolVersion(v.version));
}

/** The protocol to connect with: the definition's own choice wins; under `auto` a remembered legacy verdict skips the probe. */
export function protocolToUse(choice: ProtocolChoice, remembered: EraVerdict | undefined): ProtocolChoice {
  if (choice !== 'auto') return choice;
  return remembered?.era === 'legacy' ? '2025-11-25' : 'auto';
}
