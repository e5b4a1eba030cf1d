/**
 * VS Code's organisation lists of MCP servers (`chat.mcp.allowedServers`, `chat.mcp.deniedServers`,
 * VS Code 1.130+), applied to the server behind the gateway. VS Code matches them against what it
 * is given, which for a shared server is the gateway's URL: a rule naming the server's command or
 * URL would never match there, so MCP Host matches the rules against the server's own identity
 * before offering it. Each rule names one thing: the server's name (exact), its URL (`*`
 * wildcards, case-insensitive), or its command line (the command and its arguments, exact). A
 * denied server is never offered, even when allowed; when an allow list is set, only servers it
 * names are offered. Editor-free: the editor reads the settings (src/vscode/gateway/).
 */
import type { ServerDefinition } from '../servers/definition';

export type ServerRule = { serverName: string } | { serverUrl: string } | { serverCommand: string[] };

export interface ServerIdentity {
  name: string;
  url?: string;
  command?: string[];
}

export type OrgVerdict = { allowed: true } | { allowed: false; why: 'denied' | 'not-allowed'; rule?: ServerRule };

const isText = (v: unknown): v is string => typeof v === 'string' && v.length > 0;

/** The rules of one setting's value; undefined when it is not set (null, absent), so an empty list allows nothing. */
export function rulesOf(value: unknown): ServerRule[] | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) return [];
  return value.filter((rule): rule is ServerRule => {
    if (typeof rule !== 'object' || rule === null) return false;
    const r = rule as Record<string, unknown>;
    const named = [
      isText(r.serverName),
      isText(r.serverUrl),
      Array.isArray(r.serverCommand) && r.serverCommand.length > 0 && r.serverCommand.every(isText),
    ];
    // A rule names exactly one thing (as VS Code reads them); anything else matches nothing.
    return named.filter(Boolean).length === 1;
  });
}

/** The server as the rules see it: its name, and its URL or its command line as written in its entry. */
export function identityOf(definition: ServerDefinition): ServerIdentity {
  return definition.type === 'http'
    ? { name: definition.name, url: definition.url }
    : { name: definition.name, command: [definition.command, ...definition.args] };
}

/** http(s) URLs compared without their fragment, user info and default port; anything else as written. */
function comparableUrl(url: string): string | undefined {
  try {
    const u = new URL(url);
    return u.protocol === 'http:' || u.protocol === 'https:' ? `${u.origin}${u.pathname}${u.search}` : url;
  } catch {
    return undefined;
  }
}

const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A `*` in the host matches within the host; anywhere after it, any run of characters. */
function wildcard(pattern: string): RegExp {
  const scheme = pattern.indexOf('://');
  const hostEnd = scheme < 0 ? -1 : pattern.slice(scheme + 3).search(/[/?#]/);
  const split = scheme < 0 ? 0 : hostEnd < 0 ? pattern.length : scheme + 3 + hostEnd;
  const part = (text: string, star: string) => text.split('*').map(escape).join(star);
  return new RegExp(`^${part(pattern.slice(0, split), '[^/?#]*')}${part(pattern.slice(split), '.*')}$`, 'i');
}

function urlMatches(pattern: string, url: string): boolean {
  const candidate = comparableUrl(url);
  if (candidate === undefined) return false;
  if (!pattern.includes('*')) return comparableUrl(pattern)?.toLowerCase() === candidate.toLowerCase();
  return wildcard(pattern).test(candidate);
}

function matches(rule: ServerRule, identity: ServerIdentity): boolean {
  if ('serverName' in rule) return rule.serverName === identity.name;
  if ('serverUrl' in rule) return identity.url !== undefined && urlMatches(rule.serverUrl, identity.url);
  const { command } = identity;
  return command !== undefined && command.length === rule.serverCommand.length && command.every((c, i) => c === rule.serverCommand[i]);
}

/** Whether the organisation's lists let the chat have this server; deny rules win. */
export function orgVerdict(identity: ServerIdentity, allowed: ServerRule[] | undefined, denied: ServerRule[] | undefined): OrgVerdict {
  const deniedBy = denied?.find((r) => matches(r, identity));
  if (deniedBy) return { allowed: false, why: 'denied', rule: deniedBy };
  if (allowed !== undefined && !allowed.some((r) => matches(r, identity))) return { allowed: false, why: 'not-allowed' };
  return { allowed: true };
}
