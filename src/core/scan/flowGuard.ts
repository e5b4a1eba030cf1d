/**
 * The flow guard: prompt injection is a sequence, so it follows a session (a chat conversation,
 * one agent's connection) across servers. Each tool has labels: a source of untrusted content
 * (open world, or a result that addresses the model), a source of private data (closed-world reads,
 * results masking found a secret in) and a sink (anything not read-only: writes and egress). Once
 * untrusted content has entered a session, a call to a sink is held (asked, or refused where
 * nobody can be asked), naming the untrusted result that came before; a sink whose arguments carry
 * text of a private result read earlier in the session names that result too. Private results
 * are kept as an index (winnowed fingerprints of their text and the hashes of their secret-shaped
 * tokens), never as text, so a check costs the size of the arguments, not of the history.
 * Sessions are bounded in number, size and age like every other piece of state.
 */
import { createHash } from 'node:crypto';
import type { Tool } from '../protocol/types';
import { addressesModel } from './detectors';
import { withoutInvisible } from './invisible';

import { FLOW_LABELS, PROMPT_GETS, RESOURCE_READS, type FlowLabel, type FlowLabelSettings } from './labels';

export type { FlowLabel, FlowLabelSettings } from './labels';

/** What the guard does with a sink call in an untrusted session. */
export type FlowMode = 'off' | 'ask' | 'block';

/** Who sends: the guard's mode is chosen per origin. */
export type FlowOrigin = 'person' | 'app' | 'chat' | 'agent' | 'cli';

/** The default per origin: on (ask) for the chat and agents, refused headless, off for the person's own calls and their apps' (they see what they send). */
export function defaultFlowMode(origin: FlowOrigin): FlowMode {
  return origin === 'chat' || origin === 'agent' ? 'ask' : origin === 'cli' ? 'block' : 'off';
}

/** The modes `mcpHost.flowGuard` (and its organisation policy, `McpHostFlowGuard`) can give. */
export const FLOW_MODES: readonly FlowMode[] = ['ask', 'block', 'off'];

/** `mcpHost.flowGuard`: the mode per origin that goes through a gateway. */
export interface FlowGuardSetting {
  chat: FlowMode;
  agents: FlowMode;
}

/**
 * The setting's value as written (an object, or its JSON text as VS Code's policy files carry an
 * object's policy), each member the given mode or else its default: a member left out, or one that
 * is not a mode, is never read as `off`. Undefined when the value is no such object at all.
 */
