import { Emitter, type Disposable, type Message, type MessageWriter } from 'vscode-jsonrpc/node';
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
  /** The token to send instead of a fresh one: one the caller also gave to `routeProgress`, so progress outlives the answer (a task's). */
  progressToken?: ProgressToken;
}

export interface ConnectionStats {
  /** Our requests still waiting for an answer. */
  pendingRequests: number;
  /** Progress callbacks of those requests. */
  progressHandlers: number;
  /** Server requests we are still answering. */
  inboundRequests: number;
  /** Server requests the server cancelled whose handlers have not finished yet. */
  cancelledInbound: number;
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
  resolve(result: unknown): void;
  fail(error: McpError): void;
}

/** A message as the guard let it through: well-formed JSON-RPC 2.0. */
interface WireMessage {
  id?: RequestId | null;
  method?: string;
  params?: unknown;
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

/**
 * JSON-RPC 2.0 the MCP way: guarded inbound messages, `notifications/cancelled` both ways,
 * progress routed by token, a timeout on every request, and every pending request rejected with
 * Connection Closed (-32000) as soon as the channel goes away. Messages are dispatched as they
 * are read, without a queue between the reader and the handlers, so a burst of answers costs no
 * extra turns of the event loop. (The transports' readers and writers are vscode-jsonrpc's.)
 */
export class McpConnection {
  private readonly reader: GuardedMessageReader;
  private readonly writer: MessageWriter;
  private readonly requestHandlers = new Map<string, RequestHandler>();
  private readonly notificationHandlers = new Map<string, NotificationHandler>();
  private readonly pending = new Map<RequestId, PendingRequest>();
  /** Requests we gave up on: their late answers are dropped without a warning. */
  private readonly abandoned = new Set<RequestId>();
  private readonly progressHandlers = new Map<ProgressToken, (p: ProgressNotificationParams) => void>();
  /** Progress that outlives its request: a task's progress uses the token of the request that created it (2025-11-25). */
  private readonly progressRoutes = new Map<ProgressToken, (p: ProgressNotificationParams) => void>();
  /** Server requests we are answering, each with the controller that cancels its handler. */
  private readonly inbound = new Map<RequestId, AbortController>();
  /** Server requests the server cancelled: their answers are not sent. */
  private readonly cancelledInbound = new Set<RequestId>();
  private subscriptions: Disposable[] = [];
  private nextId = 0;
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

    this.reader = new GuardedMessageReader(transport.reader, {
      onInvalid: (value, verdict) => this.onInvalidMessage(value, verdict.reason, verdict.id),
      acceptsResponse: (id) => id !== null && (this.pending.has(id) || (!this.abandoned.delete(id) && this.logUnknownResponse(id))),
      onReadError: (error) => this.log('warning', `${ErrorCode.ParseError} ${error.message}`),
      onAccepted: (message) => this.traceEmitter.fire({ direction: 'in', message, at: Date.now() }),
    });
    this.writer = new GuardedMessageWriter(
      transport.writer,
      (id) => this.cancelledInbound.has(id),
      (message) => this.traceEmitter.fire({ direction: 'out', message, at: Date.now() }),
    );
    this.subscriptions.push(
      this.reader.onClose(() => this.streamEnded()),
      this.writer.onClose(() => this.streamEnded()),
      this.writer.onError(([error]) => this.log('warning', `could not send a message: ${error.message}`)),
    );

    this.notificationHandlers.set('notifications/progress', (params) => {
      const p = params as ProgressNotificationParams | undefined;
      const handler = p && (this.progressHandlers.get(p.progressToken) ?? this.progressRoutes.get(p.progressToken));
      if (handler) handler(p);
      else this.log('debug', `progress for unknown token ${JSON.stringify(p?.progressToken)}`);
    });
    this.notificationHandlers.set('notifications/cancelled', (params) => {
      const p = params as { requestId?: RequestId; reason?: string } | undefined;
      const id = p?.requestId;
      const controller = id === undefined ? undefined : this.inbound.get(id);
      if (id === undefined || !controller) return;
      this.log('debug', `server cancelled its request ${JSON.stringify(id)}${p?.reason ? `: ${p.reason}` : ''}`);
      this.cancelledInbound.add(id);
      controller.abort(new McpError(REQUEST_CANCELLED, 'Cancelled by the server'));
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
      inboundRequests: this.inbound.size,
      cancelledInbound: this.cancelledInbound.size,
    };
  }

  listen(): void {
    this.subscriptions.push(this.reader.listen((message) => this.dispatch(message as WireMessage)));
  }

  /** One handler per method; a later one replaces an earlier one. */
  onRequest(method: string, handler: RequestHandler): void {
    this.requestHandlers.set(method, handler);
  }

  onNotification(method: string, handler: NotificationHandler): void {
    this.notificationHandlers.set(method, handler);
  }

  async notify(method: string, params?: object): Promise<void> {
    if (this.closedReason !== undefined) throw McpError.connectionClosed(this.closedReason);
    await this.writer.write((params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params }) as unknown as Message);
  }

