#!/usr/bin/env node
// `npm run bench`: our McpClient against the official SDK clients (v1 `@modelcontextprotocol/sdk`
// and v2 `@modelcontextprotocol/client`) on the same fixture server, each repetition in a fresh
// child process per client (so peak RSS is that client's alone), interleaved and rotated
// (A B C D, B C D A, …):
// - the legacy (initialize-era) workloads against bench/fixture-server.mjs, with ours, v1, v2 and
//   "before" (today's bench program on src/ as it was before the 2026-07-28 work, see --baseline),
//   plus the floor (raw ndjson echo through a pipe);
// - the modern (2026-07-28, stateless) workloads against bench/v2-fixture-server.mjs (v2 SDK
//   server), with the two clients that speak that era: ours and v2.
// Prints a table and every target as met or not met, and writes bench/results.json; the previous
// results file, if any, is shown alongside for comparison.
//
// - the chat gateway (issue 22, bench/gateway.ts): the SDK's client through MCP Host's gateway against
//   the same call made directly to the server; `--only gateway` runs it alone.
// - the chat gateway in the real VS Code (issue 22, bench/chat-vscode.mjs): `vscode.lm.invokeTool` of
//   a shared server's tool against the same server offered to VS Code directly, through the
//   real-VS-Code harness; `--only chat-vscode` runs it alone (and records it in bench/results.json).
//
// - the sandbox (issue 35, bench/sandbox.ts): spawn + initialize of a stdio server plain and inside the
//   operating-system sandbox, as a ratio; `--only sandbox` runs it alone.
// - `mcp-host serve` (issue 42, bench/serve.ts): a call through serve against a pass-through of the same
//   shape and the server directly, and an agent's memory with five servers; `--only serve` runs it alone.
//
// - the flow guard (issue 43, bench/flowGuard.ts): the per-call check of a sink in a session holding
//   1 MB of private results, and the record of one result; `--only flowguard` runs it alone.
// - telemetry (issue 44, bench/telemetry.ts): what exporting spans, audit log records and the metric over
//   OTLP costs per gated call, against no export and a collector that is down; `--only telemetry` runs it alone
//   (and records it in bench/results.json).
//
//   node bench/run.mjs [--reps N] [--only name,name] [--baseline REF | --no-baseline] [--no-extension]
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildBaseline, buildBench } from './build.mjs';
import { measureChatInVsCode, printChatInVsCode } from './chat-vscode.mjs';
import { stats } from './stats.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.join(here, '..');
const args = process.argv.slice(2);
const option = (name) => {
  const i = args.indexOf(name);
  return i === -1 ? undefined : args[i + 1];
};
const reps = Number(option('--reps') ?? 5);
const only = option('--only')?.split(',');
/** The in-VS-Code chat bench's own: `--runs N` fresh socket VS Codes, `--relay-only` (bench/chat-vscode.mjs). */
const chatOptions = {
  ...(option('--runs') === undefined ? {} : { runs: Number(option('--runs')) }),
  relayOnly: args.includes('--relay-only'),
};
/** main just before the first commit of the 2026-07-28 work (b787c61, issue 15): "before" means src/ as it was there. */
const BASELINE_REF = option('--baseline') ?? '06c17b49910e57257ac8118bdbceda9e9e27ec53';

/** The targets of issue 15, as ratios of medians in one run. `vs` names the other column. */
const V2 = { vs: 'sdk2', max: 0.8 };
const V1 = { vs: 'sdk', max: 0.6 };
const FLOOR = { vs: 'floor', max: 1.2 };
/** Not slower than before: the median may sit up to 5 % above, the spread of medians of the same code here. */
const BEFORE = { vs: 'baseline', max: 1.05 };

