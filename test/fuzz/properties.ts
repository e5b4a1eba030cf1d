// Property-based tests of the inbound paths, shared by the short run in the mocha suite
// (test/core/fuzz.test.ts) and the long one (`npm run fuzz`, test/fuzz/run.ts).
import { strict as assert } from 'node:assert';
import { EventEmitter } from 'node:events';
import type { Readable } from 'node:stream';
import fc from 'fast-check';
import { AbstractMessageWriter, type Message, type MessageWriter } from 'vscode-jsonrpc/node';
import { Emitter } from 'vscode-jsonrpc/node';
import { McpConnection } from '../../src/core/jsonrpc/connection';
import { ClientRequests, ServerRequests } from '../../src/core/protocol/methods';
import { NdjsonMessageReader } from '../../src/core/transport/ndjson';
import { readEventStream } from '../../src/core/transport/eventStream';
import { StreamableHttpTransport } from '../../src/core/transport/streamableHttp';
import type { LogEntry, Transport, TransportClosed } from '../../src/core/transport/transport';

export interface FuzzProperty {
  name: string;
  /** Roughly how costly one case is, relative to the others; the long run starts the costly ones first. */
  weight?: number;
  /** Runs the property for `numRuns` cases; throws (with fast-check's report) when one fails. */
  check(numRuns: number, seed?: number): Promise<void>;
}

/** A Readable as far as the reader uses one: chunks are pushed in synchronously. */
function fakeReadable(): Readable & EventEmitter {
  return new EventEmitter() as unknown as Readable & EventEmitter;
}

/** Splits bytes at the given (sorted, deduplicated) cut points. */
function cut(bytes: Uint8Array, points: number[]): Uint8Array[] {
  const chunks: Uint8Array[] = [];
  let start = 0;
  for (const p of [...new Set(points)].sort((a, b) => a - b)) {
    if (p <= start || p >= bytes.length) continue;
    chunks.push(bytes.subarray(start, p));
    start = p;
  }
  chunks.push(bytes.subarray(start));
  return chunks;
}

const cutPoints = fc.array(fc.nat({ max: 1 << 16 }), { maxLength: 24 });
/** JSON values as they come back from a JSON round trip (no -0, no undefined). */
const jsonMessage = fc.jsonValue().map((v) => JSON.parse(JSON.stringify(v)) as unknown);

/** Any chunking of a valid message stream yields exactly the same messages, and no error. */
const ndjsonChunking: FuzzProperty = {
  name: 'ndjson reader: any chunking yields the same messages',
  check: async (numRuns, seed) =>
    fc.assert(
      fc.property(
        fc.array(fc.tuple(jsonMessage, fc.constantFrom('\n', '\r\n', '\n\n', '\r\n  \n')), { maxLength: 12 }),
        fc.array(fc.nat(), { maxLength: 24 }),
        (lines, rawPoints) => {
          const text = lines.map(([value, end]) => JSON.stringify(value) + end).join('');
          const bytes = Buffer.from(text, 'utf8');
          const readable = fakeReadable();
          const reader = new NdjsonMessageReader(readable);
          const got: unknown[] = [];
          const errors: Error[] = [];
          reader.onError((e) => errors.push(e));
          reader.listen((m) => got.push(m));
          for (const chunk of cut(
            bytes,
            rawPoints.map((p) => (bytes.length ? p % bytes.length : 0)),
          ))
            readable.emit('data', Buffer.from(chunk));
          assert.deepEqual(errors, []);
          assert.deepEqual(
            got,
            lines.map(([value]) => value),
          );
        },
      ),
      { numRuns, seed },
    ),
};

/** Arbitrary bytes never throw out of the reader and never stop a later valid line. */
const ndjsonGarbage: FuzzProperty = {
  name: 'ndjson reader: arbitrary bytes never throw or stop later lines',
  check: async (numRuns, seed) =>
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 300 }),
        fc.constantFrom(undefined, 16, 64, 1024),
        cutPoints,
        jsonMessage,
        (garbage, limit, points, after) => {
          const readable = fakeReadable();
          const reader = new NdjsonMessageReader(readable, limit);
          const got: unknown[] = [];
          reader.onError(() => undefined);
          reader.listen((m) => got.push(m));
          const line = Buffer.from(`${JSON.stringify(after)}\n`, 'utf8');
          const bytes = Buffer.concat([garbage, Buffer.from('\n'), line]);
          for (const chunk of cut(
            bytes,
            points.map((p) => p % bytes.length),
          ))
            readable.emit('data', Buffer.from(chunk));
          if (limit === undefined || line.length - 1 <= limit) assert.deepEqual(got[got.length - 1], after);
        },
      ),
      { numRuns, seed },
    ),
};

