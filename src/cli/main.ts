import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { thisMachine, type GateRequest } from '../core/policy/gate';
import { GatedServer } from '../core/policy/gated';
import type { GatedResult } from '../core/policy/run';
import { argumentLimitProblem } from '../core/policy/limits';
import {
  HttpTransport,
  LOGGING_LEVELS,
  McpClient,
  McpError,
  STDIO_PROBE_TIMEOUT_MS,
  StdioTransport,
  splitCommandLine,
  type CallToolResult,
  type ClientHandlers,
  type Tool,
  type LoggingLevel,
  type Root,
  type ProtocolChoice,
  type ServerClient,
  type Transport,
  cliServerEnvironment,
  sandboxedServer,
  SandboxUnavailableError,
  auditedSandbox,
  type SandboxedParams,
  type SandboxedServer,
  type StdioServerParams,
} from '../core';
import { createHash, randomBytes } from 'node:crypto';
import { AuditLog } from '../core/policy/audit';
import { recordsAfterHead, verifyAuditFile } from '../core/policy/auditVerify';
import { createMasker } from '../core/scan/mask';
import type { AuditedServer, AuditSink, ServerRequestMethod } from '../core/policy/types';
import { auditedRoots, elicitationSummary, samplingSummary, startServerRequest } from '../core/policy/serverRequests';
import {
  compareOne,
  comparePins,
  describeChange,
  LockFileError,
  lockFileText,
  MAX_LOCK_FILE_BYTES,
  parseLockFile,
  pinOf,
  pinSet,
  type PinSet,
  type PinStatus,
} from '../core/policy/pins';
import { openPolicyFile, readPolicyFileSync, writePolicyFileSync } from '../core/files/policyFile';
import { visibleControls } from '../core/render/serverText';
import { closeSync, existsSync, writeSync } from 'node:fs';
import { scriptIndex } from '../core/servers/sandbox/reach';
import { domainPattern } from '../core/servers/sandbox/domains';
import { runConformance } from './conformance';
import { ConfigFileError, entryProblems, readConfigFile, workspaceFolderOf, type ConfigFile } from './configFile';
import { offeredBy, reportScan, sarifUri, scanHandlers, scanTargets } from './scan';
import { stdioParamsFor } from '../core/servers/launch';
import { keptOutMessage, organisationFor } from './organisation';
import { identityOf } from '../core/gateway/orgPolicy';
import type { FlowMode } from '../core/scan/flowGuard';
import { SERVE_FLOW_MODES, type ServeFlowMode } from './serve';
import { withSandboxDefault } from '../core/servers/sandbox/defaults';
import type { TelemetryExporter } from '../core/telemetry/exporter';
import { SHUTDOWN_BOUND_MS } from '../core/telemetry/load';
import { CLI_VERSION, cliTelemetry } from './telemetry';
import { planServe, runServe, type ServePlan } from './serve';

