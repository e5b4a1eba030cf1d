#!/usr/bin/env node
// `npm run bench`: our McpClient against the official SDK clients (v1 `@modelcontextprotocol/sdk`
// and v2 `@modelcontextprotocol/client`) on the same fixture server, each repetition in a fresh
// child process per client (so peak RSS is that client's alone), interleaved A B C A B C…, plus the
// floor (raw ndjson echo through a pipe). Prints a table and writes
// bench/results.json; the previous results file, if any, is shown alongside for comparison.
//
//   node bench/run.mjs [--reps N] [--only name,name] [--no-extension]
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildBench } from './build.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.join(here, '..');
const args = process.argv.slice(2);
const option = (name) => {
  const i = args.indexOf(name);
  return i === -1 ? undefined : args[i + 1];
};
const reps = Number(option('--reps') ?? 5);
const only = option('--only')?.split(',');

const WORKLOADS = [
  { id: 1, name: 'initialize', title: 'spawn + initialize (stdio)', target: undefined },
  { id: 2, name: 'sequential', title: '5,000 sequential tools/call (stdio)', target: 0.8, floor: true },
  { id: 3, name: 'concurrent', title: '256 in flight × 20 rounds (stdio)', target: 0.8 },
  { id: 4, name: 'large', title: 'resources/read 10 MB text + 10 MB blob (stdio)', target: 0.8 },
  { id: '5a', name: 'http-sequential', title: '5,000 sequential tools/call (Streamable HTTP)', target: 0.8 },
  { id: '5b', name: 'http-concurrent', title: '256 in flight × 20 rounds (Streamable HTTP)', target: 0.8 },
].filter((w) => !only || only.includes(w.name));
const FLOOR_TARGET = 1.5;

/** Runs one client child for one workload; resolves with { ms, maxRssKb }. */
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

function stats(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  return { median, min: sorted[0], max: sorted[sorted.length - 1], samples };
}

const fmtMs = (s) => `${s.median.toFixed(0)} (${s.min.toFixed(0)}–${s.max.toFixed(0)})`;
const fmtMb = (kb) => `${(kb / 1024).toFixed(0)} MB`;

async function main() {
  process.stdout.write('Building the benchmark clients…\n');
  await buildBench(['client-ours', 'client-sdk', 'client-sdk2', 'client-floor']);
  let previous;
  try {
    previous = JSON.parse(fs.readFileSync(path.join(here, 'results.json'), 'utf8'));
  } catch {
    previous = undefined;
  }

  const results = [];
  for (const w of WORKLOADS) {
    const ours = [];
    const sdk = [];
    const sdk2 = [];
    const floor = [];
    const cpu = { ours: [], sdk: [], sdk2: [], floor: [] };
    const rss = { ours: 0, sdk: 0, sdk2: 0, floor: 0 };
    for (let rep = 0; rep < reps; rep++) {
      process.stdout.write(`\r${w.id} ${w.name}: repetition ${rep + 1}/${reps}   `);
      const a = await runChild('client-ours', w.name);
      const b = await runChild('client-sdk', w.name);
      const c = await runChild('client-sdk2', w.name);
      ours.push(a.ms);
      sdk.push(b.ms);
      sdk2.push(c.ms);
      cpu.ours.push(a.cpuMs);
      cpu.sdk.push(b.cpuMs);
      cpu.sdk2.push(c.cpuMs);
      rss.ours = Math.max(rss.ours, a.maxRssKb);
      rss.sdk = Math.max(rss.sdk, b.maxRssKb);
      rss.sdk2 = Math.max(rss.sdk2, c.maxRssKb);
      if (w.floor) {
        const f = await runChild('client-floor', w.name);
        floor.push(f.ms);
        cpu.floor.push(f.cpuMs);
        rss.floor = Math.max(rss.floor, f.maxRssKb);
      }
    }
    const entry = {
      id: w.id,
      name: w.name,
      title: w.title,
      ours: stats(ours),
      sdk: stats(sdk),
      sdk2: stats(sdk2),
      cpuMs: { ours: stats(cpu.ours).median, sdk: stats(cpu.sdk).median, sdk2: stats(cpu.sdk2).median, ...(w.floor ? { floor: stats(cpu.floor).median } : {}) },
      peakRssKb: rss,
    };
    entry.ratio = entry.ours.median / entry.sdk.median;
    entry.ratio2 = entry.ours.median / entry.sdk2.median;
    if (w.target !== undefined) entry.target = w.target;
    if (w.floor) {
      entry.floor = stats(floor);
      entry.floorRatio = entry.ours.median / entry.floor.median;
      entry.floorTarget = FLOOR_TARGET;
    }
    results.push(entry);
  }
  process.stdout.write('\r\x1b[K');

  let extension;
  if (!args.includes('--no-extension')) {
    const { measureExtension } = await import('./extension.mjs');
    extension = await measureExtension();
  }

  const report = {
    date: new Date().toISOString(),
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    cpus: (await import('node:os')).cpus().length,
    repetitions: reps,
    workloads: results,
    ...(extension ? { extension } : {}),
  };
  fs.writeFileSync(path.join(here, 'results.json'), `${JSON.stringify(report, null, 2)}\n`);
  printTable(report, previous);
}

