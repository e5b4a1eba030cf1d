/**
 * One gateway session on the wire: the official SDK's low-level `Server` over one transport (a
 * relay's socket, an HTTP session, `mcp-host serve`'s own stdin and stdout), whose handlers only
 * forward to a `Catalog` (./catalog.ts: one server for the chat, several for an agent), each request
 * with the session's `GateSession` (../policy/session.ts), which learns the client's name and
 * version from its `initialize`. The chat's gateway (./sdkGateway.ts), the agents' sessions of the
 * same gateway and `serve` (src/cli/serve.ts) all open their sessions here: one forwarding path.
 * On a stdio-framed transport, tools/call is answered without the SDK's schema checks
 * (`fastToolCalls`): they were the largest part of the gateway's own work on a call.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  CompleteRequestSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError as SdkError,
  ReadResourceRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
  type JSONRPCMessage,
  type ServerCapabilities,
} from '@modelcontextprotocol/sdk/types.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { Disposable } from 'vscode-jsonrpc/node';
import { REQUEST_CANCELLED } from '../jsonrpc/connection';
import type { GateSession } from '../policy/session';
import { classifyMessage, isId, isObject } from '../protocol/classify';
import { ErrorCode, McpError } from '../protocol/errors';
import type { CompleteParams, RequestId } from '../protocol/types';
import type { Catalog } from './catalog';
import { callerOf, type ForwardOptions } from './forward';

/** A transport whose messages the session may see first (./relaySession.ts's `RelayTransport`). */
interface InterceptingTransport extends Transport {
  intercept?: (message: JSONRPCMessage) => boolean;
}

export interface WireOptions {
  catalog: Catalog;
  transport: Transport;
  session: GateSession;
  /** How the session names itself to the client (VS Code names the chat's tools after it). */
  serverInfo: { name: string; version: string };
  /** Whether the servers' own log messages go to the client (`logging` declared): an agent's session. */
  forwardLogs?: boolean;
  /** Whether tools/call skips the SDK's schema checks (a stdio-framed transport that sees messages first). */
  fastToolCalls?: boolean;
  /** More of the server's capabilities (serve's roots, sampling); the SDK's handlers for them are the caller's. */
  configure?(server: Server): void;
  /** The client's `notifications/initialized` came (serve then asks it for its roots). */
  onInitialized?(server: Server): void;
}

/** One open session: its SDK server, closed with it. */
export class WireSession {
  private readonly listeners: Disposable[] = [];
  private readonly subscriptions = new Map<string, Disposable>();
  private closed = false;

  constructor(
    readonly server: Server,
    readonly session: GateSession,
  ) {}

  /** @internal */
  hold(...disposables: Disposable[]): void {
    this.listeners.push(...disposables);
  }

  /** @internal */
  get subscribed(): Map<string, Disposable> {
    return this.subscriptions;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const d of this.listeners.splice(0)) d.dispose();
    for (const d of this.subscriptions.values()) d.dispose();
    this.subscriptions.clear();
    this.session.end();
    await this.server.close().catch(() => undefined);
  }
}

/** Opens a session on `transport`; `onClose` is told when the transport closes (the client went, or the session was closed). */
export async function openWireSession(options: WireOptions, onClose: () => void): Promise<WireSession> {
  const { catalog, session } = options;
  const capabilities = capabilitiesFor(catalog, options.forwardLogs === true);
  const server = new Server(options.serverInfo, { capabilities });
  const opened = new WireSession(server, session);
  server.oninitialized = () => {
    const client = server.getClientVersion();
    if (client) session.client = { name: client.name, version: client.version };
    options.onInitialized?.(server);
  };
  options.configure?.(server);
  options.transport.onclose = () => {
    onClose();
    void opened.close();
  };
  wireHandlers(server, capabilities, catalog, opened);
  const transport = options.transport as InterceptingTransport;
  if (capabilities.tools && options.fastToolCalls) {
    const calls = fastToolCalls(catalog, transport, session);
    transport.intercept = calls.intercept;
    opened.hold(calls);
  }
  opened.hold(
    catalog.onListChanged((list) => {
      const send =
        list === 'tools'
          ? () => server.sendToolListChanged()
          : list === 'prompts'
            ? () => server.sendPromptListChanged()
            : () => server.sendResourceListChanged();
      if (capabilities[list]) send().catch(() => undefined);
    }),
    catalog.onResourceUpdated((uri) => {
      if (opened.subscribed.has(uri)) server.sendResourceUpdated({ uri }).catch(() => undefined);
    }),
  );
  if (capabilities.logging) opened.hold(catalog.onLogMessage((message) => void server.sendLoggingMessage(message).catch(() => undefined)));
  await server.connect(options.transport);
  return opened;
}

