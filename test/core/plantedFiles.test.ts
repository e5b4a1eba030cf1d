import { strict as assert } from 'node:assert';
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ROOT } from '../helpers/servers';

/**
 * What a cloned repository can plant where `mcp-host` keeps its audit and pins (the paths the docs
 * recommend: `.mcp/audit.jsonl`, `.vscode/mcp-pins/NAME.json`): links to the person's files, links
 * in the folders on the way, FIFOs, links to devices, folders, hard links. Each run is the shipped
 * CLI in the planted repository, against the changing fixture server, which logs every call it
 * gets; each test says what the server received and what the planted targets hold afterwards.
 */
describe('mcp-host and files a cloned repository planted (dist/cli.js)', function () {
  this.timeout(60_000);
  const FIXTURE = path.join(ROOT, 'test', 'fixtures', 'changing-server.mjs');
  const server = `${JSON.stringify(process.execPath)} ${JSON.stringify(FIXTURE)}`;
  const BASHRC = '# my bashrc\nexport PATH="$HOME/bin:$PATH"\n';
  let dir: string;
  let repo: string;
  let home: string;
  let calls: string;
  let holders: ChildProcess[] = [];

  /** The CLI run in the repository; a run that does not end is stopped at 40 s (and then fails the test: status null). */
  const cli = (...args: string[]) => {
    const r = spawnSync(process.execPath, [path.join(ROOT, 'dist', 'cli.js'), ...args], {
      cwd: repo,
      encoding: 'utf8',
      timeout: 40_000,
      env: { ...process.env, CHANGING_SERVER_CALL_LOG: calls },
    });
    return { code: r.status, stdout: r.stdout, stderr: r.stderr };
  };
  const withServer = (...args: string[]) => cli('--stdio', server, ...args);
  /** What reached the server: the name of each tools/call. */
  const received = (): string[] =>
    fs.existsSync(calls)
      ? fs
          .readFileSync(calls, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => (JSON.parse(l) as { name: string }).name)
      : [];

  before(() => {
    execFileSync(process.execPath, [path.join(ROOT, 'esbuild.js')], { cwd: ROOT });
  });
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-planted-'));
    repo = path.join(dir, 'repo');
    home = path.join(dir, 'home');
    calls = path.join(dir, 'calls.jsonl');
    fs.mkdirSync(path.join(repo, '.mcp'), { recursive: true });
    fs.mkdirSync(path.join(repo, '.vscode', 'mcp-pins'), { recursive: true });
    fs.mkdirSync(home);
    fs.writeFileSync(path.join(home, '.bashrc'), BASHRC);
  });
  afterEach(() => {
    for (const holder of holders) holder.kill('SIGKILL');
    holders = [];
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('--audit through a link to ~/.bashrc writes nothing there, names the link, and the call still runs', () => {
    fs.symlinkSync(path.join(home, '.bashrc'), path.join(repo, '.mcp', 'audit.jsonl'));
    const r = withServer('--audit', '.mcp/audit.jsonl', 'call', 'steady', '{}');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /warning: the audit log could not be written: \.mcp\/audit\.jsonl: is a symbolic link/);
    assert.equal(fs.readFileSync(path.join(home, '.bashrc'), 'utf8'), BASHRC, 'the link target is unchanged');
    assert.deepEqual(received(), ['steady']);
  });

  it('--audit below a folder that is a link (.mcp → ~) writes nothing in that folder', () => {
    fs.rmSync(path.join(repo, '.mcp'), { recursive: true });
    fs.symlinkSync(home, path.join(repo, '.mcp'));
    fs.writeFileSync(path.join(home, 'audit.jsonl'), 'precious\n');
    const r = withServer('--audit', '.mcp/audit.jsonl', 'call', 'steady', '{}');
    assert.match(r.stderr, /warning: the audit log could not be written: \.mcp: is a symbolic link, on the way to \.mcp\/audit\.jsonl/);
    assert.equal(fs.readFileSync(path.join(home, 'audit.jsonl'), 'utf8'), 'precious\n');
    assert.deepEqual(fs.readdirSync(home).sort(), ['.bashrc', 'audit.jsonl'], 'no lock was made there either');
  });

  it('--audit to a link to /dev/null loses no record silently: the write fails and audit verify names the link', () => {
    fs.symlinkSync('/dev/null', path.join(repo, '.mcp', 'audit.jsonl'));
    const r = withServer('--audit', '.mcp/audit.jsonl', 'call', 'steady', '{}');
    assert.match(r.stderr, /the audit log could not be written: \.mcp\/audit\.jsonl: is a symbolic link/);
    const verify = cli('audit', 'verify', '.mcp/audit.jsonl');
    assert.equal(verify.code, 1, verify.stdout);
    assert.doesNotMatch(verify.stdout, /chain intact/);
    assert.match(verify.stderr, /\.mcp\/audit\.jsonl: is a symbolic link/);
  });

  it('an audit log that is a hard link to another file, a folder or a FIFO is not written', () => {
    fs.linkSync(path.join(home, '.bashrc'), path.join(repo, '.mcp', 'hard.jsonl'));
    const hard = withServer('--audit', '.mcp/hard.jsonl', 'call', 'steady', '{}');
    assert.match(hard.stderr, /\.mcp\/hard\.jsonl: has 2 names \(hard links\)/);
    assert.equal(fs.readFileSync(path.join(home, '.bashrc'), 'utf8'), BASHRC);
    fs.mkdirSync(path.join(repo, '.mcp', 'dir.jsonl'));
    assert.match(withServer('--audit', '.mcp/dir.jsonl', 'call', 'steady', '{}').stderr, /\.mcp\/dir\.jsonl: is a folder/);
    execFileSync('mkfifo', [path.join(repo, '.mcp', 'fifo.jsonl')]);
    const fifo = withServer('--audit', '.mcp/fifo.jsonl', 'call', 'steady', '{}');
    assert.equal(fifo.code, 0, fifo.stderr);
    assert.match(fifo.stderr, /\.mcp\/fifo\.jsonl: is a FIFO/);
    assert.deepEqual(received(), ['steady', 'steady', 'steady']);
  });

  it('a dangling audit.jsonl.lock link, a lock that is a folder or a FIFO: refused at once, and the CLI exits', () => {
    const lock = path.join(repo, '.mcp', 'audit.jsonl.lock');
    fs.symlinkSync(path.join(dir, 'nowhere', 'lock'), lock);
    const dangling = withServer('--audit', '.mcp/audit.jsonl', 'call', 'steady', '{}');
    assert.equal(dangling.code, 0, `the CLI exited (status ${dangling.code}): ${dangling.stderr}`);
    assert.match(dangling.stderr, /\.mcp\/audit\.jsonl\.lock: is a symbolic link, not a lock MCP Host took: remove it/);
    assert.equal(fs.existsSync(path.join(dir, 'nowhere')), false, 'nothing was made at the link target');
    fs.rmSync(lock);
    fs.mkdirSync(lock);
    assert.match(withServer('--audit', '.mcp/audit.jsonl', 'call', 'steady', '{}').stderr, /audit\.jsonl\.lock: is a folder, not a lock/);
    fs.rmdirSync(lock);
    execFileSync('mkfifo', [lock]);
    const fifo = withServer('--audit', '.mcp/audit.jsonl', 'call', 'steady', '{}');
    assert.equal(fifo.code, 0, fifo.stderr);
    assert.match(fifo.stderr, /audit\.jsonl\.lock: is a FIFO, not a lock/);
  });

  it('a lock another live process keeps holding: the CLI backs off, gives up with a message, and exits', () => {
    const lock = path.join(repo, '.mcp', 'audit.jsonl.lock');
    // A holder that is alive on this host and keeps its lock fresh, as no real writer does for more than milliseconds.
    const holder = spawn(
      process.execPath,
      [
        '-e',
        `const fs = require('fs');
         fs.writeFileSync(${JSON.stringify(lock)}, JSON.stringify({ pid: process.pid, host: require('os').hostname(), time: new Date().toISOString() }));
         setInterval(() => fs.utimesSync(${JSON.stringify(lock)}, new Date(), new Date()), 200);
         console.log('holding');`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    holders.push(holder);
    execFileSync(process.execPath, ['-e', `while (!require('fs').existsSync(${JSON.stringify(lock)})) {}`], { timeout: 10_000 });
    const r = withServer('--audit', '.mcp/audit.jsonl', 'call', 'steady', '{}');
    assert.equal(r.code, 0, `the CLI exited (status ${r.code}): ${r.stderr}`);
    assert.match(r.stderr, /the audit log is locked by another writer \(pid \d+ on .* since .*\); gave up after 10 s/);
    assert.deepEqual(received(), ['steady']);
  });

  it('pin through a link, or below a folder that is one, truncates nothing and writes nothing', () => {
    fs.symlinkSync(path.join(home, '.bashrc'), path.join(repo, '.vscode', 'mcp-pins', 'srv.json'));
    const link = withServer('pin', '.vscode/mcp-pins/srv.json');
    assert.equal(link.code, 1);
    assert.match(link.stderr, /pin: \.vscode\/mcp-pins\/srv\.json: is a symbolic link.*; nothing was written/);
    assert.equal(fs.readFileSync(path.join(home, '.bashrc'), 'utf8'), BASHRC);

    // `.vscode/mcp-pins` → the editor's settings folder: `pin .vscode/mcp-pins/settings.json` would replace the person's settings.
    const settings = path.join(home, '.config', 'Code', 'User');
    fs.mkdirSync(settings, { recursive: true });
    fs.writeFileSync(path.join(settings, 'settings.json'), '{"mine": true}\n');
    fs.rmSync(path.join(repo, '.vscode', 'mcp-pins'), { recursive: true });
    fs.symlinkSync(settings, path.join(repo, '.vscode', 'mcp-pins'));
    const parent = withServer('pin', '.vscode/mcp-pins/settings.json');
    assert.equal(parent.code, 1);
    assert.match(parent.stderr, /pin: \.vscode\/mcp-pins: is a symbolic link, on the way to \.vscode\/mcp-pins\/settings\.json/);
    assert.equal(fs.readFileSync(path.join(settings, 'settings.json'), 'utf8'), '{"mine": true}\n');
    // The same below the folder spelt with `..`: `sub/..` is checked as it is walked.
    fs.symlinkSync(settings, path.join(repo, 'sub'));
    assert.match(withServer('pin', 'sub/../sub/settings.json').stderr, /sub: is a symbolic link/);
    assert.equal(fs.readFileSync(path.join(settings, 'settings.json'), 'utf8'), '{"mine": true}\n');
  });

  it('pin into a hard link of another file is refused; into a regular file it rewrites it whole', () => {
    fs.linkSync(path.join(home, '.bashrc'), path.join(repo, '.vscode', 'mcp-pins', 'srv.json'));
    assert.match(withServer('pin', '.vscode/mcp-pins/srv.json').stderr, /has 2 names \(hard links\)/);
    assert.equal(fs.readFileSync(path.join(home, '.bashrc'), 'utf8'), BASHRC);
    const own = path.join(repo, '.vscode', 'mcp-pins', 'own.json');
    fs.writeFileSync(own, 'x'.repeat(100_000));
    assert.equal(withServer('pin', '.vscode/mcp-pins/own.json').code, 0);
    assert.equal(JSON.parse(fs.readFileSync(own, 'utf8')).version, 1, 'the old, longer text is gone');
  });

  it('--pinned of a link to /dev/zero, a FIFO, a folder or a file over the limit exits 2 before the server starts', () => {
    const lock = path.join(repo, '.vscode', 'mcp-pins', 'srv.json');
    const cases: Array<[() => void, RegExp]> = [
      [() => fs.symlinkSync('/dev/zero', lock), /is a symbolic link/],
      [() => execFileSync('mkfifo', [lock]), /is a FIFO, not a regular file/],
      [() => fs.mkdirSync(lock), /is a folder, not a regular file/],
      [
        () => {
          fs.writeFileSync(lock, '');
          fs.truncateSync(lock, 64 * 1024 * 1024);
        },
        /is 67108864 bytes, over the 8388608 MCP Host reads of it/,
      ],
    ];
    for (const [plant, message] of cases) {
      plant();
      const r = withServer('--pinned', '.vscode/mcp-pins/srv.json', 'call', 'steady', '{}');
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, new RegExp(`--pinned: \\.vscode/mcp-pins/srv\\.json: ${message.source}`));
      fs.rmSync(lock, { recursive: true });
    }
    assert.deepEqual(received(), []);
  });

  it('--audit-key through a link is refused, and neither read nor created at its target', () => {
    fs.writeFileSync(path.join(home, 'known.key'), `${'0'.repeat(64)}\n`);
    fs.symlinkSync(path.join(home, 'known.key'), path.join(repo, '.mcp', 'audit.key'));
    const r = withServer('--audit', '.mcp/audit.jsonl', '--audit-key', '.mcp/audit.key', 'call', 'steady', '{}');
    assert.equal(r.code, 2);
    assert.match(r.stderr, /error: \.mcp\/audit\.key: is a symbolic link/);
    fs.rmSync(path.join(repo, '.mcp', 'audit.key'));
    fs.symlinkSync(path.join(home, 'new.key'), path.join(repo, '.mcp', 'audit.key'));
    assert.equal(withServer('--audit', '.mcp/audit.jsonl', '--audit-key', '.mcp/audit.key', 'call', 'steady', '{}').code, 2);
    assert.equal(fs.existsSync(path.join(home, 'new.key')), false);
    assert.deepEqual(received(), []);
  });
});
