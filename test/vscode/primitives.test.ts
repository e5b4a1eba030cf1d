import { strict as assert } from 'node:assert';
import * as vscode from 'vscode';
import { toResourceUri } from '../../src/vscode/resources/uri';
import * as path from 'node:path';
import { openResource } from '../../src/vscode/resources/readResource';
import type { ArgumentAnswer, ArgumentStep } from '../../src/vscode/common/answers';
import { api, startEverything, repoRoot, running, serverScript, setServers, waitFor } from './helpers';

/** Waits until `uri` is the active tab, shown by VS Code's image preview, then closes it. */
async function closesInImagePreview(uri: vscode.Uri): Promise<void> {
  const tab = await waitFor(() => {
    const input = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
    return input instanceof vscode.TabInputCustom && input.uri.toString() === uri.toString() && input;
  }, 'the image preview');
  assert.equal(tab.viewType, 'imagePreview.previewEditor');
  await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
}

describe('tools, resources and prompts in a real VS Code', function () {
  this.timeout(120_000);

  before(() => startEverything('everything'));
  after(async () => setServers(undefined));

  it('calls a tool after checking its arguments, and opens the result', async () => {
    const a = await api();
    const ev = await running(a, 'everything');
    const echo = ev.tools.find((t) => t.name === 'echo')!;
    const record = await a.tools.call(ev, echo, { message: 'hello from VS Code' });
    assert.equal(record?.outcome, 'ok');
    const doc = await waitFor(
      () => vscode.window.activeTextEditor?.document.uri.scheme === 'mcp-output' && vscode.window.activeTextEditor.document,
      'the result document',
    );
    assert.match(doc.getText(), /Echo: hello from VS Code/);

    const sum = ev.tools.find((t) => t.name === 'get-sum')!;
    const before = a.tools.history.length;
    assert.equal(await a.tools.call(ev, sum, { a: 'one', b: 2 }), undefined, 'invalid arguments are refused');
    assert.equal(a.tools.history.length, before, 'and nothing was sent');
  });

  it('asks a tool’s arguments one by one through HostUi (how, each argument, Back), and Edit and Run Again starts from the last ones', async () => {
    const a = await api();
    const ev = await running(a, 'everything');
    const sum = ev.tools.find((t) => t.name === 'get-sum')!;
    const { pickArgumentEntry, askArgument, confirmTool } = a.ui;
    const entries: string[] = [];
    const steps: ArgumentStep[] = [];
    // a = 2, then Back from b: a is asked again with 2 filled in and becomes 3; b = 4.
    const answers: ArgumentAnswer[] = [{ value: 2 }, 'back', { value: 3 }, { value: 4 }];
    a.ui.pickArgumentEntry = async (server, tool) => {
      entries.push(`${server} › ${tool.name}`);
      return 'steps';
    };
    a.ui.askArgument = async (step) => {
      steps.push(step);
      return answers.shift();
    };
    a.ui.confirmTool = async () => 'once';
    try {
      const previous = a.tools.history[0];
      await a.tools.run(ev, sum);
      assert.deepEqual(entries, ['everything › get-sum']);
      assert.deepEqual(
        steps.map((s) => [s.title, s.spec.name, s.current, s.canGoBack]),
        [
          ['everything › get-sum (1/2)', 'a', undefined, false],
          ['everything › get-sum (2/2)', 'b', undefined, true],
          ['everything › get-sum (1/2)', 'a', 2, false],
          ['everything › get-sum (2/2)', 'b', undefined, true],
        ],
      );
      // The history keeps the last 20 calls, newest first: the call is the new first one.
      assert.notEqual(a.tools.history[0], previous);
      assert.deepEqual(a.tools.history[0].args, { a: 3, b: 4 });
      assert.equal(a.tools.history[0].outcome, 'ok');

      // Edit and Run Again asks each argument with the last call's value filled in; a cancel sends nothing.
      steps.length = 0;
      a.ui.askArgument = async (step) => {
        steps.push(step);
        return undefined;
      };
      assert.equal(await a.tools.askArguments(ev, sum, { a: 3, b: 4 }), undefined);
      assert.deepEqual(
        steps.map((s) => [s.spec.name, s.current]),
        [['a', 3]],
      );
    } finally {
      Object.assign(a.ui, { pickArgumentEntry, askArgument, confirmTool });
    }
  });

  it('asks before a tool that is not read-only, and Cancel sends nothing', async () => {
    const a = await api();
    const ev = await running(a, 'everything');
    const toggle = ev.tools.find((t) => t.name === 'toggle-simulated-logging')!;
    assert.notEqual(toggle.annotations?.readOnlyHint, true);
    const asked: string[] = [];
    a.ui.confirmTool = async (_s, tool) => {
      asked.push(tool.name);
      return 'cancel';
    };
    assert.equal(await a.tools.call(ev, toggle, {}), undefined);
    assert.deepEqual(asked, ['toggle-simulated-logging']);
    a.ui.confirmTool = async () => 'once';
  });

  it("skips the confirmation for readOnlyHint only where the server's annotations are trusted", async () => {
    const a = await api();
    const asked: string[] = [];
    a.ui.confirmTool = async (server, tool, _args, trusted) => {
      asked.push(`${server}:${tool.name}:${trusted}`);
      return 'once';
    };
    const entry = { command: 'node', args: [serverScript('server-everything'), 'stdio'] };
    try {
      // User settings trust annotations by default; echo says it is read-only.
      const ev = await running(a, 'everything');
      const echo = ev.tools.find((t) => t.name === 'echo')!;
      assert.equal(echo.annotations?.readOnlyHint, true);
      assert.equal((await a.tools.call(ev, echo, { message: 'trusted' }))?.outcome, 'ok');
      assert.deepEqual(asked, []);
      // The same server told not to be trusted asks first.
      await setServers({ everything: { ...entry, trustAnnotations: false } });
      const distrusted = await waitFor(
        () => a.host.registry.get('everything')?.definition.trustAnnotations === false && a.host.registry.get('everything'),
        'the new definition',
      );
      const h = await running(a, 'everything');
      assert.equal(h, distrusted);
      assert.equal(
        (
          await a.tools.call(
            h,
            h.tools.find((t) => t.name === 'echo')!,
            { message: 'asked' },
          )
        )?.outcome,
        'ok',
      );
      assert.deepEqual(asked, ['everything:echo:false']);
      // A workspace definition does not trust annotations unless it says so.
      await setServers(undefined);
      // An env of its own: a launch allowed here must not answer another suite's consent for the same command.
      await setServers({ 'ws-everything': { ...entry, env: { MCP_HOST_SUITE: 'primitives' } } }, vscode.ConfigurationTarget.Workspace);
      const ws = await running(a, 'ws-everything');
      assert.equal(ws.definition.trustAnnotations, false);
      await a.tools.call(
        ws,
        ws.tools.find((t) => t.name === 'echo')!,
        { message: 'workspace' },
      );
      assert.deepEqual(asked, ['everything:echo:false', 'ws-everything:echo:false']);
    } finally {
      a.ui.confirmTool = async () => 'once';
      await setServers(undefined, vscode.ConfigurationTarget.Workspace);
      await setServers({ everything: entry });
      await running(a, 'everything');
    }
  });

  it('reads text and binary resources through the mcp-host-resource file system', async () => {
    const a = await api();
    const ev = await running(a, 'everything');
    const first = ev.resources[0];
    const textUri = toResourceUri('everything', first.uri, first.name, first.mimeType);
    const doc = await vscode.workspace.openTextDocument(textUri);
    assert.ok(doc.getText().length > 0);
    const blobUri = toResourceUri('everything', 'demo://resource/dynamic/blob/1', 'blob-1', 'application/octet-stream');
    const bytes = await vscode.workspace.fs.readFile(blobUri);
    assert.ok(bytes.length > 0);
    await assert.rejects(Promise.resolve(vscode.workspace.fs.readFile(toResourceUri('nobody', 'x://y'))), /not running/);
  });

  it("shows a listing's size, annotations and template metadata, and stat uses size and lastModified", async () => {
    const a = await api();
    const entry = { command: 'node', args: [serverScript('server-everything'), 'stdio'] };
    await setServers({
      everything: entry,
      annotated: { command: 'node', args: [path.join(repoRoot(), 'test', 'fixtures', 'raw-server.mjs'), 'resource-metadata'] },
    });
    try {
      const h = await running(a, 'annotated');
      const [resource] = h.resources;
      const tip = String(a.tree.getTreeItem({ kind: 'resource', server: h, resource }).tooltip);
      assert.match(tip, /^fixture:\/\/notes\/plan\.txt \(text\/plain\)\nThe plan — plan\.txt\n/);
      assert.match(tip, /\nSize: 4\.0 KB \(4096 bytes\)\n/);
      assert.match(tip, /\nAudience: user, assistant\nPriority: 0\.8\nLast modified: /);
      assert.ok(tip.includes(new Date('2025-01-12T15:00:58Z').toLocaleString()), tip);
      const [template] = h.templates;
      assert.equal(
        String(a.tree.getTreeItem({ kind: 'template', server: h, template }).tooltip),
        'fixture://notes/{name} (text/markdown)\nA note — note\nOne note by name\nAudience: assistant\nPriority: 0.2',
      );

      const stat = await vscode.workspace.fs.stat(toResourceUri('annotated', resource.uri, resource.name, resource.mimeType));
      assert.equal(stat.size, 4096);
      assert.equal(stat.mtime, Date.parse('2025-01-12T15:00:58Z'));

      // The server's -32002 is "not found", not our "capability disabled".
      const missing = await Promise.resolve(
        vscode.workspace.fs.readFile(toResourceUri('annotated', 'fixture://missing', 'missing.txt', 'text/plain')),
      ).then(
        () => assert.fail('expected a rejection'),
        (e: vscode.FileSystemError) => e,
      );
      assert.equal(missing.code, 'FileNotFound');
      // The URI's scheme is broken (neutraliseLinks) so that no link acts.
      assert.match(missing.message, /"annotated" has no resource fixture\u200b?:\/\/missing: Resource not found/);
      assert.doesNotMatch(missing.message, /Capability disabled/i);
    } finally {
      await setServers({ everything: entry });
    }
  });

  it('keeps an open resource document current through resources/subscribe', async () => {
    const a = await api();
    const ev = await running(a, 'everything');
    const uri = toResourceUri('everything', 'demo://resource/dynamic/text/1', 'text-1', 'text/plain');
    const updates: string[] = [];
    const sub = a.host.onResourceUpdated((u) => updates.push(u.uri));
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(doc);
    const first = doc.getText();
    assert.match(first, /^Resource 1: This is a plaintext resource created at /);
    await ev.rawClient!.callTool('toggle-subscriber-updates', {});
    try {
      // The text carries the time of reading, so a re-read after an update shows as a change.
      await waitFor(
        () => updates.includes('demo://resource/dynamic/text/1') && doc.getText() !== first,
        'the open document to refresh',
        20_000,
      );
    } finally {
      await ev.rawClient!.callTool('toggle-subscriber-updates', {});
      sub.dispose();
      await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
    }
  });

  it('opens an image resource in the image preview', async () => {
    const a = await api();
    await setServers({
      everything: { command: 'node', args: [serverScript('server-everything'), 'stdio'] },
      images: { command: 'node', args: [path.join(repoRoot(), 'test', 'fixtures', 'raw-server.mjs'), 'images'] },
    });
    const images = await running(a, 'images');
    const png = images.resources[0];
    assert.equal(png.mimeType, 'image/png');
    const uri = await openResource(images, png);
    assert.match(uri!.path, /\/dot\.png$/);
    await closesInImagePreview(uri!);
  });

  it('opens no editor for a filled-in template the server refuses (its reason goes to the log), and one read serves an open that works', async () => {
    const a = await api();
    const ev = await running(a, 'everything');
    // Through the extension's own command: the suite's bundle has its own copy of openResource.
    const open = (uri: string, name: string) =>
      vscode.commands.executeCommand('mcpHost.openResource', { kind: 'resource', server: ev, resource: { uri, name } });
    const tabFor = (name: string) =>
      vscode.window.tabGroups.all
        .flatMap((g) => g.tabs)
        .find(
          (t) =>
            t.input instanceof vscode.TabInputText &&
            t.input.uri.scheme === 'mcp-host-resource' &&
            t.input.uri.path.endsWith(`/${name}.txt`),
        );
    let reads = 0;
    const counting = ev.onTrace((e) => {
      if (e.direction === 'out' && (e.message as { method?: string }).method === 'resources/read') reads++;
    });
    try {
      await open('demo://resource/dynamic/text/no-such-id', 'no-such-id');
      assert.equal(reads, 1, 'the refused read was not asked once');
      assert.equal(tabFor('no-such-id'), undefined, 'a tab shows the refused resource');
      await open('demo://resource/dynamic/text/1', 'one');
      const tab = await waitFor(() => tabFor('one'), 'the tab of a readable template');
      const doc = await vscode.workspace.openTextDocument((tab.input as vscode.TabInputText).uri);
      assert.ok(doc.getText().length > 0);
      assert.equal(reads, 2, 'the check before opening and the editor read the resource twice');
    } finally {
      counting.dispose();
    }
    await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
  });

  it('stores result images beside the result and links them so they open in the image preview', async () => {
    const a = await api();
    const ev = await running(a, 'everything');
    a.ui.confirmTool = async () => 'once';
    const tiny = ev.tools.find((t) => t.name === 'get-tiny-image')!;
    assert.equal((await a.tools.call(ev, tiny, {}))?.outcome, 'ok');
    const doc = await waitFor(() => {
      const d = vscode.window.activeTextEditor?.document;
      return d?.uri.scheme === 'mcp-output' && d.uri.path.endsWith('/get-tiny-image.md') && d;
    }, 'the result document');
    const link = /\[(content-\d+\.png)\]\(\1\)/.exec(doc.getText());
    assert.ok(link, doc.getText());
    assert.doesNotMatch(doc.getText(), /base64/, 'the image is linked, not inlined');
    // The Markdown link provider (what a click uses) finds the relative link; run first, the
    // Markdown extension may still be starting, and its first answer is empty.
    let links: vscode.DocumentLink[] = [];
    await waitFor(
      async () => {
        links = await vscode.commands.executeCommand<vscode.DocumentLink[]>('vscode.executeLinkProvider', doc.uri);
        return links.some((l) => doc.getText(l.range) === link[1]);
      },
      'the Markdown link provider to find the image link',
      20_000,
    ).catch(() => undefined);
    assert.ok(
      links.some((l) => doc.getText(l.range) === link[1]),
      `links: ${links.map((l) => doc.getText(l.range)).join(', ')}`,
    );
    const imageUri = vscode.Uri.joinPath(doc.uri, '..', link[1]);
    await vscode.commands.executeCommand('vscode.open', imageUri);
    await closesInImagePreview(imageUri);
  });

  it('copies a rendered prompt as plain text', async () => {
    const a = await api();
    const ev = await running(a, 'everything');
    const uri = await a.prompts.run({ server: ev, prompt: ev.prompts.find((p) => p.name === 'simple-prompt')! });
    await vscode.commands.executeCommand('mcpHost.copyPrompt', uri);
    assert.match(await vscode.env.clipboard.readText(), /^user: This is a simple prompt/);
  });

  it('renders a prompt with its arguments', async () => {
    const a = await api();
    const ev = await running(a, 'everything');
    const simple = ev.prompts.find((p) => p.name === 'simple-prompt')!;
    const uri = await a.prompts.run({ server: ev, prompt: simple });
    assert.ok(uri);
    assert.match(a.docs.text(uri!) ?? '', /# Prompt: simple-prompt/);
  });
});
