// Runs inside the real VS Code's extension host (bench/chat-vscode.mjs bundles it as the only suite of
// the harness's runner extension, whose manifest then declares the provider below): the cost of sharing
// a server with VS Code's chat, measured the way the chat calls, `vscode.lm.invokeTool` through VS
// Code's own MCP client. The same fixture (test/fixtures/gateway-upstream.mjs) twice:
// - direct: offered by this extension's own MCP server definition provider as a stdio server, so VS
//   Code runs it and talks to it itself;
// - shared: one of MCP Host's servers with `shareWithChat`, which VS Code reaches through MCP Host's
//   gateway, measured once per `mcpHost.chat.connection`: `relay` (VS Code's stdio client → MCP Host's
//   relay process → the gateway's socket → the gate → MCP Host's client → the same stdio server),
//   then `http` (VS Code's HTTP client → the gateway's HTTP route → the same);
// - floor: VS Code's own HTTP client against bench/http-floor.mjs, an endpoint that answers at once
//   with no server behind it, offered by the same provider: what any HTTP server costs VS Code here;
// - relay floor: VS Code's stdio client against MCP Host's relay (dist/relay.js) piped to a socket in
//   this extension host that answers at once: what the relay's extra process costs, with no gateway.
// - hop floor: the relay again, and this extension host piping the bytes of its socket to a copy of
//   the fixture of its own, parsing nothing: what any way through a relay and the extension host to a
//   running server costs, with no gateway, no gate and no client. Shared minus hop floor is what MCP
//   Host's gateway itself costs; hop floor over direct is what no gateway behind a relay can go under.
// - memory: while the shared server is in use, the resident size (VmRSS, /proc) of each relay VS Code
//   runs for it, found by its command line below the VS Code server the harness started (none with
//   `http`), and the extension host's own beside its size before VS Code started any of the servers.
// Both `echo`s are read-only to VS Code (the fixture marks it `readOnlyHint`, and the shared entry
// trusts annotations, so MCP Host passes the hint on): neither side has a confirmation to get through.
// For each connection, after a warm-up, `CALLS` sequential calls on each side, in `BLOCKS` interleaved
// blocks (direct, shared, floor, then shared, floor, direct, …), each call timed alone. Writes p50/p90
// of each and the ratios to $MCP_HOST_BENCH_OUT as JSON. Never part of `npm test`: it times things.
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { groupTop, residentUnder } from './procMemory';

/** The id bench/chat-vscode.mjs declares in the runner's `contributes.mcpServerDefinitionProviders`. */
const DIRECT_PROVIDER_ID = process.env.MCP_HOST_BENCH_PROVIDER ?? '';
const CALLS = Number(process.env.MCP_HOST_BENCH_CALLS || 200);
const BLOCKS = Number(process.env.MCP_HOST_BENCH_BLOCKS || 4);
const WARMUP = Number(process.env.MCP_HOST_BENCH_WARMUP || 50);

/** What VS Code 1.139 offers that @types/vscode 1.90 does not name. */
interface McpStdioDefinitionLike {
  label: string;
}
interface McpBenchApi {
  lm: {
    tools: ReadonlyArray<{ name: string }>;
    invokeTool(name: string, options: { input: object; toolInvocationToken: undefined }): Thenable<{ content: unknown[] }>;
    registerMcpServerDefinitionProvider(
      id: string,
      provider: {
        provideMcpServerDefinitions(): McpStdioDefinitionLike[];
        resolveMcpServerDefinition(d: McpStdioDefinitionLike): McpStdioDefinitionLike;
      },
    ): vscode.Disposable;
  };
  McpStdioServerDefinition: new (label: string, command: string, args: string[], env?: Record<string, string>) => McpStdioDefinitionLike;
  McpHttpServerDefinition: new (label: string, uri: vscode.Uri) => McpStdioDefinitionLike;
}
const api = () => vscode as unknown as McpBenchApi;

const repo = () => {
  const root = process.env.MCP_HOST_REPO;
  if (!root) throw new Error('MCP_HOST_REPO is not set: run through bench/chat-vscode.mjs');
  return root;
};
const textOf = (result: { content: unknown[] }) => result.content.map((c) => (c as { value?: string }).value ?? '').join('');
/**
 * VS Code names a server's tools `mcp_<prefix>_<tool>`, the prefix from the server's `serverInfo`
 * (title, else name, 13 characters at most): the fixture's own name for the direct one, the
 * server's name in MCP Host for the shared one (the gateway names it so).
 */
