import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { parse as parseJsonc } from 'jsonc-parser';
import { parse as parseToml } from 'smol-toml';
import type { ServerHandle } from '../../src/core';
import { addEntry, readEntry, removeEntry } from '../../src/core/agents/jsonEntry';
import { gatewayCandidates, launcherPath, writeGatewayRecord, writeLauncher } from '../../src/core/agents/rendezvous';
import { agentOfClient, ENTRY_NAME, entryValue, targetById, targetFile } from '../../src/core/agents/targets';
import { addTomlEntry, removeTomlEntry } from '../../src/core/agents/tomlEntry';
import { Catalog } from '../../src/core/gateway/catalog';
import { narrowRoots } from '../../src/core/policy/roots';
import { ChatGateway } from '../../src/core/gateway/sdkGateway';
import type { AuditEntry } from '../../src/core/policy/types';
import { ScriptedClient, writeWindowRecord } from '../helpers/agents';
import { share, upstreamHandle } from '../helpers/gateway';
import { ROOT } from '../helpers/servers';

const LAUNCHER = '/home/someone/.mcp-host/bin/mcp-host-relay';

describe('agents’ configuration files: MCP Host’s entry in, and out again byte for byte', () => {
  const JSON_FILES: Record<string, string> = {
    'a Claude Code project file with comments and another server':
      '{\n  // our team\'s servers\n  "mcpServers": {\n    "notes": { "command": "notes-server" } // keep this one\n  }\n}\n',
    "a user's ~/.claude.json with no mcpServers yet":
      '{\n  "numStartups": 12,\n  "projects": {\n    "/p": {}\n  },\n  "theme": "dark"\n}\n',
    'an empty mcpServers, indented with tabs': '{\n\t"mcpServers": {}\n}',
    'one line, compact': '{"mcpServers":{"a":{"command":"x","args":["1"]}},"other":true}',
    'Windows line ends, four spaces':
      '{\r\n    "mcpServers": {\r\n        "a": {\r\n            "command": "x"\r\n        }\r\n    }\r\n}\r\n',
    'Gemini CLI settings with other settings after':
      '{\n  "mcpServers": {\n    "fs": {\n      "command": "npx"\n    }\n  },\n  "security": { "auth": { "selectedType": "gemini-api-key" } }\n}\n',
  };
  for (const [what, text] of Object.entries(JSON_FILES)) {
    it(`JSON: ${what}`, () => {
      const value = entryValue(targetById('mcp-json')!, LAUNCHER);
      const added = addEntry(text, ENTRY_NAME, value);
      assert.deepEqual(readEntry(added, ENTRY_NAME).value, value);
      // Everything else reads as it did: the entry is the only difference.
      const before = parseJsonc(text) as { mcpServers?: Record<string, unknown> };
      const after = parseJsonc(added) as { mcpServers: Record<string, unknown> };
      const { [ENTRY_NAME]: _ours, ...others } = after.mcpServers;
      assert.deepEqual({ ...after, mcpServers: others }, { ...before, mcpServers: before.mcpServers ?? {} });
      const removed = removeEntry(added, ENTRY_NAME, { addedContainer: !text.includes('mcpServers') });
      assert.equal(removed, text);
    });
  }

  it('JSON: a file MCP Host created is left empty for the caller to delete; an entry of the same name it did not write is refused', () => {
    const created = addEntry('', ENTRY_NAME, entryValue(targetById('copilot-user')!, LAUNCHER));
    assert.deepEqual(JSON.parse(created), {
      mcpServers: { [ENTRY_NAME]: { type: 'local', command: LAUNCHER, args: ['copilot-user'], tools: ['*'] } },
    });
    assert.equal(removeEntry(created, ENTRY_NAME, { createdFile: true }), '');
    assert.throws(() => addEntry('{"mcpServers":{"mcp-host":{"command":"mine"}}}', ENTRY_NAME, {}), /already has an entry/);
    assert.throws(() => addEntry('{ not json', ENTRY_NAME, {}), /not valid JSON/);
    assert.throws(() => addEntry('{"mcpServers": []}', ENTRY_NAME, {}), /not an object/);
  });

  const TOML_FILES: Record<string, string> = {
    'a Codex config with comments, a model and another server':
      '# my Codex settings\nmodel = "o4-mini"  # the fast one\n\n[mcp_servers.docs]\ncommand = "docs-server"\nargs = ["--port", "0"]\n\n[mcp_servers.docs.env]\nTOKEN_FILE = "~/.docs"\n',
    'an empty file': '',
    'one table, no trailing blank line': '[profiles.fast]\nmodel = "o4-mini"\n',
  };
  for (const [what, text] of Object.entries(TOML_FILES)) {
    it(`TOML: ${what}`, () => {
      const value = entryValue(targetById('codex-user')!, LAUNCHER) as { command: string; args: string[] };
      const added = addTomlEntry(text, ENTRY_NAME, value);
      const doc = parseToml(added) as { mcp_servers: Record<string, unknown> };
      assert.deepEqual({ ...(doc.mcp_servers[ENTRY_NAME] as object) }, { command: LAUNCHER, args: ['codex-user'] });
      assert.ok(added.startsWith(text));
      assert.equal(removeTomlEntry(added, ENTRY_NAME), text);
    });
  }

  it('TOML: a file that is not TOML is not touched; a table of that name MCP Host did not write is refused', () => {
    assert.throws(() => addTomlEntry('model = \n', ENTRY_NAME, { command: 'x', args: [] }), /not valid TOML/);
    assert.throws(() => addTomlEntry('[mcp_servers.mcp-host]\ncommand = "mine"\n', ENTRY_NAME, { command: 'x', args: [] }), /already has/);
    const theirs = '[mcp_servers.mcp-host]\ncommand = "mine"\n';
    assert.equal(removeTomlEntry(theirs, ENTRY_NAME), theirs, 'only the block MCP Host marked is taken out');
  });

  it("narrows MCP Host's roots by an agent's own roots/list, never widens them", () => {
    const ours = [{ uri: 'file:///work/project', name: 'project' }];
    assert.deepEqual(narrowRoots(ours, [{ uri: 'file:///work/project/src', name: 'src' }]), [
      { uri: 'file:///work/project/src', name: 'src' },
    ]);
    assert.deepEqual(narrowRoots(ours, [{ uri: 'file:///' }]), ours, 'a wider root of the agent adds nothing');
    assert.deepEqual(narrowRoots(ours, [{ uri: 'file:///etc' }, { uri: 'file:///work/projectile' }]), [], 'roots elsewhere reach nothing');
    assert.deepEqual(narrowRoots(ours, []), ours, 'an agent that names no roots narrows nothing');
  });

  it('knows where each agent keeps its servers, at each scope', () => {
    const where = { folder: '/work/p', home: '/home/u', env: {} };
    assert.equal(targetFile(targetById('mcp-json')!, where), '/work/p/.mcp.json');
    assert.equal(targetFile(targetById('claude-user')!, where), '/home/u/.claude.json');
    assert.equal(targetFile(targetById('claude-user')!, { ...where, env: { CLAUDE_CONFIG_DIR: '/c' } }), '/c/.claude.json');
    assert.equal(targetFile(targetById('copilot-user')!, where), '/home/u/.copilot/mcp-config.json');
    assert.equal(targetFile(targetById('codex-user')!, { ...where, env: { CODEX_HOME: '/x' } }), '/x/config.toml');
    assert.equal(targetFile(targetById('codex-project')!, where), '/work/p/.codex/config.toml');
    assert.equal(targetFile(targetById('gemini-project')!, where), '/work/p/.gemini/settings.json');
  });
});

