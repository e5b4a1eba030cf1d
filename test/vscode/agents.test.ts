import { strict as assert } from 'node:assert';
import { execFile, execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { AgentQuestion } from '../../src/vscode/common/answers';
import type { SetupUi } from '../../src/vscode/ui/setupUi';
import { api, repoRoot, setServers, waitFor } from './helpers';

const run = (command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }) =>
  new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
    execFile(command, args, { ...options, timeout: 120_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    ),
  );
const upstream = (log: string) => ({
  command: 'node',
  args: [path.join(repoRoot(), 'test', 'fixtures', 'gateway-upstream.mjs')],
  env: { GATEWAY_UPSTREAM_CALL_LOG: log },
  tools: { deny: ['remove'] },
});

describe('Connect an Agent', function () {
  this.timeout(300_000);
  let bin: string;
  let node22: string;
  let restoreSetup: SetupUi | undefined;
  let restoreAsk: ((q: AgentQuestion) => Promise<'allow' | 'cancel'>) | undefined;

  before(function () {
    // Claude Code and the Inspector from npm, once (test/harness/install-agents.sh); the Inspector needs Node 22.
    this.timeout(15 * 60_000);
    const sh = (script: string) =>
      execFileSync('bash', [path.join(repoRoot(), 'test', 'harness', script)], { encoding: 'utf8', timeout: 14 * 60_000 }).trim();
    bin = sh('install-agents.sh');
    node22 = sh('install-node22.sh');
  });
  /** What the test makes in the workspace folder: Connect an Agent's .mcp.json, the Inspector's config, the calls' log, and `.claude/` (Claude Code writes its project settings there). */
  let made: string[] = [];
  after(async () => {
    // Only what this suite made, also when a test failed halfway: the next suites (the sandbox's nothing-left-behind check) meet the folder as it was.
    for (const file of made) rmSync(file, { recursive: true, force: true });
    const seam = await api();
    if (restoreSetup) seam.ui.setup = restoreSetup;
    if (restoreAsk) seam.ui.allowAgentRequest = restoreAsk;
    await setServers(undefined);
    // Also when the test failed half way: VS Code discovers a workspace's .mcp.json, and the next suites must not meet it.
    const folder = vscode.workspace.workspaceFolders![0].uri.fsPath;
    for (const file of ['.mcp.json', 'inspector.json', 'agent-calls.jsonl']) rmSync(path.join(folder, file), { force: true });
  });

  it("writes one entry into the project's .mcp.json; Claude Code connects through it; an agent's call is asked in the editor naming it, runs, and is audited as origin agent; Disconnect leaves the file byte for byte", async () => {
    const seam = await api();
    const folder = vscode.workspace.workspaceFolders![0].uri.fsPath;
    const calls = path.join(folder, 'agent-calls.jsonl');
    made = [calls, path.join(folder, '.mcp.json'), path.join(folder, 'inspector.json'), path.join(folder, '.claude')].filter(
      (p) => !existsSync(p),
    );
    await setServers({ notes: upstream(calls), files: upstream(calls) });
    await waitFor(() => seam.host.servers.filter((s) => s.state.kind === 'running').length === 2 && true, 'both servers to run');

    const mcpJson = path.join(folder, '.mcp.json');
    // Claude Code reads .mcp.json as strict JSON (no comments): the team's own entry, on one line of its own.
    const original = '{\n  "mcpServers": {\n    "other": { "command": "other-server" }\n  }\n}\n';
    writeFileSync(mcpJson, original);
    restoreSetup = seam.ui.setup;
    const notices: string[] = [];
    seam.ui.setup = {
      ...restoreSetup,
      pick: async (step, items) =>
        (step === 'agent'
          ? items.find((i) => (i as unknown as { id: string }).id === 'claude-code')
          : step === 'scope'
            ? items.find((i) => (i as unknown as { target: { id: string } }).target.id === 'mcp-json')
            : items[0]) as never,
      pickMany: async (_step, items) => [...items],
      notify: async (_kind, message) => void notices.push(String(message)) as never,
    };
    await vscode.commands.executeCommand('mcpHost.connectAgent');
    const written = readFileSync(mcpJson, 'utf8');
    assert.ok(written.startsWith('{\n  "mcpServers": {\n    "other": { "command": "other-server" },\n'), written);
    const entry = (JSON.parse(written) as { mcpServers: Record<string, { command: string; args: string[] }> }).mcpServers['mcp-host'];
    assert.equal(entry.command, path.join(homedir(), '.mcp-host', 'bin', 'mcp-host-relay'));
    assert.deepEqual(entry.args, ['mcp-json']);
    assert.ok(!/token|sock|127\.0\.0\.1/.test(written), 'the entry holds no secret and no address');
    assert.match(notices.join('\n'), /Claude Code.*notes, files/);

    // Claude Code starts a project's servers once approved (as its dialog would record it), then health-checks each.
    const claudeJson = path.join(homedir(), '.claude.json');
    const claudeConfig = existsSync(claudeJson) ? (JSON.parse(readFileSync(claudeJson, 'utf8')) as Record<string, unknown>) : {};
    // Claude Code keys a project by its git root when there is one (here the repository's): every folder up from the workspace.
    const approved = { hasTrustDialogAccepted: true, enabledMcpjsonServers: ['mcp-host'] };
    // (and by the main worktree's when the repository is a git worktree).
    const folders = folder.split(path.sep).map((_, i, parts) => parts.slice(0, i + 1).join(path.sep) || path.sep);
    try {
      const common = execFileSync('git', ['rev-parse', '--path-format=absolute', '--git-common-dir'], {
        cwd: folder,
        encoding: 'utf8',
      }).trim();
      folders.push(path.dirname(common));
    } catch {
      // Not in a repository: the folder itself is the project.
    }
    writeFileSync(claudeJson, JSON.stringify({ ...claudeConfig, projects: Object.fromEntries(folders.map((f) => [f, approved])) }));
    const env = { PATH: process.env.PATH, HOME: homedir(), TMPDIR: process.env.TMPDIR };
    const listed = await run(path.join(bin, 'claude'), ['mcp', 'list'], { cwd: folder, env });
    assert.match(listed.stdout, /mcp-host: .*mcp-host-relay mcp-json - ✔ Connected/, listed.stdout + listed.stderr);
    assert.match(listed.stdout, /other: other-server/, 'the team’s own entry is still there');

    // The MCP Inspector's CLI through the same entry: its call is asked in the editor, naming the agent.
    const questions: AgentQuestion[] = [];
    restoreAsk = seam.ui.allowAgentRequest;
    seam.ui.allowAgentRequest = async (q) => {
      questions.push(q);
      return 'allow';
    };
    const inspector = path.join(folder, 'inspector.json');
    writeFileSync(inspector, JSON.stringify({ mcpServers: { gate: entry } }));
    const call = (text: string, tool = 'notes__echo') =>
      run(
        node22,
        [
          path.join(bin, 'mcp-inspector'),
          '--cli',
          '--config',
          inspector,
          '--server',
          'gate',
          '--method',
          'tools/call',
          '--tool-name',
          tool,
          '--tool-arg',
          `text=${text}`,
        ],
        { cwd: folder, env: { ...env, MCP_INSPECTOR_SECRET_STORE: 'memory' } },
      );
    const first = await call('first');
    assert.equal(first.code, 0, first.stdout + first.stderr);
    assert.match(first.stdout, /"text": "first"/);
    assert.equal(questions.length, 1);
    assert.equal(questions[0].server, 'notes');
    assert.match(questions[0].agent, /inspector/);
    assert.deepEqual(
      questions[0].reasons.map((r) => r.kind),
      ['firstUse'],
    );
    const second = await call('second');
    assert.match(second.stdout, /"text": "second"/);
    assert.equal(questions.length, 1, 'the agent’s use of the server is remembered');
    // A secret in an agent's arguments reaches the server as sent; the editor's history keeps it masked, as the audit does.
    const awsKey = 'AKIA' + 'IOSFODNN7EXAMPLE';
    const third = await call(`deploy with ${awsKey}`);
    assert.equal(third.code, 0, third.stdout + third.stderr);
    // Refused in the editor: nothing reaches the server.
    seam.ui.allowAgentRequest = async (q) => {
      questions.push(q);
      return 'cancel';
    };
    const refused = await call('never', 'files__echo');
    assert.match(refused.stdout, /the person refused it/);
    assert.deepEqual(
      readFileSync(calls, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => (JSON.parse(l) as { arguments: { text: string } }).arguments.text),
      ['first', 'second', `deploy with ${awsKey}`],
    );
    await seam.host.auditWritten();
    const records = readFileSync(seam.host.auditFile, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map(
        (l) =>
          JSON.parse(l) as {
            origin: string;
            method: string;
            name?: string;
            decision: string;
            server: { name: string };
            session?: { id: string; client?: { name: string; version: string } };
          },
      );
    const agentCalls = records.filter((r) => r.origin === 'agent' && r.method === 'tools/call');
    assert.deepEqual(
      agentCalls.map((r) => [r.server.name, r.name, r.decision]),
      [
        ['notes', 'echo', 'asked-allowed'],
        ['notes', 'echo', 'allowed'],
        ['notes', 'echo', 'allowed'],
        ['files', 'echo', 'asked-refused'],
      ],
    );
    assert.ok(agentCalls.every((r) => /inspector/.test(r.session?.client?.name ?? '')));

    // The editor's call history has each of the agent's calls beside the person's, newest first: the
    // agent, its client's name and version and its session as the audit names them, the outcome, how
    // long it took, and the arguments masked as the audit masks them.
    const history = await waitFor(() => {
      const byAgent = seam.tools.history.filter((r) => r.by === 'agent');
      return byAgent.length === 4 && byAgent;
    }, "the agent's four calls in the history");
    assert.deepEqual(
      history.map((r) => [r.server, r.tool, r.outcome]),
      [
        ['files', 'echo', 'refused'],
        ['notes', 'echo', 'ok'],
        ['notes', 'echo', 'ok'],
        ['notes', 'echo', 'ok'],
      ],
    );
    history.forEach((r, i) => {
      const audited = agentCalls[agentCalls.length - 1 - i];
      assert.match(r.agent?.label ?? '', /inspector/);
      assert.equal(r.agent?.client, `${audited.session!.client!.name} ${audited.session!.client!.version}`);
      assert.equal(r.agent?.session, audited.session!.id);
      assert.ok(typeof r.ms === 'number' && r.ms >= 0, `a duration: ${r.ms}`);
    });
    assert.deepEqual(
      history.map((r) => r.args),
      [{ text: 'never' }, { text: 'deploy with [masked: aws-access-key]' }, { text: 'second' }, { text: 'first' }],
    );
    assert.equal(history[1].masked, true);
    assert.ok(!JSON.stringify(seam.tools.history).includes(awsKey), 'the secret is nowhere in the history');

    // The Servers view lists the connected agents, and each live session: it appears when an agent
    // connects through the entry and goes when the agent exits.
    const roots = seam.tree.getChildren();
    const agentsNode = roots.find((n) => n.kind === 'agents');
    assert.ok(agentsNode);
    const liveSession = () =>
      seam.tree
        .getChildren(agentsNode)
        .flatMap((entryNode) => seam.tree.getChildren(entryNode))
        .find((n) => n.kind === 'agentSession' && n.session.client?.name === 'live-agent');
    assert.equal(liveSession(), undefined);
    const live = spawn(entry.command, entry.args, { cwd: folder, env, detached: true, stdio: ['pipe', 'pipe', 'inherit'] });
    try {
      let said = '';
      live.stdout.on('data', (chunk: Buffer) => (said += chunk.toString('utf8')));
      let exited = '';
      live.on('exit', (code, signal) => (exited = `exited ${code ?? signal}`));
      // A client's handshake: initialize, its answer, then notifications/initialized.
      const send = (message: Record<string, unknown>) => live.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
      send({
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'live-agent', version: '9.9.9' } },
      });
      await waitFor(() => said.includes('"id":1'), "the gateway's answer to initialize");
      send({ method: 'notifications/initialized' });
      const node = await waitFor(liveSession, 'the live session in the Servers view').catch((e: Error) => {
        const open = seam.agents.sessions().map((x) => `${x.via}:${x.client?.name}:${x.ended}`);
        const nodes = seam.tree.getChildren(agentsNode).map((n) => [n.kind, seam.tree.getChildren(n).length]);
        throw new Error(
          `${e.message}; the relay ${exited || 'runs'} and said: ${said}; sessions ${open.join(',')}; nodes ${JSON.stringify(nodes)}`,
        );
      });
      assert.match(String(seam.tree.getTreeItem(node).description), /live-agent 9\.9\.9/);
    } finally {
      process.kill(-live.pid!, 'SIGTERM');
    }
    await waitFor(() => liveSession() === undefined, 'the session to go when the agent exits');

    // Disconnect: the entry goes, and the file is byte for byte what it was.
    await vscode.commands.executeCommand('mcpHost.disconnectAgent');
    assert.equal(readFileSync(mcpJson, 'utf8'), original);
    const after = await run(path.join(bin, 'claude'), ['mcp', 'list'], { cwd: folder, env });
    assert.doesNotMatch(after.stdout, /mcp-host:/);
    // VS Code discovers the servers of a workspace's .mcp.json too: the next suites must not meet "other" (after() removes it).
  });
});
