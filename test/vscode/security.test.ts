import { strict as assert } from 'node:assert';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { InputDefinition, LaunchSummary, ServerHandle } from '../../src/core';
import type { ConsentAnswer } from '../../src/vscode/common/answers';
import { consentDetail } from '../../src/vscode/policy/consent';
import type { HostUi } from '../../src/vscode/ui/hostUi';
import type { TreeNode } from '../../src/vscode/tree/nodes';
import { env } from './harnessEnv';
import { api, repoRoot, running, serverScript, setServers, waitFor } from './helpers';

const echoServer = () => path.join(repoRoot(), 'test', 'fixtures', 'secret-echo-server.mjs');
const everything = () => ({ command: 'node', args: [serverScript('server-everything'), 'stdio'] });
const unique = () => randomBytes(6).toString('hex');
const config = () => vscode.workspace.getConfiguration('mcpHost');
const text = (r: { content: Array<{ type: string; text?: string }> }) => r.content.map((c) => c.text ?? '').join('\n');

function filesUnder(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? filesUnder(path.join(dir, e.name)) : [path.join(dir, e.name)]));
}
/** Everything VS Code wrote to disk as logs in this run, output channels included. */
const writtenLogs = () =>
  filesUnder(env.vscodeLogs)
    .map((f) => fs.readFileSync(f, 'utf8'))
    .join('\n');