export function flowGuardSettingOf(value: unknown): FlowGuardSetting | undefined {
  let v = value;
  if (typeof v === 'string') {
    try {
      v = JSON.parse(v);
    } catch {
      return undefined;
    }
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined;
  const member = (key: 'chat' | 'agents', origin: FlowOrigin): FlowMode => {
    const m = (v as Record<string, unknown>)[key];
    return FLOW_MODES.find((mode) => mode === m) ?? defaultFlowMode(origin);
  };
  return { chat: member('chat', 'chat'), agents: member('agents', 'agent') };
}

/**
 * A tool's labels: the entry's `flowLabels` when it names the tool (or has `*`); else from its
 * annotations where they are trusted (open world: untrusted; a closed-world read: private; not
 * read-only: sink), and conservatively where they are not: all three.
 */
export function toolLabels(tool: Tool, settings: FlowLabelSettings | undefined, annotationsTrusted: boolean): ReadonlySet<FlowLabel> {
  const set = settings && (own(settings, tool.name) ?? own(settings, '*'));
  if (set) return new Set(set);
  if (!annotationsTrusted) return new Set(FLOW_LABELS);
  const a = tool.annotations ?? {};
  const labels = new Set<FlowLabel>();
  // The spec's default for openWorldHint is true: a tool that does not say otherwise reaches the world.
  if (a.openWorldHint !== false) labels.add('untrusted');
  if (a.readOnlyHint !== true) labels.add('sink');
  else if (a.openWorldHint === false) labels.add('private');
  return labels;
}

/**
 * The labels of a server's resource reads: the entry's `flowLabels["resources/read"]`, else
 * private (a server's resources are its own data: files, notes, rows). Text in one that addresses
 * the model makes it untrusted whatever its labels.
 */
export function resourceLabels(settings: FlowLabelSettings | undefined): ReadonlySet<FlowLabel> {
  return new Set((settings && own(settings, RESOURCE_READS)) ?? ['private']);
}

/**
 * The labels of a server's prompts: the entry's `flowLabels["prompts/get"]`, else none (the person
 * picked the prompt, and its text is the server's template). Text in its messages that addresses
 * the model makes it untrusted whatever its labels.
 */
export function promptLabels(settings: FlowLabelSettings | undefined): ReadonlySet<FlowLabel> {
  return new Set((settings && own(settings, PROMPT_GETS)) ?? []);
}

function own<T>(record: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.prototype.hasOwnProperty.call(record, key) ? record[key] : undefined;
}

/** What a recorded result is of: a tool call (the default), a resource read, a prompt got. */
export type FlowSource = 'tool' | 'resource' | 'prompt';

/** The untrusted result that made a session untrusted. */
export interface Taint {
  server: string;
  /** The tool's name, the resource's URI or the prompt's name. */
  tool: string;
  kind?: FlowSource;
  /** When its result came (ms since the epoch). */
  at: number;
  /** A short piece of the result: what addressed the model, or its beginning. */
  excerpt: string;
  /** Its audit record as appended, kept as it is (the log gives its hash: `AuditSink.hashOf`). */
  entry?: object;
}

/** Why a sink call is held: what came before, and which private results its arguments carry. */
export interface FlowFinding {
  /** A short hash of the session's key, as the audit names it. */
  session: string;
  taint: Taint;
  /** `server › tool` of each private result the arguments carry text of. */
  carries: string[];
  /** One sentence for the person, a model, and the audit. */
  reason: string;
}

/** One call's result, as the guard records it. */
export interface FlowResult {
  server: string;
  /** The tool's name, the resource's URI or the prompt's name. */
  tool: string;
  /** Absent: a tool call. */
  kind?: FlowSource;
  labels: ReadonlySet<FlowLabel>;
  /** The text of the result as the model reads it (secrets masked). */
  text: string;
  /**
   * Masking found a secret in the result: it is private whatever the tool's labels. Absent: the
   * text differs from `unmasked` and holds a masking placeholder.
   */
  maskedSecret?: boolean;
  /** The unmasked text, when it differs: its secret-shaped tokens are indexed (never kept). */
  unmasked?: string;
  /** The call's audit record as appended. */
  entry?: object;
}

export interface FlowGuardOptions {
  maxSessions?: number;
  /** Fingerprints and tokens kept per session (about 1 MB of private text at the defaults). */
  maxIndexed?: number;
  /** A session not used for this long is forgotten. */
  maxIdleMs?: number;
  now?: () => number;
}

/** Winnowing: every shared run of at least K + W - 1 = 31 characters of normalised text is found. */
const K = 24;
const W = 8;
/** A secret-shaped token: letters and digits mixed, 12 characters or more (`=` ends one: `KEY=value`, `?t=value`). */
const TOKEN = /[A-Za-z0-9_\-+/.~]{12,}/g;
const MASKED = /\[masked: [^\]]+\]/;

interface Source {
  server: string;
  tool: string;
  masked: boolean;
}

interface Session {
  key: string;
  lastUsed: number;
  taint?: Taint;
  sources: Source[];
  /** Fingerprint or token hash → index into `sources`. */
  index: Map<number, number>;
  full: boolean;
}

export class FlowGuard {
  private readonly sessions = new Map<string, Session>();
  private readonly maxSessions: number;
  private readonly maxIndexed: number;
  private readonly maxIdleMs: number;
  private readonly now: () => number;

  constructor(options: FlowGuardOptions = {}) {
    this.maxSessions = options.maxSessions ?? 64;
    this.maxIndexed = options.maxIndexed ?? 300_000;
    this.maxIdleMs = options.maxIdleMs ?? 12 * 60 * 60 * 1000;
    this.now = options.now ?? Date.now;
  }

