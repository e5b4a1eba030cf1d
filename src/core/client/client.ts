import { Emitter, type Disposable } from 'vscode-jsonrpc/node';
import { McpConnection, type ConnectionStats, type RequestOptions, type TraceEvent } from '../jsonrpc/connection';
import { ErrorCode, McpError } from '../protocol/errors';
import {
  ClientRequests,
  ListChanges,
  Notifications,
  listsInvalidatedBy,
  type ClientRequestMethod,
  type ListChangeKind,
  type PaginatedParams,
} from '../protocol/methods';
import type {
  CallToolResult,
  ClientCapabilities,
  CompleteParams,
  CompleteResult,
  GetPromptResult,
  Implementation,
  InitializeResult,
  LoggingLevel,
  LoggingMessageNotificationParams,
  Prompt,
  ReadResourceResult,
  RequestId,
  Resource,
  ResourceTemplate,
  ResourceUpdatedNotificationParams,
  ServerCapabilities,
  SubscriptionFilter,
  Task,
  TaskMetadata,
  Tool,
} from '../protocol/types';
import { stableStringify } from '../protocol/stableStringify';
import { SchemaValidator, type SchemaCheck } from '../schema/validator';
import type { LogEntry, Transport } from '../transport/transport';
import { ResultCache, type CachingRequestOptions } from './cache';
import { missingCapability } from './capabilities';
import { LegacySession, invalidParamsNamesUri } from './legacySession';
import type { McpClientOptions } from './options';
import { ServerRequestRouter, clientCapabilitiesOf } from './serverRequests';
import type { AnyClientRequest, EraSession, SessionContext } from './session';
import { StatelessSession } from './statelessSession';
import { followTask, isCreateTaskResult, taskProgressRoute } from './tasks';
import { ElicitationCompletions } from './urlElicitation';

export type { ClientHandlers, ElicitationWait, McpClientOptions } from './options';

export interface CallToolOptions extends RequestOptions {
  /** Check the arguments against the tool's inputSchema first; nothing is sent if they fail. */
  validateInput?: boolean;
  /**
   * The tool's definition the call runs under: the one the gate checked (../policy/gated.ts). The
   * arguments are validated, the task decided and the structured result checked with it, never with
   * a definition looked up again by name (a server may list two tools of one name). Absent: the
   * last listing's.
   */
  tool?: Tool;
  /** When the call runs as a task: every status it passes through. */
  onTaskStatus?(task: Task): void;
  /** The ttl asked for when the call runs as a task; the server's default otherwise. */
  taskTtlMs?: number;
}

export interface ToolCallOutcome {
  result: CallToolResult;
  /** Present when the tool declares an outputSchema: whether structuredContent matches it. */
  structuredContentCheck?: SchemaCheck;
  /** Present when the call ran as a task: its last status. */
  task?: Task;
}

/** The requests only a gate sends (src/core/policy/gated.ts): the client a server's handle hands out lacks them. */
type GatedClientMethod = 'callTool' | 'readResource' | 'getPrompt' | 'subscribeResource' | 'complete';

/** A running server's client as the editor, the gateway and the CLI see it: everything but the gated requests. */
export type ServerClient = Omit<McpClient, GatedClientMethod>;

/** A list call follows at most this many pages… */
export const MAX_LIST_PAGES = 1_000;
/** …and takes at most this many bytes of items (UTF-8 JSON) over all of them: each page may be as large as a message. */
export const MAX_LIST_BYTES = 64 * 1024 * 1024;

const LIST_CHANGE_KINDS = Object.keys(ListChanges) as ListChangeKind[];

/**
 * An MCP client over one transport: one typed method per request, pagination, and one send
 * pipeline (the capability choke point, then the era's session: ./legacySession.ts or
 * ./statelessSession.ts, chosen at connect). The server's requests go to ./serverRequests.ts.
 */
export class McpClient {
  private connection: McpConnection | undefined;
  private session: EraSession | undefined;
  private router: ServerRequestRouter | undefined;
  private readonly validator = new SchemaValidator();
  private readonly toolsByName = new Map<string, Tool>();
  private readonly resultCache: ResultCache | undefined;
  /** The resources whose updates the 2026-07-28 listen asks for. */
  private listenedResources: string[] = [];

