import { Emitter, type Disposable } from 'vscode-jsonrpc/node';
import { McpClient, type ClientHandlers, type ServerClient } from '../client/client';
import { EraVerdicts, protocolToUse, type ProtocolChoice } from '../client/era';
import type { TraceEvent } from '../jsonrpc/connection';
import { ErrorCode, McpError } from '../protocol/errors';
import { ClientRequests, type ClientRequestMethod } from '../protocol/methods';
import { isModernProtocolVersion } from '../protocol/versions';
import type {
  Implementation,
  LoggingLevel,
  LoggingMessageNotificationParams,
  Prompt,
  Resource,
  ResourceTemplate,
  Tool,
} from '../protocol/types';
import type { LogEntry, Transport } from '../transport/transport';
import { definitionHash, type ServerDefinition } from './definition';
import { SerialQueue } from './serialQueue';
import { Launch, type ServerState } from './state';

export interface LaunchContext {
  /**
   * Resolves variables and asks for consent; throws to refuse the start. `signal` aborts when the
   * start is abandoned (the server is stopped, removed, or its definition changed): a prompt it
   * shows for this start should close then, since its answer would not be used.
   */
  prepare(def: ServerDefinition, signal: AbortSignal): Promise<ServerDefinition>;
  createTransport(def: ServerDefinition): Transport | Promise<Transport>;
  handlers(def: ServerDefinition): ClientHandlers;
  clientInfo?: Implementation;
  /** The era each definition turned out to speak, shared by every server of the host; each handle keeps its own otherwise. */
  eraVerdicts?: EraVerdicts;
}

/**
 * How long a stdio server may stay silent on `server/discover` before it counts as one that
 * predates 2026-07-28. Servers of every SDK we know answer an unknown method at once (-32601 or
 * "not initialized"), so this is paid only by a silent one, once per definition: the verdict is
 * remembered. Short, because a silent server holds up its first start by this much.
 */
export const STDIO_PROBE_TIMEOUT_MS = 3000;

/** Initialize under a remembered legacy verdict was refused with -32022 naming a stateless revision: the verdict is out of date. */
function isStaleLegacyVerdict(error: unknown, configured: ProtocolChoice, used: ProtocolChoice): boolean {
  const e = McpError.from(error);
  if (configured !== 'auto' || used !== '2025-11-25' || e.code !== ErrorCode.UnsupportedProtocolVersion) return false;
  const supported = (e.data as { supported?: unknown } | undefined)?.supported;
  return Array.isArray(supported) && supported.some(isModernProtocolVersion);
}

/**
 * How the running connection's era was chosen: by the `protocol` setting, from a verdict
 * remembered from an earlier start, by asking `server/discover`, or because the server exited on
 * that question and was started again with initialize.
 */
export type EraDecision = 'setting' | 'remembered' | 'discover' | 'exitedOnDiscover';

export interface RestartPolicy {
  /** Automatic restarts allowed within `windowMs`; after that the server stays in error. */
  maxRestarts: number;
  windowMs: number;
  /** First delay; each further restart in the window doubles it. */
  baseDelayMs: number;
}

export const DEFAULT_RESTART_POLICY: RestartPolicy = { maxRestarts: 3, windowMs: 5 * 60_000, baseDelayMs: 1000 };

export type ListKind = 'tools' | 'prompts' | 'resources' | 'templates';

/** The request each list of the handle comes from: a change notification refreshes the lists it makes stale. */
const LIST_REQUESTS: Record<ListKind, ClientRequestMethod> = {
  tools: ClientRequests.listTools.method,
  prompts: ClientRequests.listPrompts.method,
  resources: ClientRequests.listResources.method,
  templates: ClientRequests.listResourceTemplates.method,
};
const LIST_KINDS = Object.keys(LIST_REQUESTS) as ListKind[];

/**
 * How one holder of a subscription sends `resources/subscribe` on a connection: the first time
 * inside the gated request that registered it, again on every new connection through the gate,
 * audited (src/core/policy/gated.ts). Rejects when it was not sent.
 */
