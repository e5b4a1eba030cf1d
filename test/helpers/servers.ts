import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import {
  McpClient,
  StdioTransport,
  type ClientHandlers,
  type LogEntry,
  type McpClientOptions,
  type StdioServerParams,
  type Transport,
} from '../../src/core';

export const ROOT = path.resolve(__dirname, '..', '..');
const pkg = (name: string, file: string) => path.join(ROOT, 'node_modules', '@modelcontextprotocol', name, 'dist', file);

export const everythingServer = (): StdioServerParams => ({
  command: process.execPath,
  args: [pkg('server-everything', 'index.js'), 'stdio'],
});
export const filesystemServer = (...dirs: string[]): StdioServerParams => ({
  command: process.execPath,
  args: [pkg('server-filesystem', 'index.js'), ...dirs],
});
export const rawServer = (scenario: string, extra: Partial<StdioServerParams> = {}): StdioServerParams => ({
  command: process.execPath,
  args: [path.join(ROOT, 'test', 'fixtures', 'raw-server.mjs'), scenario],
  ...extra,
});

/** test/fixtures/v2-server.mjs: the v2 SDK's serveStdio, both eras. */
export const v2StdioServer = (): StdioServerParams => ({
  command: process.execPath,
  args: [path.join(ROOT, 'test', 'fixtures', 'v2-server.mjs'), 'stdio'],
});
export const V2_FIXTURE = path.join(ROOT, 'test', 'fixtures', 'v2-server.mjs');

export interface TestClient<T extends Transport = StdioTransport> {
  client: McpClient;
  transport: T;
  logs: LogEntry[];
  /** Resolves with the first log entry that matches, or rejects after `ms`. */
  waitForLog(match: (entry: LogEntry) => boolean, ms?: number): Promise<LogEntry>;
}

const open: McpClient[] = [];

/** Starts a server and connects; every client made here is closed after each test. */
export function connect(params: StdioServerParams, options: McpClientOptions = {}): Promise<TestClient> {
  return connectTransport(new StdioTransport({ shutdownGraceMs: 500, ...params }), options);
}

/** Connects over any transport; the client is closed after each test like the others. */
export async function connectTransport<T extends Transport>(transport: T, options: McpClientOptions = {}): Promise<TestClient<T>> {
  const client = new McpClient(transport, { requestTimeoutMs: 20_000, ...options });
  open.push(client);
  const logs: LogEntry[] = [];
  const waiters = new Set<(e: LogEntry) => void>();
  client.onLog((entry) => {
    logs.push(entry);
    for (const w of [...waiters]) w(entry);
  });
  const waitForLog = (match: (entry: LogEntry) => boolean, ms = 5000) =>
    new Promise<LogEntry>((resolve, reject) => {
      const found = logs.find(match);
      if (found) return resolve(found);
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`no matching log line within ${ms} ms; saw:\n${logs.map((l) => `  [${l.source}] ${l.message}`).join('\n')}`));
      }, ms);
      const check = (e: LogEntry) => {
        if (!match(e)) return;
        clearTimeout(timer);
        waiters.delete(check);
        resolve(e);
      };
      waiters.add(check);
    });
  await client.connect();
  return { client, transport, logs, waitForLog };
}

export async function closeAll(): Promise<void> {
  await Promise.all(open.splice(0).map((c) => c.close()));
}

export function allHandlers(overrides: ClientHandlers = {}): ClientHandlers {
  return {
    listRoots: () => [{ uri: 'file:///tmp/mcp-host-test-root', name: 'Test Root' }],
    createMessage: async () => ({
      role: 'assistant',
      content: { type: 'text', text: 'sampled' },
      model: 'test-model',
      stopReason: 'endTurn',
    }),
    elicit: async () => ({ action: 'decline' }),
    ...overrides,
  };
}

/** Resolves on the next event, or rejects after `ms`. */
export function nextEvent<T>(
  event: (listener: (e: T) => void) => { dispose(): void },
  ms = 5000,
  match: (e: T) => boolean = () => true,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      sub.dispose();
      reject(new Error(`event not seen within ${ms} ms`));
    }, ms);
    const sub = event((e) => {
      if (!match(e)) return;
      clearTimeout(timer);
      sub.dispose();
      resolve(e);
    });
  });
}

/** Polls `probe` until it returns a value, for server state that settles asynchronously. */
export async function eventually<T>(probe: () => Promise<T | undefined>, ms = 5000, every = 50): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${ms} ms`);
    await new Promise((r) => setTimeout(r, every));
  }
}

/** The Node 22 binary test/harness/install-node22.sh installs from npm into .harness/node22 (idempotent; the conformance suite needs it). */
export function installedNode22(): string {
  return execFileSync('bash', [path.join(ROOT, 'test', 'harness', 'install-node22.sh')], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    timeout: 5 * 60_000,
  }).trim();
}
