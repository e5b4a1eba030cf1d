import { strict as assert } from 'node:assert';
import {
  HttpTransport,
  LISTEN_RETRY_FIRST_MS,
  ServerHandle,
  StdioTransport,
  listenFilter,
  parseServerDefinitions,
  refusedParts,
  type McpClient,
  type RequestId,
  type ServerDefinition,
  type TextContent,
  type TraceEvent,
  type Transport,
} from '../../src/core';
import { startFixture, type Fixture } from '../helpers/httpServers';
import { V2_FIXTURE, closeAll, connect, connectTransport, eventually, nextEvent, v2StdioServer, type TestClient } from '../helpers/servers';

const text = (result: { content: unknown[] }) => (result.content[0] as TextContent).text;
const LISTS = { toolsListChanged: true, promptsListChanged: true, resourcesListChanged: true };

/** The acknowledged listen, once it is one other than `not` (and, if given, carries these resources). */
function acknowledgedListen(client: McpClient, options: { not?: RequestId; resources?: string[] } = {}) {
  return eventually(async () => {
    const l = client.listening;
    if (!l || l.id === options.not) return undefined;
    if (options.resources && JSON.stringify(l.acknowledged.resourceSubscriptions ?? []) !== JSON.stringify(options.resources))
      return undefined;
    return l;
  });
}

