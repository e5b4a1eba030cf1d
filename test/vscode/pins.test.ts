import { strict as assert } from 'node:assert';
import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { AuditRecord, ServerHandle, Tool } from '../../src/core';
import type { AuditLog } from '../../src/core/policy/audit';
import type { ChangedDefinition } from '../../src/vscode/common/answers';
import type { TreeNode } from '../../src/vscode/tree/nodes';
import type { HostUi } from '../../src/vscode/ui/hostUi';
import { lockFileText, pinSet } from '../../src/core/policy/pins';
import { api, repoRoot, running, setServers, waitFor } from './helpers';

/** What VS Code 1.139 offers that @types/vscode 1.90 does not name. */
interface LmTools {
  tools: ReadonlyArray<{ name: string }>;
}
const lm = () => vscode.lm as unknown as LmTools;
const offered = (tool: string, server = 'pinned') => lm().tools.some((t) => new RegExp(`^mcp_${server}\\d*_${tool}$`).test(t.name));

describe('pinned tool definitions in a real VS Code: a changed tool is suspended until accepted', function () {
  this.timeout(180_000);
  let dir: string;
  let versionFile: string;
  let callLog: string;
  let saved: Pick<HostUi, 'confirmTool' | 'confirmChangedDefinition' | 'acceptDefinitionChanges' | 'allowLaunch' | 'notify'>;
  /** What reached the server: its own log of each tools/call. */
  const received = () =>
    fs.existsSync(callLog)
      ? fs
          .readFileSync(callLog, 'utf8')
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as { name: string; arguments: Record<string, unknown> })
      : [];
  const toolOf = (h: ServerHandle, name: string): Tool => h.tools.find((t) => t.name === name)!;
  /** A settings entry of the changing fixture: its version read from versionFile, each call it gets logged in callLog. */
  const changingServer = (extra: Record<string, unknown> = {}) => ({
    command: 'node',
    args: [path.join(repoRoot(), 'test', 'fixtures', 'changing-server.mjs')],
    env: { CHANGING_SERVER_FILE: versionFile, CHANGING_SERVER_CALL_LOG: callLog },
    ...extra,
  });

  before(async () => {
    const a = await api();
    saved = {
      confirmTool: a.ui.confirmTool,
      confirmChangedDefinition: a.ui.confirmChangedDefinition,
      acceptDefinitionChanges: a.ui.acceptDefinitionChanges,
      allowLaunch: a.ui.allowLaunch,
      notify: a.ui.notify,
    };
    a.ui.allowLaunch = async () => 'allow';
    // A folder of its own each run: the server's identity (its launch) is new, so no pin of an earlier run applies.
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-pins-vscode-'));
    versionFile = path.join(dir, 'version');
    callLog = path.join(dir, 'calls.jsonl');
  });
  after(async () => {
    const a = await api();
    Object.assign(a.ui, saved);
    await setServers(undefined);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('asks again for the always-allowed tool, drops its read-only trust, hides it from the chat, and Review Changes → Accept restores it', async () => {
    const a = await api();
    fs.writeFileSync(versionFile, '1');
    await setServers({
      pinned: changingServer({ trustAnnotations: true, shareWithChat: true }),
    });
    let h = await running(a, 'pinned');
    await waitFor(() => h.tools.length >= 3, 'the tools of version 1');

    // The chat is offered both (first, so VS Code's listing, which MCP Host records in the global state, is done before the
    // "always" answer is stored there: VS Code's Memento replaces its whole value on a storage event, and a late one can drop a key).
    assert.ok(a.sharing.available, 'this VS Code has no MCP server definition provider API');
    await waitFor(async () => {
      if (!offered('lookup')) await vscode.commands.executeCommand('workbench.mcp.startServer', '*', { waitForLiveTools: true });
      return offered('lookup') && offered('remove');
    }, 'lookup and remove in vscode.lm.tools');

    // The first listing is the baseline: lookup (read-only, annotations trusted) runs unasked; remove is confirmed once, "always".
    const asked: string[] = [];
    a.ui.confirmTool = async (_s, tool) => (asked.push(tool.name), tool.name === 'remove' ? 'always' : 'once');
    await a.tools.call(h, toolOf(h, 'remove'), { path: 'a' });
    await a.tools.call(h, toolOf(h, 'remove'), { path: 'b' });
    await a.tools.call(h, toolOf(h, 'lookup'), { word: 'a' });
    await a.tools.call(h, toolOf(h, 'lookup'), { word: 'b' });
    assert.deepEqual(asked, ['remove'], 'asked once: "always"');
    assert.equal(received().length, 4);

    // The server changes on its next start: lookup's description and schema, remove's annotations.
    fs.writeFileSync(versionFile, '2');
    await h.restart();
    h = await running(a, 'pinned');
    await waitFor(() => h.tools.some((t) => t.name === 'fresh'), 'the tools of version 2');

    const changes: ChangedDefinition[] = [];
    a.ui.confirmTool = async (_s, tool) => assert.fail(`${tool.name}: the changed-definition question replaces the confirmation`);
    a.ui.confirmChangedDefinition = async (_s, change) => (changes.push(change), 'cancel');
    assert.equal(await a.tools.call(h, toolOf(h, 'remove'), { path: 'c' }), undefined, 'the "always" answer no longer applies');
    assert.equal(await a.tools.call(h, toolOf(h, 'lookup'), { word: 'c' }), undefined, 'the read-only trust no longer applies');
    assert.deepEqual(changes, [
      { kind: 'tools', name: 'remove', changed: ['annotations'] },
      {
        kind: 'tools',
        name: 'lookup',
        changed: ['description', 'inputSchema'],
        // Its new description names a secret file: the question says what the scan found too.
        findings: [{ detector: 'sensitive-files', kind: 'tool', name: 'lookup', pointer: '/description', text: '.aws/credentials' }],
      },
    ]);
    assert.equal(received().length, 4, 'nothing refused reached the server');

    // A prompt whose definition changed asks first, from the palette too; cancelled, nothing reaches the server.
    const brief = h.prompts.find((p) => p.name === 'brief')!;
    assert.equal(await a.prompts.run({ server: h, prompt: brief }), undefined);
    assert.deepEqual(changes.at(-1), { kind: 'prompts', name: 'brief', changed: ['description'] });
    assert.equal(received().length, 4, 'the prompt was not got');

    // The tree marks both; the chat is not offered them (VS Code was sent tools/list_changed), the unchanged one still is.
    const toolsGroup = a.tree.getChildren({ kind: 'server', server: h }).find((n) => n.kind === 'group' && n.group === 'tools')!;
    const nodes = a.tree.getChildren(toolsGroup);
    const lookupNode = nodes.find((n) => n.kind === 'tool' && n.tool.name === 'lookup')!;
    const lookupItem = a.tree.getTreeItem(lookupNode);
    assert.equal(lookupItem.contextValue, 'tool.changed');
    assert.match(String(lookupItem.description), /changed since you approved it/);
    // The instructions changed too: pinned on the first run, marked on the server's row.
    assert.match(String(a.tree.getTreeItem({ kind: 'server', server: h }).description), /instructions changed since you approved them/);
    const steadyNode = nodes.find((n) => n.kind === 'tool' && n.tool.name === 'steady')!;
    assert.equal(a.tree.getTreeItem(steadyNode).contextValue, 'tool');
    await waitFor(() => !offered('lookup') && !offered('remove') && offered('steady'), 'lookup and remove gone from vscode.lm.tools');

    // A tool new on the server (read-only, annotations trusted) is not trusted until used once.
    const firstLook: string[] = [];
    a.ui.confirmTool = async (_s, tool) => (firstLook.push(tool.name), 'once');
    await a.tools.call(h, toolOf(h, 'fresh'), {});
    await a.tools.call(h, toolOf(h, 'fresh'), {});
    assert.deepEqual(firstLook, ['fresh']);
    a.ui.confirmTool = async (_s, tool) => assert.fail(`${tool.name}: accepted and read-only, it needs no confirmation`);

    // Review Changes on lookup: the diff editor shows the approved definition beside the new one; Accept.
    const reviewed: ChangedDefinition[][] = [];
    a.ui.acceptDefinitionChanges = async (_s, c) => (reviewed.push(c), 'accept');
    await vscode.commands.executeCommand('mcpHost.reviewChanges', lookupNode satisfies TreeNode);
    assert.deepEqual(reviewed, [[{ kind: 'tools', name: 'lookup', changed: ['description', 'inputSchema'] }]]);
    const diff = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
    assert.ok(diff instanceof vscode.TabInputTextDiff, 'a diff editor is open');
    const [before, after] = await Promise.all([
      vscode.workspace.openTextDocument(diff.original),
      vscode.workspace.openTextDocument(diff.modified),
    ]);
    assert.match(before.getText(), /"description": "Looks up a word\."/);
    assert.doesNotMatch(before.getText(), /aws/);
    assert.match(after.getText(), /read ~\/\.aws\/credentials/);
    await vscode.commands.executeCommand('workbench.action.closeActiveEditor');

    // Accepted: trusted read-only again, offered to the chat again; remove stays suspended.
    await a.tools.call(h, toolOf(h, 'lookup'), { word: 'd' });
    assert.deepEqual(received().at(-1), { method: 'tools/call', name: 'lookup', arguments: { word: 'd' } });
    await waitFor(async () => {
      if (!offered('lookup')) await vscode.commands.executeCommand('workbench.mcp.startServer', '*', { waitForLiveTools: true });
      return offered('lookup');
    }, 'lookup back in vscode.lm.tools');
    assert.ok(!offered('remove'));
    assert.equal(await a.tools.call(h, toolOf(h, 'remove'), { path: 'e' }), undefined);
    assert.equal(changes.at(-1)?.name, 'remove');

    // The audit: each change seen (origin server), the acceptance (origin person), and each call's definition hash.
    await (a.host.audit as AuditLog).flushed();
    const records = fs
      .readFileSync(a.host.auditFile, 'utf8')
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l) as AuditRecord)
      .filter((r) => r.server.name === 'pinned');
    const kinds = records.filter((r) => r.kind).map((r) => [r.kind, r.origin, r.name]);
    assert.deepEqual(kinds.filter(([k]) => k === 'definition-changed').sort(), [
      ['definition-changed', 'server', 'brief'],
      ['definition-changed', 'server', 'instructions'],
      ['definition-changed', 'server', 'lookup'],
      ['definition-changed', 'server', 'remove'],
    ]);
    assert.deepEqual(
      kinds.filter(([k]) => k === 'definition-accepted'),
      [['definition-accepted', 'person', 'lookup']],
    );
    const calls = records.filter((r) => !r.kind && r.method === 'tools/call' && r.name === 'lookup');
    const hashes = new Set(calls.map((r) => r.tool?.definition));
    assert.equal(hashes.size, 2, 'lookup ran under two definitions, each call records which');
  });

  it('a workspace lock file (.vscode/mcp-pins/NAME.json) suspends a tool that differs from it, and approves nothing', async () => {
    const a = await api();
    fs.writeFileSync(versionFile, '1');
    await setServers({
      locked: changingServer({ trustAnnotations: true }),
    });
    const h = await running(a, 'locked');
    await waitFor(() => h.tools.length >= 3, 'the tools of version 1');
    const before = received().length;
    // The team's lock file pins another description of lookup, and steady as it is.
    const lockDir = path.join(vscode.workspace.workspaceFolders![0].uri.fsPath, '.vscode', 'mcp-pins');
    fs.mkdirSync(lockDir, { recursive: true });
    const lockFile = path.join(lockDir, 'locked.json');
    const pinned = h.tools.map((t) => (t.name === 'lookup' ? { ...t, description: 'Looks up a word, as the team reviewed it.' } : t));
    fs.writeFileSync(lockFile, lockFileText(pinSet({ tools: pinned, prompts: h.prompts })));
    try {
      const changes: ChangedDefinition[] = [];
      const asked: string[] = [];
      a.ui.confirmChangedDefinition = async (_s, c) => (changes.push(c), 'cancel');
      a.ui.confirmTool = async (_s, t) => (asked.push(t.name), 'cancel');
      assert.equal(await a.tools.call(h, toolOf(h, 'lookup'), { word: 'x' }), undefined);
      assert.deepEqual(changes, [{ kind: 'tools', name: 'lookup', changed: ['description'] }]);
      // remove agrees with the lock file, but the lock file approves nothing: it is confirmed as ever.
      assert.equal(await a.tools.call(h, toolOf(h, 'remove'), { path: 'x' }), undefined);
      assert.deepEqual(asked, ['remove']);

      // Accepting in the editor does not lift what the lock file suspends.
      const notes: string[] = [];
      a.ui.notify = async (_severity, message) => (notes.push(String(message)), undefined);
      a.ui.acceptDefinitionChanges = async () => 'accept';
      await vscode.commands.executeCommand('mcpHost.reviewChanges', 'locked');
      await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
      assert.match(notes.join('\n'), /Still suspended by the workspace lock file .*locked\.json/);
      assert.equal(await a.tools.call(h, toolOf(h, 'lookup'), { word: 'y' }), undefined);
      assert.equal(changes.length, 2);
      assert.equal(received().length, before, 'nothing reached the server');
    } finally {
      fs.rmSync(lockFile, { force: true });
    }
  });

  it("a workspace lock file checks the server's instructions and its prompts too: the palette's prompt asks first", async () => {
    const a = await api();
    fs.writeFileSync(versionFile, '1');
    await setServers({
      lockedi: changingServer(),
    });
    const h = await running(a, 'lockedi');
    await waitFor(() => h.tools.length >= 3 && h.prompts.length >= 2, 'the tools and prompts of version 1');
    const before = received().length;
    // The team reviewed other instructions and another description of brief; the tools as they are.
    const lockDir = path.join(vscode.workspace.workspaceFolders![0].uri.fsPath, '.vscode', 'mcp-pins');
    fs.mkdirSync(lockDir, { recursive: true });
    const lockFile = path.join(lockDir, 'lockedi.json');
    const prompts = h.prompts.map((p) => (p.name === 'brief' ? { ...p, description: 'Summarise, as the team reviewed it.' } : p));
    fs.writeFileSync(lockFile, lockFileText(pinSet({ tools: h.tools, prompts, instructions: 'Only ever look words up.' })));
    try {
      await waitFor(() => a.host.pins.changes(h).some((c) => c.kind === 'instructions'), 'the instructions that differ from the lock file');
      assert.deepEqual(
        a.host.pins
          .changes(h)
          .map((c) => [c.kind, c.name, c.changed, c.lockFile])
          .sort(),
        [
          ['instructions', 'instructions', ['instructions'], lockFile],
          ['prompts', 'brief', ['description'], lockFile],
        ],
      );
      assert.match(String(a.tree.getTreeItem({ kind: 'server', server: h }).description), /instructions changed since you approved them/);

      const changes: ChangedDefinition[] = [];
      a.ui.confirmChangedDefinition = async (_s, c) => (changes.push(c), 'cancel');
      const brief = h.prompts.find((p) => p.name === 'brief')!;
      assert.equal(await a.prompts.run({ server: h, prompt: brief }), undefined);
      assert.deepEqual(changes, [{ kind: 'prompts', name: 'brief', changed: ['description'] }]);
      assert.equal(received().length, before, 'nothing reached the server');
    } finally {
      fs.rmSync(lockFile, { force: true });
    }
  });

  it('a workspace lock file that is a FIFO, a link or over the limit suspends the tools, named, and nothing waits on it', async () => {
    const a = await api();
    fs.writeFileSync(versionFile, '1');
    await setServers({ planted: changingServer() });
    const h = await running(a, 'planted');
    await waitFor(() => h.tools.length >= 3, 'the tools of version 1');
    const before = received().length;
    const lockDir = path.join(vscode.workspace.workspaceFolders![0].uri.fsPath, '.vscode', 'mcp-pins');
    fs.mkdirSync(lockDir, { recursive: true });
    const lockFile = path.join(lockDir, 'planted.json');
    const changes: ChangedDefinition[] = [];
    a.ui.confirmChangedDefinition = async (_s, c) => (changes.push(c), 'cancel');
    a.ui.confirmTool = async () => 'once';
    /** The one steady call's change: what suspended it. */
    const suspendedBy = async (): Promise<string> => {
      changes.length = 0;
      assert.equal(await a.tools.call(h, toolOf(h, 'steady'), {}), undefined);
      assert.deepEqual(
        changes.map((c) => [c.kind, c.name]),
        [['tools', 'steady']],
      );
      return changes[0].changed.join('; ');
    };
    try {
      // A FIFO: a read that waited would wait for a writer. One comes only 8 s later: whether it found a reader says if anything waited.
      execFileSync('mkfifo', [lockFile]);
      const fed = path.join(dir, 'fifo-writer');
      const writer = spawn(
        process.execPath,
        [
          '-e',
          `setTimeout(() => {
            const fs = require('fs');
            try {
              const fd = fs.openSync(${JSON.stringify(lockFile)}, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK);
              fs.writeSync(fd, '{}');
              fs.closeSync(fd);
              fs.writeFileSync(${JSON.stringify(fed)}, 'a reader was waiting');
            } catch (e) {
              fs.writeFileSync(${JSON.stringify(fed)}, e.code);
            }
          }, 8000)`,
        ],
        { stdio: 'ignore' },
      );
      try {
        assert.match(await suspendedBy(), /the workspace lock file is unreadable: .*planted\.json: is a FIFO, not a regular file/);
        assert.equal(fs.existsSync(fed), false, 'the call was decided before the FIFO had a writer: nothing waited on it');
      } finally {
        writer.kill('SIGKILL');
      }

      // A link to a lock file outside the workspace, even one that agrees with the server: not followed.
      fs.rmSync(lockFile);
      const outside = path.join(dir, 'agreeing-lock.json');
      const agreeing = lockFileText(pinSet({ tools: h.tools, prompts: h.prompts, instructions: h.client?.instructions }));
      fs.writeFileSync(outside, agreeing);
      fs.symlinkSync(outside, lockFile);
      assert.match(await suspendedBy(), /planted\.json: is a symbolic link/);
      assert.equal(fs.readFileSync(outside, 'utf8'), agreeing);

      // 64 MiB (sparse): refused by its size, not read.
      fs.rmSync(lockFile);
      fs.writeFileSync(lockFile, '');
      fs.truncateSync(lockFile, 64 * 1024 * 1024);
      assert.match(await suspendedBy(), /planted\.json: is 67108864 bytes, over the 8388608 MCP Host reads of it/);

      // The file itself, agreeing: read again (its modification time changed), nothing suspended; steady is confirmed as ever.
      fs.rmSync(lockFile);
      fs.writeFileSync(lockFile, agreeing);
      changes.length = 0;
      await a.tools.call(h, toolOf(h, 'steady'), {});
      assert.deepEqual(changes, []);
      assert.deepEqual(received().slice(before), [{ method: 'tools/call', name: 'steady', arguments: {} }], 'only the last call ran');
    } finally {
      fs.rmSync(lockFile, { force: true });
    }
  });

  it('a server listing two tools (or prompts) of one name: suspended like a changed pin, in the tree, the call, the chat and the review', async () => {
    const a = await api();
    fs.writeFileSync(versionFile, '1');
    await setServers({
      twins: changingServer({
        env: { CHANGING_SERVER_FILE: versionFile, CHANGING_SERVER_CALL_LOG: callLog, CHANGING_SERVER_TWIN: 'last' },
        trustAnnotations: true,
        shareWithChat: true,
      }),
    });
    const h = await running(a, 'twins');
    await waitFor(() => h.tools.length >= 4, 'the tools, lookup twice');
    const before = received().length;
    const lookups = h.tools.filter((t) => t.name === 'lookup');
    assert.equal(lookups.length, 2);

    // The tree marks both; the chat is offered neither, the others as ever.
    const toolsGroup = a.tree.getChildren({ kind: 'server', server: h }).find((n) => n.kind === 'group' && n.group === 'tools')!;
    const lookupItems = a.tree
      .getChildren(toolsGroup)
      .filter((n) => n.kind === 'tool' && n.tool.name === 'lookup')
      .map((n) => a.tree.getTreeItem(n));
    assert.deepEqual(
      lookupItems.map((i) => i.contextValue),
      ['tool.changed', 'tool.changed'],
    );
    assert.ok(a.sharing.available, 'this VS Code has no MCP server definition provider API');
    await waitFor(async () => {
      if (!offered('steady', 'twins')) await vscode.commands.executeCommand('workbench.mcp.startServer', '*', { waitForLiveTools: true });
      return offered('steady', 'twins');
    }, 'steady in vscode.lm.tools');
    assert.ok(!offered('lookup', 'twins'), 'neither lookup is offered to the chat');

    // A call asks first, naming why, whichever of the two is picked; cancelled, nothing is sent.
    const changes: ChangedDefinition[] = [];
    a.ui.confirmChangedDefinition = async (_s, c) => (changes.push(c), 'cancel');
    assert.equal(await a.tools.call(h, lookups[0], { word: 'x' }), undefined);
    assert.equal(await a.tools.call(h, lookups[1], { word: 7 }), undefined);
    assert.deepEqual(changes, [
      { kind: 'tools', name: 'lookup', changed: ['sameName'] },
      { kind: 'tools', name: 'lookup', changed: ['sameName'] },
    ]);
    assert.equal(received().length, before);

    // Allowed once, it runs with the definition picked: its schema (a string) is the one the arguments are checked with.
    a.ui.confirmChangedDefinition = async () => 'once';
    await a.tools.call(h, lookups[0], { word: 'x' });
    assert.deepEqual(received().at(-1), { method: 'tools/call', name: 'lookup', arguments: { word: 'x' } });

    // Review Changes shows both definitions; accepting cannot pin one of them: still suspended, and said so.
    const notes: string[] = [];
    a.ui.notify = async (_severity, message) => (notes.push(String(message)), undefined);
    a.ui.acceptDefinitionChanges = async () => 'accept';
    await vscode.commands.executeCommand('mcpHost.reviewChanges', 'twins');
    const diff = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
    assert.ok(diff instanceof vscode.TabInputTextDiff, 'a diff editor is open');
    const now = (await vscode.workspace.openTextDocument(diff.modified)).getText();
    assert.match(now, /Looks up a word\./);
    assert.match(now, /Looks up a word, then deploys it\./);
    await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
    assert.match(notes.join('\n'), /Still suspended: tool lookup: listed more than once, with different definitions/);
    changes.length = 0;
    a.ui.confirmChangedDefinition = async (_s, c) => (changes.push(c), 'cancel');
    assert.equal(await a.tools.call(h, lookups[1], { word: 7 }), undefined);
    assert.equal(changes.length, 1, 'asked again');
  });

  it("names a tool whose name another shared server's tool has, in the tree and in the share notice", async () => {
    const a = await api();
    fs.writeFileSync(versionFile, '1');
    await setServers({
      twin1: changingServer({ shareWithChat: true }),
      twin2: changingServer({ shareWithChat: true, tools: { deny: ['steady'] } }),
      twin3: changingServer(),
    });
    const [one, , three] = await Promise.all(['twin1', 'twin2', 'twin3'].map((n) => running(a, n)));
    await waitFor(() => a.host.servers.every((s) => s.tools.length >= 3), 'the tools of the twins');

    const toolsGroup = a.tree.getChildren({ kind: 'server', server: one }).find((n) => n.kind === 'group' && n.group === 'tools')!;
    const item = (name: string) =>
      a.tree.getTreeItem(a.tree.getChildren(toolsGroup).find((n) => n.kind === 'tool' && n.tool.name === name)!);
    assert.match(String(item('lookup').description), /same name in the chat as a tool of twin2/);
    assert.match(String(item('lookup').tooltip), /The chat is also offered a tool named lookup by twin2/);
    // twin2 does not offer steady to anyone, the chat included: nothing to confuse it with.
    assert.doesNotMatch(String(item('steady').description), /same name/);

    const notes: Array<[string, string]> = [];
    a.ui.notify = async (severity, message) => (notes.push([severity, String(message)]), undefined);
    await a.sharing.setShared(three, true);
    const notice = notes.find(([, m]) => /is shared with VS Code's chat/.test(m));
    assert.ok(notice, JSON.stringify(notes));
    assert.equal(notice[0], 'warning');
    assert.match(notice[1], /lookup \(twin1, twin2\)/);
    assert.match(notice[1], /steady \(twin1\)/);
  });

  it('keeps the pins of a removed server: added again, with new grants, and changed, it is compared with what was approved, not given a new baseline', async () => {
    const a = await api();
    fs.writeFileSync(versionFile, '1');
    const entry = changingServer({ trustAnnotations: true });
    await setServers({ removed: entry });
    const first = await running(a, 'removed');
    await waitFor(() => first.tools.length >= 3, 'the tools of version 1');
    await waitFor(() => a.host.pins.status(first, 'tools', first.tools[0]).status === 'same', 'the baseline');

    await setServers(undefined);
    await waitFor(() => !a.host.servers.some((s) => s.name === 'removed'), 'the server gone');
    fs.writeFileSync(versionFile, '2');
    // Added again with a wider policy (a grant): pins are keyed by the server's identity, not by its grants.
    await setServers({ removed: { ...entry, autoApprove: ['lookup', 'remove'], sandbox: { filesystem: { allowWrite: [dir] } } } });
    const again = await running(a, 'removed');
    await waitFor(() => again.tools.some((t) => t.name === 'fresh'), 'the tools of version 2');
    await waitFor(() => a.host.pins.changes(again).length >= 4, 'the changes since the first listing');
    assert.deepEqual(
      a.host.pins
        .changes(again)
        .map((c) => c.name)
        .sort(),
      ['brief', 'instructions', 'lookup', 'remove'],
    );
  });
});
