import { Emitter, type Message } from 'vscode-jsonrpc/node';
import { ErrorCode, McpError } from '../protocol/errors';
import type { RequestId } from '../protocol/types';
import { isOversizeError, readEventStream } from './eventStream';
import { classifyMessage, type ClassifiedMessage } from '../protocol/classify';
import { CallbackMessageWriter, MessageRouter } from './httpMessages';
import {
  ACCEPT_JSON_OR_SSE,
  DEFAULT_MAX_HTTP_MESSAGE_BYTES,
  InFlightRequests,
  discard,
  errorMessage,
  shownUrl,
  mediaType,
  parseServerUrl,
  readBodyText,
  sendHttp,
  statusError,
  type HttpRequest,
  type HttpServerParams,
} from './httpRequest';
import type { LogEntry, MessageHeaderSource, Transport, TransportClosed } from './transport';

export type { HttpServerParams } from './httpRequest';

/** Reconnections of one stream in a row that bring nothing, before giving up. */
export const MAX_STREAM_RECONNECTS = 5;
const FIRST_RECONNECT_DELAY_MS = 250;
const MAX_RECONNECT_DELAY_MS = 5000;
/** close() must not hang on a server that never answers the DELETE. */
const END_SESSION_TIMEOUT_MS = 2000;
/**
 * A stream that stayed open this long counts as working even if it carried nothing: fetch ends
 * silent bodies after a few minutes, and a quiet GET stream must not use up its reconnections.
 */
const LONG_LIVED_STREAM_MS = 10_000;
/** Event ids remembered per stream to drop what a resumed stream sends twice. */
const REMEMBERED_EVENT_IDS = 1000;

/** The server no longer offers a GET stream (405), so a stream cannot be opened or resumed. */
const NO_GET_STREAM = Symbol('no GET stream');

/**
 * The Streamable HTTP transport (MCP 2025-03-26 and later): every message is a POST whose reply is
 * JSON or an SSE stream; server-initiated messages come on a GET stream; dropped streams resume with
 * `Last-Event-ID`; an expired session (404) is renewed once by replaying the initialize handshake.
 */
export class StreamableHttpTransport implements Transport {
  private readonly router = new MessageRouter();
  readonly reader = this.router.reader;
  readonly writer = new CallbackMessageWriter((message) => this.send(message));
  private readonly logEmitter = new Emitter<LogEntry>();
  private readonly closeEmitter = new Emitter<TransportClosed>();
  readonly onLog = this.logEmitter.event;
  readonly onDidClose = this.closeEmitter.event;
  private readonly renewEmitter = new Emitter<void>();
  readonly onDidRenewSession = this.renewEmitter.event;

  private parsedUrl: URL | undefined;
  private _sessionId: string | undefined;
  private protocolVersion: string | undefined;
  private messageHeaders: MessageHeaderSource | undefined;
  /** The POSTs of 2026-07-28 requests in flight, by request id: aborting one cancels that request. */
  private readonly statelessPosts = new Map<RequestId, AbortController>();
  /** Kept so an expired session can be renewed without the client noticing. */
  private initializeRequest: Message | undefined;
  private renewal: Promise<void> | undefined;
  private renewals = 0;
  /** Bumped whenever a new GET stream replaces the old one, which then stops. */
  private getStreamGeneration = 0;
  /** Aborted on close: every request and stream in flight stops with it. */
  private readonly lifetime = new AbortController();
  private readonly inFlight = new InFlightRequests();
  private closing: Promise<void> | undefined;
  private closedState: TransportClosed | undefined;

  constructor(private readonly params: HttpServerParams) {}

  /** The session the server assigned at initialize, if it uses sessions. */
  get sessionId(): string | undefined {
    return this._sessionId;
  }

  /** The URL as logs and errors may show it. */
  private get shownUrl(): string {
    return shownUrl(this.url);
  }

  private get url(): URL {
    return (this.parsedUrl ??= parseServerUrl(this.params.url));
  }

  private get maxBytes(): number {
    return this.params.maxMessageBytes ?? DEFAULT_MAX_HTTP_MESSAGE_BYTES;
  }

  /** Nothing to open yet: the first POST (initialize) is the first contact. */
  async start(): Promise<void> {
    this.log('info', `using Streamable HTTP at ${this.shownUrl}`);
  }

  setProtocolVersion(version: string): void {
    this.protocolVersion = version;
  }