const WORKLOADS = [
  { id: 1, name: 'initialize', era: 'legacy', title: 'spawn + initialize (stdio)', targets: [V2, BEFORE] },
  { id: 2, name: 'sequential', era: 'legacy', title: '5,000 sequential tools/call (stdio)', targets: [V2, FLOOR, BEFORE], floor: true },
  { id: 3, name: 'concurrent', era: 'legacy', title: '256 in flight × 20 rounds (stdio)', targets: [V2, V1, BEFORE] },
  { id: 4, name: 'large', era: 'legacy', title: 'resources/read 10 MB text + 10 MB blob (stdio)', targets: [V2, V1, BEFORE] },
  { id: '5a', name: 'http-sequential', era: 'legacy', title: '5,000 sequential tools/call (Streamable HTTP)', targets: [V2, V1, BEFORE] },
  { id: '5b', name: 'http-concurrent', era: 'legacy', title: '256 in flight × 20 rounds (Streamable HTTP)', targets: [V2, V1, BEFORE] },
  {
    id: '7a',
    name: 'modern-http-sequential',
    era: 'modern',
    title: '2026-07-28: 5,000 sequential tools/call (stateless HTTP)',
    targets: [V2],
  },
  {
    id: '7b',
    name: 'modern-http-concurrent',
    era: 'modern',
    title: '2026-07-28: 256 in flight × 20 rounds (stateless HTTP)',
    targets: [V2],
  },
  { id: '7c', name: 'modern-sequential', era: 'modern', title: '2026-07-28: 5,000 sequential tools/call (stdio)', targets: [V2] },
].filter((w) => !only || only.includes(w.name));

const LABELS = { ours: 'ours', sdk: 'SDK v1', sdk2: 'SDK v2', baseline: 'before', floor: 'floor' };
const PROGRAMS = { ours: 'client-ours', sdk: 'client-sdk', sdk2: 'client-sdk2', baseline: 'client-baseline', floor: 'client-floor' };

/** Runs one client child for one workload; resolves with { ms, cpuMs, serverCpuMs?, maxRssKb }. */
function runChild(program, workload) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(root, '.bench', `${program}.js`), workload], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (err += c));
    child.on('close', (code) => {
      const line = out.trim().split('\n').pop();
      if (code === 0 && line) resolve(JSON.parse(line));
      else reject(new Error(`${program} ${workload} exited with ${code}: ${err.trim().split('\n').slice(-5).join('\n')}`));
    });
  });
}

const fmtMs = (s) => (s ? `${s.median.toFixed(0)} (${s.min.toFixed(0)}–${s.max.toFixed(0)})` : '—');
const fmtMb = (kb) => `${(kb / 1024).toFixed(0)}`;