  private readonly logMessageEmitter = new Emitter<LoggingMessageNotificationParams>();
  private readonly listChangedEmitters: Record<ListChangeKind, Emitter<void>> = {
    tools: new Emitter<void>(),
    prompts: new Emitter<void>(),
    resources: new Emitter<void>(),
  };
  private readonly listsStaleEmitter = new Emitter<readonly ClientRequestMethod[]>();
  private readonly resourceUpdatedEmitter = new Emitter<ResourceUpdatedNotificationParams>();
  private readonly elicitations = new ElicitationCompletions();
  private readonly logEmitter = new Emitter<LogEntry>();
  private readonly closeEmitter = new Emitter<string>();
  private readonly traceEmitter = new Emitter<TraceEvent>();
  private readonly taskStatusEmitter = new Emitter<Task>();
  /** `notifications/tasks/status` from the server: a task it runs for us changed. */
  readonly onTaskStatus = this.taskStatusEmitter.event;
  /** Every message on the wire, in and out. */
  readonly onTrace = this.traceEmitter.event;
  /** Transport, protocol and stderr lines, for the server's log. */
  readonly onLog = this.logEmitter.event;
  /** Fires once with the reason when the connection is gone. */
  readonly onDidClose = this.closeEmitter.event;
  /** `notifications/message` from the server. */
  readonly onLogMessage = this.logMessageEmitter.event;
  readonly onToolsListChanged = this.listChangedEmitters.tools.event;
  readonly onPromptsListChanged = this.listChangedEmitters.prompts.event;
  readonly onResourcesListChanged = this.listChangedEmitters.resources.event;
  /** A list change came: the list requests whose answers it made stale (their `invalidatedBy` trait), to be asked again. */
  readonly onListsStale = this.listsStaleEmitter.event;
  readonly onResourceUpdated = this.resourceUpdatedEmitter.event;
  /** `notifications/elicitation/complete`: the elicitation id the server says is finished. */
  readonly onElicitationComplete = this.elicitations.onComplete;

  private readonly transportLog: Disposable;

  constructor(
    private readonly transport: Transport,
    private readonly options: McpClientOptions = {},
  ) {
    this.transportLog = transport.onLog((entry) => this.logEmitter.fire(entry));
    this.resultCache = options.cache === false ? undefined : new ResultCache(options.cache);
  }

  get serverInfo(): Implementation | undefined {
    return this.session?.result.serverInfo;
  }
  get serverCapabilities(): ServerCapabilities | undefined {
    return this.session?.result.capabilities;
  }
  get instructions(): string | undefined {
    return this.session?.result.instructions;
  }
  get protocolVersion(): string | undefined {
    return this.session?.result.protocolVersion;
  }
  /** Which era the connection speaks, once connected: 'modern' (2026-07-28, stateless) or 'legacy' (initialize). */
  get era(): 'modern' | 'legacy' | undefined {
    return this.session?.era;
  }
  get isClosed(): boolean {
    return this.connection?.isClosed ?? false;
  }
  /** The connection as the gate's telemetry describes it (../policy/telemetry.ts). */
  get connectionFacts(): ConnectionFacts {
    const network = this.transport.network;
    return {
      protocolVersion: this.protocolVersion,
      sessionId: this.transport.sessionId,
      transport: network?.transport,
      address: network?.address,
      port: network?.port,
    };
  }
  /** The connection's per-request bookkeeping, for diagnostics and the soak test. */
  get connectionStats(): ConnectionStats | undefined {
    return this.connection?.stats;
  }

  /** The capabilities we declare: exactly those whose handlers the host supplied. */
  get clientCapabilities(): ClientCapabilities {
    return clientCapabilitiesOf(this.options.handlers ?? {});
  }

