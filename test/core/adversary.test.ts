import { strict as assert } from 'node:assert';
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { McpClient, StdioTransport } from '../../src/core';
import { thisMachine, type GateContext, type GateRequest } from '../../src/core/policy/gate';
import { runGated } from '../../src/core/policy/run';
import { ROOT } from '../helpers/servers';

// The roots fence against a deliberately careless server (test/fixtures/careless-server.mjs) that
// really touches the disk: `mcp-host --root ws` runs in a temporary folder laid out with secrets
// outside `ws` and symlinks inside it that point out. Each case asserts on what the server did
// (its log of file accesses, and the files outside), never on what MCP Host printed; and each is
// run once with `--fence off` too, to show the server really would have read or written outside.

const CLI = path.join(ROOT, 'dist', 'cli.js');
const SERVER = path.join(ROOT, 'test', 'fixtures', 'careless-server.mjs');
const stdio = `${JSON.stringify(process.execPath)} ${JSON.stringify(SERVER)}`;

interface Access {
  op: string;
  path: string;
  ok: boolean;
  /** Where the kernel took it (symlinks resolved), when it succeeded. */
  real?: string;
}

describe('the roots fence against a careless server (adversary)', function () {
  this.timeout(60_000);
  let top: string;
  let ws: string;
  let log: string;
  let home: string;

  /** `mcp-host --root ws [flags] call|read …` run in the temporary folder, as a person would type it. */
  function cli(flags: string[], ...verb: string[]) {
    fs.rmSync(log, { force: true });
    const r = spawnSync(process.execPath, [CLI, '--stdio', stdio, '--root', 'ws', ...flags, ...verb], {
      cwd: top,
      encoding: 'utf8',
      timeout: 30_000,
      env: { ...process.env, HOME: home, USERPROFILE: home, CARELESS_LOG: log },
    });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  }

  /** What the server touched, as the kernel resolved it. */
  function accesses(): Access[] {
    if (!fs.existsSync(log)) return [];
    return fs
      .readFileSync(log, 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Access);
  }

  /** The accesses that succeeded outside `ws` (reads, writes, listings): what the fence exists to prevent. */
  function outsideAccesses(): Access[] {
    return accesses().filter((a) => {
      if (!a.ok || a.op === 'called' || a.real === undefined) return false;
      return a.real !== ws && !a.real.startsWith(ws + path.sep);
    });
  }

  before(() => {
    execFileSync(process.execPath, [path.join(ROOT, 'esbuild.js')], { cwd: ROOT });
    top = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-adversary-')));
    ws = path.join(top, 'ws');
    home = path.join(top, 'home');
    log = path.join(top, 'log', 'accesses.jsonl');
    fs.mkdirSync(path.join(ws, 'sub'), { recursive: true });
    fs.mkdirSync(path.join(top, 'outside'));
    fs.mkdirSync(path.join(home, '.ssh'), { recursive: true });
    fs.writeFileSync(path.join(ws, 'inside.txt'), 'inside');
    fs.writeFileSync(path.join(top, 'secret'), 'SECRET NEXT TO THE ROOT');
    fs.writeFileSync(path.join(top, 'outside', 'secret'), 'SECRET OUTSIDE');
    fs.writeFileSync(path.join(home, '.ssh', 'id_rsa'), 'PRIVATE KEY');
    // A folder link inside the root that points out, a link to a file outside, and a dangling one.
    fs.symlinkSync(path.join(top, 'outside'), path.join(ws, 'linkdir'), 'dir');
    fs.symlinkSync(path.join(top, 'secret'), path.join(ws, 'secretlink'));
    fs.symlinkSync(path.join(top, 'outside', 'authorized_keys'), path.join(ws, 'dangling'));
  });
  after(() => fs.rmSync(top, { recursive: true, force: true }));

  const fileUri = (p: string) => pathToFileURL(p).href;

  interface Attack {
    name: string;
    tool: string;
    args: () => unknown;
    /** A file the attack creates outside, when it is a write. */
    creates?: () => string;
    /** Read by the server inside the root now, so sent: no control run can reach outside. */
    inside?: boolean;
  }
  const attacks: Attack[] = [
    { name: 'a leading space before an absolute path', tool: 'read_file', args: () => ({ path: ` ${path.join(top, 'secret')}` }) },
    { name: 'a tab, a newline and a CR before it', tool: 'read_file', args: () => ({ path: `\t\n\r${path.join(top, 'secret')}` }) },
    {
      name: 'the issue: ws/linkdir/../secret (the kernel follows the link first)',
      tool: 'read_file',
      args: () => ({ path: `${ws}/linkdir/../secret` }),
    },
    { name: 'linkdir/../secret from the root', tool: 'read_file', args: () => ({ path: 'linkdir/../secret' }) },
    {
      name: 'a dangling link inside the root whose target is outside (a write creates it)',
      tool: 'write_file',
      args: () => ({ path: 'dangling', content: 'ssh-ed25519 attacker' }),
      creates: () => path.join(top, 'outside', 'authorized_keys'),
    },
    {
      // The CLI ran the server in its own folder, where `secret` is the file next to the root; it now runs in the first root.
      name: '"secret": resolved by the server against its own working folder',
      tool: 'read_file',
      args: () => ({ path: 'secret' }),
      inside: true,
    },
    { name: 'a NUL byte: a C API reads the link before it', tool: 'read_c', args: () => ({ path: 'secretlink\u0000.txt' }) },
    { name: 'file://localhost/…', tool: 'read_uri', args: () => ({ uri: `file://localhost${path.join(top, 'secret')}` }) },
    { name: 'file: URI with a host the server ignores', tool: 'read_uri', args: () => ({ uri: `file://evil${path.join(top, 'secret')}` }) },
    { name: 'file: URI, %2e%2e', tool: 'read_uri', args: () => ({ uri: `${fileUri(ws)}/%2e%2e/secret` }) },
    { name: 'file: URI, ..%2f after a link', tool: 'read_uri', args: () => ({ uri: `${fileUri(ws)}/linkdir/..%2fsecret` }) },
    { name: 'file: URI, leading space', tool: 'read_uri', args: () => ({ uri: ` ${fileUri(path.join(top, 'secret'))}` }) },
    { name: '~ (the home folder)', tool: 'read_file', args: () => ({ path: '~/.ssh/id_rsa' }) },
    { name: 'a key that is a path', tool: 'read_keys', args: () => ({ map: { [path.join(top, 'secret')]: true } }) },
    { name: 'a link as a key', tool: 'read_keys', args: () => ({ map: { secretlink: true } }) },
    { name: 'nested arrays, a link inside', tool: 'read_all', args: () => ({ items: [[['inside.txt', ['secretlink']]]] }) },
    { name: 'a non-path name that names a link out', tool: 'read_query', args: () => ({ query: 'secretlink' }) },
    { name: 'a non-path name with traversal', tool: 'read_query', args: () => ({ query: '../secret' }) },
    { name: 'a percent-encoded leading space', tool: 'read_decoded', args: () => ({ path: `%20${path.join(top, 'secret')}` }) },
    {
      name: 'something that looks like a scheme, normalised by path.resolve',
      tool: 'read_resolved',
      args: () => ({ path: 'x-y:/../../secret' }),
    },
    { name: 'a link through a sub folder, then ..', tool: 'read_file', args: () => ({ path: 'sub/../linkdir/../secret' }) },
    // Strings a server reads more of than they say (issue 45).
    { name: '$HOME, expanded by the server', tool: 'read_file', args: () => ({ path: '$HOME/.ssh/id_rsa' }) },
    { name: '${PWD}/.., against the server’s own PWD', tool: 'read_file', args: () => ({ path: '${PWD}/../secret' }) },
    {
      name: 'an unset variable before an absolute path',
      tool: 'read_file',
      args: () => ({ path: `$MCP_UNSET${path.join(top, 'secret')}` }),
    },
    { name: '${X:-default}', tool: 'read_query', args: () => ({ query: `\${MCP_UNSET:-${top}}/secret` }) },
    {
      name: '--from-file= in an argument list',
      tool: 'read_flags',
      args: () => ({ args: ['-v', `--from-file=${path.join(top, 'secret')}`] }),
    },
    {
      name: '--from-file= in one string of words',
      tool: 'read_flags',
      args: () => ({ args: `-v --from-file=${path.join(top, 'secret')}` }),
    },
    { name: 'JSON inside a string', tool: 'read_json', args: () => ({ query: JSON.stringify({ path: path.join(top, 'secret') }) }) },
    {
      name: 'JSON inside JSON inside a string',
      tool: 'read_json',
      args: () => ({ query: JSON.stringify({ q: JSON.stringify({ path: '../secret' }) }) }),
    },
    { name: 'a data: URL', tool: 'read_data', args: () => ({ input: `data:,${encodeURIComponent(path.join(top, 'secret'))}` }) },
    {
      name: 'a base64 data: URL',
      tool: 'read_data',
      args: () => ({ input: `data:text/plain;base64,${Buffer.from(path.join(top, 'secret')).toString('base64')}` }),
    },
    {
      name: 'a data: URL holding a file: URI',
      tool: 'read_data',
      args: () => ({ input: `data:;base64,${Buffer.from(fileUri(path.join(top, 'secret'))).toString('base64')}` }),
    },
    { name: 'a second line under a path name', tool: 'read_lines', args: () => ({ path: `inside.txt\n${path.join(top, 'secret')}` }) },
    { name: 'fi\\nle: (the URL parser strips a newline)', tool: 'read_uri', args: () => ({ uri: `fi\nle://${path.join(top, 'secret')}` }) },
    { name: 'file\\r: (and a carriage return)', tool: 'read_uri', args: () => ({ uri: `file\r://${path.join(top, 'secret')}` }) },
    {
      name: 'fi\\tle: under an ordinary name (and a tab)',
      tool: 'read_ref',
      args: () => ({ ref: `fi\tle://${path.join(top, 'secret')}` }),
    },
    { name: 'fi\\nle: under an ordinary name', tool: 'read_ref', args: () => ({ ref: `fi\nle://${path.join(top, 'secret')}` }) },
    { name: '~user under an ordinary name', tool: 'read_query', args: () => ({ query: '~outside/secret' }) },
    // What command-line tools and lenient parsers read out of a string (issue 45, the attacker's review).
    {
      // 4,077 characters, under the kernel's 4,096: relative to the server's folder it is read, though joined to it it is longer.
      name: 'a relative path under PATH_MAX whose join to the folder is over it',
      tool: 'read_file',
      args: () => ({ path: `linkdir/${'./'.repeat(2030)}../secret` }),
    },
    {
      name: 'a variable name longer than 256 characters (a shell reads it whole)',
      tool: 'read_file',
      args: () => ({ path: `$${'A'.repeat(300)}${path.join(top, 'secret')}` }),
    },
    {
      name: '${X:-default} longer than 256 characters',
      tool: 'read_file',
      args: () => ({ path: `\${MCP_UNSET:-${top}${'/'.repeat(300)}secret}` }),
    },
    {
      name: '~\\ read as ~/ by a server that turns backslashes into slashes',
      tool: 'read_winsep',
      args: () => ({ path: '~\\.ssh\\id_rsa' }),
    },
    {
      name: 'a bad UTF-8 byte a lenient decoder reads past (Python’s unquote)',
      tool: 'read_unquoted',
      args: () => ({ path: '%2e%2e/%ff/%2e%2e/secret' }),
    },
    { name: "curl's @file, an item of an argument list", tool: 'read_at', args: () => ({ args: ['-d', `@${path.join(top, 'secret')}`] }) },
    { name: "curl's @file, a word of a line", tool: 'read_at', args: () => ({ args: `-d @${path.join(top, 'secret')}` }) },
    { name: '@file climbing out of the root', tool: 'read_at', args: () => ({ args: ['-d', '@../secret'] }) },
    {
      name: "a flag's value as the next word of a line",
      tool: 'read_argv',
      args: () => ({ args: `-v --from-file ${path.join(top, 'secret')}` }),
    },
    { name: 'a name=value word (dd)', tool: 'read_kv', args: () => ({ query: `bs=1 if=${path.join(top, 'secret')}` }) },
    {
      name: 'JSON with a trailing comma',
      tool: 'read_jsonc',
      args: () => ({ query: `{"path": ${JSON.stringify(path.join(top, 'secret'))},}` }),
    },
    { name: 'JSON with a comment', tool: 'read_jsonc', args: () => ({ query: `{/* c */ "path": ${JSON.stringify('../secret')}}` }) },
    {
      name: 'JSON naming a key twice (a first-wins reader takes the one JSON.parse drops)',
      tool: 'read_jsonc',
      args: () => ({ query: `{"path": ${JSON.stringify(path.join(top, 'secret'))}, "path": "inside.txt"}` }),
    },
    { name: 'one line of TOML', tool: 'read_toml', args: () => ({ query: `path = ${JSON.stringify(path.join(top, 'secret'))}` }) },
    { name: 'one line of YAML', tool: 'read_yaml', args: () => ({ query: `path: ${path.join(top, 'secret')}` }) },
    { name: 'YAML flow', tool: 'read_yaml', args: () => ({ query: `{mode: r, path: ${path.join(top, 'secret')}}` }) },
  ];

  for (const attack of attacks) {
    it(attack.name, () => {
      const args = JSON.stringify(attack.args());
      const created = attack.creates?.();
      if (!attack.inside) {
        const control = cli(['--fence', 'off'], 'call', attack.tool, args);
        assert.equal(control.code, 0, control.stderr);
        assert.ok(
          created ? fs.existsSync(created) : outsideAccesses().length > 0,
          `the careless server should reach outside with the fence off: ${JSON.stringify(accesses())}`,
        );
        if (created) fs.rmSync(created);
      }

      const fenced = cli([], 'call', attack.tool, args);
      assert.deepEqual(outsideAccesses(), [], `${fenced.stderr}${fenced.stdout}`);
      if (created) assert.ok(!fs.existsSync(created), 'the file outside was created');
      if (attack.inside)
        assert.deepEqual(
          accesses().map((a) => [a.op, a.path, a.ok]),
          [['read', 'secret', false]],
          fenced.stderr,
        );
      else assert.equal(fenced.code, 1, fenced.stdout);
    });
  }

  it('a path inside the root still reads (the fence is no wall of refusals)', () => {
    for (const p of ['inside.txt', ` inside.txt`, 'sub/../inside.txt', path.join(ws, 'inside.txt')]) {
      const r = cli([], 'call', 'read_file', JSON.stringify({ path: p }));
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(
        accesses().map((a) => [a.op, a.ok]),
        [['read', true]],
        p,
      );
    }
    const r = cli([], 'call', 'read_uri', JSON.stringify({ uri: fileUri(path.join(ws, 'inside.txt')) }));
    assert.equal(r.code, 0, r.stderr);
  });

  it('resources/read of a file: URI through a link and %2f is refused; one inside is read', () => {
    const uri = `${fileUri(ws)}/linkdir/..%2fsecret`;
    assert.equal(cli(['--fence', 'off'], 'read', uri).code, 0);
    assert.ok(outsideAccesses().length > 0);
    const fenced = cli([], 'read', uri);
    assert.deepEqual(outsideAccesses(), [], fenced.stderr);
    assert.equal(fenced.code, 1);
    assert.equal(cli([], 'read', fileUri(path.join(ws, 'inside.txt'))).code, 0);
  });

  it('resources/read of a scheme of the server’s own with .. segments is refused; one without is read', () => {
    // `%ff` is no UTF-8: a lenient decoder (Python's unquote) makes it U+FFFD and reads the `..` around it.
    for (const uri of ['ab:/../secret', 'ab://x/../../secret', 'ab:/%2e%2e/secret', 'ab:/%2e%2e/%ff/%2e%2e/secret']) {
      assert.equal(cli(['--fence', 'off'], 'read', uri).code, 0);
      assert.ok(outsideAccesses().length > 0, `${uri}: ${JSON.stringify(accesses())}`);
      const fenced = cli([], 'read', uri);
      assert.deepEqual(outsideAccesses(), [], fenced.stderr);
      assert.equal(fenced.code, 1, uri);
    }
    const own = cli([], 'read', 'ab:/inside.txt');
    assert.equal(own.code, 0, own.stderr);
    assert.deepEqual(
      accesses().map((a) => [a.op, a.ok]),
      [['read', true]],
    );
  });

  it('a stdio server’s PWD is the folder it runs in, so $PWD and relative paths agree', () => {
    const r = cli([], 'call', 'where', '{}');
    assert.equal(r.code, 0, r.stderr);
    const { PWD, cwd } = JSON.parse(/\{"PWD".*\}/.exec(r.stdout.replace(/\\"/g, '"'))![0]) as { PWD: string; cwd: string };
    assert.equal(cwd, ws);
    assert.equal(PWD, ws);
    // And the fence reads ${PWD} as that folder: a file in it is sent.
    const inside = cli([], 'call', 'read_file', JSON.stringify({ path: '${PWD}/inside.txt' }));
    assert.equal(inside.code, 0, inside.stderr);
    assert.deepEqual(
      accesses().map((a) => [a.op, a.ok, a.real]),
      [['read', true, path.join(ws, 'inside.txt')]],
    );
  });

  it('the audit of a call keeps no secret part of the shapes masking once missed (issue 45)', () => {
    const audit = path.join(top, 'audit-shapes.jsonl');
    // Each secret carries a mark of its own, so a part of it left in the record is found.
    const part = (n: number) => `q9Zx${n}Kp7Wm${n}`;
    const pemLines = ['-----BEGIN RSA PRIVATE KEY-----', `MIIE${part(1)}`, `${part(2)}AB`, '-----END RSA PRIVATE KEY-----'];
    const data = {
      header: `Authorization: Bot ${part(3)}.abcdef`,
      scheme: `Authorization: ApiKey ${part(4)}`,
      okta: `Authorization: SSWS ${part(5)}`,
      php: `'password' => '${part(6)}'`,
      go: `password := "${part(7)}"`,
      yaml: `passphrase: ${part(8)} horse ${part(9)} staple`,
      env: `PGPASSWORD=${part(10)} SECRET_KEY_BASE=${part(11)} AUTHTOKEN=${part(12)} DB_PASSWORD_PROD=${part(13)} password2=${part(14)}`,
      pem: pemLines,
      xml: `<password>${part(15)}</password>`,
      jwe: `eyJhbGciOiJkaXIifQ.${part(16)}x.${part(17)}.${part(18)}x.${part(19)}`,
      slack: `https://hooks.slack.com/services/T0${part(20)}/B0/${part(21)}`,
      url: `postgres://app:pa/${part(22)}@db/main`,
      longKey: `${'X'.repeat(70)}_PASSWORD=${part(23)}`,
      longValue: `{"password": "${part(24)}${'z'.repeat(1100)}"}`,
    };
    const r = cli(['--audit', audit], 'call', 'record', JSON.stringify({ data }));
    assert.equal(r.code, 0, r.stderr);
    const text = fs.readFileSync(audit, 'utf8');
    const left = Array.from({ length: 24 }, (_, i) => part(i + 1)).filter((p) => text.includes(p));
    assert.deepEqual(left, [], text);
    assert.match(text, /\[masked: private-key\]/);
  });

  it('the audit of a call keeps no secret named beside its value, listed under a secret key, or a number (issue 45)', () => {
    const audit = path.join(top, 'audit-pairs.jsonl');
    const part = (n: number) => `w8Rt${n}Lc3Vb${n}`;
    const data = {
      env: [
        { name: 'DB_PASSWORD', value: part(1) },
        { name: 'LOG_LEVEL', value: 'debug' },
      ],
      tags: [{ Key: 'api_token', Value: part(2) }],
      headers: [['X-Api-Key', part(3)], { Name: 'Authorization', Value: `Bearer ${part(4)}` }],
      tokens: [part(5), part(6)],
      password: 987_654_321,
    };
    const r = cli(['--audit', audit], 'call', 'record', JSON.stringify({ data }));
    assert.equal(r.code, 0, r.stderr);
    const text = fs.readFileSync(audit, 'utf8');
    const left = Array.from({ length: 6 }, (_, i) => part(i + 1)).filter((p) => text.includes(p));
    assert.deepEqual(left, [], text);
    assert.doesNotMatch(text, /987654321/);
    assert.match(text, /"LOG_LEVEL","value":"debug"/, 'an ordinary pair keeps its value');
  });

  it('arguments nested 3,000 levels deep: refused before anything is sent, audited, no crash', () => {
    let deep: unknown = 'x';
    for (let i = 0; i < 3000; i++) deep = { a: deep };
    const audit = path.join(top, 'audit.jsonl');
    const r = cli(['--audit', audit], 'call', 'record', JSON.stringify({ data: deep }));
    assert.deepEqual(accesses(), [], 'the server was called');
    assert.equal(r.code, 1, r.stderr);
    assert.doesNotMatch(r.stderr, /RangeError|call stack/);
    assert.match(r.stderr, /refused \(nothing was sent\): .*nested deeper than 64/);
    const records = fs
      .readFileSync(audit, 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { origin: string; decision: string; outcome: { kind: string }; arguments?: unknown });
    const call = records.find((x) => x.origin === 'cli');
    assert.ok(call, JSON.stringify(records));
    assert.deepEqual([call.decision, call.outcome.kind], ['refused', 'not-sent']);
    assert.equal(typeof call.arguments, 'string', 'a short placeholder, not the arguments');
  });

  it('prompt arguments nested 5,000 levels deep (too deep to write out as JSON text): refused and audited, no crash', () => {
    const audit = path.join(top, 'audit-prompt.jsonl');
    const deep = `{"data":${'['.repeat(5000)}1${']'.repeat(5000)}}`;
    const r = cli(['--audit', audit], 'prompt', 'p', deep);
    assert.deepEqual(accesses(), []);
    assert.equal(r.code, 1, r.stderr);
    assert.doesNotMatch(r.stderr, /RangeError|call stack/);
    assert.match(r.stderr, /refused \(nothing was sent\): the arguments are nested deeper than 64 levels/);
    const record = fs
      .readFileSync(audit, 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { origin: string; method: string; decision: string; arguments?: unknown })
      .find((x) => x.origin === 'cli');
    assert.deepEqual([record?.method, record?.decision, typeof record?.arguments], ['prompts/get', 'refused', 'string']);
  });

  describe('resources/subscribe and completion/complete (the core gate, as the CLI builds it)', () => {
    let client: McpClient;
    const context = (): GateContext => ({
      origin: 'cli',
      policy: { tools: {}, autoApprove: [], trustAnnotations: false },
      alwaysAllowed: false,
      fence: 'block',
      roots: [{ uri: fileUri(ws) }],
      machine: thisMachine(),
      serverCwd: ws,
    });
    const gated = (request: GateRequest, send: () => Promise<unknown>) =>
      runGated({ request, context: context(), server: { name: 'careless', scope: 'user', definition: '' }, send });

    before(async () => {
      client = new McpClient(
        new StdioTransport({ command: process.execPath, args: [SERVER], cwd: ws, env: { CARELESS_LOG: log, HOME: home } }),
        { clientInfo: { name: 'adversary', version: '1' } },
      );
      await client.connect();
    });
    after(() => client.close());

    it('a subscription to a file: URI that leaves through a link is refused', async () => {
      fs.rmSync(log, { force: true });
      const uri = `${fileUri(ws)}/linkdir/..%2fsecret`;
      const r = await gated({ method: 'resources/subscribe', uri }, () => client.subscribeResource(uri));
      assert.deepEqual(outsideAccesses(), []);
      assert.equal(r.sent, false);
    });

    it('a completion whose ref.uri is a template outside is refused; its value too', async () => {
      fs.rmSync(log, { force: true });
      const outside = {
        ref: { type: 'ref/resource' as const, uri: `${fileUri(path.join(top, 'outside'))}/{name}` },
        argument: { name: 'name', value: '' },
      };
      const r = await gated({ method: 'completion/complete', params: outside }, () => client.complete(outside));
      assert.deepEqual(outsideAccesses(), []);
      assert.equal(r.sent, false);
      const byValue = { ref: { type: 'ref/resource' as const, uri: `${fileUri(ws)}/{name}` }, argument: { name: 'q', value: 'linkdir' } };
      const v = await gated({ method: 'completion/complete', params: byValue }, () => client.complete(byValue));
      assert.deepEqual(outsideAccesses(), []);
      assert.equal(v.sent, false);
      // The control: the same completion, sent, lists the folder outside.
      await client.complete(outside);
      assert.ok(outsideAccesses().length > 0, JSON.stringify(accesses()));
    });
  });
});
