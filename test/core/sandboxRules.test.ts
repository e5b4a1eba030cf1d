import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { protectedPathsNamed } from '../../src/core/policy/protectedPaths';
import { withheldFromSandbox, withoutSecrets } from '../../src/core/servers/environment';
import { inControlGroups, MAX_SANDBOX_TASKS, sandboxLimits, type CgroupFs } from '../../src/core/servers/sandbox/limits';
import {
  claimMountPoints,
  makeMountPoints,
  protectedNameIn,
  protectedPathsOf,
  releaseMountPoints,
} from '../../src/core/servers/sandbox/protected';
import { CACHE_UNUSED_DAYS, COLLECT_EVERY_MS, collectCaches, collectionDue, seedCache } from '../../src/core/servers/sandbox/cache';
import { NotFollowedError, openChecked } from '../../src/core/servers/sandbox/nofollow';
import { sweepMountPoints, thisMachine } from '../../src/core/servers/sandbox/launcher';
import { computeReach, scriptIndex, thisHost } from '../../src/core/servers/sandbox/reach';
import {
  BPF,
  SECCOMP_RET_ALLOW,
  SECCOMP_RET_ERRNO,
  seccompInstructions,
  seccompProgram,
  type BpfInstruction,
} from '../../src/core/servers/sandbox/seccomp';

/** Runs a classic BPF program (the opcodes the filter uses) on one system call, as the kernel's seccomp does. */
function run(program: BpfInstruction[], call: { nr: number; arch: number; args?: number[] }): number {
  const word = (offset: number): number => {
    if (offset === 0) return call.nr >>> 0;
    if (offset === 4) return call.arch >>> 0;
    const i = (offset - 16) / 8;
    assert.ok(Number.isInteger(i) && i >= 0 && i < 6, `offset ${offset}`);
    return (call.args?.[i] ?? 0) >>> 0;
  };
  let a = 0;
  for (let pc = 0; pc < program.length; pc++) {
    const { code, jt, jf, k } = program[pc];
    switch (code) {
      case BPF.LD_W_ABS:
        a = word(k);
        break;
      case BPF.AND_K:
        a = (a & k) >>> 0;
        break;
      case BPF.JEQ_K:
        pc += a === k >>> 0 ? jt : jf;
        break;
      case BPF.JGE_K:
        pc += a >= k >>> 0 ? jt : jf;
        break;
      case BPF.RET_K:
        return k >>> 0;
      default:
        assert.fail(`opcode ${code}`);
    }
  }
  assert.fail('the program fell off its end');
}

const errno = (e: number) => (SECCOMP_RET_ERRNO | e) >>> 0;

const REPO = path.resolve(__dirname, '..', '..');

describe('the seccomp filter (a simulated kernel)', () => {
  const cases = [
    { arch: 'x64' as const, audit: 0xc000003e, socket: 41, socketpair: 53, keyctl: 250, foreign: 0x40000003, other: 0 },
    { arch: 'arm64' as const, audit: 0xc00000b7, socket: 198, socketpair: 199, keyctl: 219, foreign: 0x40000028, other: 63 },
  ];
  for (const c of cases) {
    it(`${c.arch}: socket() only for the network's families, stream socketpairs, no io_uring or keyrings, no other ABI`, () => {
      const p = seccompInstructions(c.arch)!;
      const call = (nr: number, args: number[] = [], arch = c.audit) => run(p, { nr, arch, args });
      assert.equal(call(c.socket, [2, 1]), SECCOMP_RET_ALLOW, 'AF_INET');
      assert.equal(call(c.socket, [10, 2]), SECCOMP_RET_ALLOW, 'AF_INET6');
      assert.equal(call(c.socket, [16, 3]), SECCOMP_RET_ALLOW, 'AF_NETLINK');
      assert.equal(call(c.socket, [1, 1]), errno(13), 'AF_UNIX');
      assert.equal(call(c.socket, [40, 1]), errno(13), 'AF_VSOCK');
      assert.equal(call(c.socket, [17, 3]), errno(13), 'AF_PACKET');
      assert.equal(call(c.socketpair, [1, 1]), SECCOMP_RET_ALLOW, 'stream pair');
      assert.equal(call(c.socketpair, [1, 1 | 0x80000 | 0x800]), SECCOMP_RET_ALLOW, 'stream pair, CLOEXEC|NONBLOCK');
      assert.equal(call(c.socketpair, [1, 5]), SECCOMP_RET_ALLOW, 'seqpacket pair');
      assert.equal(call(c.socketpair, [1, 2]), errno(13), 'datagram pair');
      for (const nr of [425, 426, 427]) assert.equal(call(nr), errno(38), `io_uring ${nr}`);
      assert.equal(call(c.keyctl), errno(38), 'keyctl');
      assert.equal(call(c.other), SECCOMP_RET_ALLOW, 'any other call');
      assert.equal(call(c.socket, [1, 1], 0x40000003), errno(1), 'another architecture');
    });
  }

  it('x64: an x32 call (same AUDIT_ARCH, the x32 bit set) is refused; the program is 8 bytes an instruction', () => {
    const p = seccompInstructions('x64')!;
    assert.equal(run(p, { nr: 0x40000000 + 41, arch: 0xc000003e, args: [2, 1] }), errno(1));
    assert.equal(seccompProgram('x64')!.length, p.length * 8);
    assert.equal(seccompInstructions('ia32'), undefined);
  });
});

