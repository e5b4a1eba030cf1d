import { promises as dns } from 'node:dns';
import * as http from 'node:http';
import * as net from 'node:net';
import { addressAsHost, canonicalHost, isAddressLiteral, isSpecialAddress, judgeHost, type DomainRules } from './domains';

/**
 * The filtering proxy of a sandboxed server with `network.allowedDomains`: HTTP CONNECT (HTTPS and
 * any other TCP) and plain-HTTP forwarding, each judged by the *name* the client asked for. The
 * proxy resolves the name itself, checks every address, and connects to an address it checked,
 * so a name cannot be re-resolved elsewhere in between (DNS rebinding). Loaded only when such a
 * server starts (src/core/servers/sandbox/launcher.ts).
 *
 * Written here rather than taken from a proxy package: the ones on npm connect by name
 * themselves, so none lets the caller check the resolved address and pin the connection to it.
 */

/** Why a connection was refused. */
export type BlockReason =
  /** No allowed entry matches the name. */
  | 'not-allowed'
  /** A denied entry matches the name, or one of its addresses. */
  | 'denied'
  /** Only a `*.suffix` entry allows the name, and it resolves to a loopback or private address. */
  | 'private-address';

export interface BlockedConnection {
  /** The host as asked (canonical where it could be read), and the port. */
  host: string;
  port: number;
  reason: BlockReason;
  /** The address that made it `private-address` or `denied`. */
  address?: string;
}

/** Every address of a name; the default is the system's resolver. */
export type Resolver = (host: string) => Promise<string[]>;

const systemResolver: Resolver = async (host) => (await dns.lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/**
 * How many connections one sandboxed server may have open through its proxy at once (tunnels and
 * plain requests together): more than any client needs, few enough that a server cannot hold the
 * host's sockets and memory. Past it a new connection is closed unanswered.
 */
export const MAX_PROXY_CONNECTIONS = 64;

export interface ProxyOptions {
  rules: DomainRules;
  /** A Unix socket path (Linux: bind-mounted into the sandbox), or 0 for a free port on 127.0.0.1 (macOS). */
  listen: { path: string } | { port: 0 };
  onBlocked(blocked: BlockedConnection): void;
  resolve?: Resolver;
}

export interface RunningProxy {
  /** The TCP port on 127.0.0.1, when it listens on one. */
  port: number | undefined;
  close(): Promise<void>;
}

type Verdict = { ok: true; addresses: string[] } | { ok: false; status: number; text: string; blocked?: BlockedConnection };

/** The judgement of one target: refused by name first, then by what the name resolves to. */
async function judge(rawHost: string, port: number, rules: DomainRules, resolve: Resolver): Promise<Verdict> {
  const host = canonicalHost(rawHost);
  if (host === undefined || !(port >= 1 && port <= 65535))
    return { ok: false, status: 400, text: `not a host and port: ${JSON.stringify(rawHost)}:${port}` };
  const refuse = (reason: BlockReason, address?: string): Verdict => ({
    ok: false,
    status: 403,
    text: `the sandbox blocked ${host}:${port} (${reason}${address ? `, ${address}` : ''})`,
    blocked: { host, port, reason, ...(address ? { address } : {}) },
  });
  const verdict = judgeHost(host, rules);
  if (verdict === 'denied') return refuse('denied');
  if (verdict === 'not-allowed') return refuse('not-allowed');
  let addresses: string[];
  if (isAddressLiteral(host)) addresses = [host.replace(/^\[|\]$/g, '')];
  else {
    try {
      addresses = await resolve(host);
    } catch (e) {
      return { ok: false, status: 502, text: `${host} did not resolve: ${(e as Error).message}` };
    }
    if (!addresses.length) return { ok: false, status: 502, text: `${host} has no address` };
  }
  for (const address of addresses) {
    if (judgeHost(addressAsHost(address), { allowed: [], denied: rules.denied }) === 'denied') return refuse('denied', address);
    // A name only a wildcard allows must not lead to this machine or its network (a rebinding name, `*.nip.io`).
    if (verdict !== 'exact' && isSpecialAddress(address)) return refuse('private-address', address);
  }
  return { ok: true, addresses };
}

/** Connects to the first of the checked addresses that answers. */
function dial(addresses: string[], port: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const attempt = (i: number, lastError?: Error) => {
      if (i >= addresses.length) return reject(lastError ?? new Error('no address'));
      const socket = net.connect({ host: addresses[i], port });
      socket.once('connect', () => {
        socket.removeAllListeners('error');
        resolve(socket);
      });
      socket.once('error', (e) => attempt(i + 1, e));
    };
    attempt(0);
  });
}

