import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import type { ServerHandle } from '../../src/core';
import { ChatGateway, type GatewayAddress } from '../../src/core/gateway/sdkGateway';
import { share, upstreamHandle } from '../helpers/gateway';

// Every exit from a shared server to VS Code's chat, read as bytes on the gateway's wire: a secret the
// leaky fixture puts anywhere in a result, a list, an error or a progress message must not be there.
const LEAKY = path.resolve(__dirname, '..', 'fixtures', 'leaky-content-server.mjs');
const SECRET = 'ghp_' + 'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8';
const TOKEN = 'test-token-0123456789abcdef';

type Message = {
  id?: number;
  method?: string;
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
  params?: unknown;
};

/** The base64 blobs of a wire text, decoded: a secret must not hide in them either (bar the image's bytes, kept by design). */
function decodedBlobs(wire: string): string[] {
  return [...wire.matchAll(/"(?:blob|data)":"([A-Za-z0-9+/=]*)"/g)].map((m) => Buffer.from(m[1], 'base64').toString('utf8'));
}

describe('masking on every way to the chat (a real server behind the gateway, bytes on the wire)', function () {
  this.timeout(30_000);
  let handle: ServerHandle;
  let gateway: ChatGateway;
  let session = '';
  let nextId = 1;
  let url = '';

  const post = async (body: unknown): Promise<{ messages: Message[]; wire: string }> => {
    const res = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        authorization: `Bearer ${TOKEN}`,
        ...(session ? { 'mcp-session-id': session } : {}),
      },
      body: JSON.stringify(body),
    });
    session ||= res.headers.get('mcp-session-id') ?? '';
    const wire = await res.text();
    if (!wire) return { messages: [], wire };
    const messages = (res.headers.get('content-type') ?? '').includes('text/event-stream')
      ? wire
          .split('\n\n')
          .filter(Boolean)
          .map((e) => JSON.parse(e.replace(/^event: message\ndata: /, '')) as Message)
      : [JSON.parse(wire) as Message];
    return { messages, wire };
  };
  const request = async (method: string, params: unknown = {}) => {
    const id = nextId++;
    const { messages, wire } = await post({ jsonrpc: '2.0', id, method, params });
    return { answer: messages.find((m) => m.id === id)!, messages, wire };
  };
  const noSecret = (wire: string): void => {
    assert.ok(!wire.includes(SECRET.slice(4, 20)) && !wire.includes(SECRET.slice(20)), `a part of the secret reached the chat: ${wire}`);
    for (const text of decodedBlobs(wire))
      if (!text.startsWith('png bytes') && text !== 'not really a png') assert.ok(!text.includes(SECRET.slice(20)), text);
  };

  before(async () => {
    handle = upstreamHandle({ args: [LEAKY], env: { MCP_HOST_LEAK: SECRET } });
    await handle.start();
    const shared = share(handle);
    gateway = await ChatGateway.start({ token: TOKEN, forwarderFor: (id) => (id === 'up' ? shared.forwarder : undefined) });
    url = `http://127.0.0.1:${(gateway.address as Extract<GatewayAddress, { kind: 'tcp' }>).port}${ChatGateway.pathOf('up')}`;
    const init = await request('initialize', {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'raw', version: '1' },
    });
    assert.ok(init.answer.result, init.wire);
    await post({ jsonrpc: '2.0', method: 'notifications/initialized' });
  });
  after(async () => {
    await gateway?.close();
    await handle?.dispose();
  });

  it('masks a secret split across two text blocks where it lies, keeping both blocks', async () => {
    const { answer, wire } = await request('tools/call', { name: 'split', arguments: {} });
    noSecret(wire);
    assert.deepEqual(answer.result?.content, [
      { type: 'text', text: 'the key is [masked: github-token]' },
      { type: 'text', text: ' and more' },
    ]);
  });

  it('masks _meta, fields no revision defines, resource URIs, text-typed blobs and block metadata of a tool result', async () => {
    const { answer, wire } = await request('tools/call', { name: 'extra', arguments: {} });
    noSecret(wire);
    const result = answer.result as {
      content: Array<Record<string, unknown>>;
      _meta: Record<string, unknown>;
      debug: Record<string, unknown>;
    };
    assert.equal(result.debug.accessToken, '[masked: token]');
    assert.match(String(result._meta.trace), /^Authorization: Bearer \[masked: /);
    assert.ok(Object.keys(result._meta).includes('[masked: github-token]'));
    assert.equal(result.content[1].uri, 'https://ann:[masked: github-token]@files.example/report.txt');
    const embedded = result.content[2].resource as { blob: string };
    assert.equal(Buffer.from(embedded.blob, 'base64').toString('utf8'), 'line 1\ntoken: [masked: github-token]\n');
    // An image's bytes are not text: kept as they came.
    assert.equal(Buffer.from(String(result.content[3].data), 'base64').toString('utf8'), 'not really a png');
  });

  it('masks the progress messages of a call', async () => {
    const { messages, wire } = await request('tools/call', { name: 'split', arguments: {}, _meta: { progressToken: 'p' } });
    assert.ok(
      messages.some((m) => m.method === 'notifications/progress'),
      wire,
    );
    noSecret(wire);
  });

  it('masks a resource read: blobs of a text type, a secret split across contents, URIs and _meta', async () => {
    const { answer, wire } = await request('resources/read', { uri: 'leak://one' });
    noSecret(wire);
    const contents = (answer.result as { contents: Array<{ uri: string; text?: string; blob?: string }> }).contents;
    assert.equal(Buffer.from(contents[0].blob!, 'base64').toString('utf8'), '{"clientSecret":[masked: secret],"n":1}');
    assert.deepEqual(
      contents.slice(1, 3).map((c) => c.text),
      ['first [masked: github-token]', ' second'],
    );
  });

  it('masks the error of a failed resources/read, prompts/get and completion/complete', async () => {
    for (const [method, params] of [
      ['resources/read', { uri: 'leak://fail' }],
      ['prompts/get', { name: 'fails' }],
      ['completion/complete', { ref: { type: 'ref/prompt', name: 'leaky' }, argument: { name: 'x', value: 'y' } }],
    ] as const) {
      const { answer, wire } = await request(method, params);
      assert.ok(answer.error, wire);
      assert.match(answer.error.message, /\[masked: github-token\]/, `${method}: ${wire}`);
      noSecret(wire);
    }
  });

  it('masks a prompt: its description, _meta, and a secret split across two messages', async () => {
    const { answer, wire } = await request('prompts/get', { name: 'leaky', arguments: {} });
    noSecret(wire);
    const result = answer.result as { messages: Array<{ content: { text: string } }>; _meta: Record<string, unknown> };
    assert.deepEqual(
      result.messages.map((m) => m.content.text),
      ['part [masked: github-token]', ' end'],
    );
    assert.equal(result._meta.secretKey, '[masked: secret]');
  });

  it('masks why a server is not running (its initialize error echoed its command line)', async () => {
    const hostile = path.resolve(__dirname, '..', 'fixtures', 'hostile-content-server.mjs');
    const failing = upstreamHandle({ args: [hostile, '--fail-initialize', '--token', SECRET] });
    await failing.start().catch(() => undefined);
    try {
      const forwarder = share(failing).forwarder;
      const result = await forwarder.callTool('hostile', {}, { signal: new AbortController().signal });
      assert.equal(result.isError, true);
      const wire = JSON.stringify(result);
      assert.match(wire, /not running/);
      noSecret(wire);
      await assert.rejects(forwarder.readResource('hostile://docs/x.svg', { signal: new AbortController().signal }), (e: Error) => {
        assert.match(e.message, /not running/);
        noSecret(e.message);
        return true;
      });
    } finally {
      await failing.dispose();
    }
  });

  it('masks the lists the chat reads: tools, resources, templates and prompts, keeping the names it calls', async () => {
    for (const method of ['tools/list', 'resources/list', 'resources/templates/list', 'prompts/list']) {
      const { answer, wire } = await request(method);
      assert.ok(answer.result, wire);
      noSecret(wire);
    }
    const tools = (await request('tools/list')).answer.result as { tools: Array<{ name: string }> };
    assert.deepEqual(
      tools.tools.map((t) => t.name),
      ['split', 'extra'],
    );
  });
});
