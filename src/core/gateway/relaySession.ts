/**
 * The gateway's end of a relay (./relay.ts): one connection on the gateway's relay socket is one
 * chat session. Its first line says which shared server it is for and carries the window's token;
 * after it, the connection is the MCP stdio framing (newline-delimited JSON-RPC), read by
 * `RelayTransport` below. A connection whose first line does not hold the token, or
 * names a server that is not shared, gets a JSON-RPC error for its first request (VS Code shows
 * that message as the server's failure) and is closed.
 */
import { timingSafeEqual } from 'node:crypto';
import { once } from 'node:events';
import type * as net from 'node:net';
import type { Duplex } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { ErrorCode } from '../protocol/errors';
import type { RelayHello } from './relay';

/** The first line is a few hundred bytes; more than this without a newline is not a relay. */
const MAX_HELLO_BYTES = 4096;
/** A relay writes its first line at once; a connection that does not is dropped. */
const HELLO_TIMEOUT_MS = 10_000;

/** The largest message a relay may send (as the gateway's HTTP body). */
const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

/**
 * The MCP stdio framing (one JSON-RPC message per line) on the relay's socket, for the SDK's
 * `Server`. Not the SDK's `StdioServerTransport`: that one validates every line against the SDK's
 * whole message schema before the server validates it again, which was the largest single cost of
 * a forwarded call in VS Code's extension host (bench/chat-vscode-invoke.ts profiles it). Here a
 * line is parsed and checked for a JSON-RPC 2.0 object; the server's own schemas do the rest.
 * Closing it (the session ended) closes the socket, so the relay exits and VS Code sees its
 * server stop; the relay going closes the session.
 */
export class RelayTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: Transport['onmessage'];
  /** Sees each message first; one it returns true for is its own, and never reaches `onmessage`. */
  intercept?: (message: JSONRPCMessage) => boolean;
  private readonly decoder = new StringDecoder('utf8');
  private pending = '';
  private ended = false;
  /** Lines sent in this turn of the event loop, written together by `flush`. */
  private outgoing: string[] = [];
  private batch: Promise<void> | undefined;

  /** A relay's socket, or `mcp-host serve`'s stdin and stdout as one stream (`Duplex.from`). */
  constructor(private readonly socket: net.Socket | Duplex) {}

  async start(): Promise<void> {
    this.socket.on('data', (chunk: Buffer) => this.receive(chunk));
    // The other end went: a relay's socket closes, serve's stdin ends (its stdout may stay open).
    this.socket.once('close', () => void this.close());
    this.socket.once('end', () => void this.close());
  }

  private receive(chunk: Buffer): void {
    // Only the new text is searched for line ends: a long message costs one pass, not one per chunk.
    const piece = this.decoder.write(chunk);
    let start = 0;
    for (let end = piece.indexOf('\n'); end !== -1; end = piece.indexOf('\n', start)) {
      const line = this.pending + piece.slice(start, end);
      this.pending = '';
      start = end + 1;
      if (/\S/.test(line)) this.deliver(line);
      if (this.ended) return;
    }
    this.pending += piece.slice(start);
    if (this.pending.length > MAX_MESSAGE_BYTES) {
      this.onerror?.(new Error(`a message of more than ${MAX_MESSAGE_BYTES} bytes`));
      void this.close();
    }
  }

  private deliver(line: string): void {
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      this.onerror?.(new Error('a line that is not JSON'));
      return;
    }
    if (typeof message !== 'object' || message === null || Array.isArray(message) || (message as { jsonrpc?: unknown }).jsonrpc !== '2.0') {
      this.onerror?.(new Error('a line that is not one JSON-RPC 2.0 message'));
      return;
    }
    if (this.intercept?.(message as JSONRPCMessage)) return;
    this.onmessage?.(message as JSONRPCMessage);
  }

  /**
   * Queues the message; what is sent in one turn of the event loop leaves in one write (the answers
   * to 256 calls in flight cost one system call, not 256, and the client is woken once). Resolves
   * once the stream took the batch (after `drain` when it pushed back).
   */
  send(message: JSONRPCMessage): Promise<void> {
    if (this.ended) return Promise.resolve();
    this.outgoing.push(`${JSON.stringify(message)}\n`);
    return (this.batch ??= new Promise<void>((resolve) => setImmediate(() => resolve(this.flush()))));
  }

  /** Writes what is queued, in the order it was sent. */
  private flush(): Promise<void> {
    this.batch = undefined;
    const text = this.outgoing.join('');
    this.outgoing = [];
    if (this.ended || !text) return Promise.resolve();
    return this.socket.write(text) ? Promise.resolve() : once(this.socket, 'drain').then(() => undefined);
  }

  async close(): Promise<void> {
    if (this.ended) return;
    // What was sent before the close still goes (a last answer, then the end).
    if (this.outgoing.length && this.socket.writable) void this.flush();
    this.ended = true;
    this.pending = '';
    this.socket.end();
    // Read on, so the relay's end of the socket closes it.
    this.socket.resume();
    this.onclose?.();
  }
}