  request<R>(method: string, params: Record<string, unknown> | undefined, options: RequestOptions = {}): Promise<R> {
    if (this.closedReason !== undefined) return Promise.reject(McpError.connectionClosed(this.closedReason));
    const { signal, onProgress } = options;
    if (signal?.aborted) return Promise.reject(cancelledError(signal));
    const timeoutMs = options.timeoutMs ?? this.defaultTimeoutMs;

    let progressToken: ProgressToken | undefined;
    if (onProgress || options.progressToken !== undefined) {
      progressToken = options.progressToken ?? this.nextProgressToken++;
      const meta = (params?._meta as object | undefined) ?? {};
      params = { ...params, _meta: { ...meta, progressToken } };
    }
    const id = this.nextId++;

    return new Promise<R>((resolve, reject) => {
      let done = false;
      let timer: NodeJS.Timeout | undefined;
      let hardTimer: NodeJS.Timeout | undefined;
      const finish = (): boolean => {
        if (done) return false;
        done = true;
        clearTimeout(timer);
        if (hardTimer) clearTimeout(hardTimer);
        this.pending.delete(id);
        if (progressToken !== undefined) this.progressHandlers.delete(progressToken);
        signal?.removeEventListener('abort', onAbort);
        return true;
      };
      const fail = (error: McpError) => {
        if (finish()) reject(error);
      };
      // Gives up locally and tells the server, except for initialize, which must not be cancelled.
      const cancel = (error: McpError, reason: string) => {
        if (done) return;
        this.rememberAbandoned(id);
        fail(error);
        if (method !== 'initialize' && this.closedReason === undefined) {
          this.notify('notifications/cancelled', { requestId: id, reason }).catch(() => undefined);
        }
      };
      const onAbort = () => cancel(cancelledError(signal!), 'cancelled by the client');
      const arm = (ms: number) => {
        clearTimeout(timer);
        timer = setTimeout(() => cancel(McpError.timeout(method, ms), `timed out after ${ms} ms`), ms);
      };

      this.pending.set(id, {
        method,
        resolve: (result) => {
          if (finish()) resolve(result as R);
        },
        fail,
      });
      // Sent before the bookkeeping below: nothing in it can be needed before the answer arrives.
      const message = params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params };
      this.writer.write(message as unknown as Message).catch((error) => this.log('warning', `sending ${method} failed: ${(error as Error)?.message ?? error}`));
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
    });
  }

  /** Routes progress with this token to `handler` until disposed, whether or not a request with it is still pending. */
  routeProgress(token: ProgressToken, handler: (p: ProgressNotificationParams) => void): Disposable {
    this.progressRoutes.set(token, handler);
    return { dispose: () => void (this.progressRoutes.get(token) === handler && this.progressRoutes.delete(token)) };
  }

  /** Closes the transport; pending requests reject with Connection Closed. */
  async close(): Promise<void> {
    const closing = this.transport.close();
    this.closed('closed by the client');
    await closing;
  }

  private dispatch(message: WireMessage): void {
    if (this.closedReason !== undefined) return;
    const { id, method } = message;
    if (method === undefined) {
      const request = this.pending.get(id as RequestId);
      if (!request) return;
      if (message.error !== undefined) request.fail(McpError.from(message.error));
      else request.resolve(message.result);
    } else if (id === undefined || id === null) {
      const handler = this.notificationHandlers.get(method);
      if (!handler) {
        this.log('debug', `unhandled notification ${method}`);
        return;
      }
      try {
        handler(message.params);
      } catch (error) {
        this.log('warning', `the handler of ${method} failed: ${(error as Error)?.message ?? error}`);
      }
    } else {
      this.answer(id, method, message.params);
    }
  }

  /** Runs the handler of a server request and sends its result, or its error as an error response. */
  private answer(id: RequestId, method: string, params: unknown): void {
    const handler = this.requestHandlers.get(method);
    if (!handler) {
      this.reply(id, undefined, new McpError(ErrorCode.MethodNotFound, `Unhandled method ${method}`));
      return;
    }
    const controller = new AbortController();
    this.inbound.set(id, controller);
    new Promise((resolve) => resolve(handler(params, controller.signal)))
      // Empty results are `{}`, never null.
      .then(
        (result) => this.reply(id, result ?? {}, undefined),
        (error) => this.reply(id, undefined, McpError.from(error)),
      )
      .finally(() => {
        this.inbound.delete(id);
        this.cancelledInbound.delete(id);
      });
  }

  private reply(id: RequestId, result: unknown, error: McpError | undefined): void {
    if (this.closedReason !== undefined) return;
    const message = error ? { jsonrpc: '2.0', id, error: { code: error.code, message: error.message, ...(error.data === undefined ? {} : { data: error.data }) } } : { jsonrpc: '2.0', id, result };
    // The server waits for this answer in vain: the log says so.
    this.writer.write(message as unknown as Message).catch((e) => this.log('warning', `could not answer the server's request ${JSON.stringify(id)}: ${(e as Error)?.message ?? e}`));
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
    // Handlers still running learn the connection is gone, not that the server changed its mind.
    for (const controller of this.inbound.values()) controller.abort(error);
    for (const subscription of this.subscriptions) subscription.dispose();
    this.subscriptions = [];
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
      .catch((e) => this.log('warning', `could not refuse the invalid request ${JSON.stringify(id)}: ${(e as Error)?.message ?? e}`));
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
