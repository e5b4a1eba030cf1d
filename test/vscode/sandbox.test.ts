import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { AuditRecord, LaunchSummary, SandboxBlocked, ServerHandle } from '../../src/core';
import { consentDetail } from '../../src/vscode/policy/consent';
import type { TreeNode } from '../../src/vscode/tree/nodes';
import { serverTooltip } from '../../src/vscode/tree/serversTree';
import type { HostUi } from '../../src/vscode/ui/hostUi';
import { SandboxFallback } from '../../src/vscode/policy/sandboxFallback';
import { heldMountPoints, PROTECTED_NAMES } from '../../src/core/servers/sandbox/protected';
import { thisHost } from '../../src/core/servers/sandbox/reach';
import { api, repoRoot, running, setServers, waitFor } from './helpers';

const HOSTILE = () => path.join(repoRoot(), 'test', 'fixtures', 'hostile-sandbox-server.mjs');
/** A path as the consent shortens it: `~/` for the home. */
const short = (p: string) => (p.startsWith(os.homedir() + path.sep) ? `~${p.slice(os.homedir().length)}` : p);
/** The mount points' registry of this machine (src/core/servers/sandbox/protected.ts). */
const MOUNTS = () => path.join(thisHost().sandboxCache!, 'mounts');
/** The protected names a launch may make at the top of a root that has none of them: the first folder of each, `.git` and `HEAD`. */
const protectedTopNames = () => [...new Set([...PROTECTED_NAMES.map((p) => p.name.split('/')[0]), '.git', 'HEAD'])];
const answer = (r: { content: Array<{ type: string; text?: string }> }): unknown => JSON.parse(r.content[0].text ?? 'null');

