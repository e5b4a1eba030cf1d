/**
 * The audit log: one JSON line per request the gate decided on and per request a server made of
 * us, each chained to the one before by a SHA-256 (`prev` / `hash`) and, with the file's key, a
 * MAC, so an edited, deleted or reordered line is found by `verifyAudit` (./auditVerify.ts).
 * Writing is queued and done off the call's path, about 25 ms after the first record queued
 * (./offPath.ts): a call never waits for the disk, every record queued by then goes in one write,
 * and a crash loses at most the records of those 25 ms.
 *
 * Several writers (VS Code windows, CLI runs) may share the file: each batch takes the file's lock
 * (../files/auditLock.ts), links to the record that is really last (read from the file's end, unless the
 * file is still as this writer left it), appends and releases, all in synchronous steps. The file
 * stays open between writes: a batch costs an fstat, the lock's create and remove, and one append
 * of a few hundred bytes, where opening, appending and closing it with the promise API cost the
 * extension host about 0.2 ms of its thread for each record (bench/chat-vscode.mjs profiles it;
 * every chat call is one). Before each write the path is checked against the open file: a log the
 * person deleted, moved away or another writer rotated is opened anew at its path.
 *
 * The log, its lock and its rotated files are policy files (../files/policyFile.ts): a log that is a link
 * (to `~/.bashrc`, to `/dev/null`), that is reached through a link, or that is not a regular file
 * is not written; the batch fails with an error that names it.
 *
 * It never stops: a batch that fails (disk, lock, key) is reported and dropped, and the next one is
 * written; a value too deep or too large, or one masking throws on, is written as a placeholder.
 */
import * as fsSync from 'node:fs';
import { acquireLock, type LockOptions } from '../files/auditLock';
import { openPolicyFile, type PolicyFileOptions } from '../files/policyFile';
import { DEFAULT_KEEP, FIRST_PREV, recordHash, recordMac, rotatedName } from './auditVerify';
import { OffPath } from './offPath';
import type { AnyAuditRecord, AuditEntry, AuditLine, AuditSink, Masker, RotationEntry } from './types';

const DEFAULT_MAX_BYTES = 10 * 1024 * 1024;
/** Arguments nested deeper are cut there: a record is written whatever a caller sends. */
export const MAX_AUDITED_DEPTH = 64;
/** And so are arguments with more values than this (a value that refers to itself, a huge array). */
const MAX_AUDITED_VALUES = 100_000;
const TOO_DEEP = `[not recorded: nested deeper than ${MAX_AUDITED_DEPTH} levels]`;
const TOO_MANY = `[not recorded: more than ${MAX_AUDITED_VALUES} values]`;
const NOT_CLEANED = '[not recorded: it could not be masked]';

export interface AuditLogOptions {
  file: string;
  /** The servers' secrets (the launch redactor); applied to the arguments and name before masking. */
  redact?: (text: string) => string;
  masker?: Masker;
  /** A file that would grow past this many bytes is rotated first (10 MB). */
  maxBytes?: number;
  /** How many rotated files (`audit.1.jsonl` …) are kept (5). */
  keep?: number;
  /**
   * The audit file's key: each record gets `mac`, HMAC-SHA256 of its hash under it. A function is
   * asked once, at the first write, and again for the next batch after it failed (reported once;
   * that batch is written without MACs rather than lost).
   */
  key?: Buffer | (() => Promise<Buffer>);
  /** The lock across writers (../files/auditLock.ts). */
  lock?: LockOptions;
  /** The folders the person chose (the CLI's working folder): the log below one is reached through no link (../files/policyFile.ts). */
  within?: PolicyFileOptions['within'];
  /** A batch failed: reported once, and again after a batch that succeeded; later records are still written. */
  onError?: (error: Error) => void;
  /** A batch is in the file: the hash of its last record, the file's head now. */
  onWritten?: (head: string) => void;
  /**
   * A batch is in the file: its records as written, chain fields and MACs included (the team's
   * telemetry exports each as a log record, ../telemetry/load.ts). Told after the write, never
   * before: a record that is not on disk is not exported.
   */
  onRecords?: (records: readonly AnyAuditRecord[]) => void;
}

/** The open file, and which file it is (to tell it from another at the same path). */
interface OpenLog {
  fd: number;
  dev: number;
  ino: number;
}

