import { spawn, type ChildProcess } from 'node:child_process';
import * as net from 'node:net';
import * as path from 'node:path';
import { SseTransport, StdioTransport, StreamableHttpTransport, type Transport } from '../../src/core';
import { ROOT, closeAll, everythingServer } from './servers';

/** Forces the server's listen() onto 127.0.0.1: tests use no network but loopback. */
const BIND_LOOPBACK = path.join(ROOT, 'test', 'harness', 'bind-loopback.cjs');
const EVERYTHING = path.join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');

export interface RunningServer {
  /** The MCP endpoint: /mcp for streamable HTTP, /sse for the legacy transport. */
  url: string;
  port: number;
  stop(): Promise<void>;
}

/** A port nobody listens on right now (the kernel's pick, released at once). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Starts server-everything in an HTTP mode on a free loopback port and waits until it listens. */
/** server-everything over HTTP on a free port, or on `port` (to restart a server where its clients expect it). */
export async function startEverything(mode: 'streamableHttp' | 'sse', ms = 15_000, port?: number): Promise<RunningServer> {
  port ??= await freePort();
  const child: ChildProcess = spawn(process.execPath, [EVERYTHING, mode], {
    env: { ...process.env, PORT: String(port), NODE_OPTIONS: `--require ${BIND_LOOPBACK}` },
    stdio: ['ignore', 'ignore', 'pipe'],
    // Its own process group, so stop() ends it and anything it started, by group id only.
    detached: true,
  });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (t: string) => (stderr = (stderr + t).slice(-4000)));
  const stop = stopper(child);
  const deadline = Date.now() + ms;
  while (!(await canConnect(port))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`server-everything ${mode} did not listen on port ${port} within ${ms} ms:\n${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return { url: `http://127.0.0.1:${port}${mode === 'sse' ? '/sse' : '/mcp'}`, port, stop };
}

/** Ends a detached child by its process group: SIGTERM, then SIGKILL if it lingers. */
function stopper(child: ChildProcess): () => Promise<void> {
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    try {
      process.kill(-child.pid!, 'SIGTERM');
    } catch {
      return; // already gone
    }
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // gone meanwhile
      }
    }, 2000);
    await exited;
    clearTimeout(timer);
  };
}

export interface SeenRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: { jsonrpc?: string; id?: string | number; method?: string; params?: Record<string, unknown> } | undefined;
  at: number;
}

export interface Fixture extends RunningServer {
  /** Every request the fixture saw, in order, plus DROP entries for the streams it cut. */
  requests(): Promise<SeenRequest[]>;
}

const FIXTURE = path.join(ROOT, 'test', 'fixtures', 'http-server.mjs');

/** Starts test/fixtures/http-server.mjs (or another fixture that prints "LISTENING <port>") in the given scenario on a loopback port. */
export function startFixture(scenario: string, file = FIXTURE): Promise<Fixture> {
  const child = spawn(process.execPath, [file, scenario], { stdio: ['ignore', 'pipe', 'inherit'], detached: true });
  const stop = stopper(child);
  return new Promise<Fixture>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => {
      void stop();
      reject(new Error(`the HTTP fixture did not start: ${out}`));
    }, 10_000);
    child.stdout!.setEncoding('utf8').on('data', (text: string) => {
      out += text;
      const match = /LISTENING (\d+)/.exec(out);
      if (!match) return;
      clearTimeout(timer);
      const port = Number(match[1]);
      const origin = `http://127.0.0.1:${port}`;
      resolve({
        url: `${origin}/mcp`,
        port,
        stop,
        requests: async () => (await (await fetch(`${origin}/_requests`)).json()) as SeenRequest[],
      });
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the HTTP fixture exited with code ${code}: ${out}`));
    });
  });
}

/**
 * For a describe block: a `start(scenario)` that starts an HTTP fixture, and an afterEach that
 * closes the test's clients first, then stops every fixture the test started.
 */
export function useFixtures(): (scenario: string) => Promise<Fixture> {
  const fixtures: Fixture[] = [];
  afterEach(async () => {
    await closeAll();
    await Promise.all(fixtures.splice(0).map((f) => f.stop()));
  });
  return async (scenario) => {
    const fixture = await startFixture(scenario);
    fixtures.push(fixture);
    return fixture;
  };
}

/** server-everything reached one way: a fresh transport per test, so each test has its own session. */
export interface EverythingSetup {
  transport(): Transport;
  stop?(): Promise<void>;
}

/** Every transport server-everything speaks, by name, each set up when its suite starts. */
export const EVERYTHING_TRANSPORTS: ReadonlyArray<readonly [name: string, setUp: () => Promise<EverythingSetup>]> = [
  ['stdio', async () => ({ transport: () => new StdioTransport({ shutdownGraceMs: 500, ...everythingServer() }) })],
  [
    'Streamable HTTP',
    async () => {
      const server = await startEverything('streamableHttp');
      return { transport: () => new StreamableHttpTransport({ url: server.url }), stop: server.stop };
    },
  ],
  [
    'HTTP+SSE',
    async () => {
      const server = await startEverything('sse');
      return { transport: () => new SseTransport({ url: server.url }), stop: server.stop };
    },
  ],
];
