import type { ServerDefinition, ServerOrigin } from './definition';
import { policyGrant, type PolicyGrant } from './grant';
import type { ScanFinding } from '../scan/detectors';

/** Shorter values would turn ordinary words of every log line into `***`; they are not redacted. */
export const MIN_REDACTED_LENGTH = 4;
export const REDACTED = '***';

/** Names whose values are secret whatever they hold (`GITHUB_TOKEN`, `X-Api-Key`, `Authorization`). */
const SECRET_NAME = /token|key|secret|passw(or)?d|pwd|credential|auth|cookie|session/i;
const VARIABLE_SOURCE = /\$\{(input|env):([^}]*)\}/g;

export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name);
}

/** The `${input:…}` and `${env:…}` variables a text uses, as written (`${input:token}`). */
export function secretSources(text: string): string[] {
  return [...text.matchAll(VARIABLE_SOURCE)].map((m) => m[0]);
}

/**
 * Every secret value the host knows, replaced with `***` in any text: each log and trace line
 * passes through one instance. Also catches a value as it appears inside a JSON string (quotes
 * and backslashes escaped), since the trace writes JSON bodies.
 */
export class Redactor {
  private readonly forms = new Set<string>();
  /** Longest first, so a secret that contains another is replaced whole. */
  private ordered: string[] = [];

  add(value: string | undefined): void {
    if (value === undefined || value.length < MIN_REDACTED_LENGTH) return;
    const before = this.forms.size;
    this.forms.add(value);
    const inJson = JSON.stringify(value).slice(1, -1);
    if (inJson !== value) this.forms.add(inJson);
    if (this.forms.size !== before) this.ordered = [...this.forms].sort((a, b) => b.length - a.length);
  }

  get size(): number {
    return this.forms.size;
  }

  redact(text: string): string {
    let out = text;
    for (const secret of this.ordered) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
    return out;
  }
}

/** One `env` or `headers` entry as the launch consent shows it: never a secret's value. */
export interface ShownEntry {
  name: string;
  /** The value as written in settings, or `***` when it is a literal secret. */
  shown: string;
  /** The `${input:…}`/`${env:…}` variables it carries, as written. */
  sources: string[];
  secret: boolean;
}

/**
 * `env` or `headers` of a definition as written in settings (variables unresolved), for the
 * consent. A literal value under a secret-looking name is masked; a value made of variables shows
 * the variables' names, which is what the person needs to judge where their secrets go.
 */
export function shownEntries(entries: Record<string, string | null>): ShownEntry[] {
  return Object.entries(entries).map(([name, value]) => {
    if (value === null) return { name, shown: '(removed)', sources: [], secret: false };
    const sources = secretSources(value);
    const literalSecret = isSecretName(name) && sources.length === 0 && value.length > 0;
    return { name, shown: literalSecret ? REDACTED : value, sources, secret: literalSecret || sources.length > 0 };
  });
}

/**
 * The resolved values to redact for a definition, besides its `${input:}` values (which the
 * editor registers as it asks), each whole, plus the credential after an auth scheme
 * (`Bearer abc` → `abc`) and each `${env:NAME}` value it used:
 * - every header whose value came from `${input:}` or `${env:}` or whose name looks secret;
 * - every `env` entry with an `${input:}`, or whose name or `${env:NAME}` looks secret
 *   (`${env:GITHUB_TOKEN}` is, `${env:HOME}` is not: redacting the home folder would blank
 *   every path in the log).
 */
