import type { Task } from './types';

/** Error codes of the seed's matrix: JSON-RPC 2.0 reserved codes plus the MCP ones. */
export const ErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  ConnectionClosed: -32000,
  RequestTimeout: -32001,
  /** The seed's code for our own refusal to send a method the peer did not declare (data.capability says which). */
  CapabilityDisabled: -32002,
  /** 2025-11-25 `server/resources`: the same code from a server answering resources/read means the resource does not exist. */
  ResourceNotFound: -32002,
  /** 2025-11-25: the request needs the person to finish URL elicitations first (data.elicitations). */
  UrlElicitationRequired: -32042,
  /** 2026-07-28: an HTTP header disagrees with the body (a server's answer). */
  HeaderMismatch: -32020,
  /** 2026-07-28: the request needs a client capability we did not declare (a server's answer). */
  MissingRequiredClientCapability: -32021,
  /** 2026-07-28: the server does not speak the version in `_meta`; data.supported lists what it does. */
  UnsupportedProtocolVersion: -32022,
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

const codeNames: Record<number, string> = {
  [-32700]: 'Parse error',
  [-32600]: 'Invalid request',
  [-32601]: 'Method not found',
  [-32602]: 'Invalid params',
  [-32603]: 'Internal error',
  [-32000]: 'Connection closed',
  [-32001]: 'Request timeout',
  [-32002]: 'Capability disabled',
  [-32042]: 'URL elicitation required',
  [-32020]: 'Header mismatch',
  [-32021]: 'Missing required client capability',
  [-32022]: 'Unsupported protocol version',
};

/**
 * What kind of local failure an error is, where code may branch on it; the code alone cannot say
 * (an HTTP refusal and a server's own error are both -32603). Errors from a peer have no kind:
 * what a server puts in `data` is its own affair and is never taken for one of these.
 */
export type ErrorKind =
  /** An HTTP request got a status outside 2xx. */
  | { type: 'httpStatus'; status: number }
  /** A message or event over the size limit was dropped. */
  | { type: 'oversize'; limit: number }
  /** We did not send a method the peer did not declare (-32002). */
  | { type: 'capabilityDisabled'; method: string; capability: string }
  /** A task the server ran for us is gone (closed, restarted, forgotten, expired). */
  | { type: 'taskLost'; taskId: string }
  /** A task the server ran for us ended cancelled (by us or by the server), with its last status. */
  | { type: 'taskCancelled'; task: Task }
  /** The server went away while we asked which protocol era it speaks (a legacy server that exits on server/discover): start it again and use initialize. */
  | { type: 'probeLost' }
  /** The reply stream of a 2026-07-28 request ended before its answer; such streams cannot be resumed, so the request may be sent again with a new id. */
  | { type: 'replyLost' };

/**
 * Name of a known code, for messages and logs; unknown codes are shown as numbers. -32002 has two
 * meanings: ours (Capability disabled, with that kind) and a server's (the spec's "Resource not found").
 */
export function errorCodeName(code: number, kind?: ErrorKind): string {
  if (code === ErrorCode.ResourceNotFound && kind?.type !== 'capabilityDisabled') return 'Resource not found';
  return codeNames[code] ?? `Error ${code}`;
}

/**
 * The error objects of error responses a transport made up itself, each with the McpError it stands
 * for. One map for the whole process: the editor's lazily loaded bundles (dist/http.js) carry a copy
 * of this module, and an error a transport made there is looked up here.
 */
const madeLocally: WeakMap<object, McpError> = ((globalThis as Record<symbol, unknown>)[Symbol.for('mcp-host.madeLocally')] ??= new WeakMap<
  object,
  McpError
>()) as WeakMap<object, McpError>;

/** What marks an McpError, whichever copy of this module made it (see `madeLocally`). */
const MCP_ERROR = Symbol.for('mcp-host.McpError');

/**
 * The one error type of the core. Errors that come back from a peer keep the peer's code
 * (even one outside the matrix) and data; local failures use the static constructors.
 */
