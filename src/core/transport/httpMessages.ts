import { AbstractMessageReader, AbstractMessageWriter, Disposable } from 'vscode-jsonrpc/node';
import type { DataCallback, Message, MessageWriter } from 'vscode-jsonrpc/node';
import { answeredId, classifyMessage } from '../protocol/classify';
import { McpError } from '../protocol/errors';
import type { RequestId } from '../protocol/types';

/**
 * A reader that HTTP transports push messages into as they arrive on whichever response carries
 * them. Messages that arrive before `listen()` are kept, so nothing is lost between start() and
 * the connection wiring itself up.
 */
export class PushMessageReader extends AbstractMessageReader {
  private callback: DataCallback | undefined;
  private backlog: unknown[] = [];

  listen(callback: DataCallback): Disposable {
    this.callback = callback;
    const backlog = this.backlog;
    this.backlog = [];
    for (const value of backlog) callback(value as Message);
    return Disposable.create(() => (this.callback = undefined));
  }

  push(value: unknown): void {
    if (this.callback) this.callback(value as Message);
    else this.backlog.push(value);
  }

  /** Not fatal: McpConnection logs read errors and the connection lives on, as with ndjson. */
  reportError(error: Error): void {
    this.fireError(error);
  }

  end(): void {
    this.fireClose();
  }
}

/** A writer that hands each message to the transport; the transport decides when a write is done. */
export class CallbackMessageWriter extends AbstractMessageWriter implements MessageWriter {
  constructor(private readonly send: (message: Message) => Promise<void>) {
    super();
  }

  write(message: Message): Promise<void> {
    return this.send(message);
  }

  end(): void {}
}

/**
 * Routes what the server sends into the reader and keeps track of the requests still waiting for
 * an answer. Over HTTP a request's answer can be lost in ways stdio never sees (a failed POST, a
 * stream that ends early); then the transport answers the request itself with an error response,
 * so McpConnection rejects it at once instead of waiting for its timeout.
 */
export class MessageRouter {
  readonly reader = new PushMessageReader();
  /** Requests sent and not yet answered. */
  private readonly awaiting = new Set<RequestId>();
  /** Answers the transport waits for itself (a replayed initialize); never shown to the client. */
  private readonly internal = new Map<RequestId, (response: unknown) => void>();

  expect(id: RequestId): void {
    this.awaiting.add(id);
  }

  isAwaiting(id: RequestId): boolean {
    return this.awaiting.has(id);
  }

  /** Resolves with the raw response to `id`, which the client will never see. */
  intercept(id: RequestId): Promise<unknown> {
    this.expect(id);
    return new Promise((resolve) => this.internal.set(id, resolve));
  }

  forget(id: RequestId): void {
    this.awaiting.delete(id);
    this.internal.delete(id);
  }

  /**
   * Parses a JSON body or SSE data field into one value. A JSON array (a batch) is handed on as it
   * is, so the classifier refuses it as on every other transport: MCP has no batches since
   * 2025-06-18, and one rule for all transports means a batch cannot answer over HTTP what it
   * could not answer over stdio.
   */
  deliverText(text: string, where: string): McpError | undefined {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (e) {
      const preview = text.length > 200 ? `${text.slice(0, 200)}…` : text;
      const error = McpError.parseError(`Not JSON from ${where} (${(e as Error).message}): ${preview}`, { preview });
      this.reader.reportError(error);
      return error;
    }
    this.deliver(value);
    return undefined;
  }

  deliver(message: unknown): void {
    // What the connection will take as the answer to one of our requests, it takes here too.
    const id = answeredId(classifyMessage(message));
    if (id !== undefined) {
      this.awaiting.delete(id);
      const internal = this.internal.get(id);
      if (internal) {
        this.internal.delete(id);
        internal(message);
        return;
      }
    }
    this.reader.push(message);
  }

  /** Answers a request that can no longer be answered by the server; a no-op once it was. */
  fail(id: RequestId, error: unknown): void {
    if (!this.awaiting.has(id)) return;
    this.deliver({ jsonrpc: '2.0', id, error: McpError.from(error).toResponseError() });
  }
}