export type SubscribeSender = (client: McpClient, when: 'first' | 'again') => Promise<void>;

/** Whether subscriptions go as resources/subscribe: 2026-07-28 replaced it with the client's one subscriptions/listen, which carries every URI (setListenedResources). */
function sendsSubscribe(client: McpClient): boolean {
  return !!client.serverCapabilities?.resources?.subscribe && client.era !== 'modern';
}

/** Thrown inside a start that a stop (or dispose) overtook; never leaves the handle. */
class StartAborted extends Error {}

/** `work`'s outcome, unless `signal` aborts first: then it rejects at once, and what `work` brings later is not used. */
function unlessAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(new StartAborted());
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new StartAborted());
    signal.addEventListener('abort', onAbort, { once: true });
    void work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/**
 * One configured server: its launches, its state, and what it offers. A {@link Launch} owns the
 * transport, the client and their subscriptions; stopping or a crash disposes them together.
 */
export class ServerHandle {
  private _state: ServerState = { kind: 'stopped' };
  /** The launch being started or running; the running state carries the same one. */
  private current: Launch | undefined;
  /**
   * Start and stop run one at a time, in the order asked, so no transition acts on a launch
   * another one made: a start asked during a stop runs after it.
   */
  private readonly transitions = new SerialQueue();
  /** The start waiting in `transitions` or under way: every start() asked meanwhile shares it, and a stop aborts it. */
  private pendingStart: { run: Promise<void>; abort: AbortController } | undefined;
  /** What the last start() or stop() asked for: a crash after a stop was asked restarts nothing. */
  private wanted: 'running' | 'stopped' = 'stopped';
  private crashes: number[] = [];
  private restartTimer: ReturnType<typeof setTimeout> | undefined;
  private disposed = false;
  /** Resources someone wants updates of, with their holders (oldest first): subscribed again on every new connection. */
  private readonly subscribed = new Map<string, Array<{ send: SubscribeSender }>>();
  private _logLevel: LoggingLevel;
  private readonly eraVerdicts: EraVerdicts;
  private _eraDecision: EraDecision | undefined;

  tools: Tool[] = [];
  prompts: Prompt[] = [];
  resources: Resource[] = [];
  templates: ResourceTemplate[] = [];

  private readonly stateEmitter = new Emitter<ServerState>();
  private readonly listsEmitter = new Emitter<ListKind>();
  private readonly logEmitter = new Emitter<LogEntry>();
  private readonly logMessageEmitter = new Emitter<LoggingMessageNotificationParams>();
  private readonly traceEmitter = new Emitter<TraceEvent>();
  private readonly resourceUpdatedEmitter = new Emitter<string>();
  private readonly elicitationCompleteEmitter = new Emitter<string>();
  readonly onDidChangeState = this.stateEmitter.event;
  readonly onDidChangeLists = this.listsEmitter.event;
  readonly onLog = this.logEmitter.event;
  readonly onLogMessage = this.logMessageEmitter.event;
  readonly onTrace = this.traceEmitter.event;
  readonly onResourceUpdated = this.resourceUpdatedEmitter.event;
  /** `notifications/elicitation/complete` of the current launch: the id of the finished elicitation. */
  readonly onElicitationComplete = this.elicitationCompleteEmitter.event;

  constructor(
    private _definition: ServerDefinition,
    private readonly context: LaunchContext,
    private readonly policy: RestartPolicy = DEFAULT_RESTART_POLICY,
    private readonly now: () => number = Date.now,
  ) {
    this._logLevel = _definition.logLevel ?? 'info';
    this.eraVerdicts = context.eraVerdicts ?? new EraVerdicts();
  }

  get definition(): ServerDefinition {
    return this._definition;
  }

  /**
   * Takes a definition whose `definitionHash` equals this one's: what differs applies without a
   * restart (the log level, sharing with the chat).
   */
  adopt(def: ServerDefinition): void {
    this._definition = def;
    this.setLogLevel(def.logLevel);
  }

