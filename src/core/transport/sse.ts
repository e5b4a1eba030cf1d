import { Emitter, type Message } from 'vscode-jsonrpc/node';
import { McpError } from '../protocol/errors';
import type { RequestId } from '../protocol/types';
import { isOversizeError, readEventStream } from './eventStream';
import { classifyMessage } from '../protocol/classify';
import { CallbackMessageWriter, MessageRouter } from './httpMessages';
import {
  DEFAULT_MAX_HTTP_MESSAGE_BYTES,
  InFlightRequests,
  discard,
  errorMessage,
  mediaType,
  shownUrl,
  parseServerUrl,
  sendHttp,
  statusError,
  type HttpRequest,
  type HttpServerParams,
} from './httpRequest';
import type { LogEntry, Transport, TransportClosed } from './transport';

/** How long start() waits for the `endpoint` event before calling the server broken. */
const ENDPOINT_TIMEOUT_MS = 30_000;

/**
 * The legacy HTTP+SSE transport (MCP 2024-11-05): one long GET stream carries everything the
 * server sends, starting with an `endpoint` event that names where to POST our messages. It has
 * no resumption: when the stream ends, the connection is over.
 */
export class SseTransport implements Transport {
  private readonly router = new MessageRouter();
  readonly reader = this.router.reader;
  readonly writer = new CallbackMessageWriter((message) => this.send(message));
  private readonly logEmitter = new Emitter<LogEntry>();
  private readonly closeEmitter = new Emitter<TransportClosed>();
  readonly onLog = this.logEmitter.event;
  readonly onDidClose = this.closeEmitter.event;

  private parsedUrl: URL | undefined;
  private endpoint: URL | undefined;
  private protocolVersion: string | undefined;
  private readonly lifetime = new AbortController();
  private readonly inFlight = new InFlightRequests();
  private closedState: TransportClosed | undefined;
  private stopping = false;

  constructor(private readonly params: HttpServerParams) {}

  /** The URL as logs and errors may show it. */
  private get shownUrl(): string {
    return shownUrl(this.url);
  }

  private get url(): URL {
    return (this.parsedUrl ??= parseServerUrl(this.params.url));
  }

  /** Opens the stream and resolves once the server named its message endpoint. */
  async start(): Promise<void> {
    const request: HttpRequest = { method: 'GET', url: this.url, headers: { Accept: 'text/event-stream' }, signal: this.lifetime.signal };
    const response = await sendHttp(this.params, this.url, request);
    if (!response.ok) throw await statusError(request, response);
    if (mediaType(response) !== 'text/event-stream' || !response.body) {
      await discard(response);
      throw McpError.internal(`GET ${this.shownUrl} answered with '${mediaType(response)}', not an SSE stream`, {
        url: this.shownUrl,
        status: response.status,
      });
    }
    const body = response.body;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => fail(McpError.connectionClosed(`${this.shownUrl} sent no endpoint event within ${ENDPOINT_TIMEOUT_MS} ms`)),
        ENDPOINT_TIMEOUT_MS,
      );
      const fail = (error: McpError) => {
        clearTimeout(timer);
        if (this.endpoint) return;
        this.lifetime.abort();
        reject(error);
      };
      readEventStream(body, this.params.maxMessageBytes ?? DEFAULT_MAX_HTTP_MESSAGE_BYTES, {
        onEvent: (event) => {
          if (event.event === 'endpoint') {
            const problem = this.acceptEndpoint(event.data);
            if (problem) fail(problem);
            else {
              clearTimeout(timer);
              resolve();
            }
          } else if ((event.event === undefined || event.event === 'message') && event.data.trim() !== '') {
            this.router.deliverText(event.data, `the SSE stream of ${this.shownUrl}`);
          }
        },
      }).then(
        () => this.streamEnded('the server ended the SSE stream', fail),
        (error) => {
          if (isOversizeError(error)) this.router.reader.reportError(error as Error);
          this.streamEnded(`the SSE stream broke: ${errorMessage(error)}`, fail);
        },
      );
    });
    this.log('info', `using HTTP+SSE at ${this.shownUrl}, posting to ${shownUrl(this.endpoint!)}`);
  }

  setProtocolVersion(version: string): void {
    this.protocolVersion = version;
  }

  async close(): Promise<void> {
    this.stopping = true;
    this.lifetime.abort();
    this.fireClosed({ kind: 'stopped', reason: 'closed by the client' });
    this.logEmitter.dispose();
    this.closeEmitter.dispose();
  }

  /** The endpoint must be on the server's own origin: we never post the session elsewhere. */
  private acceptEndpoint(data: string): McpError | undefined {
    if (this.endpoint) {
      this.log('warning', 'ignored a second endpoint event');
      return undefined;
    }
    let endpoint: URL;
    try {
      endpoint = new URL(data.trim(), this.url);
    } catch {
      return McpError.invalidParams(`${this.shownUrl} named an endpoint that is not a URL: ${data}`);
    }
    if (endpoint.origin !== this.url.origin) {
      return McpError.invalidParams(`Refused the endpoint ${shownUrl(endpoint)}: it is not on the server's origin ${this.url.origin}`);
    }
    this.endpoint = endpoint;
    return undefined;
  }

  private streamEnded(problem: string, failStart: (error: McpError) => void): void {
    const reason = `${problem} (${this.shownUrl})`;
    if (!this.endpoint) {
      // start() rejects with the reason; a channel that never opened does not report closing.
      this.closedState = { kind: 'failed', reason };
      failStart(McpError.connectionClosed(`${reason} before naming an endpoint`));
      return;
    }
    if (!this.stopping) this.log('error', reason);
    this.fireClosed({ kind: this.stopping ? 'stopped' : 'lost', reason });
  }

  /** Replies come on the stream; a POST only has to be accepted. A failed request POST answers it with an error. */
  private async send(message: Message): Promise<void> {
    if (this.closedState || !this.endpoint) throw McpError.connectionClosed(this.closedState?.reason ?? 'the SSE stream is not open');
    const m = classifyMessage(message);
    if (m.kind === 'request') {
      const { id } = m;
      this.router.expect(id);
      void this.post(message).catch((error) => this.failRequest(id, error));
      return;
    }
    await this.post(message);
  }

  private failRequest(id: RequestId, error: unknown): void {
    if (this.lifetime.signal.aborted) return;
    this.log('warning', `request ${JSON.stringify(id)} failed: ${errorMessage(error)}`);
    this.router.fail(id, error);
  }

  private async post(message: Message): Promise<void> {
    const headers: Record<string, string> = { 'Content-Type': 'application/json' };
    if (this.protocolVersion !== undefined) headers['MCP-Protocol-Version'] = this.protocolVersion;
    const scope = this.inFlight.open();
    try {
      const request: HttpRequest = { method: 'POST', url: this.endpoint!, headers, body: JSON.stringify(message), signal: scope.signal };
      const response = await sendHttp(this.params, this.url, request);
      if (!response.ok) throw await statusError(request, response);
      await discard(response);
    } finally {
      this.inFlight.release(scope);
    }
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
