import type { McpConnection, RequestOptions } from '../jsonrpc/connection';
import type { McpError } from '../protocol/errors';
import type { ClientRequestMethod, ClientRequestType } from '../protocol/methods';
import type { ClientCapabilities, InitializeResult, LoggingLevel, RequestId, SubscriptionFilter, Tool } from '../protocol/types';
import type { LogEntry, Transport } from '../transport/transport';
import type { CachingRequestOptions, ResultCache } from './cache';
import type { McpClientOptions } from './options';
import type { ElicitationCompletions } from './urlElicitation';

/** A request the client sends, whatever its method. */
export type AnyClientRequest<P, R> = ClientRequestType<ClientRequestMethod, P, R>;

/** What an era session uses of its client. */
export interface SessionContext {
  readonly connection: McpConnection;
  readonly transport: Transport;
  readonly options: McpClientOptions;
  /** The capabilities we declare (the server requests the router answers). */
  readonly capabilities: ClientCapabilities;
  /** The tools of the last tools/list, by name: where a call's `Mcp-Param-*` headers come from. */
  readonly toolsByName: ReadonlyMap<string, Tool>;
  readonly resultCache: ResultCache | undefined;
  readonly elicitations: ElicitationCompletions;
  /** The whole send pipeline (connection, era, capability checks), for requests a session makes itself. */
  request<P, R>(type: AnyClientRequest<P, R>, params: P, options?: CachingRequestOptions): Promise<R>;
  listTools(options: CachingRequestOptions): Promise<Tool[]>;
  /** The resources whose updates the client wants (2026-07-28: on the listen). */
  listenedResources(): string[];
  /** A listen stands again after a gap: treat what it covers as changed. */
  resync(acknowledged: SubscriptionFilter): void;
  log(level: LogEntry['level'], message: string): void;
}

/**
 * One connection's protocol era, chosen at connect: {@link LegacySession} (2025-11-25 and older,
 * the initialize handshake) or {@link StatelessSession} (2026-07-28). The client's one send
 * pipeline checks the capability and then hands every request to it.
 */
export interface EraSession {
  readonly era: 'modern' | 'legacy';
  /** What the handshake (initialize, or server/discover as one) told; its serverInfo follows the latest result. */
  readonly result: InitializeResult;
  /** Once the client holds the session: the era's first steps (`notifications/initialized`, or the listen). */
  start(): Promise<void>;
  /** Why this era never sends `method`, or undefined. */
  refusal(method: ClientRequestMethod): McpError | undefined;
  send<P, R>(type: AnyClientRequest<P, R>, params: P, options?: CachingRequestOptions): Promise<R>;
  setLoggingLevel(level: LoggingLevel, options?: RequestOptions): Promise<Record<string, never>>;
  sendRootsListChanged(): Promise<void>;
  /** Whether a change notification (list_changed, resources/updated) counts. */
  acceptsChange(params: unknown): boolean;
  /** Whether -32602 (without a kind) to `resources/read` of `uri` means the resource does not exist. */
  invalidParamsMeansNotFound(error: McpError, uri: string): boolean;
  /** The tools of a tools/list this era can call. */
  usableTools(tools: Tool[]): Tool[];
  setListenedResources(uris: string[]): void;
  /** `notifications/subscriptions/acknowledged`. */
  acknowledge(params: unknown): void;
  readonly listening: { id: RequestId; acknowledged: SubscriptionFilter } | undefined;
  dispose(): void;
}
