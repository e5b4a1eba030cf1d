// The soak: 10 servers × 10,000 tools/call each, while every server floods notifications (a log
// message on a timer and before every answer, progress for every call). Checks that every call is
// answered, that RSS after warm-up grows by less than 10 %, and that the per-request bookkeeping
// and the listener counts are back where they started. Run by bench/soak.mjs with --expose-gc.
import { getEventListeners, setMaxListeners } from 'node:events';
import { McpClient } from '../src/core/client/client';
import { StdioTransport } from '../src/core/transport/stdio';
import type { CallToolResult } from '../src/core/protocol/types';
import { FIXTURE } from './workloads';

const SERVERS = 10;
const CALLS_PER_SERVER = 10_000;
const IN_FLIGHT_PER_SERVER = 16;
const WARM_UP_CALLS = 1_000;
const MAX_RSS_GROWTH = 0.1;

const gc = (globalThis as { gc?: () => void }).gc;

function rssAfterGc(): number {
  gc?.();
  gc?.();
  return process.memoryUsage().rss;
}

const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

async function main(): Promise<void> {
  if (!gc) throw new Error('run with --expose-gc (npm run soak does)');
  // One signal shared by every call, as a "stop everything" switch would be: each call adds an
  // abort listener to it and must take it away again when it settles.
  const stopAll = new AbortController();
  setMaxListeners(SERVERS * IN_FLIGHT_PER_SERVER + 10, stopAll.signal);
  let logMessages = 0;
  let progressNotifications = 0;
  const servers = await Promise.all(
    Array.from({ length: SERVERS }, async () => {
      const transport = new StdioTransport({ command: process.execPath, args: [FIXTURE, 'flood'] });
      const client = new McpClient(transport, { clientInfo: { name: 'soak', version: '1.0.0' } });
      client.onLogMessage(() => logMessages++);
      await client.connect();
      return { transport, client, listenersAtStart: transport.streamListenerCount };
    }),
  );
  const baselineAbortListeners = getEventListeners(stopAll.signal, 'abort').length;

  let answered = 0;
  let wrong = 0;
  let rssWarm = 0;
  const started = performance.now();
  const runServer = async ({ client }: (typeof servers)[number], serverIndex: number) => {
    let next = 0;
    const lane = async () => {
      while (next < CALLS_PER_SERVER) {
        const n = next++;
        const text = `s${serverIndex} c${n}`;
        const { result } = await client.callTool('echo', { text }, { signal: stopAll.signal, onProgress: () => progressNotifications++ });
        const first = (result as CallToolResult).content[0];
        if (first?.type !== 'text' || first.text !== text) wrong++;
        if (++answered === SERVERS * WARM_UP_CALLS) rssWarm = rssAfterGc();
      }
    };
    await Promise.all(Array.from({ length: IN_FLIGHT_PER_SERVER }, lane));
  };
  await Promise.all(servers.map(runServer));
  const seconds = (performance.now() - started) / 1000;
  // Let the last notifications in flight arrive before counting what is left.
  await new Promise((resolve) => setTimeout(resolve, 50));
  const rssEnd = rssAfterGc();

  const stats = servers.map((s) => s.client.connectionStats!);
  const sum = (key: keyof (typeof stats)[number]) => stats.reduce((n, s) => n + s[key], 0);
  const listenerGrowth = servers.reduce((n, s) => n + (s.transport.streamListenerCount - s.listenersAtStart), 0);
  const abortListeners = getEventListeners(stopAll.signal, 'abort').length - baselineAbortListeners;
  const growth = (rssEnd - rssWarm) / rssWarm;
  await Promise.all(servers.map((s) => s.client.close()));

  const total = SERVERS * CALLS_PER_SERVER;
  const checks: Array<[string, boolean]> = [
    [`every call answered: ${answered.toLocaleString('en')} of ${total.toLocaleString('en')}, ${wrong} with the wrong text`, answered === total && wrong === 0],
    [
      `RSS after warm-up (${WARM_UP_CALLS.toLocaleString('en')} calls per server) ${mb(rssWarm)}, at the end ${mb(rssEnd)}: ${(growth * 100).toFixed(1)} % (< ${MAX_RSS_GROWTH * 100} %)`,
      growth < MAX_RSS_GROWTH,
    ],
    [
      `pending requests ${sum('pendingRequests')}, progress handlers ${sum('progressHandlers')}, inbound requests ${sum('inboundRequests')}, cancelled server requests still running ${sum('cancelledInbound')} (all 0)`,
      sum('pendingRequests') + sum('progressHandlers') + sum('inboundRequests') + sum('cancelledInbound') === 0,
    ],
    [`pipe listeners grew by ${listenerGrowth}, abort listeners on the shared signal grew by ${abortListeners} (both 0)`, listenerGrowth === 0 && abortListeners === 0],
  ];
  console.log(
    `Soak: ${SERVERS} servers × ${CALLS_PER_SERVER.toLocaleString('en')} calls, ${IN_FLIGHT_PER_SERVER} in flight per server, in ${seconds.toFixed(1)} s ` +
      `(${Math.round(total / seconds).toLocaleString('en')} calls/s); ${logMessages.toLocaleString('en')} log messages and ` +
      `${progressNotifications.toLocaleString('en')} progress notifications received meanwhile`,
  );
  for (const [text, ok] of checks) console.log(`  ${ok ? 'ok    ' : 'FAILED'} ${text}`);
  process.exitCode = checks.every(([, ok]) => ok) ? 0 : 1;
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
