import { AbstractMessageReader, AbstractMessageWriter, Disposable } from 'vscode-jsonrpc/node';
import type { DataCallback, Message, MessageReader, MessageWriter } from 'vscode-jsonrpc/node';
import { classifyMessage, type ClassifiedMessage } from './classify';
import type { RequestId } from '../protocol/types';

export interface InboundPolicy {
  /** A message that is not valid JSON-RPC; the guard has already dropped it. */
  onInvalid(value: unknown, verdict: Extract<ClassifiedMessage, { kind: 'invalid' }>): void;
  /** Whether a response with this id may reach the connection (it answers something we sent). */
  acceptsResponse(id: RequestId | null): boolean;
  /** Parse errors and oversize lines from the reader beneath. */
  onReadError(error: Error): void;
  /** Every message that gets through, for the protocol trace. */
  onAccepted?(message: Message): void;
}

/**
 * Sits between a transport's reader and vscode-jsonrpc: only well-formed JSON-RPC messages, and
 * only responses we are waiting for, get through. Everything else goes to the policy, so the
 * connection itself never sees garbage.
 */
export class GuardedMessageReader extends AbstractMessageReader {
  constructor(
    private readonly inner: MessageReader,
    private readonly policy: InboundPolicy,
  ) {
    super();
    inner.onClose(() => this.fireClose());
    inner.onPartialMessage((info) => this.firePartialMessage(info));
    // Read errors are not fatal: they are reported to the policy only, so the connection lives on.
    inner.onError((error) => this.policy.onReadError(error));
  }

  listen(callback: DataCallback): Disposable {
    return this.inner.listen((value) => {
      const verdict = classifyMessage(value);
      if (verdict.kind === 'invalid') this.policy.onInvalid(value, verdict);
      else if (verdict.kind === 'response' && !this.policy.acceptsResponse(verdict.id)) return;
      else {
        this.policy.onAccepted?.(value as Message);
        callback(value as Message);
      }
    });
  }

  override dispose(): void {
    super.dispose();
    this.inner.dispose();
  }
}

/**
 * Drops responses to requests the peer has cancelled (the spec says not to answer them) and
 * otherwise writes through.
 */
export class GuardedMessageWriter extends AbstractMessageWriter implements MessageWriter {
  constructor(
    private readonly inner: MessageWriter,
    private readonly suppressResponse: (id: RequestId) => boolean,
    private readonly onWrite?: (message: Message) => void,
  ) {
    super();
    inner.onClose(() => this.fireClose());
    inner.onError(([error, message, count]) => this.fireError(error, message, count));
  }

  write(message: Message): Promise<void> {
    const m = message as { id?: unknown; method?: unknown };
    if (m.method === undefined && (typeof m.id === 'string' || typeof m.id === 'number') && this.suppressResponse(m.id)) {
      return Promise.resolve();
    }
    this.onWrite?.(message);
    return this.inner.write(message);
  }

  end(): void {
    this.inner.end();
  }

  override dispose(): void {
    super.dispose();
    this.inner.dispose();
  }
}