/** `host:port` of a CONNECT request, strictly: a name or bracketed IPv6 address, and digits. */
function authority(target: string): { host: string; port: number } | undefined {
  const m = /^(\[[0-9a-fA-F:.]+\]|[^\s:/\\?#@%[\]]+):(\d{1,5})$/.exec(target);
  return m ? { host: m[1], port: Number(m[2]) } : undefined;
}

/** Headers that belong to one hop, never forwarded. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'proxy-authenticate',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/**
 * How the one request forwarded says where its body ends: the client's Content-Length as Node's
 * parser checked it, else chunked when the client sent a chunked body, else no body at all. Any
 * bytes past that body are never passed on: a second request cannot ride along in the first one's
 * body, to be read by the origin as a request of its own (for another Host).
 */
function upstreamFraming(req: http.IncomingMessage): http.OutgoingHttpHeaders {
  if (req.headers['content-length'] !== undefined) return { 'content-length': req.headers['content-length'] };
  if (req.headers['transfer-encoding'] !== undefined) return { 'transfer-encoding': 'chunked' };
  return { 'content-length': '0' };
}

export async function startProxy(options: ProxyOptions): Promise<RunningProxy> {
  const resolve = options.resolve ?? systemResolver;
  const sockets = new Set<net.Socket>();

  const refused = (verdict: Extract<Verdict, { ok: false }>) => {
    if (verdict.blocked) options.onBlocked(verdict.blocked);
    return verdict;
  };

  const server = http.createServer((req, res) => {
    void (async () => {
      let url: URL | undefined;
      try {
        url = new URL(req.url ?? '');
      } catch {
        url = undefined;
      }
      // Only absolute http: URLs: https goes through CONNECT, and a request for the proxy itself is no request for elsewhere.
      if (!url || url.protocol !== 'http:') {
        res.writeHead(400, { 'content-type': 'text/plain' }).end('this proxy forwards http:// URLs and CONNECT only\n');
        return;
      }
      const port = url.port ? Number(url.port) : 80;
      const verdict = await judge(url.hostname, port, options.rules, resolve);
      if (!verdict.ok) {
        refused(verdict);
        res.writeHead(verdict.status, { 'content-type': 'text/plain' }).end(`${verdict.text}\n`);
        return;
      }
      const headers: http.OutgoingHttpHeaders = {};
      for (const [name, value] of Object.entries(req.headers))
        if (!HOP_BY_HOP.has(name) && name !== 'content-length' && value !== undefined) headers[name] = value;
      // The origin sees the host the proxy judged, not another one the client put in Host (virtual hosts behind one address).
      headers.host = url.host;
      Object.assign(headers, upstreamFraming(req), { connection: 'close' });
      let socket: net.Socket;
      try {
        socket = await dial(verdict.addresses, port);
      } catch (e) {
        res.writeHead(502, { 'content-type': 'text/plain' }).end(`${url.host}: ${(e as Error).message}\n`);
        return;
      }
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
      // The checked socket, through an agent of its own that hands out only it: with no agent, VS Code's extension host
      // gives a request its own proxy agent, and with `agent: false` Node ignores createConnection and dials again.
      const agent = new http.Agent({ keepAlive: false });
      agent.createConnection = () => socket;
      const upstream = http.request({
        host: socket.remoteAddress,
        port,
        agent,
        method: req.method,
        path: `${url.pathname}${url.search}`,
        headers,
      });
      upstream.on('response', (answer) => {
        const back: http.OutgoingHttpHeaders = {};
        for (const [name, value] of Object.entries(answer.headers)) if (!HOP_BY_HOP.has(name) && value !== undefined) back[name] = value;
        res.writeHead(answer.statusCode ?? 502, back);
        answer.pipe(res);
      });
      upstream.on('error', (e) => {
        if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' }).end(`${url.host}: ${e.message}\n`);
        else res.destroy();
      });
      req.pipe(upstream);
    })();
  });

  server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    sockets.add(client);
    client.once('close', () => sockets.delete(client));
    client.on('error', () => client.destroy());
    void (async () => {
      const target = authority(req.url ?? '');
      const verdict = target
        ? await judge(target.host, target.port, options.rules, resolve)
        : ({ ok: false, status: 400, text: `not host:port: ${JSON.stringify(req.url)}` } as const);
      if (!verdict.ok) {
        refused(verdict);
        client.end(
          `HTTP/1.1 ${verdict.status} ${verdict.status === 403 ? 'Forbidden' : 'Bad Request'}\r\ncontent-type: text/plain\r\n\r\n${verdict.text}\n`,
        );
        return;
      }
      let upstream: net.Socket;
      try {
        upstream = await dial(verdict.addresses, target!.port);
      } catch (e) {
        client.end(`HTTP/1.1 502 Bad Gateway\r\ncontent-type: text/plain\r\n\r\n${(e as Error).message}\n`);
        return;
      }
      sockets.add(upstream);
      upstream.once('close', () => sockets.delete(upstream));
      upstream.on('error', () => client.destroy());
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length) upstream.write(head);
      client.pipe(upstream).pipe(client);
    })();
  });
  server.on('connection', (socket: net.Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  // Past the cap, Node closes a new connection at once, before reading anything from it.
  server.maxConnections = MAX_PROXY_CONNECTIONS;

  await new Promise<void>((resolveListen, reject) => {
    server.once('error', reject);
    if ('path' in options.listen) server.listen(options.listen.path, resolveListen);
    else server.listen(0, '127.0.0.1', resolveListen);
  });
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : undefined,
    close: () =>
      new Promise<void>((done) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => done());
      }),
  };
}
