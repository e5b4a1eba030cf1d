// The soak (`npm run soak`, run by bench/soak.mjs with --expose-gc): 10 servers × 200,000 calls
// through the real ServerRegistry and ServerHandle, under a notification flood, with bursts,
// cancellations mid-call, restarts and crashes mixed in (bench/soakEngine.ts says how). Memory is
// judged by the heap after a full GC, sampled at regular intervals: the least-squares slope of those
// samples over the second half of the run, in bytes per 1,000 calls, must stay under a threshold.
// Everything else must come out exact: every call ends the way it should, and nothing is left over.
//
//   npm run soak -- [--servers 10] [--calls 200000] [--minutes 10] [--lanes 16] [--sample-seconds 5]
//
// --calls is per server; the soak ends when every server has had its calls or after --minutes,
// whichever comes first.
import { parseArgs } from 'node:util';
import { deterministicChecks, runSoak, type SoakOptions, type SoakReport } from './soakEngine';

/**
 * The most the heap may grow per 1,000 calls over the second half. One object kept per call is at
 * least 16 bytes, 16 KB per 1,000 calls. A launch kept after its restart or crash (its client,
 * connection, transport and child process: about 40 KB, measured by keeping 20 of them) is some
 * 8 KB per 1,000 calls at one restart or crash per 5,000 calls of a server. A 3-minute run without a
 * leak measured 0.07 KB, and one with each request kept in an array (about 48 bytes) 47 KB:
 * 2 KB is far above the noise and below any of those.
 */
const MAX_SLOPE_BYTES_PER_1000_CALLS = 2048;
/** Fewer samples than this in the second half do not make a slope worth judging. */
const MIN_SAMPLES = 8;