describe('the script an interpreter runs', () => {
  it('is found as the interpreter reads its arguments: --eval and the like mean no script', () => {
    assert.equal(scriptIndex('node', ['server.js']), 0);
    assert.equal(scriptIndex('node', ['--enable-source-maps', '-r', 'pre.js', 'server.js', 'x']), 3);
    assert.equal(scriptIndex('node', ["--eval=import('ws/evil.mjs')", '/home/p/.ssh/config']), -1);
    assert.equal(scriptIndex('node', ['-e', 'code', '/home/p/.ssh/config']), -1);
    assert.equal(scriptIndex('node', ['-pe', 'code', 'x']), -1);
    assert.equal(scriptIndex('node', ['--import', 'tsx', 'server.ts']), 2);
    assert.equal(scriptIndex('node', ['--', 'server.js']), 1);
    assert.equal(scriptIndex('python3', ['-u', 'server.py']), 1);
    assert.equal(scriptIndex('python3', ['-c', 'code', '/home/p/.ssh/config']), -1);
    assert.equal(scriptIndex('python3', ['-m', 'mcp_server', '/etc/x']), -1);
    assert.equal(scriptIndex('python3', ['-Wignore', 'server.py']), 1);
    assert.equal(scriptIndex('python3', ['-W', 'ignore', 'server.py']), 2);
    assert.equal(scriptIndex('deno', ['run', '-A', 'server.ts']), 2);
    assert.equal(scriptIndex('deno', ['eval', 'code', 'x.ts']), -1);
    assert.equal(scriptIndex('bun', ['run', 'server.ts']), 1);
    assert.equal(scriptIndex('npx', ['server.js']), -1);
  });

  const files: Record<string, 'file' | 'dir'> = {
    '/usr': 'dir',
    '/usr/bin/node': 'file',
    '/home/p/.cargo/bin': 'dir',
    '/home/p/.local/bin': 'dir',
    '/home/p/.nvm/versions/node/v22': 'dir',
    '/home/p/ws': 'dir',
    '/home/p/ws/evil.mjs': 'file',
    '/home/p/.ssh': 'dir',
    '/home/p/.ssh/config': 'file',
    '/home/p/.cargo/bin/srv': 'file',
    '/home/p/.local/bin/pysrv': 'file',
    '/home/p/.nvm/versions/node/v22/bin/mcp': 'file',
    '/home/p/proj/server': 'dir',
    '/home/p/proj/server/index.js': 'file',
    '/home/p/.npm/_cacache': 'dir',
  };
  const host = { platform: 'linux' as const, home: '/home/p', kind: (p: string) => files[p] ?? 'none', realpath: (p: string) => p };
  const reachOf = (command: string, args: string[], env: NodeJS.ProcessEnv = {}) =>
    computeReach(
      { command, args, cwd: '/home/p/ws', env: { PATH: '/usr/bin:/home/p/.cargo/bin:/home/p/.local/bin', ...env }, roots: ['/home/p/ws'] },
      host,
    );

  it('--eval= does not make a later argument readable; a bare name is found as Node finds it', () => {
    assert.deepEqual(reachOf('node', ["--eval=import('/home/p/ws/evil.mjs')", '/home/p/.ssh/config']).reach.readOnly, ['/usr']);
    const found = reachOf('node', ['/home/p/proj/server']);
    assert.ok(found.reach.readOnly.includes('/home/p/proj/server'), JSON.stringify(found.reach.readOnly));
    assert.equal(found.args[0], '/home/p/proj/server/index.js');
  });

  it("a command's installation: ~/.cargo/bin, not ~/.cargo; ~/.local/bin and Python's user site, not ~/.local; a version's own prefix", () => {
    assert.deepEqual(reachOf('srv', []).reach.readOnly, ['/home/p/.cargo/bin']);
    assert.deepEqual(reachOf('pysrv', []).reach.readOnly, ['/home/p/.local/bin']);
    files['/home/p/.local/lib'] = 'dir';
    assert.deepEqual(reachOf('pysrv', []).reach.readOnly, ['/home/p/.local/bin', '/home/p/.local/lib']);
    assert.deepEqual(reachOf('/home/p/.nvm/versions/node/v22/bin/mcp', []).reach.readOnly, ['/home/p/.nvm/versions/node/v22']);
  });

  it("npx uses MCP Host's own cache; a cache variable is only where its seed comes from, and never the home", () => {
    const plain = reachOf('npx', ['-y', 'pkg']);
    const own = plain.env.npm_config_cache;
    assert.match(own, /^\/home\/p\/\.cache\/mcp-host\/sandbox\/[0-9a-f]{16}\/npm$/);
    assert.ok(plain.reach.readWrite.includes(own));
    assert.deepEqual(plain.seeds, [{ from: '/home/p/.npm', to: own }]);
    for (const cache of ['/home/p', '~', '/', '/home']) {
      const widened = reachOf('npx', ['-y', 'pkg'], { npm_config_cache: cache });
      assert.deepEqual(widened.reach.readWrite, ['/home/p/ws', own], cache);
      assert.deepEqual(widened.seeds, [], cache);
      assert.match(widened.reach.notes.join(), /npm_config_cache=.* is not a cache folder/);
    }
  });
});

