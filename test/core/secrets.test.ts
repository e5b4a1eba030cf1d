import { strict as assert } from 'node:assert';
import {
  decodeStoredInput,
  definitionIdentity,
  encodeStoredInput,
  launchHash,
  launchSummary,
  parseServerDefinitions,
  Redactor,
  resolveVariables,
  secretValuesOf,
  shownEntries,
  type ServerDefinition,
} from '../../src/core';

const one = (entry: Record<string, unknown>, scope: 'user' | 'workspace' = 'workspace'): ServerDefinition => {
  const { definitions, diagnostics } = parseServerDefinitions({ s: entry }, { scope });
  assert.deepEqual(diagnostics, []);
  return definitions[0];
};

describe('secrets: redaction', () => {
  it('replaces every known secret, longest first, and leaves short values alone', () => {
    const r = new Redactor();
    r.add('hunter2-token');
    r.add('hunter2-token-long');
    r.add('abc');
    r.add(undefined);
    assert.equal(r.redact('a hunter2-token-long b hunter2-token c abc'), 'a *** b *** c abc');
  });

  it('catches a secret inside the JSON the verbose trace writes', () => {
    const r = new Redactor();
    const secret = 'p"a\\ss\nword';
    r.add(secret);
    const body = JSON.stringify({ echoed: secret, nested: [{ again: `x${secret}y` }] }, null, 2);
    assert.ok(!r.redact(body).includes(JSON.stringify(secret).slice(1, -1)));
    assert.match(r.redact(body), /"echoed": "\*\*\*"/);
    assert.match(r.redact(body), /"again": "x\*\*\*y"/);
  });

  it('collects the resolved values of headers and env entries that carry secrets', async () => {
    const env = { API_KEY_FROM_ENV: 'env-secret-value', HOME_DIR: '/home/someone' };
    const http = one({
      type: 'http',
      url: 'https://example.com/mcp',
      headers: { Authorization: 'Bearer ${input:tok}', 'X-Key': '${env:API_KEY_FROM_ENV}', 'X-Plain': 'visible', Cookie: 'literal-cookie' },
    });
    const resolvedHttp = await resolveVariables(http, { userHome: '/h', env, input: async () => 'typed-token' });
    assert.deepEqual(
      secretValuesOf(http, resolvedHttp, env).sort(),
      ['Bearer typed-token', 'env-secret-value', 'env-secret-value', 'literal-cookie', 'typed-token'].sort(),
    );

    const stdio = one({
      command: 'node',
      args: ['${env:HOME_DIR}/x'],
      env: { GITHUB_TOKEN: 'literal-ghp', FROM_ENV: 'pre-${env:API_KEY_FROM_ENV}', PATHLIKE: '/usr/bin', HOME: '${env:HOME_DIR}' },
    });
    const resolvedStdio = await resolveVariables(stdio, { userHome: '/h', env });
    const values = secretValuesOf(stdio, resolvedStdio, env);
    assert.ok(values.includes('literal-ghp'));
    assert.ok(values.includes('pre-env-secret-value') && values.includes('env-secret-value'));
    assert.ok(
      !values.includes('/usr/bin') && !values.some((v) => v.includes('/home/someone')),
      'arguments, plain entries and ${env:HOME_DIR} are not secrets',
    );
  });
});

