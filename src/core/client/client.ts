import { Emitter, type Disposable } from 'vscode-jsonrpc/node';
import { McpConnection, type ConnectionStats, type RequestOptions, type TraceEvent, type UnhandledRequest } from '../jsonrpc/connection';
import { ErrorCode, McpError, requiredUrlElicitations, type UrlElicitation } from '../protocol/errors';
import {
  ClientRequests,
  Notifications,
  ServerRequests,
  type ClientRequestMethod,
  type McpRequestType,
  type PaginatedParams,
} from '../protocol/methods';
import {
  LATEST_PROTOCOL_VERSION,
  MODERN_PROTOCOL_VERSIONS,
  MetaKeys,
  SUPPORTED_PROTOCOL_VERSIONS,
  isSupportedProtocolVersion,
  type ModernProtocolVersion,
} from '../protocol/versions';
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
  CreateTaskResult,
  DiscoverResult,
  Meta,
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
import { SchemaValidator, type SchemaCheck } from '../schema/validator';
import type { LogEntry, Transport } from '../transport/transport';
import { ResultCache, isCacheableMethod, type CachingRequestOptions, type ResultCacheOptions } from './cache';
import { missingCapability } from './capabilities';
import { judgeDiscoverError, judgeDiscoverResult, type ProbeVerdict, type ProtocolChoice } from './era';
import { answerInputRequests, type InputHandlers } from './inputRequests';
import { ListenSubscription } from './listen';
import { headerParamsOf, invalidHeaderAnnotations } from '../transport/headerParams';
import { ReceiverTasks, followTask, isCreateTaskResult, taskProgressRoute } from './tasks';

/** What the host answers when the server asks. A capability is declared only if its handler is here. */
export interface ClientHandlers extends InputHandlers {
  /** `createMessage` can offer the request's tools to the model (2025-11-25 `sampling.tools`). */
  samplingTools?: boolean;
  /** The elicitation modes `elicit` handles; form only unless said. */
  elicitationModes?: Array<'form' | 'url'>;
  /**
   * A request failed with -32042 (URL elicitation required): the person finishes the pages, and
   * 'retry' sends the same request again. `wait` tells which pages the server has reported
   * complete (`notifications/elicitation/complete`). Without this handler the error is thrown.
   */
  /** A server request refused because nothing here answers it (sampling a `deny` server asked for anyway, say). */
  unhandledRequest?(request: UnhandledRequest): void;
  /** Protocol extensions the host implements, declared as `capabilities.extensions` (MCP Apps: see ../apps/toolUi.ts). */
  extensions?: Record<string, object>;
  urlElicitationRequired?(
    pages: UrlElicitation[],
    wait: ElicitationWait,
    request: { method: string; params?: Record<string, unknown> },
    signal: AbortSignal,
  ): Promise<'retry' | 'stop'>;
}

/** What the server has said about the pages of one -32042 answer. */
export interface ElicitationWait {
  isCompleted(elicitationId: string): boolean;
  /** Resolves once every page is reported complete; never rejects. */
  readonly allCompleted: Promise<void>;
}

export interface McpClientOptions {
  clientInfo?: Implementation;
  handlers?: ClientHandlers;
  /** Default timeout of every request (60 s). */
  requestTimeoutMs?: number;
  /** Timeout of the initialize handshake; the request timeout otherwise. */
  initializeTimeoutMs?: number;
  /** The version offered in initialize; the newest we speak otherwise. */
  protocolVersion?: string;
  /**
   * The protocol era: '2025-11-25' (the initialize handshake) unless said; 'auto' probes
   * `server/discover` first and falls back to initialize; '2026-07-28' insists on the stateless era.
   */
  protocol?: ProtocolChoice;
  /**
   * How long the `server/discover` probe may wait before the server counts as one that predates it
   * (stdio, where an old server may stay silent). Unset, the probe waits as long as initialize would,
   * and a timeout fails the start (HTTP, where every server answers).
   */
  probeTimeoutMs?: number;
  /** Rounds of `input_required` one call may go through before it fails (8). */
  maxInputRounds?: number;
  /**
   * 2026-07-28 caching hints: list and read results are kept for the `ttlMs` the server names
   * (see ./cache.ts); `false` asks the server every time. The initialize era never caches.
   */
  cache?: ResultCacheOptions | false;
}