  setMessageHeaders(source: MessageHeaderSource | undefined): void {
    this.messageHeaders = source;
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      this.lifetime.abort();
      this.inFlight.abortAll();
      if (this._sessionId !== undefined && !this.closedState) await this.endSession(this._sessionId);
      this.fireClosed({ kind: 'stopped', reason: 'closed by the client' });
      for (const emitter of [this.logEmitter, this.closeEmitter, this.renewEmitter]) emitter.dispose();
    })();
    return this.closing;
  }

  /**
   * A request's write is done once it is handed over: its answer, or an error response standing in
   * for it, comes through the reader. Notifications and responses are done when the server accepted
   * them, so a failure reaches the caller and order is kept (initialized goes before what follows).
   */
  private async send(message: Message): Promise<void> {
    if (this.lifetime.signal.aborted) throw McpError.connectionClosed(this.closedState?.reason ?? 'the transport is closing');
    const m = classifyMessage(message);
    if (m.kind === 'request') {
      if (m.method === 'initialize') this.initializeRequest = message;
      this.router.expect(m.id);
      void this.sendRequest(message, m.id, m.method);
      return;
    }
    const method = m.kind === 'notification' ? m.method : undefined;
    if (m.kind === 'notification' && m.method === 'notifications/cancelled') {
      // Nobody waits for that answer any more: its reply stream is not worth resuming.
      const cancelled = (m.params as { requestId?: unknown } | undefined)?.requestId;
      if (typeof cancelled === 'string' || typeof cancelled === 'number') {
        this.router.forget(cancelled);
        // 2026-07-28 over HTTP: cancelling a request is closing its POST; there is no session to tell.
        const post = this.statelessPosts.get(cancelled);
        if (post) {
          this.statelessPosts.delete(cancelled);
          post.abort();
          return;
        }
      }
    }
    const scope = this.inFlight.open();
    let response: Response;
    try {
      response = await this.post(message, scope.signal);
    } catch (error) {
      this.inFlight.release(scope);
      throw error;
    }
    void this.consumeReply(response, undefined, scope.signal)
      .catch((error) => this.log('warning', `reply to ${method ?? 'a response'}: ${errorMessage(error)}`))
      .finally(() => this.inFlight.release(scope));
    if (method === 'notifications/initialized') this.openGetStream();
  }

  private async sendRequest(message: Message, id: RequestId, method: string): Promise<void> {
    const scope = this.inFlight.open();
    const stateless = this.standardHeaders(classifyMessage(message)) !== undefined;
    if (stateless) this.statelessPosts.set(id, scope);
    try {
      const response = await this.post(message, scope.signal);
      await this.consumeReply(response, id, scope.signal);
    } catch (error) {
      if (this.lifetime.signal.aborted) return;
      if (stateless && scope.signal.aborted) return this.log('debug', `request ${JSON.stringify(id)} cancelled: its POST was closed`);
      // connect() reports a failed initialize itself, and HttpTransport may yet fall back.
      // A lost stateless reply is sent again by the client, which says so.
      const level = method === 'initialize' || McpError.from(error).kind?.type === 'replyLost' ? 'debug' : 'warning';
      this.log(level, `request ${JSON.stringify(id)} failed: ${errorMessage(error)}`);
      this.router.fail(id, error);
    } finally {
      this.inFlight.release(scope);
      if (this.statelessPosts.get(id) === scope) this.statelessPosts.delete(id);
    }
  }

  /** POSTs one message; renews an expired session once and sends again. Resolves with a 2xx reply. */
  private async post(message: Message, signal: AbortSignal, mayRenewSession = true): Promise<Response> {
    const m = classifyMessage(message);
    const isInitialize = m.kind === 'request' && m.method === 'initialize';
    const standard = this.standardHeaders(m);
    const session = this._sessionId;
    const request: HttpRequest = {
      method: 'POST',
      url: this.url,
      headers: {
        ...this.sessionHeaders(isInitialize, { Accept: ACCEPT_JSON_OR_SSE, 'Content-Type': 'application/json' }),
        ...standard,
      },
      body: JSON.stringify(message),
      signal,
    };
    const response = await sendHttp(this.params, this.url, request);
    if (!response.ok && m.kind === 'request') {
      // 2026-07-28 answers protocol errors (-32022 and the like) with a 4xx whose body is the JSON-RPC error: that is the server's answer.
      // To an initialize-era request only its new-style errors count, so older servers' refusals still lead to the HTTP+SSE fallback.
      const answer = await jsonRpcErrorAnswer(request, response, m, standard ? undefined : NEW_STYLE_ERRORS);
      if (answer) return answer;
    }
    if (response.status === 404 && session !== undefined && !isInitialize) {
      await discard(response);
      if (!mayRenewSession)
        throw McpError.connectionClosed(
          `the server does not know the session even after re-initializing (HTTP 404 from POST ${this.shownUrl})`,
        );
      await this.renewSession(session);
      return this.post(message, signal, false);
    }
    if (!response.ok) throw await statusError(request, response);
    if (isInitialize) this._sessionId = response.headers.get('mcp-session-id') ?? undefined;
    return response;
  }

  /**
   * Reads a POST's reply: nothing (202), one JSON body, or an SSE stream that ends after the answer,
   * which may be open as long as the server likes (a 2026-07-28 `subscriptions/listen` is): no
   * timer here ends it, only the request's own timeout or cancellation.
   */
  private async consumeReply(response: Response, id: RequestId | undefined, signal: AbortSignal): Promise<void> {
    const type = mediaType(response);
    if (response.status === 202 || response.status === 204 || !response.body) {
      await discard(response);
      // 2025-11-25 transport: a POSTed request gets JSON or SSE; 202 is only for notifications and
      // responses. Waiting for an answer that no rule sends would end in the timeout instead.
      if (id !== undefined) {
        throw McpError.internal(
          `The server answered request ${JSON.stringify(id)} with HTTP ${response.status} and no body (POST ${this.shownUrl}); a request must get a JSON or SSE answer, so this is a server bug`,
          { url: this.shownUrl, status: response.status },
        );
      }
      return;
    }
    if (type === 'text/event-stream') return this.followStream(response, id, signal);
    if (type === 'application/json') {
      const text = await readBodyText(response, this.maxBytes, { method: 'POST', url: this.url });
      if (text.trim() === '' && id === undefined) return;
      const error = this.router.deliverText(text, `POST ${this.shownUrl}`);
      if (error) throw error;
      if (id !== undefined && this.router.isAwaiting(id))
        throw McpError.internal(`The JSON reply to POST ${this.shownUrl} does not answer request ${JSON.stringify(id)}`);
      return;
    }
    await discard(response);
    throw McpError.internal(
      `Unexpected content type '${type}' from POST ${this.shownUrl}; expected application/json or text/event-stream`,
      {
        url: this.shownUrl,
        status: response.status,
      },
    );
  }

  /** Listens for server-initiated messages; a 405 means the server sends none outside replies. */
  private openGetStream(): void {
    const generation = ++this.getStreamGeneration;
    const scope = this.inFlight.open();
    void (async () => {
      let first: Response | undefined;
      let problem = '';
      try {
        const opened = await this.openGet(undefined, scope.signal);
        if (opened === NO_GET_STREAM) {
          this.log('info', `the server offers no GET stream at ${this.shownUrl} (405); server messages arrive only in replies`);
          return;
        }
        first = opened;
      } catch (error) {
        problem = errorMessage(error);
      }
      await this.followStream(first, undefined, scope.signal, generation, problem);
    })()
      .catch((error) => {
        if (!this.lifetime.signal.aborted) this.log('error', `stopped listening for server-initiated messages: ${errorMessage(error)}`);
      })
      .finally(() => this.inFlight.release(scope));
  }

  /**
   * Reads an SSE stream and, when it ends or breaks before it is done, resumes it with GET and
   * `Last-Event-ID`, after the server's `retry:` delay or else a growing backoff. A reply stream is
   * done once its request is answered; the GET stream runs until close or a newer GET stream.
   * Gives up after {@link MAX_STREAM_RECONNECTS} reconnections in a row that bring no event and
   * end soon.
   */
  private async followStream(
    first: Response | undefined,
    awaitedId: RequestId | undefined,
    signal: AbortSignal,
    generation?: number,
    firstProblem = '',
  ): Promise<void> {
    const label =
      awaitedId === undefined
        ? `the GET stream of ${this.shownUrl}`
        : `the reply stream of request ${JSON.stringify(awaitedId)} from ${this.shownUrl}`;
    const seen = new Set<string>();
    let lastEventId: string | undefined;
    let retryMs: number | undefined;
    let failures = 0;
    let problem = firstProblem;
    let response = first;
    const finished = () =>
      this.lifetime.signal.aborted ||
      (generation !== undefined && generation !== this.getStreamGeneration) ||
      (awaitedId !== undefined && !this.router.isAwaiting(awaitedId));

    for (;;) {
      if (response?.body) {
        let progressed = false;
        const openedAt = Date.now();
        try {
          await readEventStream(response.body, this.maxBytes, {
            onEvent: (event) => {
              progressed = true;
              if (event.id) {
                // A resumed stream starts after the id we sent; a server that repeats itself is ignored.
                if (seen.has(event.id)) return;
                remember(seen, event.id);
                lastEventId = event.id;
              }
              if (event.event !== undefined && event.event !== 'message') return;
              // An empty event only primes the stream with an id to resume from.
              if (event.data.trim() !== '') this.router.deliverText(event.data, `the SSE stream of ${this.shownUrl}`);
            },
            onRetry: (ms) => (retryMs = ms),
          });
          problem = 'the server ended the stream';
        } catch (error) {
          // Resuming would only fetch the oversized event again.
          if (isOversizeError(error)) {
            this.router.reader.reportError(error as Error);
            throw error;
          }
          problem = errorMessage(error);
        }
        if (progressed || Date.now() - openedAt >= LONG_LIVED_STREAM_MS) failures = 0;
      }
      if (finished()) return;
      // 2026-07-28 streams cannot be resumed (there is no GET): the client sends the request again with a new id.
      if (awaitedId !== undefined && this.statelessPosts.has(awaitedId)) {
        throw new McpError(ErrorCode.ConnectionClosed, `${label} ended before the answer (${problem})`, undefined, { type: 'replyLost' });
      }
      if (awaitedId !== undefined && lastEventId === undefined) {
        throw McpError.connectionClosed(`${label} ended before the answer (${problem}) and gave no event id to resume from`);
      }
      if (++failures > MAX_STREAM_RECONNECTS) {
        throw McpError.connectionClosed(`gave up on ${label} after ${MAX_STREAM_RECONNECTS} reconnections: ${problem}`);
      }
      const delay = retryMs ?? Math.min(FIRST_RECONNECT_DELAY_MS * 2 ** (failures - 1), MAX_RECONNECT_DELAY_MS);
      this.log('debug', `${label}: ${problem}; reconnecting in ${delay} ms${lastEventId ? ` after event ${lastEventId}` : ''}`);
      await sleep(delay, this.lifetime.signal);
      if (finished()) return;
      let opened: Response | typeof NO_GET_STREAM | undefined;
      try {
        opened = await this.openGet(lastEventId, signal);
      } catch (error) {
        if (this.lifetime.signal.aborted) throw error;
        if (error instanceof McpError && error.kind?.type === 'httpStatus' && error.kind.status === 404) {
          // The session is gone; the next POST renews it and opens a new GET stream.
          throw McpError.connectionClosed(`cannot resume ${label}: the server no longer knows the session`);
        }
        problem = errorMessage(error);
      }
      if (opened === NO_GET_STREAM) throw McpError.connectionClosed(`cannot resume ${label}: the server offers no GET stream (405)`);
      response = opened;
    }
  }

  private async openGet(lastEventId: string | undefined, signal: AbortSignal): Promise<Response | typeof NO_GET_STREAM> {
    const request: HttpRequest = {
      method: 'GET',
      url: this.url,
      headers: this.sessionHeaders(false, {
        Accept: 'text/event-stream',
        ...(lastEventId === undefined ? {} : { 'Last-Event-ID': lastEventId }),
      }),
      signal,
    };
    const response = await sendHttp(this.params, this.url, request);
    if (response.status === 405) {
      await discard(response);
      return NO_GET_STREAM;
    }
    if (!response.ok) throw await statusError(request, response);
    if (mediaType(response) !== 'text/event-stream') {
      await discard(response);
      throw McpError.internal(`GET ${this.shownUrl} answered with '${mediaType(response)}', not an SSE stream`, {
        url: this.shownUrl,
        status: response.status,
      });
    }
    return response;
  }

  /** One renewal for every request that met the same expired session. */
  private renewSession(expired: string): Promise<void> {
    if (this._sessionId !== expired) return Promise.resolve();
    this.renewal ??= this.reinitialize().finally(() => (this.renewal = undefined));
    return this.renewal;
  }

  /** Replays the client's initialize (with an id of our own) and initialized, out of the client's sight. */
  private async reinitialize(): Promise<void> {
    this.log('warning', `the server no longer knows our session (HTTP 404 from ${this.shownUrl}); initializing a new one`);
    const id = `mcp-host-reinitialize-${++this.renewals}`;
    const scope = this.inFlight.open();
    try {
      if (!this.initializeRequest) throw new Error('there is no initialize request to replay');
      const answer = this.router.intercept(id);
      await this.consumeReply(await this.post({ ...this.initializeRequest, id } as Message, scope.signal, false), id, scope.signal);
      if (this.router.isAwaiting(id)) throw new Error('the server did not answer initialize');
      const reply = (await answer) as { error?: { message?: string } };
      if (reply.error) throw new Error(`the server refused initialize: ${reply.error.message}`);
      await discard(await this.post({ jsonrpc: '2.0', method: 'notifications/initialized' } as Message, scope.signal, false));
      this.log('info', 'the new session is ready; resending');
      this.openGetStream();
      this.renewEmitter.fire();
    } catch (error) {
      this.router.forget(id);
      // Closing aborts the renewal; that is not the server's failure.
      if (this.closing) throw McpError.connectionClosed('closed by the client');
      const reason = `the server ended the session and initializing a new one failed: ${errorMessage(error)}`;
      this.log('error', reason);
      this.fireClosed({ kind: 'lost', reason });
      throw McpError.connectionClosed(reason);
    } finally {
      this.inFlight.release(scope);
    }
  }

  /** DELETE ends the session on the server; a 405 means the server does not allow it. */
  private async endSession(session: string): Promise<void> {
    const provider = this.params.authProvider;
    // Closing must never start an interactive sign-in: credentials are used but challenges refused.
    const params: HttpServerParams = {
      ...this.params,
      authProvider: provider && { authorizationHeader: (url) => provider.authorizationHeader(url), onChallenge: async () => false },
    };
    const request: HttpRequest = {
      method: 'DELETE',
      url: this.url,
      headers: { ...this.sessionHeaders(false, {}), 'Mcp-Session-Id': session },
      signal: AbortSignal.timeout(END_SESSION_TIMEOUT_MS),
    };
    try {
      const response = await sendHttp(params, this.url, request);
      await discard(response);
      if (response.status === 405) this.log('debug', 'the server does not let clients end sessions (405)');
      else if (!response.ok) this.log('debug', `ending the session: HTTP ${response.status}`);
    } catch (error) {
      this.log('debug', `could not end the session: ${errorMessage(error)}`);
    }
  }

  /** The 2026-07-28 standard headers the client gives this request or notification; undefined for the initialize era. */
  private standardHeaders(m: ClassifiedMessage): Record<string, string> | undefined {
    if (!this.messageHeaders || (m.kind !== 'request' && m.kind !== 'notification')) return undefined;
    return this.messageHeaders({ kind: m.kind, method: m.method, params: m.params as Record<string, unknown> | undefined });
  }

  private sessionHeaders(isInitialize: boolean, extra: Record<string, string>): Record<string, string> {
    const headers = { ...extra };
    if (!isInitialize && this._sessionId !== undefined) headers['Mcp-Session-Id'] = this._sessionId;
    if (!isInitialize && this.protocolVersion !== undefined) headers['MCP-Protocol-Version'] = this.protocolVersion;
    return headers;
  }

  private fireClosed(closed: TransportClosed): void {
    if (this.closedState) return;
    this.closedState = closed;
    this.lifetime.abort();
    this.inFlight.abortAll();
    this.closeEmitter.fire(closed);
    this.router.reader.end();
  }

  private log(level: LogEntry['level'], message: string): void {
    this.logEmitter.fire({ level, source: 'transport', message });
  }
}

