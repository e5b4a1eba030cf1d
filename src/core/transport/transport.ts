import type { Event, MessageReader, MessageWriter } from 'vscode-jsonrpc/node';

export type LogLevel = 'trace' | 'debug' | 'info' | 'warning' | 'error';

export interface LogEntry {
  level: LogLevel;
  /** Where the line came from: the server's stderr, the transport, the protocol layer. */
  source: 'stderr' | 'transport' | 'protocol' | 'server';
  message: string;
}

/**
 * Why and how a channel ended: the one closed state every transport reports. `reason` is for
 * people, e.g. "server exited with code 1" plus the last stderr lines.
 */
export type TransportClosed =
  /** `close()` was called: we ended it. */
  | { kind: 'stopped'; reason: string }
  /** The server or the network ended it on its own: an exit, a dropped stream, a session that could not be renewed. */
  | { kind: 'lost'; reason: string }
  /** It never opened: `start()` rejects with this reason. */
  | { kind: 'failed'; reason: string };

/**
 * A message channel to one MCP server, on vscode-jsonrpc's reader and writer abstractions; the
 * transport owns whatever lies beneath (a process, HTTP requests). What every transport promises:
 *
 * - **Start.** `reader` and `writer` may be used once `start()` resolved. `start()` rejects with an
 *   McpError (Connection Closed, -32000, with the cause) when the channel cannot open; then
 *   nothing more is delivered, and `onDidClose` fires with kind `failed` or not at all.
 * - **Order.** The reader delivers values in the order the server sent them on one stream (one
 *   process's stdout, one SSE stream); values from different HTTP responses keep no order
 *   between them. Values are parsed JSON, not yet judged: {@link classifyMessage} does that. A
 *   value that is not JSON, or too large, is reported on `reader.onError` and skipped; the channel
 *   lives on.
 * - **Writes.** `writer.write()` takes messages in call order and rejects when the message could
 *   not be handed on (stream closed, serialization failed, a refused notification POST); it does
 *   not throw (McpConnection turns a throw into a rejection all the same). The
 *   request that made a failed write rejects at once with that error: the server never saw it.
 *   Over HTTP a request's write resolves once the POST is under way; if that POST fails later, the
 *   transport delivers an error response for the request on the reader instead.
 * - **Close.** `onDidClose` fires at most once, with a {@link TransportClosed}: `stopped` after
 *   `close()`, `lost` when the peer ended it. After it nothing more is read. `close()` may be
 *   called any number of times, at any point; it resolves when everything beneath is gone (the
 *   process exited, the session's DELETE answered or timed out) and never rejects; by then the
 *   transport's events have ended (its emitters are disposed with it).
 */
/** An outgoing request or notification, as a transport shows it to its {@link MessageHeaderSource}. */
export interface OutgoingMessage {
  readonly kind: 'request' | 'notification';
  readonly method: string;
  readonly params: Record<string, unknown> | undefined;
}

/**
 * 2026-07-28 over HTTP: the standard headers of one outgoing message (`MCP-Protocol-Version`,
 * `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`), decided by the client, which knows the era and the
 * tools; undefined for a message of the initialize era.
 */
export type MessageHeaderSource = (message: OutgoingMessage) => Record<string, string> | undefined;

export interface Transport {
  readonly reader: MessageReader;
  readonly writer: MessageWriter;
  readonly onLog: Event<LogEntry>;
  /** Fires once, when the channel is gone for good; see the contract above. */
  readonly onDidClose: Event<TransportClosed>;
  /**
   * Fires when the server replaced our session with a new one behind the client's back (Streamable
   * HTTP renews an expired session): what the old session held, such as resource subscriptions,
   * is gone and must be asked for again.
   */
  readonly onDidRenewSession?: Event<void>;
  /** What the channel is, as telemetry names it: `pipe` for stdio, `tcp` with the host and port for HTTP. */
  readonly network?: { transport: 'pipe' | 'tcp'; address?: string; port?: number };
  /** The session the server gave (Streamable HTTP's `Mcp-Session-Id`), once it gave one. */
  readonly sessionId?: string;
  /** Resolves when messages can flow; rejects with a clear error if the channel cannot open. */
  start(): Promise<void>;
  /** Told after initialize, for transports that must send the version with every message. */
  setProtocolVersion?(version: string): void;
  /**
   * 2026-07-28 over HTTP: where the standard headers of each outgoing message come from, asked
   * just before it is sent (undefined: none from now on). A message given headers is sent with
   * them (over any session header of the same name) and is a 2026-07-28 one: its POST is its
   * lifetime (closing it cancels the request), and a 4xx whose body is its JSON-RPC error is its
   * answer. The transport never reads `_meta` for this.
   */
  setMessageHeaders?(source: MessageHeaderSource | undefined): void;
  /** Stops gracefully, then forcibly; resolves when everything beneath is gone. */
  close(): Promise<void>;
}
