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
import { promises as fs } from 'node:fs';
import { AuditLog } from '../core/policy/audit';
import { recordsAfterHead, verifyAuditFile } from '../core/policy/auditVerify';
import { createMasker } from '../core/policy/mask';
import type { AuditedServer, AuditSink, ServerRequestMethod } from '../core/policy/types';
import { auditedRoots, elicitationSummary, samplingSummary, startServerRequest } from '../core/policy/serverRequests';
import {
  compareOne,
  comparePins,
  describeChange,
  lockFileText,
  parseLockFile,
  pinOf,
  pinSet,
  pinTool,
  type PinSet,
  type PinStatus,
} from '../core/policy/pins';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { INTERPRETERS } from '../core/servers/sandbox/reach';
import { domainPattern } from '../core/servers/sandbox/domains';
import { runConformance } from './conformance';
import { planServe, runServe, type ServePlan } from './serve';

/** The CLI's version, as its clientInfo and serve's serverInfo say. */
const CLI_VERSION = '0.1.0';

const USAGE = `Usage: mcp-host --stdio "<command line>" [--sandbox [--allow-domain <host>]...] [--protocol <p>] [--timeout <ms>] [--grace <ms>] [--log-level <level>] [--root <dir>]... [--fence off|block] [--audit <file> [--audit-key <keyfile>]] [--pinned <file>] [--verbose] <verb> [args]
       mcp-host --http <url> [--header 'Name: value']... [--protocol <p>] [--timeout <ms>] [--log-level <level>] [--root <dir>]... [--fence off|block] [--audit <file> [--audit-key <keyfile>]] [--pinned <file>] [--verbose] <verb> [args]
       mcp-host --config <file> [--sandbox [--allow-domain <host>]...] [--timeout <ms>] [--grace <ms>] [--root <dir>]... [--fence off|block] [--audit <file> [--audit-key <keyfile>]] [--pinned <name>=<file>]... [--verbose] serve
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
  serve                         be an MCP server on stdio for an agent: every request of its
                                client goes through MCP Host's gate (origin "agent"), until
                                the client closes stdin

serve runs the --stdio or --http server, tools named as the server names them, or every
server of --config FILE, an mcp.json-style file ("servers" as VS Code writes it, or
"mcpServers" as Claude Code and others do) whose entries may use MCP Host's entry keys
(tools.allow/deny, autoApprove, trustAnnotations, sandboxEnabled, sandbox, roots, ...); its
tools and prompts are then <server>__<tool>. A malformed file exits 2 before anything starts.
What would be asked of a person (a changed pinned definition, ...) is refused with an isError
result saying what to allow. With --config, --pinned NAME=FILE pins one server of the file.

--http speaks Streamable HTTP to the URL, or the older HTTP+SSE transport if the server
only knows that; --header adds a header to every request and may be repeated.
--root DIR (repeatable) sets the roots the CLI answers (roots/list) and turns the roots fence
on: a call, read or prompt whose arguments name a path outside every root is refused before
it is sent; a stdio server runs in the first --root. --fence off turns the fence off again;
without --root the current directory is the root and nothing is fenced. Arguments nested deeper
than 64 levels, or over 4 MiB of text, are refused before anything else.
--sandbox (with --stdio only) runs the server in an operating-system sandbox whose boundary is
the --root folders (else the current directory), whatever --fence says: it reads and writes
them, reads the system and its own installation, uses its launcher's cache (npx: the npm cache,
offline), sees an empty home and a private /tmp, has no network and no capabilities. Linux needs
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
writers (CLI runs, VS Code windows) may share it: each append takes <file>.lock.
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
FILE exits 2 before the server is started.
Prints JSON on stdout; errors go to stderr with a non-zero exit code.`;

const PROTOCOLS: readonly ProtocolChoice[] = ['auto', '2026-07-28', '2025-11-25'];