  /** The level asked of the server with logging/setLevel; starts as the definition's and follows `setLogLevel`. */
  get logLevel(): LoggingLevel {
    return this._logLevel;
  }

  /** Tells a running server that declares `logging` the new level now, and every later launch after its handshake. */
  setLogLevel(level: LoggingLevel): void {
    if (level === this._logLevel) return;
    this._logLevel = level;
    // Also while the first lists load: the handshake is done, and doStart has sent the old level already.
    const client = this.current?.client;
    if (client?.serverCapabilities) this.sendLogLevel(client);
  }

  private sendLogLevel(client: McpClient): void {
    // In 2026-07-28 this only sets the level every later request carries in _meta.
    if (!client.serverCapabilities?.logging) return;
    const level = this._logLevel;
    client.setLoggingLevel(level).then(
      () => this.log('debug', `log level set to ${level}`),
      (e) => {
        if (this.current?.client === client) this.log('warning', `logging/setLevel ${level}: ${McpError.from(e).message}`);
      },
    );
  }

  get name(): string {
    return this.definition.name;
  }
  get state(): ServerState {
    return this._state;
  }
  /** The process id of a running stdio server. */
  get pid(): number | undefined {
    return this._state.kind === 'running' ? this._state.launch.pid : undefined;
  }

  /** The folder the running stdio server was started in, where it resolves relative paths (the fence checks them there); undefined for HTTP. */
  get workingFolder(): string | undefined {
    return this._state.kind === 'running' ? this._state.launch.workingFolder : undefined;
  }

  /** The environment the running stdio server was started with (the fence expands its variables); undefined for HTTP. */
  get environment(): Readonly<NodeJS.ProcessEnv> | undefined {
    return this._state.kind === 'running' ? this._state.launch.environment : undefined;
  }

  /** How the running connection's era was chosen (see {@link EraDecision}). */
  get eraDecision(): EraDecision | undefined {
    return this._state.kind === 'running' ? this._eraDecision : undefined;
  }

  /** Whether the last start() or stop() asked for it to run: a stopped or failed server with this set is on its way back. */
  get wantsToRun(): boolean {
    return this.wanted === 'running' && !this.disposed;
  }

  /** The client of the running launch, without the gated requests: those go through a `GatedServer` (src/core/policy/gated.ts). */
  get client(): ServerClient | undefined {
    return this.rawClient;
  }

  /** The running launch's whole client, gated requests included: only src/core/policy sends with it (test/core/structure.test.ts). */
  get rawClient(): McpClient | undefined {
    return this._state.kind === 'running' ? this._state.launch.client : undefined;
  }

  /**
   * Starts the server unless it runs or a start is already asked (that one is shared); after a
   * stop still under way. A person's start also forgets past crashes. A start that a stop
   * overtakes resolves without running.
   */
  start(byUser = true): Promise<void> {
    if (this.disposed) return Promise.reject(new Error(`${this.name} was removed`));
    if (byUser) this.crashes = [];
    clearTimeout(this.restartTimer);
    this.restartTimer = undefined;
    this.wanted = 'running';
    if (this.pendingStart) return this.pendingStart.run;
    if (this._state.kind === 'running' && this.transitions.idle) return Promise.resolve();
    const abort = new AbortController();
    const pending = {
      abort,
      run: this.transitions
        .run(() => this.doStart(abort.signal))
        .finally(() => {
          if (this.pendingStart === pending) this.pendingStart = undefined;
        }),
    };
    this.pendingStart = pending;
    return pending.run;
  }

  /**
   * Stops the server. A start under way is abandoned at once (its launch ends, it does not wait
   * for a prompt or an initialize that never answers); a start asked after this runs after it.
   * With `because`, the server ends in error with that message (stopped by the organisation's policy, say).
   */
  stop(because?: string): Promise<void> {
    clearTimeout(this.restartTimer);
    this.restartTimer = undefined;
    this.wanted = 'stopped';
    this.pendingStart?.abort.abort();
    this.pendingStart = undefined;
    return this.transitions.run(async () => {
      await this.endLaunch();
      this.setState(because === undefined ? { kind: 'stopped' } : { kind: 'error', message: because });
    });
  }

