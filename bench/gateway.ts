// The chat gateway's cost (issue 22): the SDK's client calling `echo` on test/fixtures/gateway-upstream.mjs
// directly (stdio, as VS Code would run the server itself; and over Streamable HTTP) against the same
// call through MCP Host's gateway (stdio to the relay, dist/relay.js, on a Unix socket: the default
// way VS Code reaches it; Streamable HTTP on 127.0.0.1 and on a Unix socket → the gate → our client
// → the same stdio server), sequential and 256 in flight,
// interleaved. Beside them the floor of HTTP with this client: bench/http-floor.mjs, an endpoint
// that answers at once with no server behind it. Prints JSON (one line) with medians and the
// ratios; bench/run.mjs shows them with the target (≤ 1.3×).
//
//   node --import tsx bench/gateway.ts [--reps N] [--calls N]
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { echoCalls } from './echoCalls';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ChatGateway } from '../src/core/gateway/sdkGateway';
import { UPSTREAM, gatewayClient, relayClient, share, upstreamHandle } from '../test/helpers/gateway';

const args = process.argv.slice(2);
const option = (name: string, fallback: number): number => {
  const i = args.indexOf(name);
  return i === -1 ? fallback : Number(args[i + 1]);
};
const REPS = option('--reps', 5);
const CALLS = option('--calls', 1000);
const IN_FLIGHT = 256;
const ROUNDS = 10;
const TOKEN = 'bench-token';

const timed = echoCalls(CALLS, IN_FLIGHT, ROUNDS);

async function main(): Promise<void> {
  const direct = new Client({ name: 'bench-direct', version: '1.0.0' });
  await direct.connect(new StdioClientTransport({ command: process.execPath, args: [UPSTREAM], stderr: 'ignore' }));

  // The same server over Streamable HTTP, for the same transport on both sides of the comparison,
  // and the floor: what the SDK's HTTP client costs against an endpoint that does nothing.
  const httpServer = await listening(UPSTREAM, 'http');
  const floorServer = await listening(path.join(__dirname, 'http-floor.mjs'));
  const directHttp = new Client({ name: 'bench-direct-http', version: '1.0.0' });
  await directHttp.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${httpServer.port}/mcp`)));
  const floor = new Client({ name: 'bench-floor', version: '1.0.0' });
  await floor.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${floorServer.port}/mcp`)));

  const handle = upstreamHandle();
  await handle.start();
  const { forwarder } = share(handle);
  const forwarderFor = (id: string) => (id === 'up' ? forwarder : undefined);
  const tcp = await ChatGateway.start({ token: TOKEN, forwarderFor });
  const dir = mkdtempSync(path.join(tmpdir(), 'gwb-'));
  const socket = await ChatGateway.start({
    token: TOKEN,
    socketPath: path.join(dir, 'g.sock'),
    relaySocketPath: path.join(dir, 'r.sock'),
    forwarderFor,
  });
  const viaTcp = await gatewayClient(tcp.address, ChatGateway.pathOf('up'), TOKEN);
  const viaSocket = await gatewayClient(socket.address, ChatGateway.pathOf('up'), TOKEN);
  // bench/run.mjs builds dist/relay.js first.
  const viaRelay = await relayClient(socket.relayAddress, 'up', TOKEN);
  const paths = { direct, directHttp, floorHttp: floor, relay: viaRelay, tcp: viaTcp, socket: viaSocket };

  const medians = await timed.medians(paths, REPS);
  const ratio = (via: keyof typeof paths, kind: 'sequential' | 'concurrent') => medians[via][kind] / medians.direct[kind];
  const result = {
    calls: CALLS,
    inFlight: IN_FLIGHT,
    rounds: ROUNDS,
    reps: REPS,
    medianMs: medians,
    ratios: {
      // The target's measure: the same client and transport on both sides, the server behind the gateway or not.
      relayVsDirectSequential: ratio('relay', 'sequential'),
      relayVsDirectConcurrent: ratio('relay', 'concurrent'),
      tcpVsDirectHttpSequential: medians.tcp.sequential / medians.directHttp.sequential,
      tcpVsDirectHttpConcurrent: medians.tcp.concurrent / medians.directHttp.concurrent,
      socketVsDirectHttpSequential: medians.socket.sequential / medians.directHttp.sequential,
      socketVsDirectHttpConcurrent: medians.socket.concurrent / medians.directHttp.concurrent,
    },
    // Against the server run over stdio: no HTTP path can go below the floor's ratio with this client.
    vsStdio: {
      tcpSequential: ratio('tcp', 'sequential'),
      tcpConcurrent: ratio('tcp', 'concurrent'),
      socketSequential: ratio('socket', 'sequential'),
      socketConcurrent: ratio('socket', 'concurrent'),
      floorSequential: ratio('floorHttp', 'sequential'),
      floorConcurrent: ratio('floorHttp', 'concurrent'),
    },
  };
  console.log(JSON.stringify(result));
  await Promise.all([direct.close(), directHttp.close(), floor.close(), viaRelay.close(), viaTcp.close(), viaSocket.close()]);
  httpServer.child.kill();
  floorServer.child.kill();
  await Promise.all([tcp.close(), socket.close()]);
  await handle.dispose();
}

/** A child that serves HTTP on 127.0.0.1 and prints `listening <port>`. */
async function listening(script: string, ...args: string[]): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, [script, ...args], { stdio: ['ignore', 'pipe', 'ignore'] });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      const m = /listening (\d+)/.exec(chunk.toString());
      if (m) resolve(Number(m[1]));
    });
    child.once('exit', () => reject(new Error(`${path.basename(script)} exited`)));
  });
  return { child, port };
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