export function secretValuesOf(raw: ServerDefinition, resolved: ServerDefinition, env: Record<string, string | undefined>): string[] {
  const rawEntries: Record<string, string | null> = raw.type === 'http' ? raw.headers : raw.env;
  const resolvedEntries: Record<string, string | null> =
    resolved.type === 'http' ? resolved.headers : resolved.type === 'stdio' ? resolved.env : {};
  const values: string[] = [];
  for (const [name, value] of Object.entries(rawEntries)) {
    if (value === null) continue;
    const sources = secretSources(value);
    const secret =
      raw.type === 'http'
        ? sources.length > 0 || isSecretName(name)
        : isSecretName(name) || sources.some((s) => s.startsWith('${input:') || isSecretName(s.slice(6, -1)));
    if (!secret) continue;
    const out = resolvedEntries[name];
    if (typeof out === 'string') {
      values.push(out);
      const credential = /^\s*[A-Za-z][\w-]*\s+(\S.*)$/.exec(out)?.[1];
      if (credential) values.push(credential);
    }
    for (const s of sources) if (s.startsWith('${env:')) values.push(env[s.slice(6, -1)] ?? '');
  }
  return values.filter((v) => v.length >= MIN_REDACTED_LENGTH);
}

/**
 * Who a definition is, for the secret storage: its scope, the workspace or folder it came from,
 * and its name. Two repositories that both define "github" are two different definitions.
 */
export function definitionIdentity(def: { name: string; origin: ServerOrigin }, workspace: string | undefined): string {
  switch (def.origin.scope) {
    case 'user':
      return `user:${def.name}`;
    case 'workspace':
      return `workspace:${workspace ?? ''}:${def.name}`;
    case 'folder':
      return `folder:${def.origin.folderUri ?? ''}:${def.name}`;
  }
}

/** What the secret storage keeps under `mcpHost.input.<ID>`: the value and who may use it. */
export interface StoredInput {
  value: string;
  /** The identity of the definition that first asked; absent for values stored before 0.1.0. */
  owner?: string;
  /** How the owner reads in a prompt: `"github" (user settings)`. */
  ownerLabel?: string;
  /** Other definitions the person let use this value. */
  allowed: string[];
}

const STORED_MARK = 'mcpHostInput';

export function encodeStoredInput(s: StoredInput): string {
  return JSON.stringify({ [STORED_MARK]: 1, ...s });
}

/** A record written by encodeStoredInput, or a bare value from before owners were kept. */
export function decodeStoredInput(text: string): StoredInput {
  try {
    const v = JSON.parse(text) as Partial<StoredInput> & Record<string, unknown>;
    if (v && typeof v === 'object' && v[STORED_MARK] === 1 && typeof v.value === 'string') {
      return {
        value: v.value,
        owner: typeof v.owner === 'string' ? v.owner : undefined,
        ownerLabel: typeof v.ownerLabel === 'string' ? v.ownerLabel : undefined,
        allowed: Array.isArray(v.allowed) ? v.allowed.filter((a): a is string => typeof a === 'string') : [],
      };
    }
  } catch {
    // not ours: a bare value
  }
  return { value: text, allowed: [] };
}

/** What the launch consent shows of a definition as written in settings. */
export interface LaunchSummary {
  def: ServerDefinition;
  /** stdio: the command and its arguments, quoted where needed. */
  commandLine?: string;
  /** http: the endpoint. */
  url?: string;
  /** stdio: where it runs. */
  cwd?: string;
  envFile?: string;
  /** stdio: `env`; http: `headers`. */
  entries: ShownEntry[];
  /** What the definition's own settings let the server do without asking (sampling, tools); undefined when nothing. */
  grant?: PolicyGrant;
  /** stdio in the sandbox: its limits as computed for this machine ("sandboxed: reads and writes ~/ws/, network: none"). */
  sandbox?: string;
  /** What MCP Host's scan found in the server when it last ran, not accepted since (the editor's pins). */
  findings?: readonly ScanFinding[];
}

export function launchSummary(def: ServerDefinition, cwd: string | undefined): LaunchSummary {
  const grant = policyGrant(def);
  if (def.type === 'http') return { def, url: def.url, entries: shownEntries(def.headers), grant };
  const commandLine = [def.command, ...def.args].map((w) => (/[\s"'$]/.test(w) ? JSON.stringify(w) : w)).join(' ');
  return { def, commandLine, cwd, envFile: def.envFile, entries: shownEntries(def.env), grant };
}
