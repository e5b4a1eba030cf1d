import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { sniffImage } from '../../src/core';
import type { TreeNode } from '../../src/vscode/tree/nodes';
import { api, repoRoot, running, setServers, waitFor } from './helpers';

const isUri = (value: unknown): value is vscode.Uri => value instanceof vscode.Uri;
const urisOf = (iconPath: unknown): vscode.Uri[] =>
  isUri(iconPath)
    ? [iconPath]
    : iconPath && typeof iconPath === 'object' && 'light' in iconPath && 'dark' in iconPath
      ? [iconPath.light as vscode.Uri, iconPath.dark as vscode.Uri]
      : [];
const iconServer = () => ({ icons: { command: 'node', args: [path.join(repoRoot(), 'test', 'fixtures', 'icon-server.mjs')] } });

describe('server icons in the Servers tree (2025-11-25 icons)', function () {
  this.timeout(60_000);
  after(async () => {
    (await api()).tree.icons?.setTestOptions({});
    await setServers(undefined);
  });

  it('shows the icons that pass every rule as files of ours, and the theme icon for the refused ones', async () => {
    const a = await api();
    const icons = a.tree.icons!;
    icons.setTestOptions({ allowLoopbackHttp: true });
    await setServers(iconServer());
    const h = await running(a, 'icons');
    await waitFor(() => h.tools.length > 0 && h.prompts.length > 0 && h.resources.length > 0 && h.templates.length > 0, 'the lists');
    const nodes: TreeNode[] = [
      { kind: 'server', server: h },
      ...h.tools.map((tool): TreeNode => ({ kind: 'tool', server: h, tool })),
      ...h.prompts.map((prompt): TreeNode => ({ kind: 'prompt', server: h, prompt })),
      ...h.resources.map((resource): TreeNode => ({ kind: 'resource', server: h, resource })),
      ...h.templates.map((template): TreeNode => ({ kind: 'template', server: h, template })),
    ];
    const nameOf = (n: TreeNode) =>
      n.kind === 'tool'
        ? n.tool.name
        : n.kind === 'prompt'
          ? n.prompt.name
          : n.kind === 'resource'
            ? n.resource.name
            : n.kind === 'template'
              ? n.template.name
              : 'good-server';
    // The first look starts the work; the tree redraws when it is done.
    for (const n of nodes) a.tree.getTreeItem(n);
    await icons.settled();

    const storage = icons.directory.toString();
    const seen: string[] = [];
    for (const n of nodes) {
      const name = nameOf(n);
      const iconPath = a.tree.getTreeItem(n).iconPath;
      if (name.startsWith('bad-')) {
        assert.ok(iconPath instanceof vscode.ThemeIcon, `${name} keeps its theme icon, got ${String(iconPath)}`);
        continue;
      }
      assert.ok(name.startsWith('good-'), name);
      const uris = isUri(iconPath)
        ? [iconPath]
        : iconPath && typeof iconPath === 'object' && 'light' in iconPath
          ? [iconPath.light as vscode.Uri, iconPath.dark as vscode.Uri]
          : [];
      assert.ok(uris.length > 0 && uris.every(isUri), `${name} shows its own icon, got ${String(iconPath)}`);
      for (const uri of uris) {
        assert.ok(uri.toString().startsWith(`${storage}/`), `${name}: ${uri.toString()} is in our storage`);
        assert.match(uri.path, /\/[0-9a-f]{64}\.png$/);
        assert.equal(sniffImage(await vscode.workspace.fs.readFile(uri)), 'image/png');
      }
      if (name === 'good-themed') {
        assert.equal(uris.length, 2, 'a light and a dark icon');
        assert.notEqual(uris[0].toString(), uris[1].toString());
      }
      seen.push(name);
    }
    assert.deepEqual(seen.sort(), [
      'good-after-refused',
      'good-data-png',
      'good-http-png',
      'good-prompt',
      'good-resource',
      'good-server',
      'good-template',
      'good-themed',
    ]);
  });

  it('the palette pickers show the same icons, also when opened before the tree showed the items', async () => {
    const a = await api();
    const icons = a.tree.icons!;
    await setServers(iconServer());
    const h = await running(a, 'icons');
    await waitFor(() => h.tools.length > 0 && h.prompts.length > 0 && h.resources.length > 0 && h.templates.length > 0, 'the lists');
    // Forget every decision, as in a window where the tree has not drawn these items yet.
    icons.setTestOptions({ allowLoopbackHttp: true });
    const storage = icons.directory.toString();
    const ours = (what: string, iconPath: unknown) => {
      const uris = urisOf(iconPath);
      assert.ok(
        uris.length > 0 && uris.every((u) => u.toString().startsWith(`${storage}/`)),
        `${what} shows its icon from our storage, got ${String(iconPath)}`,
      );
    };
    const tools = (await a.pickItems.tools()).filter((i) => i.server === h);
    assert.equal(tools.length, h.tools.length);
    for (const item of tools) {
      if (item.tool.name.startsWith('good-')) ours(`the tool ${item.tool.name}`, item.iconPath);
      else assert.equal(item.iconPath, undefined, `${item.tool.name} shows no icon of the server's`);
    }
    const prompts = (await a.pickItems.prompts()).filter((i) => i.server === h);
    assert.deepEqual(
      prompts.map((i) => i.prompt.name),
      ['good-prompt'],
    );
    ours('the prompt', prompts[0].iconPath);
    const resources = (await a.pickItems.resources()).filter((i) => i.server === h);
    const byName = new Map(resources.map((i) => [i.resource?.name ?? i.template?.name, i]));
    ours('the resource (fetched over loopback http)', byName.get('good-resource')?.iconPath);
    ours('the template', byName.get('good-template')?.iconPath);
    assert.equal(byName.get('bad-template')?.iconPath, undefined);
    assert.match(String(byName.get('bad-template')?.label), /^\$\(file-code\) /, 'a template without an icon keeps the theme icon');
    const servers = await a.pickItems.servers();
    ours('the server', servers.find((i) => i.server === h)?.iconPath);
  });
});
