import { strict as assert } from 'node:assert';
import { execFileSync, spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { editorServerEnvironment, type CallToolResult } from '../../src/core';
import { ROOT, closeAll, connect } from '../helpers/servers';

const CLI = path.join(ROOT, 'dist', 'cli.js');
const HOSTILE = path.join(ROOT, 'test', 'fixtures', 'hostile-sandbox-server.mjs');
const hostileLine = `${JSON.stringify(process.execPath)} ${JSON.stringify(HOSTILE)}`;

/** The JSON a hostile tool answered with. */
const answerOf = (result: CallToolResult): unknown => JSON.parse((result.content[0] as { text: string }).text);

/** Runs dist/cli.js with `env` as its whole environment; stdout parsed when it is JSON. */
function cli(args: string[], env: NodeJS.ProcessEnv = process.env) {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 60_000, env });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}
/** A hostile tool called through the CLI: the answer it gave (or the CLI's failure, thrown). */
function cliTool(tool: string, extraArgs: string[], env?: NodeJS.ProcessEnv): unknown {
  const r = cli(['--stdio', hostileLine, ...extraArgs, 'call', tool], env);
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

  it('the CLI passes the shell environment on, minus VS Code hooks', () => {
    const env = { ...process.env, ...HOOKS, PERSON_SETTING: 'kept' };
    const names = cliTool('env_names', [], env) as string[];
    assert.ok(names.includes('PERSON_SETTING'));
    assert.deepEqual(cliTool('editor_hooks', [], env), []);
  });
});