const USAGE = `Usage: mcp-host --stdio "<command line>" [--sandbox [--allow-domain <host>]...] [--protocol <p>] [--timeout <ms>] [--grace <ms>] [--log-level <level>] [--root <dir>]... [--fence off|block] [--audit <file> [--audit-key <keyfile>]] [--pinned <file>] [--verbose] <verb> [args]
       mcp-host --http <url> [--header 'Name: value']... [--protocol <p>] [--timeout <ms>] [--log-level <level>] [--root <dir>]... [--fence off|block] [--audit <file> [--audit-key <keyfile>]] [--pinned <file>] [--verbose] <verb> [args]
       mcp-host --config <mcp.json> [--sarif <file>] scan
       mcp-host --config <file> [--sandbox [--allow-domain <host>]...] [--timeout <ms>] [--grace <ms>] [--root <dir>]... [--fence off|block] [--audit <file> [--audit-key <keyfile>]] [--pinned <name>=<file>]... [--flow-guard block|warn|off] [--verbose] serve
       mcp-host audit verify <file> [--head <hash>] [--audit-key <keyfile>]

Verbs:
  info                          server info, capabilities, protocol version and era, instructions
  tools                         every tool
  call <tool> '<json args>'     call a tool (arguments checked against its inputSchema first)
  resources                     every resource
  templates                     every resource template
  read <uri>                    read a resource
  prompts                       every prompt
  prompt <name> '<json args>'   get a prompt
  ping                          ping the server
  pin <file>                    write the server's tools, prompts and instructions (canonical
                                definitions and their SHA-256) to the file: a lock file
  scan                          look for poisoned definitions (hidden characters, instructions
                                to the model, other servers' tools, secret files, soliciting
                                parameters, outsized descriptions); findings as JSON
  serve                         be an MCP server on stdio for an agent: every request of its
                                client goes through MCP Host's gate (origin "agent"), until
                                the client closes stdin

serve runs the --stdio or --http server, tools named as the server names them, or every
server of --config FILE, an mcp.json-style file ("servers" as VS Code writes it, or
"mcpServers" as Claude Code and others do) whose entries may use MCP Host's entry keys
(tools.allow/deny, autoApprove, trustAnnotations, sandboxEnabled, sandbox, roots, ...); its
tools and prompts are then <server>__<tool>. A malformed file exits 2 before anything starts.
What would be asked of a person (a changed pinned definition, a tool the scan flags, ...) is
refused with an isError result saying what to allow. With --config, --pinned NAME=FILE pins one
server of the file. The flow guard follows the client's session across every server: once a
result of untrusted content came in, a call to a tool that writes or sends is refused, naming
what came before (--flow-guard block, the default); --flow-guard warn runs it and says so on
stderr and in the audit; --flow-guard off judges each call on its own.

--http speaks Streamable HTTP to the URL, or the older HTTP+SSE transport if the server
only knows that; --header adds a header to every request and may be repeated.
--root DIR (repeatable) sets the roots the CLI answers (roots/list) and turns the roots fence
on: a call, read or prompt whose arguments name a path outside every root is refused before
it is sent; a stdio server runs in the first --root. --fence off turns the fence off again;
without --root the current directory is the root and nothing is fenced. Arguments nested deeper
than 64 levels, or over 4 MiB of text, are refused before anything else.
--sandbox (with --stdio only) runs the server in an operating-system sandbox whose boundary is
the --root folders (else the current directory), whatever --fence says: it reads and writes
them but the files that run later (git hooks and config, .vscode/, .mcp.json, shell files),
reads the system and its own installation, uses a launcher cache of its own seeded from yours
(npx: offline), sees an empty home and a private /tmp, has no network, no capabilities and none
of your secret-shaped variables (GITHUB_TOKEN, SSH_AUTH_SOCK, ...). Linux needs
bubblewrap (bwrap); macOS uses sandbox-exec; elsewhere, or without them, it exits 1 and says why.
--allow-domain HOST (with --sandbox, repeatable) lets the sandboxed server reach HOST (a name, an
address, or *.suffix for every name below suffix) through MCP Host's filtering proxy, on any port,
and (for npx) the npm registry; each refused connection is printed on stderr with the flag that
allows it. Linux also needs socat. A Node server's fetch uses the proxy on Node 24 and 22.21+.
--protocol is auto (ask with server/discover, else initialize), 2026-07-28 or 2025-11-25.
--timeout is the per-request timeout (60000); --grace how long each shutdown step waits
(stdin closed, then SIGTERM, then SIGKILL; 500).
--log-level asks the server to send log messages of this level or worse (debug, info, notice,
warning, error, critical, alert, emergency): logging/setLevel to a 2025-11-25 server, the level
in every request's _meta to a 2026-07-28 one; with --verbose they are printed on stderr.
--audit appends a chained record of each call, read and prompt (origin "cli"), and of each
roots, sampling and elicitation request of the server (origin "server"), to the file; several
writers (CLI runs, VS Code windows) may share it: each append takes <file>.lock. A file or lock
that is a link, below a folder that is one (under the current directory), or not a regular file
is not written: a warning names it.
--audit-key KEYFILE gives each record a MAC under the key in KEYFILE (64 hex digits; created,
mode 0600, when missing). Every writer of one audit file must use the same key.
audit verify checks such a file (and its rotated files), prints "N records, chain intact, head
<hash of the last record>", and exits 1 at the first broken line. Keep the head: with
--head HASH it exits 0 only if the record with that hash is still in the chain (and says how
many follow it), so records cut from the end are caught. With --audit-key it also checks every
record's MAC (a re-hashed record fails); without it the MACs are not checked.
--pinned FILE checks the server against a lock file written by pin: call (prompt) of a tool
(prompt) whose definition changed since, or that the file does not have, is refused (exit 1,
naming it and what changed: description, input schema, annotations, ...); tools marks each tool
"pinned": same, changed or new; changed instructions are a warning. An unreadable or malformed
FILE (a link, a FIFO, over 8 MiB, a member named twice) exits 2 before the server is started.
A name the server lists with two definitions is refused under --pinned, and pin writes nothing
for it (nor through a link).
scan lists the tools, prompts and instructions and runs the definition detectors over them
(docs/injection.md). --config FILE scans every server of an mcp.json-style file (VS Code's
"servers" or the "mcpServers" of Claude Desktop and the agents), each with the other servers'
tool names, one after another. --sarif FILE also writes the findings as SARIF 2.1.0 for code
scanning. Exit 0 when nothing is found, 1 when something is, 3 when a server could not be scanned.
Prints JSON on stdout; errors go to stderr with a non-zero exit code.`;

const PROTOCOLS: readonly ProtocolChoice[] = ['auto', '2026-07-28', '2025-11-25'];

interface CliArgs {
  stdio?: string;
  http?: string;
  /** --config: an mcp.json-style file of servers (serve, scan). */
  config?: string;
  /** Every --pinned given (serve with --config takes one per server). */
  pinnedAll: string[];
  headers: string[];
  timeoutMs?: number;
  graceMs?: number;
  verbose: boolean;
  protocol?: string;
  logLevel?: string;
  roots: string[];
  fence?: string;
  /** --flow-guard: block, warn or off (serve). */
  flowGuard?: string;
  audit?: string;
  auditKey?: string;
  sandbox: boolean;
  allowDomains: string[];
  pinned?: string;
  sarif?: string;
  verb?: string;
  rest: string[];
}

function parseArgs(argv: string[]): CliArgs {
  const args: CliArgs = { verbose: false, sandbox: false, allowDomains: [], headers: [], roots: [], rest: [], pinnedAll: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--stdio') args.stdio = argv[++i];
    else if (a === '--http') args.http = argv[++i];
    else if (a === '--config') args.config = argv[++i];
    else if (a === '--header') args.headers.push(argv[++i] ?? '');
    else if (a === '--timeout') args.timeoutMs = Number(argv[++i]);
    else if (a === '--grace') args.graceMs = Number(argv[++i]);
    else if (a === '--protocol') args.protocol = argv[++i];
    else if (a === '--log-level') args.logLevel = argv[++i];
    else if (a === '--root') args.roots.push(argv[++i] ?? '');
    else if (a === '--fence') args.fence = argv[++i];
    else if (a === '--flow-guard') args.flowGuard = argv[++i];
    else if (a === '--audit') args.audit = argv[++i];
    else if (a === '--audit-key') args.auditKey = argv[++i];
    else if (a === '--sandbox') args.sandbox = true;
    else if (a === '--allow-domain') args.allowDomains.push(argv[++i] ?? '');
    else if (a === '--pinned') args.pinnedAll.push((args.pinned = argv[++i]) ?? '');
    else if (a === '--sarif') args.sarif = argv[++i];
    else if (a === '--verbose' || a === '-v') args.verbose = true;
    else if (a === '--help' || a === '-h') args.verb = 'help';
    else if (args.verb === undefined) args.verb = a;
    else args.rest.push(a);
  }
  return args;
}

