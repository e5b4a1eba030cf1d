import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { PassThrough } from 'node:stream';
import { runCli } from '../../src/cli/main';
import { MAX_ENDED_RECEIVER_TASKS, MAX_LIVE_RECEIVER_TASKS, MAX_TASK_POLL_MS, MIN_TASK_POLL_MS } from '../../src/core/client/tasks';
import { MAX_LIST_BYTES, MAX_LIST_PAGES } from '../../src/core/client/client';
import { ERA_VERDICT_MAX_AGE_MS } from '../../src/core/client/era';
import { MAX_INPUT_REQUESTS_PER_ROUND } from '../../src/core/client/inputRequests';
import { LISTEN_RETRY_MAX_MS } from '../../src/core/client/listen';
import { DEFAULT_REQUEST_TIMEOUT_MS } from '../../src/core/jsonrpc/connection';
import { LOCK_STALE_MS, LOCK_TIMEOUT_MS } from '../../src/core/files/auditLock';
import { MAX_VERIFIED_BYTES } from '../../src/core/policy/auditVerify';
import { MAX_LOCK_FILE_BYTES } from '../../src/core/policy/pins';
import { ICON_FETCH_TIMEOUT_MS, MAX_ICON_BYTES, MAX_ICON_FETCHES } from '../../src/core/render/icons';
import { SHOWN_MAX } from '../../src/core/render/shownText';
import {
  SAMPLING_HISTORY_MAX_BYTES,
  SAMPLING_HISTORY_MAX_ENTRIES,
  SAMPLING_HISTORY_MAX_REQUEST_BYTES,
} from '../../src/core/sampling/history';
import { MIN_REDACTED_LENGTH } from '../../src/core/servers/secrets';
import { MAX_REDIRECTS } from '../../src/core/transport/nodeFetch';
import { MAX_INNER_DEPTH, MAX_INNER_STRINGS } from '../../src/core/policy/fence';
import { MAX_EXPANDED } from '../../src/core/policy/fenceStrings';
import { MAX_STDERR_LINE } from '../../src/core/transport/stdio';
import { MAX_ARGUMENT_CHARS, MAX_ARGUMENT_DEPTH, MAX_ARGUMENT_VALUES } from '../../src/core/policy/limits';
import { POSIX_BASE, WINDOWS_BASE } from '../../src/core/servers/environment';
import { INPUTS_SETTING_SCHEMA, parseServerDefinitions, SERVER_ENTRY_SCHEMA, SERVERS_SETTING_SCHEMA } from '../../src/core';
import { ROOT, firstCodeCells, headings, readMarkdown, section, type MarkdownDoc } from '../helpers/markdown';

const { resolveNls } = require(path.join(ROOT, 'scripts', 'nls.js')) as { resolveNls: <T>(value: T, texts: Record<string, string>) => T };
const readJson = (name: string) => JSON.parse(fs.readFileSync(path.join(ROOT, name), 'utf8'));
/** The manifest as VS Code shows it in English: every %key% replaced from package.nls.json. */
const pkg = resolveNls(readJson('package.json'), readJson('package.nls.json'));
const readme = readMarkdown('README.md');

