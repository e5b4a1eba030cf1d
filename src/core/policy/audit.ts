/**
 * The audit log: one JSON line per request the gate decided on and per request a server made of
 * us, each chained to the one before by a SHA-256 (`prev` / `hash`), so an edited, deleted or
 * reordered line is found by `verifyAudit`. Writing is queued and done off the call's path, about
 * 25 ms after the first record queued (./offPath.ts): a call never waits for the disk, every record
 * queued by then goes in one write, and a crash loses at most the records of those 25 ms.
 *
 * The file stays open between writes, and each write is a synchronous append of a few hundred
 * bytes: about 10 µs, where opening, appending and closing it with the promise API cost the
 * extension host about 0.2 ms of its thread for each record (bench/chat-vscode.mjs profiles it;
 * every chat call is one). Before each write the path is checked against the open file: a log the
 * person deleted or moved away is created anew at its path, never written to where nobody looks.
 */
import { createHash } from 'node:crypto';
import * as fsSync from 'node:fs';
import { promises as fs } from 'node:fs';
import { stableStringify } from '../protocol/stableStringify';
import { OffPath } from './offPath';
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
  /** The open file, and which file it is (to tell it from another at the same path). */
  private fd: { fd: number; dev: number; ino: number } | undefined;

  constructor(private readonly options: AuditLogOptions) {}

  /** Hashing and writing wait until the call that appended the record is done with (./offPath.ts). */
  private readonly later = new OffPath<AuditEntry>((entries) => {
    this.queue.push(...entries);
    // In a turn of its own: `drain` clears `draining` when it is done, which must come after this assignment.
    this.draining ??= Promise.resolve().then(() => this.drain());
  });

  append(entry: AuditEntry): void {
    this.later.add(entry);
  }

  /** Resolves when every record appended so far is on disk (or failed). */
  async flushed(): Promise<void> {
    this.later.flush();
    while (this.draining) await this.draining;
  }

  /** Writes what is queued and closes the file; a later append opens it again. */
  async close(): Promise<void> {
    await this.flushed();
    this.closeFile();
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
    const maxBytes = this.options.maxBytes ?? DEFAULT_MAX_BYTES;
    // The lines of one write: they start at `chainStart`, so a failed write takes its records out of the chain.
    let chunk = '';
    let chunkBytes = 0;
    let chainStart = this.lastHash;
    const write = (): void => {
      if (!chunk) return;
      if (this.writeOut(chunk)) this.size += chunkBytes;
      else this.lastHash = chainStart;
      chunk = '';
      chunkBytes = 0;
      chainStart = this.lastHash;
    };
    // `draining` is cleared in the same turn the queue is found empty, so no append is stranded.
    for (let entry = this.queue.shift(); entry; entry = this.queue.shift()) {
      const cleaned = this.cleaned(entry);
      const next = (): { line: string; hash: string } => {
        const withoutHash = { ...cleaned, prev: this.lastHash };
        const hash = recordHash(withoutHash);
        return { line: `${JSON.stringify({ ...withoutHash, hash } satisfies AuditRecord)}\n`, hash };
      };
      let record = next();
      // `prev` and `hash` are 64 hex digits whatever they are: the length is known before the chain is.
      const bytes = Buffer.byteLength(record.line);
      if (this.size + chunkBytes > 0 && this.size + chunkBytes + bytes > maxBytes) {
        write();
        if (this.size > 0) await this.rotate().catch((error: unknown) => this.report(error));
        // Linked to the last record written (a failed write took its records out of the chain).
        record = next();
      }
      chunk += record.line;
      chunkBytes += bytes;
      this.lastHash = record.hash;
    }
    write();
    this.draining = undefined;
  }

  /** Appends the text to the file at the path (opened or opened anew); false when it could not. */
  private writeOut(text: string): boolean {
    try {
      const open = this.openFile();
      const bytes = Buffer.from(text, 'utf8');
      for (let done = 0; done < bytes.length;) done += fsSync.writeSync(open.fd, bytes, done, bytes.length - done);
      return true;
    } catch (error) {
      // A half-failed write leaves no file open that may no longer be the log.
      this.closeFile();
      this.report(error);
      return false;
    }
  }

  /** The open file when it is still the one at the path, else the path opened (created) for appending. */
  private openFile(): { fd: number; dev: number; ino: number } {
    const at = fsSync.statSync(this.options.file, { throwIfNoEntry: false });
    if (this.fd && at && at.dev === this.fd.dev && at.ino === this.fd.ino) return this.fd;
    // Deleted, moved, or replaced since it was opened (or never opened): a file of its own at the path.
    this.closeFile();
    const fd = fsSync.openSync(this.options.file, 'a', 0o600);
    const stat = fsSync.fstatSync(fd);
    this.size = stat.size;
    this.fd = { fd, dev: stat.dev, ino: stat.ino };
    return this.fd;
  }

  private closeFile(): void {
    if (!this.fd) return;
    try {
      fsSync.closeSync(this.fd.fd);
    } catch {
      // Closed already: nothing is lost.
    }
    this.fd = undefined;
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
    this.closeFile();
    const keep = this.options.keep ?? DEFAULT_KEEP;
    await fs.rm(rotatedName(this.options.file, keep), { force: true });
    for (let n = keep - 1; n >= 1; n--) {
      await fs.rename(rotatedName(this.options.file, n), rotatedName(this.options.file, n + 1)).catch(() => undefined);
    }
    // Gone already (the person deleted it): the next write starts a file of its own.
    await fs.rename(this.options.file, rotatedName(this.options.file, 1)).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
    });
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
