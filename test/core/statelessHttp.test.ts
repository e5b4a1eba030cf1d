import { strict as assert } from 'node:assert';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ErrorCode, HttpTransport, McpError, type TextContent, type TraceEvent } from '../../src/core';
import { closeAll, connectTransport } from '../helpers/servers';

/**
 * What a stateless (2026-07-28) Streamable HTTP server may do to a request that no fixture of the
 * v2 SDK does on demand: a reply stream that breaks before the answer, and a header mismatch
 * after the tool's `x-mcp-header` annotations changed. A small server of our own on loopback.
 */
interface Seen {
  id: unknown;
  method: string;
  headers: http.IncomingHttpHeaders;
}

async function statelessServer(behaviour: { breakReplies?: number; annotateAfterFirstList?: boolean; listTtlMs?: number }) {
  const seen: Seen[] = [];
  let broken = 0;
  let lists = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST') {
        seen.push({ id: undefined, method: `HTTP ${req.method}`, headers: req.headers });
        return void res.writeHead(405).end();
      }
      const msg = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        id?: unknown;
        method: string;
        params?: { name?: string; arguments?: Record<string, unknown> };
      };
      seen.push({ id: msg.id, method: msg.method, headers: req.headers });
      const json = (status: number, body: unknown) =>
        res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
      switch (msg.method) {
        case 'server/discover':
          return json(200, {
            jsonrpc: '2.0',
            id: msg.id,
            result: {
              resultType: 'complete',
              supportedVersions: ['2026-07-28'],
              capabilities: { tools: {} },
              serverInfo: { name: 'stateless', version: '1' },
            },
          });
        case 'tools/list': {
          lists++;
          const annotated = behaviour.annotateAfterFirstList && lists > 1;
          const region = annotated ? { type: 'string', 'x-mcp-header': 'Region' } : { type: 'string' };
          return json(200, {
            jsonrpc: '2.0',
            id: msg.id,
            result: {
              tools: [{ name: 'where', inputSchema: { type: 'object', properties: { region } } }],
              ...(behaviour.listTtlMs ? { ttlMs: behaviour.listTtlMs, cacheScope: 'private' } : {}),
            },
          });
        }
        case 'tools/call': {
          if (behaviour.annotateAfterFirstList && req.headers['mcp-param-region'] !== msg.params?.arguments?.region) {
            return json(400, {
              jsonrpc: '2.0',
              id: msg.id,
              error: { code: -32020, message: 'Header mismatch: Mcp-Param-Region is missing' },
            });
          }
          if (broken < (behaviour.breakReplies ?? 0)) {
            broken++;
            // An SSE reply that carries one event and then breaks, without the answer.
            res.writeHead(200, { 'Content-Type': 'text/event-stream' });
            res.write(
              `id: e${broken}\nevent: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'working' } })}\n\n`,
            );
            setTimeout(() => res.socket?.destroy(), 50);
            return;
          }
          return json(200, {
            jsonrpc: '2.0',
            id: msg.id,
            result: { content: [{ type: 'text', text: `at ${String(msg.params?.arguments?.region)}` }] },
          });
        }
        default:
          return json(404, { jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: `Method not found: ${msg.method}` } });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, seen };
}

const servers: http.Server[] = [];
const text = (r: { content: unknown[] }) => (r.content[0] as TextContent).text;

describe('stateless Streamable HTTP (2026-07-28): what a request survives', function () {
  this.timeout(30_000);
  afterEach(async () => {
    await closeAll();
    await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve))));
  });

  it('sends a request again with a new id when its reply stream breaks before the answer, never resuming it with GET', async () => {
    const f = await statelessServer({ breakReplies: 2 });
    const t = await connectTransport(new HttpTransport({ url: f.url }), { protocol: 'auto' });
    assert.equal(t.client.era, 'modern');
    const trace: TraceEvent[] = [];
    t.client.onTrace((e) => trace.push(e));
    const { result } = await t.client.callTool('where', { region: 'eu' });
    assert.equal(text(result), 'at eu');
    const calls = f.seen.filter((s) => s.method === 'tools/call');
    assert.equal(calls.length, 3, 'two broken replies, then the answer');
    assert.equal(new Set(calls.map((c) => c.id)).size, 3, 'each time with a new id');
    assert.ok(!f.seen.some((s) => s.method === 'HTTP GET'), 'no GET to resume a stream');
    assert.ok(t.logs.some((l) => /ended before the answer.*sending tools\/call again/.test(l.message)));
  });

  it('gives up after two resends, with the reason', async () => {
    const f = await statelessServer({ breakReplies: 5 });
    const t = await connectTransport(new HttpTransport({ url: f.url }), { protocol: 'auto' });
    await assert.rejects(
      t.client.callTool('where', { region: 'eu' }),
      (e: McpError) => e.code === ErrorCode.ConnectionClosed && /ended before the answer/.test(e.message),
    );
    assert.equal(f.seen.filter((s) => s.method === 'tools/call').length, 3);
  });

  for (const listTtlMs of [undefined, 60_000]) {
    it(`reads tools/list again after -32020 and sends the call once more with the tool's new header${listTtlMs ? ', past a tools/list the cache still holds' : ''}`, async () => {
      const f = await statelessServer({ annotateAfterFirstList: true, listTtlMs });
      const t = await connectTransport(new HttpTransport({ url: f.url }), { protocol: 'auto' });
      await t.client.listTools();
      const { result } = await t.client.callTool('where', { region: 'us-west1' });
      assert.equal(text(result), 'at us-west1');
      const calls = f.seen.filter((s) => s.method === 'tools/call');
      assert.deepEqual(
        calls.map((c) => c.headers['mcp-param-region']),
        [undefined, 'us-west1'],
      );
      assert.equal(f.seen.filter((s) => s.method === 'tools/list').length, 2);
    });
  }
});
