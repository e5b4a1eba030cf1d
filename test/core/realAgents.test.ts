// Connect an Agent with the real agents: the entry Connect an Agent's core writes into each agent's own file
// (Copilot CLI's ~/.copilot/mcp-config.json, Codex's config.toml, Gemini CLI's .gemini/settings.json) runs MCP
// Host's launcher, whose relay reaches the editor's gateway (played here in plain Node, as test/core/agents.test.ts
// does); the agent, run offline with a temporary HOME, calls a tool, and the server and the audit say it came
// through the gate, from that agent. test/harness/install-agents.sh installs the agents from npm.
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { ServerHandle } from '../../src/core';
import { addEntry } from '../../src/core/agents/jsonEntry';
import { launcherPath, writeLauncher } from '../../src/core/agents/rendezvous';
import { ENTRY_NAME, entryValue, targetById, targetFile, type AgentTarget } from '../../src/core/agents/targets';
import { addTomlEntry } from '../../src/core/agents/tomlEntry';
import { Catalog } from '../../src/core/gateway/catalog';
import { ChatGateway } from '../../src/core/gateway/sdkGateway';
import type { AuditEntry } from '../../src/core/policy/types';
import { installedAgents, runInGroup, ScriptedClient, writeWindowRecord } from '../helpers/agents';
import { share, upstreamHandle } from '../helpers/gateway';
import { scriptedModel, type ScriptedModel } from '../helpers/scriptedModel';
import { eventually, ROOT } from '../helpers/servers';

const TOKEN = 'agents-token-real-0123456789';

