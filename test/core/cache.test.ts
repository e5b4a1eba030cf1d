import { strict as assert } from 'node:assert';
import {
  ResultCache,
  ServerHandle,
  StdioTransport,
  cacheLifetimeMs,
  parseServerDefinitions,
  type ClientHandlers,
  type ElicitResult,
  type McpClientOptions,
  type ServerDefinition,
  type StdioServerParams,
  type TextResourceContents,
  type TraceEvent,
} from '../../src/core';
import { V2_FIXTURE, closeAll, connect, eventually, rawServer } from '../helpers/servers';

type WireMessage = { id?: unknown; method?: string; params?: Record<string, unknown> };

/** The v2 fixture on stdio; `ttlMs` given, its list and read results carry that caching hint. */
const v2Server = (ttlMs?: number): StdioServerParams => ({
  command: process.execPath,
  args: [V2_FIXTURE, 'stdio', ...(ttlMs === undefined ? [] : [`--ttl=${ttlMs}`])],
});

/** A clock the test moves: a TTL passes without waiting for it. */
function testClock() {
  let now = 1_000_000;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

function wire(trace: TraceEvent[]) {
  const out = () => trace.filter((e) => e.direction === 'out').map((e) => e.message as WireMessage);
  return { count: (method: string) => out().filter((m) => m.method === method).length };
}

async function connectTraced(params: StdioServerParams, options: McpClientOptions) {
  const t = await connect(params, options);
  const trace: TraceEvent[] = [];
  t.client.onTrace((e) => trace.push(e));
  return { ...t, ...wire(trace) };
}

const readText = (result: { contents: unknown[] }) => (result.contents[0] as TextResourceContents).text;

describe('2026-07-28 caching hints (ttlMs, cacheScope)', function () {
  this.timeout(30_000);
  afterEach(closeAll);

  describe('against the v2 fixture on stdio', () => {
    it('answers a list again from the cache within its ttlMs, and asks the server after it', async () => {
      const clock = testClock();
      const t = await connectTraced(v2Server(60_000), { protocol: 'auto', probeTimeoutMs: 3000, cache: { now: clock.now } });
      assert.equal(t.client.era, 'modern');
      const first = await t.client.listTools();
      const again = await t.client.listTools();
      assert.deepEqual(again, first);
      await t.client.listPrompts();
      await t.client.listPrompts();
      await t.client.listResources();
      await t.client.listResources();
      await t.client.listResourceTemplates();
      await t.client.listResourceTemplates();
      for (const method of ['tools/list', 'prompts/list', 'resources/list', 'resources/templates/list'])
        assert.equal(t.count(method), 1, method);
      clock.advance(59_999);
      await t.client.listTools();
      assert.equal(t.count('tools/list'), 1, 'still fresh 1 ms before the end');
      clock.advance(1);
      await t.client.listTools();
      assert.equal(t.count('tools/list'), 2, 'asked again once the ttl passed');
      await t.client.listTools();
      assert.equal(t.count('tools/list'), 2, 'the new answer is cached in turn');
    });

    it('serves a resource read from the cache, and `fresh` goes to the server and replaces it', async () => {
      const t = await connectTraced(v2Server(60_000), { protocol: 'auto', probeTimeoutMs: 3000 });
      assert.equal(readText(await t.client.readResource('fixture://cached')), 'read 1');
      assert.equal(readText(await t.client.readResource('fixture://cached')), 'read 1');
      assert.equal(t.count('resources/read'), 1);
      assert.equal(readText(await t.client.readResource('fixture://cached', { fresh: true })), 'read 2');
      assert.equal(readText(await t.client.readResource('fixture://cached')), 'read 2');
      assert.equal(t.count('resources/read'), 2);
      await t.client.readResource('fixture://hello');
      assert.equal(t.count('resources/read'), 3, 'another URI is another entry');
    });

    it('forgets a list on its list_changed, and a read on resources/updated of that URI', async () => {
      const t = await connectTraced(v2Server(60_000), { protocol: 'auto', probeTimeoutMs: 3000 });
      // The client's own subscriptions/listen carries the list changes and the resource's updates.
      t.client.setListenedResources(['fixture://cached']);
      await eventually(async () =>
        t.client.listening?.acknowledged.resourceSubscriptions?.includes('fixture://cached') ? true : undefined,
      );
      const before = await t.client.listTools();
      assert.equal(readText(await t.client.readResource('fixture://cached')), 'read 1');
      await t.client.readResource('fixture://hello');
      const changed = new Promise<void>((resolve) => t.client.onToolsListChanged(() => resolve()));
      await t.client.callTool('grow', { name: 'grown' });
      await changed;
      const after = await t.client.listTools();
      assert.equal(t.count('tools/list'), 2);
      assert.ok(!before.some((tool) => tool.name === 'grown'));
      assert.ok(after.some((tool) => tool.name === 'grown'));
      const updated = new Promise<void>((resolve) => t.client.onResourceUpdated(() => resolve()));
      await t.client.callTool('touch', {});
      await updated;
      assert.equal(readText(await t.client.readResource('fixture://cached')), 'read 2');
      await t.client.readResource('fixture://hello');
      assert.equal(t.count('resources/read'), 3, 'fixture://hello stayed cached');
    });

    it('never serves a multi-round-trip read from the cache, nor keeps its answer', async () => {
      const asked: string[] = [];
      const handlers: ClientHandlers = {
        elicit: async (params): Promise<ElicitResult> => {
          asked.push(params.message);
          return { action: 'accept', content: { sure: true } };
        },
      };
      const t = await connectTraced(v2Server(60_000), { protocol: 'auto', probeTimeoutMs: 3000, handlers });
      const first = await t.client.readResource('fixture://guarded');
      assert.ok(cacheLifetimeMs(first) > 0, `the answer itself says it may be cached: ${JSON.stringify(first)}`);
      const second = await t.client.readResource('fixture://guarded');
      assert.equal(readText(second), 'guarded accept asked');
      assert.deepEqual(asked, ['Sure?', 'Sure?']);
      assert.equal(t.count('resources/read'), 4, 'two rounds each time');
    });

    it('keeps nothing the server gives ttlMs 0', async () => {
      const t = await connectTraced(v2Server(), { protocol: 'auto', probeTimeoutMs: 3000 });
      const tools = (await t.client.listTools()).length;
      assert.ok(tools > 0);
      await t.client.listTools();
      await t.client.readResource('fixture://cached');
      assert.equal(readText(await t.client.readResource('fixture://cached')), 'read 2');
      assert.equal(t.count('tools/list'), 2);
    });

    it('never caches in the initialize era, even when the server sends ttlMs', async () => {
      const t = await connectTraced(rawServer('cache-hints'), { protocol: 'auto', probeTimeoutMs: 3000 });
      assert.equal(t.client.era, 'legacy');
      await t.client.listTools();
      await t.client.listTools();
      assert.equal(t.count('tools/list'), 2);
    });

    it('can be turned off', async () => {
      const t = await connectTraced(v2Server(60_000), { protocol: 'auto', probeTimeoutMs: 3000, cache: false });
      await t.client.listTools();
      await t.client.listTools();
      assert.equal(t.count('tools/list'), 2);
    });
  });

  describe('a server handle', () => {
    const handles: ServerHandle[] = [];
    afterEach(async () => {
      await Promise.all(handles.splice(0).map((h) => h.dispose()));
    });

    it('refreshes a list from the cache, unless the person asked (fresh), and a restart starts with an empty cache', async () => {
      const params = v2Server(60_000);
      const def = parseServerDefinitions({ cached: { command: params.command, args: params.args } }, { scope: 'user' }).definitions[0];
      const handle = new ServerHandle(def, {
        prepare: async (d: ServerDefinition) => d,
        createTransport: () => new StdioTransport({ ...params, shutdownGraceMs: 500 }),
        handlers: () => ({}),
      });
      handles.push(handle);
      const trace: TraceEvent[] = [];
      handle.onTrace((e) => trace.push(e));
      const { count } = wire(trace);
      await handle.start();
      assert.equal(handle.client?.era, 'modern');
      assert.equal(count('tools/list'), 1);
      await handle.refresh('tools');
      assert.equal(count('tools/list'), 1, 'a refresh within the ttl needs no request');
      await handle.refresh('tools', { fresh: true });
      assert.equal(count('tools/list'), 2, "the person's Refresh asks the server");
      await handle.restart();
      assert.equal(count('tools/list'), 3, 'a new connection asks again');
    });
  });

  describe('the cache itself', () => {
    const ask = (cache: ResultCache, method: string, params: unknown, result: unknown) => cache.store(cache.ticket(method, params), result);

    it('reads ttlMs as the spec says: missing, negative, zero or not a number mean not at all', () => {
      for (const result of [{}, { ttlMs: -5 }, { ttlMs: 0 }, { ttlMs: '60000' }, { ttlMs: Number.NaN }, null])
        assert.equal(cacheLifetimeMs(result), 0, JSON.stringify(result));
      assert.equal(cacheLifetimeMs({ ttlMs: 5 }), 5);
      const cache = new ResultCache();
      ask(cache, 'tools/list', {}, { tools: [] });
      ask(cache, 'prompts/list', {}, { prompts: [], ttlMs: -1 });
      assert.equal(cache.size, 0);
    });

    it('keys by method and params without _meta, so each page is its own entry', () => {
      const cache = new ResultCache();
      ask(cache, 'tools/list', { _meta: { a: 1 } }, { tools: ['page 1'], nextCursor: 'c2', ttlMs: 100 });
      ask(cache, 'tools/list', { cursor: 'c2' }, { tools: ['page 2'], ttlMs: 100 });
      assert.deepEqual((cache.get('tools/list', { _meta: { b: 2 } }) as { tools: string[] }).tools, ['page 1']);
      assert.deepEqual((cache.get('tools/list', { cursor: 'c2' }) as { tools: string[] }).tools, ['page 2']);
      assert.equal(cache.get('tools/list', { cursor: 'c3' }), undefined);
      assert.equal(cache.get('prompts/list', {}), undefined);
    });

    it('drops an answer that a list_changed overtook while it was on the way', () => {
      const cache = new ResultCache();
      const ticket = cache.ticket('tools/list', {});
      const readTicket = cache.ticket('resources/read', { uri: 'a://x' });
      cache.invalidateList('tools/list');
      cache.store(ticket, { tools: ['old'], ttlMs: 100 });
      cache.store(readTicket, { contents: [], ttlMs: 100 });
      assert.equal(cache.get('tools/list', {}), undefined);
      assert.ok(cache.get('resources/read', { uri: 'a://x' }), 'another group is not affected');
      const late = cache.ticket('resources/read', { uri: 'a://y' });
      cache.clear();
      cache.store(late, { contents: [], ttlMs: 100 });
      assert.equal(cache.size, 0, 'nothing asked before clear() is kept after it');
    });

    it('remembers the generations of at most 1,000 invalidated URIs, and a forgotten one still refuses an overtaken answer', () => {
      const cache = new ResultCache();
      const early = cache.ticket('resources/read', { uri: 'a://early' });
      cache.invalidateRead('a://early');
      // A hostile server names a new URI in each resources/updated.
      for (let i = 0; i < 5_000; i++) cache.invalidateRead(`a://flood/${i}`);
      assert.equal(cache.rememberedGenerations, 1_000);
      cache.store(early, { contents: [], ttlMs: 100 });
      assert.equal(
        cache.get('resources/read', { uri: 'a://early' }),
        undefined,
        'the update of a://early overtook this answer, though its generation is forgotten',
      );
      const afterwards = cache.ticket('resources/read', { uri: 'a://early' });
      cache.store(afterwards, { contents: [], ttlMs: 100 });
      assert.ok(cache.get('resources/read', { uri: 'a://early' }), 'an answer asked for after the flood is kept');
      const recent = cache.ticket('resources/read', { uri: 'a://flood/4999' });
      cache.store(recent, { contents: [], ttlMs: 100 });
      assert.ok(cache.get('resources/read', { uri: 'a://flood/4999' }), 'a remembered group works as before');
    });

    it('is bounded: least recently used entries go first, and large contents count against a budget', () => {
      const cache = new ResultCache({ maxEntries: 3, maxContentChars: 10 });
      for (const uri of ['a', 'b', 'c']) ask(cache, 'resources/read', { uri }, { contents: [{ uri, text: 'xx' }], ttlMs: 100 });
      assert.ok(cache.get('resources/read', { uri: 'a' }));
      ask(cache, 'resources/read', { uri: 'd' }, { contents: [{ uri: 'd', text: 'xx' }], ttlMs: 100 });
      assert.equal(cache.size, 3);
      assert.equal(cache.get('resources/read', { uri: 'b' }), undefined, 'b was the least recently used');
      assert.ok(cache.get('resources/read', { uri: 'a' }));
      ask(cache, 'resources/read', { uri: 'big' }, { contents: [{ uri: 'big', blob: 'x'.repeat(11) }], ttlMs: 100 });
      assert.equal(cache.get('resources/read', { uri: 'big' }), undefined, 'larger than the whole budget: not kept');
      // a, c and d hold 6 characters; 8 more need 4 freed: c and d, the least recently used, go.
      ask(cache, 'resources/read', { uri: 'e' }, { contents: [{ uri: 'e', text: 'x'.repeat(8) }], ttlMs: 100 });
      assert.equal(cache.size, 2);
      assert.ok(cache.get('resources/read', { uri: 'e' }));
      assert.ok(cache.get('resources/read', { uri: 'a' }));
    });
  });
});
