import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { EventEmitter, once } from 'node:events';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ToolListChangedNotificationSchema, ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { ServerHandle } from '../../src/core';
import { ChatGateway, removeStaleSockets, type GatewayAddress } from '../../src/core/gateway/sdkGateway';
import { RelayTransport } from '../../src/core/gateway/relaySession';
import { gatewayClient, relayClient, share, upstreamHandle, type Shared } from '../helpers/gateway';
import { ROOT, eventually } from '../helpers/servers';

const TOKEN = 'test-token-0123456789abcdef';
const SECRET = 'ghp_' + 'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8';
const textOf = (result: unknown): string =>
  ((result as { content: Array<{ type: string; text?: string }> }).content ?? []).map((c) => c.text ?? '').join('\n');

const KINDS = {
  socket: 'HTTP on a Unix domain socket',
  tcp: 'HTTP on 127.0.0.1',
  relay: 'stdio to the relay, on a Unix domain socket',
  'relay-tcp': 'stdio to the relay, on 127.0.0.1',
} as const;

for (const kind of Object.keys(KINDS) as Array<keyof typeof KINDS>) {
  const relay = kind === 'relay' || kind === 'relay-tcp';
  describe(`chat gateway, ${KINDS[kind]}`, function () {
    this.timeout(60_000);
    let handle: ServerHandle;
    let shared: Shared;
    let gateway: ChatGateway;
    const clients: Client[] = [];
    const route = ChatGateway.pathOf('up');
    const connectTo = async (serverId: string, token: string | undefined) => {
      const client = relay
        ? await relayClient(gateway.relayAddress, serverId, token)
        : await gatewayClient(gateway.address, ChatGateway.pathOf(serverId), token);
      clients.push(client);
      return client;
    };
    const connect = (token: string | undefined) => connectTo('up', token);

    // The relay is tested as shipped.
    if (relay) before(() => execFileSync(process.execPath, [path.join(ROOT, 'esbuild.js')], { cwd: ROOT }));

    beforeEach(async () => {
      handle = upstreamHandle();
      await handle.start();
      shared = share(handle);
      const dir = mkdtempSync(path.join(tmpdir(), 'gw-'));
      const onSocket = kind === 'socket' || kind === 'relay';
      gateway = await ChatGateway.start({
        token: TOKEN,
        socketPath: onSocket ? path.join(dir, 'g.sock') : undefined,
        relaySocketPath: onSocket ? path.join(dir, 'r.sock') : undefined,
        forwarderFor: (id) => (id === 'up' ? shared.forwarder : undefined),
      });
      assert.equal((relay ? gateway.relayAddress : gateway.address).kind, onSocket ? 'socket' : 'tcp');
    });
    afterEach(async () => {
      await Promise.all(clients.splice(0).map((c) => c.close().catch(() => undefined)));
      await gateway.close();
      await handle.dispose();
    });

    it('refuses a request without the token, or with a wrong one, with a JSON-RPC error and never 401/403', async () => {
      // The relay started without its token does not connect at all (VS Code shows its stderr and exit code).
      await assert.rejects(connect(undefined), relay ? /Connection closed/ : /no valid token/);
      await assert.rejects(connect('wrong-token'), /no valid token/);
      if (kind === 'tcp') {
        const port = (gateway.address as Extract<GatewayAddress, { kind: 'tcp' }>).port;
        const res = await fetch(`http://127.0.0.1:${port}${route}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: 'Bearer nope' },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: {} }),
        });
        assert.equal(res.status, 400);
        const body = (await res.json()) as { error: { code: number; message: string } };
        assert.equal(body.error.code, -32600, 'Invalid Request: -32001 is Request Timeout');
      }
      assert.equal(gateway.sessionCount(), 0);
      // The token opens only the routes of shared servers.
      await assert.rejects(connectTo('other', TOKEN), /not shared/);
    });

    // Over TCP only: fetch speaks to it as any HTTP client would (the socket's fetch is the helper's).
    if (kind === 'tcp')
      it('answers in JSON, streams events only for a request that asked for progress, refuses batches, and ends a session on DELETE', async () => {
        const port = (gateway.address as Extract<GatewayAddress, { kind: 'tcp' }>).port;
        const url = `http://127.0.0.1:${port}${route}`;
        const headers = {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          authorization: `Bearer ${TOKEN}`,
        };
        const post = (body: unknown, session?: string) =>
          fetch(url, {
            method: 'POST',
            headers: { ...headers, ...(session ? { 'mcp-session-id': session } : {}) },
            body: JSON.stringify(body),
          });
        const init = await post({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
        });
        assert.equal(init.status, 200);
        assert.match(init.headers.get('content-type') ?? '', /application\/json/);
        const session = init.headers.get('mcp-session-id')!;
        assert.ok(session);
        assert.equal((await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, session)).status, 202);

        const plain = await post(
          { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi' } } },
          session,
        );
        assert.match(plain.headers.get('content-type') ?? '', /application\/json/);
        assert.deepEqual(((await plain.json()) as { result: unknown }).result, { content: [{ type: 'text', text: 'hi' }] });

        const withProgress = await post(
          {
            jsonrpc: '2.0',
            id: 3,
            method: 'tools/call',
            params: { name: 'slow', arguments: { steps: 2, ms: 1 }, _meta: { progressToken: 'p' } },
          },
          session,
        );
        assert.match(withProgress.headers.get('content-type') ?? '', /text\/event-stream/);
        const events = (await withProgress.text()).split('\n\n').filter(Boolean);
        const messages = events.map((e) => JSON.parse(e.replace(/^event: message\ndata: /, '')) as { method?: string; id?: number });
        assert.ok(messages.filter((m) => m.method === 'notifications/progress').length >= 2, JSON.stringify(messages));
        assert.equal(messages.at(-1)?.id, 3, 'the answer ends the stream');

        // A cancelled call gets no answer, and its response ends instead of staying open.
        const long = post(
          { jsonrpc: '2.0', id: 6, method: 'tools/call', params: { name: 'slow', arguments: { steps: 100, ms: 50 } } },
          session,
        );
        await eventually(async () => (gateway.waitingIn(session) === 1 ? true : undefined));
        const cancel = await post({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 6, reason: 'test' } }, session);
        assert.equal(cancel.status, 202);
        const cancelled = await long;
        assert.equal(await cancelled.text(), '', 'no answer after the cancel');
        assert.equal(gateway.waitingIn(session), 0);

        const batch = await post([{ jsonrpc: '2.0', id: 4, method: 'tools/list' }], session);
        assert.equal(batch.status, 400);
        assert.equal(((await batch.json()) as { error: { code: number } }).error.code, -32600);

        const end = await fetch(url, { method: 'DELETE', headers: { ...headers, 'mcp-session-id': session } });
        assert.equal(end.status, 200);
        const after = await post({ jsonrpc: '2.0', id: 5, method: 'tools/list' }, session);
        assert.equal(after.status, 404);
        assert.equal(((await after.json()) as { error: { code: number } }).error.code, -32000, 'Connection Closed: the session is gone');
        assert.equal(gateway.sessionCount(), 0);
      });

    it("lists only the tools the person's policy offers, readOnlyHint only when annotations are trusted", async () => {
      const client = await connect(TOKEN);
      const names = (await client.listTools()).tools.map((t) => t.name);
      assert.ok(names.includes('echo') && names.includes('read_file'), names.join());
      assert.ok(!names.includes('remove'), 'the denied tool is listed');
      assert.ok(!names.includes('app_helper'), 'the app-only tool is listed');
      assert.equal((await client.listTools()).tools.find((t) => t.name === 'echo')?.annotations?.readOnlyHint, true);

      const untrusted = upstreamHandle({ trustAnnotations: false });
      await untrusted.start();
      try {
        const tools = await share(untrusted).forwarder.listTools();
        assert.equal(tools.find((t) => t.name === 'echo')?.annotations?.readOnlyHint, undefined);
      } finally {
        await untrusted.dispose();
      }
    });

    it("refuses once a call VS Code may not have confirmed: its list still says read-only after the person stopped trusting the server's annotations", async () => {
      const trusting = await connect(TOKEN);
      await trusting.listTools();
      const told = shared.forwarder.shared.toldReadOnly;
      assert.ok(told.has('echo'), 'VS Code was told echo is read-only');
      // The person turns trustAnnotations off: a new policy, the chat's session ends, and VS Code keeps its old list.
      const untrusted = upstreamHandle({ trustAnnotations: false });
      await untrusted.start();
      try {
        shared = share(untrusted, { toldReadOnly: told });
        await gateway.closeSessions('up');
        const client = await connect(TOKEN);
        const relist = new Promise<void>((resolve) => client.setNotificationHandler(ToolListChangedNotificationSchema, () => resolve()));
        const refused = await client.callTool({ name: 'echo', arguments: { text: 'unasked' } });
        assert.equal(refused.isError, true);
        assert.match(textOf(refused), /still says it is read-only, so VS Code may not have asked you/);
        await relist;
        const listed = (await client.listTools()).tools.find((t) => t.name === 'echo');
        assert.equal(listed?.annotations?.readOnlyHint, undefined);
        assert.equal(told.has('echo'), false, 'VS Code has the new list');
        assert.equal(textOf(await client.callTool({ name: 'echo', arguments: { text: 'asked' } })), 'asked');
        assert.deepEqual(
          shared.audit.filter((e) => e.name === 'echo').map((e) => [e.decision, e.outcome.kind]),
          [
            ['refused', 'not-sent'],
            ['allowed', 'ok'],
          ],
        );
      } finally {
        await untrusted.dispose();
      }
    });

    it('refuses a denied tool and a path outside the roots as isError results, audited with origin chat', async () => {
      const client = await connect(TOKEN);
      const denied = await client.callTool({ name: 'remove', arguments: {} });
      assert.equal(denied.isError, true);
      assert.match(textOf(denied), /MCP Host refused up › remove: .*tools\.allow \/ tools\.deny/);

      const fenced = await client.callTool({ name: 'read_file', arguments: { path: '/work/project/../../etc/passwd' } });
      assert.equal(fenced.isError, true);
      assert.match(textOf(fenced), /outside the roots/);
      const inside = await client.callTool({ name: 'read_file', arguments: { path: '/work/project/notes.txt' } });
      assert.equal(textOf(inside), 'contents of /work/project/notes.txt');

      const chat = shared.audit.filter((e) => e.origin === 'chat' && e.method === 'tools/call');
      assert.deepEqual(
        chat.map((e) => [e.name, e.decision, e.outcome.kind]),
        [
          ['remove', 'denied', 'not-sent'],
          ['read_file', 'fenced', 'not-sent'],
          ['read_file', 'allowed', 'ok'],
        ],
      );
      assert.equal(chat[1].fenced?.[0].pointer, '/path');
      assert.deepEqual(
        shared.calls.map((c) => [c.tool, c.outcome.kind, !!c.refused]),
        [
          ['remove', 'not-sent', true],
          ['read_file', 'not-sent', true],
          ['read_file', 'ok', false],
        ],
      );
    });

    it('forwards progress to the chat and the chat’s cancellation to the server', async () => {
      const client = await connect(TOKEN);
      // What the gateway sent, in the order it arrived: the SDK's client runs its progress handler a
      // microtask after the line while it settles a result at once, so a last progress that comes in
      // the same read as the result (a loaded machine, or the relay's pipe) never reaches `onprogress`.
      const wire: string[] = [];
      const transport = client.transport!;
      const deliver = transport.onmessage!;
      transport.onmessage = (message, extra) => {
        const m = message as { method?: string; params?: { progress?: number }; result?: unknown };
        if (m.method === 'notifications/progress') wire.push(`progress ${m.params?.progress}`);
        else if (m.result !== undefined) wire.push('result');
        deliver(message, extra);
      };
      const seen: number[] = [];
      const done = await client.callTool({ name: 'slow', arguments: { steps: 3, ms: 10 } }, undefined, {
        onprogress: (p) => void seen.push(p.progress),
      });
      transport.onmessage = deliver;
      assert.equal(textOf(done), 'done');
      assert.deepEqual(wire, ['progress 1', 'progress 2', 'progress 3', 'result']);
      assert.deepEqual(seen, [1, 2, 3].slice(0, seen.length), 'the progress handler saw them in order');

      const abort = new AbortController();
      const call = client.callTool({ name: 'slow', arguments: { steps: 500, ms: 10 } }, undefined, {
        signal: abort.signal,
        onprogress: () => abort.abort(),
      });
      await assert.rejects(call, /abort/i);
      // The server hears of it at its next step: its count says so.
      let count = '0';
      while (count === '0') count = textOf(await client.callTool({ name: 'cancelled_count', arguments: {} }));
      assert.equal(count, '1');
      const slow = shared.audit.filter((e) => e.name === 'slow').map((e) => e.outcome.kind);
      assert.deepEqual(slow, ['ok', 'cancelled']);
    });

    it('masks secrets and makes acting links plain text before the result reaches the chat', async () => {
      const client = await connect(TOKEN);
      const result = await client.callTool({ name: 'leak', arguments: {} });
      const wire = JSON.stringify(result);
      assert.ok(!wire.includes(SECRET), wire);
      assert.match(wire, /\[masked: /);
      const content = result.content as Array<{ type: string; uri?: string; text?: string }>;
      assert.ok(!content.some((c) => c.type === 'resource_link'), 'a command: link reached the chat');
      assert.match(content[1].text ?? '', /link removed by MCP Host/);
      assert.equal((result.structuredContent as { apiKey: string }).apiKey, '[masked: api-key]');
      // The rest of the text arrives as the server wrote it: text for the model, nothing the gateway renders.
      assert.match(content[0].text ?? '', /^\[run\]\(command:workbench\.action\.terminal\.new\)/);
    });

    it('forwards list_changed, resources, subscriptions, prompts and completion through the gate', async () => {
      const client = await connect(TOKEN);
      const changed = new Promise<void>((resolve) => client.setNotificationHandler(ToolListChangedNotificationSchema, () => resolve()));
      await client.callTool({ name: 'add_tool', arguments: {} });
      await changed;
      assert.ok((await client.listTools()).tools.some((t) => t.name === 'added_1'));

      assert.deepEqual(
        (await client.listResources()).resources.map((r) => r.uri),
        ['note://one'],
      );
      const note = await client.readResource({ uri: 'note://one' });
      assert.match((note.contents[0] as { text: string }).text, /^password=\[masked: [a-z-]+\]$/);
      await assert.rejects(client.readResource({ uri: 'file:///etc/passwd' }), /outside the roots/);
      const updated = new Promise<string>((resolve) =>
        client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => resolve(n.params.uri)),
      );
      await client.subscribeResource({ uri: 'note://one' });
      assert.equal(await updated, 'note://one');

      const prompt = await client.getPrompt({ name: 'greet', arguments: { name: 'Ada' } });
      assert.ok(!JSON.stringify(prompt).includes(SECRET));
      const completion = await client.complete({ ref: { type: 'ref/prompt', name: 'greet' }, argument: { name: 'name', value: 'A' } });
      assert.deepEqual(completion.completion.values, ['Ada', 'Alan']);
      // Completing a path lists a folder: outside the roots it is refused like a read would be.
      await assert.rejects(
        client.complete({ ref: { type: 'ref/prompt', name: 'greet' }, argument: { name: 'path', value: '/etc/pa' } }),
        /outside the roots/,
      );
      assert.deepEqual(
        shared.audit.filter((e) => e.method !== 'tools/call').map((e) => [e.method, e.decision]),
        [
          ['resources/read', 'allowed'],
          ['resources/read', 'fenced'],
          ['resources/subscribe', 'allowed'],
          ['prompts/get', 'allowed'],
          ['completion/complete', 'allowed'],
          ['completion/complete', 'fenced'],
        ],
      );
    });

    it('answers 256 calls in flight, each its own', async () => {
      const client = await connect(TOKEN);
      const results = await Promise.all(
        Array.from({ length: 256 }, (_, i) => client.callTool({ name: 'echo', arguments: { text: `n${i}` } })),
      );
      assert.deepEqual(
        results.map(textOf),
        Array.from({ length: 256 }, (_, i) => `n${i}`),
      );
      assert.equal(shared.audit.filter((e) => e.outcome.kind === 'ok').length, 256);
    });

    it('fails a call cut by an upstream restart clearly, and the next call waits for the restart', async () => {
      const client = await connect(TOKEN);
      let progressed!: () => void;
      const started = new Promise<void>((resolve) => (progressed = resolve));
      const call = client.callTool({ name: 'slow', arguments: { steps: 500, ms: 10 } }, undefined, { onprogress: () => progressed() });
      await started;
      const restarting = handle.restart();
      const cut = await call;
      assert.equal(cut.isError, true);
      assert.match(textOf(cut), /up › slow failed: up stopped during the call .*not retried/);
      // Asked while the server is still starting: it waits for it.
      const next = await client.callTool({ name: 'echo', arguments: { text: 'after' } });
      await restarting;
      assert.equal(textOf(next), 'after');

      await handle.stop();
      const stopped = await client.callTool({ name: 'echo', arguments: { text: 'x' } });
      assert.equal(stopped.isError, true);
      assert.match(textOf(stopped), /up is not running \(it is stopped\)/);
    });

    it('closes the chat’s sessions when sharing stops or the settings change', async () => {
      const client = await connect(TOKEN);
      assert.equal(gateway.sessionCount('up'), 1);
      await gateway.closeSessions('up');
      assert.equal(gateway.sessionCount('up'), 0);
      await assert.rejects(client.listTools());
    });

    if (relay)
      it('reads the relay’s lines as the stdio framing: a wrong first line is refused, a broken line skipped, a split message whole', async () => {
        const raw = async (hello: string) => {
          const target = ChatGateway.relayTarget(gateway.relayAddress);
          const tcp = /^127\.0\.0\.1:(\d+)$/.exec(target);
          const socket = tcp ? net.connect({ host: '127.0.0.1', port: Number(tcp[1]) }) : net.connect({ path: target });
          await once(socket, 'connect');
          const lines: Array<{ id?: number; result?: unknown; error?: { code: number; message: string } }> = [];
          let buffered = '';
          socket.on('data', (chunk: Buffer) => {
            buffered += chunk.toString('utf8');
            for (let end = buffered.indexOf('\n'); end !== -1; end = buffered.indexOf('\n')) {
              lines.push(JSON.parse(buffered.slice(0, end)));
              buffered = buffered.slice(end + 1);
            }
          });
          socket.write(hello);
          return { socket, lines };
        };
        // How many slow calls the upstream saw cancelled, asked on the raw connection (each time with an id of its own).
        let nextId = 100;
        const callCount = async (conn: Awaited<ReturnType<typeof raw>>): Promise<number> => {
          const id = nextId++;
          conn.socket.write(`${JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'cancelled_count' } })}\n`);
          const reply = await eventually(async () => conn.lines.find((l) => l.id === id));
          return Number(textOf(reply.result));
        };
        const initialize = JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
        });

        const wrong = await raw(`${JSON.stringify({ mcpHostRelay: 1, token: 'nope', server: 'up' })}\n${initialize}\n`);
        await once(wrong.socket, 'close');
        assert.equal(wrong.lines[0].error?.code, -32600);
        assert.match(wrong.lines[0].error?.message ?? '', /no valid token/);

        const right = await raw(`${JSON.stringify({ mcpHostRelay: 1, token: TOKEN, server: 'up' })}\n${initialize}\n`);
        await eventually(async () => right.lines.find((l) => l.id === 1));
        right.socket.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\nnot json\n[1,2]\n`);
        // One call in three writes, the cut inside a two-byte character.
        const call = Buffer.from(
          `${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'echo', arguments: { text: 'é, whole' } } })}\n`,
        );
        const cut = call.indexOf(Buffer.from('é')) + 1;
        right.socket.write(call.subarray(0, 10));
        right.socket.write(call.subarray(10, cut));
        right.socket.write(call.subarray(cut));
        const answer = await eventually(async () => right.lines.find((l) => l.id === 2));
        assert.equal(textOf(answer.result), 'é, whole');
        // A tools/call that is not one (a name that is no string, arguments that are no object, no params) is
        // refused as Invalid Params, and the session goes on.
        const malformed = [{ name: 7 }, { name: 'echo', arguments: ['x'] }, undefined];
        malformed.forEach((params, i) =>
          right.socket.write(`${JSON.stringify({ jsonrpc: '2.0', id: 30 + i, method: 'tools/call', params })}\n`),
        );
        for (const i of malformed.keys()) {
          const refused = await eventually(async () => right.lines.find((l) => l.id === 30 + i));
          assert.equal(refused.result, undefined, JSON.stringify(refused));
          assert.equal(refused.error?.code, -32602, JSON.stringify(refused));
          assert.match(refused.error?.message ?? '', /string "name"/);
        }
        // A call the chat cancels gets no answer, and the server is told.
        const before = await callCount(right);
        right.socket.write(
          `${JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'slow', arguments: { steps: 50, ms: 100 } } })}\n`,
        );
        await new Promise((r) => setTimeout(r, 150));
        right.socket.write(
          `${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 5, reason: 'test' } })}\n`,
        );
        assert.equal(await eventually(async () => ((await callCount(right)) > before ? before + 1 : undefined)), before + 1);
        assert.equal(
          right.lines.find((l) => l.id === 5),
          undefined,
          'a cancelled call is not answered',
        );
        right.socket.destroy();
        await eventually(async () => (gateway.sessionCount('up') === 0 ? true : undefined));
      });

    if (relay)
      it('ends the session when the relay goes, and the relay when its session ends', async () => {
        const client = await connect(TOKEN);
        assert.equal(gateway.sessionCount('up'), 1);
        await client.close();
        await eventually(async () => (gateway.sessionCount('up') === 0 ? true : undefined));

        const next = await connect(TOKEN);
        assert.ok((next.transport as { pid?: number | null }).pid, 'the relay runs');
        const exited = new Promise<void>((resolve) => (next.onclose = resolve));
        await gateway.closeSessions('up');
        await exited;
      });
  });
}

/** A socket stand-in for the relay transport: each 'data' event is one chunk, each write is kept as it came. */
function socketStandIn() {
  return Object.assign(new EventEmitter(), {
    written: [] as string[],
    ended: false,
    writable: true,
    write(text: string) {
      assert.ok(!this.ended, 'a write after the end');
      this.written.push(text);
      return true;
    },
    end() {
      this.ended = true;
      this.writable = false;
    },
    resume() {},
  });
}

describe('the relay transport’s framing', () => {
  /** Each `feed` is one 'data' event, so a cut lands exactly where the test puts it. */
  const open = async () => {
    const socket = socketStandIn();
    const transport = new RelayTransport(socket as unknown as net.Socket);
    const messages: unknown[] = [];
    const errors: string[] = [];
    transport.onmessage = (m) => messages.push(m);
    transport.onerror = (e) => errors.push(e.message);
    await transport.start();
    return { socket, transport, messages, errors, feed: (chunk: Buffer) => socket.emit('data', chunk) };
  };

  it('joins a message cut inside a character, and one spread over many chunks', async () => {
    const { messages, errors, feed } = await open();
    const line = Buffer.from(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { text: 'é€😀' } })}\n`);
    // Every cut: inside the two-, three- and four-byte characters included.
    for (let cut = 1; cut < line.length; cut++) {
      feed(line.subarray(0, cut));
      feed(line.subarray(cut));
    }
    // One byte at a time.
    for (let i = 0; i < line.length; i++) feed(line.subarray(i, i + 1));
    assert.deepEqual(errors, []);
    assert.equal(messages.length, line.length);
    for (const m of messages) assert.equal((m as { params: { text: string } }).params.text, 'é€😀');
  });

  it('delivers several messages of one chunk in order, skips blank and broken lines, and says why', async () => {
    const { messages, errors, feed } = await open();
    feed(
      Buffer.from(
        '{"jsonrpc":"2.0","id":1,"method":"a"}\n\n  \nnot json\n[1]\n{"id":2}\n{"jsonrpc":"2.0","id":3,"method":"b"}\n{"jsonrpc":"2.0",',
      ),
    );
    feed(Buffer.from('"id":4,"method":"c"}\r\n'));
    assert.deepEqual(
      messages.map((m) => (m as { id: number }).id),
      [1, 3, 4],
    );
    assert.deepEqual(errors, [
      'a line that is not JSON',
      'a line that is not one JSON-RPC 2.0 message',
      'a line that is not one JSON-RPC 2.0 message',
    ]);
  });

  it('ends the connection on a line longer than the limit instead of holding it, and sends nothing after', async () => {
    const { socket, transport, errors, feed } = await open();
    let closed = false;
    transport.onclose = () => (closed = true);
    const mb = Buffer.alloc(1024 * 1024, 'a');
    for (let i = 0; i < 17 && !closed; i++) feed(mb);
    assert.ok(closed);
    assert.ok(socket.ended);
    assert.match(errors[0], /more than 16777216 bytes/);
    await transport.send({ jsonrpc: '2.0', id: 1, result: {} });
    assert.deepEqual(socket.written, []);
  });
});

