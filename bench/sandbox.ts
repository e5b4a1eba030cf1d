// The sandbox's start-up cost (issue 35): spawn + initialize of bench/fixture-server.mjs with our
// client, plain and inside the operating-system sandbox (bubblewrap on Linux) whose boundary is a
// scratch folder, interleaved; medians of the repetitions and their ratio. Prints JSON (one line);
// bench/run.mjs shows it. Where the machine has no sandbox it prints `{"unavailable": "<why>"}`.
//
//   node --import tsx bench/sandbox.ts [--reps N]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { McpClient, StdioTransport, sandboxAvailability, sandboxedParams, type StdioServerParams } from '../src/core';

const args = process.argv.slice(2);
const i = args.indexOf('--reps');
const REPS = i === -1 ? 5 : Number(args[i + 1]);
/** Starts per repetition: one start is too short to time on a shared machine. */
const STARTS = 10;
const SERVER: StdioServerParams = {
  command: process.execPath,
  args: [path.join(__dirname, 'fixture-server.mjs'), 'stdio'],
  shutdownGraceMs: 500,
};

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function startAndInitialize(params: StdioServerParams): Promise<number> {
  const started = performance.now();
  for (let n = 0; n < STARTS; n++) {
    const client = new McpClient(new StdioTransport(params), { protocol: '2025-11-25' });
    await client.connect();
    await client.close();
  }
  return (performance.now() - started) / STARTS;
}

async function main(): Promise<void> {
  const availability = sandboxAvailability();
  if (!availability.ok) return void console.log(JSON.stringify({ unavailable: availability.reason }));
  const boundary = mkdtempSync(path.join(tmpdir(), 'mcp-bench-sandbox-'));
  try {
    const sandboxed = sandboxedParams(SERVER, [boundary], undefined, undefined, availability).params;
    const plain: number[] = [];
    const inSandbox: number[] = [];
    // Warm both paths once (the page cache), then alternate which goes first.
    await startAndInitialize(SERVER);
    await startAndInitialize(sandboxed);
    for (let rep = 0; rep < REPS; rep++) {
      if (rep % 2 === 0) {
        plain.push(await startAndInitialize(SERVER));
        inSandbox.push(await startAndInitialize(sandboxed));
      } else {
        inSandbox.push(await startAndInitialize(sandboxed));
        plain.push(await startAndInitialize(SERVER));
      }
    }
    const medianMs = { plain: median(plain), sandboxed: median(inSandbox) };
    console.log(
      JSON.stringify({ kind: availability.kind, reps: REPS, starts: STARTS, medianMs, ratio: medianMs.sandboxed / medianMs.plain }),
    );
  } finally {
    rmSync(boundary, { recursive: true, force: true });
  }
}

void main();
