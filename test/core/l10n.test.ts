import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

const ROOT = path.join(__dirname, '..', '..');
const readJson = (...parts: string[]): Record<string, string> => JSON.parse(fs.readFileSync(path.join(ROOT, ...parts), 'utf8'));
const { nlsKeys } = require(path.join(ROOT, 'scripts', 'nls.js')) as { nlsKeys: (value: unknown) => Set<string> };

/** The languages the extension is translated into, besides English. */
const LOCALES = ['zh-cn'];
/**
 * Texts that read the same in every language: names, and messages made only of parts that are
 * translated on their own. Anything else left in English counts as untranslated.
 */
const SAME_IN_EVERY_LANGUAGE = new Set(['MCP Host', '$(globe) HTTP URL']);

const sorted = (xs: Iterable<string>) => [...xs].sort();
const difference = (a: Iterable<string>, b: Iterable<string>) => {
  const other = new Set(b);
  return sorted([...a].filter((x) => !other.has(x)));
};

/** What a translation must carry over unchanged: placeholders, command links, code spans, icons. */
function invariants(text: string): string[] {
  const found = [
    ...text.matchAll(/\{\d+\}/g),
    ...text.matchAll(/\]\((?:command:|https?:)[^)]*\)/g),
    ...text.matchAll(/`[^`]+`/g),
    ...text.matchAll(/\$\([\w-]+\)/g),
  ].map((m) => m[0]);
  return found.sort();
}

function checkTranslation(english: Record<string, string>, translated: Record<string, string>, file: string): void {
  assert.deepEqual(difference(Object.keys(english), Object.keys(translated)), [], `${file} lacks these keys`);
  assert.deepEqual(difference(Object.keys(translated), Object.keys(english)), [], `${file} has keys English does not`);
  const untranslated = Object.keys(english).filter((k) => translated[k] === english[k] && !SAME_IN_EVERY_LANGUAGE.has(english[k]));
  assert.deepEqual(untranslated, [], `${file} leaves these in English`);
  for (const key of Object.keys(english)) {
    assert.ok(translated[key].trim().length > 0, `${file}: "${key}" is empty`);
    assert.deepEqual(
      invariants(translated[key]),
      invariants(english[key]),
      `${file}: "${key}" must keep its placeholders, links, code and icons`,
    );
  }
}

describe('localisation', () => {
  const manifest = readJson('package.json');
  const nls = readJson('package.nls.json');

  it('has an English text in package.nls.json for every %key% of package.json, and no unused one', () => {
    const used = nlsKeys(manifest);
    assert.ok(used.size > 50, `only ${used.size} %keys% in package.json`);
    assert.deepEqual(difference(used, Object.keys(nls)), [], 'package.nls.json lacks these keys');
    assert.deepEqual(difference(Object.keys(nls), used), [], 'package.nls.json has keys package.json does not use');
  });

  it('leaves no contributed title, name or description in plain English', () => {
    const contributes = manifest.contributes as unknown as Record<string, unknown>;
    const plain: string[] = [];
    const walk = (value: unknown, where: string) => {
      if (Array.isArray(value)) value.forEach((v, i) => walk(v, `${where}[${i}]`));
      else if (value && typeof value === 'object') {
        for (const [k, v] of Object.entries(value)) {
          // A setting's `policy` names itself and its category with identifiers (the administrator's keys), not prose.
          const identifier = where.endsWith('.policy') && (k === 'name' || k === 'category');
          const prose =
            !identifier &&
            (['title', 'name', 'description', 'markdownDescription', 'contents', 'label', 'category', 'contextualTitle'].includes(k) ||
              /EnumDescriptions$|enumDescriptions/.test(k));
          if (prose && typeof v === 'string' && !/^%.+%$/.test(v)) plain.push(`${where}.${k}`);
          else if (prose && Array.isArray(v) && v.some((s) => typeof s === 'string' && !/^%.+%$/.test(s))) plain.push(`${where}.${k}`);
          // Examples and snippet bodies are settings values, not prose.
          else if (k !== 'examples' && k !== 'body') walk(v, `${where}.${k}`);
        }
      }
    };
    walk(contributes, 'contributes');
    assert.deepEqual(plain, []);
    for (const field of ['displayName', 'description']) assert.match(String(manifest[field]), /^%.+%$/, field);
  });

  for (const locale of LOCALES) {
    it(`translates every text of package.nls.json into ${locale}`, () => {
      checkTranslation(nls, readJson(`package.nls.${locale}.json`), `package.nls.${locale}.json`);
    });

    it(`translates every message of l10n/bundle.l10n.json into ${locale}`, () => {
      checkTranslation(
        readJson('l10n', 'bundle.l10n.json'),
        readJson('l10n', `bundle.l10n.${locale}.json`),
        `l10n/bundle.l10n.${locale}.json`,
      );
    });
  }

  it('has each walkthrough page in every language, with the same code, links and commands', () => {
    const pages = Object.keys(nls).filter((k) => k.endsWith('.media'));
    assert.ok(pages.length >= 5, 'the walkthrough steps name their pages through package.nls.json');
    const markup = (file: string) => {
      const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
      return sorted([...text.matchAll(/`[^`]+`|\]\([^)]*\)/g)].map((m) => m[0]));
    };
    for (const locale of LOCALES) {
      const translated = readJson(`package.nls.${locale}.json`);
      for (const key of pages) {
        assert.notEqual(translated[key], nls[key], `${key} has no ${locale} page`);
        assert.ok(fs.existsSync(path.join(ROOT, translated[key])), `${translated[key]} is missing`);
        assert.deepEqual(markup(translated[key]), markup(nls[key]), `${translated[key]} must keep the code and links of ${nls[key]}`);
      }
    }
  });

  it('has l10n/bundle.l10n.json as `npm run l10n` exports it from the source today', function () {
    this.timeout(120_000);
    assert.equal(manifest.l10n, './l10n');
    const out = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-host-l10n-'));
    try {
      const cli = path.join(ROOT, 'node_modules', '@vscode', 'l10n-dev', 'dist', 'cli.js');
      const run = spawnSync(process.execPath, [cli, 'export', '--outDir', out, path.join(ROOT, 'src')], { cwd: ROOT, encoding: 'utf8' });
      assert.equal(run.status, 0, run.stderr);
      const fresh = JSON.parse(fs.readFileSync(path.join(out, 'bundle.l10n.json'), 'utf8'));
      const committed = readJson('l10n', 'bundle.l10n.json');
      assert.deepEqual(
        difference(Object.keys(fresh), Object.keys(committed)),
        [],
        'messages in the source missing from l10n/bundle.l10n.json: run npm run l10n',
      );
      assert.deepEqual(difference(Object.keys(committed), Object.keys(fresh)), [], 'messages no longer in the source: run npm run l10n');
      assert.deepEqual(committed, fresh);
    } finally {
      fs.rmSync(out, { recursive: true, force: true });
    }
  });

  it('ships the translations in the VSIX (.vscodeignore is an allowlist)', () => {
    const allow = fs
      .readFileSync(path.join(ROOT, '.vscodeignore'), 'utf8')
      .split('\n')
      .map((l) => l.trim());
    assert.ok(allow.includes('!l10n/*.json'), '.vscodeignore does not let l10n/*.json in');
    assert.ok(allow.includes('!package.nls*.json'), '.vscodeignore does not let package.nls*.json in');
  });
});
