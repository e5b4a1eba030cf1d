import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type * as Processes from '../../src/core/transport/processes';
import { treeKill } from '../../src/core/transport/processes';

/**
 * Loads src/core/transport/processes.ts, and cross-spawn and its helpers with it, as they load on
 * Windows: they read `process.platform` once, when loaded. Only Linux runs these tests; this is how
 * the Windows logic is exercised here.
 */
function asOnWindows<T>(env: Record<string, string>, use: (processes: typeof Processes) => T): T {
  const platform = Object.getOwnPropertyDescriptor(process, 'platform')!;
  const saved = { PATHEXT: process.env.PATHEXT, comspec: process.env.comspec };
  const forget = () => {
    for (const key of Object.keys(require.cache)) {
      if (/node_modules[\\/](cross-spawn|which|isexe|path-key|shebang-command)[\\/]|transport[\\/]processes\.ts$/.test(key))
        delete require.cache[key];
    }
  };
  Object.defineProperty(process, 'platform', { ...platform, value: 'win32' });
  // which reads PATHEXT from the process environment, not from the child's.
  process.env.PATHEXT = env.PATHEXT;
  delete process.env.comspec;
  forget();
  try {
    return use(require('../../src/core/transport/processes') as typeof Processes);
  } finally {
    Object.defineProperty(process, 'platform', platform);
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    forget();
  }
}

describe('Windows: commands and process trees (simulated on this platform)', () => {
  let bin: string;
  before(() => {
    bin = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-host-win-'));
    // What a Node install puts on a Windows PATH: npx as a .cmd shim beside node.exe.
    fs.writeFileSync(path.join(bin, 'npx.cmd'), '@ECHO off\r\nnode "%~dp0\\node_modules\\npm\\bin\\npx-cli.js" %*\r\n');
    fs.writeFileSync(path.join(bin, 'node.exe'), 'MZ');
  });
  after(() => fs.rmSync(bin, { recursive: true, force: true }));

  // Lower case, as file names here are case-sensitive and Windows' are not.
  const env = () => ({ Path: bin, PATHEXT: '.com;.exe;.bat;.cmd' });
  const launch = (command: string, args: string[]) =>
    asOnWindows(env(), ({ spawnServer }) => {
      const child = spawnServer(command, args, { env: env(), windowsHide: true });
      // There is no cmd.exe here: the spawn fails later, which is not what this test is about.
      child.on('error', () => undefined);
      return { file: child.spawnfile, args: child.spawnargs };
    });

  it('runs "npx" through cmd.exe once the PATH and PATHEXT find npx.cmd, every argument escaped', () => {
    const { file, args } = launch('npx', ['-y', '@modelcontextprotocol/server-everything', 'a&calc', 'x y', '%PATH%']);
    assert.equal(file, 'cmd.exe');
    assert.deepEqual(args.slice(0, 4), ['cmd.exe', '/d', '/s', '/c']);
    const line = args[4];
    assert.match(line, /^"npx /);
    // cmd.exe metacharacters are escaped with ^ inside quoted arguments: no second command, no expansion.
    assert.ok(line.includes('^"a^&calc^"'), line);
    assert.ok(line.includes('^"x^ y^"'), line);
    assert.ok(line.includes('^"^%PATH^%^"'), line);
  });

  it('starts an .exe found on the PATH directly, without cmd.exe', () => {
    const { file, args } = launch('node', ['server.js']);
    assert.equal(file, 'node');
    assert.deepEqual(args, ['node', 'server.js']);
  });

  it('ends the whole tree with taskkill /T /F on Windows, and signals the process group elsewhere', () => {
    assert.deepEqual(treeKill(4242, 'SIGTERM', 'win32'), { kind: 'command', command: 'taskkill', args: ['/T', '/F', '/PID', '4242'] });
    assert.deepEqual(treeKill(4242, 'SIGKILL', 'win32'), { kind: 'command', command: 'taskkill', args: ['/T', '/F', '/PID', '4242'] });
    assert.deepEqual(treeKill(4242, 'SIGTERM', 'linux'), { kind: 'group', pid: -4242, signal: 'SIGTERM' });
    assert.deepEqual(treeKill(4242, 'SIGKILL', 'darwin'), { kind: 'group', pid: -4242, signal: 'SIGKILL' });
  });
});
