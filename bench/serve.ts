// `mcp-host serve` (issue 42): the SDK's client calling `echo` of test/fixtures/gateway-upstream.mjs
// three ways over stdio, in one run, interleaved and rotated: directly; through a pass-through of the
// same shape (bench/pipe-relay.mjs: one more process that pipes the bytes and decides nothing, the hop
// floor); and through `mcp-host serve` (dist/cli.js, the gate, origin agent: an `mcp.json` entry that
// trusts the server's read-only hints, the flow guard on, every call audited in a file), sequential and
// 256 in flight, every answer checked to be the echo. The target: serve's median at most 1.5 × the pass-through's. Then the cost of an agent
// connected to the editor's gateway with five servers: the resident memory of its relay process (the
// one process it costs, whatever the number of servers), and of `serve` running five.
// Prints JSON (one line); bench/run.mjs shows it.
//
//   node --import tsx bench/serve.ts [--reps N] [--calls N]
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { echoCalls } from './echoCalls';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { launcherPath, writeGatewayRecord, writeLauncher } from '../src/core/agents/rendezvous';
import { Catalog } from '../src/core/gateway/catalog';
import { verifyAuditFile } from '../src/core/policy/auditVerify';
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

const timed = echoCalls(CALLS, IN_FLIGHT, ROUNDS);

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

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** A process's user and system CPU time so far, from /proc (clock ticks of 10 ms). */
const cpuMs = (pid: number): number => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
};

const rssKb = (pid: number): number => vmRssKb(readFileSync(`/proc/${pid}/status`, 'utf8')) ?? 0;

async function perCall(): Promise<Record<string, unknown>> {
  // serve as an agent's configuration runs it: one entry whose read-only hint is trusted, so `echo`
  // is no sink and every call goes through the whole gate to the server (the flow guard on, each call
  // audited in a file); a bench of refusals would time nothing.
  const dir = mkdtempSync(path.join(tmpdir(), 'bench-serve-'));
  const config = path.join(dir, 'mcp.json');
  writeFileSync(config, JSON.stringify({ mcpServers: { up: { command: process.execPath, args: [UPSTREAM], trustAnnotations: true } } }));
  const audit = path.join(dir, 'audit.jsonl');
  const served = await connect(process.execPath, [CLI, '--config', config, '--audit', audit, 'serve'], undefined, dir);
  const clients = {
    direct: (await connect(process.execPath, [UPSTREAM])).client,
    passThrough: (await connect(process.execPath, [path.join(__dirname, 'pipe-relay.mjs'), process.execPath, UPSTREAM])).client,
    serve: served.client,
  };
  const cpuBefore = cpuMs(served.pid);
  const medianMs = await timed.medians({ ...clients, serve: { client: clients.serve, tool: 'up__echo' } }, REPS);
  const cpuAfter = cpuMs(served.pid);
  await Promise.all(Object.values(clients).map((c) => c.close()));
  // serve writes what is left of its audit as it exits.
  while (alive(served.pid)) await new Promise((resolve) => setTimeout(resolve, 50));
  // Every call went through the gate: its record is in the chain (rotated files included), and the chain is intact.
  const verdict = await verifyAuditFile(audit);
  if (!verdict.ok) throw new Error(`serve's audit: ${verdict.reason} (${verdict.file}:${verdict.line})`);
  const audited = verdict.records.filter((r) => 'method' in r && r.method === 'tools/call' && r.name === 'echo').length;
  const servedCalls = (REPS + 1) * CALLS + REPS * ROUNDS * IN_FLIGHT;
  if (audited !== servedCalls) throw new Error(`serve audited ${audited} calls of ${servedCalls}`);
  return {
    calls: CALLS,
    inFlight: IN_FLIGHT,
    rounds: ROUNDS,
    reps: REPS,
    medianMs,
    auditedRecords: audited,
    // Steadier than wall time on a shared machine: what serve's own process spent per call it served.
    serveCpuUsPerCall: ((cpuAfter - cpuBefore) * 1000) / servedCalls,
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
  writeFileSync(
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
