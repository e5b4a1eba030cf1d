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
import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import { GateSession } from '../policy/session';
import { ErrorCode, McpError } from '../protocol/errors';
import { Catalog } from './catalog';
import type { Forwarder } from './forward';
import { GatewayHttpSession, refuse as refuseWith } from './httpSession';
import { acceptRelay, tokenMatches, type RelayHelloCheck, type RelayTransport, type RelayVerdict } from './relaySession';
import { openWireSession, type WireSession } from './wire';

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
  forwarderFor(id: string): Forwarder | undefined;
  /**
   * Agents (./agentRelay.ts): the token their relays carry (another than the chat's, since it is
   * written to a file of the person's), and the servers an agent's configuration entry is given
   * (`via`: `claude-user`, `mcp-json`, …), or undefined when that entry is not connected.
   */
  agents?: {
    token: string;
    catalogFor(via: string): Catalog | undefined;
    /** Told when an agent's session opens and ends (the Servers view lists them). */
    onSession?(session: GateSession, open: boolean): void;
  };
}

interface Session {
  id: string;
  /** The shared server's id for the chat; the configuration entry's for an agent. */
  serverId: string;
  origin: 'chat' | 'agent';
  transport: GatewayHttpSession | RelayTransport;
  wire: WireSession;
}

export class ChatGateway {
  private readonly sessions = new Map<string, Session>();
  private readonly token: Buffer;
  private readonly relayToken: Buffer;
  private readonly agentToken: Buffer | undefined;

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
    this.agentToken = options.agents && Buffer.from(options.agents.token);
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
        (verdict, transport) => gateway.openRelaySession(verdict, transport),
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
        s.origin === 'chat' &&
        (serverId === undefined || s.serverId === serverId) &&
        (via === undefined || (s.transport instanceof GatewayHttpSession ? 'http' : 'relay') === via),
    ).length;
  }

  /** The agents' sessions open now (the Servers view lists them with their clients). */
  agentSessions(): GateSession[] {
    return [...this.sessions.values()].filter((s) => s.origin === 'agent' && s.wire !== undefined).map((s) => s.wire.session);
  }

  /** Ends the sessions of an agent's configuration entry (it was disconnected, or given other servers). */
  async closeAgentSessions(via: string): Promise<void> {
    await Promise.all([...this.sessions.values()].filter((s) => s.origin === 'agent' && s.serverId === via).map((s) => this.endSession(s)));
  }

  /** How many of a session's requests wait for their answer (tests look; HTTP sessions only). */
  waitingIn(sessionId: string): number {
    const transport = this.sessions.get(sessionId)?.transport;
    return transport instanceof GatewayHttpSession ? transport.waiting : 0;
  }

  /** Ends every session of a server (sharing stopped, its settings changed): the chat's next request starts a new one. */
  async closeSessions(serverId: string): Promise<void> {
    await Promise.all(
      [...this.sessions.values()].filter((s) => s.origin === 'chat' && s.serverId === serverId).map((s) => this.endSession(s)),
    );
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

  private checkRelay(hello: RelayHelloCheck | undefined): RelayVerdict {
    if (hello && typeof hello.agent === 'string') {
      if (!this.agentToken || !tokenMatches(hello.token, this.agentToken))
        return { ok: false, reason: 'MCP Host gateway: this agent relay has no valid token for this window' };
      if (!this.options.agents?.catalogFor(hello.agent))
        return {
          ok: false,
          reason: `MCP Host gateway: no agent is connected through "${hello.agent}" in this window (MCP Host: Connect an Agent…)`,
        };
      return { ok: true, kind: 'agent', id: hello.agent };
    }
    if (!hello || !tokenMatches(hello.token, this.relayToken))
      return { ok: false, reason: 'MCP Host gateway: this relay has no valid token for this window' };
    if (typeof hello.server !== 'string' || !this.options.forwarderFor(hello.server))
      return { ok: false, reason: 'MCP Host gateway: this server is not shared with the chat' };
    return { ok: true, kind: 'chat', id: hello.server };
  }

  private async openRelaySession(verdict: Extract<RelayVerdict, { ok: true }>, transport: RelayTransport): Promise<void> {
    if (verdict.kind === 'agent') {
      const catalog = this.options.agents?.catalogFor(verdict.id);
      if (!catalog) throw McpError.invalidRequest('this agent is not connected');
      const session = new GateSession('agent', verdict.id);
      await this.openSession(verdict.id, catalog, transport, session, { name: 'mcp-host', version: '1.0.0' });
      return;
    }
    const forwarder = this.options.forwarderFor(verdict.id);
    if (!forwarder) throw McpError.invalidRequest('this server is not shared with the chat');
    await this.openChatSession(verdict.id, forwarder, transport, randomUUID());
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
      await this.openChatSession(serverId, forwarder, transport, transport.sessionId);
      transport.handlePost(req, res, body);
    } catch (error) {
      if (!res.headersSent) refuse(res, `MCP Host gateway: ${McpError.from(error).message}`);
      else res.end();
    }
  }

  private openChatSession(
    serverId: string,
    forwarder: Forwarder,
    transport: GatewayHttpSession | RelayTransport,
    id: string,
  ): Promise<Session> {
    // VS Code names the tools after the server's title or name (`mcp_<name>_<tool>`): the person's name for the server, as in both lists.
    const { handle } = forwarder.shared;
    return this.openSession(
      serverId,
      new Catalog([{ name: handle.name, forwarder }]),
      transport,
      new GateSession('chat', serverId, { id }),
      {
        name: handle.name,
        version: handle.client?.serverInfo?.version ?? '0.0.0',
      },
    );
  }

  private async openSession(
    serverId: string,
    catalog: Catalog,
    transport: GatewayHttpSession | RelayTransport,
    session: GateSession,
    serverInfo: { name: string; version: string },
  ): Promise<Session> {
    const agent = session.origin === 'agent';
    const opened: Partial<Session> = { id: session.id, serverId, origin: session.origin, transport };
    this.sessions.set(session.id, opened as Session);
    const wire = await openWireSession(
      {
        catalog,
        transport,
        session,
        serverInfo,
        forwardLogs: agent,
        // A relay's tools/call (the chat's call, the one that is timed) is answered without the SDK's schema checks.
        fastToolCalls: !(transport instanceof GatewayHttpSession),
      },
      () => void this.endSession(opened as Session),
    ).catch((error: unknown) => {
      this.sessions.delete(session.id);
      throw error;
    });
    opened.wire = wire;
    if (agent) {
      this.options.agents?.onSession?.(session, true);
      session.onDidEnd(() => this.options.agents?.onSession?.(session, false));
    }
    return opened as Session;
  }

  private async endSession(session: Session): Promise<void> {
    this.sessions.delete(session.id);
    await session.wire?.close();
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
