/**
 * The HTTP side of one chat session of the gateway: Streamable HTTP (2025-11-25) framing for the
 * SDK's `Server`, written on Node's own request and response objects. It implements the SDK's
 * `Transport`, so initialize, capabilities, schemas, progress and cancellation stay the SDK
 * server's; only the framing is ours. The SDK's own server transport turns every Node request into
 * a web `Request` and streams every answer as server-sent events, which cost more than the rest of
 * a forwarded call together (bench/gateway.ts); here an answer is plain JSON unless the chat asked
 * for progress on that request, and only then a stream of events ending with the answer.
 *
 * - POST: one JSON-RPC message (batches are refused, as on every transport of MCP Host). A request
 *   is answered on its own response; a notification or a response gets 202.
 * - GET: the session's one stream of messages that belong to no request (list_changed, updated).
 * - DELETE: handled by the gateway (it ends the session).
 */
import type * as http from 'node:http';
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, RequestId } from '@modelcontextprotocol/sdk/types.js';
import { ErrorCode } from '../protocol/errors';

const EVENT_STREAM = 'text/event-stream';

interface Pending {
  res: http.ServerResponse;
  /** Answered as a stream of events (the chat asked for progress, or takes nothing but events). */
  stream: boolean;
}

type Incoming = { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: { _meta?: { progressToken?: unknown } } };

/** JSON-RPC ids are strings or numbers; `1` and `"1"` are different requests. */
const keyOf = (id: RequestId): string => `${typeof id}:${String(id)}`;

export class GatewayHttpSession implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: Transport['onmessage'];
  private readonly pending = new Map<string, Pending>();
  private standalone?: http.ServerResponse;
  private closed = false;
  private initialized = false;

  constructor(readonly sessionId: string) {}

  async start(): Promise<void> {}

  /** One message the chat posted (the body already read and parsed). */
  handlePost(req: http.IncomingMessage, res: http.ServerResponse, body: unknown): void {
    if (this.closed) return refuse(res, 404, ErrorCode.ConnectionClosed, 'Session ended');
    if (Array.isArray(body)) return refuse(res, 400, ErrorCode.InvalidRequest, 'JSON-RPC batches are not accepted');
    const message = body as Incoming | null;
    if (typeof message !== 'object' || message === null || message.jsonrpc !== '2.0') {
      return refuse(res, 400, ErrorCode.InvalidRequest, 'the body is not a JSON-RPC 2.0 message');
    }
    const isRequest = typeof message.method === 'string' && (typeof message.id === 'string' || typeof message.id === 'number');
    if (isRequest && message.method === 'initialize') {
      if (this.initialized) return refuse(res, 400, ErrorCode.InvalidRequest, 'this session is already initialized');
      this.initialized = true;
    } else if (!this.initialized) {
      return refuse(res, 400, ErrorCode.InvalidRequest, 'the session is not initialized');
    }
    const extra = { requestInfo: { headers: req.headers } };
    if (!isRequest) {
      res.writeHead(202, { 'mcp-session-id': this.sessionId }).end();
      this.onmessage?.(message as JSONRPCMessage, extra);
      if (message.method === 'notifications/cancelled') this.endCancelled(message.params as { requestId?: unknown } | undefined);
      return;
    }
    const key = keyOf(message.id as RequestId);
    if (this.pending.has(key)) return refuse(res, 400, ErrorCode.InvalidRequest, `request id ${String(message.id)} is already in use`);
    const accept = req.headers.accept ?? '';
    const takesEvents = accept.includes(EVENT_STREAM);
    const takesJson = accept.includes('application/json') || accept.includes('*/*') || accept === '';
    const pending: Pending = { res, stream: takesEvents && (message.params?._meta?.progressToken !== undefined || !takesJson) };
    this.pending.set(key, pending);
    // The chat went away before its answer: nothing more is written there.
    res.once('close', () => {
      if (this.pending.get(key) === pending) this.pending.delete(key);
    });
    this.onmessage?.(message as JSONRPCMessage, extra);
  }

  /** The chat's stream for messages that belong to no request; one at a time. */
  handleGet(req: http.IncomingMessage, res: http.ServerResponse): void {
    if (this.closed) return refuse(res, 404, ErrorCode.ConnectionClosed, 'Session ended');
    if (!(req.headers.accept ?? '').includes(EVENT_STREAM)) {
      return refuse(res, 406, ErrorCode.InvalidRequest, `a GET must accept ${EVENT_STREAM}`);
    }
    if (this.standalone) return refuse(res, 409, ErrorCode.InvalidRequest, 'this session already has its stream open');
    res.writeHead(200, { 'content-type': EVENT_STREAM, 'cache-control': 'no-cache', 'mcp-session-id': this.sessionId });
    res.flushHeaders();
    this.standalone = res;
    res.once('close', () => {
      if (this.standalone === res) this.standalone = undefined;
    });
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const isAnswer = 'id' in message && !('method' in message);
    const id = isAnswer ? (message.id as RequestId | null) : options?.relatedRequestId;
    if (id === undefined || id === null) {
      // Not about one request (or an error of no request): on the session's stream, if the chat holds one open.
      if (this.standalone && !isAnswer) this.standalone.write(eventOf(message));
      return;
    }
    const key = keyOf(id);
    const pending = this.pending.get(key);
    if (!pending) return;
    const { res } = pending;
    if (!isAnswer) {
      // A JSON answer has nowhere to put messages before it; only progress goes there, and it was not asked for.
      if (pending.stream) this.startStream(res).write(eventOf(message));
      return;
    }
    this.pending.delete(key);
    if (pending.stream) {
      this.startStream(res).end(eventOf(message));
      return;
    }
    const text = JSON.stringify(message);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), 'mcp-session-id': this.sessionId });
    res.end(text);
  }

  /**
   * A cancelled request gets no answer (the SDK's server sends none): its response is ended as an
   * event stream with nothing more in it, so a client that keeps the connection does not hold it open.
   */
  private endCancelled(params: { requestId?: unknown } | undefined): void {
    const id = params?.requestId;
    if (typeof id !== 'string' && typeof id !== 'number') return;
    const key = keyOf(id);
    const pending = this.pending.get(key);
    if (!pending) return;
    this.pending.delete(key);
    this.startStream(pending.res).end();
  }

  /** The number of requests waiting for their answer (tests look). */
  get waiting(): number {
    return this.pending.size;
  }

  private startStream(res: http.ServerResponse): http.ServerResponse {
    if (!res.headersSent)
      res.writeHead(200, { 'content-type': EVENT_STREAM, 'cache-control': 'no-cache', 'mcp-session-id': this.sessionId });
    return res;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // Requests still waiting get an answer that says why, instead of a response that never ends.
    for (const [, { res }] of this.pending) {
      if (res.headersSent) res.end();
      else refuse(res, 404, ErrorCode.ConnectionClosed, 'Session ended');
    }
    this.pending.clear();
    this.standalone?.end();
    this.standalone = undefined;
    this.onclose?.();
  }
}

const eventOf = (message: JSONRPCMessage): string => `event: message\ndata: ${JSON.stringify(message)}\n\n`;

/** A JSON-RPC error of no request, with its HTTP status (never 401/403: VS Code's client would start OAuth discovery). */
export function refuse(res: http.ServerResponse, status: number, code: number, message: string): void {
  const text = JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message } });
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