  /** Starts the transport and performs the handshake (or the 2026-07-28 `server/discover`). */
  async connect(): Promise<InitializeResult> {
    if (this.connection) throw new Error('McpClient.connect() may be called once');
    await this.transport.start();
    const connection = new McpConnection(this.transport, this.options.requestTimeoutMs);
    this.connection = connection;
    connection.onLog((entry) => this.logEmitter.fire(entry));
    connection.onDidClose((reason) => {
      this.router?.dispose();
      this.resultCache?.clear();
      this.closeEmitter.fire(reason);
    });
    connection.onTrace((event) => this.traceEmitter.fire(event));
    this.router = new ServerRequestRouter(this.options.handlers ?? {}, (task) => {
      connection.notify(Notifications.taskStatus, task).catch(() => undefined);
    });
    this.router.attach(connection);
    this.wireNotifications(connection);
    connection.listen();
    const context = this.sessionContext(connection);
    const choice = this.options.protocol ?? '2025-11-25';
    let session: EraSession | undefined;
    try {
      if (choice !== '2025-11-25') session = await StatelessSession.probe(context, choice);
      session ??= await LegacySession.initialize(context);
    } catch (error) {
      await this.close();
      throw error;
    }
    this.session = session;
    await session.start();
    return session.result;
  }

  private sessionContext(connection: McpConnection): SessionContext {
    return {
      connection,
      transport: this.transport,
      options: this.options,
      capabilities: this.clientCapabilities,
      toolsByName: this.toolsByName,
      resultCache: this.resultCache,
      elicitations: this.elicitations,
      request: (type, params, options) => this.request(type, params, options),
      listTools: (options) => this.listTools(options),
      listenedResources: () => this.listenedResources,
      resync: (acknowledged) => this.resync(acknowledged),
      log: (level, message) => this.logEmitter.fire({ level, source: 'protocol', message }),
    };
  }

  /**
   * The resources whose `notifications/resources/updated` a 2026-07-28 server should send: the
   * listen carries all of them, and is replaced when they change. May be set before connecting.
   * The initialize era subscribes with resources/subscribe instead (see subscribeResource).
   */
  setListenedResources(uris: Iterable<string>): void {
    this.listenedResources = [...uris];
    this.session?.setListenedResources(this.listenedResources);
  }

  /** The acknowledged `subscriptions/listen` of a 2026-07-28 connection: its id, and what the server agreed to send. */
  get listening(): { id: RequestId; acknowledged: SubscriptionFilter } | undefined {
    return this.session?.listening;
  }

  /**
   * A listen stands again after a gap: every list and resource it covers is treated as changed
   * (cache dropped, events fired), since a change may have come while nobody listened.
   */
  private resync(acknowledged: SubscriptionFilter): void {
    this.logEmitter.fire({
      level: 'debug',
      source: 'protocol',
      message: 'listening again after a gap: reading what the listen covers again',
    });
    for (const kind of LIST_CHANGE_KINDS) if (acknowledged[ListChanges[kind].listenKey]) this.listChanged(kind);
    for (const uri of Array.isArray(acknowledged.resourceSubscriptions) ? acknowledged.resourceSubscriptions : []) {
      if (typeof uri === 'string') this.resourceUpdated({ uri });
    }
  }

  /** The cache forgets first, so whoever the events make ask again reaches the server. */
  private listChanged(kind: ListChangeKind): void {
    const stale = listsInvalidatedBy(ListChanges[kind]);
    if (stale.includes(ClientRequests.listTools.method)) this.toolsByName.clear();
    for (const method of stale) this.resultCache?.invalidateList(method);
    this.listChangedEmitters[kind].fire();
    this.listsStaleEmitter.fire(stale);
  }
  private resourceUpdated(p: ResourceUpdatedNotificationParams): void {
    if (typeof p?.uri === 'string') this.resultCache?.invalidateRead(p.uri);
    this.resourceUpdatedEmitter.fire(p);
  }

  /** Whether a change notification counts: in 2026-07-28 only one that comes on our listen. */
  private acceptsChange(params: unknown): boolean {
    return this.session?.acceptsChange(params) ?? true;
  }

  /** Stops the server (or drops the channel); pending requests reject with Connection Closed. */
  async close(): Promise<void> {
    this.session?.dispose();
    if (this.connection) await this.connection.close();
    else await this.transport.close();
    this.resultCache?.clear();
    // Everything of this client has happened by now (the close event, the transport's last lines): its events end here.
    this.transportLog.dispose();
    for (const emitter of [
      this.logMessageEmitter,
      ...Object.values(this.listChangedEmitters),
      this.listsStaleEmitter,
      this.resourceUpdatedEmitter,
      this.elicitations,
      this.logEmitter,
      this.closeEmitter,
      this.traceEmitter,
      this.taskStatusEmitter,
    ])
      emitter.dispose();
  }

