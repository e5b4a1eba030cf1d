/**
 * Verifying an audit log (./audit.ts writes it): every line's hash, its link to the line before,
 * across the rotated files, and with the file's key every record's MAC.
 *
 * What each check catches: the chain catches an edited, removed, added or reordered line, but not
 * a rewrite that recomputes every hash after it, nor records cut from the end (what is left is a
 * shorter chain that verifies). The MAC catches the rewrite for anyone without the key. The head
 * (the hash of the last record, printed by a verification and remembered by the editor) catches a
 * cut: a later verification must still find that head in the chain.
 */
import { createHash, createHmac } from 'node:crypto';
import { canonicalJson } from '../protocol/stableStringify';
import { readPolicyFile, type PolicyFileOptions } from '../files/policyFile';
import type { AnyAuditRecord, AuditLine } from './types';

export const FIRST_PREV = '0'.repeat(64);
export const DEFAULT_KEEP = 5;
/** The largest file verification reads (the writer rotates at 10 MB): a larger one is refused, not read. */
export const MAX_VERIFIED_BYTES = 256 * 1024 * 1024;

/** The SHA-256 of a record's canonical JSON; it throws for a number JSON cannot carry (the writer never writes one). */
export function recordHash(record: AuditLine & { prev: string }): string {
  return createHash('sha256').update(canonicalJson(record)).digest('hex');
}

export function recordMac(key: Buffer, hash: string): string {
  return createHmac('sha256', key).update(hash).digest('hex');
}

/** `audit.jsonl` → `audit.2.jsonl`. */
export function rotatedName(file: string, n: number): string {
  const dot = file.lastIndexOf('.');
  const slash = Math.max(file.lastIndexOf('/'), file.lastIndexOf('\\'));
  return dot > slash + 1 ? `${file.slice(0, dot)}.${n}${file.slice(dot)}` : `${file}.${n}`;
}

/** How the MACs went: not checked (no key), or checked, with how many records came before MACs began. */
export type MacVerdict = { checked: false } | { checked: true; unsigned: number };

export type AuditVerdict =
  { ok: true; records: AnyAuditRecord[]; head: string; macs: MacVerdict } | { ok: false; line: number; reason: string };

/**
 * Checks lines one after the other, across files. With a key, records from the first one that
 * carries a MAC on must all carry a valid one; records before it were written before MACs (or
 * without a key) and are counted, and a chain where no record carries a MAC fails (stripping every
 * MAC is how a re-hash would hide).
 */
class ChainCheck {
  expected: string;
  private signed = false;
  unsigned = 0;

  constructor(
    prev: string,
    private readonly key: Buffer | undefined,
  ) {
    this.expected = prev;
  }

  /** The record, or why the line fails. */
  check(raw: string): AnyAuditRecord | string {
    let record: AnyAuditRecord;
    try {
      record = JSON.parse(raw) as AnyAuditRecord;
    } catch {
      return 'not JSON';
    }
    if (!record || typeof record !== 'object' || typeof record.hash !== 'string') return 'no hash';
    const { hash, mac, ...rest } = record;
    let computed: string;
    try {
      computed = recordHash(rest);
    } catch {
      return 'the record holds a number JSON cannot carry (1e999): it was not written by MCP Host';
    }
    if (computed !== hash) return 'the record was changed (its hash does not match)';
    if (record.prev !== this.expected) return 'the chain is broken (a record before it was removed, added or moved)';
    if (this.key) {
      if (mac === undefined) {
        if (this.signed) return 'the record has no MAC, and records before it have one (it was added or re-hashed without the key)';
        this.unsigned++;
      } else if (mac !== recordMac(this.key, hash)) {
        return 'the MAC does not match (the record was re-hashed without the key, or the key is not this log’s)';
      } else this.signed = true;
    }
    this.expected = hash;
    return record;
  }

  /** Why the whole chain fails once every line passed: a key and not one MAC. */
  finish(records: number): string | undefined {
    if (this.key && records > 0 && !this.signed) return 'no record carries a MAC (written without a key, or every MAC was stripped)';
    return undefined;
  }

  macs(): MacVerdict {
    return this.key ? { checked: true, unsigned: this.unsigned } : { checked: false };
  }
}

