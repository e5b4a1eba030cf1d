import type { RequestOptions } from '../jsonrpc/connection';
import { ErrorCode, McpError } from '../protocol/errors';
import { ClientRequests, traitsOf, type ClientRequestMethod } from '../protocol/methods';
import type { DiscoverResult, Implementation, InitializeResult, LoggingLevel, Meta, Tool } from '../protocol/types';
import { MODERN_PROTOCOL_VERSIONS, MetaKeys, type ModernProtocolVersion } from '../protocol/versions';
import { headerParamsOf, headerValue, invalidHeaderAnnotations } from '../transport/headerParams';
import type { MessageHeaderSource } from '../transport/transport';
import type { CachingRequestOptions, ResultCache } from './cache';
import { judgeDiscoverError, judgeDiscoverResult, type ProbeVerdict } from './era';
import { answerInputRequests } from './inputRequests';
import { ListenSubscription } from './listen';
import { DEFAULT_CLIENT_INFO } from './options';
import type { AnyClientRequest, EraSession, SessionContext } from './session';

/** A stateless request whose reply stream keeps breaking is sent again this often, then fails. */
const MAX_REPLY_RESENDS = 2;
/** A server that keeps answering input_required cannot hold a call forever. */
const MAX_INPUT_ROUNDS = 8;

/**
 * The 2026-07-28 era: no handshake, `server/discover` instead; every request carries the version,
 * our capabilities and client info in `_meta` and the standard headers over HTTP; a server asks
 * for input inside results (`input_required` rounds), never with requests of its own; list
 * changes and resource updates come on a `subscriptions/listen`; results may be cached.
 */
export class StatelessSession implements EraSession {
  readonly era = 'modern';
  readonly result: InitializeResult;
  /** What every request carries in `_meta`; the log level joins it. */
  private meta: Meta;
  private listen: ListenSubscription | undefined;

  private constructor(
    private readonly ctx: SessionContext,
    private readonly version: ModernProtocolVersion,
    discovered: DiscoverResult,
  ) {
    const capabilities = discovered.capabilities && typeof discovered.capabilities === 'object' ? discovered.capabilities : {};
    this.meta = statelessMeta(ctx, version);
    ctx.connection.refuseRequests(`in protocol ${version} servers send no requests; they ask for input inside results (input_required)`);
    this.result = {
      protocolVersion: version,
      capabilities,
      // Some servers put it beside the capabilities, as initialize did.
      serverInfo: serverInfoOf(discovered) ?? usableInfo((discovered as { serverInfo?: unknown }).serverInfo) ?? { name: '', version: '' },
      ...(typeof discovered.instructions === 'string' ? { instructions: discovered.instructions } : {}),
    };
    ctx.transport.setMessageHeaders?.(standardHeaders(version, ctx.toolsByName));
  }

