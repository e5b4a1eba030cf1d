import * as path from 'node:path';
import type { ParseError } from 'jsonc-parser';
import { jsonc } from '../jsonc';
import { isObject } from '../protocol/classify';
import { stableStringify } from '../protocol/stableStringify';
import type { InputDefinition } from './schema';

/**
 * Reading other clients' MCP configurations into `mcpHost.servers` entries: VS Code's
 * `.vscode/mcp.json` (`servers` and `inputs`) and the `mcpServers` files of Claude Desktop,
 * Cursor and others. Pure: the editor layer reads the files and asks the questions.
 */

/** Where a configuration file may be, and which client wrote it. */
export interface ImportSource {
  /** Shown to the person, e.g. "Claude Desktop" or "my-app/.vscode/mcp.json". */
  label: string;
  path: string;
}

/** What mapping a foreign entry changed or could not carry over, for the report. */
export type ImportNote =
  /** A field with no counterpart in MCP Host, not imported. */
  | { kind: 'dropped'; field: string }
  /** `${input:id}` is asked at first start and kept in the secret storage. */
  | { kind: 'input'; id: string; description?: string; password?: boolean; inputType: string; options?: string[]; defaultValue?: string }
  /** A `${…}` variable MCP Host does not resolve; the server will not start until it is edited. */
  | { kind: 'variable'; variable: string }
  /** `type: "sse"` became `type: "http"`: the HTTP transport detects the older protocol. */
  | { kind: 'sse' }
  /** The name had characters a server name cannot have. */
  | { kind: 'renamed'; from: string };

export interface ImportCandidate {
  name: string;
  source: string;
  /** The `mcpHost.servers` entry to write. */
  entry: Record<string, unknown>;
  notes: ImportNote[];
  /** Set when the mapped entry is still not valid: it is shown but cannot be picked. */
  problem?: string;
}

export interface ImportFileResult {
  candidates: ImportCandidate[];
  /** The file as a whole could not be used (not JSON, no servers). */
  error?: string;
}

/** The files other clients keep their servers in, for this machine and these folders. */
export function knownImportSources(env: {
  platform: string;
  home: string;
  appData?: string;
  xdgConfigHome?: string;
  folders: Array<{ name: string; path: string }>;
}): ImportSource[] {
  const p = env.platform === 'win32' ? path.win32 : path.posix;
  const sources: ImportSource[] = [];
  for (const folder of env.folders) {
    sources.push({ label: `${folder.name}/.vscode/mcp.json`, path: p.join(folder.path, '.vscode', 'mcp.json') });
    sources.push({ label: `${folder.name}/.cursor/mcp.json`, path: p.join(folder.path, '.cursor', 'mcp.json') });
  }
  const claudeDir =
    env.platform === 'darwin'
      ? p.join(env.home, 'Library', 'Application Support', 'Claude')
      : env.platform === 'win32'
        ? p.join(env.appData ?? p.join(env.home, 'AppData', 'Roaming'), 'Claude')
        : p.join(env.xdgConfigHome ?? p.join(env.home, '.config'), 'Claude');
  sources.push({ label: 'Claude Desktop', path: p.join(claudeDir, 'claude_desktop_config.json') });
  sources.push({ label: 'Cursor (user)', path: p.join(env.home, '.cursor', 'mcp.json') });
  return sources;
}

/**
 * Why settings would refuse an imported entry, or undefined (`definitionProblem`). Passed in, so
 * the import flow's lazily loaded bundle does not carry the settings schema and its validator again.
 */
export type EntryCheck = (name: string, entry: Record<string, unknown>) => string | undefined;

/**
 * Parses one configuration file (comments and trailing commas allowed, as VS Code allows them).
 * A file with `servers` is read in VS Code's format; one with `mcpServers` in Claude Desktop's.
 */