/** The first cell of each table row under a heading (and its subheadings), when it is `code`. */
function documentedNames(doc: MarkdownDoc, heading: string): string[] {
  return firstCodeCells(section(doc, heading).rows);
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

/**
 * What differs between a documented list and the true one, as sentences that say what to do:
 * each expected name missing, each name that should not be there, each name listed twice.
 */
function exactList(
  documented: string[],
  expected: string[],
  say: { missing: (name: string) => string; extra: (name: string) => string; twice: (name: string) => string },
): string[] {
  const want = new Set(expected);
  const have = new Set(documented);
  return [
    ...[...want].filter((n) => !have.has(n)).map(say.missing),
    ...[...have].filter((n) => !want.has(n)).map(say.extra),
    ...[...have].filter((n) => documented.indexOf(n) !== documented.lastIndexOf(n)).map(say.twice),
  ];
}

describe('the documentation keeps up with the manifest', () => {
  it('documents every property of a server entry, once, and no other', () => {
    const documented = documentedNames(readme, '### A server entry in `mcpHost.servers`');
    const problems = exactList(documented, [...entryPropertyPaths().keys()], {
      missing: (name) =>
        `add a row "| \`${name}\` | for | type | default | meaning |" under "### A server entry in \`mcpHost.servers\`" in README.md`,
      extra: (name) =>
        `remove the row of \`${name}\` under "### A server entry in \`mcpHost.servers\`" in README.md: the entry's schema has no such property`,
      twice: (name) => `\`${name}\` has more than one row under "### A server entry in \`mcpHost.servers\`" in README.md`,
    });
    assert.deepEqual(problems, []);
  });

  it('documents every property of an input, once, and no other', () => {
    const documented = documentedNames(readme, '### An input in `mcpHost.inputs`');
    const problems = exactList(documented, Object.keys(INPUTS_SETTING_SCHEMA.additionalProperties.properties), {
      missing: (name) => `add a row "| \`${name}\` | type | default | meaning |" under "### An input in \`mcpHost.inputs\`" in README.md`,
      extra: (name) =>
        `remove the row of \`${name}\` under "### An input in \`mcpHost.inputs\`" in README.md: an input has no such property`,
      twice: (name) => `\`${name}\` has more than one row under "### An input in \`mcpHost.inputs\`" in README.md`,
    });
    assert.deepEqual(problems, []);
  });

  it('documents every setting the extension contributes, once, and no other', () => {
    const documented = firstCodeCells(section(readme, '## Settings', true).rows);
    const problems = exactList(documented, Object.keys(pkg.contributes.configuration.properties), {
      missing: (name) => `add a row "| \`${name}\` | type | default | meaning |" to the table under "## Settings" in README.md`,
      extra: (name) => `remove the row of \`${name}\` under "## Settings" in README.md: package.json contributes no such setting`,
      twice: (name) => `\`${name}\` has more than one row under "## Settings" in README.md: keep one`,
    });
    assert.deepEqual(problems, []);
  });

  it('lists every contributed command by its palette title, once, and no other', () => {
    const listed = section(readme, '## Commands')
      .rows.map((row) => /^\*\*(.+?)\*\*$/.exec(row[0])?.[1])
      .filter((title): title is string => title !== undefined);
    const contributed = pkg.contributes.commands.map(
      (c: { category?: string; title: string }) => `${c.category ? `${c.category}: ` : ''}${c.title}`,
    );
    const problems = exactList(listed, contributed, {
      missing: (title) =>
        `add a row "| **${title}** | what it does | [picture](media/screenshots/….png) or — |" to the table under "## Commands" in README.md`,
      extra: (title) => `remove the row of **${title}** under "## Commands" in README.md: package.json contributes no such command`,
      twice: (title) => `**${title}** has more than one row under "## Commands" in README.md: keep one`,
    });
    assert.deepEqual(problems, []);
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
    const changelog = readMarkdown('CHANGELOG.md');
    const titled = headings(changelog);
    assert.deepEqual(titled[0] && [titled[0].level, titled[0].source], [1, 'Changelog']);
    assert.match(changelog.source, /keepachangelog\.com/);
    const versions = titled.filter((h) => h.level === 2).map((h) => h.source);
    assert.ok(versions.length > 0);
    for (const v of versions) assert.match(v, /^\[(Unreleased|\d+\.\d+\.\d+)\]( - \d{4}-\d{2}-\d{2})?$/, `version heading "${v}"`);
    const kinds = titled.filter((h) => h.level === 3).map((h) => h.source);
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
      assert.match(changelog.source, new RegExp(`^\\[${label.replace(/\./g, '\\.')}\\]: \\S+`, 'm'), `no link for [${label}]`);
    }
  });
});

const readDoc = (name: string) => fs.readFileSync(path.join(ROOT, name), 'utf8');