  ping(options?: RequestOptions): Promise<Record<string, never>> {
    return this.request(ClientRequests.ping, undefined, options);
  }

  async listTools(options?: CachingRequestOptions): Promise<Tool[]> {
    let tools = await this.listAll(ClientRequests.listTools, 'tools', options);
    if (this.session) tools = this.session.usableTools(tools);
    this.toolsByName.clear();
    const twice = new Set<string>();
    for (const tool of tools) {
      const other = this.toolsByName.get(tool.name);
      if (other && stableStringify(other) !== stableStringify(tool)) twice.add(tool.name);
      this.toolsByName.set(tool.name, tool);
    }
    // A name listed with two definitions has none here (no headers mirrored from one, no look-up by name): the gate's caller
    // passes the one it checked (`CallToolOptions.tool`).
    for (const name of twice) this.toolsByName.delete(name);
    return tools;
  }

  async callTool(name: string, args: Record<string, unknown> = {}, options: CallToolOptions = {}): Promise<ToolCallOutcome> {
    this.assertCapability(ClientRequests.callTool);
    const mayRunAsTask = !!this.serverCapabilities?.tasks?.requests?.tools?.call;
    const known =
      options.tool ??
      this.toolsByName.get(name) ??
      (options.validateInput || mayRunAsTask ? await this.findTool(name, options) : undefined);
    if (options.validateInput && known) {
      const check = this.validator.check(known.inputSchema ?? {}, args);
      if (!check.ok && check.kind !== 'unusableSchema') {
        throw McpError.invalidParams(`Invalid arguments for tool '${name}': ${check.message}`, { errors: check.errors });
      }
    }
    const asTask = this.runsAsTask(name, known);
    const params: { name: string; arguments: Record<string, unknown>; task?: TaskMetadata } = { name, arguments: args };
    if (asTask) params.task = options.taskTtlMs !== undefined ? { ttl: options.taskTtlMs } : {};
    // A task's progress keeps the token of the call that created it for the task's lifetime (2025-11-25 tasks).
    const taskProgress =
      asTask && options.onProgress && this.connection ? taskProgressRoute(this.connection, options.onProgress) : undefined;
    let task: Task | undefined;
    let result: CallToolResult;
    try {
      const answer: unknown = await this.request(
        ClientRequests.callTool,
        params,
        taskProgress ? { ...options, progressToken: taskProgress.token } : options,
      );
      result = answer as CallToolResult;
      if (asTask && isCreateTaskResult(answer)) {
        const followed = await followTask(this, answer.task, {
          signal: options.signal,
          onStatus: options.onTaskStatus,
          maxTotalTimeoutMs: options.maxTotalTimeoutMs,
        });
        result = followed.result as CallToolResult;
        task = followed.task;
      }
    } finally {
      taskProgress?.dispose();
    }
    if (!result || !Array.isArray(result.content)) {
      throw McpError.internal(`The server's tools/call result has no content array`, { result });
    }
    const outcome: ToolCallOutcome = task ? { result, task } : { result };
    if (known?.outputSchema && !result.isError) {
      outcome.structuredContentCheck =
        result.structuredContent === undefined
          ? { ok: false, message: 'the tool declares an outputSchema but returned no structuredContent' }
          : this.validator.check(known.outputSchema, result.structuredContent);
    }
    return outcome;
  }

  /** Whether a call of this tool is sent as a task: the tool requires it, or allows it and the server takes task-augmented tools/call. */
  private runsAsTask(name: string, tool: Tool | undefined): boolean {
    const support = tool?.execution?.taskSupport ?? 'forbidden';
    const serverTakesTasks = !!this.serverCapabilities?.tasks?.requests?.tools?.call;
    if (support === 'required' && !serverTakesTasks) {
      // The spec forbids task augmentation without the capability, and the tool refuses plain calls.
      throw McpError.capabilityDisabled(`tools/call of '${name}' (it must run as a task)`, 'tasks.requests.tools.call');
    }
    return serverTakesTasks && (support === 'required' || support === 'optional');
  }