export function parseImportFile(text: string, source: string, check: EntryCheck): ImportFileResult {
  const errors: ParseError[] = [];
  const { parse: parseJsonc, printParseErrorCode } = jsonc();
  const doc = parseJsonc(text, errors, { allowTrailingComma: true, disallowComments: false });
  if (errors.length) {
    const e = errors[0];
    return { candidates: [], error: `not valid JSON: ${printParseErrorCode(e.error)} at offset ${e.offset}` };
  }
  if (!isObject(doc)) return { candidates: [], error: 'the file is not a JSON object' };
  const candidates: ImportCandidate[] = [];
  if (isObject(doc.servers)) {
    const inputs = Array.isArray(doc.inputs) ? doc.inputs.filter(isObject) : [];
    // VS Code's `sandbox` sits at the top of mcp.json and covers its servers: each stdio entry gets its own copy (used where sandboxEnabled is on).
    const sandbox = isObject(doc.sandbox) ? doc.sandbox : undefined;
    for (const [name, raw] of Object.entries(doc.servers)) {
      const found = candidate(name, raw, source, VSCODE_FIELDS, inputs, check);
      if (sandbox && found.entry.type !== 'http' && found.entry.command !== undefined) {
        found.entry.sandbox = structuredClone(sandbox);
        found.problem = check(found.name, found.entry);
      }
      candidates.push(found);
    }
  }
  if (isObject(doc.mcpServers)) {
    for (const [name, raw] of Object.entries(doc.mcpServers)) candidates.push(candidate(name, raw, source, MCP_SERVERS_FIELDS, [], check));
  }
  if (!isObject(doc.servers) && !isObject(doc.mcpServers)) return { candidates, error: 'no "servers" or "mcpServers" object in the file' };
  return { candidates };
}

/** Fields mapped one to one; anything else in a foreign entry is reported as dropped. */
const VSCODE_FIELDS = ['type', 'command', 'args', 'env', 'envFile', 'cwd', 'url', 'headers', 'sandboxEnabled'];
/** Claude Desktop, Cursor, Cline and Roo Code put a few more fields beside the same core ones. */
const MCP_SERVERS_FIELDS = ['type', 'command', 'args', 'env', 'envFile', 'cwd', 'url', 'headers', 'disabled', 'autoApprove', 'alwaysAllow'];

/** The variables both sides resolve the same way. */
const SUPPORTED_VARIABLE = /^(workspaceFolder|userHome|env:.+|input:.+)$/;

function candidate(
  rawName: string,
  raw: unknown,
  source: string,
  known: string[],
  inputs: Record<string, unknown>[],
  check: EntryCheck,
): ImportCandidate {
  const notes: ImportNote[] = [];
  const name = rawName.replace(/[/\\]/g, '-').trim() || 'server';
  if (name !== rawName) notes.push({ kind: 'renamed', from: rawName });
  if (!isObject(raw)) return { name, source, entry: {}, notes, problem: 'the entry is not an object' };

  for (const field of Object.keys(raw)) if (!known.includes(field)) notes.push({ kind: 'dropped', field });
  const entry = mapEntry(raw, notes);

  const referenced = new Set<string>();
  for (const text of stringsIn(entry)) {
    for (const m of text.matchAll(/\$\{([^}]+)\}/g)) {
      if (!SUPPORTED_VARIABLE.test(m[1])) notes.push({ kind: 'variable', variable: m[0] });
      else if (m[1].startsWith('input:')) referenced.add(m[1].slice('input:'.length));
    }
  }
  for (const id of referenced)
    notes.push(
      inputNote(
        id,
        inputs.find((i) => i.id === id),
      ),
    );

  return { name, source, entry, notes: dedupe(notes), problem: check(name, entry) };
}

function mapEntry(raw: Record<string, unknown>, notes: ImportNote[]): Record<string, unknown> {
  const entry: Record<string, unknown> = {};
  const type = typeof raw.type === 'string' ? raw.type.toLowerCase() : undefined;
  const remote = type !== undefined ? type !== 'stdio' : raw.command === undefined && raw.url !== undefined;
  if (remote) {
    if (type === 'sse') notes.push({ kind: 'sse' });
    entry.type = 'http';
    entry.url = raw.url;
    if (raw.headers !== undefined) entry.headers = raw.headers;
    // A remote entry has no process: whatever stdio fields it carries cannot be used.
    for (const field of ['command', 'args', 'env', 'envFile', 'cwd', 'sandboxEnabled'])
      if (raw[field] !== undefined) notes.push({ kind: 'dropped', field });
  } else {
    if (type === 'stdio') entry.type = 'stdio';
    entry.command = raw.command;
    if (raw.args !== undefined)
      entry.args = Array.isArray(raw.args)
        ? raw.args.map((a) => (typeof a === 'number' || typeof a === 'boolean' ? String(a) : a))
        : raw.args;
    if (raw.env !== undefined)
      entry.env = isObject(raw.env)
        ? Object.fromEntries(Object.entries(raw.env).map(([k, v]) => [k, typeof v === 'number' || typeof v === 'boolean' ? String(v) : v]))
        : raw.env;
    if (raw.envFile !== undefined) entry.envFile = raw.envFile;
    if (raw.cwd !== undefined) entry.cwd = raw.cwd;
    if (raw.sandboxEnabled === true) entry.sandboxEnabled = true;
    for (const field of ['url', 'headers']) if (raw[field] !== undefined) notes.push({ kind: 'dropped', field });
  }
  if (raw.disabled === true) entry.enabled = false;
  const approve = raw.autoApprove ?? raw.alwaysAllow;
  if (Array.isArray(approve) && approve.length) entry.autoApprove = approve;
  return entry;
}