/** test/fixtures/http-server.mjs on a loopback port; `requests()` is what it saw. */
async function httpFixture(): Promise<{
  url: string;
  requests: () => Promise<Array<{ headers: Record<string, string> }>>;
  child: ChildProcess;
}> {
  const child = spawn(process.execPath, [path.join(repoRoot(), 'test', 'fixtures', 'http-server.mjs'), 'json'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /LISTENING (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.on('exit', (code) => reject(new Error(`http fixture exited with ${code}`)));
  });
  const base = `http://127.0.0.1:${port}`;
  return {
    url: `${base}/mcp`,
    child,
    requests: async () =>
      ((await (await fetch(`${base}/_requests`)).json()) as Array<{ headers?: Record<string, string> }>)
        .filter((r) => r.headers)
        .map((r) => ({ headers: r.headers! })),
  };
}

describe('security: secrets, consent and Workspace Trust in a real VS Code', function () {
  this.timeout(120_000);
  let saved: {
    input: HostUi['askInput'];
    reuse: HostUi['allowInputReuse'];
    consent: HostUi['allowLaunch'];
    confirm: HostUi['confirmTool'];
  };

  before(async () => {
    const a = await api();
    saved = { input: a.ui.askInput, reuse: a.ui.allowInputReuse, consent: a.ui.allowLaunch, confirm: a.ui.confirmTool };
  });
  afterEach(async () => {
    const a = await api();
    a.host.workspaceTrusted = () => vscode.workspace.isTrusted;
    a.ui.askInput = saved.input;
    a.ui.allowInputReuse = saved.reuse;
    a.ui.allowLaunch = saved.consent;
    a.ui.confirmTool = saved.confirm;
    await setServers(undefined);
    await setServers(undefined, vscode.ConfigurationTarget.Workspace);
    await config().update('inputs', undefined, vscode.ConfigurationTarget.Global);
    await config().update('inputs', undefined, vscode.ConfigurationTarget.Workspace);
    await config().update('trace', undefined, vscode.ConfigurationTarget.Global);
  });

  it('keeps ${input} and ${env} values out of the server log, the verbose trace and errors, on every path', async () => {
    const a = await api();
    const inputSecret = `input-secret-${unique()}`;
    const envSecret = `env-secret-${unique()}`;
    process.env.MCP_HOST_TEST_ENV_SECRET = envSecret;
    const id = `echo-${unique()}`;
    a.ui.askInput = async () => inputSecret;
    a.ui.allowInputReuse = async () => 'allow';
    await config().update('trace', 'verbose', vscode.ConfigurationTarget.Global);
    await setServers({
      'secret-echo': {
        command: 'node',
        args: [echoServer()],
        env: { MCP_HOST_ECHO_VARS: 'FROM_INPUT,FROM_ENV', FROM_INPUT: `\${input:${id}}`, FROM_ENV: '${env:MCP_HOST_TEST_ENV_SECRET}' },
      },
      // Fails to start with the secret in its error message, which the tree shows.
      'secret-in-error': { command: `no-such-command-\${input:${id}}` },
    });
    const s = await running(a, 'secret-echo');
    // The server really has both values (so the assertions below can fail)...
    const { result } = await s.rawClient!.callTool('leak', { typedByThePerson: inputSecret });
    assert.ok(text(result).includes(inputSecret) && text(result).includes(envSecret), text(result));
    // ...and an error from it carries them too.
    await assert.rejects(s.rawClient!.callTool('fail', {}), (e: Error) => e.message.includes(envSecret));

    const logs = await waitFor(() => {
      const t = writtenLogs();
      const expected = [
        'stderr leaks *** | ***',
        'notification leaks *** | ***',
        '"structured":["***","***"]',
        'result leaks *** | ***',
        'error leaks *** | ***',
        '"typedByThePerson": "***"',
      ];
      return expected.every((e) => t.includes(e)) && t;
    }, 'the redacted lines in the log files on disk');
    assert.ok(!logs.includes(inputSecret), 'the ${input} value is in a log file');
    assert.ok(!logs.includes(envSecret), 'the ${env} value is in a log file');

    const failed = await waitFor(() => {
      const h = a.host.registry.get('secret-in-error');
      return h?.state.kind === 'error' && h;
    }, 'the server that cannot start');
    const item = a.tree.getTreeItem({ kind: 'server', server: failed });
    assert.ok((failed.state as { message: string }).message.includes(inputSecret), 'the raw error names the command');
    assert.ok(!String(item.description).includes(inputSecret), String(item.description));
    assert.ok(!(item.tooltip as vscode.MarkdownString).value.includes(inputSecret));
    assert.equal(a.host.redact(`x ${inputSecret} y`), 'x *** y', 'notifications pass the same redactor');
  });

  it('asks before a workspace HTTP server gets secrets, and never hands it a secret stored for another server', async () => {
    const a = await api();
    const fixture = await httpFixture();
    try {
      const id = `shared-${unique()}`;
      const ownerValue = `owner-value-${unique()}`;
      process.env.MCP_HOST_TEST_ENV_SECRET = `env-secret-${unique()}`;
      a.ui.askInput = async () => ownerValue;
      // A user server of the person's own asks first and owns the stored value.
      await setServers({ owner: { command: 'node', args: [echoServer()], env: { MCP_HOST_ECHO_VARS: 'T', T: `\${input:${id}}` } } });
      await running(a, 'owner');

      const consents: LaunchSummary[] = [];
      a.ui.allowLaunch = async (launch) => {
        consents.push(launch);
        return 'allow';
      };
      const reuse: Array<[string, string, string]> = [];
      a.ui.allowInputReuse = async (server, inputId, firstGivenTo) => {
        reuse.push([server, inputId, firstGivenTo]);
        return 'cancel';
      };
      const headers = { Authorization: `Bearer \${input:${id}}`, 'X-Env': '${env:MCP_HOST_TEST_ENV_SECRET}' };
      await setServers({ remote: { type: 'http', url: fixture.url, headers } }, vscode.ConfigurationTarget.Workspace);
      await waitFor(() => a.host.registry.get('remote')?.state.kind === 'error', 'the refused secret to stop the start');
      assert.match((a.host.registry.get('remote')!.state as { message: string }).message, /not allowed for this server/);
      assert.equal(consents.length, 1, 'a workspace HTTP server asks for consent');
      assert.equal(consents[0].url, fixture.url);
      assert.deepEqual(
        consents[0].entries.map((e) => [e.name, e.sources]),
        [
          ['Authorization', [`\${input:${id}}`]],
          ['X-Env', ['${env:MCP_HOST_TEST_ENV_SECRET}']],
        ],
      );
      const detail = consentDetail(consents[0]);
      assert.ok(
        detail.includes(fixture.url) && detail.includes(`\${input:${id}}`) && detail.includes('${env:MCP_HOST_TEST_ENV_SECRET}'),
        detail,
      );
      assert.ok(!detail.includes(ownerValue) && !detail.includes(process.env.MCP_HOST_TEST_ENV_SECRET), detail);
      assert.deepEqual(
        reuse.map(([s, i]) => [s, i]),
        [['remote', id]],
      );
      assert.match(reuse[0][2], /"owner" in your user settings/);
      assert.deepEqual(await fixture.requests(), [], 'nothing reached the server');

      // Enter a New Value: this server gets its own value; the owner's stays the owner's.
      a.ui.allowInputReuse = async () => 'new';
      a.ui.askInput = async () => 'remote-own-value';
      await a.host.registry.get('remote')!.start();
      assert.equal(a.host.registry.get('remote')!.state.kind, 'running');
      const auth = (await fixture.requests()).map((r) => r.headers.authorization);
      assert.ok(auth.length > 0 && auth.every((h) => h === 'Bearer remote-own-value'), JSON.stringify(auth));
      assert.equal(consents.length, 1, 'consent is asked once per session');
      const owner = a.host.registry.get('owner')!;
      await owner.restart();
      const { result } = await owner.rawClient!.callTool('leak', {});
      assert.equal(text(result), `result leaks ${ownerValue}`, 'the owner keeps its own value');

      // A changed header asks for consent again.
      await setServers(
        { remote: { type: 'http', url: fixture.url, headers: { ...headers, 'X-More': 'x' } } },
        vscode.ConfigurationTarget.Workspace,
      );
      await waitFor(() => consents.length === 2, 'a changed header to ask again');
    } finally {
      fixture.child.kill();
    }
  });

  it('shows env (secrets masked) and cwd in the launch consent, says it waits for permission, and asks again when env changes', async () => {
    const a = await api();
    const asked: LaunchSummary[] = [];
    let answer: (a: 'always' | 'cancel') => void = () => undefined;
    a.ui.allowLaunch = (launch) => {
      asked.push(launch);
      return new Promise((resolve) => (answer = resolve));
    };
    const def = {
      ...everything(),
      env: { PYTHONPATH: '/repo/evil', API_TOKEN: 'literal-token-value', FROM_INPUT: '${input:nope}' },
      cwd: '${workspaceFolder}',
    };
    await setServers({ 'ws-env': def }, vscode.ConfigurationTarget.Workspace);
    await waitFor(() => asked.length === 1, 'the consent');
    const node: TreeNode = { kind: 'server', server: a.host.registry.get('ws-env')! };
    assert.equal(a.tree.getTreeItem(node).description, 'waiting for your permission');
    const detail = consentDetail(asked[0]);
    for (const shown of ['PYTHONPATH=/repo/evil', 'API_TOKEN=***', 'FROM_INPUT=${input:nope}', '${workspaceFolder}', 'server-everything'])
      assert.ok(detail.includes(shown), `${shown} in:\n${detail}`);
    assert.ok(!detail.includes('literal-token-value'), detail);
    a.ui.askInput = async () => 'value-for-nope';
    answer('always');
    await running(a, 'ws-env');
    await setServers({ 'ws-env': { ...def, env: { ...def.env, PYTHONPATH: '/repo/other' } } }, vscode.ConfigurationTarget.Workspace);
    await waitFor(() => asked.length === 2, 'a changed env to ask again');
    answer('cancel');
  });

  it('shows what a workspace server\'s settings loosen in its launch consent, asks again when they are added after "Always", and starts nothing when refused', async () => {
    const a = await api();
    const asked: LaunchSummary[] = [];
    let answer: ConsentAnswer = 'always';
    a.ui.allowLaunch = async (launch) => (asked.push(launch), answer);
    const confirmed: string[] = [];
    a.ui.confirmTool = async (_server, tool) => (confirmed.push(tool.name), 'once');
    const sum = async (h: ServerHandle) =>
      (
        await a.tools.call(
          h,
          h.tools.find((t) => t.name === 'get-sum')!,
          { a: 1, b: 2 },
        )
      )?.outcome;
    // Its own env, so no other suite's stored answer covers this launch.
    const def = { ...everything(), env: { MCP_HOST_GRANT_TEST: unique() } };
    const W = vscode.ConfigurationTarget.Workspace;
    await setServers({ 'ws-grant': def }, W);
    assert.equal(await sum(await running(a, 'ws-grant')), 'ok');
    assert.deepEqual(
      [asked.length, asked[0].grant, confirmed],
      [1, undefined, ['get-sum']],
      'allowed for good, loosening nothing: its tools ask',
    );

    // The same launch, now taking the language model and a tool without a question: the stored "Always" did not show that.
    answer = 'allow';
    await setServers({ 'ws-grant': { ...def, sampling: { mode: 'allow', maxTokensPerHour: 5000 }, autoApprove: ['get-sum'] } }, W);
    await waitFor(() => asked.length === 2, 'the launch consent again');
    const detail = consentDetail(asked[1]);
    for (const shown of [
      "This server's settings also loosen your policy:",
      'sampling.mode: "allow"',
      'sampling.models: []',
      'sampling.maxTokensPerHour: 5000',
      'autoApprove: ["get-sum"]',
    ]) {
      assert.ok(detail.includes(shown), `${shown} in:\n${detail}`);
    }
    const loosened = await running(a, 'ws-grant');
    assert.equal(await sum(loosened), 'ok');
    assert.deepEqual(confirmed, ['get-sum'], 'accepted, autoApprove applies');

    // Narrowing needs no question: sampling denied, the same tool auto-approved.
    await setServers({ 'ws-grant': { ...def, sampling: { mode: 'deny' }, autoApprove: ['get-sum'] } }, W);
    const narrowed = await waitFor(() => {
      const h = a.host.registry.get('ws-grant');
      return h !== loosened && h?.state.kind === 'running' && h;
    }, 'the narrowed definition to run');
    assert.equal(narrowed.definition.sampling.mode, 'deny');
    assert.equal(asked.length, 2, 'narrowing asked');

    // Refused: nothing starts, so nothing of what it asked for applies.
    answer = 'cancel';
    await setServers(
      {
        'ws-grant': {
          ...def,
          autoApprove: ['get-sum', 'echo'],
          trustAnnotations: true,
          sampling: { mode: 'allow', models: ['test-echo-large'] },
        },
      },
      W,
    );
    const refused = await waitFor(() => {
      const h = a.host.registry.get('ws-grant');
      return h !== narrowed && h?.state.kind === 'error' && h;
    }, 'the refused start');
    assert.match((refused.state as { message: string }).message, /starting was not allowed/);
    assert.equal(refused.client, undefined);
    assert.equal(asked.length, 3);
    const refusedDetail = consentDetail(asked[2]);
    for (const shown of [
      'autoApprove: ["echo","get-sum"]',
      'trustAnnotations: true',
      'sampling.models: ["test-echo-large"]',
      'no token or request limit',
    ]) {
      assert.ok(refusedDetail.includes(shown), `${shown} in:\n${refusedDetail}`);
    }

    // The person's own settings grant what they say, without a launch question.
    await setServers(undefined, W);
    await setServers({ 'user-grant': { ...def, autoApprove: ['get-sum'] } });
    assert.equal(await sum(await running(a, 'user-grant')), 'ok');
    assert.deepEqual([asked.length, confirmed], [3, ['get-sum']]);
  });

  it('does not let workspace settings shape the secret prompt of a user server', async () => {
    const a = await api();
    const id = `user-only-${unique()}`;
    const prompts: Array<InputDefinition | undefined> = [];
    a.ui.askInput = async (_id, definition) => {
      prompts.push(definition);
      return 'typed-by-the-person';
    };
    await config().update(
      'inputs',
      { [id]: { description: 'paste your GitHub password here', password: false, default: 'prefilled' } },
      vscode.ConfigurationTarget.Workspace,
    );
    await setServers({ mine: { command: 'node', args: [echoServer()], env: { T: `\${input:${id}}` } } });
    await running(a, 'mine');
    assert.deepEqual(prompts, [undefined], 'the workspace entry was used for a user server');

    const id2 = `user-described-${unique()}`;
    await config().update('inputs', { [id2]: { description: 'my own wording', password: true } }, vscode.ConfigurationTarget.Global);
    await config().update(
      'inputs',
      { [id2]: { description: 'paste your GitHub password here', password: false } },
      vscode.ConfigurationTarget.Workspace,
    );
    await setServers({ mine: { command: 'node', args: [echoServer()], env: { T: `\${input:${id2}}` } } });
    await waitFor(() => prompts.length === 2, 'the second prompt');
    assert.deepEqual(prompts[1], { description: 'my own wording', password: true });
    const pkg = vscode.extensions.all.find((e) => e.packageJSON.name === 'mcp-host')!.packageJSON;
    assert.ok(pkg.capabilities.untrustedWorkspaces.restrictedConfigurations.includes('mcpHost.inputs'));
  });

  it('closes the secret prompt of a start that is abandoned: the server stopped, or removed from the settings', async () => {
    const a = await api();
    for (const abandon of ['stop', 'remove'] as const) {
      const id = `abandoned-${abandon}-${unique()}`;
      let opened!: () => void;
      const asked = new Promise<void>((resolve) => (opened = resolve));
      let settled!: (value: string | undefined) => void;
      const closed = new Promise<string | undefined>((resolve) => (settled = resolve));
      // The real input box, watched: it resolves only when it closes.
      a.ui.askInput = (promptId, definition, token) => {
        const box = saved.input(promptId, definition, token);
        void box.then(settled);
        opened();
        return box;
      };
      await setServers({ waiting: { command: 'node', args: [echoServer()], env: { T: `\${input:${id}}` } } });
      await asked;
      if (abandon === 'stop') await a.host.registry.get('waiting')!.stop();
      else await setServers(undefined);
      assert.equal(
        await closed,
        undefined,
        `the input box closed with no value once the server was ${abandon === 'stop' ? 'stopped' : 'removed'}`,
      );
      if (abandon === 'stop') assert.equal(a.host.registry.get('waiting')?.state.kind, 'stopped');
      else await waitFor(() => !a.host.registry.get('waiting'), 'the server to be gone from the registry');
    }
  });

  it('says "blocked: this workspace is not trusted" with the trust action in Restricted Mode, whatever else fails', async () => {
    // The harness runs with Workspace Trust disabled; the host's trust flag plays Restricted Mode.
    const a = await api();
    a.host.workspaceTrusted = () => false;
    a.ui.askInput = async () => undefined;
    await setServers({ 'user-needs-input': { command: 'node', args: [echoServer()], env: { T: `\${input:never-${unique()}}` } } });
    // Its own env, so the consent given at the end is not the one another suite's server needs.
    await setServers({ 'ws-blocked': { ...everything(), env: { MCP_HOST_BLOCKED_TEST: '1' } } }, vscode.ConfigurationTarget.Workspace);
    await a.host.reload();
    await waitFor(() => a.host.registry.get('user-needs-input')?.state.kind === 'error', 'the user server to fail on its input');
    const nodes = a.tree.getChildren() as TreeNode[];
    const blocked = nodes.filter((n) => n.kind === 'blocked');
    assert.deepEqual(
      blocked.map((n) => n.kind === 'blocked' && n.name),
      ['ws-blocked'],
    );
    const item = a.tree.getTreeItem(blocked[0]);
    assert.equal(item.description, 'blocked: this workspace is not trusted');
    assert.equal(item.command?.command, 'workbench.trust.manage');
    assert.ok(!nodes.some((n) => n.kind === 'invalid'), 'no "invalid" entry for it');
    assert.equal(a.host.registry.get('ws-blocked'), undefined, 'it is not started');

    a.host.workspaceTrusted = () => true;
    a.ui.allowLaunch = async () => 'allow';
    await a.host.reload();
    await running(a, 'ws-blocked');
    assert.ok(!(a.tree.getChildren() as TreeNode[]).some((n) => n.kind === 'blocked'));
  });
});