/** A transport whose reader the test feeds and whose writer records what the client sends. */
class LoopTransport implements Transport {
  readonly input = fakeReadable();
  readonly reader = new NdjsonMessageReader(this.input);
  readonly sent: Message[] = [];
  readonly writer: MessageWriter;
  private readonly closeEmitter = new Emitter<TransportClosed>();
  readonly onLog = new Emitter<LogEntry>().event;
  readonly onDidClose = this.closeEmitter.event;

  constructor() {
    const sent = this.sent;
    this.writer = new (class extends AbstractMessageWriter {
      async write(message: Message) {
        sent.push(message);
      }
      end() {}
    })();
  }

  feed(text: string): void {
    this.input.emit('data', Buffer.from(text, 'utf8'));
  }
  async start(): Promise<void> {}
  async close(): Promise<void> {
    this.closeEmitter.fire({ kind: 'stopped', reason: 'closed' });
  }
}

const idArb = fc.oneof(
  fc.string({ maxLength: 6 }),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constant(null),
  fc.constant({}),
  fc.constant([1]),
);
const absent = fc.constant(undefined);
/** Objects that look more or less like JSON-RPC: every field may be missing, mistyped or misplaced. */
const jsonRpcish = fc.record({
  jsonrpc: fc.oneof(fc.constant('2.0'), fc.constant('2.0'), fc.constant('1.0'), fc.constant(2), absent),
  id: fc.oneof(idArb, absent),
  method: fc.oneof(
    fc.constantFrom('ping', 'no/such/method', 'notifications/cancelled', 'notifications/progress', 'notifications/message'),
    fc.integer(),
    absent,
  ),
  params: fc.oneof(
    fc.dictionary(fc.string({ maxLength: 4 }), fc.jsonValue({ maxDepth: 1 })),
    fc.array(fc.integer(), { maxLength: 2 }),
    fc.string({ maxLength: 4 }),
    fc.integer(),
    fc.constant(null),
    absent,
  ),
  result: fc.oneof(fc.jsonValue({ maxDepth: 1 }), absent, absent),
  error: fc.oneof(
    fc.record({ code: fc.integer(), message: fc.string({ maxLength: 4 }) }),
    fc.jsonValue({ maxDepth: 1 }),
    absent,
    absent,
    absent,
  ),
});
/** A wire line: an arbitrary JSON value, a JSON-RPC look-alike, or text that is not JSON at all. */
const inboundLine = fc.oneof(
  jsonMessage.map((v) => ({ value: v as unknown, text: JSON.stringify(v) })),
  jsonRpcish.map((v) => ({ value: JSON.parse(JSON.stringify(v)) as unknown, text: JSON.stringify(v) })),
  fc
    .string({ maxLength: 20 })
    .filter((s) => !s.includes('\n'))
    .map((text) => ({ value: NOT_JSON, text })),
);
const NOT_JSON = Symbol('not JSON');

type Expected = { kind: 'none' } | { kind: 'error'; id: string | number; code: number } | { kind: 'result'; id: string | number };

/**
 * What JSON-RPC 2.0 and the seed ask of a client for one inbound value, written from the spec and
 * independently of src/core/protocol/classify.ts: a malformed message that carries a usable id gets
 * Invalid Request (-32600); a request for a method the client does not serve gets Method Not Found
 * (-32601); ping is answered; notifications, responses nobody waits for, text that is not JSON and
 * anything without a usable id get no answer.
 */
