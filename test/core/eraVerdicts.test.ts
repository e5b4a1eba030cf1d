import { strict as assert } from 'node:assert';
import {
  ERA_VERDICTS_KEPT,
  ERA_VERDICT_MAX_AGE_MS,
  EraVerdicts,
  ServerHandle,
  StdioTransport,
  parseServerDefinitions,
  type ServerDefinition,
  type StdioServerParams,
  type StoredEraVerdicts,
  type TraceEvent,
} from '../../src/core';
import { closeAll, rawServer, v2StdioServer } from '../helpers/servers';

const DAY = 24 * 60 * 60 * 1000;
const hash = (n: number) => n.toString(16).padStart(16, '0');

describe('remembered protocol eras (kept across sessions by the host)', function () {
  this.timeout(30_000);
  afterEach(closeAll);

  describe('the store', () => {
    it('reads back what it stored, and reports every change', () => {
      let now = 1_000;
      const changes: StoredEraVerdicts[] = [];
      const verdicts = new EraVerdicts([], { now: () => now, onDidChange: (s) => changes.push(s) });
      verdicts.set(hash(1), { era: 'legacy' });
      now = 2_000;
      verdicts.set(hash(2), { era: 'modern', version: '2026-07-28' });
      verdicts.delete(hash(3));
      assert.equal(changes.length, 2, 'deleting what is not there changes nothing');
      const stored = JSON.parse(JSON.stringify(changes[1])) as unknown;
      const again = EraVerdicts.fromStored(stored, { now: () => now });
      assert.deepEqual(again.get(hash(1)), { era: 'legacy' });
      assert.deepEqual(again.get(hash(2)), { era: 'modern', version: '2026-07-28' });
    });

    it('drops malformed entries of a damaged store, keeping the good ones', () => {
      const good: StoredEraVerdicts[number] = [hash(7), { era: 'legacy', at: 5 }];
      const stored: unknown[] = [
        good,
        ['not-a-hash', { era: 'legacy', at: 5 }],
        [hash(8), { era: 'modern', version: '2099-01-01', at: 5 }],
        [hash(9), { era: 'legacy' }],
        [hash(10), null],
        'junk',
        [hash(11), { era: 'stateless', at: 5 }],
      ];
      const verdicts = EraVerdicts.fromStored(stored, { now: () => 10 });
      assert.deepEqual(verdicts.entries(), [[hash(7), { era: 'legacy' }]]);
      for (const value of [undefined, null, 42, 'x', { a: 1 }]) assert.deepEqual(EraVerdicts.fromStored(value).entries(), []);
    });

    it('forgets a verdict older than the maximum age, so an upgraded server is asked again', () => {
      let now = 100 * DAY;
      const verdicts = EraVerdicts.fromStored([[hash(1), { era: 'legacy', at: now - ERA_VERDICT_MAX_AGE_MS - 1 }]], { now: () => now });
      assert.equal(verdicts.get(hash(1)), undefined, 'too old when read back');
      verdicts.set(hash(2), { era: 'legacy' });
      now += ERA_VERDICT_MAX_AGE_MS + 1;
      assert.equal(verdicts.get(hash(2)), undefined, 'too old while running');
      assert.deepEqual(verdicts.stored, []);
    });

    it('keeps a bounded number, dropping the definitions not started for longest', () => {
      let now = 0;
      const verdicts = new EraVerdicts([], { now: () => ++now });
      for (let i = 0; i < ERA_VERDICTS_KEPT + 5; i++) verdicts.set(hash(i), { era: 'legacy' });
      // 0…4 went first. 5 is started again, so a new one pushes out 6, not 5.
      verdicts.set(hash(5), { era: 'legacy' });
      verdicts.set(hash(999), { era: 'legacy' });
      const kept = verdicts.entries().map(([h]) => h);
      assert.equal(kept.length, ERA_VERDICTS_KEPT);
      assert.ok(kept.includes(hash(5)));
      assert.ok(!kept.includes(hash(6)) && !kept.includes(hash(0)));
      assert.deepEqual(kept.slice(-2), [hash(5), hash(999)]);
      const many = Array.from({ length: ERA_VERDICTS_KEPT + 50 }, (_, i): StoredEraVerdicts[number] => [hash(i), { era: 'legacy', at: i }]);
      const loaded = EraVerdicts.fromStored(many, { now: () => ERA_VERDICTS_KEPT + 50 });
      assert.equal(loaded.entries().length, ERA_VERDICTS_KEPT);
      assert.equal(loaded.get(hash(0)), undefined, 'the oldest are the ones left out');
    });
  });

  describe('a server handle says how its era was chosen', () => {
    const handles: ServerHandle[] = [];
    afterEach(async () => {
      await Promise.all(handles.splice(0).map((h) => h.dispose()));
    });

    function handleFor(
      params: StdioServerParams,
      verdicts: EraVerdicts,
      entry: Record<string, unknown> = {},
    ): { handle: ServerHandle; methods: () => string[] } {
      const def = parseServerDefinitions({ probe: { command: params.command, args: params.args, ...entry } }, { scope: 'user' })
        .definitions[0];
      const handle = new ServerHandle(def, {
        prepare: async (d: ServerDefinition) => d,
        createTransport: (d) =>
          new StdioTransport({
            command: (d as typeof def & { command: string }).command,
            args: (d as { args: string[] }).args,
            shutdownGraceMs: 500,
          }),
        handlers: () => ({}),
        eraVerdicts: verdicts,
      });
      handles.push(handle);
      const trace: TraceEvent[] = [];
      handle.onTrace((e) => trace.push(e));
      const methods = () => trace.filter((e) => e.direction === 'out').map((e) => (e.message as { method?: string }).method ?? '');
      return { handle, methods };
    }

    it('exited on the probe, then remembered in a new session from what was stored', async () => {
      let stored: StoredEraVerdicts = [];
      const first = handleFor(rawServer('exit-before-initialize'), new EraVerdicts([], { onDidChange: (s) => (stored = s) }));
      await first.handle.start();
      assert.equal(first.handle.eraDecision, 'exitedOnDiscover');
      assert.equal(stored.length, 1);
      await first.handle.dispose();

      // A new window: the host builds its verdicts from what was stored.
      const second = handleFor(rawServer('exit-before-initialize'), EraVerdicts.fromStored(JSON.parse(JSON.stringify(stored))));
      await second.handle.start();
      assert.equal(second.handle.state.kind, 'running');
      assert.equal(second.handle.eraDecision, 'remembered');
      assert.equal(second.methods()[0], 'initialize', 'no probe, so the server is started once');
      await second.handle.stop();
      assert.equal(second.handle.eraDecision, undefined, 'only a running server has one');
    });

    it('asked server/discover, or followed the protocol setting', async () => {
      const asked = handleFor(v2StdioServer(), new EraVerdicts());
      await asked.handle.start();
      assert.equal(asked.handle.client?.era, 'modern');
      assert.equal(asked.handle.eraDecision, 'discover');
      const set = handleFor(v2StdioServer(), new EraVerdicts(), { protocol: '2026-07-28' });
      await set.handle.start();
      assert.equal(set.handle.eraDecision, 'setting');
    });
  });
});