export class AuditLog implements AuditSink {
  private readonly queue: AuditLine[] = [];
  private draining: Promise<void> | undefined;
  private failing = false;
  private fd: OpenLog | undefined;
  /** The file's end as this writer left it: when its size is still that, nobody appended since, and its head is known. */
  private known: { dev: number; ino: number; size: number; head: string } | undefined;
  private key: Promise<Buffer | undefined> | undefined;
  private keyReported = false;
  private maskReported = false;

  constructor(private readonly options: AuditLogOptions) {}

  /** Hashing and writing wait until the call that appended the record is done with (./offPath.ts). */
  private readonly later = new OffPath<AuditLine>((entries) => {
    this.queue.push(...entries);
    // In a turn of its own: `drain` clears `draining` when it is done, which must come after this assignment.
    this.draining ??= Promise.resolve().then(() => this.drain());
  });

  append(entry: AuditLine): void {
    this.later.add(entry);
  }

  /** The hashes of records written, by the entry appended: a later record names an earlier one by its hash (the flow guard's `taintedBy`). */
  private readonly hashes = new WeakMap<AuditLine, string>();

  async hashOf(entry: AuditEntry): Promise<string | undefined> {
    if (!this.hashes.has(entry)) await this.flushed();
    return this.hashes.get(entry);
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

  /**
   * The line as written: cut at `MAX_AUDITED_DEPTH`, secrets redacted, then masked. Never throws:
   * a part that cannot be cleaned is written as a placeholder, never as it came.
   */
  private cleaned(entry: AuditLine): AuditLine {
    const out = { ...entry } as Record<string, unknown>;
    for (const field of ['name', 'arguments', 'fenced']) {
      if (out[field] === undefined) continue;
      try {
        out[field] = cleanedValue(out[field], this.options.redact, this.options.masker);
      } catch (error) {
        out[field] = NOT_CLEANED;
        // The record is still written: said once, not once per batch.
        if (!this.maskReported) this.tell(new Error(`an audit record could not be masked, written without it: ${errorMessage(error)}`));
        this.maskReported = true;
      }
    }
    return out as unknown as AuditLine;
  }

  private async drain(): Promise<void> {
    try {
      // `draining` is cleared in the same turn the queue is found empty, so no append is stranded.
      while (this.queue.length) {
        const appended = this.queue.splice(0);
        const lines = appended.map((entry) => this.cleaned(entry));
        try {
          // Without its key a batch is still written, without MACs (verifying with the key then names where they stop).
          const key = await this.resolveKey().catch((error: unknown) => {
            if (!this.keyReported)
              this.tell(new Error(`the audit key is not available, records are written without MACs: ${errorMessage(error)}`));
            this.keyReported = true;
            return undefined;
          });
          const release = await acquireLock(this.options.file, { within: this.options.within, ...this.options.lock });
          let written: { head: string; records: AnyAuditRecord[] };
          try {
            written = this.appendLocked(lines, key, (i, hash) => this.hashes.set(appended[i], hash));
          } finally {
            release();
          }
          this.failing = false;
          this.options.onWritten?.(written.head);
          this.exported(written.records);
        } catch (error) {
          // What this writer knew of the file may be wrong now: the next batch reads its end again.
          this.known = undefined;
          this.closeFile();
          this.report(error);
        }
      }
    } finally {
      this.draining = undefined;
    }
  }

  /** Told to the exporter; whatever it does, the writer goes on. */
  private exported(records: AnyAuditRecord[]): void {
    try {
      this.options.onRecords?.(records);
    } catch {
      // The records are on disk; their export is not the log's concern.
    }
  }

  private resolveKey(): Promise<Buffer | undefined> {
    const key = this.options.key;
    this.key ??= Promise.resolve()
      .then(() => (typeof key === 'function' ? key() : key))
      .catch((error: unknown) => {
        this.key = undefined;
        throw error;
      });
    return this.key;
  }

  /**
   * Under the lock: links the lines to what is really last in the file (another writer may have
   * appended since), rotates when the file would grow past its size, appends; the new head.
   */
  private appendLocked(
    lines: AuditLine[],
    key: Buffer | undefined,
    hashed?: (index: number, hash: string) => void,
  ): { head: string; records: AnyAuditRecord[] } {
    const maxBytes = this.options.maxBytes ?? DEFAULT_MAX_BYTES;
    let open = this.openFile();
    const end = this.endOf(open);
    let { head, size } = end;
    // A line cut short by a crash stays on a line of its own (it fails verification there), not glued to ours.
    let chunk = end.complete ? '' : '\n';
    let chunkBytes = chunk.length;
    const records: AnyAuditRecord[] = [];
    const record = (line: AuditLine): { text: string; hash: string; written: AnyAuditRecord } => {
      const linked = { ...line, prev: head };
      const hash = recordHash(linked);
      const written: AnyAuditRecord = key ? { ...linked, hash, mac: recordMac(key, hash) } : { ...linked, hash };
      return { text: `${JSON.stringify(written)}\n`, hash, written };
    };
    const write = (): void => {
      writeAll(open.fd, chunk);
      size += chunkBytes;
      chunk = '';
      chunkBytes = 0;
    };
    for (const [index, line] of lines.entries()) {
      let next = record(line);
      // `prev` and `hash` are 64 hex digits whatever they are: the length is known before the chain is.
      const bytes = Buffer.byteLength(next.text);
      if (size + chunkBytes > 0 && size + chunkBytes + bytes > maxBytes) {
        write();
        const previous = fileNumber(open.fd);
        const rotation: RotationEntry = {
          kind: 'rotation',
          time: new Date().toISOString(),
          file: previous + 1,
          previous: { file: previous, head },
        };
        open = this.rotate();
        size = 0;
        const first = record(rotation);
        chunk += first.text;
        chunkBytes += Buffer.byteLength(first.text);
        head = first.hash;
        records.push(first.written);
        next = record(line);
      }
      chunk += next.text;
      chunkBytes += bytes;
      head = next.hash;
      hashed?.(index, head);
      records.push(next.written);
    }
    write();
    this.known = { dev: open.dev, ino: open.ino, size, head };
    return { head, records };
  }

  /** The head of the open file and its size: known when nobody appended since our last write, else read from its end. */
  private endOf(open: OpenLog): { head: string; size: number; complete: boolean } {
    const size = fsSync.fstatSync(open.fd).size;
    const known = this.known;
    if (known && known.dev === open.dev && known.ino === open.ino && known.size === size) return { head: known.head, size, complete: true };
    return { ...lastRecordHash(open.fd, size), size };
  }

  /** The open file when it is still the one at the path, else the path opened (created) for appending. */
  private openFile(): OpenLog {
    const at = fsSync.lstatSync(this.options.file, { throwIfNoEntry: false });
    if (this.fd && at && at.dev === this.fd.dev && at.ino === this.fd.ino) return this.fd;
    // Deleted, moved, or replaced since it was opened (or never opened): a file of its own at the path.
    this.closeFile();
    // Read too: the last record is read from the open file.
    const { fd, stat } = openPolicyFile(this.options.file, 'append', { within: this.options.within, mode: 0o600 });
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

  /** Shifts the rotated files by one, the oldest kept dropped, and opens a new file at the path. */
  private rotate(): OpenLog {
    this.closeFile();
    const file = this.options.file;
    const keep = this.options.keep ?? DEFAULT_KEEP;
    fsSync.rmSync(rotatedName(file, keep), { force: true });
    for (let n = keep - 1; n >= 1; n--) {
      try {
        fsSync.renameSync(rotatedName(file, n), rotatedName(file, n + 1));
      } catch {
        // A gap in the rotated files: it shows as a broken chain when verified.
      }
    }
    try {
      fsSync.renameSync(file, rotatedName(file, 1));
    } catch (error) {
      // Gone already (the person deleted it): the new file starts at the path.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    return this.openFile();
  }

  private report(error: unknown): void {
    if (this.failing) return;
    this.failing = true;
    this.tell(error instanceof Error ? error : new Error(String(error)));
  }

  /** The person's handler, which must not stop the writer either. */
  private tell(error: Error): void {
    try {
      this.options.onError?.(error);
    } catch {
      // Nobody to tell: the next batch is still written.
    }
  }
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function writeAll(fd: number, text: string): void {
  const bytes = Buffer.from(text, 'utf8');
  for (let done = 0; done < bytes.length;) done += fsSync.writeSync(fd, bytes, done, bytes.length - done);
}

const TAIL_BLOCK = 64 * 1024;
/**
 * How far from its end the last record is looked for: past any record the limits let through (4 Mi
 * characters of arguments, escaped). A planted file with no line in its last 64 MiB has no record
 * to continue: its chain starts again (and it fails verification, as it should).
 */
const MAX_TAIL_BYTES = 64 * 1024 * 1024;

/**
 * The hash of the file's last record, read from its end (never the whole file, never more than
 * `MAX_TAIL_BYTES`, each byte once), and whether the file ends with a whole line. A last line that
 * is not a record (cut short by a crash) is passed over for the one before it.
 */
function lastRecordHash(fd: number, size: number): { head: string; complete: boolean } {
  if (size === 0) return { head: FIRST_PREV, complete: true };
  const blocks: Buffer[] = [];
  let newlines = 0;
  let start = size;
  // Enough to hold the last two lines: three newlines, or the start of the file (or the bound).
  while (start > 0 && newlines < 3 && size - start < MAX_TAIL_BYTES) {
    const from = Math.max(0, start - TAIL_BLOCK);
    const block = Buffer.alloc(start - from);
    fsSync.readSync(fd, block, 0, block.length, from);
    blocks.unshift(block);
    newlines += countNewlines(block);
    start = from;
  }
  const tail = Buffer.concat(blocks);
  const complete = tail[tail.length - 1] === 0x0a;
  const lines = tail.toString('utf8').split('\n');
  // The first piece may be the end of a longer line; it is used only when it starts the file.
  for (let i = lines.length - 1; i >= (start === 0 ? 0 : 1); i--) {
    try {
      const hash = (JSON.parse(lines[i]) as { hash?: unknown }).hash;
      if (typeof hash === 'string') return { head: hash, complete };
    } catch {
      // Not a record: the one before it.
    }
  }
  return { head: FIRST_PREV, complete };
}

function countNewlines(buffer: Buffer): number {
  let count = 0;
  for (let at = buffer.indexOf(0x0a); at >= 0; at = buffer.indexOf(0x0a, at + 1)) count++;
  return count;
}

/** The number of the file open at `fd`: its rotation record says it; a file without one is the first, 0. */
function fileNumber(fd: number): number {
  // A rotation record is short and starts its file: a longer first line is another record.
  const block = Buffer.alloc(4096);
  const read = fsSync.readSync(fd, block, 0, block.length, 0);
  const newline = block.subarray(0, read).indexOf(0x0a);
  try {
    const first = JSON.parse(block.subarray(0, newline).toString('utf8')) as Partial<RotationEntry>;
    return newline > 0 && first.kind === 'rotation' && typeof first.file === 'number' ? first.file : 0;
  } catch {
    return 0;
  }
}

/**
 * A value as MCP Host keeps it for reading later (the audit log, the editor's history of the chat's
 * and the agents' calls): cut at `MAX_AUDITED_DEPTH`, secrets redacted, then masked. Throws where
 * masking does.
 */
export function cleanedValue(value: unknown, redact: ((text: string) => string) | undefined, masker: Masker | undefined): unknown {
  const bounded = boundedCopy(value, redact);
  return masker ? masker.maskValue(bounded).value : bounded;
}

/**
 * A copy of a JSON value, built without recursion: strings redacted, anything nested deeper than
 * `MAX_AUDITED_DEPTH` (or past `MAX_AUDITED_VALUES` values) replaced by a placeholder.
 */
function boundedCopy(value: unknown, redact: ((text: string) => string) | undefined): unknown {
  const root: Record<string, unknown> = {};
  const stack: Array<{ from: unknown; into: Record<string, unknown>; key: string; depth: number }> = [
    { from: value, into: root, key: 'value', depth: 0 },
  ];
  let values = 0;
  for (let item = stack.pop(); item; item = stack.pop()) {
    const { from, into, key, depth } = item;
    let copy: unknown;
    if (++values > MAX_AUDITED_VALUES) copy = TOO_MANY;
    else if (typeof from === 'string') copy = redact ? redact(from) : from;
    // JSON has no Infinity or NaN (it would write null for each): the record says which it was.
    else if (typeof from === 'number' && !Number.isFinite(from)) copy = String(from);
    else if (!from || typeof from !== 'object') copy = from;
    else if (depth >= MAX_AUDITED_DEPTH) copy = TOO_DEEP;
    else {
      const made: Record<string, unknown> = Array.isArray(from) ? (new Array(from.length) as unknown as Record<string, unknown>) : {};
      // Pushed last first, so each object's keys are copied in their order.
      for (const [k, v] of Object.entries(from).reverse()) stack.push({ from: v, into: made, key: k, depth: depth + 1 });
      copy = made;
    }
    // A key such as `__proto__` stays a key of its own.
    Object.defineProperty(into, key, { value: copy, enumerable: true, writable: true, configurable: true });
  }
  return root.value;
}