describe('an agent through the editor’s gateway: the launcher, the rendezvous and the relay', function () {
  this.timeout(60_000);
  let home: string;
  let project: string;
  let handles: ServerHandle[];
  let gateway: ChatGateway;
  const clients: ScriptedClient[] = [];
  const audit: AuditEntry[] = [];
  const TOKEN = 'agents-token-0123456789';

  before(() => execFileSync(process.execPath, [path.join(ROOT, 'esbuild.js')], { cwd: ROOT }));
  beforeEach(async () => {
    home = mkdtempSync(path.join(tmpdir(), 'agent-home-'));
    project = path.join(home, 'project');
    mkdirSync(path.join(project, 'sub'), { recursive: true });
    handles = [upstreamHandle(), upstreamHandle({ tools: {} })];
    await Promise.all(handles.map((h) => h.start()));
    const servers = handles.map((handle, i) => {
      const shared = share(handle, { roots: [{ uri: `file://${project}` }] });
      audit.length = 0;
      return { name: i === 0 ? 'notes' : 'files', forwarder: shared.forwarder, audit: shared.audit };
    });
    gateway = await ChatGateway.start({
      token: 'chat-token',
      relaySocketPath: path.join(home, 'r.sock'),
      forwarderFor: () => undefined,
      agents: { token: TOKEN, catalogFor: (via) => (via === 'mcp-json' ? new Catalog(servers, true) : undefined) },
    });
    await writeLauncher(home, process.execPath, path.join(ROOT, 'dist', 'relay.js'));
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await gateway.close();
    await Promise.all(handles.map((h) => h.dispose()));
  });

  const launch = (cwd: string, entry = 'mcp-json'): ScriptedClient => {
    const client = new ScriptedClient(launcherPath(home), [entry], { cwd, env: { PATH: process.env.PATH, HOME: home } });
    clients.push(client);
    return client;
  };

  it('keeps the launcher and the records private (0700 folders, 0600 records), and finds the window whose folder holds the agent', async () => {
    await writeGatewayRecord(home, 'file:///elsewhere', {
      version: 1,
      folders: ['/elsewhere'],
      address: '/nowhere.sock',
      token: 'x',
      pid: 1,
      written: 2,
    });
    const record = await writeWindowRecord(home, project, gateway, TOKEN, 1);
    assert.equal(statSync(path.join(home, '.mcp-host')).mode & 0o777, 0o700);
    assert.equal(statSync(record).mode & 0o777, 0o600);
    assert.equal(statSync(launcherPath(home)).mode & 0o777, 0o700);
    assert.deepEqual(
      (await gatewayCandidates(home, path.join(project, 'sub'), false)).map((r) => r.folders[0]),
      [project],
      'a project entry reaches only the window of its project',
    );
    assert.deepEqual(
      (await gatewayCandidates(home, '/tmp', true)).map((r) => r.folders[0]),
      ['/elsewhere', project],
      'a user entry started elsewhere tries every window, the last written first',
    );
    // Records in a folder others may write are not believed.
    execFileSync('chmod', ['0777', path.join(home, '.mcp-host', 'gateways')]);
    assert.deepEqual(await gatewayCandidates(home, project, true), []);
  });

  it('an agent started in the project reaches its servers as <server>__<tool>, through the gate, named by its client', async () => {
    await writeWindowRecord(home, project, gateway, TOKEN);
    const client = launch(path.join(project, 'sub'));
    await client.handshake('2025-06-18', { name: 'claude-code', version: '2.1.197' });
    const tools = ((await client.request('tools/list')).result as { tools: Array<{ name: string }> }).tools.map((t) => t.name);
    assert.ok(tools.includes('notes__echo') && tools.includes('files__echo') && !tools.includes('notes__remove'), tools.join(' '));
    const result = (await client.request('tools/call', { name: 'files__echo', arguments: { text: 'via relay' } })).result as {
      content: Array<{ text: string }>;
    };
    assert.equal(result.content[0].text, 'via relay');
    const sessions = gateway.agentSessions();
    assert.equal(sessions.length, 1);
    assert.deepEqual(sessions[0].client, { name: 'claude-code', version: '2.1.197' });
    assert.equal(sessions[0].via, 'mcp-json');
    assert.equal(sessions[0].origin, 'agent');
  });

  /**
   * VS Code's agent host (Copilot, and Claude, in VS Code's own agent sessions) reads a workspace's
   * `.mcp.json` itself. It cannot be run offline here (its agents need a signed-in model), so this
   * loads the file Connect an Agent writes by the rules the agent host of VS Code 1.139.1
   * (code-server 4.139.1, `vs/platform/agentHost/node/agentHostMain.js`) follows, restated here:
   * - the file is `<folder>/.mcp.json` of each workspace folder, read as JSON with comments; its
   *   servers are its `mcpServers` object when it has that key, else the top object itself;
   * - an entry is a stdio server when its `type` is `stdio`, or it has no `type` and a string
   *   `command`; `args` keeps only strings, `env` only strings, numbers and null, `cwd` a string;
   * - it starts the server with that command and those args, the entry's `env` alone added (none
   *   here), in the entry's `cwd` (a `~` expanded, a relative one under the folder), else in the
   *   folder that holds the `.mcp.json`; its Claude agent skips a stdio server whose folder is not
   *   the session's working folder.
   * The entry is then started as it would be (the folder as its working folder, HOME and nothing
   * else of an environment, not even a PATH), and its call reaches the server through the gate.
   */
  it("VS Code's agent host (1.139.1 rules) accepts the .mcp.json entry as written, and started so it reaches the gate", async () => {
    const target = targetById('mcp-json')!;
    const file = targetFile(target, { folder: project, home, env: {} })!;
    writeFileSync(file, addEntry('', ENTRY_NAME, entryValue(target, launcherPath(home))));
    const parsed = parseJsonc(readFileSync(file, 'utf8')) as Record<string, unknown>;
    const servers = (Object.hasOwn(parsed, 'mcpServers') ? parsed.mcpServers : parsed) as Record<string, Record<string, unknown>>;
    const entry = servers[ENTRY_NAME];
    const stdio = entry.type === 'stdio' || (entry.type === undefined && typeof entry.command === 'string');
    assert.ok(stdio && typeof entry.command === 'string', 'a stdio server with its command');
    assert.ok(path.isAbsolute(entry.command as string), 'an absolute command: no PATH needed');
    const args = entry.args as unknown[];
    assert.deepEqual(
      args.filter((a) => typeof a === 'string'),
      args,
      'no argument the agent host would drop',
    );
    assert.deepEqual(Object.keys(entry).sort(), ['args', 'command', 'type'], 'no env, envFile or cwd: nothing it would drop or move');
    // Started where the agent host starts it (the folder of the .mcp.json, which is also its Claude agent's working folder).
    await writeWindowRecord(home, project, gateway, TOKEN);
    const client = new ScriptedClient(entry.command as string, args as string[], { cwd: path.dirname(file), env: { HOME: home } });
    clients.push(client);
    await client.handshake('2025-11-25', { name: 'vscode-agent-host', version: '1.139.1' });
    const result = (await client.request('tools/call', { name: 'notes__echo', arguments: { text: 'from the agent host' } })).result as {
      content: Array<{ text: string }>;
    };
    assert.equal(result.content[0].text, 'from the agent host', client.stderr);
    const [session] = gateway.agentSessions();
    assert.equal(session.via, 'mcp-json');
    assert.deepEqual(agentOfClient(session.client?.name, target), { id: 'vscode-agent-host', label: "VS Code's agent host" });
  });

  it('with no window of the workspace open, the entry runs nothing: the agent’s first request gets a clear error', async () => {
    const client = launch(project);
    const init = await client.request('initialize', {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'x', version: '1' },
    });
    assert.match((init.error as { message: string }).message, /no VS Code window with MCP Host is open for .*project.*never without it/);
    assert.equal(await client.close(), 1);
  });

  it('refuses a relay with a wrong token, and an entry that is not connected', async () => {
    await writeWindowRecord(home, project, gateway, 'not-the-token');
    const wrong = launch(project);
    const init = await wrong.request('initialize', {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'x', version: '1' },
    });
    assert.match((init.error as { message: string }).message, /no valid token/);
    writeFileSync(
      path.join(home, '.mcp-host', 'gateways', readFileSync(launcherPath(home), 'utf8') ? 'other.json' : 'x.json'),
      JSON.stringify({
        version: 1,
        folders: [project],
        address: ChatGateway.relayTarget(gateway.relayAddress),
        token: TOKEN,
        pid: 1,
        written: Date.now() + 1,
      }),
    );
    const notConnected = launch(project, 'gemini-project');
    const refused = await notConnected.request('initialize', {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 'x', version: '1' },
    });
    assert.match((refused.error as { message: string }).message, /no agent is connected through "gemini-project"/);
  });
});
