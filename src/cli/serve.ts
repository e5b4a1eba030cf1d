/**
 * `mcp-host serve`: MCP Host's gate as an MCP server on stdio, for any agent that starts MCP
 * servers itself. It runs one server (`--stdio`, `--http`: its names kept) or every server of an
 * `mcp.json`-style file (`--config`: `<server>__<tool>`), and its client reaches them through the
 * same forwarding path as VS Code's chat and the agents connected to the editor
 * (src/core/gateway/wire.ts → Catalog → Forwarder → the gate), as origin `agent`, headless: what
 * would be asked of the person (a changed definition, a tool the scan flags, a path outside the
 * roots under `ask`, a write after untrusted content under the flow guard) is refused with an
 * `isError` result that says why and what to allow where. The client's connection is one session:
 * its flow guard follows it across every server, and its name and version (its `initialize`) and
 * the session's id are in every audit record, span and log record. The servers' own requests:
 * roots are MCP Host's (`--root`, else the current folder), narrowed by the client's roots, never
 * widened; sampling and elicitation go to the client only if it declared them, within the entry's
 * sampling policy and budget, else they are refused (sampling) or declined (elicitation). It
 * exits when its client goes (stdin ends), stopping every server it started.
 */
import { homedir } from 'node:os';
import * as path from 'node:path';
import { Duplex } from 'node:stream';
import { pathToFileURL, fileURLToPath } from 'node:url';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { RootsListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import {
  McpError,
  ServerHandle,
  StdioTransport,
  cliServerEnvironment,
  definitionHash,
  httpTransport,
  sandboxedServer,
  SandboxUnavailableError,
  auditedSandbox,
  stdioParamsFor,
  rootsFor,
  SamplingBudget,
  type ClientHandlers,
  type CreateMessageParams,
  type LaunchContext,
  type Root,
  type SandboxLimits,
  type ServerDefinition,
  type Transport,
} from '../core';
import { Catalog } from '../core/gateway/catalog';
import { Forwarder } from '../core/gateway/forward';
import { RelayTransport } from '../core/gateway/relaySession';
import { toldReadOnlyInMemory, type GatewayFlow, type SharedServer } from '../core/gateway/shared';
import { openWireSession, type WireSession } from '../core/gateway/wire';
import type { AuditSink, AuditedServer } from '../core/policy/types';
import { thisMachine, type AskReason, type GateRequest } from '../core/policy/gate';
import { createMasker } from '../core/scan/mask';
import { MAX_LOCK_FILE_BYTES, parseLockFile, type PinSet } from '../core/policy/pins';
import { FlowGuard } from '../core/scan/flowGuard';
import { SHUTDOWN_BOUND_MS } from '../core/telemetry/load';
import { ServePins } from './servePins';
import { narrowRoots } from '../core/policy/roots';
import { elicitationSummary, samplingSummary, startServerRequest } from '../core/policy/serverRequests';
import { GateSession } from '../core/policy/session';
import { ConfigFileError, parseConfigFile } from '../core/servers/configFile';
import { entryProblems, readConfigFile } from './configFile';
import { readPolicyFileSync } from '../core/files/policyFile';
import type { TelemetryExporter } from '../core/telemetry/exporter';

/** What `--flow-guard` can say. */
export const SERVE_FLOW_MODES = ['block', 'warn', 'off'] as const;
export type ServeFlowMode = (typeof SERVE_FLOW_MODES)[number];

export interface ServeOptions {
  /** An `mcp.json`-style file of servers. */
  config?: string;
  roots: string[];
  /** Whether paths outside the roots are refused (`--root`, or the organisation's fence). */
  fenced: boolean;
  /**
   * The flow guard (../core/scan/flowGuard.ts): `block` refuses a write after untrusted content
   * (headless: nobody can be asked); `warn` runs it, saying so on stderr, the audit record carrying
   * the guard's reason; `off` judges each call on its own.
   */
  flowGuard: ServeFlowMode;
  /** Whether a tool the scan flags is accepted when a `--pinned` lock file pins its exact definition (the organisation may say no). */
  acceptFlagged: boolean;
  sandbox: boolean;
  allowDomains: string[];
  timeoutMs?: number;
  graceMs?: number;
  verbose: boolean;
  audit?: AuditSink & { flushed(): Promise<void> };
  /** The team's OTLP export (src/cli/telemetry.ts): a span per gated request, shut down within its bound at exit. */
  telemetry?: TelemetryExporter;
  cwd: string;
  env: NodeJS.ProcessEnv;
  version: string;
}

/** What serve reads from the command line before anything starts: an error here is exit code 2. */
export interface ServePlan {
  definitions: ServerDefinition[];
  pins: Map<string, { set: PinSet; file: string }>;
  warnings: string[];
}

/** What `planServe` reads: one server (`--stdio`, `--http`) or a configuration file, and the lock files. */
export interface ServeLaunch {
  /** One stdio server: its command line as words, already made absolute where they name a file. */
  stdio?: { words: string[]; name: string };
  /** One HTTP server. */
  http?: { url: string; headers: Record<string, string>; name: string };
  config?: string;
  roots: string[];
  /** `--pinned`: one FILE for one server, NAME=FILE for a server of the configuration. */
  pinned: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
}

/**
 * Reads the configuration and the lock files; throws a `ConfigFileError` naming the file (exit 2)
 * before anything starts: a file that is not one, and every entry of it that cannot be used.
 */
export function planServe(options: ServeLaunch): ServePlan {
  const folder = path.resolve(options.cwd, options.roots[0] ?? '.');
  let definitions: ServerDefinition[];
  let warnings: string[] = [];
  if (options.config !== undefined) {
    const config = readConfigFile(options.config, { root: options.roots[0], cwd: options.cwd, env: options.env });
    const problems = entryProblems(options.config, config);
    // Serving part of what the agent was given would be a surprise: every entry is right, or nothing starts.
    if (problems.length) throw new ConfigFileError(problems.join('\n'));
    ({ definitions, warnings } = config);
    if (!definitions.some((d) => d.enabled)) throw new ConfigFileError(`--config ${options.config}: no enabled server in the file`);
  } else {
    const one = options.stdio
      ? { command: options.stdio.words[0], args: options.stdio.words.slice(1), cwd: folder, trustAnnotations: false }
      : { type: 'http', url: options.http!.url, headers: options.http!.headers, trustAnnotations: false };
    const name = options.stdio?.name ?? options.http!.name;
    ({ definitions } = parseConfigFile(JSON.stringify({ servers: { [name]: one } }), { folder, home: homedir(), env: {} }));
  }
  const pins = new Map<string, { set: PinSet; file: string }>();
  for (const spec of options.pinned) {
    const eq = options.config !== undefined ? spec.indexOf('=') : -1;
    if (options.config !== undefined && eq <= 0)
      throw new ConfigFileError(`--pinned ${spec}: with --config, name the server: --pinned NAME=FILE`);
    const server = eq > 0 ? spec.slice(0, eq) : definitions[0].name;
    const file = eq > 0 ? spec.slice(eq + 1) : spec;
    if (!definitions.some((d) => d.name === server)) throw new ConfigFileError(`--pinned ${spec}: the file has no server "${server}"`);
    try {
      // A policy file, as the one-server --pinned reads it: no link, no FIFO, bounded.
      pins.set(server, { set: parseLockFile(readPolicyFileSync(file, MAX_LOCK_FILE_BYTES, { within: [options.cwd] })), file });
    } catch (error) {
      throw new ConfigFileError(`--pinned ${file}: ${(error as Error).message}`);
    }
  }
  return { definitions: definitions.filter((d) => d.enabled), pins, warnings };
}

/**
 * The roots of one server: `--root` (else the current folder) with the entry's own, narrowed by the
 * client's. Worked out once per server and kept (the fence reads them on every request) until the
 * client's roots change.
 */
class ServeRoots {
  private client: Root[] | undefined;
  private readonly known = new Map<ServerDefinition, Root[]>();

  constructor(
    private readonly base: Root[],
    private readonly folder: string,
  ) {}

  of(def: ServerDefinition): Root[] {
    let roots = this.known.get(def);
    if (!roots) this.known.set(def, (roots = narrowRoots(rootsFor(def, this.base, this.folder), this.client)));
    return roots;
  }

  paths(def: ServerDefinition): string[] {
    return this.of(def).flatMap((r) => (r.uri.startsWith('file:') ? [fileURLToPath(r.uri)] : []));
  }

  /** The client's roots; true when that changed anything. */
  narrowBy(roots: Root[] | undefined): boolean {
    const before = JSON.stringify(this.client ?? null);
    this.client = roots;
    const changed = JSON.stringify(this.client ?? null) !== before;
    if (changed) this.known.clear();
    return changed;
  }
}

/**
 * Serves until the client goes. Resolves with the exit code: 0 when the client closed the
 * session, 1 when no server could start.
 */
export async function runServe(plan: ServePlan, options: ServeOptions, err: NodeJS.WritableStream): Promise<number> {
  for (const w of plan.warnings) err.write(`warning: ${w}\n`);
  const folder = path.resolve(options.cwd, options.roots[0] ?? '.');
  const baseRoots: Root[] = options.roots.length
    ? options.roots.map((r) => ({
        uri: pathToFileURL(path.resolve(options.cwd, r)).href,
        name: path.basename(path.resolve(options.cwd, r)),
      }))
    : [{ uri: pathToFileURL(options.cwd).href, name: 'current directory' }];
  const roots = new ServeRoots(baseRoots, folder);
  const fenced = options.fenced;
  const { masker } = createMasker();
  // One client, one connection: one session, whose flow guard follows it across every server.
  const session = new GateSession('agent', 'serve');
  const flow: GatewayFlow =
    options.flowGuard === 'warn'
      ? {
          guard: new FlowGuard({ maxSessions: 1 }),
          // The guard's question, answered by serve itself: the call runs, and stderr and the audit say what it followed.
          mode: () => 'ask',
          ask: async (q) => {
            err.write(`warning: MCP Host's flow guard let ${q.server} › ${q.tool} run (--flow-guard warn): ${q.finding.reason}\n`);
            return true;
          },
        }
      : { guard: new FlowGuard({ maxSessions: 1 }), mode: () => options.flowGuard as 'block' | 'off' };
  const current: { wire?: WireSession } = {};
  const sandboxes = new Map<string, SandboxLimits>();
  const budgets = new Map<string, SamplingBudget>();
  // A definition of serve's never changes while it runs (no configuration is read again): hashed once, not on every request.
  const hashes = new Map<ServerDefinition, string>();
  const hashOf = (def: ServerDefinition): string => {
    let hash = hashes.get(def);
    if (hash === undefined) hashes.set(def, (hash = definitionHash(def)));
    return hash;
  };
  const audited = (def: ServerDefinition): AuditedServer => ({
    name: def.name,
    scope: def.origin.scope,
    definition: hashOf(def),
    ...(sandboxes.has(def.name) ? { sandbox: sandboxes.get(def.name) } : {}),
  });
  const flags = options.config === undefined ? '' : ` (or the entry's "roots" in ${options.config})`;

  const handlers = (def: ServerDefinition): ClientHandlers => {
    const audit = (method: 'sampling/createMessage' | 'elicitation/create', summary: unknown) =>
      startServerRequest(options.audit, audited(def), method, summary);
    return {
      listRoots: () => {
        const record = startServerRequest(options.audit, audited(def), 'roots/list');
        record.decision = 'allowed';
        record.end({ kind: 'ok' });
        return roots.of(def);
      },
      createMessage: async (params: CreateMessageParams, signal) => {
        const record = audit('sampling/createMessage', samplingSummary(params));
        const server = current.wire?.server;
        const refuse = (why: string): never => {
          const error = new McpError(-1, `User rejected sampling request: ${why}`);
          record.end({ kind: 'error', code: error.code });
          throw error;
        };
        if (def.sampling.mode === 'deny') refuse(`the entry of ${def.name} denies sampling`);
        if (!server?.getClientCapabilities()?.sampling) refuse(`the client of mcp-host serve does not offer sampling`);
        if (def.sampling.maxTokensPerRequest !== undefined && params.maxTokens > def.sampling.maxTokensPerRequest)
          refuse(`it asks for ${params.maxTokens} tokens, over the entry's maxTokensPerRequest ${def.sampling.maxTokensPerRequest}`);
        let budget = budgets.get(def.name);
        if (!budget) budgets.set(def.name, (budget = new SamplingBudget()));
        const place = budget.reserve(def.sampling, params.maxTokens);
        if (place.kind === 'over') return refuse(place.reason);
        record.decision = 'allowed';
        try {
          const result = await server!.createMessage(params as never, { signal });
          place.commit(params.maxTokens);
          record.end({ kind: 'ok' });
          return result as never;
        } catch (error) {
          place.release();
          record.failed(error);
          throw error;
        }
      },
      elicit: async (params, signal) => {
        const record = audit('elicitation/create', elicitationSummary(params));
        const server = current.wire?.server;
        const modes = server?.getClientCapabilities()?.elicitation;
        if (!modes || (params as { mode?: string }).mode === 'url') {
          record.end({ kind: 'ok' });
          return { action: 'decline' };
        }
        record.decision = 'allowed';
        try {
          const result = await server!.elicitInput(params as never, { signal });
          record.end({ kind: 'ok' });
          return result as never;
        } catch (error) {
          record.failed(error);
          throw error;
        }
      },
    };
  };

  const createTransport = async (def: ServerDefinition): Promise<Transport> => {
    if (def.type === 'http') return httpTransport({ url: def.url, headers: def.headers });
    const params = {
      ...(await stdioParamsFor(def, folder)),
      baseEnv: cliServerEnvironment(options.env),
      shutdownGraceMs: options.graceMs ?? 500,
    };
    if (!options.sandbox && !def.sandboxEnabled) return new StdioTransport(params);
    const network = options.allowDomains.length
      ? { ...def.sandbox?.network, allowedDomains: [...(def.sandbox?.network?.allowedDomains ?? []), ...options.allowDomains] }
      : def.sandbox?.network;
    try {
      const sandboxed = await sandboxedServer(
        params,
        roots.paths(def),
        { ...def.sandbox, ...(network ? { network } : {}) },
        {
          server: def.name,
          howToAllow: (host) =>
            options.config ? `add "${host}" to sandbox.network.allowedDomains of "${def.name}"` : `add --allow-domain ${host}`,
          onBlocked: (blocked) => err.write(`${blocked.message}\n`),
        },
      );
      sandboxes.set(def.name, auditedSandbox(sandboxed.reach));
      if (options.verbose) err.write(`[serve] ${def.name}: ${sandboxed.description}\n`);
      return sandboxed.transport();
    } catch (error) {
      if (error instanceof SandboxUnavailableError)
        throw McpError.invalidRequest(`${def.name} asks for a sandbox and does not start without one: ${error.message}`);
      throw error;
    }
  };

  const launch: LaunchContext = {
    prepare: async (d) => d,
    createTransport,
    handlers: (d) => handlers(d),
    clientInfo: { name: 'mcp-host-serve', version: options.version },
  };
  const handles = plan.definitions.map((def) => {
    const handle = new ServerHandle(def, launch);
    handle.onLog((entry) => {
      if (options.verbose || entry.level === 'error') err.write(`[${def.name} ${entry.source}] ${entry.message}\n`);
    });
    return handle;
  });

  const refusedUnasked = (pins: ServePins, request: GateRequest, reasons: AskReason[]): string => {
    const parts: string[] = [];
    for (const reason of reasons) {
      if (reason.kind === 'outsideRoots')
        parts.push(
          `outside the roots: ${reason.findings.map((f) => `${f.pointer || 'the URI'} = ${JSON.stringify(f.value)} (${f.resolved})`).join('; ')}; ` +
            `to allow it, add the folder with --root to mcp-host serve${flags}`,
        );
      else if (reason.kind === 'definitionChanged') parts.push(pins.refusal(request, reason));
      else if (reason.kind === 'untrustedFlow') parts.push(`held by MCP Host's flow guard: ${reason.finding.reason}`);
      else parts.push('it needs the person to confirm it, and mcp-host serve has nobody to ask');
    }
    return parts.join('; ');
  };

  /** The tool names of every server but `handle`'s, for the scan's shadowing detector. */
  const otherTools = (handle: ServerHandle): ReadonlyMap<string, string> =>
    new Map(handles.filter((h) => h !== handle).flatMap((h) => h.tools.map((t): [string, string] => [t.name, h.name])));

  const forwarders = handles.map((handle) => {
    const def = handle.definition;
    const pins = new ServePins({
      lock: plan.pins.get(def.name),
      otherTools: () => otherTools(handle),
      acceptFlagged: options.acceptFlagged,
      audit: options.audit,
      audited: () => audited(def),
    });
    const shared: SharedServer = {
      handle,
      gateContext: () => ({
        policy: def,
        alwaysAllowed: false,
        fence: fenced ? 'block' : 'off',
        roots: roots.of(def),
        machine: thisMachine(),
        serverCwd: handle.workingFolder,
        serverEnv: handle.environment,
        lockFile: pins.lockFile,
      }),
      audited: () => audited(def),
      audit: options.audit,
      telemetry: options.telemetry,
      masker: () => masker,
      requestTimeoutMs: def.requestTimeoutMs ?? options.timeoutMs ?? 60_000,
      toldReadOnly: toldReadOnlyInMemory(),
      refusedUnasked: (request, reasons) => refusedUnasked(pins, request, reasons),
      pinOf: (tool) => pins.tool(tool),
      promptPinOf: (prompt) => pins.prompt(prompt),
      flow,
    };
    return { name: def.name, forwarder: new Forwarder(shared, 'agent') };
  });

  // Every server starts before the client's first message is read: the session then declares what they offer.
  const started = await Promise.allSettled(handles.map((h) => h.start()));
  started.forEach((s, i) => {
    if (s.status === 'rejected') err.write(`error: ${handles[i].name} did not start: ${McpError.from(s.reason).message}\n`);
  });
  const stopAll = async (): Promise<void> => {
    await Promise.all(handles.map((h) => h.dispose().catch(() => undefined)));
    // The audit first: its records go to the exporter once they are on disk; a collector that is down costs at most the bound.
    await options.audit?.flushed();
    await options.telemetry?.shutdown(SHUTDOWN_BOUND_MS);
  };
  if (started.every((s) => s.status === 'rejected')) {
    await stopAll();
    return 1;
  }

  const catalog = new Catalog(forwarders, options.config !== undefined);
  const transport = new RelayTransport(Duplex.from({ readable: process.stdin, writable: process.stdout }));
  let done!: () => void;
  const closed = new Promise<void>((resolve) => (done = resolve));
  const refreshRoots = async (server: Server): Promise<void> => {
    if (!server.getClientCapabilities()?.roots) return;
    try {
      const { roots: theirs } = await server.listRoots();
      if (roots.narrowBy(theirs as Root[])) for (const h of handles) h.client?.sendRootsListChanged().catch(() => undefined);
    } catch (error) {
      if (options.verbose) err.write(`[serve] the client's roots/list failed: ${McpError.from(error).message}\n`);
    }
  };
  current.wire = await openWireSession(
    {
      catalog,
      transport,
      session,
      serverInfo: { name: 'mcp-host', version: options.version },
      forwardLogs: true,
      fastToolCalls: true,
      configure: (server) => server.setNotificationHandler(RootsListChangedNotificationSchema, () => void refreshRoots(server)),
      onInitialized: (server) => void refreshRoots(server),
    },
    () => done(),
  );
  const stop = (): void => void transport.close();
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  process.once('SIGHUP', stop);
  process.stdout.on('error', stop);
  await closed;
  await stopAll();
  return 0;
}
