import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import {
  SerialQueue,
  ServerHandle,
  ServerRegistry,
  StdioTransport,
  definitionHash,
  isToolOffered,
  parseServerDefinitions,
  resolveVariables,
  rootsFor,
  stdioParamsFor,
  SERVERS_SETTING_SCHEMA,
  INPUTS_SETTING_SCHEMA,
  type LaunchContext,
  type ServerDefinition,
  type ServerState,
} from '../../src/core';
import { ROOT, nextEvent, rawServer } from '../helpers/servers';

const user = { scope: 'user' as const };
const parse = (raw: unknown) => parseServerDefinitions(raw, user);
const fixture = (scenario: string) => {
  const p = rawServer(scenario);
  return { command: p.command, args: p.args };
};

describe('server definitions from settings', () => {
  it('parses stdio and http entries with defaults', () => {
    const { definitions, diagnostics } = parse({
      local: { command: 'node', args: ['s.js'], env: { A: '1', B: null } },
      typed: { type: 'stdio', command: 'x', enabled: false, autostart: false, tools: { deny: ['rm_*'] }, autoApprove: ['read'] },
      remote: { type: 'http', url: 'https://example.com/mcp', headers: { 'X-Key': 'k' }, requestTimeoutMs: 5000, protocol: '2026-07-28' },
    });
    assert.deepEqual(diagnostics, []);
    const [local, typed, remote] = definitions;
    assert.deepEqual(local, {
      name: 'local',
      origin: user,
      type: 'stdio',
      command: 'node',
      args: ['s.js'],
      env: { A: '1', B: null },
      envFile: undefined,
      cwd: undefined,
      enabled: true,
      autostart: true,
      startupTimeoutMs: undefined,
      requestTimeoutMs: undefined,
      tools: { allow: undefined, deny: undefined },
      autoApprove: [],
      roots: [],
      sampling: { mode: 'ask', models: [] },
      logLevel: 'info',
      trustAnnotations: true,
      protocol: 'auto',
      shareWithChat: false,
    });
    assert.equal(typed.enabled, false);
    assert.equal(typed.autostart, false);
    assert.deepEqual(typed.autoApprove, ['read']);
    assert.ok(
      remote.type === 'http' &&
        remote.url === 'https://example.com/mcp' &&
        remote.headers['X-Key'] === 'k' &&
        remote.requestTimeoutMs === 5000 &&
        remote.protocol === '2026-07-28',
    );
  });

  it('gives one clear diagnostic per invalid entry and keeps the valid ones', () => {
    const { definitions, diagnostics } = parse({
      good: { command: 'node' },
      noCommand: { args: ['x'] },
      badType: { type: 'websocket', url: 'ws://x' },
      httpNoUrl: { type: 'http' },
      badUrl: { type: 'http', url: 'ftp://x' },
      typo: { command: 'node', argz: [] },
      wrongArgs: { command: 'node', args: 'not-an-array' },
      notObject: 'node server.js',
      'a/b': { command: 'node' },
    });
    assert.deepEqual(
      definitions.map((d) => d.name),
      ['good'],
    );
    const byName = Object.fromEntries(diagnostics.map((d) => [d.name, d.message]));
    assert.match(byName.noCommand, /required property 'command'/);
    assert.match(byName.badType, /unknown type "websocket"/);
    assert.match(byName.httpNoUrl, /required property 'url'/);
    assert.match(byName.badUrl, /\/url must match pattern/);
    assert.match(byName.typo, /unknown property "argz"/);
    assert.match(byName.wrongArgs, /\/args must be array/);
    assert.match(byName.notObject, /must be an object/);
    assert.match(byName['a/b'], /must not be empty or contain/);
  });

  it('refuses a settings value that is not an object', () => {
    assert.match(parse(['x']).diagnostics[0].message, /must be an object/);
    assert.deepEqual(parse(undefined), { definitions: [], diagnostics: [] });
  });

  it('hashes definitions stably, whatever the key order', () => {
    const [a] = parse({ s: { command: 'node', args: ['1'], env: { A: '1', B: '2' } } }).definitions;
    const [b] = parse({ s: { env: { B: '2', A: '1' }, args: ['1'], command: 'node' } }).definitions;
    const [c] = parse({ s: { command: 'node', args: ['2'] } }).definitions;
    assert.equal(definitionHash(a), definitionHash(b));
    assert.notEqual(definitionHash(a), definitionHash(c));
  });

  it('is the schema package.json contributes, once its %keys% are read from package.nls.json', () => {
    const { resolveNls } = require(path.join(ROOT, 'scripts', 'nls.js')) as {
      resolveNls: <T>(value: T, texts: Record<string, string>) => T;
    };
    const pkg = resolveNls(require(path.join(ROOT, 'package.json')), require(path.join(ROOT, 'package.nls.json')));
    const contributed = { ...pkg.contributes.configuration.properties['mcpHost.servers'] };
    delete contributed.scope;
    assert.deepEqual(contributed, JSON.parse(JSON.stringify(SERVERS_SETTING_SCHEMA)));
    const inputs = { ...pkg.contributes.configuration.properties['mcpHost.inputs'] };
    delete inputs.scope;
    assert.deepEqual(inputs, JSON.parse(JSON.stringify(INPUTS_SETTING_SCHEMA)));
  });

  it('resolves variables, asking for each input once', async () => {
    const [def] = parse({
      s: {
        command: '${workspaceFolder}/bin/s',
        args: ['--home=${userHome}', '--key=${input:key}', '${input:key}', '${env:MCP_HOST_TEST_VAR}'],
        cwd: '${workspaceFolder}',
      },
    }).definitions;
    const asked: string[] = [];
    const resolved = await resolveVariables(def, {
      workspaceFolder: '/ws',
      userHome: '/home/me',
      env: { MCP_HOST_TEST_VAR: 'from-env' },
      input: async (id) => {
        asked.push(id);
        return 'secret';
      },
    });
    assert.ok(resolved.type === 'stdio');
    assert.equal(resolved.command, '/ws/bin/s');
    assert.deepEqual(resolved.args, ['--home=/home/me', '--key=secret', 'secret', 'from-env']);
    assert.equal(resolved.cwd, '/ws');
    assert.deepEqual(asked, ['key']);
    await assert.rejects(
      resolveVariables(parse({ s: { command: '${nope}' } }).definitions[0], { userHome: '/', env: {} }),
      /unknown variable \$\{nope\}/,
    );
    await assert.rejects(
      resolveVariables(parse({ s: { command: '${workspaceFolder}/x' } }).definitions[0], { userHome: '/', env: {} }),
      /no folder is open/,
    );
  });

  it('resolves variables in the roots of an HTTP server as in a stdio one', async () => {
    const [def] = parse({
      h: { type: 'http', url: 'https://example.com/mcp', roots: ['${workspaceFolder}/docs', '${userHome}/notes'] },
    }).definitions;
    const resolved = await resolveVariables(def, { workspaceFolder: '/ws', userHome: '/home/me', env: {} });
    assert.deepEqual(resolved.roots, ['/ws/docs', '/home/me/notes']);
  });

  it('reads envFile under explicit env, relative to cwd', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'mcp-host-env-'));
    writeFileSync(path.join(dir, '.env'), 'A=from-file\nB="quoted value"\n# comment\n');
    const [def] = parse({ s: { command: 'node', envFile: '.env', env: { A: 'explicit' } } }).definitions;
    assert.ok(def.type === 'stdio');
    const params = await stdioParamsFor(def, dir);
    assert.deepEqual(params.env, { A: 'explicit', B: 'quoted value' });
    assert.equal(params.cwd, dir);
    const [missing] = parse({ s: { command: 'node', envFile: 'nope.env' } }).definitions;
    await assert.rejects(stdioParamsFor(missing as never, dir), /cannot read envFile/);
  });

  it('combines workspace roots with extra roots, without duplicates', () => {
    const [def] = parse({ s: { command: 'x', roots: ['/extra', 'file:///ws', 'rel'] } }).definitions;
    assert.deepEqual(rootsFor(def, [{ uri: 'file:///ws', name: 'ws' }], '/base'), [
      { uri: 'file:///ws', name: 'ws' },
      { uri: 'file:///extra', name: 'extra' },
      { uri: 'file:///base/rel', name: 'rel' },
    ]);
  });

  it('applies tool allow and deny globs', () => {
    const [def] = parse({ s: { command: 'x', tools: { allow: ['read_*', 'echo'], deny: ['read_secret*'] } } }).definitions;
    assert.deepEqual(
      ['read_file', 'read_secret_key', 'echo', 'write_file'].filter((t) => isToolOffered(def, t)),
      ['read_file', 'echo'],
    );
    const [open] = parse({ s: { command: 'x' } }).definitions;
    assert.ok(isToolOffered(open, 'anything'));
    // The usual glob forms besides `*`; dotted names are ordinary names.
    const [forms] = parse({ s: { command: 'x', tools: { allow: ['get_?', '{list,search}_*', 'v[12].*', '*.internal'] } } }).definitions;
    assert.deepEqual(
      ['get_a', 'get_ab', 'list_x', 'search_y', 'find_z', 'v1.run', 'v3.run', 'db.internal', '.internal'].filter((t) =>
        isToolOffered(forms, t),
      ),
      ['get_a', 'list_x', 'search_y', 'v1.run', 'db.internal', '.internal'],
    );
  });
});