/** The error codes of 2026-07-28 (-32020 header mismatch, -32021 missing client capability, -32022 unsupported version). */
const NEW_STYLE_ERRORS: ReadonlySet<number> = new Set([-32020, -32021, -32022]);

/**
 * A refused request whose body is a JSON-RPC error answering it (with one of `codes`, if given):
 * handed on as a 200 JSON reply, so the server's error (its code and data) reaches the caller as
 * the answer, not as an HTTP failure.
 */
async function jsonRpcErrorAnswer(
  request: HttpRequest,
  response: Response,
  m: ClassifiedMessage,
  codes?: ReadonlySet<number>,
): Promise<Response | undefined> {
  if (m.kind !== 'request' || mediaType(response) !== 'application/json') return undefined;
  let text: string;
  try {
    text = await readBodyText(response.clone(), 64 * 1024, request);
  } catch {
    return undefined;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  const answer = classifyMessage(parsed);
  if (answer.kind !== 'response' || answer.id !== m.id || !answer.error || (codes && !codes.has(answer.error.code))) return undefined;
  await discard(response);
  return new Response(text, { status: 200, headers: { 'content-type': 'application/json' } });
}

function remember(seen: Set<string>, id: string): void {
  seen.add(id);
  if (seen.size > REMEMBERED_EVENT_IDS) seen.delete(seen.values().next().value as string);
}

/** Waits, but no longer than the signal stays unaborted. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    // `retry: 0` asks for an immediate reconnection; a timer would still cost a millisecond.
    if (signal.aborted || ms <= 0) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
