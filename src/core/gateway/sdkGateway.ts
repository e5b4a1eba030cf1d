/**
 * The gateway VS Code's own MCP client talks to, in the extension host, two ways in:
 * - the relays (./relay.ts), stdio servers VS Code starts, each piping one chat session to the
 *   relay listener (./relaySession.ts: its first line carries the token and the server's id);
 * - one Node `http` server with one route per shared server (`/mcp/<id>`), every request carrying
 *   the window's bearer token; one without it is refused with a JSON-RPC error and HTTP 400, never
 *   401/403 (VS Code's client would start OAuth discovery on those).
 * Both listen on a Unix domain socket / Windows named pipe when they can, else 127.0.0.1 on a
 * random port. Each session is the official SDK's low-level `Server`, whose handlers only forward
 * to a `ChatForwarder`, over our own framings: the stdio one for a relay (./relaySession.ts) and
 * Streamable HTTP for HTTP (./httpSession.ts); why they are not the SDK's transports is written there.
 * On a relay's session, tools/call (the chat's call, the one that is timed) is answered by the same
 * forwarder without the SDK's schema checks (`relayToolCalls`).
 *
 * This module and the SDK are bundled apart (dist/gateway.js) and loaded on the first share.
 */
import { randomUUID } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as path from 'node:path';
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
  SUPPORTED_PROTOCOL_VERSIONS,
  UnsubscribeRequestSchema,
  type JSONRPCMessage,
  type ServerCapabilities,
} from '@modelcontextprotocol/sdk/types.js';
import type { Disposable } from 'vscode-jsonrpc/node';
import { REQUEST_CANCELLED } from '../jsonrpc/connection';
import { classifyMessage, isId, isObject } from '../protocol/classify';
import { ErrorCode, McpError } from '../protocol/errors';
import type { CompleteParams, RequestId } from '../protocol/types';
import { chatCaller, type ChatForwarder, type ForwardOptions } from './forward';
import { GatewayHttpSession, refuse as refuseWith } from './httpSession';
import { acceptRelay, tokenMatches, type RelayTransport, type RelayVerdict } from './relaySession';

/**
 * JSON-RPC code of a request the gateway itself refuses (no token, a server not shared, no
 * session): Invalid Request. A session that ended gets Connection Closed (-32000), whose meaning
 * that is; Request Timeout (-32001) stays the code of a server that did not run again in time.
 */
export const GATEWAY_REFUSED = ErrorCode.InvalidRequest;
/** The largest request body the gateway reads. */
const MAX_BODY_BYTES = 16 * 1024 * 1024;

export type GatewayAddress = { kind: 'socket'; path: string } | { kind: 'tcp'; host: '127.0.0.1'; port: number };

export interface GatewayOptions {
  /** Bearer token every request must carry (`Authorization: Bearer …`). */
  token: string;
  /** A socket path or pipe name to listen on; 127.0.0.1 on a random port when absent or when it cannot be used. */
  socketPath?: string;
  /** The same for the relays' listener (./relay.ts); it must differ from `socketPath`. */
  relaySocketPath?: string;
  /** The forwarder of a route's server, or undefined when that server is not shared (any more). */
  forwarderFor(id: string): ChatForwarder | undefined;
}

interface Session {
  id: string;
  serverId: string;
  transport: GatewayHttpSession | RelayTransport;
  server: Server;
  subscriptions: Map<string, Disposable>;
  listeners: Disposable[];
}

export class ChatGateway {
  private readonly sessions = new Map<string, Session>();
  private readonly token: Buffer;
  private readonly relayToken: Buffer;

  private constructor(
    private readonly http: http.Server,
    readonly address: GatewayAddress,
    private readonly relays: net.Server,
    /** Where the relays VS Code starts connect (./relay.ts). */
    readonly relayAddress: GatewayAddress,
    private readonly options: GatewayOptions,
  ) {
    this.token = Buffer.from(`Bearer ${options.token}`);
    this.relayToken = Buffer.from(options.token);
  }