/** What a session declares: the running upstreams' capabilities as far as we forward them, all of them while one is down. */
function capabilitiesFor(catalog: Catalog, logging: boolean): ServerCapabilities {
  const has = catalog.capabilities();
  const caps: ServerCapabilities = {};
  if (has.tools) caps.tools = { listChanged: true };
  if (has.resources) caps.resources = { listChanged: true, subscribe: true };
  if (has.prompts) caps.prompts = { listChanged: true };
  if (has.completions) caps.completions = {};
  if (logging) caps.logging = {};
  return caps;
}

type Extra = { signal: AbortSignal; _meta?: Record<string, unknown>; sendNotification: (n: never) => Promise<void> };

function wireHandlers(server: Server, caps: ServerCapabilities, catalog: Catalog, opened: WireSession): void {
  const { session } = opened;
  const optionsOf = (extra: Extra): ForwardOptions => {
    const token = extra._meta?.progressToken as string | number | undefined;
    return {
      signal: extra.signal,
      session,
      caller: callerOf(extra._meta, session.client),
      onProgress:
        token === undefined
          ? undefined
          : (p) =>
              void extra
                .sendNotification({ method: 'notifications/progress', params: { progressToken: token, ...p } } as never)
                .catch(() => undefined),
    };
  };
  // Our errors keep their code and message on the wire.
  const wire =
    <P, R>(run: (params: P, extra: Extra) => Promise<R>) =>
    async (request: { params?: P }, extra: Extra): Promise<R> => {
      try {
        return await run((request.params ?? {}) as P, extra);
      } catch (error) {
        const e = McpError.from(error);
        throw new SdkError(e.code, e.message);
      }
    };
  if (caps.tools) {
    server.setRequestHandler(
      ListToolsRequestSchema,
      wire(async (_p, extra) => ({ tools: (await catalog.listTools({ signal: extra.signal })) as never })),
    );
    server.setRequestHandler(
      CallToolRequestSchema,
      wire(
        async (p: { name: string; arguments?: Record<string, unknown> }, extra) =>
          (await catalog.callTool(p.name, p.arguments ?? {}, optionsOf(extra))) as never,
      ),
    );
  }
  if (caps.resources) {
    server.setRequestHandler(
      ListResourcesRequestSchema,
      wire(async (_p, extra) => ({ resources: (await catalog.listResources({ signal: extra.signal })) as never })),
    );
    server.setRequestHandler(
      ListResourceTemplatesRequestSchema,
      wire(async (_p, extra) => ({ resourceTemplates: (await catalog.listResourceTemplates({ signal: extra.signal })) as never })),
    );
    server.setRequestHandler(
      ReadResourceRequestSchema,
      wire(async (p: { uri: string }, extra) => (await catalog.readResource(p.uri, optionsOf(extra))) as never),
    );
    server.setRequestHandler(
      SubscribeRequestSchema,
      wire(async (p: { uri: string }, extra) => {
        if (!opened.subscribed.has(p.uri)) opened.subscribed.set(p.uri, await catalog.subscribe(p.uri, optionsOf(extra)));
        return {};
      }),
    );
    server.setRequestHandler(
      UnsubscribeRequestSchema,
      wire(async (p: { uri: string }) => {
        opened.subscribed.get(p.uri)?.dispose();
        opened.subscribed.delete(p.uri);
        return {};
      }),
    );
  }
  if (caps.prompts) {
    server.setRequestHandler(
      ListPromptsRequestSchema,
      wire(async (_p, extra) => ({ prompts: (await catalog.listPrompts({ signal: extra.signal })) as never })),
    );
    server.setRequestHandler(
      GetPromptRequestSchema,
      wire(
        async (p: { name: string; arguments?: Record<string, string> }, extra) =>
          (await catalog.getPrompt(p.name, p.arguments ?? {}, optionsOf(extra))) as never,
      ),
    );
  }
  if (caps.completions) {
    server.setRequestHandler(
      CompleteRequestSchema,
      wire(async (p: CompleteParams, extra) => (await catalog.complete(p, optionsOf(extra))) as never),
    );
  }
}