describe('sandbox: a stdio server with sandboxEnabled', function () {
  this.timeout(90_000);
  let outside: string;
  let inside: string;

  before(() => {
    outside = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-vscode-sandbox-'));
    fs.writeFileSync(path.join(outside, 'secret.txt'), 'outside secret');
    inside = vscode.workspace.workspaceFolders![0].uri.fsPath;
  });
  after(async () => {
    await setServers(undefined);
    await setServers(undefined, vscode.ConfigurationTarget.Workspace);
    fs.rmSync(outside, { recursive: true, force: true });
    fs.rmSync(path.join(inside, 'made-inside.txt'), { force: true });
  });

  it('reads and writes only the roots; an unsandboxed server beside it reads outside', async function () {
    if (process.platform !== 'linux') this.skip();
    const a = await api();
    const env = { HOSTILE_OUTSIDE: outside, HOSTILE_INSIDE: inside };
    await setServers({
      boxed: { command: 'node', args: [HOSTILE()], env, sandboxEnabled: true },
      open: { command: 'node', args: [HOSTILE()], env, sandboxEnabled: false },
    });
    const open = await running(a, 'open');
    assert.deepEqual(answer((await open.rawClient!.callTool('read_outside', {})).result), { ok: true, value: 'outside secret' });
    const boxed = await running(a, 'boxed');
    assert.equal((answer((await boxed.rawClient!.callTool('read_outside', {})).result) as { ok: boolean }).ok, false);
    assert.equal((answer((await boxed.rawClient!.callTool('write_outside', {})).result) as { ok: boolean }).ok, false);
    assert.ok(!fs.existsSync(path.join(outside, 'pwned.txt')));
    assert.deepEqual(answer((await boxed.rawClient!.callTool('write_inside', {})).result), { ok: true });
    assert.equal(fs.readFileSync(path.join(inside, 'made-inside.txt'), 'utf8'), 'inside');
    assert.equal((answer((await boxed.rawClient!.callTool('capabilities', {})).result) as { capEff: string }).capEff, '0000000000000000');
    // Neither server sees the extension host's VS Code hooks (there are some in its environment).
    assert.ok(Object.keys(process.env).some((k) => k.startsWith('VSCODE_')));
    for (const s of [open, boxed]) assert.deepEqual(answer((await s.rawClient!.callTool('editor_hooks', {})).result), []);
  });

  it('network.allowedDomains: an allowed name reaches a server on 127.0.0.1 through the proxy; a refused one is named by the event', async function () {
    if (process.platform !== 'linux') this.skip();
    const a = await api();
    const asked: string[] = [];
    const origin = http.createServer((req, res) => {
      asked.push(`${req.headers.host} ${req.url}`);
      res.end('origin answered');
    });
    await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
    const port = (origin.address() as net.AddressInfo).port;
    const blocked: SandboxBlocked[] = [];
    const listening = a.host.onSandboxBlocked((b) => blocked.push(b));
    const told: string[] = [];
    const notify = a.ui.notify;
    a.ui.notify = async (_severity, message) => (told.push(message), undefined);
    try {
      const network = { allowedDomains: ['localhost'] };
      await setServers({
        reaches: {
          command: 'node',
          args: [HOSTILE()],
          env: { HOSTILE_URL: `http://localhost:${port}/in` },
          sandboxEnabled: true,
          sandbox: { network },
        },
        refused: {
          command: 'node',
          args: [HOSTILE()],
          env: { HOSTILE_URL: `http://127.0.0.1:${port}/past` },
          sandboxEnabled: true,
          sandbox: { network },
        },
      });
      const reaches = await running(a, 'reaches');
      assert.match(serverTooltip(reaches, (t) => t).value, /connects only to localhost, through MCP Host's proxy/);
      assert.deepEqual(answer((await reaches.rawClient!.callTool('proxy_get', {})).result), {
        ok: true,
        status: 200,
        body: 'origin answered',
      });
      const refused = await running(a, 'refused');
      assert.equal((answer((await refused.rawClient!.callTool('proxy_get', {})).result) as { status: number }).status, 403);
      assert.deepEqual(asked, [`localhost:${port} /in`]);
      assert.deepEqual(
        blocked.map((b) => b.message),
        [`sandbox blocked 127.0.0.1:${port}: add "127.0.0.1" to sandbox.network.allowedDomains of server "refused"`],
      );
      // The person is told too, once per host, with the setting that allows it.
      await waitFor(
        () => told.some((t) => t.includes('"refused"') && t.includes('sandbox.network.allowedDomains')),
        'a notification of the refusal',
      );
      await refused.rawClient!.callTool('proxy_get', {});
      assert.equal(told.filter((t) => t.includes('"refused"')).length, 1, told.join('\n'));
    } finally {
      a.ui.notify = notify;
      listening.dispose();
      origin.close();
    }
  });

  it('a workspace server started with the defaults is sandboxed: the consent and the tree say so, and it cannot read outside', async function () {
    if (process.platform !== 'linux') this.skip();
    const a = await api();
    const saved = a.ui.allowLaunch;
    const asked: LaunchSummary[] = [];
    a.ui.allowLaunch = async (launch) => {
      asked.push(launch);
      return 'allow';
    };
    try {
      await setServers(
        { 'ws-boxed': { command: 'node', args: [HOSTILE()], env: { HOSTILE_OUTSIDE: outside, HOSTILE_INSIDE: inside } } },
        vscode.ConfigurationTarget.Workspace,
      );
      const s = await running(a, 'ws-boxed');
      await waitFor(() => asked.length > 0, 'the consent');
      // The limits computed for this machine: the workspace folder read-write, no network.
      const detail = consentDetail(asked[0]);
      assert.match(detail, /sandboxed: reads and writes [^\n]*, network: none/, detail);
      assert.ok(detail.includes(`${short(inside)}/`), detail);
      const item = a.tree.getTreeItem({ kind: 'server', server: s } as TreeNode);
      assert.match(String(item.description), /^sandboxed · /);
      const tooltip = (item.tooltip as vscode.MarkdownString).value;
      assert.match(tooltip, /Reads and writes: [^\n]*/, tooltip);
      assert.ok(tooltip.includes(path.basename(inside)), tooltip);
      assert.match(tooltip, / · Reads: /, tooltip);
      // One paragraph: the tooltip stays a few lines (ux.test.ts).
      assert.ok(tooltip.split('\n').filter(Boolean).length <= 4, tooltip);
      assert.match(tooltip, /Network: none/, tooltip);
      assert.equal((answer((await s.rawClient!.callTool('read_outside', {})).result) as { ok: boolean }).ok, false);
    } finally {
      a.ui.allowLaunch = saved;
    }
  });

  it('a workspace server (sandboxed by default) cannot write the files that run later; a plain file is written; VS Code still writes its settings; nothing is left behind', async function () {
    if (process.platform !== 'linux') this.skip();
    const a = await api();
    const saved = a.ui.allowLaunch;
    a.ui.allowLaunch = async () => 'allow';
    // The only sandbox on this folder: the mount points of the names that do not exist are shared by every sandbox that uses them,
    // so every server of the window (any scope, left by an earlier test) is stopped first, and its sandbox released: a removed
    // server leaves the registry at once while its stop (and the release of its mount points) runs on.
    await setServers(undefined);
    await setServers(undefined, vscode.ConfigurationTarget.Workspace);
    await waitFor(() => a.host.registry.all.every((h) => h.state.kind === 'stopped' || h.state.kind === 'error'), 'every server stopped');
    const folders = [inside, fs.realpathSync(inside)];
    const held = () => [...heldMountPoints(MOUNTS())].filter((p) => folders.some((f) => p === f || p.startsWith(f + path.sep)));
    await waitFor(() => held().length === 0, 'no sandbox binding the workspace folder');
    const files = (dir: string): string[] =>
      fs
        .readdirSync(dir, { withFileTypes: true, recursive: true })
        .map((e) => {
          const p = path.join(e.parentPath, e.name);
          return e.isFile() ? `${path.relative(dir, p)} ${fs.readFileSync(p, 'utf8')}` : `${path.relative(dir, p)}/`;
        })
        .sort();
    // What the folder holds before the launch; the protected names missing from it are made for the launch and go after it.
    const atStart = files(inside);
    const missing = protectedTopNames().filter((name) => !fs.existsSync(path.join(inside, name)));
    // The fixture workspace has its .vscode/ and nothing else protected: an earlier suite's leftovers would hide what this launch leaves.
    assert.deepEqual(
      protectedTopNames().filter((name) => !missing.includes(name)),
      ['.vscode'],
      `protected names in the folder before the launch: ${atStart.join(', ')}`,
    );
    try {
      await setServers(
        { 'ws-writer': { command: 'node', args: [HOSTILE()], env: { HOSTILE_PROTECT: inside } } },
        vscode.ConfigurationTarget.Workspace,
      );
      const s = await running(a, 'ws-writer');
      for (const name of missing) assert.ok(fs.existsSync(path.join(inside, name)), `${name}: a mount point while the server runs`);
      const before = files(inside);
      const results = answer((await s.rawClient!.callTool('write_protected', {})).result) as Record<string, Record<string, string>>;
      for (const [file, outcome] of Object.entries(results[inside]))
        if (file === 'plain-by-server.txt') assert.equal(outcome, 'written');
        else assert.notEqual(outcome, 'written', file);
      assert.match(fs.readFileSync(path.join(inside, 'plain-by-server.txt'), 'utf8'), /written by the sandboxed server/);
      fs.rmSync(path.join(inside, 'plain-by-server.txt'));
      assert.deepEqual(files(inside), before, 'every file as it was, on the host');
      // The editor writes into the protected folder on the host while the server runs: a folder, not a file, stands there.
      const folderFiles = vscode.workspace.getConfiguration('files', vscode.workspace.workspaceFolders![0].uri);
      await folderFiles.update('autoSave', 'afterDelay', vscode.ConfigurationTarget.WorkspaceFolder);
      assert.match(fs.readFileSync(path.join(inside, '.vscode', 'settings.json'), 'utf8'), /"files.autoSave": "afterDelay"/);
      await folderFiles.update('autoSave', 'off', vscode.ConfigurationTarget.WorkspaceFolder);
      await setServers(undefined, vscode.ConfigurationTarget.Workspace);
      // Stopped: every mount point this launch made is gone, and the folder holds exactly what it held before the launch.
      await waitFor(
        () => held().length === 0 && missing.every((name) => !fs.existsSync(path.join(inside, name))),
        'the mount points removed',
      ).catch((e: Error) => {
        // Which launches still hold them: the registry's claims (src/core/servers/sandbox/protected.ts).
        const claims = fs.existsSync(MOUNTS())
          ? fs.readdirSync(MOUNTS()).map((f) => `${f}: ${fs.readFileSync(path.join(MOUNTS(), f), 'utf8').slice(0, 300)}`)
          : [];
        throw new Error(
          `${e.message}; left: ${missing.filter((name) => fs.existsSync(path.join(inside, name))).join(', ')}; servers: ${a.host.registry.all
            .map((h) => `${h.definition.name} ${h.state.kind}`)
            .join(', ')}; registry: ${claims.join(' | ')}`,
        );
      });
      assert.deepEqual(files(inside), atStart, 'the workspace folder as it was before the launch');
    } finally {
      a.ui.allowLaunch = saved;
    }
  });

  describe('what the person is told', () => {
    const saved: Partial<HostUi> = {};
    const told: string[] = [];
    before(async () => {
      const a = await api();
      Object.assign(saved, { notify: a.ui.notify, confirmTool: a.ui.confirmTool, allowLaunch: a.ui.allowLaunch });
      a.ui.notify = async (_severity, message) => (told.push(message), undefined);
      a.ui.confirmTool = async () => 'once';
      a.ui.allowLaunch = async () => 'allow';
    });
    afterEach(async () => {
      told.splice(0);
      await vscode.workspace.getConfiguration('mcpHost').update('roots.extra', undefined, vscode.ConfigurationTarget.Global);
      await setServers(undefined);
      await setServers(undefined, vscode.ConfigurationTarget.Workspace);
    });
    after(async () => Object.assign((await api()).ui, saved));

    const call = async (s: ServerHandle, tool: string) =>
      (await api()).tools.call(
        s,
        s.tools.find((t) => t.name === tool)!,
        {},
      );

    it('a path the sandbox hid is named with the setting that allows it; a lie about a path inside, or one that does not exist, is not', async function () {
      if (process.platform !== 'linux') this.skip();
      const a = await api();
      await setServers(
        { 'ws-told': { command: 'node', args: [HOSTILE()], env: { HOSTILE_OUTSIDE: outside, HOSTILE_INSIDE: inside } } },
        vscode.ConfigurationTarget.Workspace,
      );
      const s = await running(a, 'ws-told');
      // Its action opens the server's entry in the settings file it is defined in.
      a.ui.notify = async (_severity, message, ...actions) => {
        told.push(message);
        return message.includes('secret.txt') ? actions.find((x) => x === 'Open Its Settings') : undefined;
      };
      fs.writeFileSync(path.join(inside, 'made-inside.txt'), 'inside');
      assert.equal((await call(s, 'fail_naming'))?.outcome, 'isError');
      assert.equal((await call(s, 'fail_outside'))?.outcome, 'isError');
      const message = await waitFor(() => told.find((m) => m.includes('secret.txt')), 'the blocked-path message');
      assert.match(message, /The sandbox hid .*secret\.txt from the MCP server "ws-told"/, message);
      assert.match(message, /"roots" of its entry/, message);
      assert.match(message, /sandbox\.filesystem\.allowWrite/, message);
      await waitFor(() => {
        const editor = vscode.window.activeTextEditor;
        return editor?.document.getText(editor.selection).includes('"ws-told"');
      }, 'its entry selected in the settings file');
      await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
      // The hostile lies (a file inside the roots, a file that does not exist) were never told.
      assert.deepEqual(
        told.filter((m) => m.includes('made-inside') || m.includes('no-such-file')),
        [],
      );
      // Its audit records name the sandbox it ran in.
      await a.host.auditWritten();
      const records = fs
        .readFileSync(a.host.auditFile, 'utf8')
        .split('\n')
        .filter((l) => l.includes('"ws-told"'))
        .map((l) => JSON.parse(l) as AuditRecord);
      const call_ = records.find((r) => r.method === 'tools/call' && r.name === 'fail_outside');
      assert.ok(call_?.server.sandbox, JSON.stringify(records));
      assert.ok(call_.server.sandbox.readWrite.includes(fs.realpathSync(inside)), JSON.stringify(call_.server.sandbox));
      assert.deepEqual(call_.server.sandbox.network, []);
    });

    it('an unsandboxed server: no sandbox in its audit records', async function () {
      if (process.platform !== 'linux') this.skip();
      const a = await api();
      await setServers({ 'user-open': { command: 'node', args: [HOSTILE()], env: { HOSTILE_OUTSIDE: outside }, sandboxEnabled: false } });
      const s = await running(a, 'user-open');
      assert.equal((await call(s, 'read_outside'))?.outcome, 'ok');
      await a.host.auditWritten();
      const record = fs
        .readFileSync(a.host.auditFile, 'utf8')
        .split('\n')
        .filter((l) => l.includes('"user-open"'))
        .map((l) => JSON.parse(l) as AuditRecord)
        .find((r) => r.method === 'tools/call');
      assert.ok(record && !('sandbox' in record.server), JSON.stringify(record));
    });

    it('roots that change under a running sandbox: named, with Restart, which widens it', async function () {
      if (process.platform !== 'linux') this.skip();
      const a = await api();
      await setServers({ 'boxed-roots': { command: 'node', args: [HOSTILE()], env: { HOSTILE_OUTSIDE: outside }, sandboxEnabled: true } });
      const s = await running(a, 'boxed-roots');
      assert.equal((answer((await s.rawClient!.callTool('read_outside', {})).result) as { ok: boolean }).ok, false);
      a.ui.notify = async (_severity, message, ...actions) => {
        told.push(message);
        return message.includes('roots changed') ? actions.find((x) => x === 'Restart') : undefined;
      };
      await vscode.workspace.getConfiguration('mcpHost').update('roots.extra', [outside], vscode.ConfigurationTarget.Global);
      const message = await waitFor(() => told.find((m) => m.includes('roots changed')), 'the roots message');
      assert.match(message, /"boxed-roots"/, message);
      // Restarted with the new roots: the folder it could not read is now inside its sandbox.
      await waitFor(async () => {
        const again = a.host.registry.get('boxed-roots');
        if (again?.state.kind !== 'running' || !again.rawClient) return false;
        try {
          return (answer((await again.rawClient.callTool('read_outside', {})).result) as { ok: boolean }).ok;
        } catch {
          return false;
        }
      }, 'the restarted server reading the new root');
    });
  });

  it('a machine with no sandbox and mcpHost.sandbox.default "workspace": asked once which servers start unsandboxed, never one whose entry asks for a sandbox', async function () {
    if (process.platform !== 'linux') this.skip();
    const a = await api();
    const saved = { machine: a.host.sandboxMachine, ask: a.ui.startWithoutSandbox, allowLaunch: a.ui.allowLaunch };
    const asked: Array<[string, string[]]> = [];
    a.ui.startWithoutSandbox = async (reason, servers) => (asked.push([reason, servers]), 'unsandboxed');
    a.ui.allowLaunch = async () => 'allow';
    a.host.sandboxMachine = () => ({ ok: false, reason: 'No sandbox on this machine (simulated): install bubblewrap' });
    const env = { HOSTILE_OUTSIDE: outside, HOSTILE_INSIDE: inside };
    try {
      // Only the servers of this test: the workspace's earlier ones would be in the question.
      await setServers(undefined, vscode.ConfigurationTarget.Workspace);
      await vscode.workspace.getConfiguration('mcpHost').update('sandbox.default', 'workspace', vscode.ConfigurationTarget.Global);
      await setServers(
        {
          'ws-plain': { command: 'node', args: [HOSTILE()], env },
          'ws-asks': { command: 'node', args: [HOSTILE()], env, sandboxEnabled: true },
        },
        vscode.ConfigurationTarget.Workspace,
      );
      await waitFor(() => asked.length > 0, 'the question');
      assert.deepEqual(asked[0], ['No sandbox on this machine (simulated): install bubblewrap', ['ws-plain']]);
      // The person chose: it starts unsandboxed, and reads outside the roots as any unsandboxed server does.
      await waitFor(async () => {
        const s = a.host.registry.get('ws-plain');
        if (s?.state.kind !== 'running' || !s.rawClient || s.definition.type !== 'stdio' || s.definition.sandboxEnabled) return false;
        return (answer((await s.rawClient.callTool('read_outside', {})).result) as { ok: boolean }).ok;
      }, 'ws-plain unsandboxed');
      const asks = a.host.registry.get('ws-asks')!.definition;
      assert.equal(asks.type === 'stdio' && asks.sandboxEnabled, true, 'an entry that asks for a sandbox keeps it');
      assert.equal(asked.length, 1, 'asked once');
    } finally {
      Object.assign(a.ui, { startWithoutSandbox: saved.ask, allowLaunch: saved.allowLaunch });
      a.host.sandboxMachine = saved.machine;
      await vscode.workspace.getConfiguration('mcpHost').update('sandbox.default', undefined, vscode.ConfigurationTarget.Global);
      await setServers(undefined, vscode.ConfigurationTarget.Workspace);
    }
  });

  it('a machine with no sandbox: asked once, with the reason; the answer is kept for the machine, a dismissal until the window reloads', async () => {
    const stored = new Map<string, unknown>();
    const memento = {
      keys: () => [...stored.keys()],
      get: <T>(key: string, fallback?: T) => (stored.has(key) ? (stored.get(key) as T) : fallback),
      update: async (key: string, value: unknown) => void stored.set(key, value),
    } as vscode.Memento;
    const asked: Array<[string, string[]]> = [];
    let reply: 'unsandboxed' | 'refuse' | undefined = undefined;
    const ui = { startWithoutSandbox: async (reason: string, servers: string[]) => (asked.push([reason, servers]), reply) } as HostUi;
    const reason =
      'No sandbox on this machine: bubblewrap (bwrap) is not installed; install bubblewrap (Debian, Ubuntu: sudo apt install bubblewrap)';

    const dismissed = new SandboxFallback(memento, ui);
    assert.equal(await dismissed.ask(reason, ['repo']), false);
    assert.equal(await dismissed.ask(reason, ['repo']), false, 'not asked again in this window');
    assert.equal(asked.length, 1);
    assert.equal(dismissed.unsandboxed, false);

    reply = 'unsandboxed';
    const next = new SandboxFallback(memento, ui);
    assert.equal(await next.ask(reason, ['repo']), true);
    assert.deepEqual(asked[1], [reason, ['repo']]);
    assert.equal(next.unsandboxed, true);
    assert.equal(await new SandboxFallback(memento, ui).ask(reason, ['repo']), false, 'answered once, per machine');
    assert.equal(new SandboxFallback(memento, ui).unsandboxed, true);
    assert.equal(asked.length, 2);
  });
});
