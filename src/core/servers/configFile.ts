/**
 * An `mcp.json`-style file as `mcp-host --config` reads it (`serve` and `scan` alike): `servers` as VS Code writes it,
 * or `mcpServers` as Claude Code, Claude Desktop, Cursor, Copilot CLI and Gemini CLI do. Each entry
 * may also use MCP Host's own server-entry keys (`tools.allow`/`deny`, `autoApprove`,
 * `trustAnnotations`, `sandboxEnabled`/`sandbox`, `roots`, …), with the meaning they have in
 * settings; the other clients' own keys that have a counterpart are mapped to it (`disabled`,
 * `alwaysAllow`, a `type` of `local`/`sse`, Copilot's `tools` list, Gemini's `httpUrl`,
 * `includeTools`/`excludeTools` and `timeout`), and the rest is left out with a warning. Variables:
 * `${workspaceFolder}` (the folder given), `${userHome}`, `${env:NAME}`, and in an `mcpServers`
 * file Claude Code's `${NAME}` and `${NAME:-default}`; `${input:…}` needs the editor. A file that
 * cannot be read as one (not JSON, no servers) is a `ConfigFileError`; an entry that cannot be used is
 * a problem naming it, and the others are still read: each verb decides what a problem costs. Pure:
 * the caller reads the file and the environment.
 */
import type { ParseError } from 'jsonc-parser';
import { jsonc } from '../jsonc';
import { isObject } from '../protocol/classify';
import { parseServerDefinitions, type ServerDefinition, type ServerOrigin } from './definition';
import { SERVER_ENTRY_SCHEMA } from './schema';

/** A file that cannot be served: what is wrong, naming the entry when it is one. */
export class ConfigFileError extends Error {}

export interface ConfigFile {
  /** The entries that can be used. */
  definitions: ServerDefinition[];
  /** An entry that cannot be used, with why (settings would refuse it, a variable cannot be resolved). */
  problems: Array<{ name: string; message: string }>;
  /** Keys left out, variables left empty: said on stderr, nothing stops. */
  warnings: string[];
  /** The line (from 1) of each entry's name in the file, for a SARIF location. */
  lines: Record<string, number>;
}

export interface ConfigContext {
  /** What `${workspaceFolder}` means, and where relative paths of an entry start. */
  folder: string;
  home: string;
  env: Record<string, string | undefined>;
  /** The scope the definitions get: what their annotations are trusted by default and how the audit names them. */
  origin?: ServerOrigin;
}

const OUR_KEYS = new Set(SERVER_ENTRY_SCHEMA.oneOf.flatMap((variant) => Object.keys(variant.properties)));

/** Reads the file's text into definitions; a `ConfigFileError` says what is wrong with the file as a whole. */
export function parseConfigFile(text: string, context: ConfigContext): ConfigFile {
  const errors: ParseError[] = [];
  const { parse, parseTree, findNodeAtLocation, printParseErrorCode } = jsonc();
  const doc = parse(text, errors, { allowTrailingComma: true, disallowComments: false }) as unknown;
  if (errors.length)
    throw new ConfigFileError(`not valid JSON: ${printParseErrorCode(errors[0].error)} at line ${lineOf(text, errors[0].offset)}`);
  if (!isObject(doc)) throw new ConfigFileError('not a JSON object');
  const claudeStyle = !isObject(doc.servers) && isObject(doc.mcpServers);
  const key = isObject(doc.servers) ? 'servers' : 'mcpServers';
  const servers = isObject(doc.servers) ? doc.servers : isObject(doc.mcpServers) ? doc.mcpServers : undefined;
  if (!servers) throw new ConfigFileError('no "servers" or "mcpServers" object in the file');
  const sandbox = isObject(doc.sandbox) ? doc.sandbox : undefined;
  const warnings: string[] = [];
  const problems: ConfigFile['problems'] = [];
  const raw: Record<string, unknown> = {};
  for (const [name, entry] of Object.entries(servers)) {
    if (!isObject(entry)) {
      problems.push({ name, message: 'the entry must be an object' });
      continue;
    }
    const mapped = mapEntry(entry, (k) => warnings.push(`server "${name}": "${k}" has no meaning here and is left out`));
    // VS Code's `sandbox` sits at the top of mcp.json and covers its stdio servers.
    if (sandbox && mapped.type !== 'http' && mapped.sandbox === undefined) mapped.sandbox = structuredClone(sandbox);
    try {
      raw[name] = substitute(mapped, context, claudeStyle);
    } catch (error) {
      if (!(error instanceof ConfigFileError)) throw error;
      problems.push({ name, message: error.message });
    }
  }
  const { definitions, diagnostics } = parseServerDefinitions(raw, context.origin ?? { scope: 'workspace' });
  for (const d of diagnostics) problems.push({ name: d.name, message: d.message });
  const tree = parseTree(text, [], { allowTrailingComma: true, disallowComments: false });
  const lines: Record<string, number> = {};
  for (const name of Object.keys(servers)) {
    const at = tree && findNodeAtLocation(tree, [key, name])?.parent?.offset;
    lines[name] = at === undefined ? 1 : lineOf(text, at);
  }
  return { definitions, problems, warnings, lines };
}

