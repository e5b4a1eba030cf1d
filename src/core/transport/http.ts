import { Emitter, type Message } from 'vscode-jsonrpc/node';
import { McpError } from '../protocol/errors';
import type { RequestId } from '../protocol/types';
import { classifyMessage } from '../protocol/classify';
import { CallbackMessageWriter, PushMessageReader } from './httpMessages';
import type { HttpServerParams } from './httpRequest';
import { SseTransport } from './sse';
import { StreamableHttpTransport } from './streamableHttp';
import type { LogEntry, MessageHeaderSource, Transport, TransportClosed } from './transport';

/** What a server that predates Streamable HTTP answers to a POST on its SSE URL (per the spec's compatibility note). */
const FALLBACK_STATUSES = new Set([400, 404, 405]);

/**
 * The transport for a server known only by its URL: Streamable HTTP, and if the initialize POST is
 * refused with 400, 404 or 405, the older HTTP+SSE transport at the same URL, with the same
 * initialize sent again. The client sees one reader and one writer throughout.
 */
export class HttpTransport implements Transport {
  readonly reader = new PushMessageReader();
  readonly writer = new CallbackMessageWriter((message) => this.send(message));
  private readonly logEmitter = new Emitter<LogEntry>();
  private readonly closeEmitter = new Emitter<TransportClosed>();
  readonly onLog = this.logEmitter.event;
  readonly onDidClose = this.closeEmitter.event;

  private readonly streamable: StreamableHttpTransport;
  private legacy: SseTransport | undefined;
  private active: Transport;
  private initialize: { id: RequestId; message: Message } | undefined;
  /** Set once initialize was answered: from then on the choice of transport is final. */
  private settled = false;
  private closedState: TransportClosed | undefined;

  constructor(private readonly params: HttpServerParams) {
    this.streamable = new StreamableHttpTransport(params);
    this.active = this.streamable;
    this.wire(this.streamable, (message) => this.fromStreamable(message));
  }

  get network(): NonNullable<Transport['network']> {
    return networkOf(this.params.url);
  }

  get sessionId(): string | undefined {
    return this.legacy ? undefined : this.streamable.sessionId;
  }

  /** Only Streamable HTTP has sessions that the server can replace. */
  get onDidRenewSession(): Transport['onDidRenewSession'] {
    return this.streamable.onDidRenewSession;
  }

  /** Which protocol the server turned out to speak. */
  get kind(): 'streamableHttp' | 'sse' {
    return this.legacy ? 'sse' : 'streamableHttp';
  }

  start(): Promise<void> {
    return this.streamable.start();
  }

  setProtocolVersion(version: string): void {
    this.active.setProtocolVersion?.(version);
  }

  /** Only Streamable HTTP carries the 2026-07-28 era, which is the only one with such headers. */
  setMessageHeaders(source: MessageHeaderSource | undefined): void {
    this.streamable.setMessageHeaders(source);
  }

  async close(): Promise<void> {
    await Promise.all([this.streamable.close(), this.legacy?.close()]);
    this.fireClosed({ kind: 'stopped', reason: 'closed by the client' });
    this.logEmitter.dispose();
    this.closeEmitter.dispose();
  }

  private send(message: Message): Promise<void> {
    const m = classifyMessage(message);
    if (m.kind === 'request' && m.method === 'initialize' && !this.settled) this.initialize = { id: m.id, message };
    return this.active.writer.write(message);
  }

  private wire(inner: Transport, onMessage: (message: unknown) => void): void {
    inner.reader.listen((message) => onMessage(message));
    inner.reader.onError((error) => this.reader.reportError(error));
    inner.onLog((entry) => this.logEmitter.fire(entry));
    inner.onDidClose((closed) => {
      if (inner === this.active) this.fireClosed(closed);
    });
  }

  /** Intercepts the answer to initialize: an HTTP refusal of the right kind means "try the old transport". */
  private fromStreamable(message: unknown): void {
    const m = classifyMessage(message);
    if (!this.settled && m.kind === 'response' && this.initialize && m.id === this.initialize.id) {
      // Only our own HTTP refusal of the POST counts, never a server's error that happens to carry a status.
      const kind = m.error && McpError.from(m.error).kind;
      if (kind?.type === 'httpStatus' && FALLBACK_STATUSES.has(kind.status)) {
        void this.fallBack(kind.status, this.initialize);
        return;
      }
      this.settled = true;
    }
    this.reader.push(message);
  }

  private async fallBack(status: number, initialize: { id: RequestId; message: Message }): Promise<void> {
    this.settled = true;
    this.logEmitter.fire({
      level: 'info',
      source: 'transport',
      message: `POST ${this.params.url} got HTTP ${status}; trying the older HTTP+SSE transport at the same URL`,
    });
    const legacy = new SseTransport(this.params);
    this.legacy = legacy;
    this.active = legacy;
    this.wire(legacy, (message) => this.reader.push(message));
    // It never got a session, so there is nothing to end on the server.
    void this.streamable.close();
    try {
      await legacy.start();
      await legacy.writer.write(initialize.message);
    } catch (error) {
      const e = McpError.from(error);
      this.reader.push({
        jsonrpc: '2.0',
        id: initialize.id,
        error: {
          code: e.code,
          message: `${this.params.url} speaks neither Streamable HTTP (POST got HTTP ${status}) nor HTTP+SSE: ${e.message}`,
          data: e.data,
        },
      });
    }
  }

  private fireClosed(closed: TransportClosed): void {
    if (this.closedState) return;
    this.closedState = closed;
    this.closeEmitter.fire(closed);
    this.reader.end();
  }
}

/** An HTTP server's host and port as telemetry names them (`server.address`, `server.port`); never its path, query or user info. */
function networkOf(url: string): NonNullable<Transport['network']> {
  try {
    const u = new URL(url);
    const port = u.port ? Number(u.port) : u.protocol === 'https:' ? 443 : 80;
    return { transport: 'tcp', address: u.hostname, port };
  } catch {
    return { transport: 'tcp' };
  }
}
