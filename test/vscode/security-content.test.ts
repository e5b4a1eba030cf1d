// A hostile server's text, in the real VS Code: no document we open has a link that acts, and a
// resource opens in an editor chosen by its MIME type, never by the name the server gave it.
import { strict as assert } from 'node:assert';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { LINK_BREAK, neutraliseLinks, type ShownText } from '../../src/core';
import type { SetupStep, SetupUi } from '../../src/vscode/ui/setupUi';
import type { HostUi } from '../../src/vscode/ui/hostUi';
import { openResource } from '../../src/vscode/resources/readResource';
import { fromResourceUri, RESOURCE_SCHEME } from '../../src/vscode/resources/uri';
import type { SamplingRecord } from '../../src/vscode/sampling/history';
import { api, repoRoot, running, serverScript, setServers, waitFor } from './helpers';

const fixture = path.join(repoRoot(), 'test', 'fixtures', 'hostile-content-server.mjs');
/** Link targets that may stay links: our own schemes, and the Markdown extension's command that opens a relative link (checked below to name our scheme). */
const OURS = new Set([RESOURCE_SCHEME, 'mcp-output']);

async function links(uri: vscode.Uri): Promise<vscode.DocumentLink[]> {
  return (await vscode.commands.executeCommand<vscode.DocumentLink[]>('vscode.executeLinkProvider', uri, 1000)) ?? [];
}

/** Where a link really goes: the Markdown extension wraps relative links in `command:_markdown.openDocumentLink`. */
function destination(link: vscode.DocumentLink): vscode.Uri | undefined {
  const target = link.target;
  if (target?.scheme !== 'command' || target.path !== '_markdown.openDocumentLink') return target;
  const args = JSON.parse(decodeURIComponent(target.query)) as
    { parts?: vscode.Uri; path?: string; scheme?: string } | [{ parts: vscode.Uri }];
  const parts = Array.isArray(args) ? args[0].parts : (args.parts ?? args);
  return vscode.Uri.from(parts as vscode.Uri);
}

function describe_(ls: vscode.DocumentLink[]): string {
  return ls.map((l) => `${l.range.start.line}:${l.range.start.character} ${l.target?.toString(true)}`).join('\n');
}

/** Every link of the document: none whose destination is not ours. */
async function assertNoForeignLink(uri: vscode.Uri, text: string): Promise<vscode.DocumentLink[]> {
  const found = await links(uri);
  const foreign = found.filter((l) => !OURS.has(destination(l)?.scheme ?? ''));
  assert.deepEqual(describe_(foreign), '', `links in ${uri.toString(true)}:\n${describe_(found)}\n---\n${text}`);
  return found;
}

async function activeTab(uri: vscode.Uri): Promise<vscode.Tab> {
  return waitFor(
    () => {
      const tab = vscode.window.tabGroups.activeTabGroup.activeTab;
      const input = tab?.input as { uri?: vscode.Uri } | undefined;
      return input?.uri?.toString() === uri.toString() && tab;
    },
    `the tab of ${uri.toString(true)} (active: ${vscode.window.tabGroups.activeTabGroup.activeTab?.label})`,
  );
}

