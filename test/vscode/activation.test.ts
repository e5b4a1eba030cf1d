// Runs inside the real extension host of VS Code 1.139 (code-server's bundled server), against the
// extension as installed from the VSIX. See test/harness/README.md.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { env } from './harnessEnv';
import { api, publicApi, setServers, waitFor } from './helpers';

describe('activation', () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(env.repo, 'package.json'), 'utf8'));
  const id = `${pkg.publisher}.${pkg.name}`;

  it(`the extension ${id} is installed and activates`, async () => {
    const ext = vscode.extensions.getExtension(id);
    assert.ok(
      ext,
      `extension ${id} not found; installed: ${vscode.extensions.all
        .map((e) => e.id)
        .filter((x) => !x.startsWith('vscode.'))
        .join(', ')}`,
    );
    assert.equal(ext.packageJSON.version, pkg.version, 'the installed VSIX is this build');
    await ext.activate();
    assert.equal(ext.isActive, true);
  });

  it('contributes mcpHost.showLog as a registered command', async () => {
    const commands = await vscode.commands.getCommands(true);
    assert.ok(commands.includes('mcpHost.showLog'), 'mcpHost.showLog is not registered');
  });

  it('mcpHost.showLog shows the MCP Host output channel, with the activation line in it', async () => {
    await vscode.commands.executeCommand('mcpHost.showLog');
    // The Output view opens the channel as a document of the output scheme, named after the channel.
    const shown = await waitFor(
      () =>
        vscode.workspace.textDocuments.find((d) => d.uri.scheme === 'output' && decodeURIComponent(d.uri.toString()).includes('MCP Host')),
      'the MCP Host output channel to be shown',
    );
    await waitFor(() => /MCP Host activated in \d/.test(shown.getText()), 'the activation line in the MCP Host log');
  });

  it('exports a small API: servers() follows the settings, onDidChangeServers fires, the internals only through the test seam', async () => {
    const exported = await publicApi();
    assert.equal(exported.apiVersion, 1);
    // The harness sets MCP_HOST_TEST_SEAM=1, hence `testing`; nothing else besides the API.
    assert.deepEqual(Object.keys(exported).sort(), ['apiVersion', 'onDidChangeServers', 'servers', 'testing']);
    const host = (await api()).host;
    let changes = 0;
    const subscription = exported.onDidChangeServers(() => changes++);
    try {
      await setServers({ 'api-probe': { command: process.execPath, args: [env.everythingServer, 'stdio'], autostart: false } });
      const probe = await waitFor(() => exported.servers().find((s) => s.name === 'api-probe'), 'api-probe in servers()');
      assert.deepEqual(probe, { name: 'api-probe', scope: 'user', state: 'stopped' });
      assert.deepEqual(
        exported.servers().map((s) => `${s.name}:${s.state}`),
        host.servers.map((s) => `${s.name}:${s.state.kind}`),
      );
      assert.ok(changes > 0, 'onDidChangeServers did not fire');
    } finally {
      subscription.dispose();
      await setServers(undefined);
    }
  });

  it('opens the fixture workspace', () => {
    const folder = vscode.workspace.workspaceFolders?.[0];
    assert.ok(folder, 'no workspace folder');
    assert.equal(folder.uri.fsPath, env.workspace);
  });
});
