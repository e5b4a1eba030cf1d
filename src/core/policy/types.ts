/**
 * The words the policy layer speaks (the seed's security matrix): who asked for a request, what
 * the gate decided, how it ended, and the record the audit log keeps of it. Types only, so the
 * gate (`gate.ts`), the roots fence (`fence.ts`), the audit log (`audit.ts`) and masking
 * (`mask.ts`) can be read, tested and replaced one at a time.
 */
import type { ServerScope } from '../servers/definition';

/** Who caused a request: the person (palette, tree, history), an MCP App, VS Code's chat, the CLI, or the server itself (its own requests of us). */
export type Origin = 'person' | 'app' | 'chat' | 'cli' | 'server';

/** What the roots fence does with a path outside every root. */
export type FenceMode = 'block' | 'ask' | 'off';

/** The requests we send that the gate decides on. */
export type GatedMethod = 'tools/call' | 'resources/read' | 'prompts/get' | 'resources/subscribe' | 'completion/complete';

/** The requests a server makes of us that are audited (answered by their own consent paths). */
export type ServerRequestMethod = 'sampling/createMessage' | 'elicitation/create' | 'roots/list';

/** A server as the audit names it: never its settings text, only a hash of its definition. */
export interface AuditedServer {
  name: string;
  scope: ServerScope;
  /** `definitionHash` of the server's definition. */
  definition: string;
}

/** A path (or `file:` URI) found in a request's arguments that lies outside every root. */
export interface FencedPath {
  /** Where it sits in the arguments, as a JSON pointer (`/path`, `/files/0`); `''` for a resource URI itself. */
  pointer: string;
  /** The value as it was given. */
  value: string;
  /** The absolute path it names after normalising and resolving symlinks. */
  resolved: string;
}

/**
 * How the gate decided. `allowed`: no question was needed (read-only and trusted, auto-approved,
 * the fence found nothing); `allowed-always`: an earlier "always" answer; `asked-allowed` /
 * `asked-refused`: the person answered now; `denied`: the server's allow/deny lists or visibility
 * do not offer it; `fenced`: a path outside the roots, refused by the fence; `refused`: refused
 * for another reason (an untrusted origin that cannot be asked, a missing capability).
 */
export type Decision = 'allowed' | 'allowed-always' | 'asked-allowed' | 'asked-refused' | 'denied' | 'fenced' | 'refused';

/** How a request ended. `not-sent`: the gate refused it, nothing reached the server. */
export type Outcome = { kind: 'ok' } | { kind: 'isError' } | { kind: 'error'; code: number } | { kind: 'cancelled' } | { kind: 'not-sent' };

/**
 * A record that is not a request: a tool's, prompt's or the instructions' definition found changed
 * since the person approved it (origin `server`), or the person accepting the change (origin `person`).
 */
export type AuditKind = 'definition-changed' | 'definition-accepted';

/** One line of the audit log, before the chain fields are added. */
export interface AuditEntry {
  /** Absent for a request; what else the record is (then `method` is the request the definition is for, `outcome` not-sent). */
  kind?: AuditKind;
  /** ISO 8601. */
  time: string;
  origin: Origin;
  server: AuditedServer;
  /** `initialize`: only a `definition-changed` / `definition-accepted` record of the server's instructions. */
  method: GatedMethod | ServerRequestMethod | 'initialize';
  /** Tool or prompt name, or resource URI; absent for requests that name nothing (roots/list). */
  name?: string;
  /** Redacted (the server's secrets) and masked (secret shapes); absent when there were none. */
  arguments?: unknown;
  decision: Decision;
  outcome: Outcome;
  /** Round trip, from the gate's decision to the end. */
  ms: number;
  /** Paths the fence found outside the roots, if any. */
  fenced?: FencedPath[];
  /** A tools/call: the SHA-256 of the tool's definition it ran under (`toolDefinitionHash`, ./pins.ts); absent when the server did not list the tool. */
  tool?: { definition: string };
  /** A `definition-changed` / `definition-accepted` record: the pinned hash, the new one, and the members that differ. */
  definition?: { pinned?: string; now: string; changed?: string[] };
}

/** An audit line as written: the entry, the previous line's hash, and its own. */
export interface AuditRecord extends AuditEntry {
  /** `hash` of the previous record; 64 zeros for the first one of a chain. */
  prev: string;
  /** SHA-256 (hex) of the canonical JSON of this record without `hash`. */
  hash: string;
}

/** Where the gate sends what it decided; the audit log is one, a test's array another. */
export interface AuditSink {
  /** Never throws and never waits for the disk: a write error is reported by the sink itself. */
  append(entry: AuditEntry): void;
}

/** What masking found and replaced in a text. */
export interface MaskFinding {
  /** The detector's name, as shown in `[masked: kind]`. */
  kind: string;
  count: number;
}

/** Replaces secrets (well-known shapes and the person's own patterns) with `[masked: kind]`. */
export interface Masker {
  maskText(text: string): { text: string; found: MaskFinding[] };
  /** Every string at any depth of a JSON value, masked; the value is copied, never changed in place. */
  maskValue<T>(value: T): { value: T; found: MaskFinding[] };
}
