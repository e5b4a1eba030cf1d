import { createHash } from 'node:crypto';
import type { FlowLabelSettings } from '../scan/labels';
import type { ProtocolChoice } from '../client/era';
import type { LoggingLevel } from '../protocol/types';
import { checkWith, type Validate } from '../schema/validator';
import * as entryValidators from './entryValidators';
import { SERVER_ENTRY_SCHEMA } from './schema';
import { stableStringify } from '../protocol/stableStringify';
import type { SandboxSettings } from './sandbox/settings';

/** Where a definition came from. Workspace and folder definitions need trust and consent. */
export type ServerScope = 'user' | 'workspace' | 'folder';

export interface ServerOrigin {
  scope: ServerScope;
  /** The folder (URI string) a folder-scoped definition belongs to. */
  folderUri?: string;
}

export interface SamplingPolicy {
  mode: 'ask' | 'allow' | 'deny';
  models: string[];
  maxTokensPerRequest?: number;
  maxTokensPerHour?: number;
  maxRequestsPerMinute?: number;
}

interface CommonDefinition {
  name: string;
  origin: ServerOrigin;
  enabled: boolean;
  autostart: boolean;
  startupTimeoutMs?: number;
  requestTimeoutMs?: number;
  tools: { allow?: string[]; deny?: string[] };
  autoApprove: string[];
  roots: string[];
  sampling: SamplingPolicy;
  /** Sent with logging/setLevel; changing it does not restart the server (see definitionHash). */
  logLevel: LoggingLevel;
  /** Whether `readOnlyHint` may skip the tool confirmation; by default only for user-scope servers. */
  trustAnnotations: boolean;
  /** The protocol era to speak; `auto` probes `server/discover` first. */
  protocol: ProtocolChoice;
  /** Offered to VS Code's chat through MCP Host's gateway (src/core/gateway/); changing it does not restart the server. */
  shareWithChat: boolean;
  /** The flow guard's labels of its tools, as written (../scan/flowGuard.ts); absent when not written. */
  flowLabels?: FlowLabelSettings;
}

export interface StdioServerDefinition extends CommonDefinition {
  type: 'stdio';
  command: string;
  args: string[];
  env: Record<string, string | null>;
  envFile?: string;
  cwd?: string;
  /** Run in the operating-system sandbox whose boundary is the server's roots (src/core/servers/sandbox/): as written, then with the person's default (`withSandboxDefault`). */
  sandboxEnabled?: boolean;
  /** Set by `withSandboxDefault` when the person's default would sandbox this server: a workspace's `false` is then a loosening. */
  sandboxByDefault?: true;
  /** VS Code's `sandbox` object: what the sandbox lets it reach beyond the roots. */
  sandbox?: SandboxSettings;
}

export interface HttpServerDefinition extends CommonDefinition {
  type: 'http';
  url: string;
  headers: Record<string, string>;
}

export type ServerDefinition = StdioServerDefinition | HttpServerDefinition;

export interface DefinitionDiagnostic {
  name: string;
  origin: ServerOrigin;
  message: string;
}

// Generated from SERVER_ENTRY_SCHEMA by scripts/settings-validators.js: reading the settings needs no Ajv.
const VALIDATORS: Record<'stdio' | 'http', Validate> = entryValidators;
const RESERVED_NAME = /^\s*$|[/\\]/;

/**
 * Turns one settings scope's raw `mcpHost.servers` value into definitions. Each invalid entry
 * becomes a diagnostic of its own; the valid ones are kept.
 */
export function parseServerDefinitions(
  raw: unknown,
  origin: ServerOrigin,
): { definitions: ServerDefinition[]; diagnostics: DefinitionDiagnostic[] } {
  const definitions: ServerDefinition[] = [];
  const diagnostics: DefinitionDiagnostic[] = [];
  if (raw === undefined || raw === null) return { definitions, diagnostics };
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    diagnostics.push({ name: '(all)', origin, message: 'mcpHost.servers must be an object whose keys are server names' });
    return { definitions, diagnostics };
  }
  for (const [name, entry] of Object.entries(raw as Record<string, unknown>)) {
    if (RESERVED_NAME.test(name)) {
      diagnostics.push({ name, origin, message: 'a server name must not be empty or contain / or \\' });
      continue;
    }
    const problem = checkEntry(entry);
    if (problem) {
      diagnostics.push({ name, origin, message: problem });
      continue;
    }
    definitions.push(toDefinition(name, entry as Record<string, unknown>, origin));
  }
  return { definitions, diagnostics };
}

