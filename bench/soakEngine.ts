// The soak's workload, shared by the long soak (bench/soak.ts, `npm run soak`) and its short run
// in `npm test` (test/core/soak.test.ts). Servers are real processes (bench/fixture-server.mjs in
// its flood mode) run by the real ServerRegistry and ServerHandle, as the extension runs them; every
// server floods log messages on a timer and with every answer. Each server gets a number of calls,
// a few in flight at once, and by its call index some of them are something else:
//   - a burst: the server sends `burstSize` log messages and progress notifications before the answer;
//   - a cancellation: a call the server holds, cancelled as soon as its first progress shows that
//     the server has it (so it is cancelled mid-call, never before it was sent nor after it was answered);
//   - a restart: stop() and start() of the handle, with calls in flight;
//   - a crash: SIGKILL to the server's process group, and the handle's own restart.
// Every call ends one way only, and each way is counted. A call may fail with Connection Closed
// only when it was made on a connection the soak itself ended; anything else is unexpected.
import * as fs from 'node:fs';
import { getEventListeners, setMaxListeners } from 'node:events';
import { REQUEST_CANCELLED } from '../src/core/jsonrpc/connection';
import type { McpClient } from '../src/core/client/client';
import { ErrorCode, McpError } from '../src/core/protocol/errors';
import { parseServerDefinitions, type StdioServerDefinition } from '../src/core/servers/definition';
import { ServerHandle, type LaunchContext, type RestartPolicy } from '../src/core/servers/handle';
import { stdioParamsFor } from '../src/core/servers/launch';
import { ServerRegistry } from '../src/core/servers/registry';
import { StdioTransport } from '../src/core/transport/stdio';
import { FIXTURE } from './workloads';

export interface SoakOptions {
  servers: number;
  callsPerServer: number;
  /** Calls in flight per server. */
  lanes: number;
  /** Every how many calls of a server one is a burst, a cancellation, a restart (stop + start), a crash. */
  every: { burst: number; cancel: number; restart: number; crash: number };
  /** Log messages (and as many progress notifications) in one burst. */
  burstSize: number;
  /** No call starts after this time (performance.now()); the calls in flight still end. */
  deadline?: number;
  /** Called every `everyMs` while calls run, with how many have ended so far. */
  sample?: { everyMs: number; take(callsEnded: number): void };
}

/** The ways a call can end. All but `unexpected` are what the soak asks for. */
export interface SoakOutcomes {
  /** Answered with the text sent (bursts included). */
  answered: number;
  /** A held call, rejected as cancelled (-32800) after we cancelled it. */
  cancelled: number;
  /** Rejected with Connection Closed (-32000) because the soak stopped or killed its server meanwhile. */
  closedByRestart: number;
  unexpected: number;
}

export interface SoakReport {
  calls: number;
  seconds: number;
  outcomes: SoakOutcomes;
  /** The first few unexpected outcomes, each with the call that had it. */
  unexpectedSamples: string[];
  restarts: number;
  crashes: number;
  /** Every start of a server process, the first ones included. */
  launches: number;
  bursts: { answered: number; progressShort: number; messagesExpected: number; messagesReceived: number };
  logMessages: number;
  /** Everything that must be back to zero (or where it started) once the soak is over. */
  leftovers: {
    /** Pending requests, progress handlers, inbound requests and cancelled inbound ones, summed over every connection the soak ended and every running one at the end. */
    connectionState: number;
    /** Held calls the servers still wait on after their cancellation (asked with `held` before the end). */
    heldOnServers: number;
    /** Growth of the listeners on the pipes of each server running at the end since it started, summed. */
    pipeListenerGrowth: number;
    /** Growth of the abort listeners on the signal every plain call shares. */
    abortListenerGrowth: number;
    /** Timers, pipes and processes of this process left after everything stopped, beyond those before the soak. */
    activeResources: string[];
    /** Server processes still children of this one after everything stopped (Linux only: from /proc). */
    childProcesses: number[];
    unhandledRejections: string[];
  };
}

/** Every crash is the first of its window: the handle restarts it after a short delay, each time. */
const SOAK_RESTART_POLICY: RestartPolicy = { maxRestarts: 1, windowMs: 0, baseDelayMs: 20 };
/** A call not answered by then fails with a timeout, an unexpected outcome, instead of holding the soak up forever. */
const REQUEST_TIMEOUT_MS = 30_000;
const UNEXPECTED_SAMPLES = 10;

const context: LaunchContext = {
  prepare: async (def) => def,
  createTransport: async (def) => new StdioTransport({ ...(await stdioParamsFor(def as StdioServerDefinition)), shutdownGraceMs: 2000 }),
  handlers: () => ({}),
  clientInfo: { name: 'soak', version: '1.0.0' },
};

