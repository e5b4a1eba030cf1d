import { NotificationType, RequestType } from 'vscode-jsonrpc/node';
import type { WireError } from './classify';
import type {
  CallToolParams,
  CallToolResult,
  CancelledNotificationParams,
  CompleteParams,
  CompleteResult,
  CreateMessageParams,
  CreateMessageResult,
  CreateTaskResult,
  Cursor,
  DiscoverResult,
  ElicitRequestParams,
  ElicitResult,
  EmptyResult,
  GetPromptResult,
  InitializeParams,
  InitializeResult,
  ListRootsResult,
  ListTasksResult,
  LoggingLevel,
  LoggingMessageNotificationParams,
  Meta,
  ProgressNotificationParams,
  Prompt,
  ReadResourceResult,
  Resource,
  ResourceTemplate,
  ResourceUpdatedNotificationParams,
  SubscriptionFilter,
  Task,
  TaskMetadata,
  Tool,
} from './types';

/**
 * vscode-jsonrpc's typed request, with the method name as a literal type: every MCP method below
 * is one value, so sending or handling a method that is not here, or treating its result as the
 * wrong type, does not compile.
 */
export class McpRequestType<M extends string, P, R> extends RequestType<P, R, WireError> {
  declare readonly method: M;
  constructor(method: M) {
    super(method);
  }
}

/** vscode-jsonrpc's typed notification, with the method name as a literal type. */
export class McpNotificationType<M extends string, P> extends NotificationType<P> {
  declare readonly method: M;
  constructor(method: M) {
    super(method);
  }
}

export interface PaginatedParams {
  cursor?: Cursor;
  _meta?: Meta;
}
type Page<K extends string, T> = { [key in K]: T[] } & { nextCursor?: Cursor | null; _meta?: Meta };
export type ListToolsResult = Page<'tools', Tool>;
export type ListResourcesResult = Page<'resources', Resource>;
export type ListResourceTemplatesResult = Page<'resourceTemplates', ResourceTemplate>;
export type ListPromptsResult = Page<'prompts', Prompt>;
interface TaskIdParams {
  taskId: string;
}
/** tools/call params as sent: a task-augmented call carries `task`. */
export interface CallToolRequestParams extends CallToolParams {
  task?: TaskMetadata;
}

/** Notifications either side may send; the comments say who sends which. */
export const Notifications = {
  /** Both ways. */
  cancelled: new McpNotificationType<'notifications/cancelled', CancelledNotificationParams>('notifications/cancelled'),
  /** Both ways. */
  progress: new McpNotificationType<'notifications/progress', ProgressNotificationParams>('notifications/progress'),
  /** Client → server, once after initialize. */
  initialized: new McpNotificationType<'notifications/initialized', undefined>('notifications/initialized'),
  /** Client → server. */
  rootsListChanged: new McpNotificationType<'notifications/roots/list_changed', undefined>('notifications/roots/list_changed'),
  /** Both ways: a task one side runs for the other changed. */
  taskStatus: new McpNotificationType<'notifications/tasks/status', Task>('notifications/tasks/status'),
  /** Server → client from here on. */
  message: new McpNotificationType<'notifications/message', LoggingMessageNotificationParams>('notifications/message'),
  toolsListChanged: new McpNotificationType<'notifications/tools/list_changed', undefined>('notifications/tools/list_changed'),
  promptsListChanged: new McpNotificationType<'notifications/prompts/list_changed', undefined>('notifications/prompts/list_changed'),
  resourcesListChanged: new McpNotificationType<'notifications/resources/list_changed', undefined>('notifications/resources/list_changed'),
  resourceUpdated: new McpNotificationType<'notifications/resources/updated', ResourceUpdatedNotificationParams>(
    'notifications/resources/updated',
  ),
  /** 2026-07-28: the first message of a `subscriptions/listen`: what the server will send on it. */
  subscriptionsAcknowledged: new McpNotificationType<
    'notifications/subscriptions/acknowledged',
    { notifications?: SubscriptionFilter; _meta?: Meta }
  >('notifications/subscriptions/acknowledged'),
  elicitationComplete: new McpNotificationType<'notifications/elicitation/complete', { elicitationId?: string }>(
    'notifications/elicitation/complete',
  ),
} as const;

