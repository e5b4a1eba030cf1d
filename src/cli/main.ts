import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { thisMachine, type GateRequest } from '../core/policy/gate';
import { runGated } from '../core/policy/run';
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
  type LoggingLevel,
  type Root,
  type ProtocolChoice,
  type Transport,
  cliServerEnvironment,
  sandboxedParams,
  SandboxUnavailableError,
  auditedSandbox,
  type SandboxedParams,
  type StdioServerParams,
} from '../core';
import { createHash } from 'node:crypto';
import { AuditLog, verifyAuditFile } from '../core/policy/audit';
import { createMasker } from '../core/policy/mask';
import type { AuditedServer, AuditSink, ServerRequestMethod } from '../core/policy/types';
import { auditedRoots, elicitationSummary, samplingSummary, startServerRequest } from '../core/policy/serverRequests';
import { runConformance } from './conformance';

const USAGE = `Usage: mcp-host --stdio "<command line>" [--sandbox] [--protocol <p>] [--timeout <ms>] [--grace <ms>] [--log-level <level>] [--root <dir>]... [--fence off|block] [--audit <file>] [--verbose] <verb> [args]
       mcp-host --http <url> [--header 'Name: value']... [--protocol <p>] [--timeout <ms>] [--log-level <level>] [--root <dir>]... [--fence off|block] [--audit <file>] [--verbose] <verb> [args]
       mcp-host audit verify <file>

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

--http speaks Streamable HTTP to the URL, or the older HTTP+SSE transport if the server
only knows that; --header adds a header to every request and may be repeated.
--root DIR (repeatable) sets the roots the CLI answers (roots/list) and turns the roots fence
on: a call, read or prompt whose arguments name a path outside every root is refused before
it is sent. --fence off turns the fence off again; without --root the current directory is the
root and nothing is fenced.
--sandbox (with --stdio only) runs the server in an operating-system sandbox whose boundary is
the --root folders (else the current directory), whatever --fence says: it reads and writes
them, reads the system and its own installation, uses its launcher's cache (npx: the npm cache,
offline), sees an empty home and a private /tmp, has no network and no capabilities. Linux needs
bubblewrap (bwrap); macOS uses sandbox-exec; elsewhere, or without them, it exits 1 and says why.
--protocol is auto (ask with server/discover, else initialize), 2026-07-28 or 2025-11-25.
--timeout is the per-request timeout (60000); --grace how long each shutdown step waits
(stdin closed, then SIGTERM, then SIGKILL; 500).
--log-level asks the server to send log messages of this level or worse (debug, info, notice,
warning, error, critical, alert, emergency): logging/setLevel to a 2025-11-25 server, the level
in every request's _meta to a 2026-07-28 one; with --verbose they are printed on stderr.
--audit appends a chained record of each call, read and prompt (origin "cli"), and of each
roots, sampling and elicitation request of the server (origin "server"), to the file;
audit verify checks such a file (and its rotated files) and exits 1 at the first broken line.
Prints JSON on stdout; errors go to stderr with a non-zero exit code.`;

const PROTOCOLS: readonly ProtocolChoice[] = ['auto', '2026-07-28', '2025-11-25'];

interface CliArgs {
  stdio?: string;
  http?: string;
  headers: string[];
  timeoutMs?: number;
  graceMs?: number;
  verbose: boolean;
  protocol?: string;
  logLevel?: string;
  roots: string[];
  fence?: string;
  audit?: string;
  sandbox: boolean;
  verb?: string;
  rest: string[];
}

