import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Commands } from '../../src/vscode/common/ids';

/**
 * A command lives in four places that must agree (CONTRIBUTING.md, "Adding a command"): its id in
 * src/vscode/common/ids.ts, its registration in src/vscode, its entry in package.json's contributes.commands,
 * and every menu that shows it. (test/core/docs.test.ts checks the README's table against the manifest,
 * test/core/l10n.test.ts the titles' translations.)
 */
const ROOT = path.join(__dirname, '..', '..');
const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  contributes: { commands: { command: string; title: string }[]; menus: Record<string, { command?: string; submenu?: string }[]> };
};
const sorted = (values: Iterable<string>) => [...values].sort();

function sourceFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? sourceFiles(path.join(dir, e.name)) : e.name.endsWith('.ts') ? [path.join(dir, e.name)] : []));
}

/** The first argument of every registerCommand(...) call in src/vscode and src/extension.ts, as written. */
function registrations(): string[] {
  const files = [...sourceFiles(path.join(ROOT, 'src', 'vscode')), path.join(ROOT, 'src', 'extension.ts')];
  return files.flatMap((f) => [...fs.readFileSync(f, 'utf8').matchAll(/registerCommand\(\s*([\w.]+|'[^']*')/g)].map((m) => m[1]));
}

describe('commands: ids, registrations and the manifest agree', () => {
  const ids = Object.values(Commands) as string[];
  const contributed = pkg.contributes.commands.map((c) => c.command);

  it('contributes exactly the commands of src/vscode/common/ids.ts, each once', () => {
    assert.deepEqual(sorted(contributed), sorted(new Set(contributed)), 'a command contributed twice');
    assert.deepEqual(sorted(contributed), sorted(ids));
  });

  it('registers every command of src/vscode/common/ids.ts, through its Commands name', () => {
    const registered = registrations();
    for (const [name, id] of Object.entries(Commands)) {
      assert.ok(registered.includes(`Commands.${name}`), `${id} (Commands.${name}) is contributed but never registered`);
    }
    // Anything else registered is internal: not in the manifest, so not in the palette.
    for (const other of registered.filter((r) => !r.startsWith('Commands.'))) {
      const literal = /^'(.*)'$/.exec(other)?.[1];
      if (literal) assert.ok(!contributed.includes(literal), `${literal} is contributed: name it in src/vscode/common/ids.ts`);
    }
  });

  /** Whether a menu item's `when` admits a view item of this contextValue (the `viewItem` clauses we write: == and =~). */
  const admits = (when: string | undefined, contextValue: string): boolean => {
    const exact = /viewItem == ([\w.]+)/.exec(when ?? '');
    if (exact) return exact[1] === contextValue;
    const regex = /viewItem =~ \/(.*?)\/(?:\s|$)/.exec(when ?? '');
    return regex ? new RegExp(regex[1]).test(contextValue) : false;
  };
  const itemMenu = (pkg.contributes.menus['view/item/context'] ?? []) as { command?: string; when?: string }[];

  it('puts every command the palette hides on an item of the view, so each command has a place', () => {
    const palette = (pkg.contributes.menus.commandPalette ?? []) as { command?: string; when?: string }[];
    for (const hidden of palette.filter((m) => m.when === 'false')) {
      assert.ok(
        itemMenu.some((m) => m.command === hidden.command),
        `${hidden.command} is neither in the palette nor on an item of the view`,
      );
    }
  });

  it('offers Sign Out on HTTP servers in the view, and only on them; start, stop and info on both kinds', () => {
    const on = (command: string, contextValue: string) => itemMenu.some((m) => m.command === command && admits(m.when, contextValue));
    assert.ok(on('mcpHost.signOut', 'server.running.http') && on('mcpHost.signOut', 'server.error.http'));
    assert.ok(!on('mcpHost.signOut', 'server.running'), 'Sign Out is offered on a stdio server');
    for (const kind of ['', '.http']) {
      assert.ok(
        on('mcpHost.startServer', `server.stopped${kind}`) &&
          on('mcpHost.stopServer', `server.running${kind}`) &&
          on('mcpHost.showServerInfo', `server.running${kind}`),
        `server${kind}`,
      );
      assert.ok(!on('mcpHost.startServer', `server.running${kind}`));
    }
  });

  it('shows in menus only contributed commands', () => {
    for (const [menu, items] of Object.entries(pkg.contributes.menus)) {
      for (const item of items)
        if (item.command) assert.ok(contributed.includes(item.command), `${menu} shows ${item.command}, which is not contributed`);
    }
  });
});
