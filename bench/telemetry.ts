// What exporting costs per call (issue 44): sequential gated tools/call of bench/fixture-server.mjs,
// audited into a file, with nothing exported, exported over OTLP/HTTP (protobuf) to a collector on
// 127.0.0.1 that answers at once, and exported to a collector that is down; interleaved, medians of
// the repetitions, in microseconds per call of wall time and of this process's CPU. Prints JSON (one
// line); bench/run.mjs shows it.
//
//   node --import tsx bench/telemetry.ts [--reps N]
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { McpClient, StdioTransport } from '../src/core';
import { AuditLog } from '../src/core/policy/audit';
import { thisMachine } from '../src/core/policy/gate';
import { GatedServer } from '../src/core/policy/gated';
import { createMasker } from '../src/core/scan/mask';
import type { ExportConfig } from '../src/core/telemetry/config';
import { cleanerOf, type TelemetryExporter } from '../src/core/telemetry/exporter';
import { startExporter } from '../src/core/telemetry/load';

const args = process.argv.slice(2);
const i = args.indexOf('--reps');
const REPS = i === -1 ? 5 : Number(args[i + 1]);
/** Calls per repetition. */
const CALLS = 2000;

/** A collector that answers every export at once (on 127.0.0.1; prints its URL). */
const COLLECTOR = `require('node:http').createServer((q, s) => { q.resume(); q.on('end', () => s.writeHead(200, { 'content-type': 'application/x-protobuf' }).end()); }).listen(0, '127.0.0.1', function () { console.log('http://127.0.0.1:' + this.address().port); });`;

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

type Setup = 'off' | 'exported' | 'collectorDown';

function exportConfig(url: string): ExportConfig {
  const signal = (s: string) => ({ url: `${url}/v1/${s}`, protocol: 'http/protobuf' as const, headers: {} });
  return {
    signals: { traces: signal('traces'), logs: signal('logs'), metrics: signal('metrics') },
    serviceName: 'bench',
    resource: {},
    exportContent: false,
  };
}

async function main(): Promise<void> {
  // The collector runs in a process of its own, so what this process spends is MCP Host's alone.
  const collector = spawn(process.execPath, ['-e', COLLECTOR], { stdio: ['ignore', 'pipe', 'inherit'] });
  const up = await new Promise<string>((resolve) => collector.stdout.once('data', (d: Buffer) => resolve(d.toString().trim())));
  // A port nobody listens on: the collector that is down.
  const downServer = http.createServer();
  await new Promise<void>((resolve) => downServer.listen(0, '127.0.0.1', resolve));
  const down = `http://127.0.0.1:${(downServer.address() as AddressInfo).port}`;
  await new Promise<void>((resolve) => downServer.close(() => resolve()));

  const client = new McpClient(
    new StdioTransport({ command: process.execPath, args: [path.join(__dirname, 'fixture-server.mjs'), 'stdio'] }),
    {
      protocol: '2025-11-25',
    },
  );
  await client.connect();
  const tool = (await client.listTools()).find((t) => t.name === 'echo')!;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-bench-otel-'));
  const masker = createMasker().masker;

  async function run(setup: Setup, rep: number): Promise<{ wallUs: number; cpuUs: number }> {
    let telemetry: TelemetryExporter | undefined;
    if (setup !== 'off')
      telemetry = startExporter({
        config: exportConfig(setup === 'exported' ? up : down),
        clean: cleanerOf((t) => t, masker),
        onError: () => undefined,
      });
    const audit = new AuditLog({
      file: path.join(dir, `${setup}-${rep}.jsonl`),
      masker,
      onRecords: telemetry && ((r) => telemetry!.auditRecords(r)),
    });
    const gate = new GatedServer({ name: 'bench', rawClient: client }, 'cli', {
      context: () => ({
        policy: { tools: {}, autoApprove: [], trustAnnotations: false },
        alwaysAllowed: false,
        fence: 'off',
        roots: [],
        machine: thisMachine(),
      }),
      server: () => ({ name: 'bench', scope: 'user', definition: '0'.repeat(64) }),
      audit,
      telemetry,
    });
    const cpu = process.cpuUsage();
    const started = performance.now();
    for (let n = 0; n < CALLS; n++) await gate.callTool(tool, { text: 'x' });
    const wall = performance.now() - started;
    const used = process.cpuUsage(cpu);
    await audit.close();
    await telemetry?.shutdown(2000);
    return { wallUs: (wall * 1000) / CALLS, cpuUs: (used.user + used.system) / CALLS };
  }

  const setups: Setup[] = ['off', 'exported', 'collectorDown'];
  const results = Object.fromEntries(setups.map((s) => [s, { wallUs: [] as number[], cpuUs: [] as number[] }])) as Record<
    Setup,
    { wallUs: number[]; cpuUs: number[] }
  >;
  // Warm every path once, then rotate which goes first.
  for (const s of setups) await run(s, -1);
  for (let rep = 0; rep < REPS; rep++) {
    for (let k = 0; k < setups.length; k++) {
      const s = setups[(k + rep) % setups.length];
      const r = await run(s, rep);
      results[s].wallUs.push(r.wallUs);
      results[s].cpuUs.push(r.cpuUs);
    }
  }
  await client.close();
  collector.kill();
  fs.rmSync(dir, { recursive: true, force: true });
  const medians = Object.fromEntries(setups.map((s) => [s, { wallUs: median(results[s].wallUs), cpuUs: median(results[s].cpuUs) }]));
  console.log(JSON.stringify({ reps: REPS, calls: CALLS, medians }));
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
