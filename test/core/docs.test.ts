import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { INPUTS_SETTING_SCHEMA, parseServerDefinitions, SERVER_ENTRY_SCHEMA, SERVERS_SETTING_SCHEMA } from '../../src/core';

const ROOT = path.join(__dirname, '..', '..');
const { resolveNls } = require(path.join(ROOT, 'scripts', 'nls.js')) as { resolveNls: <T>(value: T, texts: Record<string, string>) => T };
const readJson = (name: string) => JSON.parse(fs.readFileSync(path.join(ROOT, name), 'utf8'));
/** The manifest as VS Code shows it in English: every %key% replaced from package.nls.json. */
const pkg = resolveNls(readJson('package.json'), readJson('package.nls.json'));
const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');

/** The text under a heading, up to the next heading of the same or a higher level. */
function section(markdown: string, heading: string): string {
  const lines = markdown.split('\n');
  const start = lines.findIndex((l) => l.trim() === heading);
  assert.ok(start >= 0, `README has no "${heading}" heading`);
  const level = heading.indexOf(' ');
  const end = lines.findIndex((l, i) => i > start && /^#+ /.test(l) && l.indexOf(' ') <= level);
  return lines.slice(start + 1, end === -1 ? undefined : end).join('\n');
}

/** The first cell of each table row, when it is `code`. */
function documentedNames(text: string): string[] {
  return [...text.matchAll(/^\| `([^`]+)` \|/gm)].map((m) => m[1]);
}

interface SchemaNode {
  properties?: Record<string, SchemaNode>;
  markdownDescription?: string;
  description?: string;
}

/** Every property of a server entry, in both variants, nested ones as `tools.allow`. */
function entryPropertyPaths(): Map<string, SchemaNode> {
  const paths = new Map<string, SchemaNode>();
  const walk = (props: Record<string, SchemaNode>, prefix: string) => {
    for (const [name, node] of Object.entries(props)) {
      paths.set(prefix + name, node);
      if (node.properties) walk(node.properties, `${prefix}${name}.`);
    }
  };
  for (const variant of SERVER_ENTRY_SCHEMA.oneOf) walk(variant.properties as unknown as Record<string, SchemaNode>, '');
  return paths;
}

const sorted = (xs: Iterable<string>) => [...new Set(xs)].sort();

describe('the documentation keeps up with the manifest', () => {
  it('documents every property of a server entry, and no other', () => {
    const documented = documentedNames(section(readme, '### A server entry in `mcpHost.servers`'));
    assert.deepEqual(sorted(documented), sorted(entryPropertyPaths().keys()));
  });

  it('documents every property of an input, and no other', () => {
    const documented = documentedNames(section(readme, '### An input in `mcpHost.inputs`'));
    assert.deepEqual(sorted(documented), sorted(Object.keys(INPUTS_SETTING_SCHEMA.additionalProperties.properties)));
  });

  it('documents every setting the extension contributes, and no other', () => {
    const documented = documentedNames(section(readme, '### Settings'));
    assert.deepEqual(sorted(documented), sorted(Object.keys(pkg.contributes.configuration.properties)));
  });

  it('lists every contributed command by its palette title, and no other', () => {
    const listed = [...section(readme, '## Commands').matchAll(/^\| \*\*(.+?)\*\* \|/gm)].map((m) => m[1]);
    const contributed = pkg.contributes.commands.map(
      (c: { category?: string; title: string }) => `${c.category ? `${c.category}: ` : ''}${c.title}`,
    );
    assert.deepEqual(sorted(listed), sorted(contributed));
  });

  it('describes every schema property for settings IntelliSense', () => {
    const inputProps = Object.entries(INPUTS_SETTING_SCHEMA.additionalProperties.properties).map(
      ([k, v]) => [`inputs.${k}`, v as SchemaNode] as const,
    );
    const undescribed = [...entryPropertyPaths(), ...inputProps].filter(([, node]) => !node.markdownDescription).map(([p]) => p);
    assert.deepEqual(undescribed, []);
    assert.ok(SERVERS_SETTING_SCHEMA.markdownDescription.length > 0);
    assert.ok(INPUTS_SETTING_SCHEMA.markdownDescription.length > 0);
  });

  it('offers stdio, npm and HTTP snippets that are valid entries once filled in', () => {
    const fill = (value: unknown): unknown => JSON.parse(JSON.stringify(value).replace(/\$\{\d+:([^}]*)\}/g, '$1'));
    const entrySnippets = SERVER_ENTRY_SCHEMA.defaultSnippets.map((s) => fill(s.body) as Record<string, unknown>);
    const settingSnippets = SERVERS_SETTING_SCHEMA.defaultSnippets.map((s) => fill(s.body) as Record<string, unknown>);
    for (const snippets of [entrySnippets, settingSnippets.map((s) => Object.values(s)[0] as Record<string, unknown>)]) {
      const { definitions, diagnostics } = parseServerDefinitions(Object.fromEntries(snippets.map((s, i) => [`s${i}`, s])), {
        scope: 'user',
      });
      assert.deepEqual(diagnostics, []);
      assert.deepEqual(
        definitions.map((d) => (d.type === 'http' ? 'http' : d.command === 'npx' ? 'npm' : 'stdio')),
        ['stdio', 'npm', 'http'],
      );
    }
    const { diagnostics } = parseServerDefinitions(SERVERS_SETTING_SCHEMA.examples[0], { scope: 'user' });
    assert.deepEqual(diagnostics, []);
  });

  it('has a walkthrough whose media exist and whose links run contributed commands', () => {
    const [walkthrough] = pkg.contributes.walkthroughs;
    const commands = new Set(pkg.contributes.commands.map((c: { command: string }) => c.command));
    assert.deepEqual(
      walkthrough.steps.map((s: { id: string }) => s.id),
      ['addServer', 'browseTools', 'callTool', 'openResource', 'samplingConsent'],
    );
    for (const step of walkthrough.steps) {
      const media = path.join(ROOT, step.media.markdown);
      assert.ok(fs.existsSync(media), `${step.media.markdown} is missing`);
      const text = `${step.description}\n${fs.readFileSync(media, 'utf8')}`;
      for (const [, id] of text.matchAll(/\(command:([\w.]+)/g)) {
        assert.ok(commands.has(id) || id.startsWith('workbench.'), `${step.id} links to unknown command ${id}`);
      }
      for (const event of step.completionEvents ?? []) {
        const [kind, arg] = event.split(':');
        if (kind === 'onCommand') assert.ok(commands.has(arg), `${step.id} completes on unknown command ${arg}`);
      }
    }
  });

  it('keeps the CHANGELOG in Keep a Changelog form', () => {
    const changelog = fs.readFileSync(path.join(ROOT, 'CHANGELOG.md'), 'utf8');
    assert.match(changelog, /^# Changelog\n/);
    assert.match(changelog, /keepachangelog\.com/);
    const versions = [...changelog.matchAll(/^## (.+)$/gm)].map((m) => m[1]);
    assert.ok(versions.length > 0);
    for (const v of versions) assert.match(v, /^\[(Unreleased|\d+\.\d+\.\d+)\]( - \d{4}-\d{2}-\d{2})?$/, `version heading "${v}"`);
    const kinds = [...changelog.matchAll(/^### (.+)$/gm)].map((m) => m[1]);
    for (const k of kinds) assert.ok(['Added', 'Changed', 'Deprecated', 'Removed', 'Fixed', 'Security'].includes(k), `section "${k}"`);
    // Until a first release there is one [Unreleased] section, and nothing was released to change or remove.
    if (!versions.some((v) => / - \d{4}-/.test(v))) {
      assert.deepEqual(versions, ['[Unreleased]'], 'before a release the CHANGELOG has one [Unreleased] section');
      for (const k of kinds)
        assert.ok(!['Changed', 'Deprecated', 'Removed'].includes(k), `"### ${k}" before any release: nothing released has changed`);
    }
    // A released version links to its tag or diff; [Unreleased] has nothing to link to until then.
    for (const v of versions.filter((x) => / - \d{4}-/.test(x))) {
      const label = v.match(/^\[([^\]]+)\]/)![1];
      assert.match(changelog, new RegExp(`^\\[${label.replace(/\./g, '\\.')}\\]: \\S+`, 'm'), `no link for [${label}]`);
    }
  });
});