export interface CallToolOptions extends RequestOptions {
  /** Check the arguments against the tool's inputSchema first; nothing is sent if they fail. */
  validateInput?: boolean;
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

const DEFAULT_CLIENT_INFO: Implementation = { name: 'mcp-host', version: '0.1.0', title: 'MCP Host' };
/** A list call follows at most this many pages… */
export const MAX_LIST_PAGES = 1_000;
/** …and takes at most this many bytes of items (UTF-8 JSON) over all of them: each page may be as large as a message. */
export const MAX_LIST_BYTES = 64 * 1024 * 1024;
/** A request is sent again after -32042 at most this often, so a server that keeps asking cannot loop. */
const MAX_URL_ELICITATION_RETRIES = 3;
/** A stateless request whose reply stream keeps breaking is sent again this often, then fails. */
const MAX_REPLY_RESENDS = 2;
/** A server that keeps answering input_required cannot hold a call forever. */
const MAX_INPUT_ROUNDS = 8;
/** The requests of 2026-07-28 that may answer `input_required` (multi-round-trip). */
const MULTI_ROUND_METHODS: ReadonlySet<string> = new Set(['tools/call', 'prompts/get', 'resources/read']);
/** Methods of the initialize era that 2026-07-28 removed: never sent to a stateless server. */
const REMOVED_IN_STATELESS_ERA: ReadonlySet<string> = new Set(['ping', 'logging/setLevel', 'resources/subscribe', 'resources/unsubscribe']);
/** Completed elicitation ids remembered: a completion may arrive before the -32042 it belongs to is handled. */
const COMPLETED_ELICITATIONS_KEPT = 256;

/**
 * An MCP client over one transport: the handshake, one typed method per request, pagination,
 * the capability choke point, and the host's answers to server requests.
 */
export class McpClient {
  private connection: McpConnection | undefined;
  private readonly validator = new SchemaValidator();
  private initializeResult: InitializeResult | undefined;
  /** Set when the server speaks the stateless era: the version, and the `_meta` every request carries. */
  private stateless: { version: ModernProtocolVersion; meta: Meta } | undefined;
  private readonly toolsByName = new Map<string, Tool>();
  private receiverTasks: ReceiverTasks | undefined;
  private readonly resultCache: ResultCache | undefined;
  /** 2026-07-28: the `subscriptions/listen` that brings list changes and resource updates. */
  private listenSubscription: ListenSubscription | undefined;
  /** The resources whose updates the 2026-07-28 listen asks for. */
  private listenedResources: string[] = [];

  private readonly logMessageEmitter = new Emitter<LoggingMessageNotificationParams>();
  private readonly toolsChangedEmitter = new Emitter<void>();
  private readonly promptsChangedEmitter = new Emitter<void>();
  private readonly resourcesChangedEmitter = new Emitter<void>();
  private readonly resourceUpdatedEmitter = new Emitter<ResourceUpdatedNotificationParams>();
  private readonly elicitationCompleteEmitter = new Emitter<string>();
  private readonly completedElicitations = new Set<string>();
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
  readonly onToolsListChanged = this.toolsChangedEmitter.event;
  readonly onPromptsListChanged = this.promptsChangedEmitter.event;
  readonly onResourcesListChanged = this.resourcesChangedEmitter.event;
  readonly onResourceUpdated = this.resourceUpdatedEmitter.event;
  /** `notifications/elicitation/complete`: the elicitation id the server says is finished. */
  readonly onElicitationComplete = this.elicitationCompleteEmitter.event;

  private readonly transportLog: Disposable;

  constructor(
    private readonly transport: Transport,
    private readonly options: McpClientOptions = {},
  ) {
    this.transportLog = transport.onLog((entry) => this.logEmitter.fire(entry));
    this.resultCache = options.cache === false ? undefined : new ResultCache(options.cache);
  }

  get serverInfo(): Implementation | undefined {
    return this.initializeResult?.serverInfo;
  }
  get serverCapabilities(): ServerCapabilities | undefined {
    return this.initializeResult?.capabilities;
  }
  get instructions(): string | undefined {
    return this.initializeResult?.instructions;
  }
  get protocolVersion(): string | undefined {
    return this.initializeResult?.protocolVersion;
  }
  /** Which era the connection speaks, once connected: 'modern' (2026-07-28, stateless) or 'legacy' (initialize). */
  get era(): 'modern' | 'legacy' | undefined {
    if (!this.initializeResult) return undefined;
    return this.stateless ? 'modern' : 'legacy';
  }
  get isClosed(): boolean {
    return this.connection?.isClosed ?? false;
  }
  /** The connection's per-request bookkeeping, for diagnostics and the soak test. */
  get connectionStats(): ConnectionStats | undefined {
    return this.connection?.stats;
  }

