import type { RequestOptions } from '../jsonrpc/connection';
import { McpError } from '../protocol/errors';
import { ClientRequests, Notifications } from '../protocol/methods';
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS, isSupportedProtocolVersion } from '../protocol/versions';
import type { InitializeResult, LoggingLevel, Tool } from '../protocol/types';
import { DEFAULT_CLIENT_INFO } from './options';
import type { AnyClientRequest, EraSession, SessionContext } from './session';
import { retryAfterUrlElicitations } from './urlElicitation';

/**
 * The initialize era (2025-11-25 and older): one handshake, a session the transport keeps (its id,
 * the version header), logging/setLevel, resources/subscribe, and -32042 answered by letting the
 * person finish the pages before the same request goes again.
 */
export class LegacySession implements EraSession {
  readonly era = 'legacy';
  readonly listening = undefined;

  private constructor(
    private readonly ctx: SessionContext,
    readonly result: InitializeResult,
  ) {}

  /** The initialize handshake; rejects when it fails or the server's answer is unusable. */
  static async initialize(ctx: SessionContext): Promise<LegacySession> {
    const { options } = ctx;
    const offered = options.protocolVersion ?? LATEST_PROTOCOL_VERSION;
    const result = await ctx.connection.request(
      ClientRequests.initialize,
      { protocolVersion: offered, capabilities: ctx.capabilities, clientInfo: options.clientInfo ?? DEFAULT_CLIENT_INFO },
      { timeoutMs: options.initializeTimeoutMs ?? options.requestTimeoutMs },
    );
    const problem = checkInitializeResult(result);
    if (problem) throw problem;
    const session = new LegacySession(ctx, { ...result, capabilities: result.capabilities ?? {} });
    ctx.transport.setProtocolVersion?.(result.protocolVersion);
    return session;
  }

  start(): Promise<void> {
    return this.ctx.connection.notify(Notifications.initialized);
  }

  refusal(): undefined {
    return undefined;
  }

  send<P, R>(type: AnyClientRequest<P, R>, params: P, options?: RequestOptions): Promise<R> {
    const { connection, options: clientOptions, elicitations } = this.ctx;
    const send = () => connection.request(type, params, options);
    const handler = clientOptions.handlers?.urlElicitationRequired;
    return handler
      ? retryAfterUrlElicitations(
          send,
          handler,
          { method: type.method, params: params as Record<string, unknown> | undefined },
          options?.signal,
          elicitations,
          () => connection.isClosed,
        )
      : send();
  }

  setLoggingLevel(level: LoggingLevel, options?: RequestOptions): Promise<Record<string, never>> {
    return this.ctx.request(ClientRequests.setLevel, { level }, options);
  }

  sendRootsListChanged(): Promise<void> {
    return this.ctx.connection.notify(Notifications.rootsListChanged);
  }

  acceptsChange(): boolean {
    return true;
  }

  invalidParamsMeansNotFound(error: McpError, uri: string): boolean {
    return invalidParamsNamesUri(error, uri);
  }

  usableTools(tools: Tool[]): Tool[] {
    return tools;
  }

  /** The initialize era subscribes with resources/subscribe instead. */
  setListenedResources(): void {}
  acknowledge(): void {}
  dispose(): void {}
}

/** v2-SDK servers answer a read of a missing resource -32602 naming the URI in `data`, in either era. */
export function invalidParamsNamesUri(error: McpError, uri: string): boolean {
  return (error.data as { uri?: unknown } | undefined)?.uri === uri;
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
