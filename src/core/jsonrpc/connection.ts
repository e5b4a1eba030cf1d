import { Emitter, type Disposable, type Message } from 'vscode-jsonrpc/node';
import { classifyMessage, type ClassifiedMessage } from '../protocol/classify';
import { assertNever } from '../protocol/assertNever';
import { ErrorCode, McpError } from '../protocol/errors';
import { Notifications, type McpNotificationType, type McpRequestType } from '../protocol/methods';
import type { ProgressNotificationParams, ProgressToken, RequestId } from '../protocol/types';
import type { LogEntry, Transport } from '../transport/transport';

export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;
/** Local code for a request the caller cancelled; outside the seed's matrix, never sent. */
export const REQUEST_CANCELLED = -32800;
/** How long to wait, after the stream ends, for the transport to tell why (exit code, stderr). */
const CLOSE_REASON_WAIT_MS = 50;
const MAX_ABANDONED = 1000;

export interface RequestOptions {
  /** Per-call timeout; the connection's default otherwise. `Infinity`: none (a 2026-07-28 `subscriptions/listen` lasts as long as the connection). */
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
  /** Told the id the request goes out with, just before it is sent. */
  onRequestId?: (id: RequestId) => void;
  /** Entries added to the request's `params._meta` (the trace context of the gate's span, ../protocol/traceContext.ts). */
  meta?: Readonly<Record<string, string>>;
  /** The server may end this request with `notifications/cancelled` naming it (2026-07-28 `subscriptions/listen`): it then rejects as cancelled. */
  serverMayCancel?: boolean;
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

/** Answers one server request; its params are what the server sent, typed as the method says but not checked. */
export type RequestHandler<P = unknown, R = unknown> = (params: P, signal: AbortSignal) => R | Promise<R>;
export type NotificationHandler<P = unknown> = (params: P) => void;

/** A server request we refused because nothing answers it (no handler, or requests refused in this era). */
export interface UnhandledRequest {
  method: string;
  /** Size of its params as JSON, in bytes; never the params themselves, which may hold anything. */
  paramsBytes: number;
  /** The error response the server was sent. */
  refusal: { code: number; message: string };
}

interface PendingRequest {
  method: string;
  resolve(result: unknown): void;
  fail(error: McpError): void;
  /** When its timeout runs out, on the performance.now() clock. */
  deadline: number;
  /** Called once the deadline has passed: cancels the request with a timeout error. */
  expire(): void;
}

/** A deadline counts as reached this close before it: Node's timers run by the loop's cached clock, which may lag. */
const DEADLINE_SLACK_MS = 1;
/** The longest delay setTimeout takes; it runs anything else (beyond it, 0, negative, NaN) after 1 ms, and so do our deadlines. */
const TIMER_MAX_MS = 2 ** 31 - 1;
const timerDelay = (ms: number): number => (ms >= 1 && ms <= TIMER_MAX_MS ? ms : 1);

/**
 * JSON-RPC 2.0 the MCP way: every inbound value classified once and dispatched by its kind,
 * `notifications/cancelled` both ways, progress routed by token, a timeout on every request, and
 * every pending request rejected with Connection Closed (-32000) as soon as the channel goes away.
 * Messages are dispatched as they are read, without a queue between the reader and the handlers,
 * so a burst of answers costs no extra turns of the event loop. Everything we send, answers and
 * refusals included, leaves through {@link send}, so the trace shows it.
 */
export class McpConnection {
  private readonly requestHandlers = new Map<string, RequestHandler>();
  /** Set once the peer may send no requests (see refuseRequests): why. */
  private requestsRefused: string | undefined;
  private readonly notificationHandlers = new Map<string, NotificationHandler>();
  private readonly pending = new Map<RequestId, PendingRequest>();
  /** Requests we gave up on: their late answers are dropped without a warning. */
  private readonly abandoned = new Set<RequestId>();
  private readonly progressHandlers = new Map<ProgressToken, (p: ProgressNotificationParams) => void>();
  /** Progress that outlives its request: a task's progress uses the token of the request that created it (2025-11-25). */
  private readonly progressRoutes = new Map<ProgressToken, (p: ProgressNotificationParams) => void>();
  /** Server requests we are answering, each with the controller that cancels its handler. */
  private readonly inbound = new Map<RequestId, AbortController>();
  /** Our requests the server may end with `notifications/cancelled`. */
  private readonly serverCancellable = new Set<RequestId>();
  /** Server requests the server cancelled: their answers are not sent. */
  private readonly cancelledInbound = new Set<RequestId>();
  private subscriptions: Disposable[] = [];
  private nextId = 0;
  private nextProgressToken = 1;
  private closedReason: string | undefined;
  private closeTimer: NodeJS.Timeout | undefined;
  /**
   * One timer watches every request's timeout: it is due at the earliest deadline it was set for,
   * and when it fires it expires what is due and sets itself for the next. A timer per request
   * cost more client CPU per sequential call than the rest of the request path (Node creates and
   * drops a timer list each time the only pending timer is cleared). It holds the process open
   * only while requests wait, as their own timers did.
   */
  private deadlineTimer: NodeJS.Timeout | undefined;
  private deadlineTimerAt = Infinity;

