import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { McpHostTestSeam } from '../../src/extension';
import type { McpHostApi } from '../../src/vscode/api';
import type { ServerHandle } from '../../src/core';

/** The repository, found from the bundled test file, so server paths need no machine path. */
export function repoRoot(): string {
  if (process.env.MCP_HOST_REPO) return process.env.MCP_HOST_REPO;
  for (let dir = __dirname; dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const pkg = path.join(dir, 'package.json');
    if (fs.existsSync(pkg) && JSON.parse(fs.readFileSync(pkg, 'utf8')).name === 'mcp-host') return dir;
  }
  throw new Error('cannot find the mcp-host repository above the test bundle');
}

export const serverScript = (name: 'server-everything' | 'server-filesystem') =>
  path.join(repoRoot(), 'node_modules', '@modelcontextprotocol', name, 'dist', 'index.js');

/** A settings entry for the v2-SDK fixture over stdio (test/fixtures/v2-server.mjs), which speaks 2026-07-28 under protocol "auto". */
export const v2ServerEntry = (extra: Record<string, unknown> = {}) => ({
  command: 'node',
  args: [path.join(repoRoot(), 'test', 'fixtures', 'v2-server.mjs'), 'stdio'],
  ...extra,
});

/** The public API, as any extension gets it. */
export async function publicApi(): Promise<McpHostApi> {
  const ext = vscode.extensions.all.find((e) => e.packageJSON.name === 'mcp-host');
  if (!ext) throw new Error('the MCP Host extension is not installed');
  return (await ext.activate()) as McpHostApi;
}

/** The host's internals: the exports carry them only because the harness set MCP_HOST_TEST_SEAM=1. */
export async function api(): Promise<McpHostTestSeam> {
  const exported = (await publicApi()) as McpHostApi & { testing?: McpHostTestSeam };
  if (!exported.testing)
    throw new Error(
      'the extension exports no test seam: start the extension host with MCP_HOST_TEST_SEAM=1 (test/harness/run-vscode-tests.js does)',
    );
  return exported.testing;
}

/**
 * What VS Code wrote of the output channel `name` (e.g. "MCP Host Trace") to its files, which it
 * keeps beside the extension's own log folder (`logUri`); empty until the channel reached the disk.
 */
export function channelText(logUri: vscode.Uri, name: string): string {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      // VS Code leaves out of the file name the characters file systems refuse, such as ':'.
      else if (entry.name.endsWith(`${name.replace(/[\\/:*?"<>|]/g, '')}.log`)) found.push(full);
    }
  };
  walk(path.dirname(logUri.fsPath));
  return found.map((f) => fs.readFileSync(f, 'utf8')).join('\n');
}

export async function setServers(value: Record<string, unknown> | undefined, target = vscode.ConfigurationTarget.Global): Promise<void> {
  await vscode.workspace.getConfiguration('mcpHost').update('servers', value, target);
}

export async function waitFor<T>(
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  what: string,
  ms = 30_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export function running(a: McpHostTestSeam, name: string): Promise<ServerHandle> {
  return waitFor(
    () => {
      const h = a.host.registry.get(name);
      return h?.state.kind === 'running' && h;
    },
    `${name} to run (state: ${JSON.stringify(a.host.registry.get(name)?.state)})`,
  );
}

/**
 * A suite's before(): server-everything over stdio as the only user-settings server, named `name`,
 * its launch allowed, and running.
 */
export async function startEverything(name: string): Promise<ServerHandle> {
  const a = await api();
  a.ui.allowLaunch = async () => 'allow';
  await setServers({ [name]: { command: 'node', args: [serverScript('server-everything'), 'stdio'] } });
  return running(a, name);
}

/**
 * chat.mcp.allowedServers / deniedServers are policy settings VS Code does not register for
 * `update()` ("not a registered configuration"), but it reads them from the user's settings.json as
 * well as from a policy: the test writes them there, through the settings file's own editor.
 */
export async function setChatMcpRules(rules: { allowedServers?: unknown; deniedServers?: unknown }): Promise<void> {
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
