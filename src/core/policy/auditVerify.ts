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
import { promises as fs } from 'node:fs';
import { stableStringify } from '../protocol/stableStringify';
import type { AnyAuditRecord, AuditLine } from './types';

export const FIRST_PREV = '0'.repeat(64);
export const DEFAULT_KEEP = 5;

export function recordHash(record: AuditLine & { prev: string }): string {
  return createHash('sha256').update(stableStringify(record)).digest('hex');
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
    if (recordHash(rest) !== hash) return 'the record was changed (its hash does not match)';
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
 * its file. The oldest file kept may link to one already deleted by rotation: its first `prev` is
 * taken as given, and its rotation record says which file it followed.
 */
export async function verifyAuditFile(file: string, options: { keep?: number; key?: Buffer } = {}): Promise<AuditFileVerdict> {
  const keep = options.keep ?? DEFAULT_KEEP;
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
  const texts = await Promise.all(files.map((part) => fs.readFile(part, 'utf8')));
  const first = firstRecord(texts[0]);
  const chain = new ChainCheck(files.length > 1 ? (first?.prev ?? FIRST_PREV) : FIRST_PREV, options.key);
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
  return { ok: true, records, head: chain.expected, macs: chain.macs(), firstFile: first?.kind === 'rotation' ? first.file : 0 };
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