const MALFORMED_CALL = 'tools/call needs params with a string "name" and, if any, object "arguments"';

/**
 * A stdio-framed session's tools/call, answered by the catalog without the SDK's server: the SDK
 * checks every message against its schemas (whether it is a response, an error, a request; then the
 * request's own; then the result's), the largest part of the gateway's own work on a chat call in
 * VS Code's extension host (bench/chat-vscode.mjs profiles it). The same catalog and the same
 * answers as the SDK's handler (`wireHandlers`): progress to the client's token, no answer once the
 * client cancelled it, an error as `{ code, message }`. A tools/call whose params are not a tool
 * call's is refused here as Invalid Params; one that asks for a task, or reuses an id still in
 * flight, is left to the SDK, which answers it as before; so is every other message. Disposing
 * aborts what is in flight.
 */
function fastToolCalls(
  catalog: Catalog,
  transport: Transport,
  session: GateSession,
): Disposable & { intercept(message: JSONRPCMessage): boolean } {
  const inFlight = new Map<RequestId, AbortController>();
  const intercept = (message: JSONRPCMessage): boolean => {
    const m = classifyMessage(message);
    if (m.kind === 'notification' && m.method === 'notifications/cancelled') {
      const requestId = isObject(m.params) ? m.params.requestId : undefined;
      const controller = isId(requestId) ? inFlight.get(requestId) : undefined;
      if (!controller) return false;
      controller.abort(new McpError(REQUEST_CANCELLED, 'cancelled by the client'));
      return true;
    }
    if (m.kind !== 'request' || m.method !== 'tools/call' || inFlight.has(m.id)) return false;
    const { id, params } = m;
    // A call that asks for a task is the SDK's (it declares and answers tasks).
    if (isObject(params) && params.task !== undefined) return false;
    if (!isObject(params) || typeof params.name !== 'string' || (params.arguments !== undefined && !isObject(params.arguments))) {
      // Invalid Params, as the spec has it (the SDK's server answers -32603 with its schema's complaint).
      void transport.send({ jsonrpc: '2.0', id, error: { code: ErrorCode.InvalidParams, message: MALFORMED_CALL } } as JSONRPCMessage);
      return true;
    }
    const controller = new AbortController();
    inFlight.set(id, controller);
    const token = isObject(params._meta) && isId(params._meta.progressToken) ? params._meta.progressToken : undefined;
    const answer = (reply: { result: unknown } | { error: { code: number; message: string } }): void => {
      inFlight.delete(id);
      if (!controller.signal.aborted) void transport.send({ jsonrpc: '2.0', id, ...reply } as JSONRPCMessage);
    };
    catalog
      .callTool(params.name, (params.arguments as Record<string, unknown> | undefined) ?? {}, {
        signal: controller.signal,
        session,
        caller: callerOf(params._meta, session.client),
        onProgress:
          token !== undefined
            ? (p) => void transport.send({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: token, ...p } })
            : undefined,
      })
      .then(
        (result) => answer({ result }),
        (error: unknown) => {
          const e = McpError.from(error);
          answer({ error: { code: e.code, message: e.message } });
        },
      );
    return true;
  };
  return {
    intercept,
    dispose: () => {
      for (const controller of inFlight.values()) controller.abort(new McpError(REQUEST_CANCELLED, 'the session ended'));
      inFlight.clear();
    },
  };
}