const { values } = parseArgs({
  options: {
    servers: { type: 'string', default: '10' },
    calls: { type: 'string', default: '200000' },
    minutes: { type: 'string', default: '10' },
    lanes: { type: 'string', default: '16' },
    'sample-seconds': { type: 'string', default: '5' },
    /** Print every heap sample too. */
    samples: { type: 'boolean', default: false },
  },
});
const number = (name: 'servers' | 'calls' | 'minutes' | 'lanes' | 'sample-seconds'): number => {
  const n = Number(values[name]);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name} must be a positive number, not ${values[name]}`);
  return n;
};

const gc = (globalThis as { gc?: () => void }).gc;

interface HeapSample {
  calls: number;
  seconds: number;
  heapUsed: number;
}

/** The least-squares slope of y over x. */
function slope(points: Array<{ x: number; y: number }>): number {
  const n = points.length;
  const mx = points.reduce((s, p) => s + p.x, 0) / n;
  const my = points.reduce((s, p) => s + p.y, 0) / n;
  const sxy = points.reduce((s, p) => s + (p.x - mx) * (p.y - my), 0);
  const sxx = points.reduce((s, p) => s + (p.x - mx) ** 2, 0);
  return sxx === 0 ? 0 : sxy / sxx;
}

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
const kb = (bytes: number) => `${(bytes / 1024).toLocaleString('en', { minimumFractionDigits: 2, maximumFractionDigits: 2 })} KB`;
const count = (n: number) => n.toLocaleString('en');

async function main(): Promise<void> {
  if (!gc) throw new Error('run with --expose-gc (npm run soak does)');
  const servers = number('servers');
  const callsPerServer = number('calls');
  const minutes = number('minutes');
  const sampleMs = number('sample-seconds') * 1000;
  const started = performance.now();
  const heapNow = () => {
    gc();
    gc();
    return process.memoryUsage().heapUsed;
  };
  const samples: HeapSample[] = [];
  const options: SoakOptions = {
    servers,
    callsPerServer,
    lanes: number('lanes'),
    every: { burst: 1000, cancel: 500, restart: 10_000, crash: 10_000 },
    burstSize: 100,
    deadline: started + minutes * 60_000,
    sample: {
      everyMs: sampleMs,
      take: (calls) => samples.push({ calls, seconds: (performance.now() - started) / 1000, heapUsed: heapNow() }),
    },
  };
  const report = await runSoak(options);
  const endedBy = report.calls >= servers * callsPerServer ? 'every call made' : `the ${minutes}-minute limit`;

  // The first quarter is the warm-up (code compiled, caches and pools filled): the slope is judged
  // over the second half, and shown over the rest for comparison.
  const afterWarmUp = samples.slice(Math.floor(samples.length / 4));
  const secondHalf = samples.slice(Math.floor(samples.length / 2));
  const perThousand = (part: HeapSample[]) => slope(part.map((s) => ({ x: s.calls / 1000, y: s.heapUsed })));
  const perMinute = (part: HeapSample[]) => slope(part.map((s) => ({ x: s.seconds / 60, y: s.heapUsed })));
  const judged = secondHalf.length >= MIN_SAMPLES ? perThousand(secondHalf) : NaN;

  printSummary(report, { servers, callsPerServer, lanes: options.lanes, endedBy });
  console.log(
    `  heap after GC, ${samples.length} samples every ${sampleMs / 1000} s: ` +
      (samples.length
        ? `${mb(samples[0].heapUsed)} first, ${mb(Math.min(...samples.map((s) => s.heapUsed)))}–${mb(Math.max(...samples.map((s) => s.heapUsed)))}, ${mb(samples.at(-1)!.heapUsed)} last`
        : 'none'),
  );
  if (afterWarmUp.length >= 2)
    console.log(
      `  slope after the warm-up (last ¾): ${kb(perThousand(afterWarmUp))} per 1,000 calls, ${kb(perMinute(afterWarmUp))} per minute`,
    );
  if (secondHalf.length >= 2)
    console.log(`  slope over the second half: ${kb(perThousand(secondHalf))} per 1,000 calls, ${kb(perMinute(secondHalf))} per minute`);
  const checks = deterministicChecks(report);
  checks.push([
    Number.isNaN(judged)
      ? `heap slope: only ${secondHalf.length} samples in the second half (at least ${MIN_SAMPLES}): run longer`
      : `heap slope over the second half ${kb(judged)} per 1,000 calls (< ${kb(MAX_SLOPE_BYTES_PER_1000_CALLS)})`,
    judged < MAX_SLOPE_BYTES_PER_1000_CALLS,
  ]);
  for (const [text, ok] of checks) console.log(`  ${ok ? 'ok    ' : 'FAILED'} ${text}`);
  if (values.samples) for (const s of samples) console.log(`    ${s.seconds.toFixed(1)} s  ${count(s.calls)} calls  ${s.heapUsed}`);
  process.exitCode = checks.every(([, ok]) => ok) ? 0 : 1;
}

function printSummary(report: SoakReport, run: { servers: number; callsPerServer: number; lanes: number; endedBy: string }): void {
  const { outcomes, bursts } = report;
  console.log(
    `Soak: ${run.servers} servers × up to ${count(run.callsPerServer)} calls, ${run.lanes} in flight per server; ${count(report.calls)} calls in ` +
      `${report.seconds.toFixed(0)} s (${count(Math.round(report.calls / report.seconds))} calls/s), ended by ${run.endedBy}`,
  );
  console.log(
    `  outcomes: ${count(outcomes.answered)} answered (${count(bursts.answered)} of them bursts), ${count(outcomes.cancelled)} cancelled mid-call, ` +
      `${count(outcomes.closedByRestart)} ended by a restart or crash of their server, ${count(outcomes.unexpected)} unexpected`,
  );
  for (const line of report.unexpectedSamples) console.log(`    unexpected: ${line}`);
  console.log(
    `  ${report.restarts} restarts (stop + start), ${report.crashes} crashes (SIGKILL, restarted by the handle), ${report.launches} server launches in all`,
  );
  console.log(`  ${count(report.logMessages)} log messages received, ${count(bursts.messagesReceived)} of them in bursts`);
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
