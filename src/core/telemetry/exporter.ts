/**
 * What a host holds of the OTLP exporter (./otel.ts) without loading it: its shape, and the
 * cleaner every exported text passes.
 */
import type { RequestTelemetry } from '../policy/telemetry';
import type { AnyAuditRecord, Masker } from '../policy/types';

/** The servers' secrets redacted and secret shapes masked (../scan/mask.ts): what every exported text passes. */
export interface Cleaner {
  text(text: string): string;
  /** Every string of a JSON value, cleaned; the value is copied. */
  value<T>(value: T): T;
}

/** Deeper than this, a value is exported as a placeholder (arguments are bounded by the gate's limits before this). */
const MAX_CLEANED_DEPTH = 64;

/** The cleaner of a host: `redact` (the servers' or the CLI's secrets), then `masker` (secret shapes). */
export function cleanerOf(redact: (text: string) => string, masker: Masker): Cleaner {
  const text = (t: string): string => masker.maskText(redact(t)).text;
  const walk = (v: unknown, depth: number): unknown => {
    if (typeof v === 'string') return text(v);
    if (typeof v !== 'object' || v === null) return v;
    if (depth >= MAX_CLEANED_DEPTH) return '[not exported: nested too deep]';
    if (Array.isArray(v)) return v.map((x) => walk(x, depth + 1));
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [text(k), walk(x, depth + 1)]));
  };
  return { text, value: <T>(v: T) => walk(v, 0) as T };
}

export interface TelemetryExporter extends RequestTelemetry {
  /** Audit records as written (chain fields included), each exported as a log record. */
  auditRecords(records: readonly AnyAuditRecord[]): void;
  /** Sends what is queued now. */
  flush(): Promise<void>;
  /** Sends what is queued and stops; resolves within `timeoutMs` whatever the collector does: true when everything went out. */
  shutdown(timeoutMs: number): Promise<boolean>;
}
