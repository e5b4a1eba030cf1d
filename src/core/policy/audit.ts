/**
 * The audit log: one JSON line per request the gate decided on and per request a server made of
 * us, each chained to the one before by a SHA-256 (`prev` / `hash`), so an edited, deleted or
 * reordered line is found by `verifyAudit`. Writing is queued and appended line by line (no
 * buffer survives a write), so a call never waits for the disk and a crash loses at most the
 * line being written.
 */
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import { stableStringify } from '../protocol/stableStringify';
import type { AuditEntry, AuditRecord, AuditSink, Masker } from './types';

export const FIRST_PREV = '0'.repeat(64);
const DEFAULT_MAX_BYTES = 10 * 1024 * 1024;
const DEFAULT_KEEP = 5;

export interface AuditLogOptions {
  file: string;
  /** The servers' secrets (the launch redactor); applied to the arguments and name before masking. */
  redact?: (text: string) => string;
  masker?: Masker;
  /** A file that would grow past this many bytes is rotated first (10 MB). */
  maxBytes?: number;
  /** How many rotated files (`audit.1.jsonl` …) are kept (5). */
  keep?: number;
  /** The first disk error, once; later records are still tried. */
  onError?: (error: Error) => void;
}

export function recordHash(record: Omit<AuditRecord, 'hash'>): string {
  return createHash('sha256').update(stableStringify(record)).digest('hex');
}

/** `audit.jsonl` → `audit.2.jsonl`. */
export function rotatedName(file: string, n: number): string {
  const dot = file.lastIndexOf('.');
  const slash = Math.max(file.lastIndexOf('/'), file.lastIndexOf('\\'));
  return dot > slash + 1 ? `${file.slice(0, dot)}.${n}${file.slice(dot)}` : `${file}.${n}`;
}

export class AuditLog implements AuditSink {
  private readonly queue: AuditEntry[] = [];
  private draining: Promise<void> | undefined;
  private opened = false;
  private lastHash = FIRST_PREV;
  private size = 0;
  private errorReported = false;

  constructor(private readonly options: AuditLogOptions) {}

  append(entry: AuditEntry): void {
    this.queue.push(entry);
    // Written once the call that appended it has had its answer sent: hashing and writing are off its path.
    this.draining ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.drain());
  }

  /** Resolves when every record appended so far is on disk (or failed). */
  async flushed(): Promise<void> {
    while (this.draining) await this.draining;
  }

  /** The entry as written: secrets redacted, then masked. */
  private cleaned(entry: AuditEntry): AuditEntry {
    const redact = this.options.redact;
    // Each string is redacted on its own (a secret with a quote or a backslash is matched as it is, not as JSON escapes it).
    const redactStrings = (v: unknown): unknown =>
      typeof v === 'string'
        ? redact!(v)
        : Array.isArray(v)
          ? v.map(redactStrings)
          : v && typeof v === 'object'
            ? Object.fromEntries(Object.entries(v).map(([k, item]) => [k, redactStrings(item)]))
            : v;
    const clean = <T>(value: T): T => {
      const redacted = redact ? (redactStrings(value) as T) : value;
      return this.options.masker ? this.options.masker.maskValue(redacted).value : redacted;
    };
    const out: AuditEntry = { ...entry };
    if (entry.name !== undefined) out.name = clean(entry.name);
    if (entry.arguments !== undefined) out.arguments = clean(entry.arguments);
    if (entry.fenced !== undefined) out.fenced = clean(entry.fenced);
    return out;
  }

  private async drain(): Promise<void> {
    if (!this.opened) await this.open();
    // `draining` is cleared in the same turn the queue is found empty, so no append is stranded.
    for (let entry = this.queue.shift(); entry; entry = this.queue.shift()) {
      const withoutHash = { ...this.cleaned(entry), prev: this.lastHash };
      const record: AuditRecord = { ...withoutHash, hash: recordHash(withoutHash) };
      const line = `${JSON.stringify(record)}\n`;
      try {
        const bytes = Buffer.byteLength(line);
        if (this.size > 0 && this.size + bytes > (this.options.maxBytes ?? DEFAULT_MAX_BYTES)) await this.rotate();
        await fs.appendFile(this.options.file, line, { encoding: 'utf8', mode: 0o600 });
        this.size += bytes;
        this.lastHash = record.hash;
      } catch (error) {
        this.report(error);
      }
    }
    this.draining = undefined;
  }

  /** Continues the chain of a file that exists: its last line's hash, its size. */
  private async open(): Promise<void> {
    this.opened = true;
    try {
      const text = await fs.readFile(this.options.file, 'utf8');
      this.size = Buffer.byteLength(text);
      const last = text.trimEnd().split('\n').pop();
      if (last) this.lastHash = (JSON.parse(last) as AuditRecord).hash ?? FIRST_PREV;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') this.report(error);
    }
  }

  private async rotate(): Promise<void> {
    const keep = this.options.keep ?? DEFAULT_KEEP;
    await fs.rm(rotatedName(this.options.file, keep), { force: true });
    for (let n = keep - 1; n >= 1; n--) {
      await fs.rename(rotatedName(this.options.file, n), rotatedName(this.options.file, n + 1)).catch(() => undefined);
    }
    await fs.rename(this.options.file, rotatedName(this.options.file, 1));
    this.size = 0;
  }

  private report(error: unknown): void {
    if (this.errorReported) return;
    this.errorReported = true;
    this.options.onError?.(error instanceof Error ? error : new Error(String(error)));
  }
}

