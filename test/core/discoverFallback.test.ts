import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { ErrorCode, HttpTransport, MetaKeys, type McpError, type StdioServerParams, type Transport } from '../../src/core';
import { useFixtures } from '../helpers/httpServers';
import { ROOT, closeAll, connect, connectTransport, eventually, rawServer } from '../helpers/servers';

// The era probe (server/discover, else initialize) against every kind of answer, on both
// transports, beyond what era.test.ts has (a v2 server, server-everything, a silent server and
// one that exits on the probe).

type WireMessage = { id?: unknown; method?: string; params?: { _meta?: Record<string, unknown> } };

/** The raw fixture answering server/discover with each of `answers` in turn; initialize and the rest as usual. */
const discoverAnswers = (...answers: object[]): StdioServerParams => ({
  command: process.execPath,
  args: [path.join(ROOT, 'test', 'fixtures', 'raw-server.mjs'), 'discover-answers', JSON.stringify(answers)],
});
const refusal = (code: number, data?: object) => ({ error: { code, message: `refused with ${code}`, ...(data ? { data } : {}) } });
const DISCOVERED = {
  result: {
    resultType: 'complete',
    supportedVersions: ['2026-07-28'],
    capabilities: { tools: {} },
    _meta: { [MetaKeys.serverInfo]: { name: 'raw-modern', version: '1' } },
  },
};

const probe = (params: StdioServerParams) => connect(params, { protocol: 'auto', probeTimeoutMs: 3000, handlers: {} });

describe('the server/discover probe and its fallback', function () {
  this.timeout(30_000);
  afterEach(closeAll);

  describe('over stdio', () => {
    /** connect() can be traced only once it returned; the raw fixture's stderr shows what it received from the start. */
    const received = (t: { logs: Array<{ source: string; message: string }> }, n: number) =>
      eventually(async () => {
        const seen = t.logs
          .filter((l) => l.source === 'stderr' && l.message.startsWith('RECEIVED '))
          .map((l) => JSON.parse(l.message.slice('RECEIVED '.length)) as WireMessage);
        return seen.length >= n ? seen : undefined;
      });

    it('asks again with the version a -32022 names as supported, and speaks 2026-07-28 without initialize', async () => {
      const t = await probe(
        discoverAnswers(
          refusal(ErrorCode.UnsupportedProtocolVersion, { supported: ['2099-01-01', '2026-07-28'], requested: '2026-07-28' }),
          DISCOVERED,
        ),
      );
      assert.equal(t.client.era, 'modern');
      assert.equal(t.client.serverInfo?.name, 'raw-modern');
      assert.equal((await t.client.listTools())[0].name, 'work');
      const seen = await received(t, 3);
      assert.deepEqual(
        seen.map((m) => m.method),
        ['server/discover', 'server/discover', 'tools/list'],
      );
      assert.notEqual(seen[0].id, seen[1].id, 'the retry has a new id');
      assert.ok(seen.every((m) => m.params?._meta?.[MetaKeys.protocolVersion] === '2026-07-28'));
    });

    it('uses initialize when -32022 names only versions of the initialize era', async () => {
      const t = await probe(discoverAnswers(refusal(ErrorCode.UnsupportedProtocolVersion, { supported: ['2025-11-25', '2025-06-18'] })));
      assert.equal(t.client.era, 'legacy');
      assert.equal(t.client.protocolVersion, '2025-11-25');
      const seen = await received(t, 2);
      assert.deepEqual(
        seen.slice(0, 2).map((m) => m.method),
        ['server/discover', 'initialize'],
      );
    });

    // The raw fixture would take initialize: a rejection means it was never tried.
    it('fails clearly when -32022 names no version MCP Host speaks, and does not try initialize', async () => {
      await assert.rejects(
        probe(discoverAnswers(refusal(ErrorCode.UnsupportedProtocolVersion, { supported: ['2099-01-01'] }))),
        /speaks \["2099-01-01"\]/,
      );
    });

    it('fails with the server’s own -32021 (a stateless server that refuses us) instead of trying initialize', async () => {
      await assert.rejects(
        probe(discoverAnswers(refusal(ErrorCode.MissingRequiredClientCapability, { requiredCapabilities: { sampling: {} } }))),
        (e: McpError) => e.code === ErrorCode.MissingRequiredClientCapability,
      );
    });

    for (const code of [ErrorCode.MethodNotFound, ErrorCode.InvalidParams, ErrorCode.InvalidRequest, ErrorCode.InternalError, -32000]) {
      it(`uses initialize after a ${code} to the probe`, async () => {
        const t = await probe(discoverAnswers(refusal(code)));
        assert.equal(t.client.era, 'legacy');
        assert.ok(
          t.logs.some((l) => new RegExp(`server/discover failed with ${code} .*using initialize`).test(l.message)),
          t.logs.map((l) => l.message).join('\n'),
        );
      });
    }

    it('uses initialize after a discover result without supportedVersions', async () => {
      const t = await probe(discoverAnswers({ result: { capabilities: {} } }));
      assert.equal(t.client.era, 'legacy');
    });

    it('uses initialize for a raw legacy server that answers the probe with -32601 (Method not found)', async () => {
      const t = await probe(rawServer('plain'));
      assert.equal(t.client.era, 'legacy');
      assert.deepEqual(
        (await received(t, 2)).slice(0, 2).map((m) => m.method),
        ['server/discover', 'initialize'],
      );
    });
  });

  describe('over HTTP', () => {
    const start = useFixtures();
    const requests = async (f: { requests(): Promise<Array<{ method: string; body?: WireMessage; headers: Record<string, string> }>> }) =>
      (await f.requests()).filter((r) => r.method === 'POST');

    it('uses initialize after a 400 whose JSON body is no JSON-RPC error', async () => {
      const f = await start('json');
      const t = await connectTransport<Transport>(new HttpTransport({ url: f.url }), { protocol: 'auto' });
      assert.equal(t.client.era, 'legacy');
      assert.equal((await t.client.listTools())[0].name, 'work');
      assert.deepEqual(
        (await requests(f)).slice(0, 2).map((r) => r.body?.method),
        ['server/discover', 'initialize'],
      );
    });

    it('uses initialize after a plain-text 400 to the probe', async () => {
      const f = await start('discover-text-400');
      const t = await connectTransport<Transport>(new HttpTransport({ url: f.url }), { protocol: 'auto' });
      assert.equal(t.client.era, 'legacy');
      assert.equal((await t.client.listTools())[0].name, 'work');
    });

    it('asks again after a 400 carrying -32022, and speaks 2026-07-28 without a session', async () => {
      const f = await start('discover-retry');
      const t = await connectTransport<Transport>(new HttpTransport({ url: f.url }), { protocol: 'auto' });
      assert.equal(t.client.era, 'modern');
      assert.equal(t.client.serverInfo?.name, 'http-fixture-discover-retry');
      assert.equal((await t.client.listTools())[0].name, 'work');
      const posts = await requests(f);
      assert.deepEqual(
        posts.map((r) => r.body?.method),
        ['server/discover', 'server/discover', 'tools/list'],
      );
      assert.ok(posts.every((r) => r.headers['mcp-protocol-version'] === '2026-07-28' && r.headers['mcp-session-id'] === undefined));
    });
  });
});