  /**
   * Keeps `notifications/resources/updated` coming for `uri` until the returned disposable is
   * disposed by every holder: subscribed now if the server runs (the first holder's `send`, which
   * this waits for: a failure releases the hold and rejects), and again after each restart and
   * each session renewal (the oldest holder's `send`). Servers without `resources.subscribe` are not asked.
   */
  async subscribeResource(uri: string, send: SubscribeSender): Promise<Disposable> {
    const holder = { send };
    const holders = this.subscribed.get(uri) ?? [];
    holders.push(holder);
    this.subscribed.set(uri, holders);
    if (holders.length === 1) this.current?.client.setListenedResources(this.subscribed.keys());
    let released = false;
    const held: Disposable = {
      dispose: () => {
        if (released) return;
        released = true;
        const left = (this.subscribed.get(uri) ?? []).filter((h) => h !== holder);
        if (left.length > 0) return void this.subscribed.set(uri, left);
        this.subscribed.delete(uri);
        this.current?.client.setListenedResources(this.subscribed.keys());
        const client = this.rawClient;
        if (client && sendsSubscribe(client)) {
          client.unsubscribeResource(uri).catch((e) => this.log('debug', `unsubscribe ${uri}: ${McpError.from(e).message}`));
        }
      },
    };
    const client = this.rawClient;
    if (holders.length === 1 && client && sendsSubscribe(client)) {
      try {
        await send(client, 'first');
      } catch (error) {
        held.dispose();
        throw error;
      }
    }
    return held;
  }

  /** The resources kept subscribed, for tests and diagnostics. */
  get subscribedResources(): string[] {
    return [...this.subscribed.keys()];
  }

  /** A new connection knows none of the subscriptions: each is sent again by its oldest holder, through that holder's gate. */
  private resubscribe(client: McpClient): void {
    if (!sendsSubscribe(client)) return;
    for (const [uri, holders] of this.subscribed) {
      holders[0]?.send(client, 'again').catch((e) => {
        if (this.current?.client === client) this.log('warning', `subscribe ${uri}: ${McpError.from(e).message}`);
      });
    }
  }

  /** A stop and a start, asked together so that nothing asked later comes between them. */
  async restart(): Promise<void> {
    const stopped = this.stop();
    const started = this.start();
    await stopped;
    await started;
  }

  /** Stops the server for good; its events end with it. */
  async dispose(): Promise<void> {
    this.disposed = true;
    await this.stop();
    for (const emitter of [
      this.stateEmitter,
      this.listsEmitter,
      this.logEmitter,
      this.logMessageEmitter,
      this.traceEmitter,
      this.resourceUpdatedEmitter,
      this.elicitationCompleteEmitter,
    ])
      emitter.dispose();
  }