export type AuditVerdict = { ok: true; records: AuditRecord[] } | { ok: false; line: number; reason: string };

/**
 * Checks every line's hash and its link to the line before. `prev` is what the first line must
 * link to: 64 zeros for a log that was never rotated, the last hash of the older file otherwise.
 */
export function verifyAudit(text: string, prev: string = FIRST_PREV): AuditVerdict {
  const records: AuditRecord[] = [];
  let expected = prev;
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  for (const [index, raw] of lines.entries()) {
    const line = index + 1;
    let record: AuditRecord;
    try {
      record = JSON.parse(raw) as AuditRecord;
    } catch {
      return { ok: false, line, reason: 'not JSON' };
    }
    if (!record || typeof record !== 'object' || typeof record.hash !== 'string') {
      return { ok: false, line, reason: 'no hash' };
    }
    const { hash, ...rest } = record;
    if (recordHash(rest) !== hash) return { ok: false, line, reason: 'the record was changed (its hash does not match)' };
    if (record.prev !== expected) {
      return { ok: false, line, reason: 'the chain is broken (a record before it was removed, added or moved)' };
    }
    expected = hash;
    records.push(record);
  }
  return { ok: true, records };
}

/**
 * Verifies a log with its rotated files, oldest first, as one chain; a broken line is named by
 * its file. The oldest file kept may link to one already deleted by rotation: its first `prev` is
 * taken as given.
 */
export async function verifyAuditFile(
  file: string,
  keep = DEFAULT_KEEP,
): Promise<{ ok: true; records: AuditRecord[] } | { ok: false; file: string; line: number; reason: string }> {
  const files: string[] = [];
  for (let n = keep; n >= 1; n--) {
    const older = rotatedName(file, n);
    if (
      await fs.stat(older).then(
        () => true,
        () => false,
      )
    )
      files.push(older);
  }
  files.push(file);
  const records: AuditRecord[] = [];
  let prev: string | undefined;
  for (const part of files) {
    const text = await fs.readFile(part, 'utf8');
    const start = prev ?? (files.length > 1 && part !== file ? firstPrev(text) : FIRST_PREV);
    const verdict = verifyAudit(text, start);
    if (!verdict.ok) return { ...verdict, file: part };
    records.push(...verdict.records);
    prev = verdict.records.length ? verdict.records[verdict.records.length - 1].hash : start;
  }
  return { ok: true, records };
}

function firstPrev(text: string): string {
  try {
    return (JSON.parse(text.split('\n', 1)[0]) as AuditRecord).prev ?? FIRST_PREV;
  } catch {
    return FIRST_PREV;
  }
}
