import { strict as assert } from 'node:assert';
import { execFile, execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  editorServerEnvironment,
  sandboxAvailability,
  describeReach,
  sandboxedParams,
  sandboxedServer,
  seatbeltProfile,
  SandboxUnavailableError,
  type CallToolResult,
  type SandboxMachine,
  type SandboxReach,
} from '../../src/core';
import { CACHE_UNUSED_DAYS } from '../../src/core/servers/sandbox/cache';
import { MAX_SANDBOX_TASKS, sandboxMemoryBytes } from '../../src/core/servers/sandbox/limits';
import { computeReach } from '../../src/core/servers/sandbox/reach';
import { serverEnvironment, type StdioServerParams } from '../../src/core/transport/stdio';
import { ROOT, closeAll, connect, everythingServer, filesystemServer, installedNode22 } from '../helpers/servers';

const CLI = path.join(ROOT, 'dist', 'cli.js');
const HOSTILE = path.join(ROOT, 'test', 'fixtures', 'hostile-sandbox-server.mjs');
const hostileLine = `${JSON.stringify(process.execPath)} ${JSON.stringify(HOSTILE)}`;

/** The JSON a hostile tool answered with. */
const answerOf = (result: CallToolResult): unknown => JSON.parse((result.content[0] as { text: string }).text);

/** Runs dist/cli.js with `env` as its whole environment (asynchronously: the test's own listeners keep answering). */
function cli(args: string[], env: NodeJS.ProcessEnv = process.env, cwd = ROOT): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 90_000, env, cwd }, (error, stdout, stderr) =>
      resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}
/** A hostile tool called through the CLI: the answer it gave. */
async function cliTool(tool: string, extraArgs: string[], env?: NodeJS.ProcessEnv): Promise<unknown> {
  const r = await cli(['--stdio', hostileLine, ...extraArgs, 'call', tool], env);
  assert.equal(r.code, 0, `${tool}: ${r.stderr}`);
  return answerOf(JSON.parse(r.stdout) as CallToolResult);
}

const HOOKS = {
  VSCODE_IPC_HOOK: '/run/user/0/vscode-ipc-test.sock',
  VSCODE_IPC_HOOK_CLI: '/run/user/0/vscode-ipc-cli-test.sock',
  VSCODE_GIT_ASKPASS_MAIN: '/opt/vscode/askpass-main.js',
  ELECTRON_RUN_AS_NODE: '1',
};

before(() => {
  // The CLI is tested as shipped.
  execFileSync(process.execPath, [path.join(ROOT, 'esbuild.js')], { cwd: ROOT });
});

describe('stdio server environment', function () {
  this.timeout(30_000);
  afterEach(closeAll);

  it('a server the editor starts sees the base and what its entry names, never VS Code hooks or other tokens', async () => {
    const parent = { ...process.env, ...HOOKS, GITHUB_TOKEN: 'ghp_not_for_servers', LC_ALL: 'C.UTF-8', LANG: 'C.UTF-8' };
    const { client } = await connect({
      command: process.execPath,
      args: [HOSTILE],
      baseEnv: editorServerEnvironment(parent, 'linux'),
      env: { NAMED_BY_ENTRY: 'yes' },
    });
    const names = answerOf((await client.callTool('env_names')).result) as string[];
    for (const seen of ['PATH', 'HOME', 'LANG', 'LC_ALL', 'NAMED_BY_ENTRY'])
      assert.ok(names.includes(seen), `${seen} in ${names.join(',')}`);
    for (const unseen of [...Object.keys(HOOKS), 'GITHUB_TOKEN']) assert.ok(!names.includes(unseen), `${unseen} leaked`);
    assert.deepEqual(answerOf((await client.callTool('editor_hooks')).result), []);
  });

  it('on Windows the base keeps the system folders, whatever their case', () => {
    const kept = editorServerEnvironment(
      {
        Path: 'C:\\Windows\\system32',
        SystemRoot: 'C:\\Windows',
        APPDATA: 'C:\\Users\\p\\AppData\\Roaming',
        PATHEXT: '.COM;.EXE;.CMD',
        ComSpec: 'C:\\Windows\\system32\\cmd.exe',
        GITHUB_TOKEN: 'ghp_x',
        VSCODE_IPC_HOOK: '\\\\.\\pipe\\vscode',
      },
      'win32',
    );
    assert.deepEqual(Object.keys(kept).sort(), ['APPDATA', 'ComSpec', 'PATHEXT', 'Path', 'SystemRoot']);
  });

  it('the CLI passes the shell environment on, minus VS Code hooks', async () => {
    const env = { ...process.env, ...HOOKS, PERSON_SETTING: 'kept' };
    const names = (await cliTool('env_names', [], env)) as string[];
    assert.ok(names.includes('PERSON_SETTING'));
    assert.deepEqual(await cliTool('editor_hooks', [], env), []);
  });
});

/** A machine as the launcher sees it, for platforms this one is not. */
function simulated(platform: NodeJS.Platform, files: Record<string, 'file' | 'dir'> = {}, probeOk = true): SandboxMachine {
  return {
    platform,
    home: '/home/p',
    uid: 1000,
    kind: (p) => files[p] ?? 'none',
    realpath: (p) => p,
    readlink: () => undefined,
    notWorldReadable: () => [],
    probe: () => ({ ok: probeOk, stderr: probeOk ? '' : 'bwrap: setting up uid map: Permission denied' }),
  };
}

describe('what a sandboxed script may read (simulated machine)', () => {
  it('a project that holds the home (a harness, a project in ~): its dependencies and the script folder, never the project and the home', () => {
    const files: Record<string, 'file' | 'dir'> = {
      '/usr/bin/node': 'file',
      '/work/proj': 'dir',
      '/work/proj/package.json': 'file',
      '/work/proj/node_modules': 'dir',
      '/work/proj/test/fixtures': 'dir',
      '/work/proj/test/fixtures/server.mjs': 'file',
      '/work/proj/.harness/home': 'dir',
      '/work/ws': 'dir',
    };
    const host = {
      platform: 'linux' as const,
      home: '/work/proj/.harness/home',
      kind: (p: string) => files[p] ?? 'none',
      realpath: (p: string) => p,
    };
    const { reach } = computeReach(
      { command: 'node', args: ['/work/proj/test/fixtures/server.mjs'], env: { PATH: '/usr/bin' }, roots: ['/work/ws'] },
      host,
    );
    assert.ok(reach.readOnly.includes('/work/proj/node_modules'), JSON.stringify(reach.readOnly));
    assert.ok(reach.readOnly.includes('/work/proj/test/fixtures'), JSON.stringify(reach.readOnly));
    assert.ok(!reach.readOnly.includes('/work/proj'), JSON.stringify(reach.readOnly));
  });
});

