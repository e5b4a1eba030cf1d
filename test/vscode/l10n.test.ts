// The localised manifest and message bundles as the installed extension has them (English run).
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { env } from './harnessEnv';
import { api, running, serverScript, setServers } from './helpers';

const readJson = (...parts: string[]) => JSON.parse(fs.readFileSync(path.join(...parts), 'utf8'));

describe('localisation', () => {
  const pkg = readJson(env.repo, 'package.json');
  const english: Record<string, string> = readJson(env.repo, 'package.nls.json');
  const extension = () => {
    const ext = vscode.extensions.getExtension(`${pkg.publisher}.${pkg.name}`);
    assert.ok(ext, 'the extension is not installed');
    return ext;
  };

  it('shows the manifest with the English texts of package.nls.json, no %key% left', () => {
    const shown = extension().packageJSON;
    assert.equal(shown.displayName, english.displayName);
    const titles = shown.contributes.commands.map((c: { category: string; title: string }) => `${c.category}: ${c.title}`);
    assert.ok(titles.includes(`MCP Host: ${english['command.addServer.title']}`), titles.join(', '));
    assert.equal(shown.contributes.views.mcpHost[0].name, english['view.servers.name']);
    const servers = shown.contributes.configuration.properties['mcpHost.servers'];
    assert.equal(servers.markdownDescription, english['config.servers.markdownDescription']);
    const leftover = JSON.stringify(shown.contributes).match(/"%[\w.-]+%"/g);
    assert.equal(leftover, null, `unresolved keys: ${leftover?.join(', ')}`);
  });

  it('ships the Chinese manifest texts and message bundle in the VSIX', () => {
    const root = extension().extensionPath;
    assert.equal(extension().packageJSON.l10n, './l10n');
    assert.deepEqual(readJson(root, 'l10n', 'bundle.l10n.zh-cn.json'), readJson(env.repo, 'l10n', 'bundle.l10n.zh-cn.json'));
    assert.deepEqual(readJson(root, 'package.nls.zh-cn.json'), readJson(env.repo, 'package.nls.zh-cn.json'));
  });

  it('renders the extension’s own messages in English in an English editor', async () => {
    assert.equal(vscode.env.language, 'en');
    const a = await api();
    await setServers({ l10n: { command: 'node', args: [serverScript('server-everything'), 'stdio'] } });
    try {
      const server = await running(a, 'l10n');
      // Labels and descriptions come from vscode.l10n.t in the extension's own code.
      const groups = a.tree.getChildren({ kind: 'server', server }).map((node) => a.tree.getTreeItem(node).label);
      assert.deepEqual(groups, ['Tools', 'Prompts', 'Resources', 'Resource Templates']);
      assert.match(String(a.tree.getTreeItem({ kind: 'server', server }).description), /^running · \S+ · \d+ tools$/);
    } finally {
      await setServers(undefined);
    }
  });
});
