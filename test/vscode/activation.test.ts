// Runs inside the real extension host of VS Code 1.139 (code-server's bundled server), against the
// extension as installed from the VSIX. See test/harness/README.md.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { env } from './harnessEnv';

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

  it('runs mcpHost.showLog without error', async () => {
    await vscode.commands.executeCommand('mcpHost.showLog');
  });

  it('opens the fixture workspace', () => {
    const folder = vscode.workspace.workspaceFolders?.[0];
    assert.ok(folder, 'no workspace folder');
    assert.equal(folder.uri.fsPath, env.workspace);
  });
});