  /** The capabilities we declare: exactly those whose handlers the host supplied. */
  get clientCapabilities(): ClientCapabilities {
    const h = this.options.handlers ?? {};
    const caps: ClientCapabilities = {};
    if (h.listRoots) caps.roots = { listChanged: true };
    if (h.createMessage) caps.sampling = h.samplingTools ? { tools: {} } : {};
    if (h.elicit) caps.elicitation = Object.fromEntries((h.elicitationModes ?? ['form']).map((m) => [m, {}]));
    if (h.extensions && Object.keys(h.extensions).length) caps.extensions = h.extensions;
    // The server's requests we can run as tasks are exactly the ones we answer at all.
    if (h.createMessage || h.elicit) {
      caps.tasks = {
        list: {},
        cancel: {},
        requests: {
          ...(h.createMessage ? { sampling: { createMessage: {} } } : {}),
          ...(h.elicit ? { elicitation: { create: {} } } : {}),
        },
      };
    }
    return caps;
  }

  /** Starts the transport and performs the handshake. */
  async connect(): Promise<InitializeResult> {
    if (this.connection) throw new Error('McpClient.connect() may be called once');
    await this.transport.start();
    const connection = new McpConnection(this.transport, this.options.requestTimeoutMs);
    this.connection = connection;
    connection.onLog((entry) => this.logEmitter.fire(entry));
    connection.onDidClose((reason) => {
      this.receiverTasks?.dispose();
      this.resultCache?.clear();
      this.closeEmitter.fire(reason);
    });
    connection.onTrace((event) => this.traceEmitter.fire(event));
    this.wireHandlers(connection);
    connection.listen();
    const choice = this.options.protocol ?? '2025-11-25';
    try {
      if (choice !== '2025-11-25' && (await this.discover(connection, choice))) {
        this.startListening(connection);
        return this.initializeResult!;
      }
    } catch (error) {
      await this.close();
      throw error;
    }
    const offered = this.options.protocolVersion ?? LATEST_PROTOCOL_VERSION;
    let result: InitializeResult;
    try {
      result = await connection.request(
        ClientRequests.initialize,
        { protocolVersion: offered, capabilities: this.clientCapabilities, clientInfo: this.options.clientInfo ?? DEFAULT_CLIENT_INFO },
        { timeoutMs: this.options.initializeTimeoutMs ?? this.options.requestTimeoutMs },
      );
    } catch (error) {
      await this.close();
      throw error;
    }
    const problem = checkInitializeResult(result);
    if (problem) {
      await this.close();
      throw problem;
    }
    this.initializeResult = { ...result, capabilities: result.capabilities ?? {} };
    this.transport.setProtocolVersion?.(result.protocolVersion);
    await connection.notify(Notifications.initialized);
    return this.initializeResult;
  }