/** What the soak's servers were asked to do, counted as it happens. */
interface Tally {
  outcomes: SoakOutcomes;
  unexpectedSamples: string[];
  restarts: number;
  crashes: number;
  launches: number;
  bursts: SoakReport['bursts'];
  logMessages: number;
  connectionState: number;
  pipeListenerGrowth: number;
}

function unexpected(tally: Tally, what: string): void {
  tally.outcomes.unexpected++;
  if (tally.unexpectedSamples.length < UNEXPECTED_SAMPLES) tally.unexpectedSamples.push(what);
}

const statsSum = (client: McpClient): number => {
  const s = client.connectionStats;
  return s ? s.pendingRequests + s.progressHandlers + s.inboundRequests + s.cancelledInbound : 0;
};

const streamListeners = (client: McpClient | undefined, handle: ServerHandle): number => {
  const state = handle.state;
  return state.kind === 'running' && state.launch.client === client ? (state.launch.transport as StdioTransport).streamListenerCount : 0;
};

/** Resources of this process by kind (timers, pipes, processes…), as Node counts them. */
function activeResources(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const kind of process.getActiveResourcesInfo()) counts.set(kind, (counts.get(kind) ?? 0) + 1);
  return counts;
}

/**
 * Resolves once the handles closed so far have finished closing. A child process has exited and its
 * pipes have closed when its transport's close() resolves, but Node lists a handle until libuv's
 * close phase has run its callback: the close phase of this turn of the event loop, or of the next
 * for a handle closed during one. Two nested setImmediate callbacks come after both.
 */
function handlesClosed(): Promise<void> {
  return new Promise((resolve) => setImmediate(() => setImmediate(resolve)));
}

/** This process's children, from /proc; undefined where there is no /proc. */
function childPids(): number[] | undefined {
  try {
    return fs
      .readdirSync(`/proc/${process.pid}/task`)
      .flatMap((task) => fs.readFileSync(`/proc/${process.pid}/task/${task}/children`, 'utf8').split(' ').filter(Boolean))
      .map(Number);
  } catch {
    return undefined;
  }
}

/** One server under the soak: its handle, and the connections the soak itself ended (their calls may fail with Connection Closed). */
class SoakServer {
  private readonly ended = new WeakSet<McpClient>();
  /** Listener counts of the running launch's pipes when it started. */
  private listenersAtStart = 0;
  private next = 0;
  private broken: string | undefined;

  constructor(
    readonly handle: ServerHandle,
    private readonly index: number,
    private readonly options: SoakOptions,
    private readonly tally: Tally,
    private readonly sharedSignal: AbortSignal,
    private readonly calls: { started: number; ended: number },
  ) {
    handle.onDidChangeState((state) => {
      if (state.kind !== 'running') return;
      tally.launches++;
      this.listenersAtStart = (state.launch.transport as StdioTransport).streamListenerCount;
    });
    handle.onLogMessage(({ data }) => {
      tally.logMessages++;
      if (typeof data === 'string' && data.startsWith('burst ')) tally.bursts.messagesReceived++;
    });
  }

  /** The running server's client, once it runs again; undefined when it cannot start any more. */
  private async client(): Promise<McpClient | undefined> {
    for (;;) {
      if (this.broken) return undefined;
      const state = this.handle.state;
      if (state.kind === 'running' && !this.ended.has(state.launch.client)) return state.launch.client;
      if (state.kind === 'error' && state.restartAt === undefined) {
        this.breakDown(`${this.handle.name} stays in error: ${state.message}`);
        return undefined;
      }
      await new Promise<void>((resolve) => {
        const listener = this.handle.onDidChangeState(() => {
          listener.dispose();
          resolve();
        });
      });
    }
  }

  private breakDown(why: string): void {
    if (this.broken) return;
    this.broken = why;
    unexpected(this.tally, why);
  }

  /** The soak itself ends this connection: what fails on it with Connection Closed is expected, and its state must be all gone once it is closed. */
  private endConnection(client: McpClient): void {
    this.ended.add(client);
    client.onDidClose(() => (this.tally.connectionState += statsSum(client)));
  }

  async run(): Promise<void> {
    await Promise.all(Array.from({ length: this.options.lanes }, () => this.lane()));
  }