describe('sandbox availability and profiles (simulated platforms)', () => {
  const server = { command: '/usr/bin/node', args: ['/srv/mcp/server.js'] };

  it('Windows: refused with what to do instead, never started unsandboxed', () => {
    const machine = simulated('win32');
    const verdict = sandboxAvailability(machine);
    assert.equal(verdict.ok, false);
    assert.match(!verdict.ok ? verdict.reason : '', /no sandbox on Windows.*WSL.*"sandboxEnabled": false/);
    assert.throws(() => sandboxedParams(server, ['C:\\ws'], undefined, machine), SandboxUnavailableError);
  });

  it('Linux without bubblewrap, or where it cannot make a namespace: refused, naming what to install or change', () => {
    const none = sandboxAvailability(simulated('linux'));
    assert.match(
      !none.ok ? none.reason : '',
      /bubblewrap \(bwrap\) is not installed; install bubblewrap \(Debian, Ubuntu: sudo apt install bubblewrap/,
    );
    const bwrap = Object.fromEntries((process.env.PATH ?? '').split(':').map((d) => [path.join(d, 'bwrap'), 'file' as const]));
    const broken = sandboxAvailability(simulated('linux', bwrap, false));
    assert.match(
      !broken.ok ? broken.reason : '',
      /cannot make a sandbox here \(bwrap: setting up uid map: Permission denied\).*user namespaces/,
    );
  });

  it('macOS: a sandbox-exec profile that denies by default, writes only the roots and its temp, reads its installation, no network', () => {
    const ok = sandboxAvailability(simulated('darwin', { '/usr/bin/sandbox-exec': 'file' }));
    assert.deepEqual(ok, { ok: true, kind: 'seatbelt', binary: '/usr/bin/sandbox-exec' });
    assert.equal(sandboxAvailability(simulated('darwin')).ok, false);
    const reach: SandboxReach = {
      readWrite: ['/Users/p/ws'],
      readOnly: ['/opt/homebrew/lib/node_modules'],
      denyRead: ['/Users/p/ws/.env'],
      denyWrite: ['/Users/p/ws/.git'],
      allowedDomains: [],
      deniedDomains: [],
      launcherDomains: [],
      protected: [],
      cwd: '/Users/p/ws',
      home: '/Users/p',
      notes: [],
    };
    const profile = seatbeltProfile(reach, '/private/tmp/mcp-host-sandbox-1').split('\n');
    assert.equal(profile[1], '(deny default)');
    const writes = profile.find((l) => l.startsWith('(allow file-read* file-write*'));
    assert.equal(
      writes,
      '(allow file-read* file-write* (subpath "/Users/p/ws") (subpath "/private/tmp/mcp-host-sandbox-1") (literal "/dev/null") (literal "/dev/tty"))',
    );
    const reads = profile.find((l) => l.startsWith('(allow file-read* (literal "/")'));
    assert.match(reads ?? '', /\(subpath "\/opt\/homebrew\/lib\/node_modules"\)/);
    assert.doesNotMatch(reads ?? '', /"\/Users\/p"\)/, 'the home is not readable');
    // Deny rules come after the allows (Seatbelt: the last matching rule wins).
    assert.ok(profile.indexOf('(deny file-write* (subpath "/Users/p/ws/.git"))') > profile.indexOf(writes!));
    assert.ok(profile.indexOf('(deny file-read* file-write* (subpath "/Users/p/ws/.env"))') > profile.indexOf(writes!));
    assert.equal(profile.filter((l) => l.includes('network')).join('\n'), '(deny network*)');
  });

  it('macOS: the files that run later are denied writing in each root, whether they exist or not; nothing is made for them', async () => {
    const files: Record<string, 'file' | 'dir'> = { '/usr/bin/sandbox-exec': 'file', '/usr/local/bin/node': 'file', '/Users/p/ws': 'dir' };
    const machine = { ...simulated('darwin', files), home: '/Users/p' };
    const made = await sandboxedServer(
      { command: 'node', args: ['-e', '1'], baseEnv: { PATH: '/usr/local/bin' } },
      ['/Users/p/ws'],
      { filesystem: { allowWrite: ['/Users/p/ws/.npmrc'] } },
      { server: 'x' },
      machine,
      { ok: true, kind: 'seatbelt', binary: '/usr/bin/sandbox-exec' },
    );
    await made.stop();
    const deny = made.params.args![1].split('\n').find((l) => l.startsWith('(deny file-write*')) ?? '';
    for (const p of ['.git', '.vscode', '.mcp.json', '.github/workflows', '.envrc', '.claude'])
      assert.ok(deny.includes(`(subpath "/Users/p/ws/${p}")`), p);
    assert.ok(!deny.includes('.npmrc'), 'allowWrite names it');
    const profile = made.params.args![1].split('\n');
    assert.ok(
      profile.indexOf(deny) > profile.findIndex((l) => l.startsWith('(allow file-read* file-write*')),
      'after the allow: the last rule wins',
    );
  });

  it("macOS with allowed domains: outbound only to the proxy's loopback port, which the server's proxy variables name", () => {
    const files: Record<string, 'file' | 'dir'> = {
      '/usr/bin/sandbox-exec': 'file',
      '/usr/local/bin/node': 'file',
      '/Users/p/ws': 'dir',
      '/srv/mcp/server.js': 'file',
    };
    const machine = { ...simulated('darwin', files), home: '/Users/p' };
    const made = sandboxedParams(
      { command: 'node', args: ['/srv/mcp/server.js'], baseEnv: { PATH: '/usr/local/bin' } },
      ['/Users/p/ws'],
      { network: { allowedDomains: ['api.example.com'] } },
      machine,
      undefined,
      { port: 49152 },
    );
    const profile = made.params.args![1].split('\n');
    assert.deepEqual(
      profile.filter((l) => l.includes('network')),
      ['(deny network*)', '(allow network-outbound (remote ip "localhost:49152"))'],
    );
    assert.equal(made.params.env?.HTTPS_PROXY, 'http://127.0.0.1:49152');
    assert.equal(made.params.env?.NODE_USE_ENV_PROXY, '1');
    assert.equal(made.params.env?.NO_PROXY, '');
    assert.equal(made.params.env?.npm_config_offline, undefined);
    assert.match(made.description, /network: only api\.example\.com \(through MCP Host's proxy\)/);
    // Without the proxy there is no network at all.
    const none = sandboxedParams(
      { command: 'node', args: ['/srv/mcp/server.js'], baseEnv: { PATH: '/usr/local/bin' } },
      ['/Users/p/ws'],
      undefined,
      machine,
    );
    assert.deepEqual(
      none.params.args![1].split('\n').filter((l) => l.includes('network')),
      ['(deny network*)'],
    );
  });

  it('Linux with allowed domains: the proxy folder bound read-only, socat started before the server, the proxy variables set', () => {
    const files: Record<string, 'file' | 'dir'> = { '/usr': 'dir', '/usr/bin/node': 'file', '/w': 'dir', '/srv/s.js': 'file' };
    const machine = simulated('linux', files);
    const made = sandboxedParams(
      { command: 'node', args: ['/srv/s.js'], baseEnv: { PATH: '/usr/bin' }, env: { HTTPS_PROXY: 'http://elsewhere:1' } },
      ['/w'],
      { network: { allowedDomains: ['api.example.com'] } },
      machine,
      { ok: true, kind: 'bubblewrap', binary: '/usr/bin/bwrap' },
      { socketDir: '/tmp/mcp-host-proxy-x', socat: '/opt/socat/bin/socat', bwrap: '/usr/bin/bwrap' },
    );
    const args = made.params.args!;
    const bind = args.indexOf('/tmp/mcp-host-proxy-x');
    assert.deepEqual(args.slice(bind - 1, bind + 2), ['--ro-bind', '/tmp/mcp-host-proxy-x', '/run/mcp-host-proxy']);
    assert.ok(args.join(' ').includes('--ro-bind /opt/socat/bin/socat /opt/socat/bin/socat'), 'socat outside the system is bound');
    assert.ok(args.includes('--unshare-all'), 'still no network namespace of the host');
    const inner = args.slice(args.indexOf('--') + 1);
    assert.deepEqual(inner.slice(0, 2), ['/bin/sh', '-c']);
    assert.match(
      inner[2],
      /^'\/opt\/socat\/bin\/socat' TCP-LISTEN:3128,bind=127\.0\.0\.1,reuseaddr,fork UNIX-CONNECT:\/run\/mcp-host-proxy\/proxy\.sock/,
    );
    assert.match(inner[2], /exec "\$@"$/);
    // The server runs in a nested bubblewrap: socat (which opens a Unix socket per connection) stays outside its seccomp filter.
    assert.deepEqual(inner.slice(3, 5), ['mcp-host-sandbox', '/usr/bin/bwrap']);
    const nested = inner.slice(5, inner.lastIndexOf('--'));
    for (const flag of ['--disable-userns', '--unshare-pid', '--proc', '--cap-drop']) assert.ok(nested.includes(flag), flag);
    assert.ok(!nested.includes('--unshare-net') && !nested.includes('--unshare-all'), 'it shares the outer sandbox network: socat');
    if (process.arch === 'x64' || process.arch === 'arm64')
      assert.deepEqual(nested.slice(nested.indexOf('--seccomp'), nested.indexOf('--seccomp') + 2), ['--seccomp', '3']);
    assert.ok(!args.slice(0, args.indexOf('--')).includes('--seccomp'), 'not the outer sandbox: socat runs there');
    assert.deepEqual(inner.slice(inner.lastIndexOf('--') + 1), ['/usr/bin/node', '/srv/s.js']);
    assert.equal(made.params.env?.HTTPS_PROXY, 'http://127.0.0.1:3128', "the entry's own proxy is replaced");
    assert.equal(made.params.env?.ALL_PROXY, 'http://127.0.0.1:3128');
  });

  it('npx with allowed domains may also reach its registry, and says so; without them it stays offline', () => {
    const files: Record<string, 'file' | 'dir'> = { '/usr/bin/npx': 'file', '/usr/bin/node': 'file', '/w': 'dir' };
    const host = { platform: 'linux' as const, home: '/home/p', kind: (p: string) => files[p] ?? 'none', realpath: (p: string) => p };
    const npx = (settings: Parameters<typeof computeReach>[0]['settings'], env: NodeJS.ProcessEnv = {}) =>
      computeReach({ command: 'npx', args: ['-y', 'pkg'], env: { PATH: '/usr/bin', ...env }, roots: ['/w'], settings }, host).reach;
    const withNet = npx({ network: { allowedDomains: ['API.example.com.', '*.cdn.example', 'http://bad'] } });
    assert.deepEqual(withNet.allowedDomains, ['api.example.com', '*.cdn.example', 'registry.npmjs.org']);
    assert.deepEqual(withNet.launcherDomains, ['registry.npmjs.org']);
    assert.match(withNet.notes.join(), /"http:\/\/bad" is neither a host nor \*\.suffix/);
    assert.match(
      describeReach(withNet),
      /network: only api\.example\.com, \*\.cdn\.example \(through MCP Host's proxy\) and registry\.npmjs\.org \(for its launcher to fetch the package\)/,
    );
    assert.deepEqual(
      npx({ network: { allowedDomains: ['a.example'] } }, { npm_config_registry: 'https://npm.corp.example/' }).launcherDomains,
      ['npm.corp.example'],
    );
    assert.deepEqual(npx(undefined).allowedDomains, []);
  });
});

const linuxSandbox = process.platform === 'linux' ? sandboxAvailability() : undefined;

describe('mcp-host --sandbox (Linux, bubblewrap)', function () {
  this.timeout(120_000);
  let dir: string;
  let ws: string;
  let outside: string;
  let home: string;
  let listener: net.Server;
  let dialled = 0;
  let env: NodeJS.ProcessEnv;

  before(async function () {
    if (process.platform !== 'linux') this.skip();
    // On Linux the sandbox must be there (npm test installs bubblewrap): its absence is a failure, not a skip.
    assert.ok(linuxSandbox?.ok, linuxSandbox && !linuxSandbox.ok ? linuxSandbox.reason : '');
    dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-sandbox-')));
    ws = path.join(dir, 'ws');
    outside = path.join(dir, 'outside');
    home = path.join(dir, 'home');
    for (const d of [ws, outside, path.join(home, '.ssh')]) fs.mkdirSync(d, { recursive: true });
    fs.writeFileSync(path.join(outside, 'secret.txt'), 'outside secret');
    fs.writeFileSync(path.join(home, '.ssh', 'id_test'), 'home secret');
    listener = net.createServer((socket) => {
      dialled++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    env = {
      ...process.env,
      ...HOOKS,
      HOME: home,
      HOSTILE_OUTSIDE: outside,
      HOSTILE_INSIDE: ws,
      HOSTILE_PORT: String((listener.address() as net.AddressInfo).port),
    };
  });
  after(() => {
    listener?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('without --sandbox the hostile server reaches everything (what the sandbox must stop)', async () => {
    const plain = ['--root', ws, '--fence', 'off'];
    assert.deepEqual(await cliTool('read_outside', plain, env), { ok: true, value: 'outside secret' });
    assert.deepEqual(await cliTool('read_home', plain, env), { ok: true, value: 'home secret' });
    const before = dialled;
    assert.deepEqual(await cliTool('dial', plain, env), { ok: true });
    assert.equal(dialled, before + 1);
  });

  it('with --sandbox each attempt fails, on disk and on the wire; writing inside the roots works; no capability', async () => {
    const sandboxed = ['--sandbox', '--root', ws, '--fence', 'off'];
    const dialledBefore = dialled;
    const results = {
      read_outside: await cliTool('read_outside', sandboxed, env),
      read_home: await cliTool('read_home', sandboxed, env),
      write_outside: await cliTool('write_outside', sandboxed, env),
      dial: await cliTool('dial', sandboxed, env),
      editor_hooks: await cliTool('editor_hooks', sandboxed, env),
      write_inside: await cliTool('write_inside', sandboxed, env),
      capabilities: await cliTool('capabilities', sandboxed, env),
    };
    assert.equal((results.read_outside as { ok: boolean }).ok, false);
    assert.equal((results.read_home as { ok: boolean }).ok, false);
    assert.equal((results.write_outside as { ok: boolean }).ok, false);
    assert.ok(!fs.existsSync(path.join(outside, 'pwned.txt')), 'nothing written outside the roots');
    assert.equal((results.dial as { ok: boolean }).ok, false);
    assert.deepEqual(results.editor_hooks, []);
    assert.equal(fs.readFileSync(path.join(ws, 'made-inside.txt'), 'utf8'), 'inside');
    assert.equal((results.capabilities as { capEff: string }).capEff, '0000000000000000');
    if (process.getuid?.() === 0) assert.notEqual((results.capabilities as { uid: string }).uid, '0', 'root is nobody inside');
    assert.equal(dialled, dialledBefore, 'the listener was never dialled from the sandbox');
  });

  it('the current folder is the boundary without --root', async () => {
    const r = await cli(['--sandbox', '--stdio', hostileLine, 'call', 'write_inside'], { ...env, HOSTILE_INSIDE: ws }, ws);
    assert.equal(r.code, 0, r.stderr);
    const outsideRead = await cli(['--sandbox', '--stdio', hostileLine, 'call', 'read_outside'], env, ws);
    assert.equal((answerOf(JSON.parse(outsideRead.stdout) as CallToolResult) as { ok: boolean }).ok, false);
  });

  it('a relative script path still starts when the current folder is outside the roots', async () => {
    const relative = `${JSON.stringify(process.execPath)} ${path.relative(ROOT, HOSTILE)}`;
    const r = await cli(['--sandbox', '--root', ws, '--stdio', relative, 'call', 'write_inside'], env, ROOT);
    assert.equal(r.code, 0, r.stderr);
  });

  it('server-filesystem runs its tools sandboxed (its own refusal outside the roots comes from roots/list, so proves nothing here)', async () => {
    const base = ['--sandbox', '--root', ws, '--stdio', line(filesystemServer(ws))];
    const write = await cli([...base, 'call', 'write_file', JSON.stringify({ path: path.join(ws, 'by-fs.txt'), content: 'from fs' })], env);
    assert.equal(write.code, 0, write.stderr);
    assert.equal(fs.readFileSync(path.join(ws, 'by-fs.txt'), 'utf8'), 'from fs');
    const list = await cli([...base, 'call', 'list_directory', JSON.stringify({ path: ws })], env);
    assert.match(list.stdout, /by-fs\.txt/);
  });

  it('server-everything runs its tools sandboxed', async () => {
    const r = await cli(['--sandbox', '--root', ws, '--stdio', line(everythingServer()), 'call', 'get-sum', '{"a":2,"b":3}'], env);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /5/);
  });

  it('the audit record names the sandbox and its limits', async () => {
    const file = path.join(dir, 'audit.jsonl');
    assert.equal((await cli(['--sandbox', '--root', ws, '--audit', file, '--stdio', hostileLine, 'call', 'write_inside'], env)).code, 0);
    const record = JSON.parse(fs.readFileSync(file, 'utf8').trim().split('\n')[0]) as {
      server: { sandbox?: { readWrite: string[]; network: string[] } };
    };
    assert.deepEqual(record.server.sandbox?.readWrite, [ws]);
    assert.deepEqual(record.server.sandbox?.network, []);
  });

  it('usage: --sandbox needs --stdio; with no sandbox on the machine it exits 1 and names what to install', async () => {
    const http = await cli(['--sandbox', '--http', 'http://127.0.0.1:9/mcp', 'tools']);
    assert.equal(http.code, 2);
    assert.match(http.stderr, /--sandbox works with --stdio only/);
    const none = await cli(['--sandbox', '--stdio', hostileLine, 'tools'], { ...env, PATH: path.join(dir, 'empty-path') });
    assert.equal(none.code, 1);
    assert.match(none.stderr, /--sandbox: No sandbox on this machine: bubblewrap \(bwrap\) is not installed; install bubblewrap/);
    const allowWithout = await cli(['--allow-domain', 'example.com', '--stdio', hostileLine, 'tools']);
    assert.equal(allowWithout.code, 2);
    assert.match(allowWithout.stderr, /--allow-domain needs --sandbox/);
    const notAHost = await cli(['--sandbox', '--allow-domain', 'https://example.com/', '--stdio', hostileLine, 'tools']);
    assert.equal(notAHost.code, 2);
    assert.match(notAHost.stderr, /--allow-domain needs a host name, an address or \*\.suffix, got "https:\/\/example\.com\/"/);
  });

  describe('--allow-domain: the filtering proxy', function () {
    let origin: http.Server;
    let originPort: number;
    const asked: string[] = [];
    before(async () => {
      origin = http.createServer((req, res) => {
        asked.push(`${req.headers.host} ${req.url}`);
        res.end('origin answered');
      });
      await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
      originPort = (origin.address() as net.AddressInfo).port;
    });
    after(() => origin?.close());

    /** A hostile tool with HOSTILE_URL set, sandboxed with the allowed domains: its answer and the CLI's stderr. */
    async function viaProxy(tool: string, url: string, allowed: string[], server = hostileLine, extra: string[] = []) {
      const r = await cli(
        ['--sandbox', ...allowed.flatMap((d) => ['--allow-domain', d]), '--root', ws, ...extra, '--stdio', server, 'call', tool],
        { ...env, HOSTILE_URL: url },
      );
      assert.equal(r.code, 0, `${tool}: ${r.stderr}`);
      return {
        answer: answerOf(JSON.parse(r.stdout) as CallToolResult) as { ok: boolean; body?: string; status?: number },
        stderr: r.stderr,
      };
    }

    it('an allowed name reaches a server on 127.0.0.1 through the proxy; an address not allowed is refused and named', async () => {
      asked.length = 0;
      const file = path.join(dir, 'audit-net.jsonl');
      const allowed = await viaProxy('proxy_get', `http://localhost:${originPort}/through`, ['localhost'], hostileLine, ['--audit', file]);
      assert.deepEqual(allowed.answer, { ok: true, status: 200, body: 'origin answered' });
      assert.deepEqual(asked, [`localhost:${originPort} /through`]);
      const record = JSON.parse(fs.readFileSync(file, 'utf8').trim().split('\n')[0]) as { server: { sandbox?: { network: string[] } } };
      assert.deepEqual(record.server.sandbox?.network, ['localhost']);

      const refused = await viaProxy('proxy_get', `http://127.0.0.1:${originPort}/bypass`, ['localhost']);
      assert.equal(refused.answer.status, 403);
      assert.match(refused.stderr, new RegExp(`sandbox blocked 127\\.0\\.0\\.1:${originPort}: add --allow-domain 127\\.0\\.0\\.1\n`));
      const other = await viaProxy('proxy_get', 'http://not-allowed.invalid/', ['localhost']);
      assert.equal(other.answer.status, 403);
      assert.match(other.stderr, /sandbox blocked not-allowed\.invalid:80: add --allow-domain not-allowed\.invalid/);
      assert.deepEqual(asked, [`localhost:${originPort} /through`], 'nothing but the allowed request reached the origin');
    });

    it('a direct connection to 127.0.0.1, past the proxy, still fails', async () => {
      const dialledBefore = dialled;
      const r = await cli(['--sandbox', '--allow-domain', 'localhost', '--root', ws, '--stdio', hostileLine, 'call', 'dial'], env);
      assert.equal(r.code, 0, r.stderr);
      assert.equal((answerOf(JSON.parse(r.stdout) as CallToolResult) as { ok: boolean }).ok, false);
      assert.equal(dialled, dialledBefore);
    });

    it('Node >= 22.21 fetch goes through the proxy with NODE_USE_ENV_PROXY', async function () {
      this.timeout(6 * 60_000);
      const node = proxyAwareNode();
      if (!node) this.skip();
      const server = `${JSON.stringify(node)} ${JSON.stringify(HOSTILE)}`;
      const fetched = await viaProxy('fetch_url', `http://localhost:${originPort}/fetched`, ['localhost'], server);
      assert.equal(fetched.answer.ok, true, JSON.stringify(fetched.answer));
      assert.equal(fetched.answer.body, 'origin answered');
      // Node's fetch tunnels even http:// through CONNECT: the refusal is a failed fetch, not a 403 response.
      const refused = await viaProxy('fetch_url', 'http://elsewhere.invalid/', ['localhost'], server);
      assert.equal(refused.answer.ok, false);
      assert.match(refused.stderr, /sandbox blocked elsewhere\.invalid:80/);
    });

    it('Node 20 fetch ignores the proxy variables: it reaches nothing (fails closed)', async function () {
      if (!process.version.startsWith('v20.')) this.skip();
      const r = await viaProxy('fetch_url', `http://localhost:${originPort}/`, ['localhost']);
      assert.equal(r.answer.ok, false);
    });

    it('without socat, a server with allowed domains does not start, and the message says what to install', async () => {
      const bin = path.join(dir, 'bin-without-socat');
      fs.rmSync(bin, { recursive: true, force: true });
      fs.mkdirSync(bin, { recursive: true });
      // bwrap, and `true` for its probe; no socat.
      for (const [name, target] of [
        ['bwrap', linuxSandbox!.ok ? linuxSandbox!.binary : ''],
        [
          'true',
          (process.env.PATH ?? '')
            .split(':')
            .map((d) => path.join(d, 'true'))
            .find((p) => fs.existsSync(p)) ?? '/bin/true',
        ],
      ])
        fs.symlinkSync(target, path.join(bin, name));
      const r = await cli(['--sandbox', '--allow-domain', 'localhost', '--stdio', hostileLine, 'tools'], { ...env, PATH: bin });
      assert.equal(r.code, 1);
      assert.match(r.stderr, /--sandbox: network\.allowedDomains needs socat .*install socat \(Debian, Ubuntu: sudo apt install socat/);
    });
  });

  describe('an npx server from the npm cache', function () {
    // server-memory is not a dependency: fetched once, outside the sandbox, into a cache of the test's own.
    const MEMORY = '@modelcontextprotocol/server-memory@2026.8.31';
    const cache = path.join(os.tmpdir(), 'mcp-host-sandbox-npm-cache');

    before(function () {
      this.timeout(240_000);
      execFileSync('npx', ['-y', MEMORY], {
        input: '',
        env: { ...process.env, npm_config_cache: cache, npm_config_update_notifier: 'false' },
        stdio: ['pipe', 'ignore', 'ignore'],
        timeout: 220_000,
      });
    });

    const create = (memoryFile: string) =>
      cli(
        [
          '--sandbox',
          '--root',
          ws,
          '--stdio',
          `npx -y ${MEMORY}`,
          'call',
          'create_entities',
          JSON.stringify({ entities: [{ name: 'n', entityType: 't', observations: ['o'] }] }),
        ],
        { ...env, npm_config_cache: cache, MEMORY_FILE_PATH: memoryFile },
      );

    it('server-memory told to keep its file outside the roots cannot create it there, and can inside', async () => {
      const out = await create(path.join(outside, 'memory.jsonl'));
      assert.equal(out.code, 1);
      assert.deepEqual(fs.readdirSync(outside).sort(), ['secret.txt']);
      const inside = await create(path.join(ws, 'memory.jsonl'));
      assert.equal(inside.code, 0, inside.stderr);
      assert.match(fs.readFileSync(path.join(ws, 'memory.jsonl'), 'utf8'), /"name":"n"/);
    });

    it("its cache is MCP Host's own, seeded from the person's: a server that rewrites cached packages changes nothing the person runs", async () => {
      // The hostile server as an npx package (a tarball in the root: npx installs it offline), started with the person's cache named.
      const pkg = path.join(dir, 'hostile-pkg');
      fs.mkdirSync(pkg, { recursive: true });
      fs.copyFileSync(HOSTILE, path.join(pkg, 'server.mjs'));
      fs.writeFileSync(
        path.join(pkg, 'package.json'),
        JSON.stringify({ name: 'hostile-npx-server', version: '1.0.0', type: 'module', bin: { 'hostile-npx-server': 'server.mjs' } }),
      );
      execFileSync('npm', ['pack', '--silent', '--pack-destination', ws], { cwd: pkg, env: { ...process.env, npm_config_cache: cache } });
      const cached = (root: string) =>
        execFileSync('find', [path.join(root, '_npx'), '-path', '*server-memory/dist/index.js'], { encoding: 'utf8' }).trim();
      const personal = cached(cache);
      const before = fs.readFileSync(personal, 'utf8');
      const r = await cli(['--sandbox', '--root', ws, '--stdio', 'npx -y ./hostile-npx-server-1.0.0.tgz', 'call', 'poison_npm_cache'], {
        ...env,
        npm_config_cache: cache,
      });
      assert.equal(r.code, 0, r.stderr);
      const answer = answerOf(JSON.parse(r.stdout) as CallToolResult) as { cache: string; poisoned: string[] };
      assert.match(
        path.relative(path.join(home, '.cache', 'mcp-host', 'sandbox'), answer.cache),
        /^[0-9a-f]{16}\/npm$/,
        'npm_config_cache inside is the sandbox cache of this launch',
      );
      assert.equal(fs.readFileSync(personal, 'utf8'), before, "the person's cached package is unchanged");
      assert.ok(fs.existsSync(path.join(answer.cache, '_cacache')), "seeded from the person's cache");
      assert.ok(!answer.poisoned.some((p) => p.startsWith(cache)), JSON.stringify(answer.poisoned));
    });

    it('npm_config_cache set to the home does not make the home readable', async () => {
      const r = await cli(
        ['--sandbox', '--verbose', '--root', ws, '--stdio', 'npx -y ./hostile-npx-server-1.0.0.tgz', 'call', 'read_home'],
        {
          ...env,
          npm_config_cache: home,
        },
      );
      assert.equal(r.code, 0, r.stderr);
      assert.equal((answerOf(JSON.parse(r.stdout) as CallToolResult) as { ok: boolean }).ok, false);
      assert.match(r.stderr, /npm_config_cache=.* is not a cache folder/);
      assert.ok(!fs.existsSync(path.join(home, '_cacache')), 'npx wrote nothing into the home');
    });
  });

  describe('what once got a server out (issue 46)', function () {
    const sandboxed = () => ['--sandbox', '--root', ws, '--fence', 'off'];
    const call = async (tool: string, extra: NodeJS.ProcessEnv = {}, args = sandboxed(), server = hostileLine) => {
      const r = await cli([...args, '--stdio', server, 'call', tool], { ...env, ...extra });
      assert.equal(r.code, 0, `${tool}: ${r.stderr}`);
      return { answer: answerOf(JSON.parse(r.stdout) as CallToolResult), stderr: r.stderr };
    };

    it("the kernel's settings are not writable inside (access(W_OK), nothing written); root-only files of /etc are hidden", async () => {
      const proc = (await call('proc_sys')).answer as Record<string, string>;
      assert.deepEqual(
        Object.entries(proc).filter(([, v]) => v === 'writable'),
        [],
      );
      assert.deepEqual((await call('read_root_only')).answer, { readable: [] });
    });

    it('files that run later stay as they were in two roots, a nested repository and a worktree; a plain file is written; nothing is left behind', async () => {
      const scratch = path.join(dir, 'protect');
      const first = path.join(scratch, 'ws');
      const second = path.join(scratch, 'ws2');
      fs.mkdirSync(second, { recursive: true });
      const git = (cwd: string, ...args: string[]) =>
        execFileSync('git', args, {
          cwd,
          stdio: 'ignore',
          env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' },
        });
      fs.mkdirSync(first, { recursive: true });
      git(first, 'init', '-q');
      git(first, 'commit', '-q', '--allow-empty', '-m', 'init');
      const nested = path.join(first, 'nested');
      fs.mkdirSync(nested);
      git(nested, 'init', '-q');
      git(nested, 'commit', '-q', '--allow-empty', '-m', 'n');
      const worktree = path.join(first, 'wt');
      git(nested, 'worktree', 'add', '-q', worktree);
      fs.mkdirSync(path.join(first, '.vscode'));
      fs.writeFileSync(path.join(first, '.vscode', 'settings.json'), '{}');
      const snapshot = () =>
        // Files with their size and time; folders by name (their times move as the plain files come and go).
        execFileSync(
          'find',
          [scratch, '-not', '-path', '*/objects/*', '(', '-type', 'd', '-printf', '%P/\n', ')', '-o', '-printf', '%P %s %T@\n'],
          {
            encoding: 'utf8',
          },
        )
          .split('\n')
          .sort()
          .join('\n');
      const before = snapshot();
      const folders = [first, second, nested, worktree];
      const r = await call('write_protected', { HOSTILE_PROTECT: folders.join(':') }, [
        '--sandbox',
        '--root',
        first,
        '--root',
        second,
        '--fence',
        'off',
      ]);
      const results = r.answer as Record<string, Record<string, string>>;
      for (const folder of folders) {
        for (const [file, outcome] of Object.entries(results[folder]))
          if (file === 'plain-by-server.txt') assert.equal(outcome, 'written', `${folder}/${file}`);
          else assert.notEqual(outcome, 'written', `${folder}/${file}`);
        assert.match(fs.readFileSync(path.join(folder, 'plain-by-server.txt'), 'utf8'), /written by the sandboxed server/);
        fs.rmSync(path.join(folder, 'plain-by-server.txt'));
      }
      // Every file as it was (sizes and times), no mount point left (no .git made in ws2, no .mcp.json, no .github).
      assert.equal(snapshot(), before);
      assert.equal(fs.readFileSync(path.join(worktree, '.git'), 'utf8'), `gitdir: ${path.join(nested, '.git', 'worktrees', 'wt')}\n`);
    });

    it("a host Unix socket in the root is not reachable, Node's own child pipes still work, no new user namespace, no io_uring", async () => {
      const socketPath = path.join(ws, 'host.sock');
      let connections = 0;
      const host = net.createServer((c) => {
        connections++;
        c.destroy();
      });
      await new Promise<void>((resolve) => host.listen(socketPath, resolve));
      try {
        const reached = (await call('host_socket', { HOSTILE_SOCKET: socketPath })).answer as { ok: boolean; error?: string };
        assert.deepEqual(reached, { ok: false, error: 'EACCES' });
        assert.equal(connections, 0);
      } finally {
        host.close();
      }
      assert.deepEqual((await call('spawn_child')).answer, { ok: true });
      const userns = (await call('new_userns')).answer as { status: number };
      assert.notEqual(userns.status, 0, JSON.stringify(userns));
      const calls = (await call('syscalls')).answer as Record<string, string>;
      if (process.arch === 'x64' || process.arch === 'arm64')
        assert.deepEqual(calls, { io_uring_setup: '38', unix: '13', vsock: '13', inet: 'ok', socketpair: 'ok' });
    });

    it('the script is found as node finds it: --eval does not make ~/.ssh readable; a command in ~/.cargo/bin does not read ~/.cargo', async () => {
      const evil = path.join(ws, 'evil.mjs');
      fs.copyFileSync(HOSTILE, evil);
      const keyFile = path.join(home, '.ssh', 'id_test');
      const evalLine = `${JSON.stringify(process.execPath)} "--eval=import('${evil}')" ${JSON.stringify(keyFile)}`;
      const byEval = await call('read_file', { HOSTILE_READ: keyFile }, sandboxed(), evalLine);
      assert.equal((byEval.answer as { ok: boolean }).ok, false, JSON.stringify(byEval.answer));
      const cargo = path.join(home, '.cargo');
      fs.mkdirSync(path.join(cargo, 'bin'), { recursive: true });
      fs.writeFileSync(path.join(cargo, 'credentials.toml'), '[registry]\ntoken = "cio_secret"\n');
      fs.writeFileSync(
        path.join(cargo, 'bin', 'hostile'),
        `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(evil)}\n`,
        { mode: 0o755 },
      );
      const byCargo = await call(
        'read_file',
        { HOSTILE_READ: path.join(cargo, 'credentials.toml'), PATH: `${path.join(cargo, 'bin')}:${process.env.PATH}` },
        sandboxed(),
        'hostile',
      );
      assert.equal((byCargo.answer as { ok: boolean }).ok, false, JSON.stringify(byCargo.answer));
    });

    it("the caller's secret-shaped variables do not reach it; ordinary ones do", async () => {
      const names = (
        await call('env_names', { GITHUB_TOKEN: 'ghp_x', AWS_SECRET_ACCESS_KEY: 'a', SSH_AUTH_SOCK: '/tmp/agent', PERSON_SETTING: 'kept' })
      ).answer as string[];
      assert.ok(names.includes('PERSON_SETTING'));
      for (const secret of ['GITHUB_TOKEN', 'AWS_SECRET_ACCESS_KEY', 'SSH_AUTH_SOCK']) assert.ok(!names.includes(secret), secret);
    });

    it('a launch collects the caches of identities unused for long, never following a link a server planted in one', async () => {
      const cacheRoot = path.join(home, '.cache', 'mcp-host', 'sandbox');
      const old = path.join(cacheRoot, 'fedcba9876543210');
      const victim = path.join(dir, 'collect-victim');
      fs.mkdirSync(path.join(victim, 'deep'), { recursive: true });
      fs.writeFileSync(path.join(victim, 'deep', 'keep.txt'), 'the person');
      fs.mkdirSync(path.join(old, 'npm', '_cacache'), { recursive: true });
      fs.writeFileSync(path.join(old, 'npm', '_cacache', 'content'), 'cached');
      fs.symlinkSync(victim, path.join(old, 'npm', '_npx'));
      fs.symlinkSync(path.join(victim, 'deep'), path.join(old, 'npm', '_cacache', 'deep'));
      const longAgo = new Date(Date.now() - (CACHE_UNUSED_DAYS + 1) * 86_400_000);
      fs.utimesSync(old, longAgo, longAgo);
      // An earlier test's launch collected within the hour.
      fs.rmSync(path.join(cacheRoot, 'mounts', 'collected'), { force: true });
      await call('env_names');
      assert.ok(!fs.existsSync(old), 'the unused cache is still there');
      assert.equal(fs.readFileSync(path.join(victim, 'deep', 'keep.txt'), 'utf8'), 'the person');
      assert.ok(!fs.readdirSync(cacheRoot).some((n) => n.startsWith('.removing-')));
    });

    it("the caller's secrets under ordinary names do not reach it either (by value, and the known webhook and DSN names); the verbose line counts them", async () => {
      const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJjaSJ9.c2lnbmF0dXJlLW9mLXRoZS1qb2I';
      const secrets = {
        DATABASE_URL: 'postgres://app:hunter2@db.internal:5432/app',
        REDIS_URL: 'redis://:s3cret@cache.internal:6379/0',
        CI_JOB_JWT: jwt,
        DEPLOY_ID: jwt,
        SLACK_WEBHOOK_URL: 'https://hooks.slack.com/services/T000/B000/XXXXXXXXXXXXXXXXXXXXXXXX',
        TEAMS_HOOK: 'https://hooks.slack.com/services/T111/B111/YYYYYYYYYYYYYYYYYYYYYYYY',
        NETRC: path.join(home, '.netrc'),
        SENTRY_DSN: 'https://0123456789abcdef@o1.ingest.sentry.io/1',
        GH_ENTERPRISE_TOKEN: 'ghe_value',
        MIRROR: 'https://ghp_abcdefghijklmnopqrstuvwxyz0123456789@github.com/o/r.git',
        UPSTREAM: 'https://deploy@git.internal/o/r.git',
        STORAGE: 'DefaultEndpointsProtocol=https;AccountName=a;AccountKey=bm90LWEtcmVhbC1rZXk=;EndpointSuffix=core.windows.net',
      };
      const ordinary = {
        PERSON_SETTING: 'kept',
        LANG: 'C.UTF-8',
        NODE_OPTIONS: '--max-old-space-size=4096',
        npm_config_registry: 'https://registry.npmjs.org/',
        npm_config_user_agent: 'npm/10.8.2 node/v22.11.0 linux x64 workspaces/false',
        HTTPS_PROXY: 'http://proxy.internal:3128',
        NO_PROXY: 'localhost,127.0.0.1,.internal',
        SERVICE_URL: 'https://api.internal:8443/v1?region=eu',
        LS_COLORS: 'rs=0:di=01;34:ln=01;36:mh=00:pi=40;33:so=01;35:*.tar=01;31',
      };
      const { answer, stderr } = await call('env_names', { ...secrets, ...ordinary }, [...sandboxed(), '--verbose']);
      const names = answer as string[];
      for (const name of Object.keys(ordinary)) assert.ok(names.includes(name), `${name} withheld`);
      for (const name of Object.keys(secrets)) assert.ok(!names.includes(name), `${name} reached the server`);
      const line = /withheld (\d+) variables? of the caller's environment: ([^;\n]*)/.exec(stderr);
      assert.ok(line, stderr);
      for (const name of Object.keys(secrets)) assert.ok(line[2].split(', ').includes(name), `${name} not named: ${line[0]}`);
      for (const value of Object.values(secrets)) assert.ok(!stderr.includes(value), 'a value in the verbose output');
    });

    it('at most MAX_SANDBOX_TASKS processes, whoever MCP Host runs as; the data size is limited; its control groups are gone after', async function () {
      this.timeout(180_000);
      const groups = () =>
        ['/sys/fs/cgroup/pids', '/sys/fs/cgroup/memory', '/sys/fs/cgroup/mcp-host-sandbox'].flatMap((d) =>
          fs.existsSync(d)
            ? fs
                .readdirSync(d)
                .filter((n) => /^(mcp-host-sandbox-)?\d+-\d+$/.test(n))
                .map((n) => path.join(d, n))
            : [],
        );
      const before = new Set(groups());
      const r = (
        await call('many_processes', { HOSTILE_PROCESSES: String(MAX_SANDBOX_TASKS + 50) }, [...sandboxed(), '--timeout', '170000'])
      ).answer as {
        started: number;
        refused: string | null;
      };
      assert.ok(r.started < MAX_SANDBOX_TASKS, JSON.stringify(r));
      assert.equal(r.refused, 'EAGAIN');
      const limits = (await call('limits')).answer as { data: string };
      assert.equal(limits.data, String(sandboxMemoryBytes()));
      await new Promise((resolve) => setTimeout(resolve, 2000));
      assert.deepEqual(
        groups().filter((g) => !before.has(g)),
        [],
      );
    });
  });

  describe('what got a server out of the first fix (issue 46, second attack)', function () {
    const gitEnv = { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' };
    const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, stdio: 'ignore', env: gitEnv });
    /** A root holding a repository with one commit, in a scratch folder of its own. */
    const repository = (name: string) => {
      const root = path.join(dir, name);
      fs.rmSync(root, { recursive: true, force: true });
      fs.mkdirSync(root, { recursive: true });
      git(root, 'init', '-q');
      git(root, 'commit', '-q', '--allow-empty', '-m', 'init');
      return root;
    };
    /** Every file under `folder` with its size and content hash, folders by name. */
    const tree = (folder: string) =>
      execFileSync(
        'sh',
        ['-c', 'cd "$1" && find . -type d -printf "%p/\\n" -o -type f -printf "%p %s\\n" -o -printf "%p link\\n" | sort', 'tree', folder],
        {
          encoding: 'utf8',
        },
      );
    /** Runs `script` in the sandboxed hostile server, whose root is `root`. */
    const sh = async (root: string, script: string, server = hostileLine, extra: NodeJS.ProcessEnv = {}) => {
      const r = await cli(
        ['--sandbox', '--root', root, '--fence', 'off', '--stdio', server, 'call', 'sh'],
        { ...env, ...extra, HOSTILE_SH: script },
        root,
      );
      assert.equal(r.code, 0, r.stderr);
      return answerOf(JSON.parse(r.stdout) as CallToolResult) as { status: number; stdout: string; stderr: string };
    };
    /** What git on the host runs from a repository's configuration and hooks: the marker file's lines after `git status` and a commit. */
    const gitOnHostRuns = (repo: string, marker: string) => {
      fs.rmSync(marker, { force: true });
      try {
        git(repo, 'status', '--short');
        git(repo, 'commit', '-q', '--allow-empty', '-m', 'after');
      } catch {
        // A repository the server broke: git refuses, and runs nothing.
      }
      return fs.existsSync(marker) ? fs.readFileSync(marker, 'utf8') : '';
    };

    it('git on the host runs nothing the server wrote: no commondir, alternates or worktree of its own inside .git', async () => {
      const root = repository('atk-commondir');
      const marker = path.join(dir, 'atk-commondir-ran.txt');
      const before = tree(path.join(root, '.git'));
      await sh(
        root,
        `cd .git && mkdir -p x/hooks && cp -r objects refs HEAD x/ && cp config x/config &&
         printf '[core]\\n\\tfsmonitor = "echo fsmonitor >> ${marker}; false"\\n' >> x/config &&
         printf '#!/bin/sh\\necho pre-commit >> ${marker}\\n' > x/hooks/pre-commit && chmod +x x/hooks/pre-commit;
         echo x > commondir; mkdir -p objects/info; echo /tmp > objects/info/alternates; mkdir -p worktrees/w; echo pwn > worktrees/w/gitdir`,
      );
      assert.equal(tree(path.join(root, '.git')), before, 'the git folder is as it was');
      assert.equal(gitOnHostRuns(root, marker), '');
    });

    it('renaming .git, .github or a nested repository does not make room for ones of its own', async () => {
      const root = repository('atk-rename');
      const marker = path.join(dir, 'atk-rename-ran.txt');
      const nested = path.join(root, 'lib', 'nested');
      fs.mkdirSync(nested, { recursive: true });
      git(nested, 'init', '-q');
      git(nested, 'commit', '-q', '--allow-empty', '-m', 'n');
      fs.mkdirSync(path.join(root, '.github', 'workflows'), { recursive: true });
      fs.writeFileSync(path.join(root, '.github', 'workflows', 'ci.yml'), 'on: push\n');
      const before = tree(root);
      const config = `printf '[core]\\n\\trepositoryformatversion = 0\\n\\tfsmonitor = "echo fsmonitor >> ${marker}; false"\\n'`;
      const r = await sh(
        root,
        `mv .git .git-old; mkdir .git && cp -r .git-old/objects .git-old/refs .git-old/HEAD .git/; ${config} > .git/config;
         mv .github .github-old; mkdir -p .github/workflows .github/hooks; echo 'on: push' > .github/workflows/pwn.yml;
         mv lib lib-old; mv lib/nested lib/nested-old; mkdir -p lib/nested/.git; cp -r lib-old/nested/.git/objects lib-old/nested/.git/refs lib-old/nested/.git/HEAD lib/nested/.git/; ${config} > lib/nested/.git/config;
         touch plain.txt; echo done`,
      );
      assert.match(r.stdout, /done/);
      assert.ok(fs.existsSync(path.join(root, 'plain.txt')), 'a plain file is still made');
      fs.rmSync(path.join(root, 'plain.txt'));
      assert.equal(tree(root), before, 'nothing renamed, nothing made');
      assert.equal(gitOnHostRuns(root, marker), '');
      assert.equal(gitOnHostRuns(nested, marker), '');
    });

    it('a second sandbox on the same root keeps its protection when the first stops; the mount points go with the last', async () => {
      const root = path.join(dir, 'atk-two');
      fs.rmSync(root, { recursive: true, force: true });
      fs.mkdirSync(root);
      const first = cli(
        ['--sandbox', '--root', root, '--fence', 'off', '--stdio', hostileLine, 'call', 'sh'],
        { ...env, HOSTILE_SH: 'sleep 4' },
        root,
      );
      // The first has made its mount points (.vscode among them) before the second starts.
      for (let i = 0; i < 100 && !fs.existsSync(path.join(root, '.vscode')); i++) await new Promise((resolve) => setTimeout(resolve, 50));
      assert.ok(fs.existsSync(path.join(root, '.vscode')));
      const second = sh(
        root,
        `for i in $(seq 1 40); do if echo '{"tasks":[]}' > .vscode/tasks.json 2>/dev/null; then echo wrote; break; fi; sleep 0.25; done;
         echo '{"mcpServers":{}}' > .mcp.json 2>/dev/null; echo '[core]' > .git/config 2>/dev/null; true`,
      );
      assert.equal((await first).code, 0);
      const r = await second;
      assert.doesNotMatch(r.stdout, /wrote/);
      assert.deepEqual(fs.readdirSync(root), [], 'nothing written, and every mount point removed after the last');
    });

    it('a launch killed with its process leaves mount points; the next launch on the machine removes them before it starts', async () => {
      const root = path.join(dir, 'atk-killed');
      const next = path.join(dir, 'atk-killed-next');
      for (const d of [root, next]) {
        fs.rmSync(d, { recursive: true, force: true });
        fs.mkdirSync(d);
      }
      // Its own process group: killed whole (bubblewrap dies with its parent), so nothing of it releases anything.
      const killed = spawn(process.execPath, [CLI, '--sandbox', '--root', root, '--fence', 'off', '--stdio', hostileLine, 'call', 'sh'], {
        env: { ...env, HOSTILE_SH: 'sleep 30' },
        cwd: root,
        detached: true,
        stdio: 'ignore',
      });
      const exited = new Promise((resolve) => killed.once('exit', resolve));
      for (let i = 0; i < 200 && !fs.existsSync(path.join(root, '.vscode')); i++) await new Promise((resolve) => setTimeout(resolve, 50));
      process.kill(-killed.pid!, 'SIGKILL');
      await exited;
      assert.ok(fs.existsSync(path.join(root, '.vscode')), 'the killed launch left its mount points');
      // The next sandbox, on another root: once it has made its own mount points, the dead launch's are gone.
      const second = cli(
        ['--sandbox', '--root', next, '--fence', 'off', '--stdio', hostileLine, 'call', 'sh'],
        { ...env, HOSTILE_SH: 'sleep 3' },
        next,
      );
      for (let i = 0; i < 200 && !fs.existsSync(path.join(next, '.vscode')); i++) await new Promise((resolve) => setTimeout(resolve, 50));
      assert.ok(fs.existsSync(path.join(next, '.vscode')), 'the second launch runs');
      assert.deepEqual(fs.readdirSync(root), [], 'what the killed launch made, removed before the next launch runs');
      assert.equal((await second).code, 0);
      assert.deepEqual(fs.readdirSync(next), []);
    });

    it('a root with no repository is not made a bare one: git on the host runs nothing the server wrote at its top', async () => {
      const root = path.join(dir, 'atk-bare');
      const marker = path.join(dir, 'atk-bare-ran.txt');
      fs.rmSync(root, { recursive: true, force: true });
      fs.mkdirSync(root);
      await sh(
        root,
        `git init -q --bare "$TMPDIR/b"; cp -r "$TMPDIR/b/HEAD" "$TMPDIR/b/objects" "$TMPDIR/b/refs" . ;
         printf '[core]\\n\\trepositoryformatversion = 0\\n\\tbare = false\\n\\tworktree = ${root}\\n\\tfsmonitor = "echo fsmonitor >> ${marker}; false"\\n' > config; true`,
      );
      assert.equal(gitOnHostRuns(root, marker), '');
    });

    it('husky: the hook one folder above core.hooksPath .husky/_ stays as it was', async () => {
      const root = repository('atk-husky');
      const marker = path.join(dir, 'atk-husky-ran.txt');
      fs.mkdirSync(path.join(root, '.husky', '_'), { recursive: true });
      fs.writeFileSync(path.join(root, '.husky', '_', 'pre-commit'), '#!/usr/bin/env sh\n. "$(dirname "$0")/h"\n', { mode: 0o755 });
      fs.writeFileSync(
        path.join(root, '.husky', '_', 'h'),
        '#!/usr/bin/env sh\nn=$(basename "$0"); s=$(dirname "$(dirname "$0")")/$n; [ -f "$s" ] || exit 0; sh -e "$s"\n',
        { mode: 0o755 },
      );
      git(root, 'config', 'core.hooksPath', '.husky/_');
      const before = tree(path.join(root, '.husky'));
      await sh(root, `echo "echo pre-commit >> ${marker}" > .husky/pre-commit; true`);
      assert.equal(tree(path.join(root, '.husky')), before, '.husky is as it was');
      assert.equal(gitOnHostRuns(root, marker), '');
    });

    it('a protected name that is a link, or behind one, refuses the launch, naming it; nothing runs and nothing changes', async () => {
      const cases: Array<[string, (root: string) => void, RegExp]> = [
        [
          '.vscode',
          (root) => {
            fs.mkdirSync(path.join(root, 'config', 'vscode'), { recursive: true });
            fs.symlinkSync('config/vscode', path.join(root, '.vscode'));
          },
          /\.vscode/,
        ],
        [
          '.mcp.json',
          (root) => {
            fs.writeFileSync(path.join(root, 'mcp.json'), '{}');
            fs.symlinkSync('mcp.json', path.join(root, '.mcp.json'));
          },
          /\.mcp\.json/,
        ],
        [
          '.github',
          (root) => {
            fs.mkdirSync(path.join(root, 'gh', 'workflows'), { recursive: true });
            fs.symlinkSync('gh', path.join(root, '.github'));
          },
          /\.github/,
        ],
        [
          'gitdir',
          (root) => {
            const real = path.join(root, 'store', 'real');
            fs.mkdirSync(real, { recursive: true });
            fs.renameSync(path.join(root, '.git'), path.join(real, 'git'));
            fs.symlinkSync('store/real', path.join(root, 'via'));
            fs.writeFileSync(path.join(root, '.git'), 'gitdir: via/git\n');
          },
          /via/,
        ],
      ];
      for (const [name, plant, named] of cases) {
        const root = repository(`atk-link-${name}`);
        plant(root);
        const before = tree(root);
        const r = await cli(
          ['--sandbox', '--root', root, '--fence', 'off', '--stdio', hostileLine, 'call', 'sh'],
          { ...env, HOSTILE_SH: 'rm -rf .vscode .mcp.json .github via; mkdir .vscode; echo ran > ran.txt' },
          root,
        );
        assert.notEqual(r.code, 0, name);
        assert.match(r.stderr, /link/i, name);
        assert.match(r.stderr, named, name);
        assert.equal(tree(root), before, `${name}: nothing changed`);
      }
    });

    it("MCP Host's sandbox cache inside a root (XDG_CACHE_HOME there): the server plants nothing in it, no host file is written through a link", async () => {
      const root = path.join(dir, 'atk-cache');
      fs.rmSync(root, { recursive: true, force: true });
      fs.mkdirSync(root);
      const victim = path.join(dir, 'atk-cache-victim.txt');
      fs.writeFileSync(victim, 'precious');
      const cache = path.join(root, '.cache', 'mcp-host', 'sandbox');
      await sh(
        root,
        `R=${cache}/mounts; for i in $(seq 1 400); do ln -s ${victim} $R/made.json.$i 2>/dev/null; done;
         echo planted > ${cache}/planted 2>/dev/null; mkdir -p ${cache}/npm-other 2>/dev/null; true`,
        hostileLine,
        { XDG_CACHE_HOME: path.join(root, '.cache') },
      );
      assert.equal(fs.readFileSync(victim, 'utf8'), 'precious');
      assert.equal(fs.existsSync(path.join(cache, 'planted')), false, 'nothing planted in the cache');
      assert.equal(fs.existsSync(path.join(cache, 'npm-other')), false, 'no cache of another launch made');
      assert.deepEqual(
        fs.readdirSync(path.join(cache, 'mounts')).filter((f) => fs.lstatSync(path.join(cache, 'mounts', f)).isSymbolicLink()),
        [],
        'no link in the registry',
      );
    });

    it("a root that is the home: the server writes no ~/.ssh, ~/.config, ~/.local/bin nor MCP Host's cache", async () => {
      const root = path.join(dir, 'atk-home');
      fs.rmSync(root, { recursive: true, force: true });
      fs.mkdirSync(path.join(root, '.ssh'), { recursive: true });
      await sh(
        root,
        `mkdir -p .config/git .local/bin .gnupg 2>/dev/null; echo '[core]' > .config/git/config; echo key >> .ssh/authorized_keys;
         echo x > .local/bin/git; touch .gnupg/x; true`,
        hostileLine,
        { HOME: root },
      );
      for (const p of ['.config/git/config', '.ssh/authorized_keys', '.local/bin/git', '.gnupg/x'])
        assert.equal(fs.existsSync(path.join(root, p)), false, p);
    });

    it('a file .git/config includes from the tree stays as it was: git on the host runs nothing from it', async () => {
      const root = repository('atk-include');
      const marker = path.join(dir, 'atk-include-ran.txt');
      fs.mkdirSync(path.join(root, 'tools'));
      fs.writeFileSync(path.join(root, 'tools', 'git.config'), '');
      git(root, 'config', 'include.path', '../tools/git.config');
      await sh(root, `printf '[core]\\n\\tfsmonitor = "echo fsmonitor >> ${marker}; false"\\n' > tools/git.config; true`);
      assert.equal(fs.readFileSync(path.join(root, 'tools', 'git.config'), 'utf8'), '');
      assert.equal(gitOnHostRuns(root, marker), '');
    });

    describe("two sandboxes on one root: a folder swapped for a link between the checks and bubblewrap's binds", function () {
      /** Runs a sandbox's command line as the transport would (the seccomp pipe, the checked objects' descriptors). */
      const run = (p: StdioServerParams) =>
        new Promise<{ code: number | null; stderr: string }>((resolve) => {
          const pipes = (p.inputFds ?? []).map(() => 'pipe' as const);
          const child = spawn(p.command, p.args ?? [], {
            cwd: p.cwd,
            env: serverEnvironment(p),
            stdio: ['ignore', 'ignore', 'pipe', ...pipes, ...(p.passFds ?? [])],
          });
          (p.inputFds ?? []).forEach((bytes, i) => {
            const pipe = child.stdio[3 + i] as NodeJS.WritableStream & { on(event: 'error', listener: () => void): void };
            // A bubblewrap that refuses before reading its filter closes the pipe.
            pipe.on('error', () => undefined);
            pipe.end(bytes);
          });
          let stderr = '';
          child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
          child.on('close', (code) => resolve({ code, stderr }));
        });

      it('a pinned nested repository swapped for a link to the folder above: nothing outside the root is written, its protected files are not', async () => {
        const scratch = path.join(dir, 'race-pin');
        const root = path.join(scratch, 'root');
        const sub = path.join(root, 'sub');
        fs.mkdirSync(path.join(sub, '.git'), { recursive: true });
        fs.mkdirSync(path.join(sub, '.vscode'));
        fs.writeFileSync(path.join(sub, '.vscode', 'settings.json'), '{}');
        const moved = path.join(root, 'sub-moved');
        const script = `echo pwned > ${scratch}/outside.txt; echo '{"pwned":1}' > ${moved}/.vscode/settings.json; true`;
        const sandbox = await sandboxedServer({ command: '/bin/sh', args: ['-c', script], cwd: root }, [root], undefined, {
          server: 'race',
        });
        try {
          assert.ok(sandbox.reach.pinned?.includes(sub), 'the nested repository is pinned');
          // Checked and its mount points made; now the server of another sandbox on this root swaps it for a link to
          // the folder above the root, which (as another checkout would) has every name bound below `sub`.
          execFileSync('cp', ['-a', `${sub}/.`, scratch]);
          fs.renameSync(sub, moved);
          fs.symlinkSync('..', sub);
          const r = await run(sandbox.params);
          assert.ok(!fs.existsSync(path.join(scratch, 'outside.txt')), `nothing written outside the root (${r.code}: ${r.stderr})`);
          assert.equal(fs.readFileSync(path.join(moved, '.vscode', 'settings.json'), 'utf8'), '{}', 'the protected file is unchanged');
          assert.notEqual(r.code, 0, 'bubblewrap refuses a bind that did not land on what was checked');
        } finally {
          fs.rmSync(sub);
          fs.renameSync(moved, sub);
          await sandbox.stop();
        }
      });

      it("a root inside another sandbox's root swapped for a link to a folder outside: the server writes its own root, never the other folder", async () => {
        const scratch = path.join(dir, 'race-root');
        const root = path.join(scratch, 'shared', 'mine');
        const elsewhere = path.join(scratch, 'elsewhere');
        fs.mkdirSync(root, { recursive: true });
        fs.mkdirSync(elsewhere);
        const sandbox = await sandboxedServer(
          { command: '/bin/sh', args: ['-c', `echo written > ${root}/plain.txt`], cwd: root },
          [root],
          undefined,
          { server: 'race' },
        );
        const moved = path.join(scratch, 'shared', 'mine-moved');
        try {
          // The folder the link names has the names bound below the root (as another checkout would).
          execFileSync('cp', ['-a', `${root}/.`, elsewhere]);
          fs.renameSync(root, moved);
          fs.symlinkSync(elsewhere, root);
          const r = await run(sandbox.params);
          assert.ok(
            !fs.existsSync(path.join(elsewhere, 'plain.txt')),
            `nothing written in the folder the link names (${r.code}: ${r.stderr})`,
          );
          assert.equal(r.code, 0, r.stderr);
          assert.equal(fs.readFileSync(path.join(moved, 'plain.txt'), 'utf8'), 'written\n', 'the root that was checked is the one written');
        } finally {
          fs.rmSync(root);
          fs.renameSync(moved, root);
          await sandbox.stop();
        }
        // Stopped, its descriptors closed: started again, it passes none, and bubblewrap binds nothing a reused number names.
        fs.rmSync(path.join(root, 'plain.txt'), { force: true });
        fs.rmSync(path.join(moved, 'plain.txt'), { force: true });
        const again = await run(sandbox.params);
        assert.notEqual(again.code, 0);
        assert.ok(!fs.existsSync(path.join(root, 'plain.txt')));
      });
    });

    it('node options the reach does not know never make their value "the script": ~/.ssh stays unreadable', async () => {
      const evil = path.join(ws, 'evil.mjs');
      fs.copyFileSync(HOSTILE, evil);
      const keyFile = path.join(home, '.ssh', 'id_test');
      for (const option of [
        '--tls-cipher-list',
        '--tls-keylog',
        '--trace-event-categories',
        '--max-old-space-size',
        '--some-future-option',
      ]) {
        const line = `${JSON.stringify(process.execPath)} ${option} ${JSON.stringify(keyFile)} ${JSON.stringify(evil)}`;
        const r = await cli(['--sandbox', '--root', ws, '--fence', 'off', '--stdio', line, 'call', 'read_file'], {
          ...env,
          HOSTILE_READ: keyFile,
        });
        // Node itself may refuse the option; either way nothing of ~/.ssh is read.
        if (r.code === 0) assert.equal((answerOf(JSON.parse(r.stdout) as CallToolResult) as { ok: boolean }).ok, false, option);
        assert.doesNotMatch(r.stdout, /home secret/, option);
      }
    });
  });
});

const line = (p: { command: string; args?: string[] }) => [p.command, ...(p.args ?? [])].map((w) => JSON.stringify(w)).join(' ');

/**
 * A Node whose own fetch honours the proxy variables (NODE_USE_ENV_PROXY, Node 24 and 22.21+): the
 * harness's Node 24 when it is installed, else the Node 22 the conformance suite installs from npm
 * (test/harness/install-node22.sh, idempotent), if it is recent enough; undefined where neither is.
 */
function proxyAwareNode(): string | undefined {
  const recent = (node: string): boolean => {
    const [major, minor] = execFileSync(node, ['--version'], { encoding: 'utf8' }).trim().slice(1).split('.').map(Number);
    return major > 22 || (major === 22 && minor >= 21);
  };
  const node24 = path.join(process.env.HARNESS_DIR ?? path.join(ROOT, '.harness'), 'node24', 'node_modules', 'node', 'bin', 'node');
  if (fs.existsSync(node24) && recent(node24)) return node24;
  try {
    const node22 = installedNode22();
    return recent(node22) ? node22 : undefined;
  } catch {
    return undefined;
  }
}
