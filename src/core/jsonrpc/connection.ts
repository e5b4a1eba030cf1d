import {
  CancellationTokenSource,
  Emitter,
  Message,
  ResponseError,
  createMessageConnection,
  type CancellationId,
  type CancellationToken,
  type CancellationStrategy,
  type MessageConnection,
} from 'vscode-jsonrpc/node';
import { GuardedMessageReader, GuardedMessageWriter } from './guards';
import { ErrorCode, McpError } from '../protocol/errors';
import type { ProgressNotificationParams, ProgressToken, RequestId } from '../protocol/types';
import type { LogEntry, Transport } from '../transport/transport';

export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;
/** Local code for a request the caller cancelled; outside the seed's matrix, never sent. */
export const REQUEST_CANCELLED = -32800;
/** How long to wait, after the stream ends, for the transport to tell why (exit code, stderr). */
const CLOSE_REASON_WAIT_MS = 50;
const MAX_ABANDONED = 1000;

export interface RequestOptions {
  /** Per-call timeout; the connection's default otherwise. */
  timeoutMs?: number;
  /** Aborting cancels the request: `notifications/cancelled` is sent and the promise rejects at once. */
  signal?: AbortSignal;
  /** Asks the server for progress (`_meta.progressToken`) and receives it. */
  onProgress?: (progress: ProgressNotificationParams) => void;
  /** Each progress notification restarts the timeout… */
  resetTimeoutOnProgress?: boolean;
  /** …but never beyond this total. */
  maxTotalTimeoutMs?: number;
}

export interface ConnectionStats {
  /** Our requests still waiting for an answer. */
  pendingRequests: number;
  /** Progress callbacks of those requests. */
  progressHandlers: number;
  /** Server requests we are still answering. */
  inboundRequests: number;
  /** Cancellations not yet sent. */
  cancelReasons: number;
}

/** One message on the wire, for the protocol trace. */
export interface TraceEvent {
  direction: 'in' | 'out';
  message: Message;
  /** Date.now() when it passed. */
  at: number;
}

export type RequestHandler = (params: unknown, signal: AbortSignal) => unknown;
export type NotificationHandler = (params: unknown) => void;

interface PendingRequest {
  method: string;
  fail(error: McpError): void;
}

/**
 * JSON-RPC 2.0 the MCP way, on vscode-jsonrpc: guarded inbound messages, `notifications/cancelled`
 * both ways, progress routed by token, a timeout on every request, and every pending request
 * rejected with Connection Closed (-32000) as soon as the channel goes away.
 */
export class McpConnection {
  private readonly connection: MessageConnection;
  private readonly pending = new Map<RequestId, PendingRequest>();
  /** Requests we gave up on; their late responses still reach vscode-jsonrpc so it can forget them. */
  private readonly abandoned = new Set<RequestId>();
  private readonly progressHandlers = new Map<ProgressToken, (p: ProgressNotificationParams) => void>();
  private readonly inboundTokens = new Map<RequestId, CancellationTokenSource>();
  private readonly cancelledInbound = new Set<RequestId>();
  private readonly cancelReasons = new Map<RequestId, string>();
  private lastSentId: RequestId | undefined;
  private nextProgressToken = 1;
  private closedReason: string | undefined;
  private closeTimer: NodeJS.Timeout | undefined;

  private readonly logEmitter = new Emitter<LogEntry>();
  private readonly closeEmitter = new Emitter<string>();
  private readonly traceEmitter = new Emitter<TraceEvent>();
  /** Every valid message in and out. */
  readonly onTrace = this.traceEmitter.event;
  /** Protocol-level log lines (the transport has its own). */
  readonly onLog = this.logEmitter.event;
  /** Fires once with the reason when the connection is gone. */
  readonly onDidClose = this.closeEmitter.event;