function parseArgs(argv: string[]): CliArgs {
  const args: CliArgs = { verbose: false, sandbox: false, headers: [], roots: [], rest: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--stdio') args.stdio = argv[++i];
    else if (a === '--http') args.http = argv[++i];
    else if (a === '--header') args.headers.push(argv[++i] ?? '');
    else if (a === '--timeout') args.timeoutMs = Number(argv[++i]);
    else if (a === '--grace') args.graceMs = Number(argv[++i]);
    else if (a === '--protocol') args.protocol = argv[++i];
    else if (a === '--log-level') args.logLevel = argv[++i];
    else if (a === '--root') args.roots.push(argv[++i] ?? '');
    else if (a === '--fence') args.fence = argv[++i];
    else if (a === '--audit') args.audit = argv[++i];
    else if (a === '--sandbox') args.sandbox = true;
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
  for (const [flag, value] of [
    ['--timeout', args.timeoutMs],
    ['--grace', args.graceMs],
  ] as const) {
    if (value !== undefined && !(Number.isFinite(value) && value >= 0)) {
      err.write(`${flag} needs a number of milliseconds\n`);
      return 2;
    }
  }
  if (args.logLevel !== undefined && !(LOGGING_LEVELS as readonly string[]).includes(args.logLevel)) {
    err.write(`--log-level needs one of ${LOGGING_LEVELS.join(', ')}\n`);
    return 2;
  }
  if (args.fence !== undefined && args.fence !== 'off' && args.fence !== 'block') {
    err.write('--fence needs off or block\n');
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
  // A one-shot command should not linger: servers that ignore stdin closing get SIGTERM soon.
  let stdio: StdioServerParams | undefined = words && {
    command: words[0],
    args: words.slice(1),
    baseEnv: cliServerEnvironment(process.env),
    shutdownGraceMs: args.graceMs ?? 500,
  };
  let sandbox: SandboxedParams | undefined;
  if (stdio && args.sandbox) {
    try {
      sandbox = sandboxedParams(stdio, cliRootPaths(process.cwd(), args.roots), undefined);
    } catch (error) {
      if (!(error instanceof SandboxUnavailableError)) throw error;
      err.write(`error: --sandbox: ${error.message}\n`);
      return 1;
    }
    stdio = sandbox.params;
    if (args.verbose) err.write(`[cli] ${sandbox.description}\n`);
  }
  const audit = args.audit === undefined ? undefined : cliAuditLog(args.audit, err);
  const audited = cliServer(args.stdio ?? args.http!, sandbox);
  const newClient = (choice: ProtocolChoice): McpClient => {
    const transport: Transport = stdio ? new StdioTransport(stdio) : new HttpTransport({ url: args.http!, headers });
    const made = new McpClient(transport, {
      clientInfo: { name: 'mcp-host-cli', version: '0.1.0' },
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
    const run = () => runVerb(client, args.verb!, args.rest, { ...init, era: client.era }, err);
    const request = await gatedRequest(client, args.verb, args.rest, fenced);
    let result: unknown;
    if (request) {
      // The same gate as the editor's: there is nobody to ask, so the fence blocks (--root) or is off.
      const gated = await runGated({
        request,
        context: {
          origin: 'cli',
          policy: { tools: {}, autoApprove: [], trustAnnotations: false },
          alwaysAllowed: false,
          fence: fenced ? 'block' : 'off',
          roots: cliRoots(process.cwd(), args.roots),
          machine: thisMachine(),
        },
        server: audited,
        audit,
        auditedArguments:
          (request.method === 'tools/call' || request.method === 'prompts/get') && Object.keys(request.arguments).length
            ? request.arguments
            : undefined,
        send: run,
        outcomeOf: (r) => ((r as CallToolResult).isError ? { kind: 'isError' } : { kind: 'ok' }),
      });
      if (!gated.sent) {
        err.write(`refused (nothing was sent): ${gated.reason}\n`);
        return 1;
      }
      result = gated.result;
    } else result = await run();
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
    await audit?.flushed();
  }
}

/** The server as the CLI's audit names it: its command line or URL, masked, and a hash of it. */
function cliServer(server: string, sandbox: SandboxedParams | undefined): AuditedServer {
  const { masker } = createMasker();
  return {
    name: masker.maskText(server).text,
    scope: 'user',
    definition: createHash('sha256').update(server).digest('hex'),
    ...(sandbox && { sandbox: auditedSandbox(sandbox.reach) }),
  };
}

/** The --audit file; a write error is a warning, and the command goes on. */
function cliAuditLog(file: string, err: NodeJS.WritableStream): AuditLog {
  const { masker } = createMasker();
  return new AuditLog({ file, masker, onError: (e) => err.write(`warning: the audit log could not be written: ${e.message}\n`) });
}

async function runAuditVerb(argv: string[], out: NodeJS.WritableStream, err: NodeJS.WritableStream): Promise<number> {
  if (argv[0] !== 'verify' || !argv[1]) {
    err.write('Usage: mcp-host audit verify <file>\n');
    return 2;
  }
  try {
    const verdict = await verifyAuditFile(argv[1]);
    if (verdict.ok) {
      out.write(`${verdict.records.length} records, chain intact\n`);
      return 0;
    }
    err.write(`${verdict.file}:${verdict.line}: ${verdict.reason}\n`);
    return 1;
  } catch (error) {
    err.write(`error: ${(error as Error).message}\n`);
    return 1;
  }
}

/** The prompt arguments as the protocol carries them: strings, other JSON values as their JSON text. */
function promptArguments(text: string | undefined): Record<string, string> {
  const raw = parseJsonObject(text, 'The prompt arguments');
  return Object.fromEntries(Object.entries(raw).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]));
}

/**
 * The request the gate decides on for a verb that sends one (call, read, prompt), else undefined.
 * The tool's schema (its `format: uri` properties) is asked for only when the fence is on.
 */
async function gatedRequest(client: McpClient, verb: string, rest: string[], fenced: boolean): Promise<GateRequest | undefined> {
  if (verb === 'call' && rest[0]) {
    const listed = fenced ? (await client.listTools()).find((t) => t.name === rest[0]) : undefined;
    const tool = listed ?? { name: rest[0], inputSchema: { type: 'object' as const } };
    return { method: 'tools/call', tool, arguments: parseJsonObject(rest[1], 'The tool arguments') };
  }
  if (verb === 'read' && rest[0]) return { method: 'resources/read', uri: rest[0] };
  if (verb === 'prompt' && rest[0]) return { method: 'prompts/get', name: rest[0], arguments: promptArguments(rest[1]) };
  return undefined;
}

async function runVerb(client: McpClient, verb: string, rest: string[], init: unknown, err: NodeJS.WritableStream): Promise<unknown> {
  switch (verb) {
    case 'info':
      return init;
    case 'ping':
      return client.ping();
    case 'tools':
      return client.listTools();
    case 'call': {
      if (!rest[0]) throw McpError.invalidParams('call needs a tool name');
      const outcome = await client.callTool(rest[0], parseJsonObject(rest[1], 'The tool arguments'), { validateInput: true });
      if (outcome.structuredContentCheck && !outcome.structuredContentCheck.ok) {
        err.write(`warning: structuredContent does not match the outputSchema: ${outcome.structuredContentCheck.message}\n`);
      }
      return outcome.result;
    }
    case 'resources':
      return client.listResources();
    case 'templates':
      return client.listResourceTemplates();
    case 'read':
      if (!rest[0]) throw McpError.invalidParams('read needs a resource URI');
      return client.readResource(rest[0]);
    case 'prompts':
      return client.listPrompts();
    case 'prompt':
      if (!rest[0]) throw McpError.invalidParams('prompt needs a prompt name');
      return client.getPrompt(rest[0], promptArguments(rest[1]));
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