describe('ServerHandle and ServerRegistry against real processes', function () {
  this.timeout(20_000);
  const handles: ServerHandle[] = [];
  afterEach(async () => Promise.all(handles.splice(0).map((h) => h.dispose())));

  const context: LaunchContext = {
    prepare: async (d) => d,
    createTransport: async (d) => new StdioTransport({ ...(await stdioParamsFor(d as never)), shutdownGraceMs: 300 }),
    handlers: () => ({}),
  };
  const make = (raw: Record<string, unknown>, policy = { maxRestarts: 2, windowMs: 60_000, baseDelayMs: 50 }) => {
    const [def] = parse({ s: raw }).definitions;
    const h = new ServerHandle(def, context, policy);
    handles.push(h);
    return h;
  };
  const states = (h: ServerHandle) => {
    const seen: ServerState['kind'][] = [];
    h.onDidChangeState((s) => seen.push(s.kind));
    return seen;
  };
  const until = async (h: ServerHandle, test: (s: ServerState) => boolean, ms = 5000) => {
    const deadline = Date.now() + ms;
    while (!test(h.state)) {
      if (Date.now() > deadline) throw new Error(`state stayed ${JSON.stringify(h.state)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  };

  it('carries the launch in the running state, and ends all of it with one dispose on stop', async () => {
    const h = make(fixture('plain'));
    await h.start();
    const running = h.state;
    assert.ok(running.kind === 'running');
    const { launch } = running;
    assert.equal(launch.client, h.client);
    assert.equal(launch.pid, h.pid);
    assert.ok(typeof launch.pid === 'number');
    assert.deepEqual(JSON.parse(JSON.stringify(running)), { kind: 'running', launch: { pid: launch.pid } });
    let closed = 0;
    launch.client.onDidClose(() => closed++);
    await h.stop();
    assert.ok(launch.isDisposed);
    assert.ok(launch.client.isClosed);
    assert.equal(closed, 1);
    assert.equal(h.client, undefined);
  });

  it('knows the folder a running stdio server was started in, where the fence resolves its relative paths', async () => {
    const folder = mkdtempSync(path.join(tmpdir(), 'mcp-cwd-'));
    const h = make({ ...fixture('plain'), cwd: folder });
    assert.equal(h.workingFolder, undefined);
    await h.start();
    assert.equal(h.workingFolder, folder);
    await h.stop();
    rmSync(folder, { recursive: true, force: true });
    assert.equal(h.workingFolder, undefined);
    // Without a cwd it runs in ours (the extension host's, the CLI's).
    const inherited = make(fixture('plain'));
    await inherited.start();
    assert.equal(inherited.workingFolder, process.cwd());
  });

  it('starts, lists, and stops', async () => {
    const h = make(fixture('plain'));
    const seen = states(h);
    await h.start();
    assert.equal(h.state.kind, 'running');
    assert.deepEqual(
      h.tools.map((t) => t.name),
      ['work'],
    );
    await h.stop();
    assert.deepEqual(seen, ['starting', 'running', 'stopped']);
    assert.equal(h.client, undefined);
  });

  it('refreshes the lists a change notification makes stale: resources/list_changed reads resources and templates again', async () => {
    const h = make({ command: process.execPath, args: [path.join(ROOT, 'test', 'fixtures', 'app-server.mjs')] });
    await h.start();
    const refreshed: string[] = [];
    h.onDidChangeLists((kind) => refreshed.push(kind));
    const both = Promise.all([
      nextEvent(h.onDidChangeLists, 5000, (kind) => kind === 'resources'),
      nextEvent(h.onDidChangeLists, 5000, (kind) => kind === 'templates'),
    ]);
    await h.rawClient!.callTool('bump-ui', { how: 'list' });
    await both;
    // Refreshes start together on the notification; tools/list is not among them.
    assert.deepEqual([...new Set(refreshed)].sort(), ['resources', 'templates']);
  });

  it('sends logging/setLevel after the handshake and on each change, only to servers that declare logging, without a restart', async () => {
    // Which levels each server received, as it reports on stderr.
    const received = new Map<string, string[]>();
    const registry = new ServerRegistry(
      (def) => {
        const h = new ServerHandle(def, context);
        handles.push(h);
        const levels: string[] = [];
        received.set(def.name, levels);
        h.onLog((e) => {
          const m = e.source === 'stderr' ? /^RECEIVED (.*)$/.exec(e.message) : null;
          const msg = m ? JSON.parse(m[1]) : undefined;
          if (msg?.method === 'logging/setLevel') levels.push(msg.params.level);
        });
        return h;
      },
      () => true,
    );
    const settings = (logLevel?: string) =>
      parse({
        logs: { ...fixture('resource-metadata'), ...(logLevel ? { logLevel } : {}) },
        quiet: { ...fixture('tools-only'), logLevel: 'debug' },
      }).definitions;
    await registry.reconcile(settings());
    const logs = registry.get('logs')!;
    const quiet = registry.get('quiet')!;
    const sent = received.get('logs')!;
    const sentQuiet = received.get('quiet')!;
    await Promise.all([logs.start(), quiet.start()]);
    // The fixture reports on stderr, a pipe of its own: the first line may come after the start.
    await until(logs, (s) => s.kind === 'running');
    const waitFor = async (n: number) => {
      const deadline = Date.now() + 5000;
      while (sent.length < n && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    };
    await waitFor(1);
    assert.deepEqual(sent, ['info'], 'the default, once, after initialize');
    const result = await registry.reconcile(settings('warning'));
    assert.deepEqual(result.unchanged.sort(), ['logs', 'quiet'], 'a new log level restarts nothing');
    assert.equal(registry.get('logs'), logs);
    await waitFor(2);
    assert.deepEqual(sent, ['info', 'warning']);
    assert.equal(logs.logLevel, 'warning');
    await logs.restart();
    await waitFor(3);
    assert.deepEqual(sent, ['info', 'warning', 'warning'], 'a new launch is told the current level');
    await quiet.client!.ping();
    assert.deepEqual(sentQuiet, [], 'a server without the logging capability is never asked');
    await registry.dispose();
  });

  it('coalesces a burst of refreshes into at most one more fetch', async () => {
    const h = make(fixture('plain'));
    const received: string[] = [];
    let pings = 0;
    let pinged = () => {};
    h.onLog((e) => {
      if (e.source !== 'stderr') return;
      if (e.message.includes('"method":"tools/list"')) received.push(e.message);
      if (e.message.includes('"method":"ping"')) {
        pings++;
        pinged();
      }
    });
    // The fixture reports what it receives on stderr, a pipe of its own whose lines may come after
    // the answers, but in the order it received them: once it reports a ping sent after the
    // fetches, it has reported every tools/list sent before it.
    const settle = async () => {
      const want = pings + 1;
      const reported = new Promise<void>((resolve) => (pinged = () => pings >= want && resolve()));
      await h.client!.ping();
      await reported;
    };
    await h.start();
    await settle();
    const before = received.length;
    await Promise.all([1, 2, 3, 4, 5].map(() => h.refresh('tools')));
    await settle();
    assert.equal(received.length - before, 2, 'one fetch under way plus one for the calls that came during it');
    assert.deepEqual(
      h.tools.map((t) => t.name),
      ['work'],
    );
  });

  it('goes to error with the exit code and stderr when the start fails', async () => {
    const h = make(fixture('exit-at-once'));
    await assert.rejects(h.start());
    assert.ok(h.state.kind === 'error' && /exited with code 7/.test(h.state.message) && /refuses to start/.test(h.state.message));
    const missing = make({ command: 'mcp-host-no-such-binary' });
    await assert.rejects(missing.start());
    assert.ok(missing.state.kind === 'error' && /Command not found/.test(missing.state.message));
  });

  it('restarts a crashed server with backoff, then gives up and stays in error', async () => {
    const h = make(fixture('crash'));
    const logs: string[] = [];
    h.onLog((e) => logs.push(e.message));
    await h.start();
    // Each tools/call crashes the server; each crash restarts it until the budget is spent.
    for (let crash = 1; crash <= 3; crash++) {
      await until(h, (s) => s.kind === 'running');
      await h.rawClient!.callTool('work').catch(() => undefined);
      await until(h, (s) => s.kind === 'error');
      const state = h.state as Extract<ServerState, { kind: 'error' }>;
      assert.match(state.message, /exited with code 3/);
      if (crash <= 2) assert.ok(state.restartAt !== undefined, `restart ${crash} scheduled`);
      else assert.ok(state.restartAt === undefined && /gave up after 2 restarts/.test(state.message));
    }
    // A restart is scheduled only together with its restartAt and its "restarting in" line: two of
    // them for the two restarts, none after giving up.
    const restarts = logs.filter((l) => /restarting in \d+ ms/.test(l));
    assert.deepEqual(
      restarts.map((l) => /restart (\d) of 2/.exec(l)?.[1]),
      ['1', '2'],
    );
    assert.equal(h.state.kind, 'error', 'no restart after giving up');
    await h.start();
    assert.equal(h.state.kind, 'running', 'a person can start it again');
  });

  it('reconciles: adds, removes, restarts changed and keeps unchanged servers running', async () => {
    const registry = new ServerRegistry(
      (def) => {
        const h = new ServerHandle(def, context);
        handles.push(h);
        return h;
      },
      (def) => def.enabled && def.autostart,
    );
    const defs = (raw: Record<string, unknown>): ServerDefinition[] => parse(raw).definitions;
    const first = await registry.reconcile(
      defs({ a: fixture('plain'), b: fixture('plain'), off: { ...fixture('plain'), autostart: false } }),
    );
    assert.deepEqual(first, { added: ['a', 'b', 'off'], removed: [], changed: [], unchanged: [] });
    const a = registry.get('a')!;
    const b = registry.get('b')!;
    // The reconcile asked for their starts without waiting for them: start() joins each.
    await Promise.all([a.start(), b.start()]);
    const aPid = (a.client as unknown as { transport: StdioTransport }).transport.pid;
    assert.equal(a.state.kind, 'running');
    assert.equal(registry.get('off')!.state.kind, 'stopped');

    const second = await registry.reconcile(
      defs({ a: fixture('plain'), b: { ...fixture('plain'), env: { CHANGED: '1' } }, c: fixture('plain') }),
    );
    assert.deepEqual(second, { added: ['c'], removed: ['off'], changed: ['b'], unchanged: ['a'] });
    assert.equal(registry.get('a'), a, 'unchanged server kept its handle');
    assert.equal((a.client as unknown as { transport: StdioTransport }).transport.pid, aPid, 'and its process');
    assert.notEqual(registry.get('b'), b);
    assert.equal(b.state.kind, 'stopped', 'the old launch of b was stopped');
    await Promise.all([registry.get('b')!.start(), registry.get('c')!.start()]);
    assert.equal(registry.get('b')!.state.kind, 'running');
    assert.equal(registry.get('c')!.state.kind, 'running');
    await registry.dispose();
    assert.ok([a, registry.get('b')].every((h) => !h || h.state.kind === 'stopped'));
  });

  describe('lifecycle transitions, one at a time', () => {
    /** Every transport any start made, to count the processes still alive. */
    const made: StdioTransport[] = [];
    afterEach(() => void made.splice(0));
    /** A context like the others whose prepare the test can hold, as a person's prompt would. */
    const recording = (prepare: LaunchContext['prepare'] = async (d) => d): LaunchContext => ({
      ...context,
      prepare,
      createTransport: async (d) => {
        const t = (await context.createTransport(d)) as StdioTransport;
        made.push(t);
        return t;
      },
    });
    const handleOf = (def: ServerDefinition, ctx: LaunchContext) => {
      const h = new ServerHandle(def, ctx);
      handles.push(h);
      return h;
    };
    const makeWith = (ctx: LaunchContext, raw: Record<string, unknown>) => handleOf(parse({ s: raw }).definitions[0], ctx);
    const isAlive = (pid: number) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    const livePids = () => made.map((t) => t.pid).filter((pid): pid is number => pid !== undefined && isAlive(pid));
    /** Resolves once the server has read a message with this method (the fixture reports each on stderr). */
    const received = (h: ServerHandle, method: string) =>
      nextEvent(
        h.onLog,
        10_000,
        (e) => e.source === 'stderr' && e.message.startsWith('RECEIVED') && e.message.includes(`"method":"${method}"`),
      );

    const sequences: Array<{ from: 'stopped' | 'running'; calls: Array<'start' | 'stop'>; ends: 'running' | 'stopped' }> = [
      { from: 'stopped', calls: ['start', 'stop', 'start'], ends: 'running' },
      { from: 'stopped', calls: ['start', 'stop', 'start', 'stop'], ends: 'stopped' },
      { from: 'running', calls: ['stop', 'start'], ends: 'running' },
      { from: 'running', calls: ['stop', 'start', 'stop', 'start'], ends: 'running' },
    ];
    for (const { from, calls, ends } of sequences) {
      it(`ends ${ends} after ${calls.join(', ')} asked at once from ${from}, with ${ends === 'running' ? 'one live process' : 'no process'}`, async () => {
        const h = makeWith(recording(), fixture('plain'));
        if (from === 'running') await h.start();
        const before = h.pid;
        await Promise.all(calls.map((call) => (call === 'start' ? h.start() : h.stop())));
        assert.equal(h.state.kind, ends, `the last call was ${calls[calls.length - 1]}`);
        if (ends === 'running') {
          assert.deepEqual(livePids(), [h.pid], 'exactly one process, the running one');
          assert.notEqual(h.pid, before, 'a new process: the stop in between was done');
          assert.deepEqual(
            h.tools.map((t) => t.name),
            ['work'],
            'its lists loaded',
          );
        } else {
          assert.deepEqual(livePids(), []);
        }
      });
    }

    it('stops at once a start that waits for a person, and does not launch once they answer', async () => {
      let answer!: () => void;
      const asked = new Promise<void>((resolve) => (answer = resolve));
      let prompts = 0;
      const h = makeWith(
        recording(async (d) => {
          prompts++;
          await asked;
          return d;
        }),
        fixture('plain'),
      );
      const starting = nextEvent(h.onDidChangeState, 5000, (s) => s.kind === 'starting');
      const waitingStart = h.start();
      await starting;
      await h.stop();
      assert.equal(h.state.kind, 'stopped', 'stopped while the prompt is still open');
      // The person answers the prompt of the abandoned start: nothing may launch from it.
      answer();
      await waitingStart;
      assert.equal(h.state.kind, 'stopped');
      assert.equal(made.length, 0, 'no process was started for the abandoned start');
      // A later start asks again and runs.
      await h.start();
      assert.equal(h.state.kind, 'running');
      assert.equal(prompts, 2);
    });

    for (const end of ['stop', 'dispose'] as const) {
      it(`tells the prompt of a start abandoned by ${end === 'stop' ? 'a stop' : 'removing the server'} to close: the signal prepare was given aborts`, async () => {
        let prompted!: (signal: AbortSignal) => void;
        const asked = new Promise<AbortSignal>((resolve) => (prompted = resolve));
        // A prompt that stays open until its start is abandoned, as the secret input box does.
        const h = makeWith(
          recording((_d, signal) => {
            prompted(signal);
            return new Promise((_, reject) => signal.addEventListener('abort', () => reject(new Error('prompt closed'))));
          }),
          fixture('plain'),
        );
        const start = h.start();
        const signal = await asked;
        assert.equal(signal.aborted, false, 'the prompt is open while the start waits');
        const closed = new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve()));
        await (end === 'stop' ? h.stop() : h.dispose());
        await closed;
        await start;
        assert.equal(made.length, 0, 'nothing launched for the abandoned start');
      });
    }

    it('stops a server whose initialize never answers without waiting for the startup timeout', async () => {
      const h = makeWith(recording(), { ...fixture('hang-initialize'), protocol: '2025-11-25', startupTimeoutMs: 600_000 });
      const initializing = received(h, 'initialize');
      const start = h.start();
      await initializing;
      assert.equal(h.state.kind, 'starting');
      await h.stop();
      await start;
      assert.equal(h.state.kind, 'stopped');
      assert.deepEqual(livePids(), [], 'its process ended with the stop');
    });

    it('reconciles without waiting for starts: a server whose initialize hangs holds up neither this reload nor the next', async () => {
      const registry = new ServerRegistry(
        (def) => handleOf(def, recording()),
        () => true,
      );
      const defs = (raw: Record<string, unknown>): ServerDefinition[] => parse(raw).definitions;
      const hanging = { ...fixture('hang-initialize'), protocol: '2025-11-25', startupTimeoutMs: 600_000 };
      await registry.reconcile(defs({ slow: hanging, a: fixture('plain') }));
      const slow = registry.get('slow')!;
      assert.equal(slow.state.kind, 'starting', 'the reconcile is done while slow still starts');
      await registry.get('a')!.start();
      assert.equal(registry.get('a')!.state.kind, 'running');
      // The next reconcile removes the hanging server and adds one: done without slow's handshake.
      const second = await registry.reconcile(defs({ a: fixture('plain'), b: fixture('plain') }));
      assert.deepEqual(second.removed, ['slow']);
      assert.equal(slow.state.kind, 'stopped');
      await registry.get('b')!.start();
      assert.equal(registry.get('b')!.state.kind, 'running');
      await registry.dispose();
    });
  });
});

describe('SerialQueue', () => {
  it('runs jobs one at a time in order, and a failed job fails only itself', async () => {
    const queue = new SerialQueue();
    const order: string[] = [];
    let releaseFirst!: () => void;
    const released = new Promise<void>((resolve) => (releaseFirst = resolve));
    const first = queue.run(async () => {
      order.push('first begins');
      await released;
      order.push('first ends');
    });
    const failing = queue.run(() => {
      order.push('failing');
      throw new Error('this reload failed');
    });
    const after = queue.run(() => {
      order.push('after');
      return 'applied';
    });
    assert.equal(queue.idle, false);
    releaseFirst();
    await first;
    await assert.rejects(failing, /this reload failed/);
    assert.equal(await after, 'applied', 'the job after a failed one still runs');
    assert.deepEqual(order, ['first begins', 'first ends', 'failing', 'after']);
    assert.equal(queue.idle, true);
  });
});