  constructor(
    private readonly transport: Transport,
    private readonly defaultTimeoutMs = DEFAULT_REQUEST_TIMEOUT_MS,
  ) {
    transport.onDidClose(({ reason }) => this.closed(reason));

    const reader = new GuardedMessageReader(transport.reader, {
      onInvalid: (value, verdict) => this.onInvalidMessage(value, verdict.reason, verdict.id),
      acceptsResponse: (id) => id !== null && (this.pending.has(id) || this.abandoned.delete(id) || this.logUnknownResponse(id)),
      onReadError: (error) => this.log('warning', `${ErrorCode.ParseError} ${error.message}`),
      onAccepted: (message) => this.traceEmitter.fire({ direction: 'in', message, at: Date.now() }),
    });
    const writer = new GuardedMessageWriter(
      transport.writer,
      (id) => this.cancelledInbound.has(id),
      (message) => this.traceEmitter.fire({ direction: 'out', message, at: Date.now() }),
    );

    const cancellationStrategy: CancellationStrategy = {
      receiver: {
        kind: 'id',
        createCancellationTokenSource: (id: CancellationId) => {
          const source = new CancellationTokenSource();
          this.inboundTokens.set(id, source);
          return source;
        },
      },
      sender: {
        enableCancellation: (request) => {
          this.lastSentId = request.id ?? undefined;
        },
        sendCancellation: async (conn, id) => {
          const reason = this.cancelReasons.get(id);
          this.cancelReasons.delete(id);
          await conn.sendNotification('notifications/cancelled', { requestId: id, ...(reason ? { reason } : {}) });
        },
        cleanup: (id) => this.cancelReasons.delete(id),
      },
    };

    // vscode-jsonrpc's own complaints are worth a line in the log, not a crash or the console.
    const logger = {
      error: (m: string) => this.log('warning', m),
      warn: (m: string) => this.log('warning', m),
      info: (m: string) => this.log('debug', m),
      log: (m: string) => this.log('debug', m),
    };
    this.connection = createMessageConnection(reader, writer, logger, {
      cancellationStrategy,
      messageStrategy: {
        handleMessage: (message, next) => {
          const result = next(message);
          if (Message.isRequest(message)) {
            const id = message.id as RequestId;
            void Promise.resolve(result).finally(() => {
              this.inboundTokens.delete(id);
              this.cancelledInbound.delete(id);
            });
          }
          return result;
        },
      },
    });
    this.connection.onClose(() => this.streamEnded());
    this.connection.onUnhandledNotification((n) => this.log('debug', `unhandled notification ${n.method}`));
    this.connection.onNotification('notifications/progress', (params: ProgressNotificationParams) => {
      const handler = params && this.progressHandlers.get(params.progressToken);
      if (handler) handler(params);
      else this.log('debug', `progress for unknown token ${JSON.stringify(params?.progressToken)}`);
    });
    this.connection.onNotification('notifications/cancelled', (params: { requestId?: RequestId; reason?: string }) => {
      const id = params?.requestId;
      const source = id === undefined ? undefined : this.inboundTokens.get(id);
      if (id === undefined || !source) return;
      this.log('debug', `server cancelled its request ${JSON.stringify(id)}${params.reason ? `: ${params.reason}` : ''}`);
      this.cancelledInbound.add(id);
      source.cancel();
    });
  }

  get isClosed(): boolean {
    return this.closedReason !== undefined;
  }

  /** How much per-request state the connection holds: all zero when nothing is in flight. */
  get stats(): ConnectionStats {
    return {
      pendingRequests: this.pending.size,
      progressHandlers: this.progressHandlers.size,
      inboundRequests: this.inboundTokens.size,
      cancelReasons: this.cancelReasons.size,
    };
  }

  listen(): void {
    this.connection.listen();
  }

  onRequest(method: string, handler: RequestHandler): void {
    // vscode-jsonrpc passes (params, token), or just (token) when the request has no params.
    this.connection.onRequest(method, async (...args: unknown[]) => {
      const token = args[args.length - 1] as CancellationToken;
      const params = args.length > 1 ? args[0] : undefined;
      const controller = new AbortController();
      const sub = token.onCancellationRequested(() => controller.abort(new McpError(REQUEST_CANCELLED, 'Cancelled by the server')));
      try {
        // Empty results are `{}`: vscode-jsonrpc would turn undefined into null.
        return (await handler(params, controller.signal)) ?? {};
      } catch (error) {
        const e = McpError.from(error);
        throw new ResponseError(e.code, e.message, e.data);
      } finally {
        sub.dispose();
      }
    });
  }

  onNotification(method: string, handler: NotificationHandler): void {
    this.connection.onNotification(method, (params: unknown) => handler(params));
  }

  async notify(method: string, params?: object): Promise<void> {
    if (this.closedReason !== undefined) throw McpError.connectionClosed(this.closedReason);
    // vscode-jsonrpc turns an explicit undefined into `params: [null]`; omit it instead.
    await (params === undefined ? this.connection.sendNotification(method) : this.connection.sendNotification(method, params));
  }

