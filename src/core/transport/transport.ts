import type { Event, MessageReader, MessageWriter } from 'vscode-jsonrpc/node';

export type LogLevel = 'trace' | 'debug' | 'info' | 'warning' | 'error';

export interface LogEntry {
  level: LogLevel;
  /** Where the line came from: the server's stderr, the transport, the protocol layer. */
  source: 'stderr' | 'transport' | 'protocol' | 'server';
  message: string;
}

export interface TransportClosed {
  /** Human-readable reason, e.g. "exited with code 1" plus the last stderr lines. */
  reason: string;
  /** True when we asked for the close (stop), false when the peer went away on its own. */
  expected: boolean;
}

/**
 * A message channel to one MCP server. vscode-jsonrpc speaks over the reader and writer;
 * the transport owns whatever lies beneath (a process, HTTP requests).
 */
export interface Transport {
  readonly reader: MessageReader;
  readonly writer: MessageWriter;
  readonly onLog: Event<LogEntry>;
  /** Fires once, when the channel is gone for good. */
  readonly onDidClose: Event<TransportClosed>;
  /**
   * Fires when the server replaced our session with a new one behind the client's back (Streamable
   * HTTP renews an expired session): what the old session held, such as resource subscriptions,
   * is gone and must be asked for again.
   */
  readonly onDidRenewSession?: Event<void>;
  /** Resolves when messages can flow; rejects with a clear error if the channel cannot open. */
  start(): Promise<void>;
  /** Told after initialize, for transports that must send the version with every message. */
  setProtocolVersion?(version: string): void;
  /** Stops gracefully, then forcibly; resolves when everything beneath is gone. */
  close(): Promise<void>;
}