  /** Status of a task the server runs for us. */
  getTask(taskId: string, options?: RequestOptions): Promise<Task> {
    return this.request(ClientRequests.getTask, { taskId }, options);
  }
  /** The result of a task the server runs for us; blocks on the server until the task ends. */
  taskResult(taskId: string, options?: RequestOptions): Promise<unknown> {
    return this.request(ClientRequests.taskResult, { taskId }, options);
  }
  /** Asks the server to cancel a task it runs for us; a call following the task then rejects as cancelled. */
  cancelTask(taskId: string, options?: RequestOptions): Promise<Task> {
    return this.request(ClientRequests.cancelTask, { taskId }, options);
  }
  listTasks(options?: RequestOptions): Promise<Task[]> {
    return this.listAll(ClientRequests.listTasks, 'tasks', options);
  }
  /** Tasks we run for the server (task-augmented sampling and elicitation). */
  get tasksRunForServer(): Task[] {
    return this.router?.tasks.list() ?? [];
  }

  /** Validates arguments against a tool's inputSchema without calling it. */
  checkToolArguments(tool: Tool, args: unknown): SchemaCheck {
    return this.validator.check(tool.inputSchema ?? {}, args);
  }

  listResources(options?: CachingRequestOptions): Promise<Resource[]> {
    return this.listAll(ClientRequests.listResources, 'resources', options);
  }
  listResourceTemplates(options?: CachingRequestOptions): Promise<ResourceTemplate[]> {
    return this.listAll(ClientRequests.listResourceTemplates, 'resourceTemplates', options);
  }
  /**
   * Whether a failed `resources/read` of `uri` means the resource does not exist: -32002 as
   * 2025-11-25 says, or -32602 as 2026-07-28 says (v2-SDK servers answer so in both eras, naming
   * the URI in `data`).
   */
  isResourceNotFound(error: unknown, uri: string): boolean {
    const e = McpError.from(error);
    if (e.isResourceNotFound) return true;
    if (e.code !== ErrorCode.InvalidParams || e.kind) return false;
    return this.session ? this.session.invalidParamsMeansNotFound(e, uri) : invalidParamsNamesUri(e, uri);
  }

  readResource(uri: string, options?: CachingRequestOptions): Promise<ReadResourceResult> {
    return this.request(ClientRequests.readResource, { uri }, options);
  }
  subscribeResource(uri: string, options?: RequestOptions): Promise<Record<string, never>> {
    return this.request(ClientRequests.subscribe, { uri }, options);
  }
  unsubscribeResource(uri: string, options?: RequestOptions): Promise<Record<string, never>> {
    return this.request(ClientRequests.unsubscribe, { uri }, options);
  }
  listPrompts(options?: CachingRequestOptions): Promise<Prompt[]> {
    return this.listAll(ClientRequests.listPrompts, 'prompts', options);
  }
  getPrompt(name: string, args: Record<string, string> = {}, options?: RequestOptions): Promise<GetPromptResult> {
    return this.request(ClientRequests.getPrompt, { name, arguments: args }, options);
  }
  complete(params: CompleteParams, options?: RequestOptions): Promise<CompleteResult> {
    return this.request(ClientRequests.complete, params, options);
  }
  /**
   * The least severe log message the server should send. 2026-07-28 has no logging/setLevel: the
   * level rides in every later request's `_meta`, and nothing is sent now.
   */
  setLoggingLevel(level: LoggingLevel, options?: RequestOptions): Promise<Record<string, never>> {
    return this.session ? this.session.setLoggingLevel(level, options) : this.request(ClientRequests.setLevel, { level }, options);
  }

  /** Tells the server the roots changed; it will ask again with roots/list. */
  async sendRootsListChanged(): Promise<void> {
    if (!this.options.handlers?.listRoots) throw McpError.capabilityDisabled('notifications/roots/list_changed', 'roots');
    if (!this.connection) throw McpError.connectionClosed('not connected');
    await (this.session ? this.session.sendRootsListChanged() : this.connection.notify(Notifications.rootsListChanged));
  }

