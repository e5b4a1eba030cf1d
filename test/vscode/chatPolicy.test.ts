import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { api, repoRoot, setServers, waitFor } from './helpers';

const fixture = () => path.join(repoRoot(), 'test', 'fixtures', 'gateway-upstream.mjs');

/**
 * chat.mcp.allowedServers / deniedServers are policy settings VS Code does not register for
 * `update()` ("not a registered configuration"), but it reads them from the user's settings.json as
 * well as from a policy: the test writes them there, through the settings file's own editor.
 */
async function setRules(rules: { allowedServers?: unknown; deniedServers?: unknown }): Promise<void> {
  await vscode.commands.executeCommand('workbench.action.openSettingsJson');
  const editor = await waitFor(() => {
    const e = vscode.window.activeTextEditor;
    return e && !e.document.isClosed && e.document.uri.path.endsWith('/User/settings.json') && e;
  }, 'the user settings.json in an editor');
  const { document } = editor;
  const settings = JSON.parse(document.getText() || '{}') as Record<string, unknown>;
  delete settings['chat.mcp.allowedServers'];
  delete settings['chat.mcp.deniedServers'];
  if (rules.allowedServers !== undefined) settings['chat.mcp.allowedServers'] = rules.allowedServers;
  if (rules.deniedServers !== undefined) settings['chat.mcp.deniedServers'] = rules.deniedServers;
  const whole = new vscode.Range(document.positionAt(0), document.positionAt(document.getText().length));
  assert.ok(await editor.edit((b) => b.replace(whole, JSON.stringify(settings, null, 2))), 'the settings edit applied');
  // The workbench's own Save: the extension host's save() of the user's settings answers false here.
  await vscode.commands.executeCommand('workbench.action.files.save');
  await waitFor(() => !document.isDirty, 'the user settings saved');
  await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
}

describe("VS Code's organisation lists of MCP servers, applied to shared servers", function () {
  this.timeout(120_000);
  after(async () => {
    await setRules({});
    await setServers(undefined);
  });

  it('keeps a server that chat.mcp.deniedServers names by its command line, or that an allow list leaves out, from the chat', async () => {
    const seam = await api();
    assert.ok(seam.sharing.available, 'this VS Code has no MCP server definition provider API');
    await setServers({
      up: { command: 'node', args: [fixture()], shareWithChat: true },
      twin: { command: 'node', args: [fixture(), 'twin'], shareWithChat: true },
    });
    const offered = () =>
      seam.sharing
        .sharedServers()
        .map((s) => s.name)
        .sort()
        .join();
    await waitFor(() => offered() === 'twin,up', 'both servers shared');

    // VS Code sees only the gateway's address; MCP Host matches the command line behind it.
    await setRules({ deniedServers: [{ serverCommand: ['node', fixture()] }] });
    await waitFor(() => offered() === 'twin', 'the denied command line to be withheld');
    const row = (name: string) => String(seam.tree.getTreeItem({ kind: 'server', server: seam.host.registry.get(name)! }).description);
    assert.match(row('up'), /^withheld from chat by chat\.mcp\.deniedServers · /);
    assert.match(row('twin'), /^shared with chat · /);

    await setRules({ allowedServers: [{ serverName: 'twin' }] });
    await waitFor(() => offered() === 'twin', 'only the allowed server');

    await setRules({});
    await waitFor(() => offered() === 'twin,up', 'both again once the lists are gone');
  });
});
