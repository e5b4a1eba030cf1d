/**
 * What a server asks of us, as the audit log and a language model see it: the server named by a
 * hash of its definition, a small summary of each request (never the message bodies), one
 * record per request however it ended, and a sampling request with every text masked before it
 * leaves MCP Host for a model.
 */
import type { CreateMessageParams, ElicitRequestParams, SamplingMessage } from '../protocol/types';
import { definitionHash, type ServerDefinition } from '../servers/definition';
import { outcomeOfError } from './run';
import type { AuditedServer, AuditEntry, AuditSink, Decision, MaskFinding, Masker, Outcome, ServerRequestMethod } from './types';

export function auditedServer(def: ServerDefinition): AuditedServer {
  return { name: def.name, scope: def.origin.scope, definition: definitionHash(def) };
}

/** How big a sampling request is and what it asks for; none of its text. */
export function samplingSummary(params: CreateMessageParams): Record<string, unknown> {
  const p = (params ?? {}) as Partial<CreateMessageParams>;
  const summary: Record<string, unknown> = { messages: Array.isArray(p.messages) ? p.messages.length : 0 };
  if (typeof p.maxTokens === 'number') summary.maxTokens = p.maxTokens;
  if (typeof p.systemPrompt === 'string' && p.systemPrompt) summary.systemPrompt = true;
  if (Array.isArray(p.tools) && p.tools.length) summary.tools = p.tools.length;
  if (p.includeContext && p.includeContext !== 'none') summary.includeContext = p.includeContext;
  return summary;
}

/** The fields a form asks for, or the host of the page a URL elicitation opens; never the message or the URL's path. */
export function elicitationSummary(params: ElicitRequestParams): Record<string, unknown> {
  const p = (params ?? {}) as Partial<ElicitRequestParams>;
  if (p.mode === 'url') {
    let host: string | undefined;
    try {
      host = new URL(String(p.url)).host;
    } catch {
      host = undefined;
    }
    return host ? { urlHost: host } : { url: 'invalid' };
  }
  const properties = p.requestedSchema?.properties;
  return { fields: properties && typeof properties === 'object' ? Object.keys(properties) : [] };
}

/** One server request on its way to an answer: `end` writes its record, once. */
export interface ServerRequestRecord {
  /** How the answer was decided; what `end` writes unless told otherwise. */
  decision: Decision;
  /** The tool, prompt or model the record names (for sampling: the model chosen). */
  name?: string;
  end(outcome: Outcome): void;
  /** The outcome of a handler that threw (cancelled, or an error with its code). */
  failed(error: unknown): void;
}

/** Starts the record of a server's request of us; the time is taken now and at `end`. */
export function startServerRequest(
  sink: AuditSink | undefined,
  server: AuditedServer,
  method: ServerRequestMethod,
  summary?: unknown,
  now: () => number = Date.now,
): ServerRequestRecord {
  const started = now();
  let ended = false;
  const record: ServerRequestRecord = {
    decision: 'refused',
    end(outcome) {
      if (ended) return;
      ended = true;
      const entry: AuditEntry = {
        time: new Date(started).toISOString(),
        origin: 'server',
        server,
        method,
        decision: record.decision,
        outcome,
        ms: now() - started,
      };
      if (record.name !== undefined) entry.name = record.name;
      if (summary !== undefined) entry.arguments = summary;
      sink?.append(entry);
    },
    failed(error) {
      record.end(outcomeOfError(error));
    },
  };
  return record;
}

/** `roots/list` is always answered (the roots are the person's own folders and settings); the record keeps who asked and when. */
export function auditedRoots<T>(sink: AuditSink | undefined, server: AuditedServer, roots: () => T): T {
  const record = startServerRequest(sink, server, 'roots/list');
  record.decision = 'allowed';
  try {
    const answer = roots();
    record.end({ kind: 'ok' });
    return answer;
  } catch (error) {
    record.failed(error);
    throw error;
  }
}

/** The audit's name for a request we refused because nothing answers it; undefined for those it does not audit. */
export function auditedServerMethod(method: string): ServerRequestMethod | undefined {
  return method === 'sampling/createMessage' || method === 'elicitation/create' || method === 'roots/list' ? method : undefined;
}

/** How deep `maskSamplingRequest` follows blocks itself before the masker's stack-free walk takes over. */
const MAX_WALK_DEPTH = 64;

/** Keys whose strings are not text for a model: kinds, roles, media bytes, the ids that pair a tool call with its result. */
const NOT_TEXT = new Set(['type', 'role', 'mimeType', 'data', 'blob', 'id', 'toolUseId', 'name']);

/**
 * The request with every text a model would read masked: the system prompt, text blocks, tool
 * calls' inputs, tool results (and resources embedded in them). Media bytes and the ids that pair
 * a tool call with its result are kept, so the exchange still works. Copied, never changed in place.
 */
export function maskSamplingRequest(params: CreateMessageParams, masker: Masker): { request: CreateMessageParams; found: MaskFinding[] } {
  const counts = new Map<string, number>();
  const add = (found: MaskFinding[]) => {
    for (const f of found) counts.set(f.kind, (counts.get(f.kind) ?? 0) + f.count);
  };
  const text = (value: string) => {
    const masked = masker.maskText(value);
    add(masked.found);
    return masked.text;
  };
  const walk = (value: unknown, key: string | undefined, depth = 0): unknown => {
    if (typeof value === 'string') return key !== undefined && NOT_TEXT.has(key) ? value : text(value);
    if (depth > MAX_WALK_DEPTH && value && typeof value === 'object') {
      // Deeper than any real exchange: every string masked (ids too) by the masker's own walk, which has no recursion.
      const masked = masker.maskValue(value);
      add(masked.found);
      return masked.value;
    }
    if (Array.isArray(value)) return value.map((v) => walk(v, undefined, depth + 1));
    if (!value || typeof value !== 'object') return value;
    const block = value as Record<string, unknown>;
    return Object.fromEntries(
      Object.entries(block).map(([k, v]) => {
        // A tool call's input is JSON: a `password` key hides its value whatever it looks like.
        if (k === 'input' && block.type === 'tool_use') {
          const masked = masker.maskValue(v);
          add(masked.found);
          return [k, masked.value];
        }
        return [k, k === '_meta' ? v : walk(v, k, depth + 1)];
      }),
    );
  };
  // The system prompt first: the findings are listed in the order the model reads them.
  const systemPrompt = typeof params.systemPrompt === 'string' ? { systemPrompt: text(params.systemPrompt) } : {};
  const messages = (Array.isArray(params.messages) ? params.messages : []).map((m) => walk(m, undefined) as SamplingMessage);
  const request: CreateMessageParams = { ...params, ...systemPrompt, messages };
  return { request, found: [...counts].map(([kind, count]) => ({ kind, count })) };
}

/** Two lists of findings as one, counts added by kind. */
export function mergeFindings(a: readonly MaskFinding[], b: readonly MaskFinding[]): MaskFinding[] {
  const counts = new Map<string, number>();
  for (const f of [...a, ...b]) counts.set(f.kind, (counts.get(f.kind) ?? 0) + f.count);
  return [...counts].map(([kind, count]) => ({ kind, count }));
}
