import { strict as assert } from 'node:assert';
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startFixture } from '../helpers/httpServers';
import { ROOT } from '../helpers/servers';

// What the CLI's audit says of the server it ran: a name and a hash, never the launch's arguments,
// query or headers (an API key passed as `--api-key=…` was in every record's server.name).
const CLI = path.join(ROOT, 'dist', 'cli.js');
const ECHO = path.join(ROOT, 'test', 'fixtures', 'secret-echo-server.mjs');
const SECRETS = ['opaque-value-4711', 'another-value-0815', 'third-value-2342', 'header-value-1234'];

function cli(...args: string[]) {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 20_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function records(file: string): Array<{ server: { name: string; definition: string } }> {
  const text = fs.readFileSync(file, 'utf8');
  for (const secret of SECRETS) assert.ok(!text.includes(secret), `the audit holds ${secret}: ${text}`);
  return text
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l));
}

describe('the CLI audit names a server without its launch', function () {
  this.timeout(30_000);
  let dir: string;

  before(() => execFileSync(process.execPath, [path.join(ROOT, 'esbuild.js')], { cwd: ROOT }));
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-cli-server-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('stdio: the command’s base name and a hash of the whole command line', () => {
    const file = path.join(dir, 'audit.jsonl');
    const line = (secret: string) =>
      [process.execPath, ECHO, '--token', secret, `--api-key=${SECRETS[1]}`, `postgres://app:${SECRETS[2]}@db/x`]
        .map((w) => JSON.stringify(w))
        .join(' ');
    assert.equal(cli('--stdio', line(SECRETS[0]), '--audit', file, 'call', 'leak', '{}').code, 0);
    const [first] = records(file);
    assert.equal(first.server.name, path.basename(process.execPath));
    assert.match(first.server.definition, /^[0-9a-f]{64}$/);
    assert.ok(!JSON.stringify(first).includes('secret-echo-server'), 'the script path is an argument, not the name');

    // Another argument, another launch: the hash tells them apart.
    const other = path.join(dir, 'other.jsonl');
    assert.equal(cli('--stdio', line('different-4711'), '--audit', other, 'call', 'leak', '{}').code, 0);
    const [second] = records(other);
    assert.equal(second.server.name, first.server.name);
    assert.notEqual(second.server.definition, first.server.definition);
  });

  it('HTTP: the URL’s host, never its path, query or headers', async () => {
    const fixture = await startFixture('json');
    try {
      const file = path.join(dir, 'audit.jsonl');
      const url = `${fixture.url}?key=${SECRETS[0]}`;
      const r = cli('--http', url, '--header', `X-Api-Key: ${SECRETS[3]}`, '--audit', file, 'call', 'work', '{}');
      assert.equal(r.code, 0, r.stderr);
      const [record] = records(file);
      assert.equal(record.server.name, `127.0.0.1:${fixture.port}`);
      assert.match(record.server.definition, /^[0-9a-f]{64}$/);
    } finally {
      await fixture.stop();
    }
  });
});