  /**
   * The era probe: `server/discover` with the newest stateless revision. A result, or one of the
   * new-style errors, means the stateless era (after -32022 asked again with a revision the server
   * names); anything else means initialize (undefined). Throws when the server went away meanwhile
   * (kind `probeLost`: the caller starts it again with initialize), and when `choice` insisted on a
   * stateless revision the server does not speak.
   */
  static async probe(ctx: SessionContext, choice: 'auto' | ModernProtocolVersion): Promise<StatelessSession | undefined> {
    const { connection, options } = ctx;
    let version: ModernProtocolVersion = choice === 'auto' ? MODERN_PROTOCOL_VERSIONS[0] : choice;
    const probeTimeoutMs = choice === 'auto' ? options.probeTimeoutMs : undefined;
    let session: StatelessSession | undefined;
    try {
      for (let attempt = 0; attempt < 2; attempt++) {
        let verdict: ProbeVerdict;
        let result: DiscoverResult | undefined;
        let failure: McpError | undefined;
        // The probe is a 2026-07-28 message, with its headers, whatever the answer turns out to be.
        ctx.transport.setMessageHeaders?.(standardHeaders(version, ctx.toolsByName));
        try {
          result = await connection.request(
            ClientRequests.discover,
            { _meta: statelessMeta(ctx, version) },
            { timeoutMs: probeTimeoutMs ?? options.initializeTimeoutMs ?? options.requestTimeoutMs },
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
            session = new StatelessSession(ctx, verdict.version, result);
            return session;
          case 'retry':
            version = verdict.version;
            continue;
          case 'legacy':
            if (choice !== 'auto') throw McpError.invalidParams(`The server does not speak protocol ${choice}: ${verdict.reason}`);
            ctx.log('debug', `${verdict.reason}: using initialize`);
            return undefined;
        }
      }
      throw McpError.invalidParams(`The server refused protocol ${version}, which it names as supported`);
    } finally {
      if (!session) ctx.transport.setMessageHeaders?.(undefined);
    }
  }

  /** The listen that brings list changes and resource updates. */
  start(): Promise<void> {
    const { connection } = this.ctx;
    const listen = new ListenSubscription({
      send: (notifications, onRequestId, signal) =>
        this.ctx.request(ClientRequests.listen, { notifications }, { timeoutMs: Infinity, signal, onRequestId, serverMayCancel: true }),
      capabilities: () => this.result.capabilities,
      isOpen: () => !connection.isClosed,
      log: (level, message) => this.ctx.log(level, message),
      resumed: (acknowledged) => this.ctx.resync(acknowledged),
    });
    this.listen = listen;
    connection.onDidClose(() => listen.dispose());
    listen.setResources(this.ctx.listenedResources());
    listen.update();
    return Promise.resolve();
  }

  refusal(method: ClientRequestMethod): McpError | undefined {
    if (!traitsOf(method)?.legacyOnly) return undefined;
    return new McpError(
      ErrorCode.CapabilityDisabled,
      `'${method}' does not exist in protocol ${this.version}, so it was not sent`,
      { method },
      { type: 'capabilityDisabled', method, capability: `protocol ${this.version}` },
    );
  }

  send<P, R>(type: AnyClientRequest<P, R>, params: P, options?: CachingRequestOptions): Promise<R> {
    const cache = this.ctx.resultCache;
    return cache && type.traits.cacheable ? this.cachedRequest(cache, type, params, options) : this.request(type, params, options);
  }

  /** 2026-07-28 has no logging/setLevel: the level rides in every later request's `_meta`, and nothing is sent now. */
  setLoggingLevel(level: LoggingLevel): Promise<Record<string, never>> {
    if (!this.result.capabilities.logging) return Promise.reject(McpError.capabilityDisabled('logging/setLevel', 'logging'));
    this.meta = { ...this.meta, [MetaKeys.logLevel]: level };
    return Promise.resolve({});
  }

  /** 2026-07-28 servers ask for the roots within each request that needs them. */
  sendRootsListChanged(): Promise<void> {
    return Promise.resolve();
  }

  /** A change notification counts only if it comes on one of our listens. */
  acceptsChange(params: unknown): boolean {
    return !!this.listen?.accepts(params);
  }

  /** 2026-07-28 says -32602 for a resource that does not exist. */
  invalidParamsMeansNotFound(): boolean {
    return true;
  }

  /** Only a transport that sends headers (Streamable HTTP) has to refuse tools it cannot send correctly. */
  usableTools(tools: Tool[]): Tool[] {
    return this.ctx.transport.setMessageHeaders ? tools.filter((tool) => this.headersUsable(tool)) : tools;
  }

  setListenedResources(uris: string[]): void {
    this.listen?.setResources(uris);
  }

  acknowledge(params: unknown): void {
    this.listen?.acknowledge(params as Parameters<ListenSubscription['acknowledge']>[0]);
  }

  get listening(): EraSession['listening'] {
    return this.listen?.state;
  }

  dispose(): void {
    this.listen?.dispose();
  }

  /** A tool whose `x-mcp-header` annotations are invalid cannot be called correctly, so it is not offered. */
  private headersUsable(tool: Tool): boolean {
    const problem = invalidHeaderAnnotations(tool);
    if (problem) this.ctx.log('warning', `dropped tool ${JSON.stringify(tool.name)}: ${problem}`);
    return !problem;
  }

  /**
   * One request: `_meta` with version, capabilities and client info; the server info of the
   * result read; and, for the multi-round-trip methods, each `input_required` answered through
   * the host's handlers and the request sent again (a new id, this round's `inputResponses`, the
   * `requestState` echoed as it came), up to {@link MAX_INPUT_ROUNDS} rounds. A missing
   * `resultType` means complete.
   */
  private async request<P, R>(
    type: AnyClientRequest<P, R>,
    params: P,
    options?: RequestOptions,
    exchange?: { retried: boolean },
  ): Promise<R> {
    const original = (params ?? {}) as Record<string, unknown>;
    const base = { ...original, _meta: { ...(original._meta as Meta | undefined), ...this.meta } };
    const send = (p: Record<string, unknown>) => this.sendOnce(type, p as P, options);
    let result = await send(base);
    this.noteServerInfo(result);
    if (!type.traits.inputRounds) return result;
    const maxRounds = this.ctx.options.maxInputRounds ?? MAX_INPUT_ROUNDS;
    for (let round = 0; isInputRequired(result); round++) {
      if (round >= maxRounds)
        throw McpError.internal(`The server still asked for input after ${maxRounds} rounds of ${type.method}; stopped`);
      const { inputRequests, requestState } = result as { inputRequests?: unknown; requestState?: unknown };
      const inputResponses = await answerInputRequests(
        inputRequests,
        this.ctx.options.handlers ?? {},
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
   * One request on the wire, each time with a new id: sent again when its reply stream broke
   * before the answer (such streams cannot be resumed), at most {@link MAX_REPLY_RESENDS} times;
   * and a `tools/call` refused with -32020 (header mismatch) once more after `tools/list`, in case
   * the tool's `x-mcp-header` annotations changed.
   */
  private async sendOnce<P, R>(type: AnyClientRequest<P, R>, params: P, options?: RequestOptions): Promise<R> {
    const { connection, transport } = this.ctx;
    let headersRefreshed = false;
    for (let resends = 0; ; resends++) {
      try {
        return await connection.request(type, params, options);
      } catch (error) {
        const e = McpError.from(error);
        if (options?.signal?.aborted || connection.isClosed) throw e;
        if (e.kind?.type === 'replyLost' && resends < MAX_REPLY_RESENDS) {
          this.ctx.log('info', `${e.message}; sending ${type.method} again`);
          continue;
        }
        if (e.code === ErrorCode.HeaderMismatch && type.method === 'tools/call' && !headersRefreshed && transport.setMessageHeaders) {
          headersRefreshed = true;
          this.ctx.log('info', `${e.message}; reading tools/list again for the tool's headers, then sending ${type.method} again`);
          // Past the cache: the point is to see the annotations as they are now.
          await this.ctx.listTools({ ...options, fresh: true });
          continue;
        }
        throw e;
      }
    }
  }

  /**
   * A cacheable request: a fresh cached answer if there is one (unless `fresh`), else the
   * server's, kept for its `ttlMs`. An answer that took `input_required` rounds was made for the
   * inputs of that exchange and is never kept.
   */
  private async cachedRequest<P, R>(
    cache: ResultCache,
    type: AnyClientRequest<P, R>,
    params: P,
    options?: CachingRequestOptions,
  ): Promise<R> {
    if (!options?.fresh) {
      const hit = cache.get(type.method, params);
      if (hit !== undefined) return hit as R;
    }
    const ticket = cache.ticket(type.method, params);
    const exchange = { retried: false };
    const result = await this.request(type, params, options, exchange);
    if (!exchange.retried) cache.store(ticket, result);
    return result;
  }

  /** Results carry the server's info in `_meta`; the latest one is what we show. */
  private noteServerInfo(result: unknown): void {
    const info = serverInfoOf(result);
    if (info) this.result.serverInfo = info;
  }
}

/**
 * The standard headers of 2026-07-28 for each request: `MCP-Protocol-Version`, `Mcp-Method`,
 * `Mcp-Name` (the param its method names, see `namedBy` in protocol/methods.ts), and for a
 * `tools/call` the `Mcp-Param-*` copies of the tool's annotated arguments. Notifications get none.
 */
export function standardHeaders(version: ModernProtocolVersion, tools: ReadonlyMap<string, Tool>): MessageHeaderSource {
  return ({ kind, method, params }) => {
    if (kind !== 'request') return undefined;
    const headers: Record<string, string> = { 'MCP-Protocol-Version': version, 'Mcp-Method': method };
    const namedBy = traitsOf(method)?.namedBy;
    const name = namedBy && params?.[namedBy];
    if (typeof name === 'string') headers['Mcp-Name'] = headerValue(name);
    if (method === ClientRequests.callTool.method)
      Object.assign(headers, headerParamsOf(tools.get(params?.name as string), params?.arguments));
    return headers;
  };
}

/** What every request carries in `_meta`: the version, our capabilities, who we are. */
function statelessMeta(ctx: SessionContext, version: ModernProtocolVersion): Meta {
  // Tasks moved to an extension and roots/list_changed is gone in 2026-07-28.
  const { tasks: _tasks, ...capabilities } = ctx.capabilities;
  if (capabilities.roots) capabilities.roots = {};
  return {
    [MetaKeys.protocolVersion]: version,
    [MetaKeys.clientCapabilities]: capabilities,
    [MetaKeys.clientInfo]: ctx.options.clientInfo ?? DEFAULT_CLIENT_INFO,
  };
}

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