export class McpError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
    /** Set on local failures code branches on; see {@link ErrorKind}. */
    readonly kind?: ErrorKind,
  ) {
    super(message);
    this.name = 'McpError';
    Object.defineProperty(this, MCP_ERROR, { value: true });
  }

  /** `instanceof McpError` holds for an McpError of any bundle's copy of this module (it has no subclasses). */
  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[MCP_ERROR] === true;
  }

  /**
   * The error object of an error response standing in for this error (a transport answers a
   * request the server can no longer answer): plain JSON for the wire and the trace, and
   * {@link McpError.from} gives back this very error, kind included.
   */
  toResponseError(): { code: number; message: string; data?: unknown } {
    const wire = { code: this.code, message: this.message, ...(this.data === undefined ? {} : { data: this.data }) };
    madeLocally.set(wire, this);
    return wire;
  }

  static parseError(message: string, data?: unknown) {
    return new McpError(ErrorCode.ParseError, message, data);
  }
  static invalidRequest(message: string, data?: unknown) {
    return new McpError(ErrorCode.InvalidRequest, message, data);
  }
  static methodNotFound(method: string) {
    return new McpError(ErrorCode.MethodNotFound, `Method not found: ${method}`);
  }
  static invalidParams(message: string, data?: unknown) {
    return new McpError(ErrorCode.InvalidParams, message, data);
  }
  static internal(message: string, data?: unknown) {
    return new McpError(ErrorCode.InternalError, message, data);
  }
  static connectionClosed(reason?: string) {
    return new McpError(ErrorCode.ConnectionClosed, reason ? `Connection closed: ${reason}` : 'Connection closed');
  }
  static timeout(method: string, ms: number) {
    return new McpError(ErrorCode.RequestTimeout, `Request timed out after ${ms} ms: ${method}`, { timeoutMs: ms });
  }
  static totalTimeout(method: string, ms: number) {
    return new McpError(ErrorCode.RequestTimeout, `Request exceeded its maximum of ${ms} ms: ${method}`, { maxTotalTimeoutMs: ms });
  }
  static capabilityDisabled(method: string, capability: string) {
    return new McpError(
      ErrorCode.CapabilityDisabled,
      `The server did not declare the '${capability}' capability, so '${method}' was not sent`,
      { method, capability },
      { type: 'capabilityDisabled', method, capability },
    );
  }
  /** A message or event over `limit` was dropped. */
  static oversize(message: string, limit: number, data?: object) {
    return new McpError(ErrorCode.ParseError, message, { ...data, limit }, { type: 'oversize', limit });
  }
  /** An HTTP request was answered with a status outside 2xx. */
  static httpStatus(message: string, status: number, data: object) {
    return new McpError(ErrorCode.InternalError, message, data, { type: 'httpStatus', status });
  }

  /** Wraps anything thrown into an McpError without losing its message or code. */
  static from(error: unknown): McpError {
    if (error instanceof McpError) return error;
    const local = error && typeof error === 'object' ? madeLocally.get(error) : undefined;
    if (local) return local;
    if (error && typeof error === 'object' && typeof (error as { code?: unknown }).code === 'number') {
      const e = error as { code: number; message?: unknown; data?: unknown };
      return new McpError(e.code, typeof e.message === 'string' ? e.message : errorCodeName(e.code), e.data);
    }
    if (error instanceof Error) return McpError.internal(error.message);
    return McpError.internal(String(error));
  }

  /** A server's -32002: the resource it was asked to read does not exist. */
  get isResourceNotFound(): boolean {
    return this.code === ErrorCode.ResourceNotFound && this.kind?.type !== 'capabilityDisabled';
  }

  /** "Connection closed (-32000): Command not found": a message that starts with the code's name does not repeat it. */
  override toString(): string {
    const name = errorCodeName(this.code, this.kind);
    if (this.message === name) return `${name} (${this.code})`;
    const rest = this.message.startsWith(`${name}: `) ? this.message.slice(name.length + 2) : this.message;
    return `${name} (${this.code}): ${rest}`;
  }
}

export interface UrlElicitation {
  mode: 'url';
  url: string;
  message: string;
  elicitationId: string;
}

/** The URL elicitations a -32042 error asks the person to finish before retrying; [] for any other error. */
export function requiredUrlElicitations(error: unknown): UrlElicitation[] {
  if (!(error instanceof McpError) || error.code !== ErrorCode.UrlElicitationRequired) return [];
  const list = (error.data as { elicitations?: unknown } | undefined)?.elicitations;
  if (!Array.isArray(list)) return [];
  return list
    .filter(
      (e): e is { mode: 'url'; url: string; message: string; elicitationId: string } =>
        typeof e === 'object' && e !== null && (e as { mode?: unknown }).mode === 'url' && typeof (e as { url?: unknown }).url === 'string',
    )
    .map((e) => ({ ...e, message: typeof e.message === 'string' ? e.message : '', elicitationId: String(e.elicitationId ?? '') }));
}
