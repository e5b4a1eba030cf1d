/**
 * MCP message types, written from the public specification, revision 2025-11-25.
 * Fields of older revisions we still accept are marked. Objects are open: peers may add fields,
 * so everything we do not name is kept as `[key: string]: unknown` where it matters.
 */

export type RequestId = string | number;
export type ProgressToken = string | number;
export type Cursor = string;
export type Role = 'user' | 'assistant';
export type LoggingLevel = 'debug' | 'info' | 'notice' | 'warning' | 'error' | 'critical' | 'alert' | 'emergency';
/** The levels, least severe first (RFC 5424's order, as the spec lists them). */
export const LOGGING_LEVELS: readonly LoggingLevel[] = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];

export interface Meta {
  progressToken?: ProgressToken;
  [key: string]: unknown;
}

export interface Implementation {
  name: string;
  version: string;
  title?: string;
  description?: string;
  websiteUrl?: string;
  icons?: Icon[];
}

export interface Icon {
  src: string;
  mimeType?: string;
  sizes?: string[];
  theme?: 'light' | 'dark';
}

export interface ClientCapabilities {
  roots?: { listChanged?: boolean };
  sampling?: { context?: object; tools?: object };
  elicitation?: { form?: object; url?: object };
  tasks?: ClientTasksCapability;
  experimental?: Record<string, object>;
  /** Protocol extensions by id (SEP-1724), e.g. `io.modelcontextprotocol/ui` for MCP Apps. */
  extensions?: Record<string, object>;
  [key: string]: unknown;
}

/** 2025-11-25 tasks: what the client can do with tasks, and which server requests it runs as tasks. */
export interface ClientTasksCapability {
  list?: object;
  cancel?: object;
  requests?: { sampling?: { createMessage?: object }; elicitation?: { create?: object } };
}

/** 2025-11-25 tasks: what the server can do with tasks, and which of our requests it runs as tasks. */
export interface ServerTasksCapability {
  list?: object;
  cancel?: object;
  requests?: { tools?: { call?: object } };
}

export interface ServerCapabilities {
  logging?: object;
  completions?: object;
  prompts?: { listChanged?: boolean };
  resources?: { subscribe?: boolean; listChanged?: boolean };
  tools?: { listChanged?: boolean };
  tasks?: ServerTasksCapability;
  experimental?: Record<string, object>;
  [key: string]: unknown;
}

export interface InitializeParams {
  protocolVersion: string;
  capabilities: ClientCapabilities;
  clientInfo: Implementation;
}

export interface InitializeResult {
  protocolVersion: string;
  capabilities: ServerCapabilities;
  serverInfo: Implementation;
  instructions?: string;
  _meta?: Meta;
}

/** 2026-07-28 `server/discover`: the server's versions and capabilities; server info rides in `_meta`. */
export interface DiscoverResult {
  resultType?: string;
  supportedVersions: string[];
  capabilities: ServerCapabilities;
  instructions?: string;
  ttlMs?: number;
  cacheScope?: 'public' | 'private';
  _meta?: Meta;
}

/**
 * 2026-07-28 `subscriptions/listen`: the notifications a client asks for (`notifications`), and in
 * `notifications/subscriptions/acknowledged` the ones the server agreed to send.
 */
export interface SubscriptionFilter {
  toolsListChanged?: boolean;
  promptsListChanged?: boolean;
  resourcesListChanged?: boolean;
  resourceSubscriptions?: string[];
}

/** 2026-07-28 multi-round-trip: one request the server needs answered before it can finish (`inputRequests`). */
export interface InputRequest {
  method: string;
  params?: Record<string, unknown>;
}

export interface Annotations {
  audience?: Role[];
  priority?: number;
  lastModified?: string;
}

export interface TextContent {
  type: 'text';
  text: string;
  annotations?: Annotations;
  _meta?: Meta;
}
export interface ImageContent {
  type: 'image';
  data: string;
  mimeType: string;
  annotations?: Annotations;
  _meta?: Meta;
}
export interface AudioContent {
  type: 'audio';
  data: string;
  mimeType: string;
  annotations?: Annotations;
  _meta?: Meta;
}
export interface ResourceLink extends Resource {
  type: 'resource_link';
}
export interface EmbeddedResource {
  type: 'resource';
  resource: TextResourceContents | BlobResourceContents;
  annotations?: Annotations;
  _meta?: Meta;
}
export type ContentBlock = TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource;

export interface ToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

export interface JsonSchemaObject {
  type?: 'object';
  properties?: Record<string, object>;
  required?: string[];
  $schema?: string;
  [key: string]: unknown;
}

export interface Tool {
  name: string;
  title?: string;
  description?: string;
  inputSchema: JsonSchemaObject;
  outputSchema?: JsonSchemaObject;
  annotations?: ToolAnnotations;
  /** 2025-11-25: whether the tool may (`optional`) or must (`required`) run as a task; `forbidden` if absent. */
  execution?: { taskSupport?: 'forbidden' | 'optional' | 'required' };
  icons?: Icon[];
  _meta?: Meta;
}

export interface CallToolParams {
  name: string;
  arguments?: Record<string, unknown>;
}