function inputNote(id: string, input: Record<string, unknown> | undefined): ImportNote {
  const note: ImportNote = { kind: 'input', id, inputType: typeof input?.type === 'string' ? input.type : 'promptString' };
  if (typeof input?.description === 'string') note.description = input.description;
  if (typeof input?.password === 'boolean') note.password = input.password;
  if (Array.isArray(input?.options)) note.options = input.options.map((o) => (isObject(o) ? String(o.value ?? o.label) : String(o)));
  if (typeof input?.default === 'string') note.defaultValue = input.default;
  return note;
}

function stringsIn(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(stringsIn);
  if (isObject(value)) return Object.values(value).flatMap(stringsIn);
  return [];
}

function dedupe(notes: ImportNote[]): ImportNote[] {
  const seen = new Set<string>();
  return notes.filter((n) => !seen.has(stableStringify(n)) && Boolean(seen.add(stableStringify(n))));
}

/** What to do with a picked server whose name is already taken. */
export type CollisionPolicy = 'rename' | 'skip';

export interface ImportPlan {
  /** The entries to add to the chosen settings, by final name. */
  entries: Record<string, Record<string, unknown>>;
  renamed: Array<{ from: string; to: string; source: string }>;
  skipped: Array<{ name: string; source: string; reason: 'identical' | 'taken' }>;
}

/**
 * Decides final names. A server configured exactly the same way already, under any name (in the
 * settings, or earlier in the same import: two clients often list one server under two names),
 * is skipped; another taken name is renamed to `name-2`, `name-3`… or skipped, as the person chose.
 */
export function planImport(picked: ImportCandidate[], existing: Record<string, unknown>, policy: CollisionPolicy): ImportPlan {
  const plan: ImportPlan = { entries: {}, renamed: [], skipped: [] };
  const taken = (n: string) => n in existing || n in plan.entries;
  const configured = new Set(Object.values(existing).map((entry) => stableStringify(entry)));
  for (const c of picked) {
    const shape = stableStringify(c.entry);
    if (configured.has(shape)) {
      plan.skipped.push({ name: c.name, source: c.source, reason: 'identical' });
      continue;
    }
    configured.add(shape);
    if (!taken(c.name)) {
      plan.entries[c.name] = c.entry;
      continue;
    }
    if (policy === 'skip') {
      plan.skipped.push({ name: c.name, source: c.source, reason: 'taken' });
      continue;
    }
    let n = 2;
    while (taken(`${c.name}-${n}`)) n++;
    plan.entries[`${c.name}-${n}`] = c.entry;
    plan.renamed.push({ from: c.name, to: `${c.name}-${n}`, source: c.source });
  }
  return plan;
}

/** A one-line summary of an entry: its command line or its URL. */
export function describeEntry(entry: Record<string, unknown>): string {
  if (entry.type === 'http') return String(entry.url);
  const args = Array.isArray(entry.args) ? entry.args.map((a) => (/[\s"']/.test(String(a)) ? JSON.stringify(a) : String(a))) : [];
  return [String(entry.command), ...args].join(' ');
}

/**
 * The `mcpHost.inputs` entries for the `${input:}` values the imported servers use, from VS Code's
 * promptString definitions; ids already described in `existing` are left as they are.
 */
export function inputDefinitionsFor(imported: ImportCandidate[], existing: Record<string, unknown>): Record<string, InputDefinition> {
  const out: Record<string, InputDefinition> = {};
  for (const c of imported) {
    for (const n of c.notes) {
      if (n.kind !== 'input' || n.id in existing || n.id in out) continue;
      if (n.description === undefined && n.password === undefined && n.defaultValue === undefined) continue;
      const def: InputDefinition = {};
      if (n.description !== undefined) def.description = n.description;
      if (n.password !== undefined) def.password = n.password;
      if (n.defaultValue !== undefined && n.inputType === 'promptString') def.default = n.defaultValue;
      out[n.id] = def;
    }
  }
  return out;
}