describe('the protected names', () => {
  it('are found at a writable folder top, and any .git whole (its commondir, alternates, worktrees, submodules)', () => {
    assert.equal(protectedNameIn(['.vscode', 'tasks.json']), '.vscode');
    assert.equal(protectedNameIn(['.mcp.json']), '.mcp.json');
    assert.equal(protectedNameIn(['.github', 'workflows', 'ci.yml']), '.github/workflows');
    assert.equal(protectedNameIn(['.github', 'ISSUE_TEMPLATE', 'bug.md']), undefined);
    assert.equal(protectedNameIn(['.git', 'hooks', 'pre-commit']), '.git');
    assert.equal(protectedNameIn(['sub', 'repo', '.git', 'config']), 'sub/repo/.git');
    assert.equal(protectedNameIn(['.git', 'modules', 'lib', 'hooks', 'post-checkout']), '.git');
    assert.equal(protectedNameIn(['wt', '.git']), 'wt/.git');
    assert.equal(protectedNameIn(['.git', 'commondir']), '.git');
    assert.equal(protectedNameIn(['.git', 'objects', 'info', 'alternates']), '.git');
    assert.equal(protectedNameIn(['src', 'index.ts']), undefined);
    assert.equal(protectedNameIn(['src', '.vscode', 'x']), undefined, 'only at the top of a root');
  });

  it('on disk: existing ones, missing ones to make, nested repositories and worktrees; allowWrite leaves one writable; mount points removed when unchanged', () => {
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-protected-')));
    try {
      for (const d of ['.git/hooks', '.vscode', 'sub/nested/.git/hooks', 'node_modules/pkg/.git/hooks', 'wt', 'wt2', 'store'])
        fs.mkdirSync(path.join(dir, d), { recursive: true });
      fs.writeFileSync(path.join(dir, '.git/config'), '[core]\n\thooksPath = .husky\n');
      fs.mkdirSync(path.join(dir, '.husky'));
      fs.writeFileSync(path.join(dir, 'sub/nested/.git/config'), '');
      fs.writeFileSync(path.join(dir, 'sub/nested/.git/HEAD'), 'ref: refs/heads/main\n');
      fs.writeFileSync(path.join(dir, 'wt/.git'), 'gitdir: /elsewhere\n');
      fs.writeFileSync(path.join(dir, 'wt2/.git'), `gitdir: ${path.join(dir, 'store')}\n`);
      const { paths, pins } = protectedPathsOf(dir, [path.join(dir, '.npmrc')]);
      const rel = (p: string) => path.relative(dir, p);
      const existing = paths.filter((p) => p.exists).map((p) => rel(p.path));
      const missing = paths.filter((p) => !p.exists).map((p) => `${rel(p.path)}:${p.kind}`);
      for (const p of ['.git', '.vscode', '.husky', 'sub/nested/.git', 'wt/.git', 'wt2/.git', 'store'])
        assert.ok(existing.includes(p), `${p} in ${existing.join(', ')}`);
      // The folders above them cannot be renamed: a nested repository's, and the one its protected names would be made in.
      assert.deepEqual(
        pins
          .map(rel)
          .filter((p) => !path.basename(p).startsWith('.'))
          .sort(),
        ['sub', 'sub/nested', 'wt', 'wt2'],
      );
      assert.ok(pins.map(rel).includes('.github'));
      for (const p of ['.mcp.json:file', '.claude:dir', '.github/hooks:dir', '.envrc:file'])
        assert.ok(missing.includes(p), `${p} in ${missing.join(', ')}`);
      assert.ok(!missing.some((p) => p.startsWith('.npmrc')), 'allowWrite names it');
      assert.ok(![...existing, ...missing].some((p) => p.startsWith('node_modules')), 'node_modules is not searched');

      // The registry is shared by every process: a second launch (here a claim of another live process) keeps what it binds.
      const registry = path.join(dir, 'registry');
      fs.mkdirSync(registry);
      const made = makeMountPoints(
        paths.filter((p) => p.kind === 'dir' && p.path.startsWith(path.join(dir, '.github'))),
        registry,
      );
      assert.deepEqual(made.map(rel), ['.github', '.github/hooks', '.github/agents', '.github/workflows']);
      assert.ok(fs.statSync(path.join(dir, '.github/hooks')).isDirectory(), 'a folder name gets a folder');
      const first = claimMountPoints(made, registry);
      const other = path.join(registry, `claim-${process.ppid}-1.json`);
      fs.writeFileSync(other, JSON.stringify({ pid: process.ppid, host: os.hostname(), uses: [path.join(dir, '.github/hooks')] }));
      fs.writeFileSync(path.join(dir, '.github/workflows/ci.yml'), 'written by the person meanwhile');
      releaseMountPoints(registry, first);
      assert.ok(fs.existsSync(path.join(dir, '.github/hooks')), 'still used by the second sandbox');
      assert.ok(fs.existsSync(path.join(dir, '.github/workflows/ci.yml')), 'what the person wrote stays');
      assert.ok(!fs.existsSync(path.join(dir, '.github/agents')), 'an unchanged mount point goes');
      // A claim whose process is gone holds nothing.
      fs.writeFileSync(other, JSON.stringify({ pid: 2 ** 22 + 7, host: os.hostname(), uses: [path.join(dir, '.github/hooks')] }));
      releaseMountPoints(registry);
      assert.ok(!fs.existsSync(path.join(dir, '.github/hooks')));
      assert.ok(!fs.existsSync(other));
      // A JSON name holds an empty object (VS Code reports an empty .mcp.json as broken), and goes when it still does.
      const json = makeMountPoints(
        paths.filter((p) => p.path === path.join(dir, '.mcp.json')),
        registry,
      );
      assert.equal(fs.readFileSync(path.join(dir, '.mcp.json'), 'utf8'), '{}\n');
      releaseMountPoints(registry, claimMountPoints(json, registry));
      assert.ok(!fs.existsSync(path.join(dir, '.mcp.json')));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a process killed while it makes the mount points leaves none that the registry does not know', () => {
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-killed-')));
    try {
      const root = path.join(dir, 'root');
      const registry = path.join(dir, 'mounts');
      for (const d of [root, registry]) fs.mkdirSync(d);
      const paths = ['.vscode', '.idea', '.devcontainer', '.cursor', '.claude', '.codex', '.gemini', '.husky'].map((name) => ({
        path: path.join(root, name),
        kind: 'dir',
        exists: false,
      }));
      // The process dies at its fifth folder (SIGKILL: nothing of it runs after), as a window or CLI killed at that moment would.
      const script = `const fs = require('node:fs'); const mkdir = fs.mkdirSync; let n = 0;
        fs.mkdirSync = (...a) => { if (++n === 5) process.kill(process.pid, 'SIGKILL'); return mkdir(...a); };
        require(${JSON.stringify(path.join(REPO, 'src', 'core', 'servers', 'sandbox', 'protected.ts'))}).makeMountPoints(${JSON.stringify(paths)}, ${JSON.stringify(registry)});`;
      const run = spawnSync(process.execPath, ['--require', 'tsx/cjs', '-e', script], { cwd: REPO, encoding: 'utf8' });
      assert.equal(run.signal, 'SIGKILL', run.stderr);
      assert.equal(fs.readdirSync(root).length, 4, 'four made before it died');
      releaseMountPoints(registry);
      assert.deepEqual(fs.readdirSync(root), [], 'each recorded as it was made, so the next release removes it');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("the extension's start removes the mount points of launches that ended without their release, never one a live launch binds", async function () {
    if (process.platform !== 'linux') this.skip();
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-sweep-')));
    try {
      const machine = { ...thisMachine(), sandboxCache: path.join(dir, 'cache') };
      // No sandbox ever ran: nothing is made, not even the registry's folder.
      await sweepMountPoints(machine);
      assert.ok(!fs.existsSync(machine.sandboxCache));
      const registry = path.join(machine.sandboxCache, 'mounts');
      fs.mkdirSync(registry, { recursive: true });
      const root = path.join(dir, 'root');
      fs.mkdirSync(root);
      const made = makeMountPoints(
        ['.envrc', '.cursor', '.mcp.json'].map((name) => ({
          path: path.join(root, name),
          kind: name === '.cursor' ? 'dir' : 'file',
          exists: false,
        })),
        registry,
      );
      assert.equal(made.length, 3);
      // A launch whose process is gone (a window closed before it stopped), and one that still runs (the parent process here).
      const dead = 2 ** 22 + 11;
      fs.writeFileSync(path.join(registry, `claim-${dead}-1.json`), JSON.stringify({ pid: dead, host: os.hostname(), uses: made }));
      fs.writeFileSync(
        path.join(registry, `claim-${process.ppid}-2.json`),
        JSON.stringify({ pid: process.ppid, host: os.hostname(), uses: [path.join(root, '.cursor')] }),
      );
      await sweepMountPoints(machine);
      assert.deepEqual(fs.readdirSync(root), ['.cursor'], 'what the live launch binds stays');
      assert.ok(!fs.existsSync(path.join(registry, `claim-${dead}-1.json`)));
      fs.rmSync(path.join(registry, `claim-${process.ppid}-2.json`));
      await sweepMountPoints(machine);
      assert.deepEqual(fs.readdirSync(root), []);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the mount registry follows no link planted for its files: the host file a link names is not written', () => {
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-registry-')));
    try {
      const registry = path.join(dir, 'mounts');
      fs.mkdirSync(registry);
      const victim = path.join(dir, 'victim.txt');
      fs.writeFileSync(victim, 'precious');
      fs.symlinkSync(victim, path.join(registry, `made.json.${process.pid}`));
      const root = path.join(dir, 'root');
      fs.mkdirSync(root);
      makeMountPoints([{ path: path.join(root, '.vscode'), kind: 'dir', exists: false }], registry);
      releaseMountPoints(registry);
      assert.equal(fs.readFileSync(victim, 'utf8'), 'precious');
      fs.symlinkSync(victim, path.join(registry, `made.json.${process.pid}`));
      fs.rmSync(path.join(registry, 'made.json'));
      fs.symlinkSync(victim, path.join(registry, 'made.json'));
      makeMountPoints([{ path: path.join(root, '.vscode'), kind: 'dir', exists: false }], registry);
      releaseMountPoints(registry);
      assert.equal(fs.readFileSync(victim, 'utf8'), 'precious');
      assert.deepEqual(fs.readdirSync(root), [], 'the mount point made and removed');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a folder swapped for a link while its mount points are made (a server of another sandbox on the root): nothing is made where it leads, the launch is refused naming it, what was made goes', function () {
    if (process.platform !== 'linux') this.skip();
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-race-')));
    try {
      const registry = path.join(dir, 'mounts');
      const root = path.join(dir, 'root');
      const outside = path.join(dir, 'outside');
      const sub = path.join(root, 'sub');
      for (const d of [registry, path.join(sub, '.git'), outside]) fs.mkdirSync(d, { recursive: true });
      const wanted = [
        { path: path.join(root, '.vscode'), kind: 'dir' as const, exists: false },
        { path: path.join(sub, '.vscode'), kind: 'dir' as const, exists: false },
        { path: path.join(sub, '.github', 'hooks'), kind: 'dir' as const, exists: false },
        { path: path.join(sub, '.mcp.json'), kind: 'file' as const, exists: false },
      ];
      // At each step, the worst moment: `sub` (checked a moment ago) becomes a link to a folder outside the root.
      let swapped = false;
      const swapSub = (at: string) => {
        if (swapped || !at.startsWith(sub)) return;
        swapped = true;
        fs.renameSync(sub, path.join(root, 'sub-moved'));
        fs.symlinkSync(outside, sub);
      };
      assert.throws(
        () => makeMountPoints(wanted, registry, swapSub),
        (e: Error) => e instanceof NotFollowedError && e.message.includes(sub),
      );
      assert.ok(swapped);
      assert.deepEqual(fs.readdirSync(outside), [], 'nothing made outside the root');
      // What was made before the refusal is recorded, and goes with the release.
      assert.ok(fs.statSync(path.join(root, '.vscode')).isDirectory());
      releaseMountPoints(registry);
      assert.deepEqual(fs.readdirSync(root).sort(), ['sub', 'sub-moved']);
      // A link at the last name: mkdir and O_EXCL fail on it, and nothing is written where it leads.
      fs.rmSync(sub);
      fs.renameSync(path.join(root, 'sub-moved'), sub);
      fs.symlinkSync(path.join(outside, 'x.json'), path.join(sub, '.mcp.json'));
      fs.symlinkSync(outside, path.join(sub, '.vscode'));
      assert.throws(() => makeMountPoints([wanted[1]], registry), NotFollowedError);
      assert.throws(() => makeMountPoints([wanted[3]], registry), NotFollowedError);
      assert.deepEqual(fs.readdirSync(outside), []);
      // A made folder swapped for a link to an empty folder outside before the release: the link stays, and so does its target.
      fs.rmSync(path.join(sub, '.vscode'));
      fs.rmSync(path.join(sub, '.mcp.json'));
      assert.deepEqual(makeMountPoints([wanted[1]], registry), [path.join(sub, '.vscode')]);
      fs.rmdirSync(path.join(sub, '.vscode'));
      fs.mkdirSync(path.join(outside, 'empty'));
      fs.symlinkSync(path.join(outside, 'empty'), path.join(sub, '.vscode'));
      releaseMountPoints(registry);
      assert.deepEqual(fs.readdirSync(outside), ['empty']);
      assert.ok(fs.lstatSync(path.join(sub, '.vscode')).isSymbolicLink(), 'not what was made: left as it is');
      assert.deepEqual(fs.readdirSync(outside), ['empty']);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a mount point or folder gone between its making and its binding (attack, issue 46: a server of another sandbox renaming folders): NotFollowedError naming it, never a bare ENOENT', function () {
    if (process.platform !== 'linux') this.skip();
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-race-')));
    try {
      const sub = path.join(dir, 'sub');
      fs.mkdirSync(sub);
      fs.writeFileSync(path.join(sub, '.bashrc'), '');
      fs.closeSync(openChecked(path.join(sub, '.bashrc'), 'file'));
      // Seen under the CLI: "Error: ENOENT: no such file or directory, open '/proc/self/fd/46/.bashrc'", the launch refused without saying why.
      fs.renameSync(sub, path.join(dir, 'moved'));
      for (const [p, kind] of [
        [path.join(sub, '.bashrc'), 'file'],
        [path.join(sub, '.vscode'), 'dir'],
        [sub, 'dir'],
      ] as const)
        assert.throws(
          () => openChecked(p, kind),
          (e: Error) => e instanceof NotFollowedError && e.message.includes(sub),
        );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the fence: a tool that may change things naming one; a read-only one, or a plain file, does not', () => {
    const finding = (below: string[]) => ({
      found: { pointer: '/path', value: below.join('/'), resolved: `/ws/${below.join('/')}` },
      below,
    });
    const tool = { name: 'write_file', inputSchema: { type: 'object' as const } };
    assert.equal(protectedPathsNamed(tool, [finding(['.vscode', 'tasks.json'])]).length, 1);
    assert.equal(protectedPathsNamed(tool, [finding(['src', 'a.ts'])]).length, 0);
    assert.equal(protectedPathsNamed({ ...tool, annotations: { readOnlyHint: true } }, [finding(['.vscode', 'tasks.json'])]).length, 0);
  });
});

describe('the limits (a simulated machine)', () => {
  /** A cgroup file system as a table of files; folders are made by mkdir. */
  function cgroupFs(files: Record<string, string>, writable = true): CgroupFs & { files: Record<string, string>; dirs: Set<string> } {
    const dirs = new Set<string>();
    return {
      files,
      dirs,
      readFile: (p) => files[p],
      mkdir: (p) => writable && (dirs.add(p), true),
      writeFile: (p, text) => writable && dirs.has(path.dirname(p)) && ((files[p] = text), true),
      rmdir: (p) => dirs.delete(p),
    };
  }
  const v1 =
    '1 0 0:1 / /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids\n2 0 0:2 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n3 0 0:3 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n';

  it('root on a v1 machine: a pids and a memory group under its own, prlimit only for the data size', async () => {
    const cg = cgroupFs({
      '/proc/self/mountinfo': v1,
      '/proc/self/cgroup': '8:pids:/\n4:memory:/svc\n0::/\n',
      '/sys/fs/cgroup/unified/cgroup.controllers': 'hugetlb',
    });
    const limits = sandboxLimits(0, '/usr/bin/prlimit', cg);
    assert.equal(limits.processes, 'cgroup-v1');
    assert.equal(limits.memory, 'cgroup-v1');
    assert.equal(limits.cgroupProcs.length, 2);
    const pids = path.dirname(limits.cgroupProcs[0]);
    assert.match(pids, /^\/sys\/fs\/cgroup\/pids\/mcp-host-sandbox-/);
    assert.equal(cg.files[path.join(pids, 'pids.max')], String(MAX_SANDBOX_TASKS));
    assert.match(path.dirname(limits.cgroupProcs[1]), /^\/sys\/fs\/cgroup\/memory\/svc\/mcp-host-sandbox-/);
    assert.ok(!limits.prlimit.some((a) => a.startsWith('--nproc')), 'not for root: the kernel would not apply it');
    assert.ok(limits.prlimit.some((a) => a.startsWith('--data=')));
    await limits.release();
    assert.equal(cg.dirs.size, 0);
    const wrapped = inControlGroups(limits.cgroupProcs, '/usr/bin/bwrap', ['--x']);
    assert.deepEqual(wrapped.args.slice(3), ['2', ...limits.cgroupProcs, '/usr/bin/bwrap', '--x']);
  });

  it('root on a v2 machine: one group under mcp-host-sandbox with pids.max and memory.max', () => {
    const cg = cgroupFs({
      '/proc/self/mountinfo': '1 0 0:1 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n',
      '/sys/fs/cgroup/cgroup.controllers': 'cpu io memory pids',
      '/sys/fs/cgroup/cgroup.subtree_control': 'memory pids',
    });
    cg.dirs.add('/sys/fs/cgroup');
    const limits = sandboxLimits(0, undefined, cg);
    assert.equal(limits.processes, 'cgroup-v2');
    const group = path.dirname(limits.cgroupProcs[0]);
    assert.equal(cg.files[path.join(group, 'pids.max')], String(MAX_SANDBOX_TASKS));
    assert.ok(Number(cg.files[path.join(group, 'memory.max')]) > 0);
  });

  it('a normal user, or root where no group can be made: RLIMIT_NPROC (user only) and RLIMIT_DATA through prlimit; nothing without prlimit', () => {
    const none = cgroupFs({ '/proc/self/mountinfo': v1, '/proc/self/cgroup': '8:pids:/\n' }, false);
    const user = sandboxLimits(1000, '/usr/bin/prlimit', none);
    assert.equal(user.processes, 'rlimit');
    assert.deepEqual(user.prlimit.slice(0, 2), ['/usr/bin/prlimit', `--nproc=${MAX_SANDBOX_TASKS}:${MAX_SANDBOX_TASKS}`]);
    assert.equal(sandboxLimits(0, '/usr/bin/prlimit', none).processes, 'none');
    assert.equal(sandboxLimits(1000, undefined, none).processes, 'none');
  });
});

describe("the caller's environment for a sandboxed server", () => {
  it('keeps ordinary variables, withholds secret-shaped ones', () => {
    const kept = withoutSecrets({
      PATH: '/usr/bin',
      PWD: '/home/p',
      LANG: 'C',
      GITHUB_TOKEN: 'x',
      AWS_SECRET_ACCESS_KEY: 'x',
      AWS_SESSION_TOKEN: 'x',
      SSH_AUTH_SOCK: '/tmp/agent',
      OPENAI_API_KEY: 'x',
      KRB5CCNAME: 'x',
      PERSON_SETTING: 'kept',
    });
    assert.deepEqual(Object.keys(kept).sort(), ['LANG', 'PATH', 'PERSON_SETTING', 'PWD']);
  });

  it('withholds secrets under ordinary names by their value or a known name; ordinary values stay', () => {
    const withheld = {
      DATABASE_URL: 'postgres://u:pw@h/db',
      REDIS_URL: 'redis://:pw@h:6379',
      UPSTREAM: 'https://deploy-token@git.example/o/r.git',
      SENTRY_DSN: 'https://public@o1.ingest.sentry.io/1',
      CI_JOB_JWT_V2: 'opaque',
      TEAMS_WEBHOOK_URL: 'https://example.webhook.office.com/x',
      NETRC: '/home/p/.netrc',
      AZURE_STORAGE_CONNECTION_STRING: 'UseDevelopmentStorage=true',
      ANY: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJlLXZhbHVl',
      NOTES: 'the key is AKIAIOSFODNN7EXAMPLE',
      JAVA_TOOL_OPTIONS: '-Djavax.net.ssl.trustStorePassword=changeit',
    };
    const ordinary = {
      PATH: '/opt/sk-tools-0123456789abcdefghij/bin:/usr/local/bin:/usr/bin',
      HOME: '/home/p',
      LANG: 'C.UTF-8',
      NODE_OPTIONS: '--max-old-space-size=4096 --enable-source-maps',
      npm_config_registry: 'https://registry.npmjs.org/',
      npm_config_cache: '/home/p/.npm',
      HTTPS_PROXY: 'http://proxy.example:3128',
      no_proxy: 'localhost,127.0.0.1',
      PIP_INDEX_URL: 'https://pypi.org/simple',
      DOCKER_HOST: 'unix:///var/run/docker.sock',
      LESSOPEN: '| /usr/bin/lesspipe %s',
      LS_COLORS: 'rs=0:di=01;34:ln=01;36:*.tar=01;31',
      GOFLAGS: '-mod=mod',
      REQUESTS_CA_BUNDLE: '/etc/ssl/certs/ca-certificates.crt',
      EMPTY: '',
    };
    assert.deepEqual(withheldFromSandbox({ ...withheld, ...ordinary }), Object.keys(withheld).sort());
    assert.deepEqual(Object.keys(withoutSecrets({ ...withheld, ...ordinary })).sort(), Object.keys(ordinary).sort());
  });

  it('withholds what the first rule missed (issue 46, attack): userinfo not at the start, without a scheme, percent-encoded or in base64; PASS, PW, passphrases, a Basic credential', () => {
    const withheld = {
      LEADING_SPACE: ' https://deploy-token@git.example/o/r.git',
      IN_A_LIST: 'https://mirror.example,https://deploy-token@git.example',
      SCHEME_RELATIVE: '//user:pw@fileserver/share',
      NO_SCHEME: 'user:hunter2@proxy.example:3128',
      PERCENT: 'https%3A%2F%2Fuser%3Apw%40host.example',
      BASE64: Buffer.from('https://user:pw@host.example').toString('base64'),
      BLOB: Buffer.from('the key is AKIAIOSFODNN7EXAMPLE').toString('base64'),
      PASS: 'hunter2',
      DB_PASS: 'hunter2',
      SMTP_PW: 'hunter2',
      GPG_PASSPHRASE: 'correct horse',
      BASIC: 'Basic dXNlcjpwYXNzd29yZA==',
    };
    const ordinary = {
      PATH: '/usr/bin:/bin',
      IMAGE: 'node:22@sha256:0f4a2b7c9e1d3f5a7b9c1d3e5f7a9b1c3d5e7f9a1b3c5d7e9f1a3b5c7d9e1f3a',
      GIT_REMOTE: 'git@github.com:o/r.git',
      PAGE: 'https://example.com/a?mail=me@example.com',
      ENCODED: 'a%20b%20c',
      HASH: 'c2hhMjU2LWFiY2RlZmdoaWprbG1ub3BxcnN0dXZ3eHl6',
      PASSENGER_ENV: 'production',
      BYPASS: '1',
      MAILTO: 'mailto:ops@example.com',
    };
    assert.deepEqual(withheldFromSandbox({ ...withheld, ...ordinary }), Object.keys(withheld).sort());
  });

  it("keeps git's author, whose name holds `auth`: a sandboxed git server's commits need it", () => {
    const author = { GIT_AUTHOR_NAME: 'Ada', GIT_AUTHOR_EMAIL: 'ada@example.com', GIT_AUTHOR_DATE: '2026-12-08T00:00:00Z' };
    assert.deepEqual(withheldFromSandbox({ ...author, GIT_AUTHOR_TOKEN: 'x', GIT_ASKPASS_TOKEN: 'y' }), [
      'GIT_ASKPASS_TOKEN',
      'GIT_AUTHOR_TOKEN',
    ]);
  });
});

describe("a sandboxed launcher's cache (issue 46, second attack)", () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-seed-')));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('seeding follows no link the server planted in its cache: nothing is written where one leads', async () => {
    const from = path.join(dir, 'person', '_cacache');
    const to = path.join(dir, 'sandbox', 'npm');
    const victim = path.join(dir, 'victim');
    fs.mkdirSync(path.join(from, 'index-v5', 'aa', 'bb'), { recursive: true });
    fs.writeFileSync(path.join(from, 'index-v5', 'aa', 'bb', 'entry'), 'person cache entry');
    fs.writeFileSync(path.join(from, 'index-v5', 'top'), 'top entry');
    fs.mkdirSync(path.join(to, '_cacache', 'index-v5'), { recursive: true });
    fs.mkdirSync(victim);
    // What the server left in its cache: a folder of the person's cache replaced by a link, and a file's name by another.
    fs.symlinkSync(victim, path.join(to, '_cacache', 'index-v5', 'aa'));
    fs.symlinkSync(path.join(victim, 'top'), path.join(to, '_cacache', 'index-v5', 'top'));
    await seedCache({ from: path.dirname(from), to });
    assert.deepEqual(fs.readdirSync(victim), [], 'nothing written through the links');
    assert.ok(fs.lstatSync(path.join(to, '_cacache', 'index-v5', 'top')).isSymbolicLink());
  });

  it('a cache in a folder the server may write is never a seed; each launch identity has a cache of its own', () => {
    const ws = path.join(dir, 'ws');
    fs.mkdirSync(path.join(ws, '.npmcache', '_cacache'), { recursive: true });
    const host = { ...thisHost(), home: path.join(dir, 'home'), sandboxCache: path.join(dir, 'own') };
    const reachOf = (args: string[], cache = path.join(ws, '.npmcache'), roots = [ws]) =>
      computeReach({ command: 'npx', args, cwd: ws, env: { PATH: process.env.PATH, npm_config_cache: cache }, roots }, host);
    const inRoot = reachOf(['-y', 'a']);
    assert.deepEqual(inRoot.seeds, []);
    assert.match(inRoot.reach.notes.join('\n'), /may write/);
    const a = reachOf(['-y', 'a']).env.npm_config_cache;
    const b = reachOf(['-y', 'b']).env.npm_config_cache;
    const c = reachOf(['-y', 'a'], undefined, [path.join(dir, 'other')]).env.npm_config_cache;
    assert.equal(new Set([a, b, c]).size, 3, `${a} ${b} ${c}`);
    assert.equal(reachOf(['-y', 'a']).env.npm_config_cache, a, 'the same launch finds its cache again');
    // Other folders or other domains are another reach: another cache (issue 46, third attack, case 04).
    const withSettings = (settings: object) =>
      computeReach({ command: 'npx', args: ['-y', 'a'], cwd: ws, env: { PATH: process.env.PATH }, roots: [ws], settings }, host).env
        .npm_config_cache;
    const plain = withSettings({});
    const others = [
      { filesystem: { allowWrite: [path.join(dir, 'other')] } },
      { filesystem: { denyRead: [path.join(ws, 'secret')] } },
      { filesystem: { denyWrite: [path.join(ws, 'docs')] } },
      { network: { allowedDomains: ['example.com'] } },
      { network: { allowedDomains: ['example.com'], deniedDomains: ['bad.example.com'] } },
    ].map(withSettings);
    assert.equal(new Set([plain, ...others]).size, 6, [plain, ...others].join(' '));
  });

  it('a node option whose value may be the next argument: no argument is taken for the script', () => {
    assert.equal(scriptIndex('node', ['--tls-cipher-list', '/home/p/.ssh/config', 'x.mjs']), 2, 'a known one: its value passed over');
    assert.equal(scriptIndex('node', ['--max-old-space-size', '4096', 'x.mjs']), -1);
    assert.equal(scriptIndex('node', ['--max-old-space-size=4096', '--enable-source-maps', '--no-warnings', 'x.mjs']), 3);
    assert.equal(scriptIndex('node', ['--experimental-strip-types', 'x.ts']), 1);
  });

  it("deno's and bun's options whose value may be the next argument: no argument is taken for the script", () => {
    // Known value-taking options: their value passed over.
    assert.equal(scriptIndex('deno', ['run', '--config', 'deno.json', 'server.ts']), 3);
    assert.equal(scriptIndex('deno', ['run', '-A', '--no-check', '--allow-read=/tmp', '--watch', 'server.ts']), 5);
    assert.equal(scriptIndex('bun', ['run', '--preload', './setup.ts', '--smol', 'server.ts']), 4);
    assert.equal(scriptIndex('bun', ['--hot', '--define', 'X=1', 'server.ts']), 3);
    // An option not known to take no value, without an attached value: the next argument may be its value or the script.
    assert.equal(scriptIndex('deno', ['run', '--some-new-option', '/home/p/.ssh/config', 'evil.ts']), -1);
    assert.equal(scriptIndex('deno', ['run', '--lock', 'evil.ts', '/home/p/.ssh/config']), -1);
    assert.equal(scriptIndex('deno', ['run', '--v8-flags', '/home/p/.ssh/config', 'evil.ts']), -1);
    assert.equal(scriptIndex('bun', ['--some-new-option', '/home/p/.ssh/config', 'evil.ts']), -1);
    assert.equal(scriptIndex('bun', ['run', '--inspect', '/home/p/.ssh/config', 'evil.ts']), -1);
    // An attached value is its own: the script follows.
    assert.equal(scriptIndex('deno', ['run', '--some-new-option=x', 'server.ts']), 2);
    assert.equal(scriptIndex('bun', ['--inspect=127.0.0.1:9229', 'server.ts']), 1);
  });
});

describe("collecting the launchers' caches of unused identities (issue 46)", () => {
  const DAY = 86_400_000;
  let dir: string;
  let cacheRoot: string;
  let registry: string;
  beforeEach(() => {
    dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-collect-')));
    cacheRoot = path.join(dir, 'sandbox');
    registry = path.join(cacheRoot, 'mounts');
    fs.mkdirSync(registry, { recursive: true });
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  /** An identity's cache with one file of `bytes` under npm/, last used `daysAgo`. */
  const identity = (id: string, daysAgo: number, bytes = 1000) => {
    const folder = path.join(cacheRoot, id);
    fs.mkdirSync(path.join(folder, 'npm', '_cacache'), { recursive: true });
    fs.writeFileSync(path.join(folder, 'npm', '_cacache', 'content'), Buffer.alloc(bytes, 1));
    const at = new Date(Date.now() - daysAgo * DAY);
    fs.utimesSync(folder, at, at);
    return folder;
  };

  it('removes an identity unused for CACHE_UNUSED_DAYS, keeps a recent one and one a live launch claims, and never follows a link planted in it', async () => {
    const outside = path.join(dir, 'outside');
    fs.mkdirSync(path.join(outside, 'deep'), { recursive: true });
    fs.writeFileSync(path.join(outside, 'deep', 'keep.txt'), 'the person');
    fs.writeFileSync(path.join(outside, 'file.txt'), 'the person');
    const old = identity('0123456789abcdef', CACHE_UNUSED_DAYS + 1);
    // What a server could plant in its own cache: links to a folder and a file outside, in place of a folder.
    fs.symlinkSync(outside, path.join(old, 'npm', '_npx'));
    fs.symlinkSync(path.join(outside, 'file.txt'), path.join(old, 'npm', '_cacache', 'index'));
    fs.symlinkSync(path.join(outside, 'deep'), path.join(old, 'npm', '_cacache', 'deep'));
    const recent = identity('1111111111111111', 1);
    const held = identity('2222222222222222', CACHE_UNUSED_DAYS + 5);
    const claim = claimMountPoints([held], registry);
    // Not an identity's name: never touched.
    fs.mkdirSync(path.join(cacheRoot, 'other'));
    fs.utimesSync(path.join(cacheRoot, 'other'), new Date(0), new Date(0));

    assert.deepEqual(await collectCaches(cacheRoot, registry), ['0123456789abcdef']);
    assert.ok(!fs.existsSync(old));
    assert.ok(fs.existsSync(recent) && fs.existsSync(held) && fs.existsSync(path.join(cacheRoot, 'other')));
    assert.equal(fs.readFileSync(path.join(outside, 'deep', 'keep.txt'), 'utf8'), 'the person');
    assert.equal(fs.readFileSync(path.join(outside, 'file.txt'), 'utf8'), 'the person');
    assert.deepEqual(fs.readdirSync(cacheRoot).sort(), ['1111111111111111', '2222222222222222', 'mounts', 'other']);

    // Its launch over (the claim dropped), the held one goes at the next collection.
    fs.rmSync(claim);
    assert.deepEqual(await collectCaches(cacheRoot, registry), ['2222222222222222']);
  });

  it('keeps the total under the size by least recently used; what a removal cut short left is finished', async () => {
    identity('aaaaaaaaaaaaaaaa', 3, 200_000);
    identity('bbbbbbbbbbbbbbbb', 1, 200_000);
    identity('cccccccccccccccc', 2, 200_000);
    const halfRemoved = path.join(cacheRoot, '.removing-dddddddddddddddd-1a2b');
    fs.mkdirSync(path.join(halfRemoved, 'npm'), { recursive: true });
    // Room for two: the least recently used goes.
    assert.deepEqual(await collectCaches(cacheRoot, registry, { maxBytes: 450_000 }), ['aaaaaaaaaaaaaaaa']);
    assert.deepEqual(fs.readdirSync(cacheRoot).sort(), ['bbbbbbbbbbbbbbbb', 'cccccccccccccccc', 'mounts']);
  });

  it('collects at most once per COLLECT_EVERY_MS', () => {
    const now = Date.now();
    assert.equal(collectionDue(registry, now), true);
    assert.equal(collectionDue(registry, now + 1000), false);
    assert.equal(collectionDue(registry, now + COLLECT_EVERY_MS + 1), true);
  });
});
