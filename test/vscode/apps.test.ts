import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { api, repoRoot, running, setServers, waitFor } from './helpers';

/** The tools/call requests the host sent to `server` so far. */
function toolCallsSent(trace: Array<{ server: string; method?: string; name?: string }>, server: string) {
  return trace.filter((t) => t.server === server && t.method === 'tools/call').map((t) => t.name);
}

describe('MCP Apps in a real VS Code', function () {
  this.timeout(120_000);
  const sent: Array<{ server: string; method?: string; name?: string }> = [];
  let subscription: { dispose(): void } | undefined;

  before(async () => {
    const a = await api();
    a.ui.allowLaunch = async () => 'allow';
    await setServers({
      'apps-fixture': {
        command: 'node',
        args: [path.join(repoRoot(), 'test', 'fixtures', 'app-server.mjs')],
        tools: { deny: ['denied-tool'] },
        trustAnnotations: false,
      },
    });
    const h = await running(a, 'apps-fixture');
    subscription = h.onTrace((e) => {
      const m = e.message as { method?: string; params?: { name?: string } };
      if (e.direction === 'out') sent.push({ server: 'apps-fixture', method: m.method, name: m.params?.name });
    });
  });
  after(async () => {
    subscription?.dispose();
    const a = await api();
    a.apps.dispose();
    await setServers(undefined);
  });

  it("an app's tools/call meets the person's policy: deny, visibility, the confirmation, and the history marks it", async () => {
    const a = await api();
    const h = await running(a, 'apps-fixture');
    await assert.rejects(a.tools.callForApp(h, 'denied-tool', {}), /tools\.allow \/ tools\.deny/);
    await assert.rejects(a.tools.callForApp(h, 'model-only', {}), /model-only/);
    const asked: string[] = [];
    a.ui.confirmTool = async (_s, tool, _args, _trusted, asker) => (asked.push(`${tool.name} for the ${asker}`), 'cancel');
    // Annotations are not trusted here, so even the read-only echo asks; Cancel sends nothing.
    await assert.rejects(a.tools.callForApp(h, 'echo', { text: 'no' }), /did not allow/);
    assert.deepEqual(asked, ['echo for the app'], 'the question says the app asks, not the person');
    assert.deepEqual(toolCallsSent(sent, 'apps-fixture'), [], 'nothing refused reached the server');
    a.ui.confirmTool = async () => 'once';
    const result = await a.tools.callForApp(h, 'echo', { text: 'from the app' });
    assert.deepEqual(result.content, [{ type: 'text', text: 'from the app' }]);
    assert.deepEqual(toolCallsSent(sent, 'apps-fixture'), ['echo']);
    assert.equal(a.tools.history[0].by, 'app');
    assert.equal(a.tools.history[0].outcome, 'ok');
  });

  it('Open App opens the panel titled with server and tool; a call of the tool goes to the open app', async () => {
    const a = await api();
    const h = await running(a, 'apps-fixture');
    const tool = h.tools.find((t) => t.name === 'hostile-app')!;
    a.ui.apps = { ...a.ui.apps, grant: async () => [] };
    await vscode.commands.executeCommand('mcpHost.openApp', { kind: 'tool', server: h, tool });
    const panel = await waitFor(() => a.apps.open.get(`apps-fixture\u0000hostile-app`), 'the app panel');
    assert.equal(panel.panel.title, 'apps-fixture › Hostile App');
    assert.match(panel.csp.frame, /connect-src https:\/\/allowed\.example;/);
    assert.match(panel.csp.page, /script-src 'nonce-[^']+' 'sha256-/);
    assert.doesNotMatch(panel.csp.page, /unsafe-eval|cdn\.example/);
    // The TLD wildcard and the loopback address (a stdio server is not on loopback) are refused, logged and shown.
    assert.doesNotMatch(panel.csp.frame, /\*\.com|127\.0\.0\.1/);
    assert.doesNotMatch(panel.csp.page, /\*\.com|127\.0\.0\.1/);
    const refusals = a.apps.events.filter((e) => e.server === 'apps-fixture' && /was refused/.test(e.text)).map((e) => e.text);
    assert.ok(
      refusals.some((t) => t.includes('"https://*.com" was refused: a wildcard over a public suffix')),
      refusals.join('\n'),
    );
    assert.ok(
      refusals.some((t) => t.includes('"http://127.0.0.1:*" was refused: a loopback, private or link-local address')),
      refusals.join('\n'),
    );
    const header = /<header[^>]*>([\s\S]*?)<\/header>/.exec(panel.panel.webview.html)?.[1] ?? '';
    assert.match(header, /This app may connect to: https:\/\/allowed\.example\./);
    assert.match(
      header,
      /Refused \(the reasons are in the log of &quot;apps-fixture&quot;\): 'unsafe-eval', https:\/\/\*\.com, http:\/\/127\.0\.0\.1:\*, https:\/\/cdn\.example; script-src \*/,
    );
    await a.tools.call(h, tool, {});
    assert.equal(a.apps.open.size, 1, 'the call went to the app already open');
    panel.dispose();
    await waitFor(() => !a.apps.open.has(`apps-fixture\u0000hostile-app`), 'the panel to close');
  });

  it('gives up a call to an app that never initialises, after its bound, and the panel and the log say so', async function () {
    // Without a bound the call would wait for ever: this test's own timeout is what it would hit.
    this.timeout(20_000);
    const a = await api();
    const h = await running(a, 'apps-fixture');
    const tool = h.tools.find((t) => t.name === 'silent-app')!;
    const bound = a.apps.initTimeoutMs;
    a.apps.initTimeoutMs = 300;
    a.ui.confirmTool = async () => 'once';
    try {
      await a.tools.call(h, tool, {});
      const panel = await waitFor(() => a.apps.open.get(`apps-fixture\u0000silent-app`), 'the silent app panel');
      const given = await waitFor(
        () => a.apps.events.find((e) => e.server === 'apps-fixture' && /timed out after 300 ms/.test(e.text)),
        'the log of the call given up',
      );
      assert.equal(given.text, 'could not send the call to the app: Request timed out after 300 ms: ui/notifications/initialized');
      assert.deepEqual(panel.notices, [
        'The app did not start within 0.3 seconds, so the call was not passed to it. Close the panel and call the tool again to retry.',
      ]);
      // A later call to the same open app is bounded too.
      await assert.rejects(panel.deliver({ args: {} }), /timed out after 300 ms/);
      panel.dispose();
      await waitFor(() => !a.apps.open.has(`apps-fixture\u0000silent-app`), 'the panel to close');
    } finally {
      a.apps.initTimeoutMs = bound;
    }
  });
});