const toolOf = (prefix: string) => api().lm.tools.find((t) => new RegExp(`^mcp_${prefix}\\d*_echo$`).test(t.name))?.name;
/** Each connection shares the fixture under its own name, so its tool shows only once VS Code has that connection's definition. */
const CONNECTIONS = [
  { connection: 'relay', server: 'shared' },
  { connection: 'http', server: 'sharedhttp' },
].filter(({ connection }) => (process.env.MCP_HOST_BENCH_CONNECTIONS ?? 'relay,http').split(',').includes(connection));

function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}
const summary = (samples: number[]) => ({
  p50: percentile(samples, 50),
  p90: percentile(samples, 90),
  min: Math.min(...samples),
  max: Math.max(...samples),
});

async function waitFor<T>(probe: () => T | undefined | Promise<T | undefined>, what: () => string, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what()}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** How MCP Host's gateway listens in this window: a Unix socket in its global storage when the path is short enough, else TCP. */
function gatewayTransport(): 'socket' | 'tcp' {
  const logs = process.env.MCP_HOST_VSCODE_LOGS;
  if (!logs) return 'tcp';
  const storage = path.join(logs, '..', 'User', 'globalStorage', 'mcp-host.mcp-host');
  const sockets = fs.existsSync(storage) ? fs.readdirSync(storage).filter((f) => /^gw-.*\.sock$/.test(f)) : [];
  return sockets.length ? 'socket' : 'tcp';
}

/**
 * The relay floor: dist/relay.js as VS Code starts it for a shared server, its socket answered here,
 * at once, with no SDK and no gate (initialize, tools/list with one read-only echo, every call).
 */
