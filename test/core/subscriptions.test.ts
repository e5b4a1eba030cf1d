import { strict as assert } from 'node:assert';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { thisMachine } from '../../src/core/policy/gate';
import { GatedServer } from '../../src/core/policy/gated';
import { auditedServer } from '../../src/core/policy/serverRequests';
import {
  HttpTransport,
  parseServerDefinitions,
  ServerHandle,
  StdioTransport,
  stdioParamsFor,
  type AuditEntry,
  type LaunchContext,
  type LoggingMessageNotificationParams,
  type Root,
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

/** The person's gate on a handle, fenced to `roots()` (read at each request), with its audit in `entries`. */
function personGate(h: ServerHandle, roots: () => Root[]) {
  const entries: AuditEntry[] = [];
  const gate = new GatedServer(h, 'person', {
    context: () => ({ policy: h.definition, alwaysAllowed: false, fence: 'block', roots: roots(), machine: thisMachine() }),
    server: () => auditedServer(h.definition),
    audit: { append: (e) => entries.push(e) },
  });
  const subscribes = () => entries.filter((e) => e.method === 'resources/subscribe').map((e) => `${e.decision} ${e.outcome.kind}`);
  return { gate, subscribes };
}

async function until(what: string, done: () => boolean | Promise<boolean>): Promise<void> {
  for (const deadline = Date.now() + 5000; !(await done());) {
    assert.ok(Date.now() < deadline, what);
    await new Promise((r) => setTimeout(r, 50));
  }
}

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
    const { gate, subscribes } = personGate(h, () => []);
    // Asked for before the server runs: subscribed once it does.
    const held = await gate.subscribe(uri);
    assert.ok(held.sent);
    const subscription = held.result;
    const acknowledged = (m: LoggingMessageNotificationParams) => String(m.data).includes(`Subscribe Resource request for URI: ${uri}`);
    for (const launch of ['first', 'after a restart']) {
      const ack = nextEvent(h.onLogMessage, 10_000, acknowledged);
      if (launch === 'first') await h.start();
      else await h.restart();
      await ack;
      const updated = nextEvent(h.onResourceUpdated, 10_000, (u) => u === uri);
      // server-everything sends an update at once to each subscriber when this is switched on.
      await h.rawClient!.callTool('toggle-subscriber-updates', {});
      assert.equal(await updated, uri, launch);
    }
    assert.deepEqual(h.subscribedResources, [uri]);
    // The gate's decision when it was asked for, then each start's resources/subscribe, each audited.
    assert.deepEqual(subscribes(), ['allowed ok', 'allowed ok', 'allowed ok']);
    subscription.dispose();
    assert.deepEqual(h.subscribedResources, []);
  });

  it('subscribes again when the Streamable HTTP session is renewed', async () => {
    const f = await startFixture('subscribe');
    fixtures.push(f);
    const h = make({ type: 'http', url: f.url });
    await h.start();
    const { gate, subscribes: audited } = personGate(h, () => []);
    const held = await gate.subscribe('fixture://watched');
    assert.ok(held.sent);
    const sessions = async () =>
      (await f.requests()).filter((r) => r.body?.method === 'resources/subscribe').map((r) => r.headers['mcp-session-id']);
    const seen = (want: string[]) => async () => JSON.stringify(await sessions()) === JSON.stringify(want);
    await until('a subscribe in session-1', seen(['session-1']));
    // The fixture forgets the session: the next request gets a 404, and the transport renews it.
    await h.rawClient!.callTool('forget', {});
    await h.client!.ping();
    await until('a subscribe in session-2', seen(['session-1', 'session-2']));
    assert.deepEqual(audited(), ['allowed ok', 'allowed ok']);
    held.result.dispose();
    await until('a resources/unsubscribe', async () => (await f.requests()).some((r) => r.body?.method === 'resources/unsubscribe'));
  });

  it('sends the subscribe again only through the gate: a file outside the roots by now is fenced, audited and not sent', async () => {
    const f = await startFixture('subscribe');
    fixtures.push(f);
    const h = make({ type: 'http', url: f.url });
    await h.start();
    const folder = mkdtempSync(path.join(tmpdir(), 'mcp-host-subscribe-'));
    const watched = pathToFileURL(path.join(folder, 'watched.txt')).href;
    let roots: Root[] = [{ uri: pathToFileURL(folder).href }];
    const { gate, subscribes: audited } = personGate(h, () => roots);
    const held = await gate.subscribe(watched);
    assert.ok(held.sent, 'inside the roots');
    const sessions = async () =>
      (await f.requests()).filter((r) => r.body?.method === 'resources/subscribe').map((r) => r.headers['mcp-session-id']);
    await until('a subscribe in session-1', async () => (await sessions()).length === 1);
    // The folder is no root any more; then the session is renewed, and the handle subscribes again.
    roots = [];
    await h.rawClient!.callTool('forget', {});
    await h.client!.ping();
    await until('the renewed subscribe audited', () => audited().length === 2);
    assert.deepEqual(audited(), ['allowed ok', 'fenced not-sent']);
    await h.client!.ping();
    assert.deepEqual(await sessions(), ['session-1'], 'the server saw the refused subscribe');
    held.result.dispose();
  });
});