/**
 * A server's notification that some of its lists changed: which notification it is, the capability
 * that says the server sends it (`capabilities[offeredBy].listChanged`), and its key in a 2026-07-28
 * `subscriptions/listen` filter. Which lists it makes stale is the `invalidatedBy` trait of each list
 * request, and nowhere else.
 */
export interface ListChange {
  readonly notification: McpNotificationType<string, undefined>;
  readonly offeredBy: 'tools' | 'prompts' | 'resources';
  readonly listenKey: 'toolsListChanged' | 'promptsListChanged' | 'resourcesListChanged';
}

/** The three list changes a server may send. */
export const ListChanges = {
  tools: { notification: Notifications.toolsListChanged, offeredBy: 'tools', listenKey: 'toolsListChanged' },
  prompts: { notification: Notifications.promptsListChanged, offeredBy: 'prompts', listenKey: 'promptsListChanged' },
  resources: { notification: Notifications.resourcesListChanged, offeredBy: 'resources', listenKey: 'resourcesListChanged' },
} as const satisfies Record<string, ListChange>;
export type ListChangeKind = keyof typeof ListChanges;

/** A capability of the server, as a path into its `capabilities` ('resources.subscribe' is `capabilities.resources.subscribe`). */
export type ServerCapabilityPath =
  'tools' | 'resources' | 'resources.subscribe' | 'prompts' | 'completions' | 'logging' | 'tasks.list' | 'tasks.cancel';

/** What the client must know of a method it sends, declared once with the method. */
export interface MethodTraits {
  /** The server capability it needs: without it the request is refused before it is sent (-32002). Null: none. */
  readonly requires: ServerCapabilityPath | null;
  /**
   * 2026-07-28 caching hints (`server/utilities/caching`): the server may let us keep the result
   * for `ttlMs`. `server/discover` is among them, but it is asked once per connection and the cache
   * ends with the connection, so it is not marked.
   */
  readonly cacheable?: boolean;
  /** 2026-07-28 multi-round-trip: the result may be `input_required`, answered and sent again. */
  readonly inputRounds?: boolean;
  /** Only the initialize era has it: 2026-07-28 removed it, so it is never sent to a stateless server. */
  readonly legacyOnly?: boolean;
  /** The param that 2026-07-28's `Mcp-Name` header repeats. */
  readonly namedBy?: 'name' | 'uri';
  /** A list whose answer this change notification makes stale: the cache drops it, and whoever shows it asks again. */
  readonly invalidatedBy?: ListChange;
}

/** A request the client sends, with its {@link MethodTraits}. */
export class ClientRequestType<M extends string, P, R> extends McpRequestType<M, P, R> {
  constructor(
    method: M,
    readonly traits: MethodTraits,
  ) {
    super(method);
  }
}

const NONE: MethodTraits = { requires: null };