interface CliArgs {
  stdio?: string;
  http?: string;
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
  audit?: string;
  auditKey?: string;
  sandbox: boolean;
  allowDomains: string[];
  pinned?: string;
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
    else if (a === '--audit') args.audit = argv[++i];
    else if (a === '--audit-key') args.auditKey = argv[++i];
    else if (a === '--sandbox') args.sandbox = true;
    else if (a === '--allow-domain') args.allowDomains.push(argv[++i] ?? '');
    else if (a === '--pinned') args.pinnedAll.push((args.pinned = argv[++i]) ?? '');
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

export async function runCli(argv: string[], out = process.stdout, err = process.stderr): Promise<number> {
  if (argv[0] === 'conformance') return runConformance(argv.slice(1), process.env, out, err);
  if (argv[0] === 'audit') return runAuditVerb(argv.slice(1), out, err);
  const args = parseArgs(argv);
  if (args.verb === 'serve' || args.config !== undefined) return serveVerb(args, out, err);
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
  if (args.sandbox && !words) {
    err.write('--sandbox works with --stdio only: an HTTP server is not a process mcp-host starts\n');
    return 2;
  }
  const fenced = args.roots.length > 0 && args.fence !== 'off';
  const protocol = (args.protocol ?? 'auto') as ProtocolChoice;
  if (!PROTOCOLS.includes(protocol)) {
    err.write(`--protocol needs one of ${PROTOCOLS.join(', ')}\n`);
    return 2;
  }
  let pins: PinSet | undefined;
  if (args.pinned !== undefined) {
    try {
      pins = parseLockFile(readFileSync(args.pinned, 'utf8'));
    } catch (error) {
      err.write(`--pinned ${args.pinned}: ${(error as Error).message}\n`);
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
  const audit = args.audit === undefined ? undefined : cliAuditLog(args.audit, key, err);
  const audited = cliServer(words ? { words, cwd: serverCwd! } : { url: args.http!, headers }, sandbox);
  const newClient = (choice: ProtocolChoice): McpClient => {
    const transport: Transport = stdio ? new StdioTransport(stdio) : new HttpTransport({ url: args.http!, headers });
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
    if (args.verb === 'pin') {
      const pinned = await offeredPins(client);
      writeFileSync(args.rest[0], lockFileText(pinned));
      out.write(
        `${JSON.stringify({ file: args.rest[0], tools: Object.keys(pinned.tools), prompts: Object.keys(pinned.prompts) }, null, 2)}\n`,
      );
      return 0;
    }
    const now = pins && (await offeredPins(client));
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
        pin: pins && now ? pinStatusOf(request, pins, now) : undefined,
      }),
      server: () => audited,
      audit,
    });
    const gated = await gatedVerb(gate, client, args.verb, args.rest, fenced || pins !== undefined || audit !== undefined, err);
    let result: unknown;
    if (gated) {
      if (!gated.sent) {
        err.write(`refused (nothing was sent): ${gated.reason}\n`);
        return 1;
      }
      result = gated.result;
    } else {
      result = await runVerb(client, args.verb, { ...init, era: client.era });
      if (args.verb === 'tools' && pins && now) result = markPinned(result as Tool[], pins, now);
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
    await audit?.flushed();
  }
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
  if (args.allowDomains.length && !args.sandbox)
    return '--allow-domain needs --sandbox: without it the server has the whole network already';
  const badDomain = args.allowDomains.find((d) => domainPattern(d) === undefined);
  if (badDomain !== undefined) return `--allow-domain needs a host name, an address or *.suffix, got ${JSON.stringify(badDomain)}`;
  if (args.auditKey !== undefined && args.audit === undefined) return '--audit-key needs --audit';
  return undefined;
}

/**
 * `serve`: checks everything it reads before anything starts (exit 2 naming what is wrong), then
 * serves until its client goes (./serve.ts).
 */
async function serveVerb(args: CliArgs, out: NodeJS.WritableStream, err: NodeJS.WritableStream): Promise<number> {
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
  let plan: ServePlan;
  let key: Buffer | undefined;
  try {
    const cwd = process.cwd();
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
  const audit = args.audit === undefined ? undefined : cliAuditLog(args.audit, key, err);
  void out;
  return runServe(
    plan,
    {
      stdio: undefined,
      config: args.config,
      roots: args.roots,
      fence: args.fence as 'off' | 'block' | undefined,
      sandbox: args.sandbox,
      allowDomains: args.allowDomains,
      pinned: args.pinnedAll,
      timeoutMs: args.timeoutMs,
      graceMs: args.graceMs,
      verbose: args.verbose,
      audit,
      cwd: process.cwd(),
      env: cliServerEnvironment(process.env),
      version: CLI_VERSION,
    },
    err,
  );
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

/** The --audit file; a write error is a warning, and the command goes on. */
function cliAuditLog(file: string, key: Buffer | undefined, err: NodeJS.WritableStream): AuditLog {
  const { masker } = createMasker();
  return new AuditLog({ file, masker, key, onError: (e) => err.write(`warning: the audit log could not be written: ${e.message}\n`) });
}

/** The key of --audit-key: 32 bytes as 64 hex digits; created (mode 0600) when missing and `create` is set. */
async function readAuditKey(file: string, create: boolean): Promise<Buffer> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (error) {
    if (!create || (error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    text = randomBytes(32).toString('hex');
    // 'wx': two runs creating it at once keep the first one's key.
    await fs.writeFile(file, `${text}\n`, { mode: 0o600, flag: 'wx' }).catch(async (e: NodeJS.ErrnoException) => {
      if (e.code !== 'EEXIST') throw e;
      text = await fs.readFile(file, 'utf8');
    });
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
    const verdict = await verifyAuditFile(file, { key });
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

/** What the server offers now, pinned: its tools and prompts (when it declares them) and its instructions. */
async function offeredPins(client: McpClient): Promise<PinSet> {
  const capabilities = client.serverCapabilities ?? {};
  return pinSet({
    tools: capabilities.tools ? await client.listTools() : [],
    prompts: capabilities.prompts ? await client.listPrompts() : [],
    instructions: client.instructions,
  });
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
function markPinned(tools: Tool[], pins: PinSet, now: PinSet): unknown[] {
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
    return compareOne(pin, pinTool(request.tool));
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
  if (INTERPRETERS.test(path.basename(out[0]))) {
    const at = out.findIndex((w, i) => i > 0 && !w.startsWith('-'));
    if (at > 0) out[at] = absolute(out[at]);
  }
  return out;
}

/**
 * A verb that sends a gated request (call, read, prompt), sent through the gate; undefined for the
 * other verbs. The tool's definition (its `format: uri` properties for the fence, its hash for the
 * pins and the audit) is asked for only when one of them is on; a tool the server does not list is `unlisted`.
 */
async function gatedVerb(
  gate: GatedServer,
  client: ServerClient,
  verb: string,
  rest: string[],
  needsDefinition: boolean,
  err: NodeJS.WritableStream,
): Promise<GatedResult<unknown> | undefined> {
  if (verb === 'call' && rest[0]) {
    const args = parseJsonObject(rest[1], 'The tool arguments');
    const listed = needsDefinition ? (await client.listTools()).find((t) => t.name === rest[0]) : undefined;
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