describe('subscriptions/listen (2026-07-28)', function () {
  this.timeout(30_000);
  afterEach(closeAll);

  describe('what a listen asks for', () => {
    it('asks only for what the capabilities offer, resources only with resources.subscribe', () => {
      assert.equal(listenFilter({}, ['a://x']), undefined);
      assert.equal(listenFilter({ tools: {}, resources: {} }, ['a://x']), undefined);
      assert.deepEqual(listenFilter({ tools: { listChanged: true }, resources: { listChanged: true } }, ['a://x']), {
        toolsListChanged: true,
        resourcesListChanged: true,
      });
      assert.deepEqual(listenFilter({ resources: { subscribe: true } }, ['b://y', 'a://x', 'b://y']), {
        resourceSubscriptions: ['a://x', 'b://y'],
      });
    });

    it('names what the server refused', () => {
      assert.deepEqual(
        refusedParts(
          { toolsListChanged: true, resourceSubscriptions: ['a://x', 'b://y'] },
          { toolsListChanged: true, resourceSubscriptions: ['b://y'] },
        ),
        ['a://x'],
      );
      assert.deepEqual(refusedParts({ promptsListChanged: true }, undefined), ['promptsListChanged']);
    });
  });

  type Setup = { name: string; connect(options?: { requestTimeoutMs?: number }): Promise<TestClient<Transport>>; fixture?(): Fixture };
  const fixtures: Fixture[] = [];
  afterEach(async () => {
    await Promise.all(fixtures.splice(0).map((f) => f.stop()));
  });
  const setups: Setup[] = [
    { name: 'stdio', connect: (options = {}) => connect(v2StdioServer(), { protocol: 'auto', probeTimeoutMs: 3000, ...options }) },
    {
      name: 'HTTP',
      connect: async (options = {}) => {
        const f = await startFixture('http-modern', V2_FIXTURE);
        fixtures.push(f);
        return connectTransport<Transport>(new HttpTransport({ url: f.url }), { protocol: 'auto', ...options });
      },
      fixture: () => fixtures[fixtures.length - 1],
    },
  ];

  for (const setup of setups) {
    describe(`over ${setup.name}`, () => {
      it('opens one listen for the list changes the server offers, and a tools list change reaches onToolsListChanged', async () => {
        const t = await setup.connect();
        const listen = await acknowledgedListen(t.client);
        assert.deepEqual(listen.acknowledged, LISTS);
        const changed = nextEvent(t.client.onToolsListChanged);
        assert.equal(text((await t.client.callTool('add-tool')).result), 'added-1');
        await changed;
        assert.ok((await t.client.listTools()).some((tool) => tool.name === 'added-1'));
      });

      it('replaces the listen when the subscribed resources change, and a subscribed resource update reaches onResourceUpdated', async () => {
        const t = await setup.connect();
        const trace: TraceEvent[] = [];
        t.client.onTrace((e) => trace.push(e));
        const first = await acknowledgedListen(t.client);
        t.client.setListenedResources(['fixture://counter']);
        const second = await acknowledgedListen(t.client, { not: first.id, resources: ['fixture://counter'] });
        assert.deepEqual(second.acknowledged, { ...LISTS, resourceSubscriptions: ['fixture://counter'] });
        // The old listen ends once the new one stands: notifications/cancelled on stdio, its POST closed over HTTP.
        const f = setup.fixture?.();
        if (f) {
          await eventually(async () =>
            (await f.requests()).some((r) => r.method === 'CLOSED' && r.body?.method === 'subscriptions/listen' && r.body.id === first.id)
              ? true
              : undefined,
          );
        } else {
          await eventually(async () =>
            trace.some(
              (e) =>
                e.direction === 'out' &&
                (e.message as { method?: string }).method === 'notifications/cancelled' &&
                (e.message as { params?: { requestId?: unknown } }).params?.requestId === first.id,
            )
              ? true
              : undefined,
          );
        }
        const updated = nextEvent(t.client.onResourceUpdated);
        await t.client.callTool('bump');
        assert.equal((await updated).uri, 'fixture://counter');
        assert.equal(((await t.client.readResource('fixture://counter')).contents[0] as { text?: string }).text, 'touched 1 times');
      });

      it('drops a notification whose subscription id is not one of its listens', async () => {
        const t = await setup.connect();
        await acknowledgedListen(t.client);
        let changes = 0;
        t.client.onToolsListChanged(() => changes++);
        await t.client.callTool('foreign');
        // The real change comes after the foreign one on the same stream: once it is here, the foreign one was seen too.
        const real = nextEvent(t.client.onToolsListChanged);
        await t.client.callTool('add-tool');
        await real;
        assert.equal(changes, 1);
        await t.waitForLog((l) => /dropped a notification of subscription "not-yours", which is not ours/.test(l.message));
      });

      const endings = setup.name === 'HTTP' ? (['result', 'cancelled', 'cut'] as const) : (['result', 'cancelled'] as const);
      for (const how of endings) {
        it(`listens again after the server ends the listen (${how})`, async () => {
          const t = await setup.connect();
          const first = await acknowledgedListen(t.client);
          await t.client.callTool('end-listen', { id: first.id, how });
          const again = await acknowledgedListen(t.client, { not: first.id });
          assert.deepEqual(again.acknowledged, LISTS);
          // A cut stream is sent again at once with a new id (stateless HTTP's rule for a lost reply); an ended listen after a backoff.
          const reopenedLog =
            how === 'cut'
              ? /ended before the answer.*sending subscriptions\/listen again/
              : new RegExp(`subscriptions/listen ${first.id} ended .*listening again in \\d+ ms`);
          assert.ok(
            t.logs.some((l) => reopenedLog.test(l.message)),
            t.logs.map((l) => l.message).join('\n'),
          );
          const changed = nextEvent(t.client.onToolsListChanged);
          await t.client.callTool('add-tool');
          await changed;
          // The ended listen leaves nothing behind that looks like a fault (over HTTP its stream ends after the server's word).
          assert.deepEqual(
            t.logs.filter((l) => l.level === 'warning' || l.level === 'error').map((l) => l.message),
            [],
          );
        });
      }

      if (setup.name === 'stdio') {
        it('waits longer each time a listen ends soon after it opened: a backoff, never a tight loop', async () => {
          const t = await setup.connect();
          let listen = await acknowledgedListen(t.client);
          for (let i = 0; i < 3; i++) {
            await t.client.callTool('end-listen', { id: listen.id, how: 'cancelled' });
            listen = await acknowledgedListen(t.client, { not: listen.id });
          }
          const delays = t.logs
            .map((l) => /^subscriptions\/listen .* ended .*listening again in (\d+) ms$/.exec(l.message)?.[1])
            .filter((d) => d !== undefined);
          assert.deepEqual(
            delays.map(Number),
            [1, 2, 4].map((k) => k * LISTEN_RETRY_FIRST_MS),
          );
        });
      }

      it('reads again what the listen covers once it stands after a gap: a change during the gap is not lost', async () => {
        const t = await setup.connect();
        t.client.setListenedResources(['fixture://counter']);
        const first = await acknowledgedListen(t.client, { resources: ['fixture://counter'] });
        const before = t.logs.length;
        let toolChanges = 0;
        const updates: string[] = [];
        t.client.onToolsListChanged(() => toolChanges++);
        t.client.onResourceUpdated((p) => updates.push(p.uri));
        await t.client.callTool('end-listen', { id: first.id, how: 'cancelled' });
        await acknowledgedListen(t.client, { not: first.id, resources: ['fixture://counter'] });
        await eventually(async () => (toolChanges === 1 && updates.length === 1 ? true : undefined));
        assert.deepEqual(updates, ['fixture://counter']);
        assert.ok(t.logs.slice(before).some((l) => /listening again after a gap/.test(l.message)));
      });

      it('keeps the listen open past the request timeout', async () => {
        const t = await setup.connect({ requestTimeoutMs: 500 });
        const first = await acknowledgedListen(t.client);
        // A request sent after the listen, under the same timeout, times out: one deadline timer
        // watches both, so a deadline the listen had (earlier) would have expired first.
        await assert.rejects(t.client.callTool('wait'), /timed out/i);
        const changed = nextEvent(t.client.onToolsListChanged);
        await t.client.callTool('add-tool');
        await changed;
        assert.equal(t.client.listening?.id, first.id, 'the listen that was open before the timeout is the one open now');
      });
    });
  }

  it('does not ask again a server that does not know subscriptions/listen (-32601)', async () => {
    const f = await startFixture('http-no-listen', V2_FIXTURE);
    fixtures.push(f);
    const t = await connectTransport<Transport>(new HttpTransport({ url: f.url }), { protocol: 'auto' });
    await t.waitForLog((l) => /the server does not offer subscriptions\/listen/.test(l.message));
    // A retry is scheduled only together with its "listening again in N ms" line: there is none.
    assert.ok(!t.logs.some((l) => /listening again in/.test(l.message)), 'a retry of subscriptions/listen was scheduled');
    // A change of resources would open a listen if anything did. The update runs on a timer of 0 ms
    // set by setListenedResources, so a timer of 0 ms set after it fires after it (timers of one
    // delay run in order); whatever it sent goes out before the tools/list sent after that.
    const sent: string[] = [];
    t.client.onTrace((e) => {
      const method = (e.message as { method?: string }).method;
      if (e.direction === 'out' && method) sent.push(method);
    });
    t.client.setListenedResources(['fixture://counter']);
    await new Promise((r) => setTimeout(r, 0));
    await t.client.listTools();
    assert.deepEqual(sent, ['tools/list']);
    assert.equal(t.client.listening, undefined);
    assert.equal((await f.requests()).filter((r) => r.body?.method === 'subscriptions/listen').length, 1);
  });

  it('keeps at most one listen that was never acknowledged: a newer one replaces it at once', async () => {
    const f = await startFixture('http-no-ack', V2_FIXTURE);
    fixtures.push(f);
    const t = await connectTransport<Transport>(new HttpTransport({ url: f.url }), { protocol: 'auto' });
    const listens = async () => (await f.requests()).filter((r) => r.method === 'POST' && r.body?.method === 'subscriptions/listen');
    await eventually(async () => ((await listens()).length === 1 ? true : undefined));
    for (const [i, uri] of ['fixture://counter', 'fixture://hello', 'fixture://guarded'].entries()) {
      t.client.setListenedResources([uri]);
      await eventually(async () => ((await listens()).length === i + 2 ? true : undefined));
    }
    const sent = (await listens()).map((r) => r.body!.id);
    const closed = async () =>
      (await f.requests()).filter((r) => r.method === 'CLOSED' && r.body?.method === 'subscriptions/listen').map((r) => r.body!.id);
    await eventually(async () => ((await closed()).length === 3 ? true : undefined));
    assert.deepEqual((await closed()).sort(), sent.slice(0, 3).sort());
    assert.equal(t.client.listening, undefined);
  });

  describe('ServerHandle', () => {
    it('carries subscribed resources on the listen, refreshes its lists on a change, and listens again after a restart', async () => {
      const params = v2StdioServer();
      const def = parseServerDefinitions({ v2: { command: params.command, args: params.args } }, { scope: 'user' }).definitions[0];
      const handle = new ServerHandle(def, {
        prepare: async (d: ServerDefinition) => d,
        createTransport: (d) =>
          new StdioTransport({ command: (d as { command: string }).command, args: (d as { args: string[] }).args, shutdownGraceMs: 500 }),
        handlers: () => ({}),
      });
      try {
        // A 2026-07-28 server gets the URI on the listen; no resources/subscribe is sent.
        const subscription = await handle.subscribeResource('fixture://counter', async () => assert.fail('resources/subscribe sent'));
        await handle.start();
        assert.equal(handle.client?.era, 'modern');
        for (let round = 1; round <= 2; round++) {
          const client = handle.rawClient!;
          await acknowledgedListen(client, { resources: ['fixture://counter'] });
          const updated = nextEvent(handle.onResourceUpdated);
          await client.callTool('bump');
          assert.equal(await updated, 'fixture://counter');
          // A list change reaches the handle's lists, which the tree shows.
          const toolsChanged = nextEvent(handle.onDidChangeLists, 5000, (kind) => kind === 'tools');
          const added = text((await client.callTool('add-tool')).result);
          await toolsChanged;
          assert.ok(handle.tools.some((tool) => tool.name === added));
          if (round === 1) await handle.restart();
        }
        subscription.dispose();
        await acknowledgedListen(handle.rawClient!, { resources: [] });
      } finally {
        await handle.dispose();
      }
    });
  });
});