  private async lane(): Promise<void> {
    const { callsPerServer, every, deadline } = this.options;
    while (this.next < callsPerServer && !(deadline !== undefined && performance.now() >= deadline)) {
      const n = this.next++;
      this.calls.started++;
      if (n > 0 && n % every.restart === Math.floor(every.restart / 2)) await this.restart();
      if (n > 0 && n % every.crash === 0) await this.crash();
      const client = await this.client();
      if (!client) {
        unexpected(this.tally, `call ${n} of ${this.handle.name} not made: ${this.broken}`);
      } else if (n % every.cancel === 1) await this.cancelled(client, n);
      else await this.echo(client, n, n % every.burst === 2 ? this.options.burstSize : 0);
      this.calls.ended++;
    }
  }

  private async restart(): Promise<void> {
    const client = await this.client();
    if (!client) return;
    this.endConnection(client);
    this.tally.restarts++;
    try {
      await this.handle.stop();
      await this.handle.start();
    } catch (error) {
      this.breakDown(`restart of ${this.handle.name} failed: ${McpError.from(error).message}`);
    }
  }

  private async crash(): Promise<void> {
    const client = await this.client();
    const pid = this.handle.pid;
    if (!client || pid === undefined) return;
    this.endConnection(client);
    this.tally.crashes++;
    // The handle sees the connection lost and starts the server again by itself.
    process.kill(-pid, 'SIGKILL');
  }

  /** A plain call (count 0) or a burst: answered with its text, after `count` progress notifications. */
  private async echo(client: McpClient, n: number, count: number): Promise<void> {
    const text = `s${this.index} c${n}`;
    let progress = 0;
    try {
      const { result } = await client.callTool(count ? 'burst' : 'echo', count ? { text, count } : { text }, {
        signal: this.sharedSignal,
        onProgress: () => progress++,
      });
      const first = result.content[0];
      if (first?.type !== 'text' || first.text !== text) return unexpected(this.tally, `${text}: answered ${JSON.stringify(first)}`);
      this.tally.outcomes.answered++;
      if (count) {
        this.tally.bursts.answered++;
        this.tally.bursts.messagesExpected += count;
        // Progress comes before the answer on the same pipe: all of it has arrived.
        if (progress !== count) this.tally.bursts.progressShort++;
      }
    } catch (error) {
      this.failed(client, text, error);
    }
  }

  /** A call the server holds until it is cancelled; cancelled once its first progress shows the server has it. */
  private async cancelled(client: McpClient, n: number): Promise<void> {
    const text = `s${this.index} c${n} (held)`;
    const controller = new AbortController();
    try {
      await client.callTool('hold', {}, { signal: controller.signal, onProgress: () => controller.abort() });
      unexpected(this.tally, `${text}: answered, though the server answers it only by being cancelled`);
    } catch (error) {
      if (controller.signal.aborted && McpError.from(error).code === REQUEST_CANCELLED) this.tally.outcomes.cancelled++;
      else this.failed(client, text, error);
    }
  }

  private failed(client: McpClient, text: string, error: unknown): void {
    const e = McpError.from(error);
    if (e.code === ErrorCode.ConnectionClosed && this.ended.has(client)) this.tally.outcomes.closedByRestart++;
    else unexpected(this.tally, `${text}: ${e.code} ${e.message}`);
  }

  /** How many held calls the server still waits on (its notifications/cancelled came before this question on the same pipe). */
  async held(): Promise<number> {
    const client = await this.client();
    if (!client) return 0;
    const { result } = await client.callTool('held');
    const first = result.content[0];
    return first?.type === 'text' ? Number(first.text) : NaN;
  }

  /** What the running connection still holds, before the registry stops it. */
  finalState(): number {
    const client = this.handle.rawClient;
    if (!client) return 0;
    this.tally.pipeListenerGrowth += streamListeners(client, this.handle) - this.listenersAtStart;
    return statsSum(client);
  }
}