async function relayFloorDefinition(
  Stdio: McpBenchApi['McpStdioServerDefinition'],
): Promise<vscode.Disposable & { definition: McpStdioDefinitionLike }> {
  const socketPath = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'rf-')), 'r.sock');
  const server = net.createServer((socket) => {
    socket.setNoDelay?.(true);
    let buffered = '';
    let hello = false;
    socket.on('error', () => socket.destroy());
    socket.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      for (let end = buffered.indexOf('\n'); end !== -1; end = buffered.indexOf('\n')) {
        const line = buffered.slice(0, end);
        buffered = buffered.slice(end + 1);
        if (!hello) {
          hello = true;
          continue;
        }
        const m = JSON.parse(line) as {
          id?: number | string;
          method: string;
          params?: { protocolVersion?: string; arguments?: { text?: string } };
        };
        if (m.id === undefined) continue;
        const result =
          m.method === 'initialize'
            ? {
                protocolVersion: m.params?.protocolVersion,
                capabilities: { tools: {} },
                serverInfo: { name: 'relay-floor', version: '1.0.0' },
              }
            : m.method === 'tools/list'
              ? {
                  tools: [
                    {
                      name: 'echo',
                      inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
                      annotations: { readOnlyHint: true },
                    },
                  ],
                }
              : { content: [{ type: 'text', text: String(m.params?.arguments?.text ?? '') }] };
        socket.write(`${JSON.stringify({ jsonrpc: '2.0', id: m.id, result })}\n`);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  const definition = new Stdio('relay-floor', process.execPath, [path.join(repo(), 'dist', 'relay.js'), 'floor'], {
    MCP_HOST_GATEWAY: socketPath,
    MCP_HOST_GATEWAY_TOKEN: 'floor',
  });
  return { definition, dispose: () => void server.close() };
}

/**
 * The hop floor (above): the relay, its first line dropped, then every byte both ways between its
 * socket and a copy of the fixture this extension host runs, under the name `hop-floor`.
 */
async function hopFloorDefinition(
  Stdio: McpBenchApi['McpStdioServerDefinition'],
  fixture: string,
): Promise<vscode.Disposable & { definition: McpStdioDefinitionLike }> {
  const socketPath = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'hf-')), 'h.sock');
  const children = new Set<ReturnType<typeof spawn>>();
  const server = net.createServer((socket) => {
    socket.setNoDelay?.(true);
    const child = spawn(process.execPath, [fixture], {
      stdio: ['pipe', 'pipe', 'ignore'],
      env: { ...process.env, GATEWAY_UPSTREAM_NAME: 'hop-floor' },
    });
    children.add(child);
    let head: Buffer | undefined = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      if (!head) return void child.stdin.write(chunk);
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf(0x0a);
      if (end === -1) return;
      const rest = head.subarray(end + 1);
      head = undefined;
      if (rest.length) child.stdin.write(rest);
    });
    child.stdout.on('data', (chunk: Buffer) => socket.write(chunk));
    socket.on('error', () => socket.destroy());
    socket.on('close', () => child.kill());
    child.on('exit', () => {
      children.delete(child);
      socket.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  const definition = new Stdio('hop-floor', process.execPath, [path.join(repo(), 'dist', 'relay.js'), 'floor'], {
    MCP_HOST_GATEWAY: socketPath,
    MCP_HOST_GATEWAY_TOKEN: 'floor',
  });
  return {
    definition,
    dispose: () => {
      for (const child of children) child.kill();
      server.close();
    },
  };
}

/** A CPU profile of this extension host while `run` runs (MCP_HOST_BENCH_PROFILE: where it goes). */
async function profiled(file: string, run: () => Promise<void>): Promise<void> {
  const inspector = await import('node:inspector');
  const session = new inspector.Session();
  session.connect();
  const post = (method: string, params?: object) =>
    new Promise<unknown>((resolve, reject) => session.post(method, params ?? {}, (e, r) => (e ? reject(e) : resolve(r))));
  await post('Profiler.enable');
  await post('Profiler.setSamplingInterval', { interval: 100 });
  await post('Profiler.start');
  const started = performance.now();
  await run();
  const wall = performance.now() - started;
  const { profile } = (await post('Profiler.stop')) as { profile: unknown };
  fs.writeFileSync(file, JSON.stringify(profile));
  fs.writeFileSync(`${file}.wall`, String(wall));
  session.disconnect();
}

describe('chat-vscode bench', function () {
  this.timeout(600_000);
  const disposables: vscode.Disposable[] = [];
  after(async () => {
    for (const d of disposables.splice(0)) d.dispose();
    await vscode.workspace.getConfiguration('mcpHost').update('servers', undefined, vscode.ConfigurationTarget.Global);
    await vscode.workspace.getConfiguration('mcpHost').update('chat.connection', undefined, vscode.ConfigurationTarget.Global);
  });

  it(`times ${CALLS} sequential vscode.lm.invokeTool calls of a shared server's echo against the same server offered directly`, async () => {
    const fixture = path.join(repo(), 'test', 'fixtures', 'gateway-upstream.mjs');
    const { lm, McpStdioServerDefinition, McpHttpServerDefinition } = api();
    // Both run by the extension host's own Node, the one VS Code would run `node` with here.
    const direct = new McpStdioServerDefinition('direct', process.execPath, [fixture]);
    const floorServer = spawn(process.execPath, [path.join(repo(), 'bench', 'http-floor.mjs')], { stdio: ['ignore', 'pipe', 'ignore'] });
    disposables.push({ dispose: () => void floorServer.kill() });
    const floorPort = await new Promise<number>((resolve, reject) => {
      floorServer.stdout.on('data', (chunk: Buffer) => {
        const m = /listening (\d+)/.exec(chunk.toString());
        if (m) resolve(Number(m[1]));
      });
      floorServer.once('exit', () => reject(new Error('bench/http-floor.mjs exited')));
    });
    const floor = new McpHttpServerDefinition('floor', vscode.Uri.parse(`http://127.0.0.1:${floorPort}/mcp`));
    const relayFloor = await relayFloorDefinition(McpStdioServerDefinition);
    disposables.push(relayFloor);
    const hopFloor = await hopFloorDefinition(McpStdioServerDefinition, fixture);
    disposables.push(hopFloor);
    disposables.push(
      lm.registerMcpServerDefinitionProvider(DIRECT_PROVIDER_ID, {
        provideMcpServerDefinitions: () => [direct, floor, relayFloor.definition, hopFloor.definition],
        resolveMcpServerDefinition: (d) => d,
      }),
    );
    const config = () => vscode.workspace.getConfiguration('mcpHost');
    const phases = [];
    let n = 0;
    const call = async (tool: string): Promise<number> => {
      const text = `n${n++}`;
      const started = performance.now();
      const result = await lm.invokeTool(tool, { input: { text }, toolInvocationToken: undefined });
      const ms = performance.now() - started;
      // A timing of anything but the real call would be worthless.
      if (textOf(result) !== text) throw new Error(`${tool} answered ${JSON.stringify(textOf(result))} to ${text}`);
      return ms;
    };
    // The extension host before VS Code has started any of these servers. Not a with-and-without of
    // sharing: by each phase's figure it also holds VS Code's clients of the direct server and the floors,
    // and every call made so far; the phases run one after the other in the same extension host.
    const extHostRssKb = () => Math.round(process.memoryUsage().rss / 1024);
    const extHostAtStartKb = extHostRssKb();
    // The VS Code server the harness started (its process group's top): the relays are found below it.
    const serverPid = groupTop(process.pid);
    for (const { connection, server } of CONNECTIONS) {
      await config().update('chat.connection', connection, vscode.ConfigurationTarget.Global);
      await config().update(
        'servers',
        { [server]: { command: process.execPath, args: [fixture], shareWithChat: true, trustAnnotations: true } },
        vscode.ConfigurationTarget.Global,
      );
      // VS Code reads both providers in its own time; a start asked for before it has a definition starts nothing.
      const tools = await waitFor(
        async () => {
          const all = [toolOf('gateway-upstr'), toolOf(server), toolOf('floor'), toolOf('relay-floor'), toolOf('hop-floor')];
          if (all.every(Boolean)) return all as [string, string, string, string, string];
          await vscode.commands.executeCommand('workbench.mcp.startServer', '*', { waitForLiveTools: true });
          return undefined;
        },
        () =>
          `the five echo tools in vscode.lm.tools (there: ${api()
            .lm.tools.map((t) => t.name)
            .filter((name) => name.startsWith('mcp_'))
            .join(', ')})`,
      );
      const sides = { direct: tools[0], shared: tools[1], floor: tools[2], relayFloor: tools[3], hopFloor: tools[4] };
      for (let i = 0; i < WARMUP; i++) for (const tool of Object.values(sides)) await call(tool);

      const samples: Record<keyof typeof sides, number[]> = { direct: [], shared: [], floor: [], relayFloor: [], hopFloor: [] };
      const perBlock = Math.ceil(CALLS / BLOCKS);
      const names = Object.keys(sides) as Array<keyof typeof sides>;
      for (let block = 0; block < BLOCKS; block++) {
        // Rotated, so no side always runs first.
        const order = [...names.slice(block % names.length), ...names.slice(0, block % names.length)];
        for (const side of order)
          for (let i = 0; i < perBlock && samples[side].length < CALLS; i++) samples[side].push(await call(sides[side]));
      }
      // While the shared server is in use: each relay VS Code runs for it (dist/relay.js <server name>;
      // the floors' relays are named `floor`), none with `http`.
      const relays = residentUnder(serverPid, (argv) => /[\\/]dist[\\/]relay\.js$/.test(argv[1] ?? '') && argv[2] === server);
      const memory = {
        serverPid,
        relayProcesses: relays.length,
        relayRssKb: relays.reduce((sum, r) => sum + r.rssKb, 0),
        relayRssKbEach: relays.map((r) => r.rssKb),
        extHostRssKb: extHostRssKb(),
        extHostAtStartKb,
      };
      const profile = process.env.MCP_HOST_BENCH_PROFILE;
      if (profile)
        await profiled(`${profile}-${connection}.cpuprofile`, async () => {
          for (let i = 0; i < CALLS; i++) await call(sides.shared);
        });
      const directMs = summary(samples.direct);
      const sharedMs = summary(samples.shared);
      const floorMs = summary(samples.floor);
      const relayFloorMs = summary(samples.relayFloor);
      const hopFloorMs = summary(samples.hopFloor);
      phases.push({
        connection,
        tools: sides,
        directMs,
        sharedMs,
        floorMs,
        relayFloorMs,
        hopFloorMs,
        relayFloorRatioP50: relayFloorMs.p50 / directMs.p50,
        hopFloorRatioP50: hopFloorMs.p50 / directMs.p50,
        sharedVsHopFloorP50: sharedMs.p50 / hopFloorMs.p50,
        ratioP50: sharedMs.p50 / directMs.p50,
        floorRatioP50: floorMs.p50 / directMs.p50,
        sharedVsFloorP50: sharedMs.p50 / floorMs.p50,
        ratioP90: sharedMs.p90 / directMs.p90,
        memory,
      });
    }
    const result = {
      vscode: vscode.version,
      calls: CALLS,
      blocks: BLOCKS,
      warmup: WARMUP,
      gatewayTransport: gatewayTransport(),
      phases,
    };
    const out = process.env.MCP_HOST_BENCH_OUT;
    if (!out) throw new Error('MCP_HOST_BENCH_OUT is not set: run through bench/chat-vscode.mjs');
    fs.writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
  });
});
