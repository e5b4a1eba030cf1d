import { strict as assert } from 'node:assert';
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { freePort, startFixture } from '../helpers/httpServers';
import { ROOT, everythingServer, filesystemServer, rawServer, v2StdioServer } from '../helpers/servers';

const CLI = path.join(ROOT, 'dist', 'cli.js');
const line = (p: { command: string; args?: string[] }) => [p.command, ...(p.args ?? [])].map((w) => JSON.stringify(w)).join(' ');

function cli(...args: string[]) {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 20_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr, json: () => JSON.parse(r.stdout) };
}

describe('dist/cli.js', function () {
  this.timeout(30_000);
  const everything = line(everythingServer());

  before(() => {
    // The CLI is tested as shipped: build the bundle first.
    execFileSync(process.execPath, [path.join(ROOT, 'esbuild.js')], { cwd: ROOT });
  });

  it('--root fences a traversal before it is sent; --fence off lets it through', () => {
    // The filesystem server may read everything under / (its allowed directory), so only the fence can stop the read.
    const fs = line(filesystemServer('/'));
    const root = path.join(ROOT, 'test');
    const refused = cli('--stdio', fs, '--root', root, 'call', 'read_text_file', '{"path":"../../../../../../../etc/passwd"}');
    assert.equal(refused.code, 1, refused.stderr);
    assert.equal(refused.stdout, '');
    assert.match(refused.stderr, /refused \(nothing was sent\): outside the roots: \/path = "\.\.\/.*etc\/passwd" \(\/etc\/passwd\)/);
    const inside = cli(
      '--stdio',
      fs,
      '--root',
      root,
      'call',
      'read_text_file',
      JSON.stringify({ path: path.join(root, 'core', 'cli.test.ts') }),
    );
    assert.equal(inside.code, 0, inside.stderr);
    const off = cli('--stdio', fs, '--root', root, '--fence', 'off', 'call', 'read_text_file', '{"path":"/etc/hostname"}');
    assert.doesNotMatch(off.stderr, /refused/);
    assert.equal(cli('--stdio', fs, '--fence', 'maybe', 'tools').code, 2);
  });

  it('prints server info', () => {
    const r = cli('--stdio', everything, 'info');
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.json().serverInfo.name, 'mcp-servers/everything');
    assert.equal(r.json().protocolVersion, '2025-11-25');
    assert.equal(r.json().era, 'legacy');
  });

  it('--audit writes a chained record of each call, and audit verify finds an edit', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-cli-audit-'));
    try {
      const file = path.join(dir, 'audit.jsonl');
      const token = 'ghp_' + 'q7R8'.repeat(9);
      assert.equal(cli('--stdio', everything, '--audit', file, 'call', 'echo', JSON.stringify({ message: `hi ${token}` })).code, 0);
      assert.equal(cli('--stdio', everything, '--audit', file, 'call', 'no-such-tool', '{}').code, 1);
      // Refused by the fence before anything is sent: audited as fenced, not sent.
      const fenced = cli(
        '--stdio',
        everything,
        '--audit',
        file,
        '--root',
        dir,
        'call',
        'echo',
        JSON.stringify({ message: 'x', path: '../../../etc/passwd' }),
      );
      assert.equal(fenced.code, 1, fenced.stderr);
      assert.match(fenced.stderr, /refused \(nothing was sent\)/);
      const text = fs.readFileSync(file, 'utf8');
      assert.ok(!text.includes(token), 'the token is masked');
      // The server's own roots/list (it asks 350 ms after initialize, if the CLI is still there) is the server's record, not the call's.
      const records = text
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l))
        .filter((r) => r.origin === 'cli');
      assert.deepEqual(
        records.map((r) => [r.origin, r.method, r.name, r.outcome.kind]),
        [
          ['cli', 'tools/call', 'echo', 'ok'],
          ['cli', 'tools/call', 'no-such-tool', 'isError'],
          ['cli', 'tools/call', 'echo', 'not-sent'],
        ],
      );
      assert.equal(records[2].decision, 'fenced');
      const good = cli('audit', 'verify', file);
      assert.equal(good.code, 0, good.stderr);
      assert.match(good.stdout, /^\d+ records, chain intact, head [0-9a-f]{64}\nMACs not checked/);
      fs.writeFileSync(file, text.replace('"name":"echo"', '"name":"echo2"'));
      const bad = cli('audit', 'verify', file);
      assert.equal(bad.code, 1);
      const edited = text.split('\n').findIndex((l) => l.includes('"name":"echo"')) + 1;
      assert.match(bad.stderr, new RegExp(`audit\\.jsonl:${edited}: the record was changed`));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('--audit records what the server asks of the CLI (origin server): roots answered, sampling and elicitation refused', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-cli-audit-'));
    try {
      const file = path.join(dir, 'audit.jsonl');
      assert.equal(cli('--stdio', everything, '--audit', file, 'call', 'get-roots-list', '{}').code, 0);
      assert.equal(
        cli('--stdio', everything, '--audit', file, 'call', 'trigger-sampling-request', '{"prompt":"hi","maxTokens":10}').code,
        1,
      );
      assert.equal(cli('--stdio', everything, '--audit', file, 'call', 'trigger-elicitation-request', '{}').code, 0);
      const server = fs
        .readFileSync(file, 'utf8')
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l))
        .filter((r) => r.origin === 'server');
      const of = (method: string) => server.filter((r) => r.method === method);
      assert.ok(of('roots/list').length >= 1, JSON.stringify(server));
      assert.deepEqual([of('roots/list')[0].decision, of('roots/list')[0].outcome], ['allowed', { kind: 'ok' }]);
      assert.deepEqual(
        of('sampling/createMessage').map((r) => [r.decision, r.outcome.kind, r.arguments.messages, r.arguments.maxTokens]),
        [['refused', 'error', 1, 10]],
      );
      const [elicit] = of('elicitation/create');
      assert.equal(elicit.decision, 'refused');
      assert.ok(elicit.arguments.fields.length > 0, 'the form is summarised by its field names');
      assert.ok(!JSON.stringify(server).includes('"hi"'), 'no message text in the record');
      assert.equal(cli('audit', 'verify', file).code, 0);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('speaks the era the server speaks, or the one --protocol names', () => {
    const v2 = line(v2StdioServer());
    const modern = cli('--stdio', v2, 'info');
    assert.equal(modern.code, 0, modern.stderr);
    assert.deepEqual(
      [modern.json().era, modern.json().protocolVersion, modern.json().serverInfo.name],
      ['modern', '2026-07-28', 'v2-fixture-stdio'],
    );
    assert.equal(cli('--stdio', v2, '--protocol', '2025-11-25', 'info').json().era, 'legacy');
    assert.equal(cli('--stdio', v2, 'call', 'echo', '{"text":"x"}').json().content[0].text, 'echo: x');
    const exits = cli('--stdio', line(rawServer('exit-before-initialize')), 'info');
    assert.equal(exits.code, 0, exits.stderr);
    assert.equal(exits.json().era, 'legacy');
    const wrong = cli('--stdio', v2, '--protocol', '2026', 'info');
    assert.equal(wrong.code, 2);
    assert.match(wrong.stderr, /--protocol needs one of auto, 2026-07-28, 2025-11-25/);
  });

  it('lists tools, resources, templates and prompts', () => {
    assert.ok(
      cli('--stdio', everything, 'tools')
        .json()
        .some((t: { name: string }) => t.name === 'echo'),
    );
    assert.ok(cli('--stdio', everything, 'resources').json().length > 0);
    assert.equal(cli('--stdio', everything, 'templates').json().length, 2);
    assert.ok(
      cli('--stdio', everything, 'prompts')
        .json()
        .some((p: { name: string }) => p.name === 'args-prompt'),
    );
  });

  it('calls a tool, reads a resource, gets a prompt', () => {
    assert.equal(cli('--stdio', everything, 'call', 'echo', '{"message":"hi"}').json().content[0].text, 'Echo: hi');
    assert.ok('blob' in cli('--stdio', everything, 'read', 'demo://resource/dynamic/blob/1').json().contents[0]);
    assert.match(cli('--stdio', everything, 'prompt', 'args-prompt', '{"city":"Oslo"}').json().messages[0].content.text, /Oslo/);
  });

  it('fails with a clear message and a non-zero code', () => {
    const bad = cli('--stdio', everything, 'call', 'get-sum', '{"a":"x","b":1}');
    assert.equal(bad.code, 1);
    assert.equal(bad.stdout, '');
    assert.match(bad.stderr, /Invalid params \(-32602\).*\/a must be number/);
    const notJson = cli('--stdio', everything, 'call', 'echo', '{oops');
    assert.equal(notJson.code, 1);
    assert.match(notJson.stderr, /not JSON/);
    const missing = cli('--stdio', 'mcp-host-no-such-command', 'info');
    assert.equal(missing.code, 1);
    assert.match(
      missing.stderr,
      /^error: Connection closed \(-32000\): Command not found: mcp-host-no-such-command/m,
      'the code name once',
    );
    const noCapability = cli('--stdio', line(rawServer('tools-only')), 'prompts');
    assert.equal(noCapability.code, 1);
    assert.match(noCapability.stderr, /Capability disabled \(-32002\)/);
    const usage = cli('info');
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /Usage: mcp-host --stdio/);
  });

  it('shows the log messages of a 2026-07-28 server under --verbose, which logs nothing unless asked', () => {
    const v2 = line(v2StdioServer());
    const verbose = cli('--stdio', v2, '--verbose', 'call', 'chatty', '{}');
    assert.equal(verbose.code, 0, verbose.stderr);
    assert.match(verbose.stderr, /\[server debug\] a debug line/);
    assert.match(verbose.stderr, /\[server warning\] a warning line/);
    assert.doesNotMatch(cli('--stdio', v2, 'call', 'chatty', '{}').stderr, /a debug line/);
  });

  it('sets the server log level with --log-level, in both eras, and refuses an unknown level', () => {
    const v2 = line(v2StdioServer());
    for (const protocol of ['2026-07-28', '2025-11-25']) {
      const warnings = cli('--stdio', v2, '--protocol', protocol, '--log-level', 'warning', '--verbose', 'call', 'chatty', '{}');
      assert.equal(warnings.code, 0, warnings.stderr);
      assert.match(warnings.stderr, /\[server warning\] a warning line/, protocol);
      assert.doesNotMatch(warnings.stderr, /\[server debug\] a debug line/, `${protocol}: a debug line past --log-level warning`);
    }
    const wrong = cli('--stdio', v2, '--log-level', 'loud', 'ping');
    assert.equal(wrong.code, 2);
    assert.match(wrong.stderr, /--log-level needs one of debug, info, notice/);
  });

  it('declares roots as the current directory and refuses sampling clearly', () => {
    const init = cli('--stdio', line(rawServer('plain')), '--verbose', 'info');
    assert.equal(init.code, 0);
    const sent = init.stderr.split('\n').find((l) => l.includes('"method":"initialize"')) ?? '';
    const caps = JSON.parse(sent.slice(sent.indexOf('RECEIVED ') + 9)).params.capabilities;
    assert.deepEqual(caps, {
      roots: { listChanged: true },
      sampling: {},
      elicitation: { form: {} },
      // The requests it answers (refusing sampling, declining elicitation) it can also answer as tasks.
      tasks: { list: {}, cancel: {}, requests: { sampling: { createMessage: {} }, elicitation: { create: {} } } },
    });

    const roots = cli('--stdio', everything, 'call', 'get-roots-list', '{}');
    assert.equal(roots.code, 0, roots.stderr);
    assert.match(roots.json().content[0].text, new RegExp(`URI: file://${process.cwd()}`));

    const sampling = cli('--stdio', everything, 'call', 'trigger-sampling-request', '{"prompt":"hi"}');
    assert.equal(sampling.code, 1, 'a tool failure exits non-zero');
    assert.equal(sampling.json().isError, true, 'and is still printed whole');
    assert.match(sampling.stderr, /User rejected sampling request/);
  });

  it('speaks HTTP with --http, sending every --header', async () => {
    const fixture = await startFixture('json');
    try {
      const r = cli('--http', fixture.url, '--header', 'X-Team: blue', '--header', 'X-Trace:  42 ', 'call', 'work', '{}');
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.json().content[0].text, 'done work');
      const seen = (await fixture.requests()).filter((q) => q.path === '/mcp');
      assert.ok(seen.some((q) => q.body?.method === 'tools/call'));
      for (const q of seen) assert.deepEqual([q.headers['x-team'], q.headers['x-trace']], ['blue', '42']);
      assert.ok(
        seen.some((q) => q.method === 'DELETE'),
        'the session is ended on exit',
      );
    } finally {
      await fixture.stop();
    }
    const badHeader = cli('--http', 'http://127.0.0.1:9/mcp', '--header', 'no colon', 'info');
    assert.equal(badHeader.code, 2);
    assert.match(badHeader.stderr, /--header needs 'Name: value'/);
    const both = cli('--http', 'http://127.0.0.1:9/mcp', '--stdio', 'x', 'info');
    assert.equal(both.code, 2);
    assert.match(both.stderr, /--http <url>/);
    const closed = `http://127.0.0.1:${await freePort()}/mcp`;
    const refused = cli('--http', closed, 'info');
    assert.equal(refused.code, 1);
    assert.ok(refused.stderr.includes(`Could not reach ${closed} (POST): connect ECONNREFUSED`), refused.stderr);
  });
});
