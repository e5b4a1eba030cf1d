import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import {
  HttpTransport,
  parseServerDefinitions,
  ServerHandle,
  StdioTransport,
  stdioParamsFor,
  type LaunchContext,
  type LoggingMessageNotificationParams,
} from '../../src/core';
import { startFixture, type Fixture } from '../helpers/httpServers';
import { nextEvent, ROOT } from '../helpers/servers';

const EVERYTHING = path.join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');

const context: LaunchContext = {
  prepare: async (d) => d,
  createTransport: async (d) =>
    d.type === 'http' ? new HttpTransport({ url: d.url }) : new StdioTransport({ ...(await stdioParamsFor(d)), shutdownGraceMs: 300 }),
  handlers: () => ({}),
};

describe('resource subscriptions outlive a launch', function () {
  this.timeout(30_000);
  const handles: ServerHandle[] = [];
  const fixtures: Fixture[] = [];
  const make = (raw: Record<string, unknown>) => {
    const [def] = parseServerDefinitions({ s: raw }, { scope: 'user' }).definitions;
    const h = new ServerHandle(def, context, { maxRestarts: 2, windowMs: 60_000, baseDelayMs: 50 });
    handles.push(h);
    return h;
  };
  afterEach(async () => {
    await Promise.all(handles.splice(0).map((h) => h.dispose()));
    await Promise.all(fixtures.splice(0).map((f) => f.stop()));
  });

  it('subscribes on every start of server-everything, so updates come again after a restart', async () => {
    const h = make({ command: process.execPath, args: [EVERYTHING, 'stdio'] });
    const uri = 'demo://resource/dynamic/text/1';
    // Asked for before the server runs: subscribed once it does.
    const subscription = h.subscribeResource(uri);
    const acknowledged = (m: LoggingMessageNotificationParams) => String(m.data).includes(`Subscribe Resource request for URI: ${uri}`);
    for (const launch of ['first', 'after a restart']) {
      const ack = nextEvent(h.onLogMessage, 10_000, acknowledged);
      if (launch === 'first') await h.start();
      else await h.restart();
      await ack;
      const updated = nextEvent(h.onResourceUpdated, 10_000, (u) => u === uri);
      // server-everything sends an update at once to each subscriber when this is switched on.
      await h.client!.callTool('toggle-subscriber-updates', {});
      assert.equal(await updated, uri, launch);
    }
    assert.deepEqual(h.subscribedResources, [uri]);
    subscription.dispose();
    assert.deepEqual(h.subscribedResources, []);
  });

  it('subscribes again when the Streamable HTTP session is renewed', async () => {
    const f = await startFixture('subscribe');
    fixtures.push(f);
    const h = make({ type: 'http', url: f.url });
    await h.start();
    const subscription = h.subscribeResource('fixture://watched');
    const subscribes = async () =>
      (await f.requests()).filter((r) => r.body?.method === 'resources/subscribe').map((r) => r.headers['mcp-session-id']);
    const until = async (want: string[]) => {
      for (const deadline = Date.now() + 5000; JSON.stringify(await subscribes()) !== JSON.stringify(want);) {
        assert.ok(Date.now() < deadline, `subscribes seen in sessions ${JSON.stringify(await subscribes())}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    await until(['session-1']);
    // The fixture forgets the session: the next request gets a 404, and the transport renews it.
    await h.client!.callTool('forget', {});
    await h.client!.ping();
    await until(['session-1', 'session-2']);
    subscription.dispose();
    const unsubscribed = async () => (await f.requests()).some((r) => r.body?.method === 'resources/unsubscribe');
    for (const deadline = Date.now() + 5000; !(await unsubscribed());) {
      assert.ok(Date.now() < deadline, 'no resources/unsubscribe');
      await new Promise((r) => setTimeout(r, 50));
    }
  });
});