  /**
   * The era probe: `server/discover` with the newest stateless revision. A result, or one of the
   * new-style errors, means the stateless era (after -32022 asked again with a revision the server
   * names); anything else means initialize (false). Throws when the server went away meanwhile
   * (kind `probeLost`: the caller starts it again with initialize), and when `choice` insisted on a
   * stateless revision the server does not speak.
   */
  private async discover(connection: McpConnection, choice: 'auto' | ModernProtocolVersion): Promise<boolean> {
    let version: ModernProtocolVersion = choice === 'auto' ? MODERN_PROTOCOL_VERSIONS[0] : choice;
    const probeTimeoutMs = choice === 'auto' ? this.options.probeTimeoutMs : undefined;
    for (let attempt = 0; attempt < 2; attempt++) {
      let verdict: ProbeVerdict;
      let result: DiscoverResult | undefined;
      let failure: McpError | undefined;
      try {
        result = await connection.request(
          ClientRequests.discover,
          { _meta: this.statelessMeta(version) },
          { timeoutMs: probeTimeoutMs ?? this.options.initializeTimeoutMs ?? this.options.requestTimeoutMs },
        );
        verdict = judgeDiscoverResult(result, version);
      } catch (error) {
        failure = McpError.from(error);
        if (connection.isClosed) {
          if (choice !== 'auto') throw failure;
          throw new McpError(
            ErrorCode.ConnectionClosed,
            `${failure.message} (while asking the server which protocol it speaks)`,
            failure.data,
            { type: 'probeLost' },
          );
        }
        if (failure.code === ErrorCode.RequestTimeout && probeTimeoutMs !== undefined)
          verdict = { kind: 'legacy', reason: `no answer to server/discover within ${probeTimeoutMs} ms` };
        else if (failure.code === ErrorCode.RequestTimeout) throw failure;
        else verdict = judgeDiscoverError(failure, version);
      }
      switch (verdict.kind) {
        case 'modern':
          // -32020 or -32021: stateless for sure, but it refuses us; there is nothing to fall back to.
          if (!result) throw failure!;
          this.enterStatelessEra(verdict.version, result);
          return true;
        case 'retry':
          version = verdict.version;
          continue;
        case 'legacy':
          if (choice !== 'auto') throw McpError.invalidParams(`The server does not speak protocol ${choice}: ${verdict.reason}`);
          this.logEmitter.fire({ level: 'debug', source: 'protocol', message: `${verdict.reason}: using initialize` });
          return false;
      }
    }
    throw McpError.invalidParams(`The server refused protocol ${version}, which it names as supported`);
  }

  private enterStatelessEra(version: ModernProtocolVersion, result: DiscoverResult): void {
    const capabilities = result.capabilities && typeof result.capabilities === 'object' ? result.capabilities : {};
    this.stateless = { version, meta: this.statelessMeta(version) };
    this.connection?.refuseRequests(`in protocol ${version} servers send no requests; they ask for input inside results (input_required)`);
    this.initializeResult = {
      protocolVersion: version,
      capabilities,
      // Some servers put it beside the capabilities, as initialize did.
      serverInfo: serverInfoOf(result) ?? usableInfo((result as { serverInfo?: unknown }).serverInfo) ?? { name: '', version: '' },
      ...(typeof result.instructions === 'string' ? { instructions: result.instructions } : {}),
    };
    this.transport.setRequestHeaders?.((method, params) =>
      method === 'tools/call' ? headerParamsOf(this.toolsByName.get(params?.name as string), params?.arguments) : undefined,
    );
  }

  /** What every 2026-07-28 request carries in `_meta`: the version, our capabilities, who we are. */
  private statelessMeta(version: ModernProtocolVersion): Meta {
    // Tasks moved to an extension and roots/list_changed is gone in 2026-07-28.
    const { tasks: _tasks, ...capabilities } = this.clientCapabilities;
    if (capabilities.roots) capabilities.roots = {};
    return {
      [MetaKeys.protocolVersion]: version,
      [MetaKeys.clientCapabilities]: capabilities,
      [MetaKeys.clientInfo]: this.options.clientInfo ?? DEFAULT_CLIENT_INFO,
    };
  }

  /**
   * The resources whose `notifications/resources/updated` a 2026-07-28 server should send: the
   * listen carries all of them, and is replaced when they change. May be set before connecting.
   * The initialize era subscribes with resources/subscribe instead (see subscribeResource).
   */
  setListenedResources(uris: Iterable<string>): void {
    this.listenedResources = [...uris];
    this.listenSubscription?.setResources(this.listenedResources);
  }

  /** The acknowledged `subscriptions/listen` of a 2026-07-28 connection: its id, and what the server agreed to send. */
  get listening(): { id: RequestId; acknowledged: SubscriptionFilter } | undefined {
    return this.listenSubscription?.state;
  }

  private startListening(connection: McpConnection): void {
    const listen = new ListenSubscription({
      send: (notifications, onRequestId, signal) =>
        this.request(ClientRequests.listen, { notifications }, { timeoutMs: Infinity, signal, onRequestId, serverMayCancel: true }),
      capabilities: () => this.serverCapabilities ?? {},
      isOpen: () => !connection.isClosed,
      log: (level, message) => this.logEmitter.fire({ level, source: 'protocol', message }),
      resumed: (acknowledged) => this.resync(acknowledged),
    });
    this.listenSubscription = listen;
    connection.onDidClose(() => listen.dispose());
    listen.setResources(this.listenedResources);
    listen.update();
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
    if (acknowledged.toolsListChanged) this.toolsChanged();
    if (acknowledged.promptsListChanged) this.promptsChanged();
    if (acknowledged.resourcesListChanged) this.resourcesChanged();
    for (const uri of Array.isArray(acknowledged.resourceSubscriptions) ? acknowledged.resourceSubscriptions : []) {
      if (typeof uri === 'string') this.resourceUpdated({ uri });
    }
  }