describe('a hostile server’s content in a real VS Code', function () {
  this.timeout(120_000);

  before(async () => {
    const a = await api();
    a.ui.allowLaunch = async () => 'allow';
    await setServers({
      hostile: { command: 'node', args: [fixture] },
      everything: { command: 'node', args: [serverScript('server-everything'), 'stdio'] },
    });
    await running(a, 'hostile');
    await running(a, 'everything');
  });
  after(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await setServers(undefined);
  });

  it('shows a tool’s description in its tooltip as plain text, never as Markdown with images or links', async () => {
    const a = await api();
    const hostile = await running(a, 'hostile');
    const tool = hostile.tools.find((t) => t.name === 'hostile')!;
    assert.match(tool.description ?? '', /!\[pixel\]\(https:/, 'the fixture describes the tool with an image and a command link');
    const tooltip = a.tree.getTreeItem({ kind: 'tool', server: hostile, tool }).tooltip;
    assert.equal(typeof tooltip, 'string', `a MarkdownString would render the description: ${JSON.stringify(tooltip)}`);
    assert.ok((tooltip as string).includes('returns every hostile form'), String(tooltip));
    assert.doesNotMatch(tooltip as string, /command:|https:/);
  });

  it('finds command: and file: links in the same text opened as a plain Markdown file (the check can fail)', async () => {
    const a = await api();
    const hostile = await running(a, 'hostile');
    const text = (await hostile.rawClient!.getPrompt('hostile', {})).description ?? '';
    const doc = await vscode.workspace.openTextDocument({ language: 'markdown', content: text });
    await vscode.window.showTextDocument(doc);
    const schemes = await waitFor(async () => {
      const s = new Set((await links(doc.uri)).map((l) => l.target?.scheme));
      return s.has('command') && s.has('file') && s;
    }, 'the Markdown link provider and the editor link detection to find the raw links');
    assert.ok(schemes.has('command') && schemes.has('file'));
    await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
    // The editor's own link detection, in any language and inside code blocks too. A file of its
    // own: an untitled document may take the name of the one just closed, and the link detection
    // then went on answering about the old text.
    const file = path.join(os.tmpdir(), `mcp-host-links-${process.pid}-${Date.now()}.txt`);
    await fs.writeFile(file, '    file:///etc/passwd\n```\nhttps://evil.example/x\n```\n');
    try {
      const plain = await vscode.workspace.openTextDocument(vscode.Uri.file(file));
      assert.equal(plain.languageId, 'plaintext');
      const bare = await waitFor(async () => {
        const found = (await links(plain.uri)).map((l) => l.target?.toString(true)).sort();
        return found.length === 2 && found;
      }, 'the editor to find exactly the bare file: and https: links');
      assert.deepEqual(bare, ['file:///etc/passwd', 'https://evil.example/x']);
    } finally {
      await fs.rm(file, { force: true });
    }
  });

  it('opens a tool result with no link that acts, and keeps our own resource link', async () => {
    const a = await api();
    const hostile = await running(a, 'hostile');
    const record = await a.tools.call(
      hostile,
      hostile.tools.find((t) => t.name === 'hostile')!,
      {},
    );
    assert.equal(record?.outcome, 'ok');
    const doc = await waitFor(
      () => vscode.window.activeTextEditor?.document.uri.scheme === 'mcp-output' && vscode.window.activeTextEditor.document,
      'the result document',
    );
    // Our resource link is found, so the Markdown link provider has looked at the document.
    const found = await waitFor(async () => {
      const ls = await links(doc.uri);
      return ls.some((l) => destination(l)?.scheme === RESOURCE_SCHEME) && ls;
    }, 'our resource link in the result');
    assert.equal(found.filter((l) => destination(l)?.scheme === RESOURCE_SCHEME).length, 2, describe_(found));
    await assertNoForeignLink(doc.uri, doc.getText());
    assert.equal(doc.getText().match(/^## Structured content/gm)?.length, 1, 'the forged verdict is quoted');
  });

  it('opens a prompt with no link that acts', async () => {
    const a = await api();
    const hostile = await running(a, 'hostile');
    // The scan flags the prompt (its description names file:///etc/passwd): the person runs it once, to see what it renders.
    const asked = a.ui.confirmChangedDefinition;
    a.ui.confirmChangedDefinition = async () => 'once';
    let uri: vscode.Uri | undefined;
    try {
      uri = await a.prompts.run({ server: hostile, prompt: hostile.prompts.find((p) => p.name === 'hostile')! });
    } finally {
      a.ui.confirmChangedDefinition = asked;
    }
    const doc = await vscode.workspace.openTextDocument(uri!);
    await waitFor(
      async () => (await links(doc.uri)).some((l) => destination(l)?.scheme === RESOURCE_SCHEME),
      'our resource link in the prompt',
    );
    await assertNoForeignLink(doc.uri, doc.getText());
  });

  it('opens the sampling history with no link that acts', async () => {
    const a = await api();
    const hostile = await running(a, 'hostile');
    const text = (await hostile.rawClient!.getPrompt('hostile', {})).description ?? '';
    const record: SamplingRecord = {
      server: 'hostile',
      at: Date.now(),
      decision: 'failed',
      model: text,
      error: text,
      request: { maxTokens: 10, systemPrompt: text, messages: [{ role: 'user', content: { type: 'text', text } }] },
      response: text,
    };
    a.host.sampling.records.add(record);
    try {
      const uri = await a.host.sampling.showHistory(a.docs);
      const doc = await vscode.workspace.openTextDocument(uri);
      assert.match(doc.getText(), /evil\.example/, 'the server text is shown');
      await assertNoForeignLink(uri, doc.getText());
    } finally {
      a.host.sampling.records.remove(record);
    }
  });

  for (const [uri, what] of [
    ['hostile://docs/report.ipynb', 'a notebook with its MIME type'],
    ['hostile://docs/plain/report.ipynb', 'a notebook without a MIME type'],
    ['hostile://docs/x.svg', 'an SVG image'],
    ['hostile://docs/x.html', 'an HTML page'],
  ] as const) {
    it(`opens ${what} (${uri}) as text, with no link that acts`, async () => {
      const a = await api();
      const hostile = await running(a, 'hostile');
      const resource = hostile.resources.find((r) => r.uri === uri)!;
      const opened = (await openResource(hostile, resource))!;
      const tab = await activeTab(opened);
      assert.ok(tab.input instanceof vscode.TabInputText, `${tab.label} opened in ${tab.input?.constructor.name}`);
      const doc = await vscode.workspace.openTextDocument(opened);
      assert.match(doc.getText(), /script/, 'the content is shown as text');
      await assertNoForeignLink(opened, doc.getText());
      await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
    });
  }

  it('opens a resource’s relative links as the resources they name, never a server-named editor, and no other link', async () => {
    const a = await api();
    const hostile = await running(a, 'hostile');
    const opened = (await openResource(
      hostile,
      hostile.resources.find((r) => r.uri === 'hostile://docs/links.md')!,
    ))!;
    const doc = await vscode.workspace.openTextDocument(opened);
    const found = await waitFor(async () => {
      const ls = await links(doc.uri);
      return ls.length >= 2 && ls;
    }, 'the relative links of links.md');
    await assertNoForeignLink(opened, doc.getText());
    const named = found.map((l) => [doc.getText(l.range), destination(l)] as const);
    const other = named.find(([text]) => text === 'other.md')?.[1];
    assert.equal(other && fromResourceUri(other).resourceUri, 'hostile://docs/other.md');
    assert.match(Buffer.from(await vscode.workspace.fs.readFile(other!)).toString('utf8'), /The other page/);
    // The link to evil.ipynb never names a notebook: our file system refuses that name, so the
    // Markdown extension falls back to `evil.ipynb.md`, which the server does not have.
    const notebook = named.find(([text]) => text === 'evil.ipynb')?.[1];
    assert.ok(notebook && !notebook.path.endsWith('.ipynb'), describe_(found));
    const asNamed = opened.with({ path: path.posix.join(path.posix.dirname(opened.path), 'evil.ipynb') });
    await assert.rejects(Promise.resolve(vscode.workspace.fs.stat(asNamed)), /only as text or media/);
    await assert.rejects(Promise.resolve(vscode.workspace.fs.readFile(asNamed)), /only as text or media/);
  });

  it('opens server-everything’s relative link structure.md as that resource, under a readable name', async () => {
    const a = await api();
    const ev = await running(a, 'everything');
    const architecture = ev.resources.find((r) => r.uri.endsWith('/architecture.md'))!;
    const opened = (await openResource(ev, architecture))!;
    const tab = await activeTab(opened);
    assert.equal(tab.label, 'architecture.md');
    assert.equal(opened.path, '/everything/demo/resource/static/document/architecture.md', 'breadcrumbs show the resource URI, not base64');
    const doc = await vscode.workspace.openTextDocument(opened);
    const structure = await waitFor(
      async () => (await links(doc.uri)).map(destination).find((u) => u?.path.endsWith('/structure.md')),
      'the link to structure.md',
    );
    assert.equal(fromResourceUri(structure).resourceUri, 'demo://resource/static/document/structure.md');
    const text = Buffer.from(await vscode.workspace.fs.readFile(structure)).toString('utf8');
    const expected = (await ev.rawClient!.readResource('demo://resource/static/document/structure.md')).contents[0];
    assert.equal(text, 'text' in expected ? neutraliseLinks(expected.text) : undefined);
    assert.notEqual(text, doc.getText());
  });
});

/**
 * The fixture's initialize fails with `[open a terminal](command:…)` and the arguments it was
 * started with, a `${input:}` secret among them: what the notifications say of that failure.
 */
describe('a server’s start failure in the notifications of a real VS Code', function () {
  this.timeout(120_000);
  const secret = 'hostile-secret-4711';
  const name = 'fails-hostile';
  const notices: Array<{ kind: string; message: string }> = [];
  let saved: Pick<HostUi, 'askInput' | 'notify' | 'setup'>;

  before(async () => {
    const a = await api();
    saved = { askInput: a.ui.askInput, notify: a.ui.notify, setup: a.ui.setup };
    a.ui.askInput = async (id) => (id === 'hostile-notice-token' ? secret : undefined);
    a.ui.notify = async (kind, message) => {
      notices.push({ kind, message });
      return undefined;
    };
  });
  after(async () => {
    const a = await api();
    Object.assign(a.ui, saved);
    await setServers(undefined);
  });

  /** A notification must not carry a live link nor the secret, and must still say what failed. */
  const assertInert = (message: string) => {
    assert.ok(message.includes(`command${LINK_BREAK}:workbench.action.terminal.new`), message);
    assert.doesNotMatch(message, /command:/, 'a notification renders [x](command:…) as a link that runs the command');
    assert.ok(!message.includes(secret), `the secret is shown: ${message}`);
    assert.ok(message.includes('***'), message);
  };

  it('Add Server says the server could not start with the link broken and the secret redacted', async () => {
    const a = await api();
    const answers: Partial<Record<SetupStep, (items: readonly vscode.QuickPickItem[]) => unknown>> = {
      kind: (items) => items.find((i) => /Command \(stdio\)/.test(i.label)),
      target: () => `node ${JSON.stringify(fixture)} --fail-initialize \${input:hostile-notice-token}`,
      name: () => name,
      scope: (items) => items.find((i) => /User settings/.test(i.label)),
    };
    const added: Array<{ kind: string; message: ShownText }> = [];
    const setup: SetupUi = {
      ...saved.setup,
      pick: async (step, items) => answers[step]!(items) as never,
      input: async (step) => answers[step]!([]) as string,
      notify: async (kind, message) => {
        added.push({ kind, message });
        return undefined;
      },
    };
    a.ui.setup = setup;
    assert.equal(await a.setup.addServer(), name);
    assert.equal(added.length, 1, JSON.stringify(added));
    assert.equal(added[0].kind, 'error');
    assert.match(added[0].message, /"fails-hostile" was added to user settings but could not start: .*initialize refused/);
    assertInert(added[0].message);
  });

  it('Start Server reports the same failure with the link broken and the secret redacted', async () => {
    const a = await api();
    await waitFor(() => a.host.registry.get(name)?.state.kind === 'error', `${name} to be in error`);
    notices.length = 0;
    await vscode.commands.executeCommand('mcpHost.startServer', name);
    const notice = await waitFor(() => notices.find((n) => n.kind === 'error'), 'the error notification of Start Server');
    assert.match(notice.message, /could not start fails-hostile .*initialize refused/);
    assertInert(notice.message);
  });
});