/** The line (from 1) of an offset in the text. */
function lineOf(text: string, offset: number): number {
  let line = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) line++;
  return line;
}

/** Another client's keys, as MCP Host's; MCP Host's own kept as they are; the rest reported and left out. */
function mapEntry(entry: Record<string, unknown>, dropped: (key: string) => void): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(entry)) {
    switch (key) {
      case 'type': {
        const type = typeof value === 'string' ? value.toLowerCase() : value;
        out.type = type === 'local' ? 'stdio' : type === 'sse' || type === 'streamable-http' || type === 'streamablehttp' ? 'http' : type;
        break;
      }
      case 'disabled':
        if (value === true) out.enabled = false;
        break;
      case 'alwaysAllow':
        out.autoApprove = value;
        break;
      case 'httpUrl':
        out.type = 'http';
        out.url = value;
        break;
      case 'timeout':
        if (typeof value === 'number') out.requestTimeoutMs = Math.max(1000, Math.round(value));
        break;
      case 'includeTools':
        out.tools = { ...(out.tools as object), allow: value };
        break;
      case 'excludeTools':
        out.tools = { ...(out.tools as object), deny: value };
        break;
      case 'tools':
        // Copilot CLI's list of tool names (`["*"]` for all); MCP Host's is an object.
        if (Array.isArray(value)) {
          if (!value.includes('*')) out.tools = { ...(out.tools as object), allow: value };
        } else out.tools = { ...(out.tools as object), ...(isObject(value) ? value : {}) };
        break;
      default:
        if (OUR_KEYS.has(key)) out[key] = value;
        else dropped(key);
    }
  }
  if (out.type === undefined && out.command === undefined && out.url !== undefined) out.type = 'http';
  if (out.type === 'stdio' && out.url !== undefined && out.command === undefined) out.type = 'http';
  if (Array.isArray(out.args)) out.args = out.args.map((a) => (typeof a === 'number' || typeof a === 'boolean' ? String(a) : a));
  if (isObject(out.env))
    out.env = Object.fromEntries(
      Object.entries(out.env).map(([k, v]) => [k, typeof v === 'number' || typeof v === 'boolean' ? String(v) : v]),
    );
  return out;
}

const VARIABLE = /\$\{([^}]*)\}/g;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Every string of the entry with its variables replaced; one that cannot be is a `ConfigFileError` (the caller names the entry). */
function substitute(value: unknown, context: ConfigContext, claudeStyle: boolean): unknown {
  if (typeof value === 'string') return value.replace(VARIABLE, (_all, body: string) => variable(body, context, claudeStyle));
  if (Array.isArray(value)) return value.map((v) => substitute(v, context, claudeStyle));
  if (isObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitute(v, context, claudeStyle)]));
  return value;
}

function variable(body: string, context: ConfigContext, claudeStyle: boolean): string {
  if (body === 'workspaceFolder') return context.folder;
  if (body === 'userHome') return context.home;
  if (body.startsWith('env:')) return context.env[body.slice(4)] ?? '';
  if (body.startsWith('input:'))
    throw new ConfigFileError(`\${${body}} is asked for by the editor; give the value in the entry's env instead`);
  // Claude Code's own: ${NAME} and ${NAME:-default}.
  const fallback = body.indexOf(':-');
  const name = fallback === -1 ? body : body.slice(0, fallback);
  if (claudeStyle && ENV_NAME.test(name)) {
    const value = context.env[name];
    if (value !== undefined) return value;
    if (fallback !== -1) return body.slice(fallback + 2);
    throw new ConfigFileError(`\${${name}} is used, and the environment variable ${name} is not set`);
  }
  throw new ConfigFileError(`unknown variable \${${body}}`);
}