  /** How many sessions are kept (tests and the bench look). */
  get size(): number {
    return this.sessions.size;
  }

  private session(key: string, create: boolean): Session | undefined {
    const now = this.now();
    for (const [k, s] of this.sessions) {
      if (now - s.lastUsed <= this.maxIdleMs) break;
      this.sessions.delete(k);
    }
    let s = this.sessions.get(key);
    if (s) this.sessions.delete(key);
    else if (create) s = { key, lastUsed: now, sources: [], index: new Map(), full: false };
    if (!s) return undefined;
    s.lastUsed = now;
    // Least recently used last out: the Map keeps insertion order.
    this.sessions.set(key, s);
    while (this.sessions.size > this.maxSessions) this.sessions.delete(this.sessions.keys().next().value!);
    return s;
  }

  /** Records a result: untrusted content taints the session, private content is indexed. */
  record(sessionKey: string, result: FlowResult): void {
    const addressing = addressesModel(result.unmasked ?? result.text);
    const untrusted = result.labels.has('untrusted') || addressing !== undefined;
    const maskedSecret =
      result.maskedSecret ?? (result.unmasked !== undefined && result.unmasked !== result.text && MASKED.test(result.text));
    const isPrivate = result.labels.has('private') || maskedSecret;
    if (!untrusted && !isPrivate) {
      this.session(sessionKey, false);
      return;
    }
    const s = this.session(sessionKey, true)!;
    // The excerpt is of the masked text only (it goes to the audit, the trace and the person); hidden tag text is named, not quoted.
    if (untrusted && !s.taint)
      s.taint = {
        server: result.server,
        tool: result.tool,
        ...(result.kind && result.kind !== 'tool' && { kind: result.kind }),
        at: this.now(),
        excerpt: excerptOf(
          result.text,
          addressing === undefined ? undefined : (addressesModel(result.text) ?? '(hidden text addressed to the model)'),
        ),
        entry: result.entry,
      };
    if (!isPrivate || s.full) return;
    const source = s.sources.push({ server: result.server, tool: result.tool, masked: maskedSecret }) - 1;
    for (const text of result.unmasked === undefined ? [result.text] : [result.text, result.unmasked]) {
      for (const h of fingerprints(text)) this.add(s, h, source);
      for (const h of tokens(text)) this.add(s, h, source);
    }
  }

  private add(s: Session, hash: number, source: number): void {
    if (s.index.size >= this.maxIndexed) {
      s.full = true;
      return;
    }
    if (!s.index.has(hash)) s.index.set(hash, source);
  }

  /**
   * Whether a call to a tool with these labels and arguments is held, and why; undefined lets it
   * through. `alsoFrom` names a session whose content counts for this one too: what came with no
   * session of its own (VS Code names no conversation on a resource read or a prompt) may be in any.
   */
  check(sessionKey: string, call: { labels: ReadonlySet<FlowLabel>; arguments: unknown }, alsoFrom?: string): FlowFinding | undefined {
    if (!call.labels.has('sink')) return undefined;
    const sessions = [
      this.session(sessionKey, false),
      alsoFrom === undefined || alsoFrom === sessionKey ? undefined : this.session(alsoFrom, false),
    ];
    const t = sessions.find((s) => s?.taint)?.taint;
    if (!t) return undefined;
    const text = argumentText(call.arguments);
    const hashes = [...fingerprints(text), ...tokens(text)];
    const masked = MASKED.test(text);
    const carries = new Set<string>();
    for (const s of sessions) {
      if (!s) continue;
      const carried = new Set<number>();
      for (const h of hashes) {
        const source = s.index.get(h);
        if (source !== undefined) carried.add(source);
      }
      if (masked) s.sources.forEach((src, i) => src.masked && carried.add(i));
      for (const i of carried) carries.add(`${s.sources[i].server} › ${s.sources[i].tool}`);
    }
    const named = [...carries];
    const reason =
      `untrusted content came before this call: ${taintText(t)}` + (named.length ? `; it sends text read by ${named.join(', ')}` : '');
    return { session: sessionId(sessionKey), taint: t, carries: named, reason };
  }