async function main() {
  if (only?.length === 1 && only[0] === 'gateway') return printGateway(await runGatewayBench());
  if (only?.length === 1 && only[0] === 'chat-vscode')
    return recordOnly('chatVscode', await measureChatInVsCode(chatOptions), printChatInVsCode);
  if (only?.length === 1 && only[0] === 'sandbox') return printSandbox(await runSandboxBench());
  if (only?.length === 1 && only[0] === 'flowguard') return printFlowGuard(await runTsBench('flowGuard.ts'));
  if (only?.length === 1 && only[0] === 'telemetry') return recordOnly('telemetry', await runTelemetryBench(), printTelemetry);
  if (only?.length === 1 && only[0] === 'serve') return recordOnly('serve', await runServeBench(), printServe);
  process.stdout.write('Building the benchmark clients…\n');
  await buildBench(['client-ours', 'client-sdk', 'client-sdk2', 'client-floor']);
  let baselineNote;
  if (!args.includes('--no-baseline') && WORKLOADS.some((w) => w.era === 'legacy')) {
    try {
      await buildBaseline(BASELINE_REF);
    } catch (error) {
      baselineNote = `no "before" column: src/ at ${BASELINE_REF} could not be read (${String(error.message ?? error).split('\n')[0]})`;
    }
  } else baselineNote = 'no "before" column (--no-baseline)';
  const withBaseline = !baselineNote;
  let previous;
  try {
    previous = JSON.parse(fs.readFileSync(path.join(here, 'results.json'), 'utf8'));
  } catch {
    previous = undefined;
  }

  const results = [];
  for (const w of WORKLOADS) {
    const clients =
      w.era === 'modern' ? ['ours', 'sdk2'] : ['ours', 'sdk', 'sdk2', ...(withBaseline ? ['baseline'] : []), ...(w.floor ? ['floor'] : [])];
    const runs = Object.fromEntries(clients.map((c) => [c, []]));
    for (let rep = 0; rep < reps; rep++) {
      process.stdout.write(`\r${w.id} ${w.name}: repetition ${rep + 1}/${reps}   `);
      // Each repetition starts one client later (A B C D, B C D A, …), so no client always runs right after the same one.
      for (let i = 0; i < clients.length; i++) {
        const c = clients[(i + rep) % clients.length];
        runs[c].push(await runChild(PROGRAMS[c], w.name));
      }
    }
    const entry = { id: w.id, name: w.name, era: w.era, title: w.title, loadAverage: os.loadavg()[0] };
    entry.cpuMs = {};
    entry.serverCpuMs = {};
    entry.peakRssKb = {};
    for (const c of clients) {
      entry[c] = stats(runs[c].map((r) => r.ms));
      entry.cpuMs[c] = stats(runs[c].map((r) => r.cpuMs)).median;
      if (runs[c].every((r) => r.serverCpuMs !== undefined)) entry.serverCpuMs[c] = stats(runs[c].map((r) => r.serverCpuMs)).median;
      entry.peakRssKb[c] = Math.max(...runs[c].map((r) => r.maxRssKb));
    }
    if (entry.sdk) entry.ratio = entry.ours.median / entry.sdk.median;
    entry.ratio2 = entry.ours.median / entry.sdk2.median;
    if (entry.baseline) entry.ratioBefore = entry.ours.median / entry.baseline.median;
    if (entry.floor) entry.floorRatio = entry.ours.median / entry.floor.median;
    entry.targets = w.targets.map((t) => {
      const other = entry[t.vs];
      if (!other) return { vs: t.vs, max: t.max, ratio: null, met: null };
      const ratio = entry.ours.median / other.median;
      return { vs: t.vs, max: t.max, ratio, met: ratio <= t.max };
    });
    results.push(entry);
  }
  process.stdout.write('\r\x1b[K');

  let extension;
  if (!args.includes('--no-extension')) {
    const { measureExtension } = await import('./extension.mjs');
    extension = { ...(await measureExtension()), measured: new Date().toISOString() };
  } else if (previous?.extension) {
    // Not measured this time: the last figures stay in the file, with the date they were measured.
    extension = { ...previous.extension, measured: previous.extension.measured ?? previous.date };
  }

  const gateway = !only || only.includes('gateway') ? await runGatewayBench() : undefined;
  const chatVscode = !only || only.includes('chat-vscode') ? await measureChatInVsCode(chatOptions) : previous?.chatVscode;
  const sandbox = !only || only.includes('sandbox') ? await runSandboxBench() : undefined;
  const flowGuard = !only || only.includes('flowguard') ? await runTsBench('flowGuard.ts') : undefined;
  const telemetry = !only || only.includes('telemetry') ? await runTelemetryBench() : previous?.telemetry;
  const serve = !only || only.includes('serve') ? await runServeBench() : previous?.serve;
  const report = {
    date: new Date().toISOString(),
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    cpus: os.cpus().length,
    loadAverage: os.loadavg(),
    repetitions: reps,
    baseline: withBaseline ? BASELINE_REF : null,
    ...(baselineNote ? { notes: [baselineNote] } : {}),
    workloads: results,
    ...(extension ? { extension } : {}),
    ...(gateway ? { gateway } : {}),
    ...(chatVscode ? { chatVscode } : {}),
    ...(sandbox ? { sandbox } : {}),
    ...(flowGuard ? { flowGuard } : {}),
    ...(telemetry ? { telemetry } : {}),
    ...(serve ? { serve } : {}),
  };
  fs.writeFileSync(path.join(here, 'results.json'), `${JSON.stringify(report, null, 2)}\n`);
  printTable(report, previous);
  if (gateway) printGateway(gateway);
  if (chatVscode) printChatInVsCode(chatVscode);
  if (sandbox) printSandbox(sandbox);
  if (flowGuard) printFlowGuard(flowGuard);
  if (telemetry) printTelemetry(telemetry);
  if (serve) printServe(serve);
}

/** `mcp-host serve` (issue 42, bench/serve.ts): per call against a pass-through of the same shape and the server directly; an agent's memory. */
function runServeBench() {
  execFileSyncBuild();
  return runTsBench('serve.ts');
}

/** dist/cli.js and dist/relay.js as shipped, which bench/serve.ts runs. */
function execFileSyncBuild() {
  spawnSync(process.execPath, [path.join(root, 'esbuild.js')], { cwd: root, stdio: 'inherit' });
}

/** The target of issue 42: serve's median at most 1.5 × the pass-through's. */
const SERVE_MAX = 1.5;

