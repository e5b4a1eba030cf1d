// The sandbox's start-up cost (issue 35): spawn + initialize of bench/fixture-server.mjs with our
// client, plain and inside the operating-system sandbox (bubblewrap on Linux) whose boundary is a
// scratch folder, interleaved; medians of the repetitions and their ratio. Each sandboxed start is
// a whole launch as the editor makes it (issue 46): sandboxedServer (the protected names searched
// and their mount points made, the control groups, the seccomp filter), the transport, and its
// release when it closes. Prints JSON (one line); bench/run.mjs shows it. Where the machine has no
// sandbox it prints `{"unavailable": "<why>"}`.
//
//   node --import tsx bench/sandbox.ts [--reps N]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { McpClient, StdioTransport, sandboxAvailability, sandboxedServer, type StdioServerParams, type Transport } from '../src/core';

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

async function startAndInitialize(transport: () => Promise<Transport>): Promise<number> {
  const started = performance.now();
  for (let n = 0; n < STARTS; n++) {
    const client = new McpClient(await transport(), { protocol: '2025-11-25' });
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
    const plain = () => Promise.resolve(new StdioTransport(SERVER));
    const sandboxed = async () =>
      (await sandboxedServer(SERVER, [boundary], undefined, { server: 'bench' }, undefined, availability)).transport();
    const plainMs: number[] = [];
    const inSandbox: number[] = [];
    // Warm both paths once (the page cache), then alternate which goes first.
    await startAndInitialize(plain);
    await startAndInitialize(sandboxed);
    for (let rep = 0; rep < REPS; rep++) {
      if (rep % 2 === 0) {
        plainMs.push(await startAndInitialize(plain));
        inSandbox.push(await startAndInitialize(sandboxed));
      } else {
        inSandbox.push(await startAndInitialize(sandboxed));
        plainMs.push(await startAndInitialize(plain));
      }
    }
    const medianMs = { plain: median(plainMs), sandboxed: median(inSandbox) };
    console.log(
      JSON.stringify({ kind: availability.kind, reps: REPS, starts: STARTS, medianMs, ratio: medianMs.sandboxed / medianMs.plain }),
    );
  } finally {
    rmSync(boundary, { recursive: true, force: true });
  }
}

void main();
