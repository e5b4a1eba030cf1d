// The settings' validators are Ajv's standalone code, generated from SERVER_ENTRY_SCHEMA, so reading
// `mcpHost.servers` at activation loads no Ajv. These tests keep the generated file current, hold its
// verdicts to Ajv's own on the same schema, and check that reading settings never loads the compiler.
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseServerDefinitions, SchemaValidator, SERVER_ENTRY_SCHEMA } from '../../src/core';

const ROOT = path.join(__dirname, '..', '..');
const generator = require(path.join(ROOT, 'scripts', 'settings-validators.js')) as { generate(): Promise<string>; FILE: string };

// Entries right and wrong in every way the schema can tell: each variant, each keyword.
const ENTRIES: unknown[] = [
  { command: 'node', args: ['server.js'], env: { A: 'x', B: null }, cwd: '/tmp', envFile: '.env' },
  { command: '' },
  { command: 7, args: 'server.js' },
  { args: [1, 'two'] },
  { command: 'node', env: { A: 1 }, startupTimeoutMs: 999, requestTimeoutMs: 1.5 },
  { command: 'node', tools: { allow: ['read_*'], deny: [3], extra: true }, autoApprove: 'all', roots: [null] },
  { command: 'node', logLevel: 'loud', protocol: '2024-01-01', trustAnnotations: 'yes', enabled: 0, autostart: 'no' },
  {
    command: 'node',
    sampling: { mode: 'sometimes', models: 'gpt', maxTokensPerRequest: 0, maxTokensPerHour: 2.5, maxRequestsPerMinute: -1, x: 1 },
  },
  { command: 'node', sampling: { mode: 'allow', models: ['gpt-4o'], maxTokensPerRequest: 100 } },
  { command: '\u{1F600}' },
  { type: 'http', url: 'https://example.com/mcp', headers: { Authorization: 'Bearer x' } },
  { type: 'http' },
  { type: 'http', url: 'ftp://example.com', headers: { A: 1 }, logLevel: 'debug' },
  { type: 'http', url: 42, headers: [] },
  { type: 'stdio', command: 'node', url: 'https://example.com' },
];

describe('settings validators generated from the entry schema', () => {
  it('are what scripts/settings-validators.js writes from the schema today', async () => {
    const written = fs.readFileSync(generator.FILE, 'utf8');
    assert.equal(written, await generator.generate(), 'run `node scripts/manifest.js` after changing src/core/servers/schema.ts');
  });

  it('give the messages Ajv gives compiling the same variant', () => {
    const ajv = new SchemaValidator();
    for (const entry of ENTRIES) {
      const e = entry as { type?: string };
      const variant = SERVER_ENTRY_SCHEMA.oneOf[e.type === 'http' ? 1 : 0];
      const known = Object.keys(e).every((k) => k in variant.properties);
      const compiled = ajv.check({ type: 'object', ...variant }, entry);
      const { diagnostics } = parseServerDefinitions({ probe: entry }, { scope: 'user' });
      // An unknown property is reported by name before validation runs; the rest is the validators' verdict.
      if (!known) assert.match(diagnostics[0]?.message ?? '', /^unknown propert/, JSON.stringify(entry));
      else if (compiled.ok) assert.deepEqual(diagnostics, [], JSON.stringify(entry));
      else assert.equal(diagnostics[0]?.message, compiled.message.replace(/^\(root\) /, ''), JSON.stringify(entry));
    }
  });

  it('reading the settings loads no Ajv compiler; the first server schema does', () => {
    const probe = [
      'const core = require("./src/core");',
      'const loaded = () => Object.keys(require.cache).some((f) => /[\\\\/]node_modules[\\\\/]ajv[\\\\/]dist[\\\\/]compile[\\\\/]/.test(f));',
      'const parsed = core.parseServerDefinitions({ a: { command: "node" }, b: { type: "http", url: "nope" } }, { scope: "user" });',
      'const afterSettings = loaded();',
      'const check = new core.SchemaValidator().check({ type: "object", required: ["x"] }, {});',
      'console.log(JSON.stringify({ definitions: parsed.definitions.length, diagnostics: parsed.diagnostics.length, afterSettings, check: check.ok, afterSchema: loaded() }));',
    ].join('\n');
    const out = execFileSync(process.execPath, ['-r', 'tsx/cjs', '-e', probe], { cwd: ROOT, encoding: 'utf8' });
    assert.deepEqual(JSON.parse(out.trim().split('\n').pop()!), {
      definitions: 1,
      diagnostics: 1,
      afterSettings: false,
      check: false,
      afterSchema: true,
    });
  });
});
