import { strict as assert } from 'node:assert';
import * as vscode from 'vscode';
import type { Tool } from '../../src/core';
import { toResourceUri } from '../../src/vscode/resources/uri';
import { windowUi } from '../../src/vscode/ui/setupUi';
import { api, startEverything, running, serverScript, setServers, waitFor } from './helpers';

/** What a person meets using the view and the palette: names, tooltips, settings entries, documents. */
describe('using it: names, server info, settings entries, documents', function () {
  this.timeout(120_000);

  before(() => startEverything('everything'));
  after(async () => {
    (await api()).ui.setup = windowUi;
    await setServers(undefined);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  it('shows a tool by title with its name beside it, so either finds it', async () => {
    const a = await api();
    const ev = await running(a, 'everything');
    const sum = ev.tools.find((t) => t.name === 'get-sum')!;
    assert.ok(sum.title && sum.title !== sum.name, 'server-everything gives get-sum a title');
    const item = a.tree.getTreeItem({ kind: 'tool', server: ev, tool: sum });
    assert.equal(item.label, sum.title);
    assert.match(String(item.description), /^get-sum\b/);
  });

  it('keeps the server tooltip short and puts the instructions in Show Server Info', async () => {
    const a = await api();
    const ev = await running(a, 'everything');
    const instructions = ev.client!.instructions;
    assert.ok(instructions && instructions.length > 200, 'server-everything sends long instructions');
    const item = a.tree.getTreeItem({ kind: 'server', server: ev });
    const tooltip = (item.tooltip as vscode.MarkdownString).value;
    assert.ok(!tooltip.includes(instructions.slice(0, 80)), 'no instructions in the tooltip');
    assert.ok(tooltip.split('\n').filter(Boolean).length <= 4, tooltip);
    assert.match(tooltip, /command:mcpHost\.showServerInfo/);

    await vscode.commands.executeCommand('mcpHost.showServerInfo', 'everything');
    const doc = await waitFor(() => {
      const d = vscode.window.activeTextEditor?.document;
      return d?.uri.scheme === 'mcp-output' && d.uri.path.startsWith('/info/') && d;
    }, 'the server info document');
    const text = doc.getText();
    assert.match(text, /^# everything$/m);
    assert.ok(text.includes(ev.client!.serverInfo!.version));
    assert.match(text, /^- tools/m);
    const lines = instructions
      .trim()
      .split('\n')
      .filter((l) => l.trim() && !/[:`\\]/.test(l));
    assert.ok(lines.length > 3);
    for (const line of lines) assert.ok(text.includes(`> ${line}`), `the instructions in full, quoted: ${line}`);
  });

  it('gives a running server a new tree id, so it opens expanded the first time it runs', async () => {
    const a = await api();
    const ev = await running(a, 'everything');
    const item = a.tree.getTreeItem({ kind: 'server', server: ev });
    assert.equal(item.collapsibleState, vscode.TreeItemCollapsibleState.Expanded);
    assert.equal(item.id, 'server/everything/running');
  });

  it('opens the settings JSON at a server entry, and removes the entry after asking', async () => {
    const a = await api();
    await setServers({
      everything: { command: 'node', args: [serverScript('server-everything'), 'stdio'] },
      'to-remove': { command: 'node', args: ['never-started.js'], autostart: false },
    });
    await waitFor(() => a.host.registry.get('to-remove'), 'the second server');
    const editor = await a.setup.editServerSettings({ name: 'to-remove', origin: { scope: 'user' } });
    assert.ok(editor);
    const selected = editor!.document.getText(editor!.selection);
    assert.match(selected, /^"to-remove": \{[\s\S]*never-started\.js[\s\S]*\}$/);

    const asked: string[] = [];
    a.ui.setup = { ...windowUi, confirm: async (message) => (asked.push(message), false) };
    assert.equal(await vscode.commands.executeCommand('mcpHost.removeServer', 'to-remove'), undefined);
    assert.ok(
      vscode.workspace.getConfiguration('mcpHost').inspect<Record<string, unknown>>('servers')?.globalValue?.['to-remove'],
      'declined: still there',
    );
    a.ui.setup = { ...windowUi, confirm: async (message) => (asked.push(message), true) };
    assert.equal(await a.setup.removeServer({ name: 'to-remove', origin: { scope: 'user' } }), true);
    assert.deepEqual(asked, [
      'Remove the MCP server "to-remove" from the user settings?',
      'Remove the MCP server "to-remove" from the user settings?',
    ]);
    const left = vscode.workspace.getConfiguration('mcpHost').inspect<Record<string, unknown>>('servers')?.globalValue;
    assert.deepEqual(Object.keys(left ?? {}), ['everything']);
    assert.equal(a.host.registry.get('to-remove'), undefined);
    await running(a, 'everything');
    await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
  });

  it('keeps the JSON arguments open with the problems marked until they pass the schema', async () => {
    const a = await api();
    const ev = await running(a, 'everything');
    const sum = ev.tools.find((t) => t.name === 'get-sum')!;
    const editing = (
      a.tools as unknown as { argsFromJsonEditor(s: typeof ev, t: Tool): Promise<Record<string, unknown> | undefined> }
    ).argsFromJsonEditor(ev, sum);
    const doc = await waitFor(() => {
      const d = vscode.window.activeTextEditor?.document;
      return d?.uri.scheme === 'untitled' && d.languageId === 'json' && d;
    }, 'the arguments editor');
    assert.deepEqual(JSON.parse(doc.getText()), { a: 0, b: 0 }, 'starts from the required keys');
    const replaceAll = async (text: string) => {
      const edit = new vscode.WorkspaceEdit();
      edit.replace(doc.uri, new vscode.Range(doc.positionAt(0), doc.positionAt(doc.getText().length)), text);
      assert.ok(await vscode.workspace.applyEdit(edit));
    };
    await replaceAll('{\n  "a": "two",\n  "b": 40\n}\n');
    await vscode.commands.executeCommand('mcpHost.documentAction', doc.uri.toString(), 'Call Tool');
    const problems = await waitFor(() => {
      const list = a.tools.argumentProblems.get(doc.uri);
      return list && list.length > 0 && list;
    }, 'the problems on the text');
    assert.equal(doc.isClosed, false, 'the editor stays open');
    assert.match(problems[0].message, /\/a must be number/);
    assert.equal(doc.getText(problems[0].range), '"two"');
    await replaceAll('{\n  "a": 2,\n  "b": 40\n}\n');
    // The next question is asked once the check has run; answer it when its CodeLens is there.
    await waitFor(
      async () =>
        ((await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', doc.uri)) ?? []).some(
          (l) => l.command?.title === 'Call Tool',
        ),
      'the Call Tool lens again',
    );
    await vscode.commands.executeCommand('mcpHost.documentAction', doc.uri.toString(), 'Call Tool');
    assert.deepEqual(await editing, { a: 2, b: 40 });
    assert.equal(a.tools.argumentProblems.get(doc.uri)?.length ?? 0, 0);
  });

  it('reads a result tab restored after a reload as a note that it is gone', async () => {
    const stale = vscode.Uri.from({ scheme: 'mcp-output', path: '/results/987654/echo.md' });
    const doc = await vscode.workspace.openTextDocument(stale);
    assert.match(doc.getText(), /This tool result is gone/);
    await assert.rejects(
      Promise.resolve(vscode.workspace.fs.readFile(vscode.Uri.from({ scheme: 'mcp-output', path: '/results/987654/content-1.png' }))),
    );
  });

  it("fails reading a template filled with a refused value with the server's reason", async () => {
    await running(await api(), 'everything');
    const uri = toResourceUri('everything', 'demo://resource/dynamic/text/hello', 'hello', 'text/plain');
    await assert.rejects(Promise.resolve(vscode.workspace.fs.readFile(uri)), /Unknown resource: .*dynamic\/text\/hello/);
  });
});
