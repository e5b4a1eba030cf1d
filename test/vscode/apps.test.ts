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
    await setServers({ 'apps-fixture': { command: 'node', args: [path.join(repoRoot(), 'test', 'fixtures', 'app-server.mjs')], tools: { deny: ['denied-tool'] }, trustAnnotations: false } });
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
    a.ui.confirmTool = async (_s, tool) => (asked.push(tool.name), 'cancel');
    // Annotations are not trusted here, so even the read-only echo asks; Cancel sends nothing.
    await assert.rejects(a.tools.callForApp(h, 'echo', { text: 'no' }), /did not allow/);
    assert.deepEqual(asked, ['echo']);
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
    await a.tools.call(h, tool, {});
    assert.equal(a.apps.open.size, 1, 'the call went to the app already open');
    panel.dispose();
    await waitFor(() => !a.apps.open.has(`apps-fixture\u0000hostile-app`), 'the panel to close');
  });
});
