import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import type { AuditRecord } from '../../src/core/policy/types';
import { alive, descendants, inspectorCli, installedAgents, run, ScriptedClient } from '../helpers/agents';
import { UPSTREAM } from '../helpers/gateway';
import { ROOT, eventually } from '../helpers/servers';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const CLI = path.join(ROOT, 'dist', 'cli.js');
const CHANGING = path.join(ROOT, 'test', 'fixtures', 'changing-server.mjs');
const HOSTILE = path.join(ROOT, 'test', 'fixtures', 'hostile-sandbox-server.mjs');
const SECRET = 'ghp_' + 'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8';

type Result = { content: Array<{ type: string; text?: string }>; isError?: boolean };
const resultOf = (message: Record<string, unknown>): Result => message.result as Result;
const textOf = (message: Record<string, unknown>): string => (resultOf(message).content ?? []).map((c) => c.text ?? '').join('\n');
const lines = (file: string): Array<Record<string, unknown>> =>
  existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>)
    : [];

describe('mcp-host serve', function () {
  this.timeout(180_000);
  let dir: string;
  const clients: ScriptedClient[] = [];

  before(() => execFileSync(process.execPath, [path.join(ROOT, 'esbuild.js')], { cwd: ROOT }));
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'serve-'));
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
  });

  const writeConfig = (doc: unknown, name = 'mcp.json'): string => {
    const file = path.join(dir, name);
    writeFileSync(file, typeof doc === 'string' ? doc : JSON.stringify(doc, null, 2));
    return file;
  };
  const serve = (args: string[], env: NodeJS.ProcessEnv = process.env): ScriptedClient => {
    const client = new ScriptedClient(process.execPath, [CLI, ...args, 'serve'], { cwd: dir, env });
    clients.push(client);
    return client;
  };
  const twoServers = () =>
    writeConfig({
      // Claude Code's format, with MCP Host's own keys (tools.deny) in an entry.
      mcpServers: {
        up: {
          command: process.execPath,
          args: [UPSTREAM],
          env: { GATEWAY_UPSTREAM_CALL_LOG: path.join(dir, 'up-calls.jsonl') },
          tools: { deny: ['remove'] },
        },
        v: {
          type: 'stdio',
          command: process.execPath,
          args: [CHANGING],
          env: { CHANGING_SERVER_CALL_LOG: path.join(dir, 'v-calls.jsonl') },
        },
      },
    });

  it('answers server/discover with Method not found, then serves two servers as <server>__<tool> through the gate, origin agent, the client named in the audit', async () => {
    const audit = path.join(dir, 'audit.jsonl');
    writeFileSync(path.join(dir, 'inside.txt'), 'x');
    // The flow guard has its own tests (serveGate.test.ts): these unannotated tools would each be a source and a sink.
    const client = serve(['--config', twoServers(), '--root', dir, '--audit', audit, '--flow-guard', 'off']);
    // As Copilot CLI and Python clients do: the 2026-07-28 question first, initialize on -32601.
    const discover = await client.request('server/discover', { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } });
    assert.equal((discover.error as { code: number }).code, -32601);
    // Codex and Gemini CLI speak 2025-06-18; some ping right after initialize.
    const init = await client.handshake('2025-06-18');
    assert.equal((init.result as { protocolVersion: string }).protocolVersion, '2025-06-18');
    assert.deepEqual((await client.request('ping')).result, {});

    const tools = ((await client.request('tools/list')).result as { tools: Array<{ name: string }> }).tools.map((t) => t.name);
    assert.ok(tools.includes('up__echo') && tools.includes('v__lookup') && tools.includes('up__read_file'), tools.join(' '));
    assert.ok(!tools.includes('up__remove'), 'a denied tool is not offered');
    assert.ok(!tools.includes('up__app_helper'), 'an app-only tool is not offered to an agent');

    assert.equal(textOf(await client.request('tools/call', { name: 'up__echo', arguments: { text: 'hi' } })), 'hi');
    assert.equal(textOf(await client.request('tools/call', { name: 'v__lookup', arguments: { word: 'x' } })), 'lookup ran (version 1)');
    const denied = await client.request('tools/call', { name: 'up__remove', arguments: {} });
    assert.equal(resultOf(denied).isError, true);
    assert.match(textOf(denied), /tools\.deny/);
    const fenced = await client.request('tools/call', { name: 'up__read_file', arguments: { path: '/etc/passwd' } });
    assert.equal(resultOf(fenced).isError, true);
    assert.match(textOf(fenced), /outside the roots.*\/etc\/passwd.*--root/);
    assert.equal(
      textOf(await client.request('tools/call', { name: 'up__read_file', arguments: { path: path.join(dir, 'inside.txt') } })),
      `contents of ${path.join(dir, 'inside.txt')}`,
    );
    const unknown = await client.request('tools/call', { name: 'nope__echo', arguments: {} });
    assert.equal(resultOf(unknown).isError, true);

    const prompts = ((await client.request('prompts/list')).result as { prompts: Array<{ name: string }> }).prompts.map((p) => p.name);
    assert.ok(prompts.includes('up__greet') && prompts.includes('v__brief'), prompts.join(' '));
    const greeting = JSON.stringify((await client.request('prompts/get', { name: 'up__greet', arguments: { name: 'Ada' } })).result);
    assert.match(greeting, /Hello Ada/);
    assert.ok(!greeting.includes(SECRET), 'the secret is masked before the agent reads it');
    const read = JSON.stringify((await client.request('resources/read', { uri: 'note://one' })).result);
    assert.ok(read.includes('password=') && !read.includes(SECRET), read);
    const completion = await client.request('completion/complete', {
      ref: { type: 'ref/prompt', name: 'up__greet' },
      argument: { name: 'name', value: 'A' },
    });
    assert.deepEqual((completion.result as { completion: { values: string[] } }).completion.values, ['Ada', 'Alan']);

    assert.equal(await client.close(), 0);
    // What the servers received: the allowed calls, nothing the gate refused.
    assert.deepEqual(
      lines(path.join(dir, 'up-calls.jsonl')).map((c) => c.tool),
      ['echo', 'read_file'],
    );
    assert.deepEqual(
      lines(path.join(dir, 'v-calls.jsonl')).map((c) => c.name),
      ['lookup'],
    );
    // The audit: origin agent, the server's own names, the client and one session, and a chain that verifies.
    const records = lines(audit) as unknown as AuditRecord[];
    const calls = records.filter((r) => r.method === 'tools/call');
    assert.deepEqual(
      calls.map((r) => [r.server.name, r.name, r.decision]),
      [
        ['up', 'echo', 'allowed'],
        ['v', 'lookup', 'allowed'],
        ['up', 'remove', 'denied'],
        ['up', 'read_file', 'fenced'],
        ['up', 'read_file', 'allowed'],
      ],
    );
    for (const r of calls) {
      assert.equal(r.origin, 'agent');
      assert.deepEqual(r.session?.client, { name: 'scripted-agent', version: '1.2.3' });
    }
    assert.equal(new Set(calls.map((r) => r.session?.id)).size, 1);
    assert.match(execFileSync(process.execPath, [CLI, 'audit', 'verify', audit], { encoding: 'utf8' }), /chain intact/);
  });

  it('fences each call by the client’s roots as they are now: narrowed by its roots/list, widened again (within --root) when it lists more', async () => {
    const [a, b] = ['a', 'b'].map((name) => path.join(dir, name));
    for (const folder of [a, b]) mkdirSync(folder);
    const url = (folder: string) => `file://${folder}`;
    let theirs = [{ uri: url(a) }];
    const client = new Client({ name: 'roots-agent', version: '1.0.0' }, { capabilities: { roots: { listChanged: true } } });
    client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: theirs }));
    // The flow guard off: a read after a read is what this test makes, and the roots alone decide it.
    const args = [CLI, '--stdio', `${process.execPath} ${UPSTREAM}`, '--root', a, '--root', b, '--flow-guard', 'off', 'serve'];
    await client.connect(new StdioClientTransport({ command: process.execPath, args, cwd: dir, stderr: 'ignore' }));
    try {
      const readB = async () => {
        const result = (await client.callTool({ name: 'read_file', arguments: { path: path.join(b, 'x.txt') } })) as Result;
        return { refused: result.isError === true, text: (result.content ?? []).map((c) => c.text ?? '').join('') };
      };
      // The client's roots hold a only: a path in b is outside them.
      assert.match((await eventually(async () => ((await readB()).refused ? readB() : undefined))).text, /outside the roots/);
      theirs = [{ uri: url(a) }, { uri: url(b) }];
      await client.sendRootsListChanged();
      const allowed = await eventually(async () => {
        const r = await readB();
        return r.refused ? undefined : r;
      });
      assert.equal(allowed.text, `contents of ${path.join(b, 'x.txt')}`);
    } finally {
      await client.close();
    }
  });

  it('keeps the tools’ own names with one server (--stdio)', async () => {
    const client = serve(['--stdio', `${process.execPath} ${UPSTREAM}`]);
    await client.handshake('2025-11-25');
    const tools = ((await client.request('tools/list')).result as { tools: Array<{ name: string }> }).tools.map((t) => t.name);
    assert.ok(tools.includes('echo') && tools.includes('remove') && !tools.some((t) => t.includes('__')), tools.join(' '));
    assert.equal(textOf(await client.request('tools/call', { name: 'echo', arguments: { text: 'one' } })), 'one');
  });

  it('withholds a tool whose definition changed since it was pinned, and refuses a call of it by name saying where to look; the server receives nothing', async () => {
    const lock = path.join(dir, 'v.lock.json');
    execFileSync(process.execPath, [CLI, '--stdio', `${process.execPath} ${CHANGING}`, 'pin', lock], {
      env: { ...process.env, CHANGING_SERVER_VERSION: '1' },
    });
    const log = path.join(dir, 'v-calls.jsonl');
    const config = writeConfig({
      servers: { v: { command: process.execPath, args: [CHANGING], env: { CHANGING_SERVER_VERSION: '2', CHANGING_SERVER_CALL_LOG: log } } },
    });
    const client = serve(['--config', config, '--pinned', `v=${lock}`]);
    await client.handshake();
    const tools = ((await client.request('tools/list')).result as { tools: Array<{ name: string }> }).tools.map((t) => t.name);
    assert.ok(!tools.includes('v__lookup') && !tools.includes('v__remove'), `changed tools are withheld: ${tools.join(' ')}`);
    assert.ok(tools.includes('v__steady'), tools.join(' '));
    const changed = await client.request('tools/call', { name: 'v__lookup', arguments: { word: 'x' } });
    assert.equal(resultOf(changed).isError, true);
    assert.match(textOf(changed), /changed since it was pinned in .*v\.lock\.json \(description, input schema\).*pin/);
    const fresh = await client.request('tools/call', { name: 'v__fresh', arguments: {} });
    assert.equal(resultOf(fresh).isError, true);
    assert.match(textOf(fresh), /not in the pinned definitions/);
    assert.equal(textOf(await client.request('tools/call', { name: 'v__steady', arguments: {} })), 'steady ran (version 2)');
    assert.deepEqual(
      lines(log).map((c) => c.name),
      ['steady'],
    );
  });

  it('runs a server in the operating-system sandbox with --sandbox: it cannot read outside its roots, and the audit names the sandbox', async () => {
    const inside = path.join(dir, 'inside');
    const outside = path.join(dir, 'outside');
    mkdirSync(inside);
    mkdirSync(outside);
    writeFileSync(path.join(outside, 'secret.txt'), 'top secret');
    const audit = path.join(dir, 'audit.jsonl');
    const client = serve(
      ['--stdio', `${process.execPath} ${HOSTILE}`, '--sandbox', '--root', inside, '--audit', audit, '--flow-guard', 'off'],
      {
        ...process.env,
        HOSTILE_OUTSIDE: outside,
        HOSTILE_INSIDE: inside,
      },
    );
    await client.handshake();
    const read = JSON.parse(textOf(await client.request('tools/call', { name: 'read_outside', arguments: {} }))) as { ok: boolean };
    assert.equal(read.ok, false, 'the sandbox hid the folder outside the roots');
    const wrote = JSON.parse(textOf(await client.request('tools/call', { name: 'write_inside', arguments: {} }))) as { ok: boolean };
    assert.equal(wrote.ok, true);
    assert.ok(existsSync(path.join(inside, 'made-inside.txt')));
    await client.close();
    const call = (lines(audit) as unknown as AuditRecord[]).find((r) => r.method === 'tools/call');
    assert.ok(call?.server.sandbox, 'the audit names the sandbox the call ran in');
  });

  it('exits 2 naming a malformed configuration file, before any server starts', async () => {
    const marker = path.join(dir, 'started');
    const starts = { command: process.execPath, args: ['-e', `require('fs').writeFileSync(${JSON.stringify(marker)}, 'x')`] };
    const cases: Array<[unknown, RegExp]> = [
      ['{ "mcpServers": { "a": ', /not valid JSON/],
      [{ mcpServers: { ok: starts, bad: { command: process.execPath, tools: { allow: 'echo' } } } }, /server "bad"/],
      [{ servers: { ok: starts, sec: { command: 'x', env: { TOKEN: '${input:token}' } } } }, /server "sec".*input:token/],
      [{ other: {} }, /no "servers" or "mcpServers"/],
    ];
    for (const [doc, why] of cases) {
      const file = writeConfig(doc, 'bad.json');
      const result = await run(process.execPath, [CLI, '--config', file, 'serve'], { cwd: dir });
      assert.equal(result.code, 2, result.stderr);
      assert.match(result.stderr, new RegExp(`bad\\.json: .*${why.source}`));
    }
    const missing = await run(process.execPath, [CLI, '--config', path.join(dir, 'nope.json'), 'serve'], { cwd: dir });
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /nope\.json/);
    assert.ok(!existsSync(marker), 'no server was started');
  });

  it('leaves no server process behind when its client goes (found by parent)', async () => {
    const client = serve(['--config', twoServers()]);
    await client.handshake();
    await client.request('tools/list');
    const pid = client.child.pid!;
    const servers = descendants(pid);
    assert.ok(servers.length >= 2, `serve runs its two servers: ${servers.join(' ')}`);
    assert.equal(await client.close(), 0);
    await eventually(async () => (servers.some(alive) ? undefined : true), 10_000);
  });

  describe('real clients', () => {
    let agents: { bin: string; node22: string };
    before(function () {
      this.timeout(10 * 60_000);
      agents = installedAgents();
    });

    it("Claude Code's `claude mcp list` connects through serve (offline, a temporary HOME)", async () => {
      const home = path.join(dir, 'home');
      const project = path.join(dir, 'project');
      mkdirSync(home);
      mkdirSync(project);
      // The upstream writes down its client's initialize: it was reached through serve, whatever Claude Code did after.
      const initLog = path.join(dir, 'upstream-init.jsonl');
      const config = writeConfig({
        mcpServers: {
          up: { command: process.execPath, args: [UPSTREAM], env: { GATEWAY_UPSTREAM_INIT_LOG: initLog } },
          everything: {
            command: process.execPath,
            args: [path.join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js'), 'stdio'],
          },
        },
      });
      const audit = path.join(dir, 'audit.jsonl');
      // User scope: the top-level mcpServers of ~/.claude.json, which Claude Code starts without asking.
      writeFileSync(
        path.join(home, '.claude.json'),
        JSON.stringify({ mcpServers: { gate: { command: process.execPath, args: [CLI, '--config', config, '--audit', audit, 'serve'] } } }),
      );
      const result = await run(path.join(agents.bin, 'claude'), ['mcp', 'list'], {
        cwd: project,
        env: { PATH: process.env.PATH, HOME: home, TMPDIR: process.env.TMPDIR },
      });
      assert.match(result.stdout, /gate: .*serve - ✔ Connected/, result.stdout + result.stderr);
      // It really went through serve: serve answers the agent's initialize once its servers are up, so the upstream was
      // initialized by MCP Host's client before Claude Code could say "Connected".
      assert.deepEqual(
        lines(initLog).map((r) => (r.initialized as { name: string }).name),
        ['mcp-host-serve'],
      );
    });

    it("the MCP Inspector's CLI lists and calls tools through serve", async () => {
      const config = twoServers();
      const inspector = path.join(dir, 'inspector.json');
      const audit = path.join(dir, 'audit.jsonl');
      writeFileSync(
        inspector,
        JSON.stringify({
          mcpServers: { gate: { command: process.execPath, args: [CLI, '--config', config, '--root', dir, '--audit', audit, 'serve'] } },
        }),
      );
      const list = await inspectorCli(agents, inspector, 'gate', ['--method', 'tools/list']);
      assert.equal(list.code, 0, list.stderr);
      const names = (JSON.parse(list.stdout) as { tools: Array<{ name: string }> }).tools.map((t) => t.name);
      assert.ok(names.includes('up__echo') && !names.includes('up__remove'), names.join(' '));
      const call = await inspectorCli(agents, inspector, 'gate', [
        '--method',
        'tools/call',
        '--tool-name',
        'up__echo',
        '--tool-arg',
        'text=from-inspector',
      ]);
      assert.equal(call.code, 0, call.stderr);
      assert.equal((JSON.parse(call.stdout) as Result).content[0].text, 'from-inspector');
      const refused = await inspectorCli(agents, inspector, 'gate', [
        '--method',
        'tools/call',
        '--tool-name',
        'up__read_file',
        '--tool-arg',
        'path=/etc/shadow',
      ]);
      assert.match(refused.stdout, /outside the roots/);
      assert.deepEqual(
        lines(path.join(dir, 'up-calls.jsonl')).map((c) => c.arguments),
        [{ text: 'from-inspector' }],
      );
      const record = (lines(audit) as unknown as AuditRecord[]).find((r) => r.method === 'tools/call' && r.name === 'echo');
      assert.equal(record?.origin, 'agent');
      assert.match(record?.session?.client?.name ?? '', /inspector/);
    });
  });
});
