// `mcp-host serve` (issue 42): the SDK's client calling `echo` of test/fixtures/gateway-upstream.mjs
// three ways over stdio, in one run, interleaved and rotated: directly; through a pass-through of the
// same shape (bench/pipe-relay.mjs: one more process that pipes the bytes and decides nothing, the hop
// floor); and through `mcp-host serve` (dist/cli.js, the gate, origin agent), sequential and 256 in
// flight. The target: serve's median at most 1.5 × the pass-through's. Then the cost of an agent
// connected to the editor's gateway with five servers: the resident memory of its relay process (the
// one process it costs, whatever the number of servers), and of `serve` running five.
// Prints JSON (one line); bench/run.mjs shows it.
//
//   node --import tsx bench/serve.ts [--reps N] [--calls N]
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { echoCalls, median } from './echoCalls';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { launcherPath, writeGatewayRecord, writeLauncher } from '../src/core/agents/rendezvous';
import { Catalog } from '../src/core/gateway/catalog';
import { ChatGateway } from '../src/core/gateway/sdkGateway';
import { share, upstreamHandle, UPSTREAM } from '../test/helpers/gateway';
import { vmRssKb } from './procMemory';

const args = process.argv.slice(2);
const option = (name: string, fallback: number): number => {
  const i = args.indexOf(name);
  return i === -1 ? fallback : Number(args[i + 1]);
};
const REPS = option('--reps', 5);
const CALLS = option('--calls', 1000);
const IN_FLIGHT = 256;
const ROUNDS = 10;
const ROOT = path.join(__dirname, '..');
const CLI = path.join(ROOT, 'dist', 'cli.js');
const RELAY = path.join(ROOT, 'dist', 'relay.js');

const { sequential, concurrent } = echoCalls(CALLS, IN_FLIGHT, ROUNDS);

async function connect(
  command: string,
  argv: string[],
  env?: Record<string, string>,
  cwd?: string,
): Promise<{ client: Client; pid: number }> {
  const transport = new StdioClientTransport({ command, args: argv, env, cwd, stderr: 'ignore' });
  const client = new Client({ name: 'bench-agent', version: '1.0.0' });
  await client.connect(transport);
  return { client, pid: transport.pid! };
}

const rssKb = (pid: number): number => vmRssKb(readFileSync(`/proc/${pid}/status`, 'utf8')) ?? 0;

async function perCall(): Promise<Record<string, unknown>> {
  const paths = {
    direct: (await connect(process.execPath, [UPSTREAM])).client,
    passThrough: (await connect(process.execPath, [path.join(__dirname, 'pipe-relay.mjs'), process.execPath, UPSTREAM])).client,
    serve: (await connect(process.execPath, [CLI, '--stdio', `${process.execPath} ${UPSTREAM}`, 'serve'])).client,
  };
  for (const client of Object.values(paths)) await sequential(client);
  const times: Record<string, { sequential: number[]; concurrent: number[] }> = {};
  const order = Object.keys(paths) as Array<keyof typeof paths>;
  for (const name of order) times[name] = { sequential: [], concurrent: [] };
  for (let rep = 0; rep < REPS; rep++) {
    const turn = [...order.slice(rep % order.length), ...order.slice(0, rep % order.length)];
    for (const name of turn) times[name].sequential.push(await sequential(paths[name]));
    for (const name of turn) times[name].concurrent.push(await concurrent(paths[name]));
  }
  const medianMs = Object.fromEntries(
    Object.entries(times).map(([n, t]) => [n, { sequential: median(t.sequential), concurrent: median(t.concurrent) }]),
  );
  await Promise.all(Object.values(paths).map((c) => c.close()));
  return {
    calls: CALLS,
    inFlight: IN_FLIGHT,
    rounds: ROUNDS,
    reps: REPS,
    medianMs,
    ratios: {
      serveVsPassThroughSequential: medianMs.serve.sequential / medianMs.passThrough.sequential,
      serveVsPassThroughConcurrent: medianMs.serve.concurrent / medianMs.passThrough.concurrent,
      serveVsDirectSequential: medianMs.serve.sequential / medianMs.direct.sequential,
      serveVsDirectConcurrent: medianMs.serve.concurrent / medianMs.direct.concurrent,
      passThroughVsDirectSequential: medianMs.passThrough.sequential / medianMs.direct.sequential,
    },
  };
}

/** An agent given five servers: its relay to the editor's gateway (in this process), and `serve` running the same five itself. */
async function memory(): Promise<Record<string, unknown>> {
  const home = mkdtempSync(path.join(tmpdir(), 'bench-agent-'));
  const project = path.join(home, 'project');
  mkdirSync(project);
  const handles = Array.from({ length: 5 }, () => upstreamHandle({ tools: {} }));
  await Promise.all(handles.map((h) => h.start()));
  const servers = handles.map((h, i) => ({ name: `s${i + 1}`, forwarder: share(h).forwarder }));
  const gateway = await ChatGateway.start({
    token: 'chat',
    relaySocketPath: path.join(home, 'r.sock'),
    forwarderFor: () => undefined,
    agents: { token: 'agents', catalogFor: () => new Catalog(servers, true) },
  });
  await writeLauncher(home, process.execPath, RELAY);
  await writeGatewayRecord(home, `file://${project}`, {
    version: 1,
    folders: [project],
    address: ChatGateway.relayTarget(gateway.relayAddress),
    token: 'agents',
    pid: process.pid,
    written: Date.now(),
  });
  const relay = await connect(launcherPath(home), ['mcp-json'], { PATH: process.env.PATH ?? '', HOME: home }, project);
  const tools = (await relay.client.listTools()).tools.length;
  for (let i = 0; i < 200; i++) await relay.client.callTool({ name: `s${(i % 5) + 1}__echo`, arguments: { text: 'x' } });
  const relayRssKb = rssKb(relay.pid);
  await relay.client.close();
  await gateway.close();
  await Promise.all(handles.map((h) => h.dispose()));

  const config = path.join(home, 'five.json');
  require('node:fs').writeFileSync(
    config,
    JSON.stringify({
      mcpServers: Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`s${i + 1}`, { command: process.execPath, args: [UPSTREAM] }])),
    }),
  );
  const served = await connect(process.execPath, [CLI, '--config', config, 'serve']);
  for (let i = 0; i < 200; i++) await served.client.callTool({ name: `s${(i % 5) + 1}__echo`, arguments: { text: 'x' } });
  const serveRssKb = rssKb(served.pid);
  await served.client.close();
  return { servers: 5, tools, relayProcesses: 1, relayRssKb, serveRssKb };
}

async function main(): Promise<void> {
  const calls = await perCall();
  const agent = await memory();
  console.log(JSON.stringify({ ...calls, agent }));
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