  private readonly logEmitter = new Emitter<LogEntry>();
  private readonly closeEmitter = new Emitter<string>();
  private readonly traceEmitter = new Emitter<TraceEvent>();
  private readonly unhandledRequestEmitter = new Emitter<UnhandledRequest>();
  /** Every valid message in and out. */
  readonly onTrace = this.traceEmitter.event;
  /** Protocol-level log lines (the transport has its own). */
  readonly onLog = this.logEmitter.event;
  /** Fires once with the reason when the connection is gone. */
  readonly onDidClose = this.closeEmitter.event;
  /** A server request refused because nothing handles it (a capability we did not offer, say): the host may record the attempt. */
  readonly onUnhandledRequest = this.unhandledRequestEmitter.event;

  constructor(
    private readonly transport: Transport,
    private readonly defaultTimeoutMs = DEFAULT_REQUEST_TIMEOUT_MS,
  ) {
    const { reader, writer } = transport;
    this.subscriptions.push(
      transport.onDidClose(({ reason }) => this.closed(reason)),
      // Read errors (a line that is not JSON, an oversize message) are not fatal: the connection lives on.
      reader.onError((error) => this.log('warning', `${ErrorCode.ParseError} ${error.message}`)),
      reader.onClose(() => this.streamEnded()),
      writer.onClose(() => this.streamEnded()),
      writer.onError(([error]) => this.log('warning', `could not send a message: ${error.message}`)),
    );

    this.onNotification(Notifications.progress, (p: ProgressNotificationParams | undefined) => {
      const handler = p && (this.progressHandlers.get(p.progressToken) ?? this.progressRoutes.get(p.progressToken));
      if (handler) handler(p);
      else this.log('debug', `progress for unknown token ${JSON.stringify(p?.progressToken)}`);
    });
    this.onNotification(Notifications.cancelled, (p) => {
      const id = p?.requestId;
      if (id !== undefined && this.serverCancellable.has(id)) {
        this.log('debug', `the server ended our request ${JSON.stringify(id)}${p?.reason ? `: ${p.reason}` : ''}`);
        // What may still come for it (over HTTP, the end of its stream) is no news.
        this.rememberAbandoned(id);
        this.pending.get(id)?.fail(new McpError(REQUEST_CANCELLED, `Cancelled by the server${p?.reason ? `: ${p.reason}` : ''}`));
        return;
      }
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
    this.subscriptions.push(this.transport.reader.listen((value) => this.receive(value)));
  }

  /** One handler per method; a later one replaces an earlier one. */
  onRequest<P, R>(type: McpRequestType<string, P, R>, handler: RequestHandler<P, R>): void {
    this.requestHandlers.set(type.method, handler as RequestHandler);
  }

  /**
   * From now on every request of the peer is answered -32601 with `reason`, whatever handlers are
   * set: 2026-07-28 servers ask for input inside results, never with requests of their own.
   */
  refuseRequests(reason: string): void {
    this.requestsRefused = reason;
  }

  onNotification<P>(type: McpNotificationType<string, P>, handler: NotificationHandler<P>): void {
    this.notificationHandlers.set(type.method, handler as NotificationHandler);
  }

  notify<P>(type: McpNotificationType<string, P>, ...params: undefined extends P ? [params?: P] : [params: P]): Promise<void> {
    return this.notifyMethod(type.method, params[0] as object | undefined);
  }

  private async notifyMethod(method: string, params: object | undefined): Promise<void> {
    if (this.closedReason !== undefined) throw McpError.connectionClosed(this.closedReason);
    await this.send(params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params });
  }

  /**
   * Sends a request and resolves with its result. It rejects with the server's error, at the
   * timeout, on cancel, when the connection closes, and at once when the transport could not send
   * it (the server never saw it, so there is nothing to wait for).
   */
  request<P, R>(type: McpRequestType<string, P, R>, params: P, options: RequestOptions = {}): Promise<R> {
    return this.requestMethod<R>(type.method, params as Record<string, unknown> | undefined, options);
  }

  private requestMethod<R>(method: string, params: Record<string, unknown> | undefined, options: RequestOptions): Promise<R> {
    if (this.closedReason !== undefined) return Promise.reject(McpError.connectionClosed(this.closedReason));
    const { signal, onProgress } = options;
    if (signal?.aborted) return Promise.reject(cancelledError(signal));
    const timeoutMs = options.timeoutMs ?? this.defaultTimeoutMs;

    let progressToken: ProgressToken | undefined;
    if (onProgress || options.progressToken !== undefined) progressToken = options.progressToken ?? this.nextProgressToken++;
    if (progressToken !== undefined || options.meta) {
      const meta = (params?._meta as object | undefined) ?? {};
      params = { ...params, _meta: { ...meta, ...options.meta, ...(progressToken === undefined ? {} : { progressToken }) } };
    }
    const id = this.nextId++;

    return new Promise<R>((resolve, reject) => {
      let done = false;
      let hardTimer: NodeJS.Timeout | undefined;
      const finish = (): boolean => {
        if (done) return false;
        done = true;
        if (hardTimer) clearTimeout(hardTimer);
        this.pending.delete(id);
        this.serverCancellable.delete(id);
        if (this.pending.size === 0) this.deadlineTimer?.unref();
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
          this.notify(Notifications.cancelled, { requestId: id, reason }).catch(() => undefined);
        }
      };
      const onAbort = () => cancel(cancelledError(signal!), 'cancelled by the client');
      const entry: PendingRequest = {
        method,
        resolve: (result) => {
          if (finish()) resolve(result as R);
        },
        fail,
        deadline: Infinity,
        expire: () => cancel(McpError.timeout(method, timeoutMs), `timed out after ${timeoutMs} ms`),
      };
      const arm = () => {
        // No timeout at all (a 2026-07-28 subscriptions/listen lasts as long as the connection): no deadline to watch.
        if (timeoutMs === Infinity) return;
        entry.deadline = performance.now() + timerDelay(timeoutMs);
        this.watchDeadline(entry.deadline);
      };

      this.pending.set(id, entry);
      if (options.serverMayCancel) this.serverCancellable.add(id);
      options.onRequestId?.(id);
      // Sent before the bookkeeping below: nothing in it can be needed before the answer arrives.
      this.send(params === undefined ? { jsonrpc: '2.0', id, method } : { jsonrpc: '2.0', id, method, params }).catch((error) => {
        const e = sendError(method, error);
        this.log('warning', e.message);
        fail(e);
      });
      arm();
      if (options.maxTotalTimeoutMs !== undefined) {
        const max = options.maxTotalTimeoutMs;
        hardTimer = setTimeout(() => cancel(McpError.totalTimeout(method, max), `exceeded the maximum of ${max} ms`), max);
      }
      signal?.addEventListener('abort', onAbort, { once: true });
      if (progressToken !== undefined && onProgress) {
        this.progressHandlers.set(progressToken, (p) => {
          if (options.resetTimeoutOnProgress) arm();
          try {
            onProgress(p);
          } catch (e) {
            this.log('warning', `progress handler failed: ${(e as Error).message}`);
          }
        });
      }
    });
  }