  /** Listens on the sockets when they are given and usable, else on 127.0.0.1. */
  static async start(options: GatewayOptions): Promise<ChatGateway> {
    const server = http.createServer();
    server.keepAliveTimeout = 60_000;
    const relays = net.createServer();
    const address = await listenOn(server, options.socketPath);
    const relayAddress = await listenOn(relays, options.relaySocketPath);
    const gateway = new ChatGateway(server, address, relays, relayAddress, options);
    // Nobody can reach it before this: the addresses and the token are not handed out yet.
    server.on('request', (req, res) => void gateway.handle(req, res));
    relays.on('connection', (socket) =>
      acceptRelay(
        socket,
        (hello) => gateway.checkRelay(hello),
        (serverId, transport) => gateway.openRelaySession(serverId, transport),
      ),
    );
    return gateway;
  }

  /** How a relay is told where to connect (MCP_HOST_GATEWAY). */
  static relayTarget(address: GatewayAddress): string {
    return address.kind === 'socket' ? address.path : `127.0.0.1:${address.port}`;
  }

  /** The HTTP path of a shared server's route. */
  static pathOf(id: string): string {
    return `/mcp/${encodeURIComponent(id)}`;
  }

  /** The sessions open now, per server id and way in (tests look). */
  sessionCount(serverId?: string, via?: 'relay' | 'http'): number {
    return [...this.sessions.values()].filter(
      (s) =>
        (serverId === undefined || s.serverId === serverId) &&
        (via === undefined || (s.transport instanceof GatewayHttpSession ? 'http' : 'relay') === via),
    ).length;
  }

  /** How many of a session's requests wait for their answer (tests look; HTTP sessions only). */
  waitingIn(sessionId: string): number {
    const transport = this.sessions.get(sessionId)?.transport;
    return transport instanceof GatewayHttpSession ? transport.waiting : 0;
  }

  /** Ends every session of a server (sharing stopped, its settings changed): the chat's next request starts a new one. */
  async closeSessions(serverId: string): Promise<void> {
    await Promise.all([...this.sessions.values()].filter((s) => s.serverId === serverId).map((s) => this.endSession(s)));
  }

  async close(): Promise<void> {
    await Promise.all([...this.sessions.values()].map((s) => this.endSession(s)));
    await Promise.all([
      new Promise<void>((resolve) => {
        this.http.close(() => resolve());
        this.http.closeAllConnections();
      }),
      new Promise<void>((resolve) => this.relays.close(() => resolve())),
    ]);
  }

  private checkRelay(hello: { token?: unknown; server?: unknown } | undefined): RelayVerdict {
    if (!hello || !tokenMatches(hello.token, this.relayToken))
      return { ok: false, reason: 'MCP Host gateway: this relay has no valid token for this window' };
    if (typeof hello.server !== 'string' || !this.options.forwarderFor(hello.server))
      return { ok: false, reason: 'MCP Host gateway: this server is not shared with the chat' };
    return { ok: true, serverId: hello.server };
  }

  private async openRelaySession(serverId: string, transport: RelayTransport): Promise<void> {
    const forwarder = this.options.forwarderFor(serverId);
    if (!forwarder) throw McpError.invalidRequest('this server is not shared with the chat');
    await this.openSession(serverId, forwarder, transport, randomUUID());
  }