function checkEntry(entry: unknown): string | undefined {
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return 'the entry must be an object';
  const e = entry as Record<string, unknown>;
  // Pick the variant first, so the message is about the fields the person meant to write.
  const kind = e.type === 'http' ? 'http' : e.type === undefined || e.type === 'stdio' ? 'stdio' : undefined;
  if (!kind) return `unknown type ${JSON.stringify(e.type)}: use "stdio" or "http"`;
  const variant = SERVER_ENTRY_SCHEMA.oneOf[kind === 'http' ? 1 : 0];
  const unknown = Object.keys(e).filter((k) => !(k in variant.properties));
  if (unknown.length) {
    return `unknown ${unknown.length > 1 ? 'properties' : 'property'} ${unknown.map((k) => JSON.stringify(k)).join(', ')} for a ${variant.title}`;
  }
  const check = checkWith(VALIDATORS[kind], entry);
  return check.ok ? undefined : check.message.replace(/^\(root\) /, '');
}

function toDefinition(name: string, e: Record<string, unknown>, origin: ServerOrigin): ServerDefinition {
  const tools = (e.tools as CommonDefinition['tools'] | undefined) ?? {};
  const common: CommonDefinition = {
    name,
    origin,
    enabled: e.enabled !== false,
    autostart: e.autostart !== false,
    startupTimeoutMs: e.startupTimeoutMs as number | undefined,
    requestTimeoutMs: e.requestTimeoutMs as number | undefined,
    tools: { allow: tools.allow, deny: tools.deny },
    autoApprove: (e.autoApprove as string[] | undefined) ?? [],
    roots: (e.roots as string[] | undefined) ?? [],
    sampling: { mode: 'ask', models: [], ...(e.sampling as Partial<SamplingPolicy> | undefined) },
    logLevel: (e.logLevel as LoggingLevel | undefined) ?? 'info',
    // A workspace's settings may come with a repository: its servers' claims are not the person's.
    trustAnnotations: typeof e.trustAnnotations === 'boolean' ? e.trustAnnotations : origin.scope === 'user',
    protocol: (e.protocol as ProtocolChoice | undefined) ?? 'auto',
    shareWithChat: e.shareWithChat === true,
    // Present only when written, so the hash of every definition written before the setting existed stays the same.
    ...(e.flowLabels !== undefined ? { flowLabels: e.flowLabels as FlowLabelSettings } : {}),
  };
  if (e.type === 'http') {
    return { ...common, type: 'http', url: e.url as string, headers: (e.headers as Record<string, string> | undefined) ?? {} };
  }
  return {
    ...common,
    type: 'stdio',
    command: e.command as string,
    args: (e.args as string[] | undefined) ?? [],
    env: (e.env as Record<string, string | null> | undefined) ?? {},
    envFile: e.envFile as string | undefined,
    cwd: e.cwd as string | undefined,
    // Present only when written, so the hash of every definition written before the setting existed stays the same.
    ...(typeof e.sandboxEnabled === 'boolean' ? { sandboxEnabled: e.sandboxEnabled } : {}),
    ...(e.sandbox !== undefined ? { sandbox: e.sandbox as SandboxSettings } : {}),
  };
}

/**
 * Merges scopes: a name defined in a more specific scope (folder over workspace over user)
 * replaces the less specific one. Later entries in `layers` are more specific.
 */
export function mergeDefinitions(layers: ServerDefinition[][]): ServerDefinition[] {
  const byName = new Map<string, ServerDefinition>();
  for (const layer of layers) for (const def of layer) byName.set(def.name, def);
  return [...byName.values()];
}

/**
 * A stable hash of what it takes to run the server: a changed hash means restart. The log level
 * is left out: a running server is told the new one (`ServerHandle.adopt`). So is a user server's
 * sharing with the chat, which only opens or closes the gateway's route to the same running server;
 * a workspace or folder server that starts sharing is a loosening the launch consent must show,
 * so it counts (restart, consent), and one that does not share hashes as before the setting existed.
 */
export function definitionHash(def: ServerDefinition): string {
  const { logLevel: _live, shareWithChat, ...rest } = def;
  const launch = shareWithChat && def.origin.scope !== 'user' ? { ...rest, shareWithChat } : rest;
  return createHash('sha256').update(stableStringify(launch)).digest('hex').slice(0, 16);
}

/**
 * Hash of what a person consents to run, as written in settings: command, args, cwd, env and
 * envFile of a stdio server; url and headers of an HTTP one. What the server may then do without
 * asking is the other half of the consent (`policyGrant`, compared by `launchCovers`).
 */
export function launchHash(def: ServerDefinition): string {
  let hash = launchHashes.get(def);
  if (hash === undefined) {
    const launch =
      def.type === 'stdio' ? { c: def.command, a: def.args, d: def.cwd, e: def.env, f: def.envFile } : { u: def.url, h: def.headers };
    hash = createHash('sha256').update(stableStringify(launch)).digest('hex').slice(0, 16);
    launchHashes.set(def, hash);
  }
  return hash;
}

/** By definition object: the editor keys its answers and pins by it on every call, and a definition is replaced, never changed in place. */
const launchHashes = new WeakMap<ServerDefinition, string>();

/** Why settings would refuse this one entry, or undefined when they accept it (the import flow's check). */
export function definitionProblem(name: string, entry: Record<string, unknown>): string | undefined {
  return parseServerDefinitions({ [name]: entry }, { scope: 'user' }).diagnostics[0]?.message;
}