  /** One start, run by `transitions`; `signal` aborts it when a stop overtakes it. */
  private async doStart(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return;
    this.setState({ kind: 'starting' });
    this.log('info', `starting (${this.definition.origin.scope} definition)`);
    // Every wait below that a stop must not sit out (a prompt, a handshake, the first lists) goes through this.
    const unlessStopped = <T>(work: Promise<T>) => unlessAborted(work, signal);
    try {
      // An abandoned start does not wait for its prompts; prepare learns it through the signal, to close them.
      const def = await unlessStopped(this.context.prepare(this.definition, signal));
      const hash = definitionHash(this.definition);
      const configured = def.protocol ?? 'auto';
      const choice = protocolToUse(configured, this.eraVerdicts.get(hash));
      let decision: EraDecision = configured !== 'auto' ? 'setting' : choice === 'auto' ? 'discover' : 'remembered';
      let launch: Launch;
      let init;
      try {
        launch = await this.newLaunch(def, choice, signal);
        init = await unlessStopped(launch.client.connect());
      } catch (error) {
        if (error instanceof StartAborted) throw error;
        if (isStaleLegacyVerdict(error, def.protocol ?? 'auto', choice)) {
          // Remembered as legacy, but it answers initialize with "unsupported version": it was upgraded. Ask again.
          this.log('info', `${McpError.from(error).message}; asking it which protocol it speaks`);
          this.eraVerdicts.delete(hash);
          await this.current?.dispose();
          decision = 'discover';
          launch = await this.newLaunch(def, 'auto', signal);
          init = await unlessStopped(launch.client.connect());
        } else {
          if (McpError.from(error).kind?.type !== 'probeLost') throw error;
          // Some servers that predate server/discover exit on it: start it again and use initialize.
          this.log('info', `${McpError.from(error).message}; starting it again with initialize`);
          this.eraVerdicts.set(hash, { era: 'legacy' });
          await this.current?.dispose();
          decision = 'exitedOnDiscover';
          launch = await this.newLaunch(def, '2025-11-25', signal);
          init = await unlessStopped(launch.client.connect());
        }
      }
      const client = launch.client;
      const transport = launch.transport;
      this.eraVerdicts.set(
        hash,
        client.era === 'modern' ? { era: 'modern', version: init.protocolVersion as '2026-07-28' } : { era: 'legacy' },
      );
      this._eraDecision = decision;
      launch.hold(client.onDidClose((reason) => this.onClosed(launch, reason)));
      // First after the handshake, so the server filters its messages from the start.
      this.sendLogLevel(client);
      // The first lists load before the state says running, so whoever sees "running" sees them too.
      await unlessStopped(Promise.all((['tools', 'prompts', 'resources', 'templates'] as const).map((k) => this.refresh(k))));
      if (this.current !== launch) return;
      this.log(
        'info',
        `running: ${init.serverInfo?.name ?? '?'} ${init.serverInfo?.version ?? ''}, protocol ${init.protocolVersion}${client.era === 'modern' ? ' (stateless)' : ''}`,
      );
      // A new process or session knows none of the old subscriptions.
      this.resubscribe(client);
      launch.hold(transport.onDidRenewSession?.(() => this.resubscribe(launch.client)));
      this.setState({ kind: 'running', launch });
    } catch (error) {
      await this.endLaunch();
      // The stop that overtook this start says the rest (its state comes next in the queue).
      if (error instanceof StartAborted) return void this.log('info', 'start abandoned: the server was stopped');
      const e = McpError.from(error);
      this.log('error', `failed to start: ${e.message}`);
      this.setState({ kind: 'error', message: e.message });
      throw e;
    }
  }

  /**
   * A transport and a client for one attempt to start, wired to this handle; it becomes the
   * current launch, unless the start was abandoned while the transport was made.
   */
  private async newLaunch(def: ServerDefinition, protocol: ProtocolChoice, signal: AbortSignal): Promise<Launch> {
    const transport = await this.context.createTransport(def);
    if (signal.aborted) {
      await transport.close();
      throw new StartAborted();
    }
    const client = new McpClient(transport, {
      clientInfo: this.context.clientInfo,
      handlers: this.context.handlers(def),
      requestTimeoutMs: def.requestTimeoutMs,
      initializeTimeoutMs: def.startupTimeoutMs ?? 30_000,
      protocol,
      probeTimeoutMs: def.type === 'stdio' ? STDIO_PROBE_TIMEOUT_MS : undefined,
    });
    // A 2026-07-28 connection listens for these from the start (the initialize era subscribes after the first lists).
    client.setListenedResources(this.subscribed.keys());
    const launch = new Launch(transport, client);
    this.current = launch;
    launch.hold(
      client.onLog((e) => this.logEmitter.fire(e)),
      client.onTrace((e) => this.traceEmitter.fire(e)),
      client.onLogMessage((m) => this.logMessageEmitter.fire(m)),
      client.onResourceUpdated((p) => this.resourceUpdatedEmitter.fire(p.uri)),
      client.onElicitationComplete((id) => this.elicitationCompleteEmitter.fire(id)),
      client.onListsStale((stale) => {
        for (const kind of LIST_KINDS) if (stale.includes(LIST_REQUESTS[kind])) void this.refresh(kind);
      }),
    );
    return launch;
  }