/** `Name: value` pairs for --header; an error message when one is malformed. */
function parseHeaders(lines: string[]): Record<string, string> | string {
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    const name = colon > 0 ? line.slice(0, colon).trim() : '';
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) return `--header needs 'Name: value', got ${JSON.stringify(line)}`;
    headers[name] = line.slice(colon + 1).trim();
  }
  return headers;
}

function parseJsonObject(text: string | undefined, what: string): Record<string, unknown> {
  if (text === undefined || text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw McpError.invalidParams(`${what} is not JSON: ${(e as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw McpError.invalidParams(`${what} must be a JSON object`);
  return value as Record<string, unknown>;
}

/** The --root directories, or the current directory when there is none, as paths. */
function cliRootPaths(cwd: string, roots: string[]): string[] {
  return roots.length === 0 ? [cwd] : roots.map((r) => path.resolve(cwd, r));
}

/** The --root directories, or the current directory when there is none. */
function cliRoots(cwd: string, roots: string[]): Root[] {
  if (roots.length === 0) return [{ uri: pathToFileURL(cwd).href, name: 'current directory' }];
  return roots.map((r) => ({ uri: pathToFileURL(path.resolve(cwd, r)).href, name: path.basename(path.resolve(cwd, r)) }));
}

/**
 * The CLI answers what a headless client can: roots are the current directory, the rest is
 * refused. With `--audit`, each of the server's requests is recorded (origin `server`) as the
 * editor records them: roots answered, sampling refused, elicitation declined.
 */
export function cliHandlers(cwd: string, roots: string[] = [], audit?: { sink: AuditSink; server: AuditedServer }): ClientHandlers {
  const record = (method: ServerRequestMethod, summary?: unknown) => audit && startServerRequest(audit.sink, audit.server, method, summary);
  return {
    listRoots: () => (audit ? auditedRoots(audit.sink, audit.server, () => cliRoots(cwd, roots)) : cliRoots(cwd, roots)),
    createMessage: async (params) => {
      const error = new McpError(-1, 'User rejected sampling request: the command-line client has no language model');
      record('sampling/createMessage', samplingSummary(params))?.end({ kind: 'error', code: error.code });
      throw error;
    },
    elicit: async (params) => {
      // Nobody to ask: refused, answered with decline.
      record('elicitation/create', elicitationSummary(params))?.end({ kind: 'ok' });
      return { action: 'decline' };
    },
  };
}

/** What a test may put in place of the machine's: the managed policy file (the shipped CLI always reads the platform's). */
export interface CliMachine {
  managedPolicyFile?: string;
}

export async function runCli(argv: string[], out = process.stdout, err = process.stderr, machine: CliMachine = {}): Promise<number> {
  if (argv[0] === 'conformance') return runConformance(argv.slice(1), process.env, out, err);
  if (argv[0] === 'audit') return runAuditVerb(argv.slice(1), out, err);
  const args = parseArgs(argv);
  if (args.config !== undefined && args.verb === 'scan') return runConfigVerb(args, out, err);
  if (args.sarif !== undefined && args.verb !== 'scan') {
    err.write('--sarif goes with the scan verb\n');
    return 2;
  }
  if (args.verb === 'serve' || args.config !== undefined) return serveVerb(args, err, machine);
  if (args.verb === 'help' || (args.stdio === undefined) === (args.http === undefined) || !args.verb) {
    (args.verb === 'help' ? out : err).write(`${USAGE}\n`);
    return args.verb === 'help' ? 0 : 2;
  }
  const headers = parseHeaders(args.headers);
  if (typeof headers === 'string') {
    err.write(`${headers}\n`);
    return 2;
  }
  const words = args.stdio === undefined ? undefined : splitCommandLine(args.stdio);
  if (words?.length === 0) {
    err.write('--stdio needs a command line\n');
    return 2;
  }
  const problem = policyFlagProblem(args);
  if (problem) {
    err.write(`${problem}\n`);
    return 2;
  }
  if (args.logLevel !== undefined && !(LOGGING_LEVELS as readonly string[]).includes(args.logLevel)) {
    err.write(`--log-level needs one of ${LOGGING_LEVELS.join(', ')}\n`);
    return 2;
  }
  const organisation = organisationFor(args, err, machine.managedPolicyFile);
  if (typeof organisation === 'string') {
    err.write(`${organisation}\n`);
    return 2;
  }
  const kept = organisation.keptOut(
    words ? { name: path.basename(words[0]), command: words } : { name: hostOf(args.http!), url: args.http! },
  );
  if (kept) {
    err.write(`refused: ${keptOutMessage(kept, 'this server')}\n`);
    return 1;
  }
  if (organisation.sandbox === 'all' && words) args.sandbox = true;
  if (args.sandbox && !words) {
    err.write('--sandbox works with --stdio only: an HTTP server is not a process mcp-host starts\n');
    return 2;
  }
  // The organisation's fence holds with the current directory as the root when there is no --root.
  const fenced = organisation.fence === 'flags' ? args.roots.length > 0 && args.fence !== 'off' : organisation.fence === 'on';
  const protocol = (args.protocol ?? 'auto') as ProtocolChoice;
  if (!PROTOCOLS.includes(protocol)) {
    err.write(`--protocol needs one of ${PROTOCOLS.join(', ')}\n`);
    return 2;
  }
  let pins: PinSet | undefined;
  if (args.pinned !== undefined) {
    try {
      pins = parseLockFile(readPolicyFileSync(args.pinned, MAX_LOCK_FILE_BYTES, { within: [process.cwd()] }));
    } catch (error) {
      // A lock file's own problem names the file; the system's errors and refused links name it already.
      err.write(`--pinned${error instanceof LockFileError ? ` ${args.pinned}` : ''}: ${visibleControls((error as Error).message)}\n`);
      return 2;
    }
  }
  if (args.verb === 'pin' && !args.rest[0]) {
    err.write('pin needs a file to write\n');
    return 2;
  }
  let key: Buffer | undefined;
  try {
    key = args.auditKey === undefined ? undefined : await readAuditKey(args.auditKey, true);
  } catch (error) {
    err.write(`error: ${(error as Error).message}\n`);
    return 2;
  }
  // A stdio server runs in the first --root, so a relative path means for it what it means for the
  // fence (the fence checks it against this folder and every root); an HTTP server has no folder of ours.
  const serverCwd = words ? path.resolve(process.cwd(), args.roots[0] ?? '.') : undefined;
  // A one-shot command should not linger: servers that ignore stdin closing get SIGTERM soon.
  const launch = words && fromCallerFolder(words, process.cwd());
  let stdio: StdioServerParams | undefined = launch && {
    command: launch[0],
    args: launch.slice(1),
    cwd: serverCwd,
    baseEnv: cliServerEnvironment(process.env),
    shutdownGraceMs: args.graceMs ?? 500,
  };
  let sandbox: SandboxedServer | undefined;
  if (stdio && args.sandbox) {
    try {
      sandbox = await sandboxedServer(
        stdio,
        cliRootPaths(process.cwd(), args.roots),
        args.allowDomains.length ? { network: { allowedDomains: args.allowDomains } } : undefined,
        {
          server: path.basename(words![0]),
          howToAllow: (host) => `add --allow-domain ${host}`,
          onBlocked: (blocked) => err.write(`${blocked.message}\n`),
        },
      );
    } catch (error) {
      if (!(error instanceof SandboxUnavailableError)) throw error;
      err.write(`error: --sandbox: ${error.message}\n`);
      return 1;
    }
    stdio = sandbox.params;
    if (args.verbose) err.write(`[cli] ${sandbox.description}\n`);
  }
  const telemetry = cliTelemetry(organisation.env, err, Object.values(headers));
  const audit = args.audit === undefined ? undefined : cliAuditLog(args.audit, key, err, telemetry);
  const audited = cliServer(words ? { words, cwd: serverCwd! } : { url: args.http!, headers }, sandbox);
  // The stdio server's transport: the environment it started with is what the fence expands variables against.
  let started: StdioTransport | undefined;
  const newClient = (choice: ProtocolChoice): McpClient => {
    const transport: Transport = stdio ? (started = new StdioTransport(stdio)) : new HttpTransport({ url: args.http!, headers });
    const made = new McpClient(transport, {
      clientInfo: { name: 'mcp-host-cli', version: CLI_VERSION },
      handlers: cliHandlers(process.cwd(), args.roots, audit && { sink: audit, server: audited }),
      requestTimeoutMs: args.timeoutMs,
      protocol: choice,
      probeTimeoutMs: words ? STDIO_PROBE_TIMEOUT_MS : undefined,
    });
    made.onLog((entry) => {
      if (args.verbose || entry.level === 'error') err.write(`[${entry.source}] ${entry.message}\n`);
    });
    made.onLogMessage((m) => {
      if (args.verbose) err.write(`[server ${m.level}] ${typeof m.data === 'string' ? m.data : JSON.stringify(m.data)}\n`);
    });
    return made;
  };
  let client = newClient(protocol);
  try {
    let init;
    try {
      init = await client.connect();
    } catch (error) {
      if (McpError.from(error).kind?.type !== 'probeLost') throw error;
      // A server that predates server/discover and exits on it: start it again and use initialize.
      if (args.verbose) err.write(`[cli] ${McpError.from(error).message}; starting it again with initialize\n`);
      client = newClient('2025-11-25');
      init = await client.connect();
    }
    if (args.logLevel !== undefined) {
      if (client.serverCapabilities?.logging) await client.setLoggingLevel(args.logLevel as LoggingLevel);
      else err.write(`warning: the server does not declare logging, so --log-level ${args.logLevel} is not sent\n`);
    } else if (args.verbose && client.era === 'modern' && client.serverCapabilities?.logging) {
      // A 2026-07-28 server logs nothing unless a request names a level; --verbose wants every line, as a 2025 server sends by default.
      await client.setLoggingLevel('debug');
    }
    // One listing, read once: what is pinned or compared, what `tools` prints, and the definition a call is checked and sent with.
    const offered = args.verb === 'pin' || pins ? await offeredBy(client) : undefined;
    if (args.verb === 'pin') {
      const pinned = pinSet(offered!);
      try {
        writeLockFile(args.rest[0], pinned);
      } catch (error) {
        err.write(`pin: ${visibleControls((error as Error).message)}; nothing was written\n`);
        return 1;
      }
      out.write(
        `${JSON.stringify({ file: args.rest[0], tools: Object.keys(pinned.tools), prompts: Object.keys(pinned.prompts) }, null, 2)}\n`,
      );
      return 0;
    }
    if (args.verb === 'scan')
      return reportScan(await scanTargets([{ name: audited.name, offered: () => offeredBy(client) }]), args.sarif, out, err);
    const now = offered && pinSet(offered);
    if (pins && now) warnOfChanges(pins, now, err);
    // The same gate as the editor's: there is nobody to ask, so the fence blocks (--root) or is off.
    const gate = new GatedServer({ name: audited.name, rawClient: client }, 'cli', {
      context: (request) => ({
        policy: { tools: {}, autoApprove: [], trustAnnotations: false },
        alwaysAllowed: false,
        fence: fenced ? 'block' : 'off',
        roots: cliRoots(process.cwd(), args.roots),
        machine: thisMachine(),
        serverCwd,
        serverEnv: started?.environment,
        pin: pins && now ? pinStatusOf(request, pins, now) : undefined,
      }),
      server: () => audited,
      audit,
      telemetry,
      client: { name: 'mcp-host-cli', version: CLI_VERSION },
    });
    const definitions = offered?.tools ?? (fenced || audit !== undefined ? () => client.listTools() : undefined);
    const gated = await gatedVerb(gate, args.verb, args.rest, definitions, err);
    let result: unknown;
    if (gated) {
      if (!gated.sent) {
        // A name's invisible characters shown: `look<U+200B>up` is not `lookup`.
        err.write(`refused (nothing was sent): ${visibleControls(gated.reason)}\n`);
        return 1;
      }
      result = gated.result;
    } else if (args.verb === 'tools' && pins && offered && now) {
      // The listing that was compared, not a second one the server may answer differently.
      result = markPinned(offered.tools, pins, now);
    } else {
      result = await runVerb(client, args.verb, { ...init, era: client.era });
    }
    out.write(`${JSON.stringify(result, null, 2)}\n`);
    if (args.verb === 'call' && (result as CallToolResult).isError) {
      // A tool failure is a result, not a protocol error: printed whole, and the exit code says so.
      const first = (result as CallToolResult).content.find((c) => c.type === 'text');
      err.write(`error: the tool reported a failure${first && first.type === 'text' ? `: ${first.text}` : ''}\n`);
      return 1;
    }
    return 0;
  } catch (error) {
    const e = McpError.from(error);
    err.write(`error: ${e.toString()}\n`);
    return 1;
  } finally {
    await client.close();
    // The proxy outlives each client: a server that exits on server/discover is started again with it.
    await sandbox?.stop();
    // The audit first: its records go to the exporter once they are on disk.
    await audit?.flushed();
    // A collector that is down or slow costs at most this much more before the command exits.
    await telemetry?.shutdown(SHUTDOWN_BOUND_MS);
  }
}

/** A verb over the servers of --config FILE: scan (serve reads the same file). */
async function runConfigVerb(args: CliArgs, out: NodeJS.WritableStream, err: NodeJS.WritableStream): Promise<number> {
  if (args.verb !== 'scan' || args.stdio !== undefined || args.http !== undefined) {
    err.write('--config FILE goes with the scan verb, without --stdio or --http\n');
    return 2;
  }
  let servers: ConfigFile;
  try {
    servers = readConfigFile(args.config!, { root: args.roots[0], cwd: process.cwd(), env: process.env });
  } catch (error) {
    if (!(error instanceof ConfigFileError)) throw error;
    err.write(`${error.message}\n`);
    return 2;
  }
  // An entry that cannot be used is named and left out; the others are scanned, and the exit code says one was not (3).
  for (const line of entryProblems(args.config!, servers)) err.write(`${line}; not scanned\n`);
  for (const w of servers.warnings) err.write(`warning: ${w}\n`);
  const uri = sarifUri(args.config!);
  const targets = servers.definitions.map((def) => ({
    name: def.name,
    definedIn: { uri, line: servers.lines[def.name] ?? 1 },
    offered: async () => {
      const transport: Transport =
        def.type === 'http'
          ? new HttpTransport({ url: def.url, headers: def.headers })
          : new StdioTransport({
              ...(await stdioParamsFor(def, workspaceFolderOf(args.config!, { root: args.roots[0], cwd: process.cwd() }))),
              baseEnv: cliServerEnvironment(process.env),
              shutdownGraceMs: args.graceMs ?? 500,
            });
      const client = new McpClient(transport, {
        clientInfo: { name: 'mcp-host-cli', version: '0.1.0' },
        handlers: scanHandlers,
        requestTimeoutMs: args.timeoutMs ?? def.requestTimeoutMs,
        protocol: def.protocol,
        probeTimeoutMs: def.type === 'stdio' ? STDIO_PROBE_TIMEOUT_MS : undefined,
      });
      try {
        await client.connect();
        return await offeredBy(client);
      } finally {
        await client.close();
      }
    },
  }));
  const code = reportScan(await scanTargets(targets), args.sarif, out, err);
  return servers.problems.length && code === 0 ? 3 : code;
}

/** What is wrong with the flags every way of running shares (timeouts, the fence, the sandbox's domains, the audit's key), if anything. */
function policyFlagProblem(args: CliArgs): string | undefined {
  for (const [flag, value] of [
    ['--timeout', args.timeoutMs],
    ['--grace', args.graceMs],
  ] as const) {
    if (value !== undefined && !(Number.isFinite(value) && value >= 0)) return `${flag} needs a number of milliseconds`;
  }
  if (args.fence !== undefined && args.fence !== 'off' && args.fence !== 'block') return '--fence needs off or block';
  if (args.flowGuard !== undefined && !SERVE_FLOW_MODES.includes(args.flowGuard as ServeFlowMode))
    return '--flow-guard needs block, warn or off';
  if (args.flowGuard !== undefined && args.verb !== 'serve') return '--flow-guard goes with serve: one call has no session before it';
  if (args.allowDomains.length && !args.sandbox)
    return '--allow-domain needs --sandbox: without it the server has the whole network already';
  const badDomain = args.allowDomains.find((d) => domainPattern(d) === undefined);
  if (badDomain !== undefined) return `--allow-domain needs a host name, an address or *.suffix, got ${JSON.stringify(badDomain)}`;
  if (args.auditKey !== undefined && args.audit === undefined) return '--audit-key needs --audit';
  return undefined;
}

/**
 * `serve`: checks everything it reads before anything starts (exit 2 naming what is wrong), applies
 * the organisation's policy (a server its lists keep out does not start; the others serve), then
 * serves until its client goes (./serve.ts).
 */
async function serveVerb(args: CliArgs, err: NodeJS.WritableStream, machine: CliMachine): Promise<number> {
  const ways = [args.stdio, args.http, args.config].filter((w) => w !== undefined).length;
  const usage = (why: string): number => {
    err.write(`${why}\n${USAGE}\n`);
    return 2;
  };
  if (args.verb !== 'serve') return usage('--config works with serve only');
  if (ways !== 1) return usage('serve needs exactly one of --stdio, --http and --config');
  if (args.rest.length) return usage(`serve takes no arguments, got ${JSON.stringify(args.rest.join(' '))}`);
  const problem = policyFlagProblem(args);
  if (problem) return usage(problem);
  if (args.sandbox && args.http !== undefined)
    return usage('--sandbox works with --stdio or --config: an HTTP server is not a process mcp-host starts');
  const headers = parseHeaders(args.headers);
  if (typeof headers === 'string') return usage(headers);
  const words = args.stdio === undefined ? undefined : splitCommandLine(args.stdio);
  if (words?.length === 0) return usage('--stdio needs a command line');
  const organisation = organisationFor(args, err, machine.managedPolicyFile);
  if (typeof organisation === 'string') {
    err.write(`${organisation}\n`);
    return 2;
  }
  let plan: ServePlan;
  let key: Buffer | undefined;
  const cwd = process.cwd();
  try {
    const launch = words && fromCallerFolder(words, cwd);
    plan = planServe({
      stdio: launch && { words: launch, name: cliServer({ words: launch, cwd }).name },
      http: args.http === undefined ? undefined : { url: args.http, headers, name: cliServer({ url: args.http, headers }).name },
      config: args.config,
      roots: args.roots,
      pinned: args.pinnedAll,
      cwd,
      env: process.env,
    });
    key = args.auditKey === undefined ? undefined : await readAuditKey(args.auditKey, true);
  } catch (error) {
    err.write(`error: ${(error as Error).message}\n`);
    return 2;
  }
  // VS Code's MCP lists, server by server: one they keep out does not start, and the others still serve.
  const kept = plan.definitions.filter((def) => {
    const identity =
      args.config !== undefined
        ? identityOf(def)
        : words
          ? { name: path.basename(words[0]), command: words }
          : { name: hostOf(args.http!), url: args.http! };
    const out = organisation.keptOut(identity);
    if (out)
      err.write(
        `refused: ${keptOutMessage(out, args.config === undefined ? 'this server' : `the server "${def.name}"`)}; it does not start\n`,
      );
    return !out;
  });
  if (!kept.length) return 1;
  // The organisation's sandbox default: `all` sandboxes every stdio server; `workspace` those of a file (read as a project's).
  const sandboxed = organisation.sandbox === 'all' && args.http === undefined ? true : args.sandbox;
  plan = {
    ...plan,
    definitions: organisation.sandbox && args.config !== undefined ? kept.map((d) => withSandboxDefault(d, organisation.sandbox!)) : kept,
  };
  // What the entries hand their servers (tokens in headers and env) is never exported.
  const secrets = [
    ...Object.values(headers),
    ...plan.definitions.flatMap((d) => Object.values(d.type === 'http' ? d.headers : d.env)),
  ].filter((v): v is string => typeof v === 'string');
  const telemetry = cliTelemetry(organisation.env, err, secrets);
  const audit = args.audit === undefined ? undefined : cliAuditLog(args.audit, key, err, telemetry);
  return runServe(
    plan,
    {
      config: args.config,
      roots: args.roots,
      // The organisation's fence holds with the current folder as the root when there is no --root.
      fenced: organisation.fence === 'flags' ? args.roots.length > 0 && args.fence !== 'off' : organisation.fence === 'on',
      flowGuard: serveFlowMode(args.flowGuard, organisation.flowGuard),
      acceptFlagged: organisation.acceptChanges,
      sandbox: sandboxed,
      allowDomains: args.allowDomains,
      timeoutMs: args.timeoutMs,
      graceMs: args.graceMs,
      verbose: args.verbose,
      audit,
      telemetry,
      cwd,
      env: cliServerEnvironment(process.env),
      version: CLI_VERSION,
    },
    err,
  );
}

/**
 * serve's flow guard: nobody can be asked, so it holds (`block`) unless `--flow-guard warn` or
 * `off` says otherwise; the organisation's `ask` or `block` holds whatever the flag says (a flag
 * that loosens it was refused already), its `off` stands unless the flag tightens it.
 */
function serveFlowMode(flag: string | undefined, locked: FlowMode | undefined): ServeFlowMode {
  const chosen = (flag as ServeFlowMode | undefined) ?? (locked === 'off' ? 'off' : 'block');
  return locked === undefined || locked === 'off' ? chosen : 'block';
}

/** A URL's host (the name the organisation's lists and the audit give an HTTP server), or the text itself when it is no URL. */
function hostOf(url: string): string {
  try {
    return new URL(url).host || url;
  } catch {
    return url;
  }
}

/**
 * The server as the CLI's audit names it: the command's base name or the URL's host, never its
 * arguments, query or headers (a `--token VALUE` or `?key=` would be written in every record), and
 * a hash of the whole launch (command, arguments and working folder, or URL and headers), so two
 * launches can be told apart without being readable. The environment is inherited, not part of it.
 * A sandboxed server's limits are named too.
 */
export function cliServer(
  launch: { words: string[]; cwd: string } | { url: string; headers: Record<string, string> },
  sandbox?: SandboxedParams,
): AuditedServer {
  const { masker } = createMasker();
  let name: string;
  if ('words' in launch) name = launch.words[0].split(/[\\/]/).pop() || 'stdio';
  else {
    try {
      name = new URL(launch.url).host || 'http';
    } catch {
      name = 'http';
    }
  }
  const hashed = 'words' in launch ? ['stdio', launch.words, launch.cwd] : ['http', launch.url, Object.entries(launch.headers).sort()];
  return {
    name: masker.maskText(name).text,
    scope: 'user',
    definition: createHash('sha256').update(JSON.stringify(hashed)).digest('hex'),
    ...(sandbox && { sandbox: auditedSandbox(sandbox.reach) }),
  };
}

/**
 * The --audit file; a write error is a warning, and the command goes on. It, its lock and the
 * folders on the way below the working folder are policy files: a link there is refused (a cloned
 * repository may plant `.mcp/audit.jsonl` → `~/.bashrc`). Its records are exported as log records
 * where telemetry is on.
 */
function cliAuditLog(file: string, key: Buffer | undefined, err: NodeJS.WritableStream, telemetry?: TelemetryExporter): AuditLog {
  const { masker } = createMasker();
  return new AuditLog({
    file,
    masker,
    key,
    within: [process.cwd()],
    onError: (e) => err.write(`warning: the audit log could not be written: ${e.message}\n`),
    onRecords: telemetry && ((records) => telemetry.auditRecords(records)),
  });
}

/** What is read of a key file: 64 hex digits and a line end, with room for a BOM or a CRLF. */
const MAX_KEY_FILE_BYTES = 1024;

/** The key of --audit-key: 32 bytes as 64 hex digits; created (mode 0600) when missing and `create` is set. A policy file (no link). */
async function readAuditKey(file: string, create: boolean): Promise<Buffer> {
  const within = [process.cwd()];
  let text: string;
  try {
    text = readPolicyFileSync(file, MAX_KEY_FILE_BYTES, { within });
  } catch (error) {
    if (!create || (error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    text = randomBytes(32).toString('hex');
    // Created only if absent: two runs creating it at once keep the first one's key.
    try {
      const { fd } = openPolicyFile(file, 'create', { within, mode: 0o600 });
      try {
        writeSync(fd, `${text}\n`);
      } finally {
        closeSync(fd);
      }
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      text = readPolicyFileSync(file, MAX_KEY_FILE_BYTES, { within });
    }
  }
  if (!/^[0-9a-f]{64}$/i.test(text.trim())) throw new Error(`${file} does not hold an audit key (64 hex digits)`);
  return Buffer.from(text.trim(), 'hex');
}

async function runAuditVerb(argv: string[], out: NodeJS.WritableStream, err: NodeJS.WritableStream): Promise<number> {
  const [verb, file, ...flags] = argv;
  let head: string | undefined;
  let keyFile: string | undefined;
  let unknown = false;
  for (let i = 0; i < flags.length; i++) {
    if (flags[i] === '--head') head = flags[++i] ?? '';
    else if (flags[i] === '--audit-key') keyFile = flags[++i] ?? '';
    else unknown = true;
  }
  if (verb !== 'verify' || !file || unknown || (head !== undefined && !/^[0-9a-f]{64}$/.test(head)) || keyFile === '') {
    err.write('Usage: mcp-host audit verify <file> [--head <64-hex hash>] [--audit-key <keyfile>]\n');
    return 2;
  }
  try {
    const key = keyFile === undefined ? undefined : await readAuditKey(keyFile, false);
    const verdict = await verifyAuditFile(file, { key, within: [process.cwd()] });
    if (!verdict.ok) {
      err.write(`${verdict.file}:${verdict.line}: ${verdict.reason}\n`);
      return 1;
    }
    out.write(`${verdict.records.length} records, chain intact, head ${verdict.head}\n`);
    if (!verdict.macs.checked) out.write('MACs not checked (no --audit-key)\n');
    else if (verdict.macs.unsigned) out.write(`MACs valid; the first ${verdict.macs.unsigned} records carry none (written before MACs)\n`);
    else out.write('MACs valid\n');
    if (verdict.firstFile > 0) out.write(`the oldest file kept is number ${verdict.firstFile}: the ones before it were rotated away\n`);
    if (head === undefined) return 0;
    const after = recordsAfterHead(verdict.records, head);
    if (after === undefined) {
      err.write(`head ${head} is not in the chain: records were cut from the log (or it was replaced)\n`);
      return 1;
    }
    out.write(`head ${head} found; ${after} records follow it\n`);
    return 0;
  } catch (error) {
    err.write(`error: ${(error as Error).message}\n`);
    return 1;
  }
}

/**
 * The prompt arguments as the protocol carries them: strings, other JSON values as their JSON text.
 * Arguments over the gate's limits are left as they are (not written out as text, which recurses),
 * for the gate to refuse and audit.
 */
function promptArguments(text: string | undefined): Record<string, string> {
  const raw = parseJsonObject(text, 'The prompt arguments');
  if (argumentLimitProblem(raw)) return raw as Record<string, string>;
  return Object.fromEntries(Object.entries(raw).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]));
}

/**
 * Writes `pin`'s lock file as a policy file (no link at it or on the way below the working folder,
 * a regular file with one name, cut only once it is known to be that file). A set that cannot be
 * pinned (a name listed twice, a number JSON cannot carry) or a file `--pinned` would not read is
 * refused, and nothing is written.
 */
function writeLockFile(file: string, pins: PinSet): void {
  const text = lockFileText(pins);
  const bytes = Buffer.byteLength(text);
  if (bytes > MAX_LOCK_FILE_BYTES)
    throw new LockFileError(`the lock file would be ${bytes} bytes, over the ${MAX_LOCK_FILE_BYTES} that --pinned and the editor read`);
  writePolicyFileSync(file, text, { within: [process.cwd()] });
}

/** Changed instructions, and pinned tools and prompts the server no longer lists, as warnings on stderr. */
function warnOfChanges(pins: PinSet, now: PinSet, err: NodeJS.WritableStream): void {
  const compared = comparePins(pins, now);
  if (compared.instructions.status !== 'same') err.write("warning: the server's instructions changed since they were pinned\n");
  for (const kind of ['tools', 'prompts'] as const) {
    for (const [name, status] of Object.entries(compared[kind])) {
      if (status.status === 'removed')
        err.write(`warning: ${kind === 'tools' ? 'the tool' : 'the prompt'} ${name} is pinned but no longer listed\n`);
    }
  }
}

/** The tools as listed, each with how it compares with its pin (set after the server's members, so a server cannot spoof it). */
function markPinned(tools: readonly Tool[], pins: PinSet, now: PinSet): unknown[] {
  const compared = comparePins(pins, now).tools;
  return tools.map((tool) => {
    const status = compared[tool.name] ?? { status: 'new' };
    return {
      ...tool,
      pinned: status.status === 'changed' ? { status: 'changed', changed: describeChange(status.changed) } : { status: status.status },
    };
  });
}

/** How the tool or prompt a request names compares with the lock file; one the server does not list is `removed` if pinned, else `new`. */
function pinStatusOf(request: GateRequest, pins: PinSet, now: PinSet): PinStatus | undefined {
  if (request.method === 'tools/call') {
    const pin = pinOf(pins, 'tools', request.tool.name);
    if (request.unlisted) return pin ? { status: 'removed' } : { status: 'new' };
    // What the listing says of the name: the tool's own definition, or every one of a name listed twice (a change).
    return compareOne(pin, pinOf(now, 'tools', request.tool.name));
  }
  if (request.method === 'prompts/get') {
    const pin = pinOf(pins, 'prompts', request.name);
    const listed = pinOf(now, 'prompts', request.name);
    if (!listed) return pin ? { status: 'removed' } : { status: 'new' };
    return compareOne(pin, listed);
  }
  return undefined;
}

/**
/**
 * The command line with its program, and an interpreter's script (`node server.js`), made absolute
 * where they name a file from the folder the CLI was run in: the server starts in the first --root,
 * but a person types the command line as their shell reads it.
 */
function fromCallerFolder(words: string[], cwd: string): string[] {
  const absolute = (word: string): string => {
    if (path.isAbsolute(word)) return word;
    const full = path.resolve(cwd, word);
    return existsSync(full) ? full : word;
  };
  const out = [...words];
  // A bare program name (`node`, `npx`) is found on the PATH; only a path is made absolute.
  if (/[\\/]/.test(out[0])) out[0] = absolute(out[0]);
  // The script an interpreter runs, found as it finds it (`--eval` and the like mean none).
  const at = scriptIndex(path.basename(out[0]), out.slice(1));
  if (at >= 0) out[at + 1] = absolute(out[at + 1]);
  return out;
}

/**
 * A verb that sends a gated request (call, read, prompt), sent through the gate; undefined for the
 * other verbs. The tool's definition (its `format: uri` properties for the fence, its hash for the
 * pins and the audit) comes from `definitions`, the listing the pins were compared with, or one
 * asked for when the fence or the audit needs it; a tool the server does not list is `unlisted`.
 * The gate checks that definition, and the client validates and sends with the same one.
 */
async function gatedVerb(
  gate: GatedServer,
  verb: string,
  rest: string[],
  definitions: readonly Tool[] | (() => Promise<Tool[]>) | undefined,
  err: NodeJS.WritableStream,
): Promise<GatedResult<unknown> | undefined> {
  if (verb === 'call' && rest[0]) {
    const args = parseJsonObject(rest[1], 'The tool arguments');
    const listing = typeof definitions === 'function' ? await definitions() : definitions;
    const listed = listing?.find((t) => t.name === rest[0]);
    const tool = listed ?? { name: rest[0], inputSchema: { type: 'object' as const } };
    const run = await gate.callTool(tool, args, { validateInput: true }, { unlisted: !listed });
    if (!run.sent) return run;
    const check = run.result.structuredContentCheck;
    if (check && !check.ok) err.write(`warning: structuredContent does not match the outputSchema: ${check.message}\n`);
    return { ...run, result: run.result.result };
  }
  if (verb === 'read' && rest[0]) return gate.readResource(rest[0]);
  if (verb === 'prompt' && rest[0]) return gate.getPrompt(rest[0], promptArguments(rest[1]));
  return undefined;
}

/** The verbs that send no gated request (and the gated ones given no name). */
async function runVerb(client: ServerClient, verb: string, init: unknown): Promise<unknown> {
  switch (verb) {
    case 'info':
      return init;
    case 'ping':
      return client.ping();
    case 'tools':
      return client.listTools();
    case 'call':
      throw McpError.invalidParams('call needs a tool name');
    case 'resources':
      return client.listResources();
    case 'templates':
      return client.listResourceTemplates();
    case 'read':
      throw McpError.invalidParams('read needs a resource URI');
    case 'prompts':
      return client.listPrompts();
    case 'prompt':
      throw McpError.invalidParams('prompt needs a prompt name');
    default:
      throw McpError.invalidParams(`Unknown verb '${verb}'. Run with --help for the list.`);
  }
}

if (require.main === module) {
  runCli(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error) => {
      process.stderr.write(`error: ${String(error)}\n`);
      process.exit(1);
    },
  );
}