/** Requests the client sends to the server (MCP 2025-11-25, and `server/discover` of 2026-07-28). */
export const ClientRequests = {
  /** 2026-07-28: what the server speaks and offers; also the probe that tells the two eras apart. */
  discover: new ClientRequestType<'server/discover', { _meta?: Meta }, DiscoverResult>('server/discover', NONE),
  initialize: new ClientRequestType<'initialize', InitializeParams, InitializeResult>('initialize', NONE),
  ping: new ClientRequestType<'ping', undefined, EmptyResult>('ping', { requires: null, legacyOnly: true }),
  listTools: new ClientRequestType<'tools/list', PaginatedParams, ListToolsResult>('tools/list', {
    requires: 'tools',
    cacheable: true,
    invalidatedBy: ListChanges.tools,
  }),
  /** A task-augmented call is answered with the task instead of the result. */
  callTool: new ClientRequestType<'tools/call', CallToolRequestParams, CallToolResult | CreateTaskResult>('tools/call', {
    requires: 'tools',
    inputRounds: true,
    namedBy: 'name',
  }),
  listResources: new ClientRequestType<'resources/list', PaginatedParams, ListResourcesResult>('resources/list', {
    requires: 'resources',
    cacheable: true,
    invalidatedBy: ListChanges.resources,
  }),
  listResourceTemplates: new ClientRequestType<'resources/templates/list', PaginatedParams, ListResourceTemplatesResult>(
    'resources/templates/list',
    { requires: 'resources', cacheable: true, invalidatedBy: ListChanges.resources },
  ),
  readResource: new ClientRequestType<'resources/read', { uri: string }, ReadResourceResult>('resources/read', {
    requires: 'resources',
    cacheable: true,
    inputRounds: true,
    namedBy: 'uri',
  }),
  subscribe: new ClientRequestType<'resources/subscribe', { uri: string }, EmptyResult>('resources/subscribe', {
    requires: 'resources.subscribe',
    legacyOnly: true,
  }),
  unsubscribe: new ClientRequestType<'resources/unsubscribe', { uri: string }, EmptyResult>('resources/unsubscribe', {
    requires: 'resources.subscribe',
    legacyOnly: true,
  }),
  listPrompts: new ClientRequestType<'prompts/list', PaginatedParams, ListPromptsResult>('prompts/list', {
    requires: 'prompts',
    cacheable: true,
    invalidatedBy: ListChanges.prompts,
  }),
  getPrompt: new ClientRequestType<'prompts/get', { name: string; arguments?: Record<string, string> }, GetPromptResult>('prompts/get', {
    requires: 'prompts',
    inputRounds: true,
    namedBy: 'name',
  }),
  complete: new ClientRequestType<'completion/complete', CompleteParams, CompleteResult>('completion/complete', {
    requires: 'completions',
  }),
  setLevel: new ClientRequestType<'logging/setLevel', { level: LoggingLevel }, EmptyResult>('logging/setLevel', {
    requires: 'logging',
    legacyOnly: true,
  }),
  getTask: new ClientRequestType<'tasks/get', TaskIdParams, Task>('tasks/get', NONE),
  taskResult: new ClientRequestType<'tasks/result', TaskIdParams, unknown>('tasks/result', NONE),
  cancelTask: new ClientRequestType<'tasks/cancel', TaskIdParams, Task>('tasks/cancel', { requires: 'tasks.cancel' }),
  listTasks: new ClientRequestType<'tasks/list', PaginatedParams, ListTasksResult>('tasks/list', { requires: 'tasks.list' }),
  /** 2026-07-28: one long-lived request whose notifications replace the GET stream and resources/subscribe; its result means the server ended it. */
  listen: new ClientRequestType<'subscriptions/listen', { notifications: SubscriptionFilter }, { _meta?: Meta }>(
    'subscriptions/listen',
    NONE,
  ),
} as const;

/** Requests the server sends to the client; their params are the server's claim, not yet checked. */
export const ServerRequests = {
  ping: new McpRequestType<'ping', undefined, EmptyResult>('ping'),
  listRoots: new McpRequestType<'roots/list', undefined, ListRootsResult>('roots/list'),
  createMessage: new McpRequestType<
    'sampling/createMessage',
    CreateMessageParams & { task?: TaskMetadata },
    CreateMessageResult | CreateTaskResult
  >('sampling/createMessage'),
  elicit: new McpRequestType<'elicitation/create', ElicitRequestParams & { task?: TaskMetadata }, ElicitResult | CreateTaskResult>(
    'elicitation/create',
  ),
  getTask: new McpRequestType<'tasks/get', Partial<TaskIdParams>, Task>('tasks/get'),
  taskResult: new McpRequestType<'tasks/result', Partial<TaskIdParams>, unknown>('tasks/result'),
  listTasks: new McpRequestType<'tasks/list', PaginatedParams | undefined, { tasks: Task[] }>('tasks/list'),
  cancelTask: new McpRequestType<'tasks/cancel', Partial<TaskIdParams>, Task>('tasks/cancel'),
} as const;

type Values<T> = T[keyof T];
/** Every method the client may send as a request. */
export type ClientRequestMethod = Values<typeof ClientRequests>['method'];

const CLIENT_REQUESTS_BY_METHOD: ReadonlyMap<string, ClientRequestType<ClientRequestMethod, unknown, unknown>> = new Map(
  Object.values(ClientRequests).map((type) => [type.method, type as ClientRequestType<ClientRequestMethod, unknown, unknown>]),
);

/** The traits of a method the client sends; undefined for a method that is not one. */
export function traitsOf(method: string): MethodTraits | undefined {
  return CLIENT_REQUESTS_BY_METHOD.get(method)?.traits;
}

/** The list requests whose answers a change notification makes stale (their `invalidatedBy`). */
export function listsInvalidatedBy(change: ListChange): ClientRequestMethod[] {
  return [...CLIENT_REQUESTS_BY_METHOD.values()].filter((type) => type.traits.invalidatedBy === change).map((type) => type.method);
}