  private readonly refreshing = new Map<ListKind, { run: Promise<void>; again: boolean; fresh: boolean }>();

  /**
   * Fetches one list again if the server offers it; a failure is logged and keeps the old list.
   * Calls while one is under way coalesce into one more fetch after it (servers often send a
   * burst of list_changed). A list the server let us cache (2026-07-28 `ttlMs`) comes from the
   * cache while fresh, unless `fresh` (the person asked for it) says to ask the server.
   */
  refresh(kind: ListKind, options: { fresh?: boolean } = {}): Promise<void> {
    const current = this.refreshing.get(kind);
    if (current) {
      current.again = true;
      current.fresh ||= !!options.fresh;
      return current.run;
    }
    const entry = { run: Promise.resolve(), again: false, fresh: !!options.fresh };
    entry.run = (async () => {
      try {
        do {
          entry.again = false;
          const fresh = entry.fresh;
          entry.fresh = false;
          await this.fetchList(kind, fresh);
        } while (entry.again);
      } finally {
        this.refreshing.delete(kind);
      }
    })();
    this.refreshing.set(kind, entry);
    return entry.run;
  }

  private async fetchList(kind: ListKind, fresh: boolean): Promise<void> {
    // The launch's client, also while starting: the first lists load before "running".
    const client = this.current?.client;
    const caps = client?.serverCapabilities;
    if (!client || !caps) return;
    try {
      switch (kind) {
        case 'tools':
          if (caps.tools) this.tools = await client.listTools({ fresh });
          break;
        case 'prompts':
          if (caps.prompts) this.prompts = await client.listPrompts({ fresh });
          break;
        case 'resources':
          if (caps.resources) this.resources = await client.listResources({ fresh });
          break;
        case 'templates':
          if (caps.resources) this.templates = await client.listResourceTemplates({ fresh });
          break;
      }
      this.listsEmitter.fire(kind);
    } catch (error) {
      if (this.current?.client === client) this.log('warning', `could not list ${kind}: ${McpError.from(error).message}`);
    }
  }

  private onClosed(launch: Launch, reason: string): void {
    if (this.current !== launch || this.wanted === 'stopped' || this.disposed) return;
    this.log('error', `connection lost: ${reason}`);
    void this.endLaunch();
    const at = this.now();
    this.crashes = this.crashes.filter((t) => at - t < this.policy.windowMs);
    this.crashes.push(at);
    if (this.crashes.length > this.policy.maxRestarts) {
      this.setState({ kind: 'error', message: `${reason} (gave up after ${this.policy.maxRestarts} restarts)` });
      return;
    }
    const delay = this.policy.baseDelayMs * 2 ** (this.crashes.length - 1);
    this.setState({ kind: 'error', message: reason, restartAt: at + delay });
    this.log('info', `restarting in ${delay} ms (restart ${this.crashes.length} of ${this.policy.maxRestarts})`);
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      this.start(false).catch(() => undefined);
    }, delay);
  }

  private async endLaunch(): Promise<void> {
    const launch = this.current;
    this.current = undefined;
    this.tools = [];
    this.prompts = [];
    this.resources = [];
    this.templates = [];
    if (launch) await launch.dispose();
  }

  private setState(state: ServerState): void {
    this._state = state;
    this.stateEmitter.fire(state);
  }

  /** A line in this server's log: its lifecycle, and what the editor layer has to say about it. */
  log(level: LogEntry['level'], message: string): void {
    this.logEmitter.fire({ level, source: 'server', message });
  }
}
