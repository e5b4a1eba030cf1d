/**
 * W3C Trace Context as MCP carries it: `traceparent` and `tracestate` in a request's
 * `params._meta` (the MCP semantic conventions of OpenTelemetry, SEP-414). VS Code's chat puts its
 * trace there on every tool call it sends, an agent may too; MCP Host continues that trace and
 * passes its own span's context on to the server the same way. Read without the OpenTelemetry SDK,
 * so a window that exports nothing still passes a caller's trace on (see ./telemetry.ts).
 */

/** A trace context as it travels in `_meta`: always a valid `traceparent`, a `tracestate` only when it is well-formed. */
export interface TraceContext {
  traceparent: string;
  tracestate?: string;
}

/** The `_meta` keys, written unprefixed as the conventions say. */
export const TRACEPARENT = 'traceparent';
export const TRACESTATE = 'tracestate';

// version-traceid-parentid-flags; a later version may add fields after a dash (W3C: parse what is known).
const TRACEPARENT_FORMAT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);
/** The longest `tracestate` passed on: W3C lets a system cut it at 512 characters, and a hostile caller gets no more room. */
const MAX_TRACESTATE = 512;
const MAX_TRACESTATE_MEMBERS = 32;
const TRACESTATE_MEMBER = /^[a-z0-9][a-z0-9_\-*/@]{0,255}=[\x20-\x2b\x2d-\x3c\x3e-\x7e]{0,255}[\x21-\x2b\x2d-\x3c\x3e-\x7e]$/;

/** Whether `value` is a `traceparent` this host may continue: the W3C format, non-zero ids, version 00 exactly (or a later one). */
export function isTraceparent(value: unknown): value is string {
  if (typeof value !== 'string' || value.length > 512) return false;
  const m = TRACEPARENT_FORMAT.exec(value);
  if (!m) return false;
  const [, version, traceId, spanId, , rest] = m;
  if (version === 'ff' || traceId === ZERO_TRACE || spanId === ZERO_SPAN) return false;
  // Version 00 has exactly four fields; a later version's extra fields are ignored, never trusted.
  return version !== '00' || rest === undefined;
}

/** `tracestate` when it is a well-formed list (at most 32 members, 512 characters), else undefined: a bad one is dropped, not repaired. */
export function wellFormedTracestate(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_TRACESTATE) return undefined;
  const members = value
    .split(',')
    .map((m) => m.trim())
    .filter((m) => m.length > 0);
  if (members.length === 0 || members.length > MAX_TRACESTATE_MEMBERS) return undefined;
  return members.every((m) => TRACESTATE_MEMBER.test(m)) ? members.join(',') : undefined;
}

/** The trace context a request's `_meta` carries, checked; undefined when it has none, or none that is valid. */
export function traceContextOf(meta: unknown): TraceContext | undefined {
  if (typeof meta !== 'object' || meta === null) return undefined;
  const m = meta as Record<string, unknown>;
  const traceparent = m[TRACEPARENT];
  if (!isTraceparent(traceparent)) return undefined;
  // Only the four known fields go on: a later version's extras are not ours to forward.
  const parent = traceparent.slice(0, 55);
  const tracestate = wellFormedTracestate(m[TRACESTATE]);
  return tracestate === undefined ? { traceparent: parent } : { traceparent: parent, tracestate };
}

/** The `_meta` entries that carry `context` to a server. */
export function traceMeta(context: TraceContext | undefined): Record<string, string> | undefined {
  if (!context) return undefined;
  return context.tracestate === undefined
    ? { [TRACEPARENT]: context.traceparent }
    : { [TRACEPARENT]: context.traceparent, [TRACESTATE]: context.tracestate };
}