describe('secrets: what the launch consent shows', () => {
  it('shows env with secret values masked, envFile and cwd', () => {
    const def = one({
      command: 'python',
      args: ['-m', 'srv'],
      env: { PYTHONPATH: '/repo/evil', GITHUB_TOKEN: 'ghp_literal', API: 'Bearer ${input:api}', GONE: null },
      envFile: '.env.local',
      cwd: 'sub dir',
    });
    const s = launchSummary(def, '/repo/sub dir');
    assert.equal(s.commandLine, 'python -m srv');
    assert.equal(s.cwd, '/repo/sub dir');
    assert.equal(s.envFile, '.env.local');
    assert.deepEqual(
      s.entries.map((e) => [e.name, e.shown, e.sources, e.secret]),
      [
        ['PYTHONPATH', '/repo/evil', [], false],
        ['GITHUB_TOKEN', '***', [], true],
        ['API', 'Bearer ${input:api}', ['${input:api}'], true],
        ['GONE', '(removed)', [], false],
      ],
    );
    assert.ok(!JSON.stringify(s.entries).includes('ghp_literal'));
  });

  it("shows an HTTP server's URL and which headers carry which secrets, never a value", () => {
    const def = one({
      type: 'http',
      url: 'https://evil.example/mcp',
      headers: { Authorization: 'Bearer ${input:tok}', 'X-Both': '${env:A}:${input:b}', 'X-Api-Key': 'sk-literal' },
    });
    const s = launchSummary(def, undefined);
    assert.equal(s.url, 'https://evil.example/mcp');
    assert.deepEqual(
      s.entries.map((e) => [e.name, e.shown, e.sources]),
      [
        ['Authorization', 'Bearer ${input:tok}', ['${input:tok}']],
        ['X-Both', '${env:A}:${input:b}', ['${env:A}', '${input:b}']],
        ['X-Api-Key', '***', []],
      ],
    );
    assert.deepEqual(shownEntries({}), []);
  });

  it('asks again when command, args, env, envFile or cwd change (stdio) or url or headers (HTTP)', () => {
    const base = { command: 'node', args: ['a.js'], env: { A: '1' }, envFile: '.env', cwd: 'x' };
    const h = launchHash(one(base));
    assert.equal(launchHash(one({ ...base })), h, 'stable');
    for (const changed of [
      { command: 'nodejs' },
      { args: ['b.js'] },
      { env: { A: '2' } },
      { env: { A: '1', PYTHONPATH: '/p' } },
      { envFile: '.env2' },
      { cwd: 'y' },
    ]) {
      assert.notEqual(launchHash(one({ ...base, ...changed })), h, JSON.stringify(changed));
    }
    const http = { type: 'http', url: 'https://a.example/mcp', headers: { Authorization: 'Bearer ${input:t}' } };
    const hh = launchHash(one(http));
    assert.notEqual(launchHash(one({ ...http, url: 'https://b.example/mcp' })), hh);
    assert.notEqual(
      launchHash(one({ ...http, headers: { Authorization: 'Bearer ${input:other}' } })),
      hh,
      'a header that sends another secret asks again',
    );
    assert.notEqual(launchHash(one({ ...http, headers: { ...http.headers, 'X-Extra': '${env:AWS_SECRET_ACCESS_KEY}' } })), hh);
  });
});

describe('secrets: who a stored input belongs to', () => {
  it('tells the same name in two workspaces, folders and user settings apart', () => {
    const ids = new Set([
      definitionIdentity({ name: 'github', origin: { scope: 'user' } }, 'file:///a'),
      definitionIdentity({ name: 'github', origin: { scope: 'workspace' } }, 'file:///a'),
      definitionIdentity({ name: 'github', origin: { scope: 'workspace' } }, 'file:///b'),
      definitionIdentity({ name: 'github', origin: { scope: 'folder', folderUri: 'file:///a/f' } }, 'file:///a'),
    ]);
    assert.equal(ids.size, 4);
    assert.equal(
      definitionIdentity({ name: 'github', origin: { scope: 'user' } }, 'file:///a'),
      definitionIdentity({ name: 'github', origin: { scope: 'user' } }, 'file:///b'),
      'a user server is one server everywhere',
    );
  });

  it('round-trips a stored record and reads a bare value from before owners were kept', () => {
    const rec = { value: 'v{"x"}', owner: 'user:a', ownerLabel: '"a"', allowed: ['workspace:w:b'] };
    assert.deepEqual(decodeStoredInput(encodeStoredInput(rec)), rec);
    assert.deepEqual(decodeStoredInput('plain-old-token'), { value: 'plain-old-token', allowed: [] });
    assert.deepEqual(
      decodeStoredInput('{"value":"json-looking token"}'),
      { value: '{"value":"json-looking token"}', allowed: [] },
      'only our own mark makes a record',
    );
  });
});