/**
 * Whom a connection is for: a shared server of the chat (`id` its name) or an agent's configuration
 * entry (`id` the entry's, see ./agentRelay.ts).
 */
export type RelayVerdict = { ok: true; kind: 'chat' | 'agent'; id: string } | { ok: false; reason: string };

/** A first line as `check` reads it: a relay of the chat names a server, an agent's relay its entry. */
export type RelayHelloCheck = Partial<RelayHello> & { agent?: unknown };

/**
 * Reads a connection's first line and hands the connection on as a transport (`open`), or
 * refuses it. `check` decides from the line (token, server); the socket never throws into the
 * extension host: its errors end the connection.
 */
export function acceptRelay(
  socket: net.Socket,
  check: (hello: RelayHelloCheck | undefined) => RelayVerdict,
  open: (verdict: Extract<RelayVerdict, { ok: true }>, transport: RelayTransport) => Promise<void>,
): void {
  socket.on('error', () => socket.destroy());
  socket.setNoDelay?.(true);
  let head = Buffer.alloc(0);
  const timer = setTimeout(() => socket.destroy(), HELLO_TIMEOUT_MS);
  const onData = (chunk: Buffer): void => {
    head = Buffer.concat([head, chunk]);
    const end = head.indexOf(0x0a);
    if (end === -1) {
      if (head.length > MAX_HELLO_BYTES) socket.destroy();
      return;
    }
    clearTimeout(timer);
    socket.off('data', onData);
    socket.pause();
    const rest = head.subarray(end + 1);
    if (rest.length) socket.unshift(rest);
    const verdict = check(parseHello(head.subarray(0, end)));
    if (!verdict.ok) return refuseFirstRequest(socket, verdict.reason);
    const transport = new RelayTransport(socket);
    open(verdict, transport).then(
      () => socket.resume(),
      () => socket.destroy(),
    );
  };
  socket.on('data', onData);
  socket.once('close', () => clearTimeout(timer));
}

function parseHello(line: Buffer): RelayHelloCheck | undefined {
  try {
    const hello = JSON.parse(line.toString('utf8')) as unknown;
    return typeof hello === 'object' && hello !== null && (hello as RelayHello).mcpHostRelay === 1 ? (hello as RelayHelloCheck) : undefined;
  } catch {
    return undefined;
  }
}

/** Whether a relay's token or an HTTP request's Authorization is the window's (compared in constant time). */
export function tokenMatches(given: unknown, token: Buffer): boolean {
  if (typeof given !== 'string') return false;
  const bytes = Buffer.from(given);
  return bytes.length === token.length && timingSafeEqual(bytes, token);
}

/** Answers the first request on the connection with the reason, then closes it. */
function refuseFirstRequest(socket: net.Socket, reason: string): void {
  let buffered = '';
  const onData = (chunk: Buffer): void => {
    buffered += chunk.toString('utf8');
    if (buffered.length > MAX_HELLO_BYTES * 16) return void socket.destroy();
    for (let end = buffered.indexOf('\n'); end !== -1; end = buffered.indexOf('\n')) {
      const line = buffered.slice(0, end);
      buffered = buffered.slice(end + 1);
      const id = idOf(line);
      if (id === undefined) continue;
      socket.off('data', onData);
      // Invalid Request, as the gateway's HTTP refusals (./sdkGateway.ts).
      socket.end(`${JSON.stringify({ jsonrpc: '2.0', id, error: { code: ErrorCode.InvalidRequest, message: reason } })}\n`);
      return;
    }
  };
  socket.on('data', onData);
  socket.resume();
}

function idOf(line: string): string | number | undefined {
  try {
    const message = JSON.parse(line) as { id?: unknown; method?: unknown };
    return typeof message.method === 'string' && (typeof message.id === 'string' || typeof message.id === 'number')
      ? message.id
      : undefined;
  } catch {
    return undefined;
  }
}