describe('the documentation keeps up with the code', () => {
  it("documents every verb and option of the CLI's --help in docs/cli.md, and no other", async () => {
    let usage = '';
    const out = new PassThrough().on('data', (c: Buffer) => (usage += c.toString()));
    // runCli's streams are typed after process.stdout and process.stderr, its defaults; any writable stream will do.
    type Streams = Parameters<typeof runCli>;
    assert.equal(await runCli(['--help'], out as unknown as Streams[1], new PassThrough() as unknown as Streams[2]), 0);
    const flags = new Set([...usage.matchAll(/(?<![\w-])--[a-z][a-z-]*/g)].map((m) => m[0]));
    flags.add('--help'); // prints the usage itself
    const verbs = [
      ...(/^Verbs:\n((?: {2}.*\n)+)/m.exec(usage)?.[1] ?? '').matchAll(/^ {2}([a-z][\w-]*)/gm),
      ...usage.matchAll(/^\s*(?:Usage:\s*)?mcp-host ([a-z]+ [a-z]+) /gm),
    ].map((m) => m[1]);
    assert.ok(flags.size > 5 && verbs.length > 5, `could not read the usage:\n${usage}`);
    const cli = readMarkdown('docs/cli.md');
    const documentedVerbs = firstCodeCells(section(cli, '## Verbs', true).rows).map((cell) => cell.split(/ [<']/)[0]);
    const documentedFlags = firstCodeCells(section(cli, '## Options', true).rows);
    const problems = [
      ...exactList(documentedVerbs, verbs, {
        missing: (v) => `add a row "| \`${v} …\` | what it prints |" under "## Verbs" in docs/cli.md (--help lists it)`,
        extra: (v) => `remove \`${v}\` from "## Verbs" in docs/cli.md: --help has no such verb`,
        twice: (v) => `\`${v}\` has more than one row under "## Verbs" in docs/cli.md`,
      }),
      ...exactList(documentedFlags, [...flags], {
        missing: (f) => `add a row "| \`${f}\` | what it does |" under "## Options" in docs/cli.md (--help lists it)`,
        extra: (f) => `remove \`${f}\` from "## Options" in docs/cli.md: --help has no such option`,
        twice: (f) => `\`${f}\` has more than one row under "## Options" in docs/cli.md`,
      }),
    ];
    assert.deepEqual(problems, []);
  });

  it('lists exactly the bundles esbuild.js writes', () => {
    const built = [...fs.readFileSync(path.join(ROOT, 'esbuild.js'), 'utf8').matchAll(/outfile: '([^']+)'/g)].map((m) => m[1]);
    assert.ok(built.length > 3, 'esbuild.js: no outfile found');
    const problems = exactList(firstCodeCells(section(readMarkdown('docs/development.md'), '## The bundles', true).rows), built, {
      missing: (f) => `add a row "| \`${f}\` | what it holds, and when it is loaded |" under "## The bundles" in docs/development.md`,
      extra: (f) => `remove \`${f}\` from "## The bundles" in docs/development.md: esbuild.js does not write it`,
      twice: (f) => `\`${f}\` has more than one row under "## The bundles" in docs/development.md`,
    });
    assert.deepEqual(problems, []);
  });

  it('lists exactly what .vscodeignore lets into the VSIX', () => {
    const allowed = fs
      .readFileSync(path.join(ROOT, '.vscodeignore'), 'utf8')
      .split('\n')
      .filter((l) => l.startsWith('!'))
      .map((l) => l.slice(1).trim());
    const problems = exactList(firstCodeCells(section(readMarkdown('docs/development.md'), '## What the VSIX holds', true).rows), allowed, {
      missing: (f) => `add a row "| \`${f}\` | what it is |" under "## What the VSIX holds" in docs/development.md`,
      extra: (f) => `remove \`${f}\` from "## What the VSIX holds" in docs/development.md: .vscodeignore does not allow it`,
      twice: (f) => `\`${f}\` has more than one row under "## What the VSIX holds" in docs/development.md`,
    });
    assert.deepEqual(problems, []);
  });
});

describe("the documentation's figures are the code's", () => {
  /** A page's text with every run of white space (line breaks too) as one space. */
  const flat = (name: string) => readDoc(name).replace(/\s+/g, ' ');
  const KB = 1024;
  const MB = 1024 * 1024;
  /** The base environment as the docs list it: `LC_*` stands for the locale's variables, after `LANG`. */
  const POSIX_ENVIRONMENT = POSIX_BASE.flatMap((name) => (name === 'LANG' ? [name, 'LC_*'] : [name]))
    .map((name) => `\`${name}\``)
    .join(', ');
  const checks: [page: string, phrase: string, constant: string][] = [
    ['docs/security.md', `of at most ${MAX_ICON_BYTES / KB} KB`, 'MAX_ICON_BYTES'],
    ['docs/security.md', `within ${ICON_FETCH_TIMEOUT_MS / 1000} s`, 'ICON_FETCH_TIMEOUT_MS'],
    ['docs/security.md', `once per session (at most ${MAX_ICON_FETCHES})`, 'MAX_ICON_FETCHES'],
    [
      'docs/security.md',
      `the last ${SAMPLING_HISTORY_MAX_ENTRIES} exchanges and at most ${SAMPLING_HISTORY_MAX_BYTES / MB} MB`,
      'SAMPLING_HISTORY_MAX_ENTRIES, SAMPLING_HISTORY_MAX_BYTES',
    ],
    ['docs/security.md', `a request over ${SAMPLING_HISTORY_MAX_REQUEST_BYTES / MB} MB`, 'SAMPLING_HISTORY_MAX_REQUEST_BYTES'],
    ['README.md', `(the last ${SAMPLING_HISTORY_MAX_ENTRIES}, at most ${SAMPLING_HISTORY_MAX_BYTES / MB} MB)`, 'SAMPLING_HISTORY_*'],
    ['docs/security.md', `at most ${MAX_LIVE_RECEIVER_TASKS} tasks`, 'MAX_LIVE_RECEIVER_TASKS'],
    ['docs/security.md', `at most ${MAX_ENDED_RECEIVER_TASKS} ended ones`, 'MAX_ENDED_RECEIVER_TASKS'],
    ['docs/security.md', `${MAX_LIST_PAGES.toLocaleString('en')} pages and ${MAX_LIST_BYTES / MB} MB`, 'MAX_LIST_PAGES, MAX_LIST_BYTES'],
    ['docs/security.md', `cut at ${SHOWN_MAX.toLocaleString('en')} characters`, 'SHOWN_MAX'],
    ['docs/security.md', `shorter than ${MIN_REDACTED_LENGTH} characters`, 'MIN_REDACTED_LENGTH'],
    ['docs/security.md', `longer than ${MAX_STDERR_LINE / KB} Ki characters`, 'MAX_STDERR_LINE'],
    ['docs/protocol.md', `between ${MIN_TASK_POLL_MS / 1000} and ${MAX_TASK_POLL_MS / 1000} s`, 'MIN_TASK_POLL_MS, MAX_TASK_POLL_MS'],
    ['docs/protocol.md', `at most ${MAX_REDIRECTS}:`, 'MAX_REDIRECTS'],
    ['docs/protocol.md', `at most ${MAX_INPUT_REQUESTS_PER_ROUND} inputs each`, 'MAX_INPUT_REQUESTS_PER_ROUND'],
    ['docs/protocol.md', `doubles up to ${LISTEN_RETRY_MAX_MS / 1000} seconds`, 'LISTEN_RETRY_MAX_MS'],
    ['README.md', `for ${ERA_VERDICT_MAX_AGE_MS / 86_400_000} days`, 'ERA_VERDICT_MAX_AGE_MS'],
    ['docs/security-audit.md', `older than ${LOCK_STALE_MS / 1000} seconds is taken as left behind`, 'LOCK_STALE_MS'],
    ['docs/security-audit.md', `after ${LOCK_TIMEOUT_MS / 1000} seconds drops that batch`, 'LOCK_TIMEOUT_MS'],
    ['docs/security-audit.md', `refuses one over ${MAX_VERIFIED_BYTES / MB} MB`, 'MAX_VERIFIED_BYTES'],
    ['docs/pinning.md', `a lock file over ${MAX_LOCK_FILE_BYTES / MB} MiB`, 'MAX_LOCK_FILE_BYTES'],
    ['docs/pinning.md', `nothing over ${MAX_LOCK_FILE_BYTES / MB} MiB`, 'MAX_LOCK_FILE_BYTES'],
    ['README.md', `| \`${DEFAULT_REQUEST_TIMEOUT_MS}\` |`, 'DEFAULT_REQUEST_TIMEOUT_MS (requestTimeoutMs)'],
    [
      'README.md',
      `nested deeper than ${MAX_ARGUMENT_DEPTH} levels, with more than ${MAX_ARGUMENT_CHARS / MB} Mi (${MAX_ARGUMENT_CHARS.toLocaleString('en')}) characters in their strings and keys, or with more than ${MAX_ARGUMENT_VALUES.toLocaleString('en')} values`,
      'MAX_ARGUMENT_DEPTH, MAX_ARGUMENT_CHARS, MAX_ARGUMENT_VALUES',
    ],
    [
      'docs/security-fence.md',
      `**${MAX_ARGUMENT_DEPTH} levels** of nesting, **${MAX_ARGUMENT_CHARS / MB} Mi (${MAX_ARGUMENT_CHARS.toLocaleString('en')}) characters** in strings and keys together, and **${MAX_ARGUMENT_VALUES.toLocaleString('en')}**`,
      'MAX_ARGUMENT_DEPTH, MAX_ARGUMENT_CHARS, MAX_ARGUMENT_VALUES',
    ],
    [
      'docs/security.md',
      `(${MAX_ARGUMENT_DEPTH} levels, ${MAX_ARGUMENT_CHARS / MB} Mi characters, ${MAX_ARGUMENT_VALUES.toLocaleString('en')} values)`,
      'MAX_ARGUMENT_DEPTH, MAX_ARGUMENT_CHARS, MAX_ARGUMENT_VALUES',
    ],
    ['README.md', POSIX_ENVIRONMENT, 'POSIX_BASE'],
    ['docs/sandbox.md', POSIX_ENVIRONMENT, 'POSIX_BASE'],
    ['docs/sandbox.md', `(on Windows: ${WINDOWS_BASE.map((name) => `\`${name}\``).join(', ')})`, 'WINDOWS_BASE'],
    ['docs/security-fence.md', `nests at most ${MAX_INNER_DEPTH} deep`, 'MAX_INNER_DEPTH'],
    ['docs/security-fence.md', `holds at most ${MAX_INNER_STRINGS.toLocaleString('en')} such strings`, 'MAX_INNER_STRINGS'],
    ['docs/security-fence.md', `add more than ${MAX_EXPANDED / MB} MiB to a string`, 'MAX_EXPANDED'],
  ];
  for (const [page, phrase, constant] of checks) {
    it(`${page} says "${phrase}" (${constant})`, () => {
      assert.ok(
        flat(page).includes(phrase),
        `${page} should say "${phrase}", as ${constant} in src/core has it; change the text where it says otherwise`,
      );
    });
  }

  it('names the versions the manifest and the harness use', () => {
    const install = fs.readFileSync(path.join(ROOT, 'test', 'harness', 'install.sh'), 'utf8');
    const codeServer = /^DEFAULT_CS_VERSION=(\S+)$/m.exec(install)?.[1];
    const nodeMajor = /NODE_MAJOR="\$\{NODE_MAJOR:-(\d+)\}"/.exec(install)?.[1];
    const oldest = /SMOKE_TARGETS = \[\{ codeServer: '([^']+)', node: (\d+) \}/.exec(
      fs.readFileSync(path.join(ROOT, 'test', 'harness', 'run-vscode-tests.js'), 'utf8'),
    );
    assert.ok(codeServer && nodeMajor && oldest, 'could not read the versions from install.sh and run-vscode-tests.js');
    const conformance = (name: string) => /(\d+\.\d+\.\d+[\w.-]*)$/.exec(String(pkg.devDependencies[name]))![1];
    const wanted: [string, string][] = [
      ['README.md', `(\`engines.vscode\` is \`${pkg.engines.vscode}\``],
      ['docs/development.md', `Node ${nodeMajor} and code-server ${codeServer}`],
      ['docs/development.md', `code-server ${oldest[1]}`],
      ['docs/development.md', `with Node ${oldest[2]} for the check of the oldest VS Code`],
      ['docs/protocol.md', `the suite ${conformance('@modelcontextprotocol/conformance')},`],
      ['docs/protocol.md', `${conformance('@modelcontextprotocol/conformance-next')} with \`--spec-version 2026-07-28\``],
    ];
    const missing = wanted
      .filter(([page, phrase]) => !flat(page).includes(phrase))
      .map(([page, phrase]) => `${page} should say "${phrase}"`);
    assert.deepEqual(missing, []);
  });

  it("states the editor's tool-call limits as src/vscode/tools/callTool.ts has them", () => {
    // The editor layer imports vscode, so its constants are read from the source text.
    const source = fs.readFileSync(path.join(ROOT, 'src', 'vscode', 'tools', 'callTool.ts'), 'utf8');
    const minutes = (name: string) => {
      const m = new RegExp(`const ${name} = (\\d+) \\* 60_000;`).exec(source);
      assert.ok(m, `src/vscode/tools/callTool.ts no longer has "const ${name} = N * 60_000;"`);
      return Number(m[1]);
    };
    const history = Number(/const HISTORY_SIZE = (\d+);/.exec(source)?.[1]);
    const readmeText = flat('README.md');
    assert.ok(readmeText.includes(`silent for ${minutes('INTERACTIVE_IDLE_MS')} minutes`), 'README: INTERACTIVE_IDLE_MS');
    assert.ok(readmeText.includes(`at most ${minutes('MAX_CALL_MS')} minutes in all`), 'README: MAX_CALL_MS');
    assert.ok(readmeText.includes(`the last ${history} calls`), 'README: HISTORY_SIZE');
    assert.ok(flat('docs/usage.md').includes(`(the last ${history} calls)`), 'docs/usage.md: HISTORY_SIZE');
    assert.ok(
      flat('docs/security.md').includes(`${minutes('INTERACTIVE_IDLE_MS')} minutes of silence, ${minutes('MAX_CALL_MS')} in all`),
      'docs/security.md: INTERACTIVE_IDLE_MS, MAX_CALL_MS',
    );
  });

  it('states the limits private to their files as the source has them', () => {
    /** `const NAME = 1_000;` or `= 30 * 60_000;` in a source file, as a number. */
    const constant = (file: string, name: string) => {
      const m = new RegExp(`const ${name} = ([\\d_ *]+);`).exec(fs.readFileSync(path.join(ROOT, 'src', file), 'utf8'));
      assert.ok(m, `src/${file} no longer has "const ${name} = …;"`);
      return m[1].split('*').reduce((product, factor) => product * Number(factor.trim().replace(/_/g, '')), 1);
    };
    const checks: [page: string, phrase: string][] = [
      ['docs/protocol.md', `for at most ${constant('core/client/statelessSession.ts', 'MAX_INPUT_ROUNDS')} rounds`],
      [
        'docs/protocol.md',
        `At most ${constant('core/client/cache.ts', 'DEFAULT_MAX_ENTRIES')} answers and ${constant('core/client/cache.ts', 'DEFAULT_MAX_CONTENT_CHARS') / 1e6} million characters`,
      ],
      ['docs/security.md', `at most ${constant('core/client/cache.ts', 'DEFAULT_MAX_GENERATIONS').toLocaleString('en')} invalidated URIs`],
      ['docs/apps.md', `for at most ${constant('vscode/apps/appPanels.ts', 'APP_INIT_TIMEOUT_MS') / 1000} seconds`],
    ];
    const missing = checks
      .filter(([page, phrase]) => !flat(page).includes(phrase))
      .map(([page, phrase]) => `${page} should say "${phrase}"`);
    assert.deepEqual(missing, []);
  });

  it("docs/security-masking.md names every kind and Authorization scheme of mask.ts's built-in detectors", () => {
    const source = fs.readFileSync(path.join(ROOT, 'src', 'core', 'scan', 'mask.ts'), 'utf8');
    const kinds = [...source.matchAll(/regexDetector\(\s*'([a-z-]+)'/g), ...source.matchAll(/^ {2}[a-z]+: '([a-z-]+)',$/gm)].map(
      (m) => m[1],
    );
    const schemes = /const AUTH_SCHEMES =\s*'([^']+)'/.exec(source)?.[1].split('|') ?? [];
    assert.ok(kinds.length > 10 && schemes.length > 10, 'could not read the kinds and schemes from mask.ts');
    const page = flat('docs/security-masking.md');
    const missing = [...kinds.map((k) => `\`${k}\``), ...schemes.map((s) => `${s} …\``)].filter((phrase) => !page.includes(phrase));
    assert.deepEqual([...new Set(missing)], []);
  });

  it('states no benchmark figure in prose: they are in bench/results.json', () => {
    const timings = [...flat('docs/benchmarks.md').matchAll(/\b\d[\d,.]*\s?(?:ms|×|x direct|calls\/s)(?!\w)/g)].map((m) => m[0]);
    assert.deepEqual(timings, []);
  });
});