function expectedReply(value: unknown): Expected | 'either' {
  if (value === NOT_JSON || typeof value !== 'object' || value === null || Array.isArray(value)) return { kind: 'none' };
  const m = value as Record<string, unknown>;
  const id = m.id;
  const usableId = typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? id : undefined;
  const invalid: Expected = usableId === undefined ? { kind: 'none' } : { kind: 'error', id: usableId, code: -32600 };
  if (m.jsonrpc !== '2.0') return invalid;
  if ('id' in m && id !== null && usableId === undefined) return { kind: 'none' };
  if ('method' in m) {
    if (typeof m.method !== 'string') return invalid;
    if (m.params !== undefined && m.params !== null && typeof m.params !== 'object') return invalid;
    if ('result' in m || 'error' in m) return invalid;
    if (usableId === undefined) return { kind: 'none' };
    // `params: null` is neither clearly allowed nor clearly refused; any single answer will do.
    if (m.params === null) return 'either';
    return m.method === 'ping' ? { kind: 'result', id: usableId } : { kind: 'error', id: usableId, code: -32601 };
  }
  const hasResult = 'result' in m;
  const hasError = 'error' in m;
  if (hasResult === hasError) return invalid;
  if (hasError) {
    const e = m.error as { code?: unknown; message?: unknown } | null;
    const wellFormed =
      typeof e === 'object' && e !== null && !Array.isArray(e) && Number.isInteger(e.code) && typeof e.message === 'string';
    if (!wellFormed) return invalid;
  }
  // A response to nothing we sent: dropped.
  return { kind: 'none' };
}

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Arbitrary JSON values and malformed JSON-RPC get the seed's error codes or nothing, and never crash the client. */
const inboundDispatch: FuzzProperty = {
  name: 'inbound dispatch: malformed messages get the seed codes and never crash',
  check: (numRuns, seed) =>
    fc.assert(
      fc.asyncProperty(inboundLine, async (line) => {
        const transport = new LoopTransport();
        const connection = new McpConnection(transport, 5_000);
        // As McpClient does; every other method is one the client does not serve.
        connection.onRequest(ServerRequests.ping, () => ({}));
        connection.listen();
        transport.feed(`${line.text}\n`);
        for (let i = 0; i < 3; i++) await tick();
        const expected = expectedReply(line.value);
        const replies = transport.sent as Array<{ id?: unknown; result?: unknown; error?: { code: number } }>;
        if (expected === 'either') assert.equal(replies.length, 1);
        else if (expected.kind === 'none') assert.deepEqual(replies, []);
        else {
          assert.equal(replies.length, 1, `one reply to ${line.text}`);
          assert.deepEqual(replies[0].id, expected.id);
          if (expected.kind === 'result') assert.deepEqual(replies[0].result, {});
          else assert.equal(replies[0].error?.code, expected.code);
        }
        // And the connection still works: a request of ours is answered.
        replies.length = 0;
        const pong = connection.request(ClientRequests.ping, undefined);
        await tick();
        const ours = transport.sent.find((m) => (m as { method?: string }).method === 'ping') as { id: number } | undefined;
        assert.ok(ours, 'our ping was sent');
        transport.feed(`${JSON.stringify({ jsonrpc: '2.0', id: ours.id, result: {} })}\n`);
        assert.deepEqual(await pong, {});
        assert.equal(connection.isClosed, false);
        await connection.close();
      }),
      { numRuns, seed },
    ),
};

/** SSE bytes of events, each with an id and JSON data. */
function sseEvents(messages: unknown[], firstId: number, comment: boolean): string {
  return messages
    .map((m, i) => `${comment ? ': keep-alive\n' : ''}id: ${firstId + i}\nevent: message\ndata: ${JSON.stringify(m)}\n\n`)
    .join('');
}

/** A body that hands over the chunks one read at a time, then ends or breaks (after the last chunk was read). */
function streamOf(chunks: Uint8Array[], endWithError: boolean): ReadableStream<Uint8Array> {
  let next = 0;
  return new ReadableStream(
    {
      pull(controller) {
        if (next < chunks.length) controller.enqueue(new Uint8Array(chunks[next++]));
        else if (endWithError) controller.error(new Error('the connection broke'));
        else controller.close();
      },
    },
    { highWaterMark: 0 },
  );
}

const sseMessage = fc
  .string({ maxLength: 30, unit: 'binary' })
  .map((data) => ({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data } }));