  private hasToken(req: http.IncomingMessage): boolean {
    return tokenMatches(req.headers.authorization, this.token);
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    try {
      if (!this.hasToken(req)) return refuse(res, 'MCP Host gateway: this request has no valid token for this window');
      const route = /^\/mcp\/([^/?#]+)(?:[?#].*)?$/.exec(req.url ?? '');
      const serverId = route ? safeDecode(route[1]) : undefined;
      const forwarder = serverId === undefined ? undefined : this.options.forwarderFor(serverId);
      if (serverId === undefined || !forwarder) return refuse(res, 'MCP Host gateway: this server is not shared with the chat');
      const version = req.headers['mcp-protocol-version'];
      if (typeof version === 'string' && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
        return refuse(res, `MCP Host gateway: protocol version ${version} is not supported`);
      }
      const sessionId = req.headers['mcp-session-id'];
      if (typeof sessionId === 'string') {
        const session = this.sessions.get(sessionId);
        // A relay's session is not reachable over HTTP.
        if (!session || session.serverId !== serverId || !(session.transport instanceof GatewayHttpSession)) {
          // The spec's answer to an ended session: the client starts a new one.
          return refuseWith(res, 404, ErrorCode.ConnectionClosed, 'Session ended');
        }
        const { transport } = session;
        if (req.method === 'POST') return transport.handlePost(req, res, await readJson(req));
        if (req.method === 'GET') return transport.handleGet(req, res);
        if (req.method === 'DELETE') {
          await this.endSession(session);
          res.writeHead(200).end();
          return;
        }
        return refuseWith(res, 405, ErrorCode.InvalidRequest, `${req.method} is not a method of this endpoint`);
      }
      if (req.method !== 'POST') return refuse(res, 'MCP Host gateway: this request has no session (initialize first)');
      const body = await readJson(req);
      if ((body as { method?: unknown } | null)?.method !== 'initialize') {
        return refuse(res, 'MCP Host gateway: this request has no session (initialize first)');
      }
      const transport = new GatewayHttpSession(randomUUID());
      await this.openSession(serverId, forwarder, transport, transport.sessionId);
      transport.handlePost(req, res, body);
    } catch (error) {
      if (!res.headersSent) refuse(res, `MCP Host gateway: ${McpError.from(error).message}`);
      else res.end();
    }
  }

  private async openSession(
    serverId: string,
    forwarder: ChatForwarder,
    transport: GatewayHttpSession | RelayTransport,
    id: string,
  ): Promise<Session> {
    const capabilities = capabilitiesFor(forwarder);
    // VS Code names the tools after the server's title or name (`mcp_<name>_<tool>`): the person's name for the server, as in both lists.
    const { handle } = forwarder.shared;
    const server = new Server({ name: handle.name, version: handle.client?.serverInfo?.version ?? '0.0.0' }, { capabilities });
    const opened: Session = { id, serverId, transport, server, subscriptions: new Map(), listeners: [] };
    this.sessions.set(opened.id, opened);
    transport.onclose = () => void this.endSession(opened);
    wireHandlers(server, capabilities, forwarder, opened);
    if (capabilities.tools && !(transport instanceof GatewayHttpSession)) {
      const calls = relayToolCalls(forwarder, transport, () => server.getClientVersion());
      transport.intercept = calls.intercept;
      opened.listeners.push(calls);
    }
    opened.listeners.push(
      handle.onDidChangeLists((kind) => {
        const send =
          kind === 'tools'
            ? () => server.sendToolListChanged()
            : kind === 'prompts'
              ? () => server.sendPromptListChanged()
              : () => server.sendResourceListChanged();
        send().catch(() => undefined);
      }),
      forwarder.onListStale((list) => {
        if (list === 'tools' && capabilities.tools) void server.sendToolListChanged().catch(() => undefined);
        if (list === 'prompts' && capabilities.prompts) void server.sendPromptListChanged().catch(() => undefined);
      }),
      handle.onResourceUpdated((uri) => {
        if (opened.subscriptions.has(uri)) server.sendResourceUpdated({ uri }).catch(() => undefined);
      }),
    );
    await server.connect(transport);
    return opened;
  }

  private async endSession(session: Session): Promise<void> {
    this.sessions.delete(session.id);
    for (const d of session.listeners.splice(0)) d.dispose();
    for (const d of session.subscriptions.values()) d.dispose();
    session.subscriptions.clear();
    await session.server.close().catch(() => undefined);
  }
}

/** What the gateway declares: the running upstream's capabilities as far as we forward them, all of them while it is down. */
function capabilitiesFor(forwarder: ChatForwarder): ServerCapabilities {
  const upstream = forwarder.shared.handle.client?.serverCapabilities;
  const all = !upstream;
  const caps: ServerCapabilities = {};
  if (all || upstream.tools) caps.tools = { listChanged: true };
  if (all || upstream.resources) caps.resources = { listChanged: true, subscribe: true };
  if (all || upstream.prompts) caps.prompts = { listChanged: true };
  if (all || upstream.completions) caps.completions = {};
  return caps;
}

function wireHandlers(server: Server, caps: ServerCapabilities, forwarder: ChatForwarder, session: Session): void {
  type Extra = { signal: AbortSignal; _meta?: Record<string, unknown>; sendNotification: (n: never) => Promise<void> };
  const optionsOf = (extra: Extra): ForwardOptions => {
    const token = extra._meta?.progressToken as string | number | undefined;
    return {
      signal: extra.signal,
      caller: chatCaller(extra._meta, server.getClientVersion()),
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
      wire(async (_p, extra) => ({ tools: (await forwarder.listTools({ signal: extra.signal })) as never })),
    );
    server.setRequestHandler(
      CallToolRequestSchema,
      wire(
        async (p: { name: string; arguments?: Record<string, unknown> }, extra) =>
          (await forwarder.callTool(p.name, p.arguments ?? {}, optionsOf(extra))) as never,
      ),
    );
  }
  if (caps.resources) {
    server.setRequestHandler(
      ListResourcesRequestSchema,
      wire(async (_p, extra) => ({ resources: (await forwarder.listResources({ signal: extra.signal })) as never })),
    );
    server.setRequestHandler(
      ListResourceTemplatesRequestSchema,
      wire(async (_p, extra) => ({ resourceTemplates: (await forwarder.listResourceTemplates({ signal: extra.signal })) as never })),
    );
    server.setRequestHandler(
      ReadResourceRequestSchema,
      wire(async (p: { uri: string }, extra) => (await forwarder.readResource(p.uri, optionsOf(extra))) as never),
    );
    server.setRequestHandler(
      SubscribeRequestSchema,
      wire(async (p: { uri: string }, extra) => {
        if (!session.subscriptions.has(p.uri)) session.subscriptions.set(p.uri, await forwarder.subscribe(p.uri, optionsOf(extra)));
        return {};
      }),
    );
    server.setRequestHandler(
      UnsubscribeRequestSchema,
      wire(async (p: { uri: string }) => {
        session.subscriptions.get(p.uri)?.dispose();
        session.subscriptions.delete(p.uri);
        return {};
      }),
    );
  }
  if (caps.prompts) {
    server.setRequestHandler(
      ListPromptsRequestSchema,
      wire(async (_p, extra) => ({ prompts: (await forwarder.listPrompts({ signal: extra.signal })) as never })),
    );
    server.setRequestHandler(
      GetPromptRequestSchema,
      wire(
        async (p: { name: string; arguments?: Record<string, string> }, extra) =>
          (await forwarder.getPrompt(p.name, p.arguments ?? {}, optionsOf(extra))) as never,
      ),
    );
  }
  if (caps.completions) {
    server.setRequestHandler(
      CompleteRequestSchema,
      wire(async (p: CompleteParams, extra) => (await forwarder.complete(p, optionsOf(extra))) as never),
    );
  }
}

/** The gateway's socket files (./chatSharing names them `gw-<hex>.sock` and `gw-<hex>-relay.sock`). */
const GATEWAY_SOCKET = /^gw-[0-9a-f]+(?:-relay)?\.sock$/;

/**
 * Removes the gateway socket files in `dir` nobody listens on any more: a window that ended
 * cleanly removed its own, one whose extension host crashed left them behind. A socket another
 * open window listens on answers, and stays. Returns how many were removed.
 */
export async function removeStaleSockets(dir: string): Promise<number> {
  if (process.platform === 'win32') return 0;
  const names = await fs.readdir(dir).catch(() => [] as string[]);
  const removed = await Promise.all(
    names
      .filter((name) => GATEWAY_SOCKET.test(name))
      .map(async (name) => {
        const file = path.join(dir, name);
        if (!(await refusesConnections(file))) return false;
        return fs.unlink(file).then(
          () => true,
          () => false,
        );
      }),
  );
  return removed.filter(Boolean).length;
}

/** Whether a socket file is there with nobody listening on it (ECONNREFUSED); anything else counts as alive. */
function refusesConnections(file: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ path: file });
    const done = (refused: boolean): void => {
      socket.destroy();
      resolve(refused);
    };
    socket.once('connect', () => done(false));
    socket.once('error', (error: NodeJS.ErrnoException) => done(error.code === 'ECONNREFUSED'));
    socket.setTimeout(2000, () => done(false));
  });
}

