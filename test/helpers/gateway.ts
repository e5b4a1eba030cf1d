// What the chat gateway's tests and bench share: the upstream fixture as a real ServerHandle, the
// gateway in front of it, and the SDK's client speaking to the gateway over its socket or TCP, or
// over stdio to the relay VS Code would start (dist/relay.js, built by the caller).
import * as http from 'node:http';
import * as path from 'node:path';
import { Readable } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  ServerHandle,
  StdioTransport,
  definitionHash,
  parseServerDefinitions,
  stdioParamsFor,
  type AuditEntry,
  type AuditSink,
  type FenceMode,
  type LaunchContext,
  type Root,
} from '../../src/core';
import { thisMachine } from '../../src/core/policy/gate';
import { createMasker } from '../../src/core/scan/mask';
import { Forwarder, type GatewayOrigin } from '../../src/core/gateway/forward';
import { toldReadOnlyInMemory, type GatewayCall, type SharedServer, type ToldReadOnly } from '../../src/core/gateway/shared';
import { ChatGateway, type GatewayAddress } from '../../src/core/gateway/sdkGateway';
import { ROOT } from './servers';

/** The relay as shipped (`node esbuild.js` builds it). */
export const RELAY = path.join(ROOT, 'dist', 'relay.js');

export const UPSTREAM = path.resolve(__dirname, '..', 'fixtures', 'gateway-upstream.mjs');

const context: LaunchContext = {
  prepare: async (d) => d,
  createTransport: async (d) => new StdioTransport({ ...(await stdioParamsFor(d as never)), shutdownGraceMs: 300 }),
  handlers: () => ({}),
};

/** The fixture as the person runs it in MCP Host, with the policy the tests share it under. */
export function upstreamHandle(raw: Record<string, unknown> = {}): ServerHandle {
  return nodeServerHandle('up', [UPSTREAM], { tools: { deny: ['remove'] }, ...raw });
}

/** A Node script as a user-scope server named `name`, as the person runs it in MCP Host. */
export function nodeServerHandle(name: string, args: string[], raw: Record<string, unknown> = {}, maxRestarts = 3): ServerHandle {
  const [def] = parseServerDefinitions({ [name]: { command: process.execPath, args, ...raw } }, { scope: 'user' }).definitions;
  return new ServerHandle(def, context, { maxRestarts, windowMs: 60_000, baseDelayMs: 50 });
}

export interface Shared {
  forwarder: Forwarder;
  audit: AuditEntry[];
  calls: GatewayCall[];
}

export function share(
  handle: ServerHandle,
  options: {
    roots?: Root[];
    fence?: FenceMode;
    requestTimeoutMs?: number;
    toldReadOnly?: ToldReadOnly;
    /** The editor's pins, as a test plays them. */
    pins?: Pick<SharedServer, 'pinOf' | 'pinUsed' | 'promptPinOf'>;
    /** The flow guard, one for every server a test shares. */
    flow?: SharedServer['flow'];
    /** Where the records go instead of the returned array (a real audit log). */
    auditSink?: AuditSink;
    telemetry?: SharedServer['telemetry'];
    /** Whose requests the forwarder carries: VS Code's chat's (the default) or an agent's. */
    origin?: GatewayOrigin;
  } = {},
): Shared {
  const audit: AuditEntry[] = [];
  const calls: GatewayCall[] = [];
  const masker = createMasker().masker;
  const definition = definitionHash(handle.definition);
  const shared: SharedServer = {
    handle,
    gateContext: () => ({
      policy: handle.definition,
      alwaysAllowed: false,
      fence: options.fence ?? 'block',
      roots: options.roots ?? [{ uri: 'file:///work/project' }],
      machine: thisMachine(),
      serverCwd: handle.workingFolder,
    }),
    audited: () => ({ name: handle.name, scope: handle.definition.origin.scope, definition }),
    audit: options.auditSink ?? { append: (e) => void audit.push(e) },
    masker: () => masker,
    requestTimeoutMs: options.requestTimeoutMs ?? 10_000,
    onCall: (c) => void calls.push(c),
    toldReadOnly: options.toldReadOnly ?? toldReadOnlyInMemory(),
    telemetry: options.telemetry,
    ...options.pins,
    flow: options.flow,
  };
  return { forwarder: new Forwarder(shared, options.origin), audit, calls };
}

/** fetch over a Unix domain socket (or named pipe), as VS Code's client does for `unix:` URIs. */
function socketFetch(socketPath: string): typeof fetch {
  return (async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
    const headers = new Headers(init?.headers);
    const body = typeof init?.body === 'string' ? init.body : undefined;
    return new Promise<Response>((resolve, reject) => {
      const req = http.request(
        { socketPath, path: url.pathname + url.search, method: init?.method ?? 'GET', headers: Object.fromEntries(headers) },
        (res) => {
          const out = new Headers();
          for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') out.set(k, v);
          const stream = Readable.toWeb(res) as ReadableStream<Uint8Array>;
          resolve(new Response(res.statusCode === 204 || res.statusCode === 202 ? null : stream, { status: res.statusCode, headers: out }));
        },
      );
      req.on('error', reject);
      // The SDK's transport gives every request the same signal: a listener per request, removed when it ends.
      const onAbort = (): void => void req.destroy(new Error('aborted'));
      init?.signal?.addEventListener('abort', onAbort, { once: true });
      req.on('close', () => init?.signal?.removeEventListener('abort', onAbort));
      req.end(body);
    });
  }) as typeof fetch;
}

/** The SDK's client, connected to one route of the gateway. */
export async function gatewayClient(address: GatewayAddress, route: string, token: string | undefined): Promise<Client> {
  const headers: Record<string, string> = token === undefined ? {} : { Authorization: `Bearer ${token}` };
  const url = address.kind === 'tcp' ? new URL(`http://127.0.0.1:${address.port}${route}`) : new URL(`http://localhost${route}`);
  const transport = new StreamableHTTPClientTransport(url, {
    requestInit: { headers },
    ...(address.kind === 'socket' ? { fetch: socketFetch(address.path) } : {}),
  });
  const client = new Client({ name: 'gateway-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

/** The SDK's client over stdio to the relay, as VS Code starts it for a shared server. */
export async function relayClient(address: GatewayAddress, serverId: string, token: string | undefined): Promise<Client> {
  const env: Record<string, string> = { MCP_HOST_GATEWAY: ChatGateway.relayTarget(address) };
  if (token !== undefined) env.MCP_HOST_GATEWAY_TOKEN = token;
  const transport = new StdioClientTransport({ command: process.execPath, args: [RELAY, serverId], env, stderr: 'pipe' });
  const client = new Client({ name: 'gateway-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
}