  /** Makes sure the deadline timer fires by `at`, and that it holds the process open while requests wait. */
  private watchDeadline(at: number): void {
    if (at < this.deadlineTimerAt) {
      clearTimeout(this.deadlineTimer);
      this.deadlineTimerAt = at;
      this.deadlineTimer = setTimeout(() => this.expireDue(), Math.max(0, at - performance.now()));
    } else this.deadlineTimer?.ref();
  }

  /** The deadline timer fired: every request whose deadline passed times out; the timer is set again for the earliest left. */
  private expireDue(): void {
    this.deadlineTimer = undefined;
    this.deadlineTimerAt = Infinity;
    const now = performance.now() + DEADLINE_SLACK_MS;
    const due: PendingRequest[] = [];
    let next = Infinity;
    for (const request of this.pending.values()) {
      if (request.deadline <= now) due.push(request);
      else if (request.deadline < next) next = request.deadline;
    }
    for (const request of due) request.expire();
    if (next !== Infinity && this.closedReason === undefined) this.watchDeadline(next);
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

  /** The one inbound path: each value is classified once, and each kind has one handler. */
  private receive(value: unknown): void {
    const message = classifyMessage(value);
    switch (message.kind) {
      case 'response':
        return this.settle(message, value);
      case 'request':
        this.traceIn(value);
        if (this.closedReason === undefined) this.answer(message.id, message.method, message.params);
        return;
      case 'notification':
        this.traceIn(value);
        if (this.closedReason === undefined) this.notified(message.method, message.params);
        return;
      case 'invalid':
        return this.refuse(value, message);
      default:
        return assertNever(message);
    }
  }

  /** A response settles the request it answers; answers to nothing we wait for are dropped (logged unless we gave up on them). */
  private settle(message: Extract<ClassifiedMessage, { kind: 'response' }>, value: unknown): void {
    const { id } = message;
    if (id === null) {
      // JSON-RPC's answer to a request the server could not read (it found no id to answer): it settles nothing, but says something of ours went wrong.
      this.traceIn(value);
      this.log(
        'warning',
        `the server answered a request it could not identify (id null): ${truncate(JSON.stringify(message.error ?? { result: message.result }))}`,
      );
      return;
    }
    const request = this.pending.get(id);
    if (!request) {
      if (!this.abandoned.delete(id)) this.log('warning', `dropped a response with unknown id ${JSON.stringify(id)}`);
      return;
    }
    this.traceIn(value);
    if (this.closedReason !== undefined) return;
    if (message.error !== undefined) request.fail(McpError.from(message.error));
    else request.resolve(message.result);
  }

  private notified(method: string, params: unknown): void {
    const handler = this.notificationHandlers.get(method);
    if (!handler) {
      this.log('debug', `unhandled notification ${method}`);
      return;
    }
    try {
      handler(params);
    } catch (error) {
      this.log('warning', `the handler of ${method} failed: ${(error as Error)?.message ?? error}`);
    }
  }

  /** Runs the handler of a server request and sends its result, or its error as an error response. */
  private answer(id: RequestId, method: string, params: unknown): void {
    if (this.requestsRefused !== undefined) {
      this.log('warning', `refused the server's request ${method}: ${this.requestsRefused}`);
      return this.refuseUnhandled(id, method, params, `${method} refused: ${this.requestsRefused}`);
    }
    const handler = this.requestHandlers.get(method);
    if (!handler) return this.refuseUnhandled(id, method, params, `Unhandled method ${method}`);
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

  /** Answers -32601 and tells whoever listens; a listener that throws changes nothing of the answer. */
  private refuseUnhandled(id: RequestId, method: string, params: unknown, message: string): void {
    const refusal = new McpError(ErrorCode.MethodNotFound, message);
    this.reply(id, undefined, refusal);
    const paramsBytes = params === undefined ? 0 : Buffer.byteLength(JSON.stringify(params));
    try {
      this.unhandledRequestEmitter.fire({ method, paramsBytes, refusal: { code: refusal.code, message: refusal.message } });
    } catch (error) {
      this.log('warning', `the listener of unhandled requests failed: ${(error as Error)?.message ?? error}`);
    }
  }

  /** Answers a server request, unless the server cancelled it (the spec says not to answer those) or the connection is gone. */
  private reply(id: RequestId, result: unknown, error: McpError | undefined): void {
    if (this.closedReason !== undefined || this.cancelledInbound.has(id)) return;
    const message = error
      ? {
          jsonrpc: '2.0',
          id,
          error: { code: error.code, message: error.message, ...(error.data === undefined ? {} : { data: error.data }) },
        }
      : { jsonrpc: '2.0', id, result };
    // The server waits for this answer in vain: the log says so.
    this.send(message).catch((e) =>
      this.log('warning', `could not answer the server's request ${JSON.stringify(id)}: ${(e as Error)?.message ?? e}`),
    );
  }

  /** The one outbound path: traced, then handed to the transport. A writer that throws rejects instead. */
  private send(message: object): Promise<void> {
    this.traceEmitter.fire({ direction: 'out', message: message as Message, at: Date.now() });
    try {
      return this.transport.writer.write(message as Message);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  private traceIn(value: unknown): void {
    this.traceEmitter.fire({ direction: 'in', message: value as Message, at: Date.now() });
  }

  /** Not JSON-RPC: logged; a broken answer to our request fails it, anything else with an id gets -32600. */
  private refuse(value: unknown, verdict: Extract<ClassifiedMessage, { kind: 'invalid' }>): void {
    const { id, reason } = verdict;
    this.log('warning', `${ErrorCode.InvalidRequest} invalid JSON-RPC message (${reason}): ${truncate(JSON.stringify(value))}`);
    if (id === undefined) return;
    const ours = this.pending.get(id);
    if (ours) {
      // A broken answer to our own request: fail that request rather than answer an answer.
      ours.fail(McpError.invalidRequest(`Invalid response from the server: ${reason}`, { response: value }));
      this.rememberAbandoned(id);
      return;
    }
    this.reply(id, undefined, McpError.invalidRequest(`Invalid request: ${reason}`));
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
    clearTimeout(this.deadlineTimer);
    this.deadlineTimer = undefined;
    this.deadlineTimerAt = Infinity;
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
    // Nothing more happens on a closed connection: its events end with it.
    for (const emitter of [this.closeEmitter, this.logEmitter, this.traceEmitter, this.unhandledRequestEmitter]) emitter.dispose();
  }

  private log(level: LogEntry['level'], message: string): void {
    this.logEmitter.fire({ level, source: 'protocol', message });
  }
}

/** What a request whose message could not be sent rejects with: the transport's own McpError, or an internal error naming the method. */
function sendError(method: string, error: unknown): McpError {
  if (error instanceof McpError) return error;
  return McpError.internal(`Could not send ${method}: ${(error as Error)?.message ?? String(error)}`);
}

function cancelledError(signal: AbortSignal): McpError {
  const reason = signal.reason;
  if (reason instanceof McpError) return reason;
  const detail = reason instanceof Error ? reason.message : typeof reason === 'string' ? reason : undefined;
  return new McpError(
    REQUEST_CANCELLED,
    detail && detail !== 'This operation was aborted' ? `Request cancelled: ${detail}` : 'Request cancelled',
  );
}

function truncate(text: string, max = 300): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
