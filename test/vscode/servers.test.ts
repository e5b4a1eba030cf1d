import { strict as assert } from 'node:assert';
import * as vscode from 'vscode';
import type { TreeNode } from '../../src/vscode/tree/nodes';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { env } from './harnessEnv';
import { api, repoRoot, running, serverScript, setServers, v2ServerEntry, waitFor } from './helpers';
import { launchHash, parseServerDefinitions } from '../../src/core';

const everything = () => ({ command: 'node', args: [serverScript('server-everything'), 'stdio'] });
const filesystem = (dir: string) => ({ command: 'node', args: [serverScript('server-filesystem'), dir] });
const folder = () => vscode.workspace.workspaceFolders![0];
const text = (r: { content: Array<{ type: string; text?: string }> }) => r.content.map((c) => c.text ?? '').join('\n');

describe('servers from settings in a real VS Code', function () {
  this.timeout(120_000);

  before(async () => {
    const a = await api();
    a.ui.allowLaunch = async () => 'allow';
    a.ui.confirmTool = async () => 'once';
  });
  after(async () => setServers(undefined));

  it('starts the servers the settings define and shows them in the tree', async () => {
    const a = await api();
    await setServers({ everything: everything(), filesystem: filesystem(folder().uri.fsPath) });
    const ev = await running(a, 'everything');
    await running(a, 'filesystem');

    const roots = a.tree.getChildren() as TreeNode[];
    assert.deepEqual(
      roots
        .filter((n) => n.kind === 'server')
        .map((n) => (n as { server: { name: string } }).server.name)
        .sort(),
      ['everything', 'filesystem'],
    );
    const evNode = roots.find((n) => n.kind === 'server' && n.server === ev)!;
    assert.match(String(a.tree.getTreeItem(evNode).description), /^running · 2025-11-25 · \d+ tools$/);
    const groups = a.tree.getChildren(evNode) as TreeNode[];
    assert.deepEqual(
      groups.map((g) => (g as { group: string }).group),
      ['tools', 'prompts', 'resources', 'templates'],
    );
    const tools = await waitFor(() => {
      const t = a.tree.getChildren(groups[0]) as TreeNode[];
      return t.length > 0 && t;
    }, 'tools in the tree');
    assert.ok(tools.some((t) => t.kind === 'tool' && t.tool.name === 'echo'));
    const echo = tools.find((t) => t.kind === 'tool' && t.tool.name === 'echo')!;
    assert.equal(a.tree.getTreeItem(echo).contextValue, 'tool');
  });

  it("shows each server's protocol era and how it was chosen, and remembers it for the next start", async () => {
    const a = await api();
    const v2 = v2ServerEntry();
    await setServers({ everything: everything(), filesystem: filesystem(folder().uri.fsPath), v2 });
    const modern = await running(a, 'v2');
    const legacy = await running(a, 'everything');
    const item = (server: typeof modern) => a.tree.getTreeItem({ kind: 'server', server });
    assert.match(String(item(modern).description), /^running · 2026-07-28 stateless · \d+ tools$/);
    assert.match((item(modern).tooltip as vscode.MarkdownString).value, /protocol 2026-07-28 \(stateless, answered server\/discover\)/);
    assert.match(
      (item(legacy).tooltip as vscode.MarkdownString).value,
      /protocol 2025-11-25 \(session with initialize, (did not answer server\/discover|remembered from an earlier start)\)/,
    );
    // Remembered in the host's shared store (kept in the global state): everything's next start skips the probe.
    assert.ok(a.host.eraVerdicts.entries().some(([, v]) => v.era === 'modern' && v.version === '2026-07-28'));
    await legacy.restart();
    assert.equal(legacy.eraDecision, 'remembered');
    assert.match((item(legacy).tooltip as vscode.MarkdownString).value, /remembered from an earlier start/);
    await setServers({ everything: everything(), filesystem: filesystem(folder().uri.fsPath) });
  });

  it('restarts exactly the server whose definition changed', async () => {
    const a = await api();
    const ev = await running(a, 'everything');
    const fsBefore = await running(a, 'filesystem');
    const evPid = ev.pid;
    const fsPid = fsBefore.pid;
    await setServers({ everything: everything(), filesystem: { ...filesystem(folder().uri.fsPath), env: { MCP_HOST_CHANGED: '1' } } });
    const fsAfter = await waitFor(() => {
      const h = a.host.registry.get('filesystem');
      return h !== fsBefore && h?.state.kind === 'running' && h;
    }, 'the changed server to restart');
    assert.notEqual(fsAfter.pid, fsPid);
    assert.equal(a.host.registry.get('everything'), ev, 'the unchanged server kept its handle');
    assert.equal(ev.pid, evPid, 'and its process');
    assert.equal(ev.state.kind, 'running');
  });

  it('reports an invalid entry while the others run', async () => {
    const a = await api();
    await setServers({ everything: everything(), broken: { args: ['no command'] }, wrong: { type: 'http', url: 'not a url' } });
    await waitFor(() => a.host.diagnostics.length === 2, 'two diagnostics');
    const byName = Object.fromEntries(a.host.diagnostics.map((d) => [d.name, d.message]));
    assert.match(byName.broken, /required property 'command'/);
    assert.match(byName.wrong, /url must match pattern/);
    await running(a, 'everything');
    const nodes = a.tree.getChildren() as TreeNode[];
    const invalid = nodes.filter((n) => n.kind === 'invalid');
    assert.equal(invalid.length, 2);
    assert.match(String(a.tree.getTreeItem(invalid[0]).description), /^invalid: /);
    assert.equal(a.host.registry.get('filesystem'), undefined, 'the removed server is gone');
  });

  it('answers roots/list with the workspace folders', async () => {
    const a = await api();
    const ev = await running(a, 'everything');
    const roots = await waitFor(async () => {
      await ev.refresh('tools');
      return ev.tools.some((t) => t.name === 'get-roots-list');
    }, 'get-roots-list');
    assert.ok(roots);
    const { result } = await ev.rawClient!.callTool('get-roots-list', {});
    assert.ok(text(result).includes(folder().uri.toString()), text(result));
    assert.ok(text(result).includes(folder().name));
  });

  it('tells servers when a workspace folder is added, and they see the new root', async () => {
    const a = await api();
    await setServers({ everything: everything(), filesystem: filesystem(folder().uri.fsPath) });
    const ev = await running(a, 'everything');
    const fsServer = await running(a, 'filesystem');
    const added = path.join(env.out, `added-root-${Date.now()}`);
    fs.mkdirSync(added, { recursive: true });
    const addedUri = vscode.Uri.file(added);
    const allowed = async () => text((await fsServer.rawClient!.callTool('list_allowed_directories', {})).result);
    assert.ok(!(await allowed()).includes(added));
    assert.ok(vscode.workspace.updateWorkspaceFolders(vscode.workspace.workspaceFolders!.length, 0, { uri: addedUri, name: 'added' }));
    try {
      await waitFor(async () => (await allowed()).includes(added), 'server-filesystem to allow the new folder');
      await waitFor(
        async () => text((await ev.rawClient!.callTool('get-roots-list', {})).result).includes(addedUri.toString()),
        'server-everything to list the new root',
      );
    } finally {
      const index = vscode.workspace.workspaceFolders!.findIndex((f) => f.uri.fsPath === added);
      if (index >= 0) vscode.workspace.updateWorkspaceFolders(index, 1);
    }
  });

  it('moves a killed server to error and restarts it', async () => {
    const a = await api();
    const ev = await running(a, 'everything');
    const pid = ev.pid!;
    process.kill(pid, 'SIGKILL');
    await waitFor(() => ev.state.kind === 'error', 'the error state', 10_000);
    assert.ok(ev.state.kind === 'error' && /killed by SIGKILL/.test(ev.state.message));
    await waitFor(() => ev.state.kind === 'running', 'the automatic restart', 20_000);
    assert.notEqual(ev.pid, pid);
  });

  it('asks before the first start of a workspace-defined command, keyed by the definition', async () => {
    const a = await api();
    await setServers(undefined);
    const asked: string[] = [];
    a.ui.allowLaunch = async ({ commandLine }) => {
      asked.push(commandLine ?? '');
      return 'cancel';
    };
    await setServers({ ws: everything() }, vscode.ConfigurationTarget.Workspace);
    await waitFor(() => a.host.registry.get('ws')?.state.kind === 'error', 'the refused start');
    assert.equal(asked.length, 1);
    assert.ok(asked[0].includes('server-everything'), asked[0]);
    assert.match((a.host.registry.get('ws')!.state as { message: string }).message, /not allowed/);

    a.ui.allowLaunch = async () => 'always';
    await a.host.registry.get('ws')!.start();
    assert.equal(a.host.registry.get('ws')!.state.kind, 'running');
    let askedAgain = false;
    a.ui.allowLaunch = async () => {
      askedAgain = true;
      return 'cancel';
    };
    await a.host.registry.get('ws')!.restart();
    assert.equal(askedAgain, false, '"always" is remembered for the same definition');
    await setServers({ ws: { ...everything(), args: [...everything().args, '--changed'] } }, vscode.ConfigurationTarget.Workspace);
    await waitFor(() => askedAgain, 'a changed command to ask again');
    await setServers(undefined, vscode.ConfigurationTarget.Workspace);
    a.ui.allowLaunch = async () => 'allow';
  });

  it('applies a reload after one that failed, and reloads without waiting for a server whose initialize hangs', async () => {
    const a = await api();
    const trusted = a.host.workspaceTrusted;
    a.host.workspaceTrusted = () => {
      throw new Error('reading the trust failed (test)');
    };
    await a.host.reload().catch(() => undefined);
    a.host.workspaceTrusted = trusted;
    // Reads initialize and never answers: only a stop ends its start.
    const hanging = {
      command: 'node',
      args: [path.join(repoRoot(), 'test', 'fixtures', 'raw-server.mjs'), 'hang-initialize'],
      protocol: '2025-11-25',
      startupTimeoutMs: 600_000,
    };
    await setServers({ hanging });
    await a.host.reload();
    const slow = await waitFor(() => a.host.registry.get('hanging'), 'the reload after the failed one to add the server');
    await waitFor(() => slow.state.kind === 'starting', 'the hanging server to be starting');
    await setServers({ hanging, everything: everything() });
    await a.host.reload();
    assert.equal(slow.state.kind, 'starting', 'the reload was done while it still starts');
    await running(a, 'everything');
    await setServers({ everything: everything() });
    await a.host.reload();
    assert.equal(slow.state.kind, 'stopped', 'removing it ended its start');
  });

  it('keeps both "always allow" answers given while two launch prompts were open', async () => {
    const a = await api();
    const answer: Array<() => void> = [];
    a.ui.allowLaunch = () => new Promise((resolve) => answer.push(() => resolve('always')));
    const unique = Date.now();
    const [first, second] = parseServerDefinitions(
      { one: { command: 'node', args: [`one-${unique}`] }, two: { command: 'node', args: [`two-${unique}`] } },
      { scope: 'workspace' },
    ).definitions;
    const checks = [a.host.consent.check(first, undefined), a.host.consent.check(second, undefined)];
    await waitFor(() => answer.length === 2, 'both prompts');
    for (const give of answer) give();
    await Promise.all(checks);
    const stored = (a.host.consent as unknown as { workspaceState: vscode.Memento }).workspaceState.get<string[]>(
      'mcpHost.allowedLaunches',
      [],
    );
    assert.ok(stored.includes(launchHash(first)), 'the first answer is kept');
    assert.ok(stored.includes(launchHash(second)), 'the second answer is kept');
    a.ui.allowLaunch = async () => 'allow';
  });
});
