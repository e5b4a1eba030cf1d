/**
 * An `mcp.json`-style file as `mcp-host serve --config` reads it: `servers` as VS Code writes it,
 * or `mcpServers` as Claude Code, Claude Desktop, Cursor, Copilot CLI and Gemini CLI do. Each entry
 * may also use MCP Host's own server-entry keys (`tools.allow`/`deny`, `autoApprove`,
 * `trustAnnotations`, `sandboxEnabled`/`sandbox`, `roots`, …), with the meaning they have in
 * settings; the other clients' own keys that have a counterpart are mapped to it (`disabled`,
 * `alwaysAllow`, a `type` of `local`/`sse`, Copilot's `tools` list, Gemini's `httpUrl`,
 * `includeTools`/`excludeTools` and `timeout`), and the rest is left out with a warning. Variables:
 * `${workspaceFolder}` (the folder given), `${userHome}`, `${env:NAME}`, and in an `mcpServers`
 * file Claude Code's `${NAME}` and `${NAME:-default}`; `${input:…}` needs the editor. Pure: the
 * caller reads the file and the environment.
 */
import type { ParseError } from 'jsonc-parser';
import { jsonc } from '../jsonc';
import { isObject } from '../protocol/classify';
import { parseServerDefinitions, type ServerDefinition, type ServerOrigin } from './definition';
import { SERVER_ENTRY_SCHEMA } from './schema';

/** A file that cannot be served: what is wrong, naming the entry when it is one. */
export class ConfigFileError extends Error {}

export interface ConfigFile {
  definitions: ServerDefinition[];
  /** Keys left out, variables left empty: said on stderr, nothing stops. */
  warnings: string[];
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

/** Reads the file's text into definitions; a `ConfigFileError` says what is wrong. */
export function parseConfigFile(text: string, context: ConfigContext): ConfigFile {
  const errors: ParseError[] = [];
  const { parse, printParseErrorCode } = jsonc();
  const doc = parse(text, errors, { allowTrailingComma: true, disallowComments: false }) as unknown;
  if (errors.length) throw new ConfigFileError(`not valid JSON: ${printParseErrorCode(errors[0].error)} at offset ${errors[0].offset}`);
  if (!isObject(doc)) throw new ConfigFileError('not a JSON object');
  const claudeStyle = !isObject(doc.servers) && isObject(doc.mcpServers);
  const servers = isObject(doc.servers) ? doc.servers : isObject(doc.mcpServers) ? doc.mcpServers : undefined;
  if (!servers) throw new ConfigFileError('no "servers" or "mcpServers" object in the file');
  const sandbox = isObject(doc.sandbox) ? doc.sandbox : undefined;
  const warnings: string[] = [];
  const raw: Record<string, unknown> = {};
  for (const [name, entry] of Object.entries(servers)) {
    if (!isObject(entry)) throw new ConfigFileError(`server "${name}": the entry must be an object`);
    const mapped = mapEntry(entry, (key) => warnings.push(`server "${name}": "${key}" has no meaning here and is left out`));
    // VS Code's `sandbox` sits at the top of mcp.json and covers its stdio servers.
    if (sandbox && mapped.type !== 'http' && mapped.sandbox === undefined) mapped.sandbox = structuredClone(sandbox);
    raw[name] = substitute(mapped, name, context, claudeStyle);
  }
  const { definitions, diagnostics } = parseServerDefinitions(raw, context.origin ?? { scope: 'workspace' });
  if (diagnostics.length) throw new ConfigFileError(`server "${diagnostics[0].name}": ${diagnostics[0].message}`);
  return { definitions, warnings };
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

/** Every string of the entry with its variables replaced; one that cannot be is an error naming the entry. */
function substitute(value: unknown, server: string, context: ConfigContext, claudeStyle: boolean): unknown {
  if (typeof value === 'string') return value.replace(VARIABLE, (_all, body: string) => variable(body, server, context, claudeStyle));
  if (Array.isArray(value)) return value.map((v) => substitute(v, server, context, claudeStyle));
  if (isObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, substitute(v, server, context, claudeStyle)]));
  return value;
}

function variable(body: string, server: string, context: ConfigContext, claudeStyle: boolean): string {
  if (body === 'workspaceFolder') return context.folder;
  if (body === 'userHome') return context.home;
  if (body.startsWith('env:')) return context.env[body.slice(4)] ?? '';
  if (body.startsWith('input:'))
    throw new ConfigFileError(`server "${server}": \${${body}} is asked for by the editor; give the value in the entry's env instead`);
  // Claude Code's own: ${NAME} and ${NAME:-default}.
  const fallback = body.indexOf(':-');
  const name = fallback === -1 ? body : body.slice(0, fallback);
  if (claudeStyle && ENV_NAME.test(name)) {
    const value = context.env[name];
    if (value !== undefined) return value;
    if (fallback !== -1) return body.slice(fallback + 2);
    throw new ConfigFileError(`server "${server}": \${${name}} is used, and the environment variable ${name} is not set`);
  }
  throw new ConfigFileError(`server "${server}": unknown variable \${${body}}`);
}