  private toolsChanged(): void {
    this.toolsByName.clear();
    this.resultCache?.invalidateList(ClientRequests.listTools.method);
    this.toolsChangedEmitter.fire();
  }
  private promptsChanged(): void {
    this.resultCache?.invalidateList(ClientRequests.listPrompts.method);
    this.promptsChangedEmitter.fire();
  }
  private resourcesChanged(): void {
    this.resultCache?.invalidateList(ClientRequests.listResources.method);
    this.resultCache?.invalidateList(ClientRequests.listResourceTemplates.method);
    this.resourcesChangedEmitter.fire();
  }
  private resourceUpdated(p: ResourceUpdatedNotificationParams): void {
    if (typeof p?.uri === 'string') this.resultCache?.invalidateRead(p.uri);
    this.resourceUpdatedEmitter.fire(p);
  }

  /** In 2026-07-28 a change notification counts only if it comes on one of our listens. */
  private fromOurListen(params: unknown): boolean {
    return !this.stateless || !!this.listenSubscription?.accepts(params);
  }

  /** Stops the server (or drops the channel); pending requests reject with Connection Closed. */
  async close(): Promise<void> {
    this.listenSubscription?.dispose();
    if (this.connection) await this.connection.close();
    else await this.transport.close();
    this.resultCache?.clear();
    // Everything of this client has happened by now (the close event, the transport's last lines): its events end here.
    this.transportLog.dispose();
    for (const emitter of [
      this.logMessageEmitter,
      this.toolsChangedEmitter,
      this.promptsChangedEmitter,
      this.resourcesChangedEmitter,
      this.resourceUpdatedEmitter,
      this.elicitationCompleteEmitter,
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
    // Only a transport that sends headers (Streamable HTTP) has to refuse tools it cannot send correctly.
    if (this.stateless && this.transport.setRequestHeaders) tools = tools.filter((tool) => this.headersUsable(tool));
    this.toolsByName.clear();
    for (const tool of tools) this.toolsByName.set(tool.name, tool);
    return tools;
  }

  async callTool(name: string, args: Record<string, unknown> = {}, options: CallToolOptions = {}): Promise<ToolCallOutcome> {
    this.assertCapability(ClientRequests.callTool.method);
    const mayRunAsTask = !!this.serverCapabilities?.tasks?.requests?.tools?.call;
    const known = this.toolsByName.get(name) ?? (options.validateInput || mayRunAsTask ? await this.findTool(name, options) : undefined);
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
    return this.receiverTasks?.list() ?? [];
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
    return this.stateless !== undefined || (e.data as { uri?: unknown } | undefined)?.uri === uri;
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
    if (this.stateless) {
      if (!this.serverCapabilities?.logging) return Promise.reject(McpError.capabilityDisabled('logging/setLevel', 'logging'));
      this.stateless.meta = { ...this.stateless.meta, [MetaKeys.logLevel]: level };
      return Promise.resolve({});
    }
    return this.request(ClientRequests.setLevel, { level }, options);
  }

  /** Tells the server the roots changed; it will ask again with roots/list. */
  async sendRootsListChanged(): Promise<void> {
    if (!this.options.handlers?.listRoots) throw McpError.capabilityDisabled('notifications/roots/list_changed', 'roots');
    if (!this.connection) throw McpError.connectionClosed('not connected');
    // 2026-07-28 servers ask for the roots within each request that needs them.
    if (this.stateless) return;
    await this.connection.notify(Notifications.rootsListChanged);
  }

  /** Every page of a list call, following nextCursor to the end. */
  private async listAll<R extends { nextCursor?: string | null }, K extends keyof R & string>(
    type: McpRequestType<ClientRequestMethod, PaginatedParams, R>,
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

  /** 2026-07-28: a tool whose `x-mcp-header` annotations are invalid cannot be called correctly, so it is not offered. */
  private headersUsable(tool: Tool): boolean {
    const problem = invalidHeaderAnnotations(tool);
    if (problem)
      this.logEmitter.fire({ level: 'warning', source: 'protocol', message: `dropped tool ${JSON.stringify(tool.name)}: ${problem}` });
    return !problem;
  }

  private async findTool(name: string, options: RequestOptions): Promise<Tool | undefined> {
    await this.listTools({ signal: options.signal, timeoutMs: options.timeoutMs });
    return this.toolsByName.get(name);
  }

  /** The choke point: every client→server request passes here, so undeclared features never hit the wire. */
  private request<P, R>(type: McpRequestType<ClientRequestMethod, P, R>, params: P, options?: RequestOptions): Promise<R> {
    const method = type.method;
    try {
      this.assertCapability(method);
    } catch (error) {
      return Promise.reject(error);
    }
    if (this.stateless)
      return this.resultCache && isCacheableMethod(method)
        ? this.cachedStatelessRequest(this.resultCache, type, params, options)
        : this.statelessRequest(type, params, options);
    const send = () => this.connection!.request(type, params, options);
    const handler = this.options.handlers?.urlElicitationRequired;
    return handler
      ? this.retryAfterUrlElicitations(send, handler, { method, params: params as Record<string, unknown> | undefined }, options?.signal)
      : send();
  }

  /**
   * A 2026-07-28 request: `_meta` with version, capabilities and client info; the server info of
   * the result read; and, for the multi-round-trip methods, each `input_required` answered through
   * the host's handlers and the request sent again (a new id, this round's `inputResponses`, the
   * `requestState` echoed as it came), up to {@link MAX_INPUT_ROUNDS} rounds. A missing
   * `resultType` means complete.
   */
  private async statelessRequest<P, R>(
    type: McpRequestType<ClientRequestMethod, P, R>,
    params: P,
    options?: RequestOptions,
    exchange?: { retried: boolean },
  ): Promise<R> {
    const { meta } = this.stateless!;
    const original = (params ?? {}) as Record<string, unknown>;
    const base = { ...original, _meta: { ...(original._meta as Meta | undefined), ...meta } };
    const send = (p: Record<string, unknown>) => this.sendStateless(type, p as P, options);
    let result = await send(base);
    this.noteServerInfo(result);
    if (!MULTI_ROUND_METHODS.has(type.method)) return result;
    const maxRounds = this.options.maxInputRounds ?? MAX_INPUT_ROUNDS;
    for (let round = 0; isInputRequired(result); round++) {
      if (round >= maxRounds)
        throw McpError.internal(`The server still asked for input after ${maxRounds} rounds of ${type.method}; stopped`);
      const { inputRequests, requestState } = result as { inputRequests?: unknown; requestState?: unknown };
      const inputResponses = await answerInputRequests(
        inputRequests,
        this.options.handlers ?? {},
        options?.signal ?? new AbortController().signal,
        inputContext(type.method, original),
      );
      if (exchange) exchange.retried = true;
      result = await send({ ...base, inputResponses, ...(typeof requestState === 'string' ? { requestState } : {}) });
      this.noteServerInfo(result);
    }
    return result;
  }

  /**
   * One stateless request on the wire, each time with a new id: sent again when its reply stream
   * broke before the answer (such streams cannot be resumed), at most {@link MAX_REPLY_RESENDS}
   * times; and a `tools/call` refused with -32020 (header mismatch) once more after `tools/list`,
   * in case the tool's `x-mcp-header` annotations changed.
   */
  private async sendStateless<P, R>(type: McpRequestType<ClientRequestMethod, P, R>, params: P, options?: RequestOptions): Promise<R> {
    let headersRefreshed = false;
    for (let resends = 0; ; resends++) {
      try {
        return await this.connection!.request(type, params, options);
      } catch (error) {
        const e = McpError.from(error);
        if (options?.signal?.aborted || this.isClosed) throw e;
        if (e.kind?.type === 'replyLost' && resends < MAX_REPLY_RESENDS) {
          this.logEmitter.fire({ level: 'info', source: 'protocol', message: `${e.message}; sending ${type.method} again` });
          continue;
        }
        if (e.code === ErrorCode.HeaderMismatch && type.method === 'tools/call' && !headersRefreshed && this.transport.setRequestHeaders) {
          headersRefreshed = true;
          this.logEmitter.fire({
            level: 'info',
            source: 'protocol',
            message: `${e.message}; reading tools/list again for the tool's headers, then sending ${type.method} again`,
          });
          // Past the cache: the point is to see the annotations as they are now.
          await this.listTools({ ...options, fresh: true });
          continue;
        }
        throw e;
      }
    }
  }

  /**
   * A cacheable 2026-07-28 request: a fresh cached answer if there is one (unless `fresh`), else the
   * server's, kept for its `ttlMs`. An answer that took `input_required` rounds was made for the
   * inputs of that exchange and is never kept.
   */
  private async cachedStatelessRequest<P, R>(
    cache: ResultCache,
    type: McpRequestType<ClientRequestMethod, P, R>,
    params: P,
    options?: CachingRequestOptions,
  ): Promise<R> {
    if (!options?.fresh) {
      const hit = cache.get(type.method, params);
      if (hit !== undefined) return hit as R;
    }
    const ticket = cache.ticket(type.method, params);
    const exchange = { retried: false };
    const result = await this.statelessRequest(type, params, options, exchange);
    if (!exchange.retried) cache.store(ticket, result);
    return result;
  }

  /** 2026-07-28 results carry the server's info in `_meta`; the latest one is what we show. */
  private noteServerInfo(result: unknown): void {
    const info = serverInfoOf(result);
    if (info && this.initializeResult) this.initializeResult.serverInfo = info;
  }

  /** Sends, and after a -32042 lets the person finish the pages, then sends the same request again. */
  private async retryAfterUrlElicitations<R>(
    send: () => Promise<R>,
    handler: NonNullable<ClientHandlers['urlElicitationRequired']>,
    request: { method: string; params?: Record<string, unknown> },
    signal: AbortSignal | undefined,
  ): Promise<R> {
    for (let retries = 0; ; retries++) {
      try {
        return await send();
      } catch (error) {
        const pages = requiredUrlElicitations(error);
        if (!pages.length || retries >= MAX_URL_ELICITATION_RETRIES || signal?.aborted || this.isClosed) throw error;
        const wait = this.waitForElicitations(pages.map((p) => p.elicitationId));
        let decision: 'retry' | 'stop';
        try {
          decision = await handler(pages, wait, request, signal ?? new AbortController().signal);
        } finally {
          wait.dispose();
        }
        if (decision !== 'retry' || signal?.aborted || this.isClosed) throw error;
      }
    }
  }

  private waitForElicitations(ids: string[]): ElicitationWait & { dispose(): void } {
    const isCompleted = (id: string) => this.completedElicitations.has(id);
    let resolve!: () => void;
    const allCompleted = new Promise<void>((r) => (resolve = r));
    const check = () => ids.every(isCompleted) && resolve();
    const listener = this.elicitationCompleteEmitter.event(check);
    check();
    return { isCompleted, allCompleted, dispose: () => listener.dispose() };
  }

  private assertCapability(method: ClientRequestMethod): void {
    if (!this.initializeResult || !this.connection)
      throw new McpError(ErrorCode.ConnectionClosed, `Not connected: '${method}' needs a completed handshake`);
    if (this.stateless && REMOVED_IN_STATELESS_ERA.has(method)) {
      const version = this.stateless.version;
      throw new McpError(
        ErrorCode.CapabilityDisabled,
        `'${method}' does not exist in protocol ${version}, so it was not sent`,
        { method },
        { type: 'capabilityDisabled', method, capability: `protocol ${version}` },
      );
    }
    const missing = missingCapability(method, this.initializeResult.capabilities);
    if (missing) throw McpError.capabilityDisabled(method, missing);
  }

  private wireHandlers(c: McpConnection): void {
    const h = this.options.handlers ?? {};
    c.onRequest(ServerRequests.ping, () => ({}));
    if (h.unhandledRequest) c.onUnhandledRequest((r) => h.unhandledRequest?.(r));
    if (h.listRoots) {
      const listRoots = h.listRoots;
      c.onRequest(ServerRequests.listRoots, async (_params, signal) => ({ roots: await listRoots(signal) }));
    }
    const tasks = new ReceiverTasks((task) => {
      c.notify(Notifications.taskStatus, task).catch(() => undefined);
    });
    this.receiverTasks = tasks;
    /** A request with `task` in its params runs as a task: answered at once with the task, its result fetched later. */
    const maybeAsTask =
      <P extends { task?: TaskMetadata }, R>(run: (params: P, signal: AbortSignal) => Promise<R>) =>
      (params: P, signal: AbortSignal): Promise<R | CreateTaskResult> | CreateTaskResult => {
        const task = params?.task;
        if (!task || typeof task !== 'object') return run(params, signal);
        return tasks.create(task.ttl, (taskSignal) => run(params, taskSignal));
      };
    if (h.createMessage) {
      const createMessage = h.createMessage;
      c.onRequest(
        ServerRequests.createMessage,
        maybeAsTask((params, signal) => createMessage(params, signal)),
      );
    }
    if (h.elicit) {
      const elicit = h.elicit;
      c.onRequest(
        ServerRequests.elicit,
        maybeAsTask((params, signal) => elicit(params, signal)),
      );
    }
    if (h.createMessage || h.elicit) {
      c.onRequest(ServerRequests.getTask, (params) => tasks.get(params?.taskId));
      c.onRequest(ServerRequests.taskResult, (params, signal) => tasks.result(params?.taskId, signal));
      c.onRequest(ServerRequests.listTasks, () => ({ tasks: tasks.list() }));
      c.onRequest(ServerRequests.cancelTask, (params) => tasks.cancel(params?.taskId));
    }
    c.onNotification(Notifications.taskStatus, (task: Task | undefined) => {
      if (task && typeof task.taskId === 'string' && typeof task.status === 'string') this.taskStatusEmitter.fire(task);
    });
    c.onNotification(Notifications.message, (p) => this.logMessageEmitter.fire(p));
    // The cache forgets first, so whoever the event makes ask again reaches the server.
    c.onNotification(Notifications.toolsListChanged, (p) => this.fromOurListen(p) && this.toolsChanged());
    c.onNotification(Notifications.promptsListChanged, (p) => this.fromOurListen(p) && this.promptsChanged());
    c.onNotification(Notifications.resourcesListChanged, (p) => this.fromOurListen(p) && this.resourcesChanged());
    c.onNotification(Notifications.resourceUpdated, (p) => this.fromOurListen(p) && this.resourceUpdated(p));
    c.onNotification(Notifications.subscriptionsAcknowledged, (p) => this.listenSubscription?.acknowledge(p));
    c.onNotification(Notifications.elicitationComplete, (p: { elicitationId?: unknown } | undefined) => {
      const id = p?.elicitationId;
      if (typeof id !== 'string') return;
      this.completedElicitations.delete(id);
      this.completedElicitations.add(id);
      if (this.completedElicitations.size > COMPLETED_ELICITATIONS_KEPT)
        this.completedElicitations.delete(this.completedElicitations.values().next().value!);
      this.elicitationCompleteEmitter.fire(id);
    });
  }
}

type ItemOf<A> = A extends readonly (infer T)[] ? T : never;

/** "tools/call 'interview'": which call an input round belongs to, for its errors. */
function inputContext(method: string, params: Record<string, unknown>): string {
  const name = typeof params.name === 'string' ? params.name : typeof params.uri === 'string' ? params.uri : undefined;
  return name === undefined ? method : `${method} '${name}'`;
}

function isInputRequired(result: unknown): boolean {
  return !!result && typeof result === 'object' && (result as { resultType?: unknown }).resultType === 'input_required';
}

/** `_meta["io.modelcontextprotocol/serverInfo"]` of a 2026-07-28 result, if it is usable. */
function serverInfoOf(result: unknown): Implementation | undefined {
  const meta = result && typeof result === 'object' ? (result as { _meta?: Meta })._meta : undefined;
  return usableInfo(meta?.[MetaKeys.serverInfo]);
}

function usableInfo(value: unknown): Implementation | undefined {
  return value && typeof value === 'object' && typeof (value as Implementation).name === 'string' ? (value as Implementation) : undefined;
}

function checkInitializeResult(result: InitializeResult): McpError | undefined {
  // A malformed reply is the server's internal error (-32603); a version we do not speak is a refusal of our params.
  if (!result || typeof result !== 'object') return McpError.internal('The server answered initialize with no result object');
  if (!isSupportedProtocolVersion(result.protocolVersion)) {
    return McpError.invalidParams(
      `The server wants protocol version ${JSON.stringify(result.protocolVersion)}; MCP Host speaks ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')}`,
      {
        serverVersion: result.protocolVersion,
        supported: SUPPORTED_PROTOCOL_VERSIONS,
      },
    );
  }
  if (result.capabilities !== undefined && (typeof result.capabilities !== 'object' || result.capabilities === null)) {
    return McpError.internal('The server sent capabilities that are not an object');
  }
  return undefined;
}

export type { LogEntry };