/** Any split of an SSE stream into chunks hands over exactly the events sent, in order. */
const sseSplits: FuzzProperty = {
  name: 'SSE reader: any split of the stream yields every event once',
  check: (numRuns, seed) =>
    fc.assert(
      fc.asyncProperty(
        fc.array(sseMessage, { maxLength: 10 }),
        fc.boolean(),
        fc.array(fc.nat(), { maxLength: 24 }),
        async (messages, comment, rawPoints) => {
          const bytes = Buffer.from(sseEvents(messages, 1, comment), 'utf8');
          const got: string[] = [];
          await readEventStream(
            streamOf(
              cut(
                bytes,
                rawPoints.map((p) => (bytes.length ? p % bytes.length : 0)),
              ),
              false,
            ),
            1 << 20,
            {
              onEvent: (e) => got.push(e.data),
            },
          );
          assert.deepEqual(
            got.map((d) => JSON.parse(d)),
            messages,
          );
        },
      ),
      { numRuns, seed },
    ),
};

/**
 * The Streamable HTTP GET stream, broken at arbitrary points (mid-event, mid-character, cleanly
 * or with an error) and resumed with Last-Event-ID, by a server that may also repeat events the
 * client already has: every message arrives exactly once, in order.
 */
const sseReconnects: FuzzProperty = {
  name: 'Streamable HTTP: arbitrary break and resume points never lose or duplicate',
  weight: 5,
  check: (numRuns, seed) =>
    fc.assert(
      fc.asyncProperty(
        fc.array(sseMessage, { minLength: 1, maxLength: 8 }),
        fc.array(fc.record({ extraBytes: fc.nat(), broken: fc.boolean(), repeat: fc.nat({ max: 3 }) }), { maxLength: 4 }),
        async (messages, breaks) => {
          const encoded = messages.map((m, i) => Buffer.from(sseEvents([m], i + 1, false), 'utf8'));
          let connections = 0;
          const fakeFetch = async (_url: string | URL | Request, init?: RequestInit): Promise<Response> => {
            if (init?.method === 'POST') {
              const message = JSON.parse(String(init.body)) as { id?: number; method: string };
              if (message.id === undefined) return new Response(null, { status: 202 });
              const result = { protocolVersion: '2025-11-25', capabilities: {}, serverInfo: { name: 'fuzz', version: '1' } };
              return Response.json({ jsonrpc: '2.0', id: message.id, result });
            }
            // GET: resume after Last-Event-ID (ids are 1-based indexes), maybe repeating a few.
            const last = Number((init?.headers as Record<string, string>)['Last-Event-ID'] ?? 0);
            const plan = breaks[connections++];
            const from = plan ? Math.max(0, last - plan.repeat) : last;
            const rest = Buffer.concat([Buffer.from('retry: 0\n\n'), ...encoded.slice(from)]);
            if (!plan) return new Response(streamOf([rest], false), { headers: { 'content-type': 'text/event-stream' } });
            // Each connection brings at least its first event whole, so no resume is wasted.
            const firstEvent = 10 + (encoded[from]?.length ?? 0);
            const upTo = Math.min(rest.length, firstEvent + (plan.extraBytes % Math.max(1, rest.length)));
            return new Response(streamOf([rest.subarray(0, upTo)], plan.broken), { headers: { 'content-type': 'text/event-stream' } });
          };
          const transport = new StreamableHttpTransport({ url: 'http://127.0.0.1:9/mcp', fetch: fakeFetch as typeof fetch });
          const got: unknown[] = [];
          const all = new Promise<void>((resolve) => {
            transport.reader.listen((m) => {
              if ((m as { method?: string }).method === 'notifications/message') got.push(m);
              if (got.length === messages.length) resolve();
            });
          });
          await transport.start();
          await transport.writer.write({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} } as Message);
          await transport.writer.write({ jsonrpc: '2.0', method: 'notifications/initialized' } as Message);
          const closed = new Promise<void>((resolve) => transport.onDidClose(() => resolve()));
          await Promise.race([all, closed, new Promise((resolve) => setTimeout(resolve, 2000))]);
          // Anything duplicated would have arrived by now too.
          await tick();
          await transport.close();
          assert.deepEqual(got, messages);
        },
      ),
      { numRuns, seed },
    ),
};

export const PROPERTIES: FuzzProperty[] = [ndjsonChunking, ndjsonGarbage, inboundDispatch, sseSplits, sseReconnects];
