import { strict as assert } from 'node:assert';
import {
  HttpTransport,
  MetaKeys,
  type LoggingMessageNotificationParams,
  type McpClient,
  type TraceEvent,
  type Transport,
} from '../../src/core';
import { startFixture, type Fixture } from '../helpers/httpServers';
import { V2_FIXTURE, closeAll, connect, connectTransport, v2StdioServer } from '../helpers/servers';

// 2026-07-28 has no logging/setLevel: the level rides in each request's _meta
// ("io.modelcontextprotocol/logLevel"), and a request without it gets no log messages.

type WireMessage = { method?: string; params?: { _meta?: Record<string, unknown> } };

function watch(client: McpClient) {
  const messages: string[] = [];
  const trace: TraceEvent[] = [];
  client.onLogMessage((m: LoggingMessageNotificationParams) => messages.push(`${m.level} ${String(m.data)}`));
  client.onTrace((e) => trace.push(e));
  const levelsSent = (method: string) =>
    trace
      .filter((e) => e.direction === 'out' && (e.message as WireMessage).method === method)
      .map((e) => (e.message as WireMessage).params?._meta?.[MetaKeys.logLevel] ?? 'none');
  return { messages, levelsSent };
}

async function checkLevels(client: McpClient): Promise<void> {
  const { messages, levelsSent } = watch(client);
  await client.callTool('chatty', {});
  assert.deepEqual(messages, [], 'no level asked for: no log messages');
  await client.setLoggingLevel('debug');
  await client.callTool('chatty', {});
  assert.deepEqual(messages.splice(0), ['debug a debug line', 'warning a warning line']);
  await client.setLoggingLevel('warning');
  await client.callTool('chatty', {});
  assert.deepEqual(messages.splice(0), ['warning a warning line']);
  await client.setLoggingLevel('error');
  await client.listTools();
  await client.callTool('chatty', {});
  assert.deepEqual(messages, []);
  assert.deepEqual(levelsSent('tools/call'), ['none', 'debug', 'warning', 'error']);
  assert.deepEqual(levelsSent('tools/list'), ['error'], 'every request carries the level, not only tool calls');
  assert.deepEqual(levelsSent('logging/setLevel'), [], 'nothing is sent when the level changes');
}

describe('per-request log level (2026-07-28)', function () {
  this.timeout(30_000);
  afterEach(closeAll);

  it('over stdio: the server logs at the level of each request', async () => {
    const t = await connect(v2StdioServer(), { protocol: 'auto', probeTimeoutMs: 3000 });
    assert.equal(t.client.era, 'modern');
    await checkLevels(t.client);
  });

  describe('over HTTP', () => {
    let fixture: Fixture | undefined;
    afterEach(async () => {
      await fixture?.stop();
      fixture = undefined;
    });

    it('the log messages come on the request’s own stream, at its level', async () => {
      fixture = await startFixture('http-modern', V2_FIXTURE);
      const t = await connectTransport<Transport>(new HttpTransport({ url: fixture.url }), { protocol: 'auto' });
      assert.equal(t.client.era, 'modern');
      await checkLevels(t.client);
    });
  });
});