export interface CallToolResult {
  content: ContentBlock[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  _meta?: Meta;
}

export interface Resource {
  uri: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  size?: number;
  annotations?: Annotations;
  icons?: Icon[];
  _meta?: Meta;
}

export interface ResourceTemplate {
  uriTemplate: string;
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  annotations?: Annotations;
  icons?: Icon[];
  _meta?: Meta;
}

export interface TextResourceContents {
  uri: string;
  mimeType?: string;
  text: string;
  _meta?: Meta;
}
export interface BlobResourceContents {
  uri: string;
  mimeType?: string;
  blob: string;
  _meta?: Meta;
}

export interface ReadResourceResult {
  contents: Array<TextResourceContents | BlobResourceContents>;
  _meta?: Meta;
}

export interface PromptArgument {
  name: string;
  title?: string;
  description?: string;
  required?: boolean;
}
export interface Prompt {
  name: string;
  title?: string;
  description?: string;
  arguments?: PromptArgument[];
  icons?: Icon[];
  _meta?: Meta;
}
export interface PromptMessage {
  role: Role;
  content: ContentBlock;
}
export interface GetPromptResult {
  description?: string;
  messages: PromptMessage[];
  _meta?: Meta;
}

export type CompleteReference = { type: 'ref/prompt'; name: string } | { type: 'ref/resource'; uri: string };
export interface CompleteParams {
  ref: CompleteReference;
  argument: { name: string; value: string };
  context?: { arguments?: Record<string, string> };
}
export interface CompleteResult {
  completion: { values: string[]; total?: number; hasMore?: boolean };
  _meta?: Meta;
}

export interface Root {
  uri: string;
  name?: string;
  _meta?: Meta;
}
export interface ListRootsResult {
  roots: Root[];
}

export interface ModelHint {
  name?: string;
}
export interface ModelPreferences {
  hints?: ModelHint[];
  costPriority?: number;
  speedPriority?: number;
  intelligencePriority?: number;
}
/** 2025-11-25: the model's call of a tool the sampling request offered. */
export interface ToolUseContent {
  type: 'tool_use';
  id: string;
  name: string;
  input: Record<string, unknown>;
  _meta?: Meta;
}
/** 2025-11-25: the server's result of a `tool_use`, sent back in the next user message. */
export interface ToolResultContent {
  type: 'tool_result';
  toolUseId: string;
  content: ContentBlock[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  _meta?: Meta;
}
export type SamplingContent = TextContent | ImageContent | AudioContent | ToolUseContent | ToolResultContent;
export interface SamplingMessage {
  role: Role;
  content: SamplingContent | Array<SamplingContent | { type: string; [key: string]: unknown }>;
  _meta?: Meta;
}
export interface CreateMessageParams {
  messages: SamplingMessage[];
  modelPreferences?: ModelPreferences;
  systemPrompt?: string;
  includeContext?: 'none' | 'thisServer' | 'allServers';
  temperature?: number;
  maxTokens: number;
  stopSequences?: string[];
  metadata?: object;
  tools?: Tool[];
  toolChoice?: { mode?: 'auto' | 'required' | 'none' };
  _meta?: Meta;
}
export interface CreateMessageResult {
  role: Role;
  content: SamplingContent | SamplingContent[];
  model: string;
  stopReason?: 'endTurn' | 'stopSequence' | 'maxTokens' | 'toolUse' | string;
  _meta?: Meta;
}

export interface ElicitRequestParams {
  mode?: 'form' | 'url';
  message: string;
  requestedSchema?: JsonSchemaObject;
  url?: string;
  elicitationId?: string;
  _meta?: Meta;
}
export interface ElicitResult {
  action: 'accept' | 'decline' | 'cancel';
  content?: Record<string, string | number | boolean | string[]>;
  _meta?: Meta;
}

export interface ProgressNotificationParams {
  progressToken: ProgressToken;
  progress: number;
  total?: number;
  message?: string;
}
export interface LoggingMessageNotificationParams {
  level: LoggingLevel;
  logger?: string;
  data: unknown;
}
export interface CancelledNotificationParams {
  requestId?: RequestId;
  reason?: string;
}
export interface ResourceUpdatedNotificationParams {
  uri: string;
}

export type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';
export const TERMINAL_TASK_STATUSES: readonly TaskStatus[] = ['completed', 'failed', 'cancelled'];
/** The `_meta` key that ties a message to a task. */
export const RELATED_TASK_META_KEY = 'io.modelcontextprotocol/related-task';

/** 2025-11-25 tasks: the receiver's record of one task-augmented request. */
export interface Task {
  taskId: string;
  status: TaskStatus;
  statusMessage?: string;
  /** ISO 8601. */
  createdAt: string;
  lastUpdatedAt: string;
  /** How long after creation the receiver keeps the task, in ms; null: unlimited. */
  ttl: number | null;
  /** How often the requestor should poll `tasks/get`, in ms. */
  pollInterval?: number;
}
/** Sent in a request's params to ask that it run as a task. */
export interface TaskMetadata {
  ttl?: number;
}
export interface CreateTaskResult {
  task: Task;
  _meta?: Meta;
}
export interface ListTasksResult {
  tasks: Task[];
  nextCursor?: Cursor;
  _meta?: Meta;
}

/** A paginated list reply: the items live under one key, `nextCursor` says whether more follow. */
export interface PaginatedResult {
  nextCursor?: Cursor;
  [key: string]: unknown;
}

export type EmptyResult = Record<string, never>;
