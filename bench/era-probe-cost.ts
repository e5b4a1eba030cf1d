// The start-time cost of the server/discover probe for a legacy server (server-everything): connect()
// with protocol '2025-11-25' (initialize only) against 'auto' (probe, then initialize), interleaved,
// over stdio (process start included) and over Streamable HTTP (server already listening).
// Run: npx tsx bench/era-probe-cost.ts [rounds]
import { HttpTransport, McpClient, StdioTransport, type ProtocolChoice, type Transport } from '../src/core';
import { startEverything } from '../test/helpers/httpServers';
import { everythingServer } from '../test/helpers/servers';

const rounds = Number(process.argv[2] ?? 15);

async function timeConnect(transport: Transport, protocol: ProtocolChoice): Promise<number> {
  const client = new McpClient(transport, { protocol, probeTimeoutMs: 3000 });
  const started = performance.now();
  await client.connect();
  const ms = performance.now() - started;
  await client.close();
  return ms;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const show = (name: string, xs: number[]) =>
  `${name}: median ${median(xs).toFixed(1)} ms (min ${Math.min(...xs).toFixed(1)}, max ${Math.max(...xs).toFixed(1)})`;

async function measure(label: string, make: () => Transport): Promise<void> {
  const times: Record<ProtocolChoice, number[]> = { auto: [], '2025-11-25': [], '2026-07-28': [] };
  await timeConnect(make(), '2025-11-25'); // warm-up
  for (let i = 0; i < rounds; i++) {
    for (const protocol of i % 2 ? (['auto', '2025-11-25'] as const) : (['2025-11-25', 'auto'] as const))
      times[protocol].push(await timeConnect(make(), protocol));
  }
  const diffs = times.auto.map((t, i) => t - times['2025-11-25'][i]);
  console.log(
    `${label}\n  ${show('initialize only', times['2025-11-25'])}\n  ${show('probe + initialize', times.auto)}\n  ${show('paired difference', diffs)}`,
  );
}

void (async () => {
  await measure('server-everything over stdio', () => new StdioTransport({ ...everythingServer(), shutdownGraceMs: 500 }));
  const http = await startEverything('streamableHttp');
  try {
    await measure('server-everything over Streamable HTTP', () => new HttpTransport({ url: http.url }));
  } finally {
    await http.stop();
  }
})();