  request<R>(method: string, params: Record<string, unknown> | undefined, options: RequestOptions = {}): Promise<R> {
    if (this.closedReason !== undefined) return Promise.reject(McpError.connectionClosed(this.closedReason));
    const { signal, onProgress } = options;
    if (signal?.aborted) return Promise.reject(cancelledError(signal));
    const timeoutMs = options.timeoutMs ?? this.defaultTimeoutMs;

    let progressToken: ProgressToken | undefined;
    if (onProgress) {
      progressToken = this.nextProgressToken++;
      const meta = (params?._meta as object | undefined) ?? {};
      params = { ...params, _meta: { ...meta, progressToken } };
    }

    const source = new CancellationTokenSource();
    const sent =
      params === undefined ? this.connection.sendRequest<R>(method, source.token) : this.connection.sendRequest<R>(method, params, source.token);
    const id = this.lastSentId as RequestId;

    return new Promise<R>((resolve, reject) => {
      let done = false;
      let timer: NodeJS.Timeout | undefined;
      let hardTimer: NodeJS.Timeout | undefined;
      const finish = (settle: () => void) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        clearTimeout(hardTimer);
        this.pending.delete(id);
        if (progressToken !== undefined) this.progressHandlers.delete(progressToken);
        signal?.removeEventListener('abort', onAbort);
        settle();
      };
      const fail = (error: McpError) => finish(() => reject(error));
      // Gives up locally and tells the server, except for initialize, which must not be cancelled.
      const cancel = (error: McpError, reason: string) => {
        if (done) return;
        this.rememberAbandoned(id);
        if (method !== 'initialize') {
          this.cancelReasons.set(id, reason);
          source.cancel();
        }
        fail(error);
      };
      const onAbort = () => cancel(cancelledError(signal!), 'cancelled by the client');
      const arm = (ms: number) => {
        clearTimeout(timer);
        timer = setTimeout(() => cancel(McpError.timeout(method, ms), `timed out after ${ms} ms`), ms);
      };

      this.pending.set(id, { method, fail });
      arm(timeoutMs);
      if (options.maxTotalTimeoutMs !== undefined) {
        const max = options.maxTotalTimeoutMs;
        hardTimer = setTimeout(() => cancel(McpError.totalTimeout(method, max), `exceeded the maximum of ${max} ms`), max);
      }
      signal?.addEventListener('abort', onAbort, { once: true });
      if (progressToken !== undefined && onProgress) {
        this.progressHandlers.set(progressToken, (p) => {
          if (options.resetTimeoutOnProgress) arm(timeoutMs);
          try {
            onProgress(p);
          } catch (e) {
            this.log('warning', `progress handler failed: ${(e as Error).message}`);
          }
        });
      }
      sent.then(
        (result) => finish(() => resolve(result)),
        (error) => fail(this.closedReason !== undefined ? McpError.connectionClosed(this.closedReason) : McpError.from(error)),
      );
    });
  }

  /** Closes the transport; pending requests reject with Connection Closed. */
  async close(): Promise<void> {
    const closing = this.transport.close();
    this.closed('closed by the client');
    await closing;
  }

  private rememberAbandoned(id: RequestId): void {
    this.abandoned.add(id);
    if (this.abandoned.size > MAX_ABANDONED) this.abandoned.delete(this.abandoned.values().next().value as RequestId);
  }

  private streamEnded(): void {
    if (this.closedReason !== undefined || this.closeTimer) return;
    this.closeTimer = setTimeout(() => this.closed('the server closed the connection'), CLOSE_REASON_WAIT_MS);
  }

  private closed(reason: string): void {
    clearTimeout(this.closeTimer);
    if (this.closedReason !== undefined) return;
    this.closedReason = reason;
    const error = McpError.connectionClosed(reason);
    for (const request of [...this.pending.values()]) request.fail(error);
    this.pending.clear();
    for (const source of this.inboundTokens.values()) source.cancel();
    this.connection.dispose();
    this.closeEmitter.fire(reason);
  }

  private onInvalidMessage(value: unknown, reason: string, id: RequestId | undefined): void {
    const preview = truncate(JSON.stringify(value));
    this.log('warning', `${ErrorCode.InvalidRequest} invalid JSON-RPC message (${reason}): ${preview}`);
    if (id === undefined) return;
    const ours = this.pending.get(id);
    if (ours) {
      // A broken answer to our own request: fail that request rather than answer an answer.
      ours.fail(McpError.invalidRequest(`Invalid response from the server: ${reason}`, { response: value }));
      this.rememberAbandoned(id);
      return;
    }
    this.transport.writer
      .write({ jsonrpc: '2.0', id, error: { code: ErrorCode.InvalidRequest, message: `Invalid request: ${reason}` } } as Message)
      .catch(() => undefined);
  }

  private logUnknownResponse(id: RequestId): false {
    this.log('warning', `dropped a response with unknown id ${JSON.stringify(id)}`);
    return false;
  }

  private log(level: LogEntry['level'], message: string): void {
    this.logEmitter.fire({ level, source: 'protocol', message });
  }
}

function cancelledError(signal: AbortSignal): McpError {
  const reason = signal.reason;
  if (reason instanceof McpError) return reason;
  const detail = reason instanceof Error ? reason.message : typeof reason === 'string' ? reason : undefined;
  return new McpError(REQUEST_CANCELLED, detail && detail !== 'This operation was aborted' ? `Request cancelled: ${detail}` : 'Request cancelled');
}

function truncate(text: string, max = 300): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
