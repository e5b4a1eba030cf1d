import { strict as assert } from 'node:assert';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHttpTransport, type Tool } from '../../src/core';
import { standardHeaders } from '../../src/core/client/statelessSession';

/** A Streamable HTTP endpoint that answers every request `{}` and keeps each POST's headers and body. */
async function recordingServer(): Promise<{
  url: string;
  posts: Array<{ headers: http.IncomingHttpHeaders; body: { id?: number; method?: string } }>;
  close(): Promise<void>;
}> {
  const posts: Array<{ headers: http.IncomingHttpHeaders; body: { id?: number; method?: string } }> = [];
  const server = http.createServer((req, res) => {
    let text = '';
    req.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    req.on('end', () => {
      const body = JSON.parse(text) as { id?: number; method?: string };
      posts.push({ headers: req.headers, body });
      if (body.id === undefined) return void res.writeHead(202).end();
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: body.id, result: {} }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/mcp`, posts, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** Sends one request through the transport and waits for its answer. */
async function roundTrip(transport: StreamableHttpTransport, id: number, method: string, params: object): Promise<void> {
  const answered = new Promise<void>((resolve) => {
    const listener = transport.reader.listen((message) => {
      if ((message as { id?: unknown }).id === id) {
        listener.dispose();
        resolve();
      }
    });
  });
  await transport.writer.write({ jsonrpc: '2.0', id, method, params } as never);
  await answered;
}

const META_OF_2026 = { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } };
const standard = (headers: http.IncomingHttpHeaders) =>
  Object.fromEntries(Object.entries(headers).filter(([name]) => name.startsWith('mcp-') || name === 'x-given'));

describe('Streamable HTTP: the 2026-07-28 headers come from the client', () => {
  let server: Awaited<ReturnType<typeof recordingServer>>;
  let transport: StreamableHttpTransport;
  beforeEach(async () => {
    server = await recordingServer();
    transport = new StreamableHttpTransport({ url: server.url });
    await transport.start();
  });
  afterEach(async () => {
    await transport.close();
    await server.close();
  });

  it('sends exactly the headers it is given, and none for a message the source gives none', async () => {
    transport.setMessageHeaders(({ kind, method }) =>
      kind === 'request' && method === 'tools/list'
        ? { 'MCP-Protocol-Version': '2026-07-28', 'Mcp-Method': 'tools/list', 'X-Given': 'yes' }
        : undefined,
    );
    await roundTrip(transport, 1, 'tools/list', META_OF_2026);
    await roundTrip(transport, 2, 'prompts/list', META_OF_2026);
    await transport.writer.write({ jsonrpc: '2.0', method: 'notifications/x', params: META_OF_2026 } as never);
    assert.deepEqual(
      server.posts.map((p) => [p.body.method, standard(p.headers)]),
      [
        ['tools/list', { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list', 'x-given': 'yes' }],
        ['prompts/list', {}],
        ['notifications/x', {}],
      ],
    );
  });

  it('does not read `_meta`: without a source a message of 2026-07-28 gets no standard headers', async () => {
    await roundTrip(transport, 1, 'tools/call', { ...META_OF_2026, name: 'echo', arguments: {} });
    assert.deepEqual(standard(server.posts[0].headers), {});
  });

  it('asks the source with the message as sent; undefined stops the headers again', async () => {
    const seen: unknown[] = [];
    transport.setMessageHeaders((message) => {
      seen.push(message);
      return { 'Mcp-Method': message.method };
    });
    await roundTrip(transport, 1, 'resources/read', { uri: 'file:///a' });
    transport.setMessageHeaders(undefined);
    await roundTrip(transport, 2, 'resources/read', { uri: 'file:///b' });
    assert.deepEqual(
      server.posts.map((p) => standard(p.headers)),
      [{ 'mcp-method': 'resources/read' }, {}],
    );
    assert.deepEqual(seen[0], { kind: 'request', method: 'resources/read', params: { uri: 'file:///a' } });
  });
});

describe('standardHeaders (the client side of the 2026-07-28 headers)', () => {
  const tool: Tool = {
    name: 'forecast',
    inputSchema: { type: 'object', properties: { region: { type: 'string', 'x-mcp-header': 'Region' }, days: { type: 'integer' } } },
  };
  const headers = standardHeaders('2026-07-28', new Map([[tool.name, tool]]));

  it('gives a request the version, the method and the name its method names', () => {
    assert.deepEqual(headers({ kind: 'request', method: 'tools/list', params: {} }), {
      'MCP-Protocol-Version': '2026-07-28',
      'Mcp-Method': 'tools/list',
    });
    assert.deepEqual(headers({ kind: 'request', method: 'prompts/get', params: { name: 'greet' } }), {
      'MCP-Protocol-Version': '2026-07-28',
      'Mcp-Method': 'prompts/get',
      'Mcp-Name': 'greet',
    });
    assert.deepEqual(headers({ kind: 'request', method: 'resources/read', params: { uri: 'file:///ö' } }), {
      'MCP-Protocol-Version': '2026-07-28',
      'Mcp-Method': 'resources/read',
      'Mcp-Name': `=?base64?${Buffer.from('file:///ö').toString('base64')}?=`,
    });
  });

  it("adds a tools/call's annotated arguments, and gives notifications nothing", () => {
    assert.deepEqual(
      headers({ kind: 'request', method: 'tools/call', params: { name: 'forecast', arguments: { region: 'eu', days: 3 } } }),
      {
        'MCP-Protocol-Version': '2026-07-28',
        'Mcp-Method': 'tools/call',
        'Mcp-Name': 'forecast',
        'Mcp-Param-Region': 'eu',
      },
    );
    assert.equal(headers({ kind: 'notification', method: 'notifications/cancelled', params: { requestId: 1 } }), undefined);
  });
});