function linesOf(text: string): string[] {
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/**
 * Checks every line's hash and its link to the line before (and with `key`, its MAC). `prev` is
 * what the first line must link to: 64 zeros for a log that was never rotated, the last hash of
 * the older file otherwise.
 */
export function verifyAudit(text: string, prev: string = FIRST_PREV, key?: Buffer): AuditVerdict {
  const chain = new ChainCheck(prev, key);
  const records: AnyAuditRecord[] = [];
  for (const [index, raw] of linesOf(text).entries()) {
    const checked = chain.check(raw);
    if (typeof checked === 'string') return { ok: false, line: index + 1, reason: checked };
    records.push(checked);
  }
  const failed = chain.finish(records.length);
  if (failed) return { ok: false, line: records.length, reason: failed };
  return { ok: true, records, head: chain.expected, macs: chain.macs() };
}

export type AuditFileVerdict =
  | {
      ok: true;
      records: AnyAuditRecord[];
      /** The hash of the last record (what the first record links to when there is none). */
      head: string;
      macs: MacVerdict;
      /** The number of the oldest file kept (0 when nothing was rotated away). */
      firstFile: number;
    }
  | { ok: false; file: string; line: number; reason: string };

/**
 * Verifies a log with its rotated files, oldest first, as one chain; a broken line is named by
 * its file. The oldest file kept must start the chain: with a rotation record (the files before
 * it were deleted by rotation; its `prev` is what it says the file before ended with), or with a
 * record whose `prev` is 64 zeros (the log's first). Any other start is a log whose front was
 * cut. Every file is read as a policy file (../files/policyFile.ts): a link (to `/dev/null`, say), a FIFO
 * or a file over `MAX_VERIFIED_BYTES` fails the verification, naming it.
 */
export async function verifyAuditFile(
  file: string,
  options: { keep?: number; key?: Buffer; within?: PolicyFileOptions['within'] } = {},
): Promise<AuditFileVerdict> {
  const keep = options.keep ?? DEFAULT_KEEP;
  const read = (part: string) => readPolicyFile(part, MAX_VERIFIED_BYTES, { within: options.within });
  const files: string[] = [];
  const texts: string[] = [];
  for (let n = keep; n >= 1; n--) {
    const older = rotatedName(file, n);
    const text = await read(older).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined;
      throw error;
    });
    if (text === undefined) continue;
    files.push(older);
    texts.push(text);
  }
  files.push(file);
  texts.push(await read(file));
  const first = firstRecord(texts[0]);
  const rotated = first?.kind === 'rotation';
  if (first && !rotated && first.prev !== FIRST_PREV) {
    return {
      ok: false,
      file: files[0],
      line: 1,
      reason:
        'the oldest file does not start the log: its first record links to one before it and is no rotation record (records were cut from its front)',
    };
  }
  const chain = new ChainCheck(rotated ? first.prev : FIRST_PREV, options.key);
  const records: AnyAuditRecord[] = [];
  for (const [index, part] of files.entries()) {
    for (const [lineIndex, raw] of linesOf(texts[index]).entries()) {
      const checked = chain.check(raw);
      const line = lineIndex + 1;
      if (typeof checked === 'string') return { ok: false, file: part, line, reason: checked };
      if (checked.kind === 'rotation' && (line !== 1 || checked.previous.head !== checked.prev)) {
        return { ok: false, file: part, line, reason: 'a rotation record that does not start its file or names another head' };
      }
      records.push(checked);
    }
  }
  const failed = chain.finish(records.length);
  if (failed) return { ok: false, file, line: 0, reason: failed };
  return { ok: true, records, head: chain.expected, macs: chain.macs(), firstFile: rotated ? first.file : 0 };
}

function firstRecord(text: string): AnyAuditRecord | undefined {
  try {
    return JSON.parse(text.split('\n', 1)[0]) as AnyAuditRecord;
  } catch {
    return undefined;
  }
}

/**
 * How many records follow the one whose hash is `head`, or undefined when that record is not in
 * the chain (a hash the oldest record only links to is not enough: that record is gone).
 */
export function recordsAfterHead(records: readonly AnyAuditRecord[], head: string): number | undefined {
  const index = records.findIndex((r) => r.hash === head);
  return index < 0 ? undefined : records.length - index - 1;
}