  /** Forgets a session (a conversation or a connection ended). */
  end(sessionKey: string): void {
    this.sessions.delete(sessionKey);
  }
}

/** A session's key as the audit names it: 12 hex digits of its SHA-256. */
export function sessionId(key: string): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 12);
}

/** What made the session untrusted, for the reason: a tool's result, a resource read, a prompt got, when, and an excerpt. */
function taintText(t: Taint): string {
  const when = `${new Date(t.at).toISOString().slice(11, 19)} UTC`;
  const what =
    t.kind === 'resource'
      ? `the resource ${t.tool} of ${t.server}, read at ${when}`
      : t.kind === 'prompt'
        ? `the prompt ${t.server} › ${t.tool}, got at ${when}`
        : `the result of ${t.server} › ${t.tool} at ${when}`;
  return `${what} ("${t.excerpt}")`;
}

function excerptOf(text: string, addressing: string | undefined): string {
  if (addressing) return addressing.slice(0, 120);
  const clean = withoutInvisible(text).replace(/\s+/g, ' ').trim();
  return clean.length > 120 ? `${clean.slice(0, 120)}…` : clean;
}

/** Every string of the arguments, percent-decoded where it decodes (a secret carried in a URL), one per line. */
function argumentText(value: unknown, out: string[] = [], depth = 0): string {
  if (typeof value === 'string') {
    out.push(value);
    if (value.includes('%')) {
      try {
        out.push(decodeURIComponent(value.replace(/\+/g, ' ')));
      } catch {
        // Not percent-encoded text.
      }
    }
  } else if (value && typeof value === 'object' && depth < 32) {
    for (const v of Object.values(value)) argumentText(v, out, depth + 1);
  }
  return depth === 0 ? out.join('\n') : '';
}

/** Text as compared: lower case, every run of white space one space. */
function normalised(text: string): string {
  return text.toLowerCase().replace(/\s+/g, ' ');
}

const BASE = 0x01000193;

/** The winnowed fingerprints of `text`: the smallest K-gram hash of each window of W, by a rolling hash. */
export function fingerprints(raw: string): number[] {
  const text = normalised(raw);
  if (text.length < K) return [];
  let high = 1;
  for (let i = 0; i < K - 1; i++) high = Math.imul(high, BASE);
  const hashes = new Uint32Array(text.length - K + 1);
  let h = 0;
  for (let i = 0; i < K; i++) h = (Math.imul(h, BASE) + text.charCodeAt(i)) | 0;
  hashes[0] = h;
  for (let i = K; i < text.length; i++) {
    h = (Math.imul(h - Math.imul(text.charCodeAt(i - K), high), BASE) + text.charCodeAt(i)) | 0;
    hashes[i - K + 1] = h;
  }
  const out: number[] = [];
  let last = -1;
  for (let start = 0; start + W <= hashes.length || start === 0; start++) {
    const end = Math.min(start + W, hashes.length);
    let min = start;
    for (let j = start + 1; j < end; j++) if (hashes[j] <= hashes[min]) min = j;
    if (min !== last) out.push(hashes[min]);
    last = min;
    if (end === hashes.length) break;
  }
  return out;
}

/** The hashes of the secret-shaped tokens of `text` (letters and digits mixed, 12 characters or more). */
function tokens(text: string): number[] {
  const out: number[] = [];
  for (const m of text.matchAll(TOKEN)) {
    const t = m[0];
    if (!/[0-9]/.test(t) || !/[A-Za-z]/.test(t)) continue;
    let h = 0x811c9dc5;
    for (let i = 0; i < t.length; i++) h = Math.imul(h ^ t.charCodeAt(i), 0x01000193);
    // Kept apart from the fingerprints' values by the top bit pattern they rarely share; a collision only names a source wrongly.
    out.push(h ^ 0x5bd1e995);
  }
  return out;
}