export async function runSoak(options: SoakOptions): Promise<SoakReport> {
  const tally: Tally = {
    outcomes: { answered: 0, cancelled: 0, closedByRestart: 0, unexpected: 0 },
    unexpectedSamples: [],
    restarts: 0,
    crashes: 0,
    launches: 0,
    bursts: { answered: 0, progressShort: 0, messagesExpected: 0, messagesReceived: 0 },
    logMessages: 0,
    connectionState: 0,
    pipeListenerGrowth: 0,
  };
  // The baseline after a turn of the event loop: what the caller set up with this call (a test
  // runner's timeout timer, set once the test's promise exists) counts as before the soak.
  await handlesClosed();
  const unhandledRejections: string[] = [];
  const onUnhandled = (reason: unknown) => unhandledRejections.push(String((reason as Error)?.stack ?? reason));
  process.on('unhandledRejection', onUnhandled);
  const resourcesBefore = activeResources();
  const childrenBefore = new Set(childPids() ?? []);
  // One signal shared by every plain call, as a "stop everything" switch would be: each call adds an
  // abort listener to it and must take it away again when it settles.
  const stopAll = new AbortController();
  setMaxListeners(options.servers * options.lanes + 10, stopAll.signal);
  const abortListenersBefore = getEventListeners(stopAll.signal, 'abort').length;

  const raw = Object.fromEntries(
    Array.from({ length: options.servers }, (_, i) => [
      `soak${i}`,
      { command: process.execPath, args: [FIXTURE, 'flood'], requestTimeoutMs: REQUEST_TIMEOUT_MS },
    ]),
  );
  const { definitions, diagnostics } = parseServerDefinitions(raw, { scope: 'user' });
  if (diagnostics.length) throw new Error(`soak definitions: ${JSON.stringify(diagnostics)}`);
  const calls = { started: 0, ended: 0 };
  const servers: SoakServer[] = [];
  const registry = new ServerRegistry(
    (def) => {
      const handle = new ServerHandle(def, context, SOAK_RESTART_POLICY);
      servers.push(new SoakServer(handle, servers.length, options, tally, stopAll.signal, calls));
      return handle;
    },
    () => true,
  );
  const started = performance.now();
  let sampler: NodeJS.Timeout | undefined;
  let heldOnServers = 0;
  let runningState = 0;
  try {
    await registry.reconcile(definitions);
    if (options.sample) {
      const { everyMs, take } = options.sample;
      sampler = setInterval(() => take(calls.ended), everyMs);
    }
    await Promise.all(servers.map((s) => s.run()));
    clearInterval(sampler);
    for (const held of await Promise.all(servers.map((s) => s.held()))) heldOnServers += held;
    for (const server of servers) runningState += server.finalState();
  } finally {
    clearInterval(sampler);
    await registry.dispose();
    process.off('unhandledRejection', onUnhandled);
  }
  const seconds = (performance.now() - started) / 1000;
  await handlesClosed();
  const resourcesAfter = activeResources();
  const leftResources = [...resourcesAfter]
    .filter(([kind, n]) => n > (resourcesBefore.get(kind) ?? 0))
    .map(([kind, n]) => `${kind} × ${n - (resourcesBefore.get(kind) ?? 0)}`);
  return {
    calls: calls.started,
    seconds,
    outcomes: tally.outcomes,
    unexpectedSamples: tally.unexpectedSamples,
    restarts: tally.restarts,
    crashes: tally.crashes,
    launches: tally.launches,
    bursts: tally.bursts,
    logMessages: tally.logMessages,
    leftovers: {
      connectionState: tally.connectionState + runningState,
      heldOnServers,
      pipeListenerGrowth: tally.pipeListenerGrowth,
      abortListenerGrowth: getEventListeners(stopAll.signal, 'abort').length - abortListenersBefore,
      activeResources: leftResources,
      childProcesses: (childPids() ?? []).filter((pid) => !childrenBefore.has(pid)),
      unhandledRejections,
    },
  };
}

const count = (n: number) => n.toLocaleString('en');

/** What must come out exact, whatever the machine's speed: the long soak prints them, the short one in npm test asserts them. */
export function deterministicChecks(report: SoakReport): Array<[string, boolean]> {
  const { outcomes, bursts, leftovers } = report;
  const ended = outcomes.answered + outcomes.cancelled + outcomes.closedByRestart + outcomes.unexpected;
  return [
    [
      `every call ended one way: ${count(ended)} of ${count(report.calls)}, ${outcomes.unexpected} unexpectedly`,
      ended === report.calls && outcomes.unexpected === 0,
    ],
    [
      `bursts: every answered one had all its progress first (${bursts.progressShort} short), ${count(bursts.messagesReceived)} burst log messages for ${count(bursts.messagesExpected)} expected at least`,
      bursts.progressShort === 0 && bursts.messagesReceived >= bursts.messagesExpected,
    ],
    [
      `left over: connection state ${leftovers.connectionState}, held calls on the servers ${leftovers.heldOnServers}, pipe listeners +${leftovers.pipeListenerGrowth}, shared-signal abort listeners +${leftovers.abortListenerGrowth} (all 0)`,
      leftovers.connectionState === 0 &&
        leftovers.heldOnServers === 0 &&
        leftovers.pipeListenerGrowth === 0 &&
        leftovers.abortListenerGrowth === 0,
    ],
    [
      `after the stop: resources left ${leftovers.activeResources.join(', ') || 'none'}, server processes left ${leftovers.childProcesses.join(', ') || 'none'}, unhandled rejections ${leftovers.unhandledRejections.length}`,
      leftovers.activeResources.length === 0 && leftovers.childProcesses.length === 0 && leftovers.unhandledRejections.length === 0,
    ],
  ];
}