  /** Every page of a list call, following nextCursor to the end. */
  private async listAll<R extends { nextCursor?: string | null }, K extends keyof R & string>(
    type: AnyClientRequest<PaginatedParams, R>,
    key: K,
    options?: CachingRequestOptions,
  ): Promise<ItemOf<R[K]>[]> {
    type T = ItemOf<R[K]>;
    const method = type.method;
    const items: T[] = [];
    const seen = new Set<string>();
    let cursor: string | undefined;
    let bytes = 0;
    for (let page = 0; page < MAX_LIST_PAGES; page++) {
      const result = await this.request(type, cursor === undefined ? {} : { cursor }, options);
      const list: unknown = result?.[key];
      if (!Array.isArray(list)) throw McpError.internal(`The server's ${method} result has no '${key}' array`, { result });
      bytes += Buffer.byteLength(JSON.stringify(list), 'utf8');
      if (bytes > MAX_LIST_BYTES)
        throw McpError.internal(`${method} returned more than ${MAX_LIST_BYTES} bytes of ${key} over ${page + 1} pages; stopped paging`, {
          method,
          limit: MAX_LIST_BYTES,
        });
      items.push(...(list as T[]));
      cursor = result.nextCursor ?? undefined;
      if (cursor === undefined || cursor === null) return items;
      if (seen.has(cursor)) throw McpError.internal(`The server repeated the ${method} cursor ${JSON.stringify(cursor)}; stopped paging`);
      seen.add(cursor);
    }
    throw McpError.internal(`${method} returned more than ${MAX_LIST_PAGES} pages; stopped paging`, { method, limit: MAX_LIST_PAGES });
  }

  private async findTool(name: string, options: RequestOptions): Promise<Tool | undefined> {
    await this.listTools({ signal: options.signal, timeoutMs: options.timeoutMs });
    return this.toolsByName.get(name);
  }

  /** The one send pipeline: every client→server request passes here, so undeclared features never hit the wire. */
  private request<P, R>(type: AnyClientRequest<P, R>, params: P, options?: CachingRequestOptions): Promise<R> {
    try {
      this.assertCapability(type);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.session!.send(type, params, options);
  }

  private assertCapability(type: AnyClientRequest<unknown, unknown>): void {
    const method: ClientRequestMethod = type.method;
    if (!this.session || !this.connection)
      throw new McpError(ErrorCode.ConnectionClosed, `Not connected: '${method}' needs a completed handshake`);
    const refusal = this.session.refusal(method);
    if (refusal) throw refusal;
    const missing = missingCapability(method, this.session.result.capabilities);
    if (missing) throw McpError.capabilityDisabled(method, missing);
  }

  /** What the server tells us unasked; in 2026-07-28 the change notifications count only on our listen. */
  private wireNotifications(c: McpConnection): void {
    c.onNotification(Notifications.taskStatus, (task: Task | undefined) => {
      if (task && typeof task.taskId === 'string' && typeof task.status === 'string') this.taskStatusEmitter.fire(task);
    });
    c.onNotification(Notifications.message, (p) => this.logMessageEmitter.fire(p));
    for (const kind of LIST_CHANGE_KINDS) {
      c.onNotification(ListChanges[kind].notification, (p: unknown) => this.acceptsChange(p) && this.listChanged(kind));
    }
    c.onNotification(Notifications.resourceUpdated, (p) => this.acceptsChange(p) && this.resourceUpdated(p));
    c.onNotification(Notifications.subscriptionsAcknowledged, (p) => this.session?.acknowledge(p));
    c.onNotification(Notifications.elicitationComplete, (p: { elicitationId?: unknown } | undefined) => {
      const id = p?.elicitationId;
      if (typeof id === 'string') this.elicitations.complete(id);
    });
  }
}

/** The connection a request went out on, for a span's network and session attributes. */
export interface ConnectionFacts {
  protocolVersion?: string;
  sessionId?: string;
  /** `pipe` for stdio, `tcp` for HTTP (the conventions' `network.transport`). */
  transport?: 'pipe' | 'tcp';
  /** An HTTP server's host and port, never its path or query. */
  address?: string;
  port?: number;
}

type ItemOf<A> = A extends readonly (infer T)[] ? T : never;

export type { LogEntry };