const MALFORMED_CALL = 'tools/call needs params with a string "name" and, if any, object "arguments"';

/**
 * A relay session's tools/call, answered by the forwarder without the SDK's server: the SDK checks
 * every message against its schemas (whether it is a response, an error, a request; then the
 * request's own; then the result's), the largest part of the gateway's own work on a chat call in
 * VS Code's extension host (bench/chat-vscode.mjs profiles it). The same forwarder and the same
 * answers as the SDK's handler (`wireHandlers`): progress to the chat's token, no answer once the
 * chat cancelled it, an error as `{ code, message }`. A tools/call whose params are not a tool
 * call's is refused here as Invalid Params; one that asks for a task, or reuses an id still in
 * flight, is left to the SDK, which answers it as before; so is every other message. Disposing
 * aborts what is in flight.
 */
function relayToolCalls(
  forwarder: ChatForwarder,
  transport: RelayTransport,
  clientInfo: () => { name?: unknown; version?: unknown } | undefined,
): Disposable & { intercept(message: JSONRPCMessage): boolean } {
  const inFlight = new Map<RequestId, AbortController>();
  const intercept = (message: JSONRPCMessage): boolean => {
    const m = classifyMessage(message);
    if (m.kind === 'notification' && m.method === 'notifications/cancelled') {
      const requestId = isObject(m.params) ? m.params.requestId : undefined;
      const controller = isId(requestId) ? inFlight.get(requestId) : undefined;
      if (!controller) return false;
      controller.abort(new McpError(REQUEST_CANCELLED, 'cancelled by the chat'));
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
    forwarder
      .callTool(params.name, (params.arguments as Record<string, unknown> | undefined) ?? {}, {
        signal: controller.signal,
        caller: chatCaller(params._meta, clientInfo()),
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
      for (const controller of inFlight.values()) controller.abort(new McpError(REQUEST_CANCELLED, 'the chat’s session ended'));
      inFlight.clear();
    },
  };
}

/** The chat conversation VS Code names on a call (`_meta["vscode.conversationId"]`): the flow guard's session. */
/** Listens on the socket when one is given and usable, else on 127.0.0.1 on a random port. */
async function listenOn(server: net.Server, socketPath: string | undefined): Promise<GatewayAddress> {
  if (socketPath) {
    const listening = await listen(server, { path: socketPath }).then(
      () => true,
      () => false,
    );
    if (listening) return { kind: 'socket', path: socketPath };
  }
  await listen(server, { host: '127.0.0.1', port: 0 });
  return { kind: 'tcp', host: '127.0.0.1', port: (server.address() as net.AddressInfo).port };
}

function listen(server: net.Server, at: { path: string } | { host: string; port: number }): Promise<void> {
  return new Promise((resolve, reject) => {
    const failed = (error: Error): void => reject(error);
    server.once('error', failed);
    server.listen(at, () => {
      server.off('error', failed);
      resolve();
    });
  });
}

function refuse(res: http.ServerResponse, message: string): void {
  refuseWith(res, 400, GATEWAY_REFUSED, message);
}

function safeDecode(part: string): string | undefined {
  try {
    return decodeURIComponent(part);
  } catch {
    return undefined;
  }
}

async function readJson(req: http.IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw McpError.invalidRequest(`the request is larger than ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw McpError.parseError('the request body is not JSON');
  }
}