function printServe(s) {
  console.log(
    `\nmcp-host serve (issue 42): echo over stdio, ${s.calls} sequential and ${s.inFlight} in flight × ${s.rounds}, medians of ${s.reps}`,
  );
  for (const [name, m] of Object.entries(s.medianMs))
    console.log(
      `  ${name.padEnd(12)} sequential ${m.sequential.toFixed(0).padStart(6)} ms   concurrent ${m.concurrent.toFixed(0).padStart(6)} ms`,
    );
  for (const [name, ratio] of Object.entries(s.ratios)) {
    const target = name.startsWith('serveVsPassThrough') ? `≤ ${SERVE_MAX.toFixed(2)}  ${ratio <= SERVE_MAX ? 'met' : 'NOT MET'}` : '';
    console.log(`    ${name.padEnd(34)} ${ratio.toFixed(2).padStart(6)} ${target}`);
  }
  if (s.serveCpuUsPerCall !== undefined)
    console.log(
      `  serve's own CPU per call: ${s.serveCpuUsPerCall.toFixed(0)} µs (every call answered with its echo, ${s.auditedRecords} audited in a chain that verifies)`,
    );
  const a = s.agent;
  console.log(
    `  an agent given ${a.servers} servers (${a.tools} tools): ${a.relayProcesses} relay process of ${(a.relayRssKb / 1024).toFixed(0)} MB resident; serve running the same five: ${(a.serveRssKb / 1024).toFixed(0)} MB (without the servers)`,
  );
}

/** bench/telemetry.ts in its own process: gated calls with nothing exported, exported, and a collector that is down. */
async function runTelemetryBench() {
  return { ...(await runTsBench('telemetry.ts')), measured: new Date().toISOString() };
}

function printTelemetry(t) {
  const m = t.medians;
  const row = (name, x) =>
    `  ${name.padEnd(15)} ${x.wallUs.toFixed(0).padStart(6)} µs wall   ${x.cpuUs.toFixed(0).padStart(5)} µs CPU per call`;
  console.log(`\nTelemetry (issue 44): ${t.calls} sequential gated tools/call, audited, medians of ${t.reps} repetitions`);
  console.log(row('not exported', m.off));
  console.log(row('exported', m.exported));
  console.log(row('collector down', m.collectorDown));
  console.log(`  exporting costs ${(m.exported.cpuUs - m.off.cpuUs).toFixed(0)} µs of CPU per call`);
}

/** One workload run alone (`--only`): its figures replace the last ones under `key` in bench/results.json, the rest of the file stays. */
function recordOnly(key, figures, print) {
  const file = path.join(here, 'results.json');
  let report = {};
  try {
    report = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch {
    // no results yet: the file holds this workload alone
  }
  fs.writeFileSync(file, `${JSON.stringify({ ...report, [key]: figures }, null, 2)}\n`);
  print(figures);
}

/** Issue 22's target: the chat gateway costs at most 1.3× the direct path (ratio of medians in one run). */
const GATEWAY_MAX = 1.3;

/** bench/sandbox.ts in its own process: spawn + initialize plain and sandboxed. */
function runSandboxBench() {
  return runTsBench('sandbox.ts');
}

/** A TypeScript bench of this folder in its own process, whose last line of output is its JSON. */
function runTsBench(file) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(here, file), '--reps', String(reps)], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.on('exit', (code) =>
      code === 0 ? resolve(JSON.parse(out.trim().split('\n').pop())) : reject(new Error(`bench/${file} exited ${code}`)),
    );
  });
}

function printFlowGuard(f) {
  console.log(
    `\nFlow guard (issue 43): a session of ${f.historyBytes / 1024} KB of private results (${f.indexEntries} index entries), medians of ${f.reps}`,
  );
  console.log(
    `  check of a sink call with ${f.argumentBytes} B of arguments: ${f.medianMicroseconds.check.toFixed(1)} µs   record of a 4 KB result: ${f.medianMicroseconds.recordOf4KB.toFixed(1)} µs`,
  );
}

function printSandbox(s) {
  if (s.unavailable) return console.log(`\nSandbox (issue 35): not measured, ${s.unavailable}`);
  console.log(`\nSandbox (issue 35): spawn + initialize of a stdio server, ${s.kind}, medians of ${s.reps} × ${s.starts} starts`);
  console.log(`  plain ${s.medianMs.plain.toFixed(1)} ms   sandboxed ${s.medianMs.sandboxed.toFixed(1)} ms   ratio ${s.ratio.toFixed(2)}`);
}

/** bench/gateway.ts in its own process: the SDK's client through the chat gateway against the same call made directly. */
function runGatewayBench() {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(here, 'gateway.ts'), '--reps', String(reps)], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.on('exit', (code) =>
      code === 0 ? resolve(JSON.parse(out.trim().split('\n').pop())) : reject(new Error(`bench/gateway.ts exited ${code}`)),
    );
  });
}