function printTable(report, previous) {
  const rows = [
    [
      '#',
      'workload',
      'ours ms median (min–max)',
      'SDK v1 ms median (min–max)',
      'SDK v2 ms median (min–max)',
      'ours/v1',
      'ours/v2',
      'target (ours/v1)',
      'CPU ms ours / v1 / v2',
      'peak RSS ours / v1 / v2',
      'previous ours/v1',
    ],
  ];
  const verdicts = [];
  for (const w of report.workloads) {
    const before = previous?.workloads?.find((p) => p.name === w.name);
    const ok = w.target === undefined || w.ratio <= w.target;
    if (w.target !== undefined) verdicts.push(ok);
    rows.push([
      String(w.id),
      w.title,
      fmtMs(w.ours),
      fmtMs(w.sdk),
      fmtMs(w.sdk2),
      w.ratio.toFixed(2),
      w.ratio2.toFixed(2),
      w.target === undefined ? '—' : `≤ ${w.target} ${ok ? 'ok' : 'MISSED'}`,
      `${w.cpuMs.ours.toFixed(0)} / ${w.cpuMs.sdk.toFixed(0)} / ${w.cpuMs.sdk2.toFixed(0)}`,
      `${fmtMb(w.peakRssKb.ours)} / ${fmtMb(w.peakRssKb.sdk)} / ${fmtMb(w.peakRssKb.sdk2)}`,
      before ? before.ratio.toFixed(2) : '—',
    ]);
    if (w.floor) {
      const okFloor = w.floorRatio <= w.floorTarget;
      verdicts.push(okFloor);
      rows.push([
        '6',
        'floor: 5,000 raw ndjson round trips through a pipe',
        fmtMs(w.floor),
        '',
        '',
        '',
        `ours/floor ${w.floorRatio.toFixed(2)}`,
        `≤ ${w.floorTarget} ${okFloor ? 'ok' : 'MISSED'}`,
        `${w.cpuMs.floor.toFixed(0)}`,
        fmtMb(w.peakRssKb.floor),
        before?.floorRatio ? before.floorRatio.toFixed(2) : '—',
      ]);
    }
  }
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  const line = (r) => r.map((c, i) => c.padEnd(widths[i])).join(' │ ');
  console.log(`\nMCP Host vs @modelcontextprotocol/sdk (v1) and @modelcontextprotocol/client (v2) — ${report.repetitions} repetitions each, interleaved; Node ${report.node}, ${report.cpus} CPUs\n`);
  console.log(line(rows[0]));
  console.log(widths.map((w) => '─'.repeat(w)).join('─┼─'));
  for (const r of rows.slice(1)) console.log(line(r));
  if (report.extension) {
    const e = report.extension;
    console.log('\nExtension');
    for (const [label, value] of Object.entries(e.figures)) console.log(`  ${label}: ${value}`);
    for (const note of e.notes ?? []) console.log(`  note: ${note}`);
  }
  console.log(`\n${verdicts.filter(Boolean).length}/${verdicts.length} targets met; results in bench/results.json`);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