describe('Connect an Agent with the real agents: a tool call through the written entry, the relay and the gate', function () {
  this.timeout(240_000);
  let bin: string;
  let home: string;
  let project: string;
  let calls: string;
  let handle: ServerHandle;
  let audit: AuditEntry[];
  let gateway: ChatGateway;
  const clients: ScriptedClient[] = [];
  let model: ScriptedModel | undefined;

  before(function () {
    this.timeout(10 * 60_000);
    execFileSync(process.execPath, [path.join(ROOT, 'esbuild.js')], { cwd: ROOT });
    bin = installedAgents().bin;
  });
  beforeEach(async () => {
    home = mkdtempSync(path.join(tmpdir(), 'real-agent-home-'));
    project = path.join(home, 'project');
    mkdirSync(project);
    calls = path.join(home, 'calls.jsonl');
    handle = upstreamHandle({ env: { GATEWAY_UPSTREAM_CALL_LOG: calls } });
    await handle.start();
    const shared = share(handle, { roots: [{ uri: `file://${project}` }], origin: 'agent' });
    audit = shared.audit;
    gateway = await ChatGateway.start({
      token: 'chat-token',
      relaySocketPath: path.join(home, 'r.sock'),
      forwarderFor: () => undefined,
      agents: {
        token: TOKEN,
        catalogFor: (via) => (targetById(via) ? new Catalog([{ name: 'notes', forwarder: shared.forwarder }], true) : undefined),
      },
    });
    await writeLauncher(home, process.execPath, path.join(ROOT, 'dist', 'relay.js'));
    await writeWindowRecord(home, project, gateway, TOKEN);
  });
  afterEach(async () => {
    await model?.close();
    model = undefined;
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await gateway.close();
    await handle.dispose();
  });

  /** Connect an Agent's core: the entry written into the target's file, as the command writes it. */
  const connect = (id: string, env: Record<string, string> = {}): string => {
    const target = targetById(id) as AgentTarget;
    const file = targetFile(target, { folder: project, home, env })!;
    mkdirSync(path.dirname(file), { recursive: true });
    const before = existsSync(file) ? readFileSync(file, 'utf8') : '';
    const value = entryValue(target, launcherPath(home));
    writeFileSync(
      file,
      target.format === 'toml'
        ? addTomlEntry(before, ENTRY_NAME, value as { command: string; args: string[] })
        : addEntry(before, ENTRY_NAME, value),
    );
    return file;
  };
  const received = (): Array<{ tool: string; arguments: Record<string, unknown> }> =>
    existsSync(calls)
      ? readFileSync(calls, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as { tool: string; arguments: Record<string, unknown> })
      : [];
  /** The server received the call, and the audit has it from the agent, through its entry, named by its client. */
  const throughTheGate = (text: string, clientName: string) => {
    assert.deepEqual(
      received().map((r) => [r.tool, r.arguments.text]),
      [['echo', text]],
    );
    const record = audit.find((a) => a.method === 'tools/call');
    assert.ok(record, JSON.stringify(audit));
    assert.equal(record.origin, 'agent');
    assert.equal(record.name, 'echo');
    assert.deepEqual(record.outcome, { kind: 'ok' });
    assert.equal(record.session?.client?.name, clientName, JSON.stringify(record.session));
    // Denied by the person's policy: not offered, and a call of it never reaches the server.
    assert.ok(!received().some((r) => r.tool === 'remove'));
  };

  it('Codex (`codex app-server`, no model): config.toml’s entry, a tool call through the gate', async () => {
    const codexHome = path.join(home, '.codex');
    connect('codex-user', { CODEX_HOME: codexHome });
    const codex = new ScriptedClient(path.join(bin, 'codex'), ['app-server'], {
      cwd: project,
      env: { PATH: process.env.PATH, HOME: home, CODEX_HOME: codexHome, TMPDIR: process.env.TMPDIR },
    });
    clients.push(codex);
    const init = await codex.request('initialize', { clientInfo: { name: 'mcp-host-test', version: '1.0.0' } });
    assert.ok(init.result, JSON.stringify(init));
    codex.notify('initialized');
    const thread = await codex.request('thread/start', { cwd: project, ephemeral: true });
    const threadId = (thread.result as { thread: { id: string } } | undefined)?.thread?.id;
    assert.ok(threadId, JSON.stringify(thread));
    // Codex starts its servers with the thread; a call before the entry's server is up is refused, so it is tried again.
    let last: unknown;
    const call = await eventually(
      async () => {
        const answer = await codex.request('mcpServer/tool/call', {
          server: ENTRY_NAME,
          threadId,
          tool: 'notes__echo',
          arguments: { text: 'from codex' },
        });
        last = answer;
        return answer.error ? undefined : answer;
      },
      60_000,
      1000,
    ).catch(() => assert.fail(`Codex never called the tool: ${JSON.stringify(last)}\n${codex.stderr}`));
    assert.match(JSON.stringify(call.result), /from codex/);
    // A tool the person's policy denies: not offered, and a call of it by name never reaches the server.
    const denied = await codex.request('mcpServer/tool/call', { server: ENTRY_NAME, threadId, tool: 'notes__remove', arguments: {} });
    assert.doesNotMatch(JSON.stringify(denied), /removed/);
    throughTheGate('from codex', 'codex-mcp-client');
  });

  /** An agent's headless run in the project, offline with the temporary HOME, in its own process group. */
  const runAgent = (name: string, args: string[], env: Record<string, string>) =>
    runInGroup(path.join(bin, name), args, {
      cwd: project,
      timeoutMs: 120_000,
      env: { PATH: process.env.PATH, HOME: home, TMPDIR: process.env.TMPDIR, ...env },
    });
  /** What an agent run by a scripted model did: it exited by itself, offered the gated echo and not the denied tool, and the tool's answer went back to the model. */
  const modelSaw = (
    result: { code: number | null; stdout: string; stderr: string; timedOut: boolean },
    offered: string[],
    answered: boolean,
  ) => {
    const seen = `${result.stdout}\n${result.stderr}\nmodel saw: ${JSON.stringify(model!.requests.map((r) => r.path))}`;
    assert.ok(!result.timedOut && result.code === 0, seen);
    assert.ok(
      offered.some((n) => n.endsWith('notes__echo')),
      `echo not offered: ${offered.join(' ')}`,
    );
    assert.ok(!offered.some((n) => /remove/.test(n)), `the denied tool was offered: ${offered.join(' ')}`);
    assert.ok(answered, `the tool's answer never reached the model\n${seen}`);
  };

  it('Copilot CLI (offline, a scripted model on loopback): mcp-config.json’s entry, a tool call through the gate', async () => {
    connect('copilot-user');
    model = await scriptedModel('notes__echo', { text: 'from copilot' });
    const result = await runAgent('copilot', ['-p', 'Echo "from copilot" with the notes tool.', '--allow-all-tools', '--no-color'], {
      COPILOT_OFFLINE: 'true',
      COPILOT_PROVIDER_BASE_URL: `${model.url}/v1`,
      COPILOT_PROVIDER_API_KEY: 'scripted',
      COPILOT_MODEL: 'gpt-4o',
    });
    const bodies = model.requests.map((r) => r.body);
    const offered = ((bodies[0]?.tools ?? []) as Array<{ function?: { name: string } }>).flatMap((t) =>
      t.function ? [t.function.name] : [],
    );
    const answered = bodies.some((b) =>
      ((b.messages ?? []) as Array<{ role: string; content?: unknown }>).some(
        (m) => m.role === 'tool' && JSON.stringify(m.content).includes('from copilot'),
      ),
    );
    modelSaw(result, offered, answered);
    throughTheGate('from copilot', 'copilot-cli');
  });

  it('Gemini CLI (offline, a scripted model on loopback): settings.json’s entry, a tool call through the gate', async () => {
    const settings = path.join(home, '.gemini', 'settings.json');
    mkdirSync(path.dirname(settings), { recursive: true });
    // The person's own settings, which Connect keeps: an API key login, so the CLI talks to GOOGLE_GEMINI_BASE_URL.
    writeFileSync(settings, '{\n  "security": { "auth": { "selectedType": "gemini-api-key" } }\n}\n');
    // Gemini CLI runs headless only in a folder the person trusts.
    writeFileSync(path.join(home, '.gemini', 'trustedFolders.json'), JSON.stringify({ [project]: 'TRUST_FOLDER' }));
    assert.equal(connect('gemini-user'), settings);
    model = await scriptedModel('notes__echo', { text: 'from gemini' });
    const result = await runAgent('gemini', ['-p', 'Echo "from gemini" with the notes tool.', '--yolo', '--model', 'gemini-2.5-flash'], {
      GEMINI_API_KEY: 'scripted',
      GOOGLE_GEMINI_BASE_URL: model.url,
      GEMINI_CLI_NO_RELAUNCH: 'true',
    });
    const bodies = model.requests.map((r) => r.body);
    const offered = bodies.flatMap((b) =>
      ((b.tools ?? []) as Array<{ functionDeclarations?: Array<{ name: string }> }>).flatMap((t) =>
        (t.functionDeclarations ?? []).map((d) => d.name),
      ),
    );
    const answered = bodies.some((b) =>
      ((b.contents ?? []) as Array<{ parts?: Array<Record<string, unknown>> }>).some((c) =>
        c.parts?.some((p) => 'functionResponse' in p && JSON.stringify(p).includes('from gemini')),
      ),
    );
    modelSaw(result, offered, answered);
    throughTheGate('from gemini', 'gemini-cli-mcp-client');
  });
});