describe('the relay transport’s writes', () => {
  const open = async () => {
    const socket = socketStandIn();
    const transport = new RelayTransport(socket as unknown as net.Socket);
    await transport.start();
    return { socket, transport };
  };
  const answer = (id: number) => ({ jsonrpc: '2.0' as const, id, result: { n: id } });
  const ids = (written: string[]) =>
    written.map((w) =>
      w
        .trimEnd()
        .split('\n')
        .map((l) => (JSON.parse(l) as { id: number }).id),
    );

  it('sends the answers of one turn in one write, in the order they were sent, and a later turn’s in the next', async () => {
    const { socket, transport } = await open();
    const sent = [1, 2, 3].map((id) => transport.send(answer(id)));
    assert.deepEqual(socket.written, [], 'nothing is written before the turn ends');
    await Promise.all(sent);
    await transport.send(answer(4));
    assert.deepEqual(ids(socket.written), [[1, 2, 3], [4]]);
  });

  it('writes what was sent before the close, then ends the connection, and nothing after', async () => {
    const { socket, transport } = await open();
    const last = transport.send(answer(7));
    await transport.close();
    await last;
    await transport.send(answer(8));
    assert.deepEqual(ids(socket.written), [[7]]);
    assert.ok(socket.ended);
  });
});

describe('stale gateway sockets', () => {
  it('removes the socket files a crashed window left, and keeps a live window’s and files that are not the gateway’s', async function () {
    if (process.platform === 'win32') this.skip();
    const dir = mkdtempSync(path.join(tmpdir(), 'gw-stale-'));
    const at = (name: string) => path.join(dir, name);
    // A listener killed before it could close leaves its file, as a crashed extension host does.
    const leaveBehind = (file: string) =>
      execFileSync(process.execPath, [
        '-e',
        `require('net').createServer().listen(${JSON.stringify(file)}, () => process.kill(process.pid, 'SIGKILL'))`,
      ]);
    for (const name of ['gw-0a1b2c3d4e5f.sock', 'gw-0a1b2c3d4e5f-relay.sock', 'other.sock']) {
      try {
        leaveBehind(at(name));
      } catch {
        // Killed, as meant.
      }
    }
    const live = net.createServer();
    await new Promise<void>((resolve) => live.listen(at('gw-ffffffffffff.sock'), resolve));
    try {
      assert.equal(await removeStaleSockets(dir), 2);
      assert.deepEqual(readdirSync(dir).sort(), ['gw-ffffffffffff.sock', 'other.sock']);
      assert.equal(await removeStaleSockets(dir), 0, 'the live one is never taken');
    } finally {
      await new Promise((resolve) => live.close(resolve));
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