function printGateway(g) {
  console.log(`\nChat gateway (issue 22): echo, ${g.calls} sequential and ${g.inFlight} in flight × ${g.rounds}, medians of ${g.reps}`);
  for (const [path, m] of Object.entries(g.medianMs))
    console.log(
      `  ${path.padEnd(10)} sequential ${m.sequential.toFixed(0).padStart(6)} ms   concurrent ${m.concurrent.toFixed(0).padStart(6)} ms`,
    );
  console.log('  through the gateway against the same server over the same transport (the target):');
  for (const [name, ratio] of Object.entries(g.ratios))
    console.log(
      `    ${name.padEnd(30)} ${ratio.toFixed(2).padStart(6)} ≤ ${GATEWAY_MAX.toFixed(2)}  ${ratio <= GATEWAY_MAX ? 'met' : 'NOT MET'}`,
    );
  console.log('  against the server over stdio (floor: the SDK client over HTTP to an endpoint that does nothing):');
  for (const [name, ratio] of Object.entries(g.vsStdio ?? {})) console.log(`    ${name.padEnd(30)} ${ratio.toFixed(2).padStart(6)}`);
}

function printTable(report, previous) {
  const all = ['ours', 'sdk', 'sdk2', 'baseline', 'floor'];
  const rows = [
    [
      '#',
      'workload',
      ...all.map((c) => `${LABELS[c]} ms median (min–max)`),
      'ours/v1',
      'ours/v2',
      'ours/before',
      'CPU ms client (server)',
      'peak RSS MB',
      'previous ours ms',
    ],
  ];
  for (const w of report.workloads) {
    const before = previous?.workloads?.find((p) => p.name === w.name);
    const present = all.filter((c) => w[c]);
    rows.push([
      String(w.id),
      w.title,
      ...all.map((c) => fmtMs(w[c])),
      w.ratio === undefined ? '—' : w.ratio.toFixed(2),
      w.ratio2.toFixed(2),
      w.ratioBefore === undefined ? '—' : w.ratioBefore.toFixed(2),
      present
        .map((c) => `${LABELS[c]} ${w.cpuMs[c].toFixed(0)}${w.serverCpuMs?.[c] === undefined ? '' : ` (${w.serverCpuMs[c].toFixed(0)})`}`)
        .join(', '),
      present.map((c) => `${LABELS[c]} ${fmtMb(w.peakRssKb[c])}`).join(', '),
      before?.ours ? before.ours.median.toFixed(0) : '—',
    ]);
  }
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  const line = (r) => r.map((c, i) => c.padEnd(widths[i])).join(' │ ');
  console.log(
    `\nMCP Host vs @modelcontextprotocol/sdk (v1) and @modelcontextprotocol/client (v2) — ${report.repetitions} repetitions each, interleaved; Node ${report.node}, ${report.cpus} CPUs, load average ${report.loadAverage.map((l) => l.toFixed(2)).join(' ')}\n`,
  );
  console.log(line(rows[0]));
  console.log(widths.map((w) => '─'.repeat(w)).join('─┼─'));
  for (const r of rows.slice(1)) console.log(line(r));
  console.log('\nTargets (ours / other, medians of this run)');
  let met = 0;
  let total = 0;
  for (const w of report.workloads) {
    for (const t of w.targets) {
      total++;
      if (t.met) met++;
      const verdict = t.met === null ? 'not measured' : t.met ? 'met' : 'NOT MET';
      const ratio = t.ratio === null ? '—' : t.ratio.toFixed(2);
      console.log(
        `  ${String(w.id).padEnd(3)} ${w.name.padEnd(23)} ours/${LABELS[t.vs].padEnd(7)} ${ratio.padStart(5)} ≤ ${t.max.toFixed(2)}  ${verdict}`,
      );
    }
  }
  for (const note of report.notes ?? []) console.log(`  note: ${note}`);
  if (report.extension) {
    const e = report.extension;
    console.log(args.includes('--no-extension') ? `\nExtension (not measured this time: the figures of ${e.measured})` : '\nExtension');
    for (const [label, value] of Object.entries(e.figures)) console.log(`  ${label}: ${value}`);
    for (const note of e.notes ?? []) console.log(`  note: ${note}`);
  }
  console.log(`\n${met}/${total} targets met; results in bench/results.json`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
