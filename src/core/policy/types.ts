/**
 * The words the policy layer speaks (the seed's security matrix): who asked for a request, what
 * the gate decided, how it ended, and the record the audit log keeps of it. Types only, so the
 * gate (`gate.ts`), the roots fence (`fence.ts`), the audit log (`audit.ts`) and masking
 * (`mask.ts`) can be read, tested and replaced one at a time.
 */
import type { ServerScope } from '../servers/definition';
import type { SandboxLimits } from '../servers/sandbox/settings';

/**
 * Who caused a request: the person (palette, tree, history), an MCP App, VS Code's chat, an agent
 * (a client of `mcp-host serve`, or an agent connected to the editor's gateway), the CLI, or the
 * server itself (its own requests of us).
 */
export type Origin = 'person' | 'app' | 'chat' | 'agent' | 'cli' | 'server';

/** The session a request came in (./session.ts) as the audit names it: its id, and the client as its `initialize` named itself. */
export interface AuditedSession {
  id: string;
  client?: { name: string; version: string };
}

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
  /** Present when the server ran in the operating-system sandbox: its limits. */
  sandbox?: SandboxLimits;
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
/**
 * A record that is not a request but is about one: a tool's, prompt's or the instructions'
 * definition found changed since the person approved it (origin `server`), or the person accepting
 * the change (origin `person`), or a definition the scan flagged (`definition-flagged`, origin
 * `server`, with its `findings`; accepting it is a `definition-accepted` record with them). Rotation records are of another shape (`RotationEntry`).
 */
export type AuditKind = 'definition-changed' | 'definition-accepted' | 'definition-flagged';

/**
 * A request record before the chain fields are added: a request the gate decided on, or one a
 * server made of us. A request carries no `kind` (records written before kinds existed look the
 * same, so their hashes still verify); a definition record names its kind (then `method` is the
 * request the definition is for, `outcome` not-sent).
 */
export interface AuditEntry {
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
  /**
   * The OpenTelemetry span of the request (./telemetry.ts), when its telemetry is
   * exported: the same ids as the exported span and log record, so the local record and the team's
   * trace can be joined. Absent when nothing is exported.
   */
  trace?: { traceId: string; spanId: string };
  /** A `definition-changed` / `definition-accepted` record: the pinned hash, the new one, and the members that differ. */
  definition?: { pinned?: string; now: string; changed?: string[] };
  /** A `definition-flagged` record (and the acceptance of one): what the scan found (../scan/detectors.ts). */
  findings?: Array<{ detector: string; pointer: string; text: string }>;
  /** A call the flow guard held (../scan/flowGuard.ts): why, and the record of the call whose result tainted the session. */
  flow?: AuditedFlow;
  /** A request of a gateway session (an agent's, the chat's): which one, and its client. */
  session?: AuditedSession;
}

/** The flow guard's part of a call's record. */
export interface AuditedFlow {
  /** The session, as a short hash of its key (a conversation id is not written). */
  session: string;
  /** What the guard said: "untrusted content from issues › get_issue (12:03:04) came before this call; it sends text read by read_note". */
  reason: string;
  /** The `hash` of the record of the call whose result made the session untrusted, when the log has it. */
  taintedBy?: string;
  /** The tools whose private results the arguments carry. */
  carries?: string[];
}

/**
 * The first record of a file the log rotated into: it links to the last record of the file before
 * (`prev`, as every record does) and names that file's number and head, so a verifier holding a
 * head can tell which file went missing. Files are numbered from 0 (the first file of a log).
 */
export interface RotationEntry {
  kind: 'rotation';
  time: string;
  /** This file's number. */
  file: number;
  previous: { file: number; head: string };
}

/**
 * Every kind of audit line before the chain fields are added. Open: a new kind of record (a tool
 * definition changed, or accepted) is one more member with a `kind` of its own.
 */
export type AuditLine = AuditEntry | RotationEntry;

/** What the chain adds to each line. */
export interface AuditChain {
  /** `hash` of the previous record; 64 zeros for the first one of a chain. */
  prev: string;
  /** SHA-256 (hex) of the canonical JSON of this record without `hash` and `mac`. */
  hash: string;
  /** HMAC-SHA256 (hex) of `hash` under the audit file's key; absent when the log was written without a key. */
  mac?: string;
}

/** A request line as written: the entry and its chain fields. */
export interface AuditRecord extends AuditEntry, AuditChain {}

/** Any line as written. */
export type AnyAuditRecord = AuditLine & AuditChain;

/** Where the gate sends what it decided; the audit log is one, a test's array another. */
export interface AuditSink {
  /** Never throws and never waits for the disk: a write error is reported by the sink itself. */
  append(entry: AuditEntry): void;
  /** The chain hash the record of an appended entry was written with, once it is written; absent where records have no hash (a test's array). */
  hashOf?(entry: AuditEntry): Promise<string | undefined>;
}

export type { Masker, MaskFinding } from '../scan/mask';
