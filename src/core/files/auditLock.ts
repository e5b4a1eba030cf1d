/**
 * A lock across processes for one audit file, so several writers (VS Code windows, CLI runs) keep
 * one chain. Node has no `flock`: the lock is a file `<audit file>.lock` created exclusively
 * (O_EXCL), holding who took it (pid, host name, time). It is held only for the few synchronous
 * steps of one batch (read the last record, append, maybe rotate), never across an `await`, so a
 * holder that dies leaves it behind only when its process died in those steps.
 *
 * A lock left behind is stale when its holder's process is gone (same host, pid not alive) or when
 * it is older than `staleMs` (another host, or a pid taken again); a stale lock is removed and
 * taken. Between judging a lock stale and removing it another writer can have replaced it: the
 * lock's inode is compared just before removing, which narrows that window to microseconds but
 * cannot close it (the file system offers no compare-and-delete).
 *
 * The lock is a policy file (./policyFile.ts): created without following a link, in a folder
 * reached through none. A lock that is not a regular file (a link, a folder, a FIFO planted there)
 * is no lock MCP Host took: it is refused at once, never read, followed or waited on. Every wait
 * backs off, and the whole wait ends by `timeoutMs` (10 s).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import { dirname } from 'node:path';
import { checkPolicyFolders, fileKind, openPolicyFile, PolicyFileError, readPolicyFileSync, type PolicyFileOptions } from './policyFile';

export interface LockOptions {
  /** A lock older than this is taken as left behind, whoever holds it (5 s). */
  staleMs?: number;
  /** Give up (the batch fails, reported) after waiting this long (10 s). */
  timeoutMs?: number;
  /** The folders the person chose, through which the lock's folder is reached without a link (./policyFile.ts). */
  within?: PolicyFileOptions['within'];
}

/** A lock is held for the few synchronous steps of one batch: one this old was left behind. */
export const LOCK_STALE_MS = 5_000;
/** How long a writer waits for the lock before it gives up on the batch (and the CLI exits). */
export const LOCK_TIMEOUT_MS = 10_000;
/** The longest pause between two tries: the waits grow from 2 ms to this. */
const MAX_BACKOFF_MS = 250;
/** What is read of a lock to name its holder. */
const MAX_HOLDER_BYTES = 4096;

export function lockPath(file: string): string {
  return `${file}.lock`;
}

/** Takes the lock of `file`, waiting for another holder; resolves to its release. */
export async function acquireLock(file: string, options: LockOptions = {}): Promise<() => void> {
  const staleMs = options.staleMs ?? LOCK_STALE_MS;
  const timeoutMs = options.timeoutMs ?? LOCK_TIMEOUT_MS;
  const path = lockPath(file);
  const started = Date.now();
  for (let attempt = 0; ; attempt++) {
    const taken = tryLock(path, options);
    if (taken) return taken;
    // A lock left behind is removed, and the next try comes after a pause like any other: no path through here spins.
    const removed = removeIfStale(path, staleMs);
    if (Date.now() - started > timeoutMs)
      throw new Error(
        removed
          ? `the audit log's lock ${path} could not be taken in ${timeoutMs / 1000} s`
          : `the audit log is locked by another writer (${describeHolder(path)}); gave up after ${timeoutMs / 1000} s`,
      );
    // A holder keeps it for a few milliseconds: waits that grow, with jitter so two waiters do not retry in step.
    await new Promise((resolve) => setTimeout(resolve, Math.min(2 * 1.5 ** attempt, MAX_BACKOFF_MS) * (0.5 + Math.random())));
  }
}

/** The release of a lock just taken, or undefined when another holds it. */
function tryLock(path: string, options: LockOptions): (() => void) | undefined {
  const create = (): number | undefined => {
    try {
      return openPolicyFile(path, 'create', { within: options.within, mode: 0o600 }).fd;
    } catch (error) {
      // Another writer holds it.
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') return undefined;
      throw error;
    }
  };
  let fd: number | undefined;
  try {
    fd = create();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    // The log's folder was deleted: made again, as the log itself would be (through no link).
    checkPolicyFolders(path, options);
    fs.mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    fd = create();
  }
  if (fd === undefined) return undefined;
  let ino: number;
  try {
    fs.writeSync(fd, JSON.stringify({ pid: process.pid, host: os.hostname(), time: new Date().toISOString() }));
    ino = fs.fstatSync(fd).ino;
  } finally {
    fs.closeSync(fd);
  }
  return () => {
    // Only our own lock: a lock judged stale and taken by another writer is theirs now.
    const at = fs.lstatSync(path, { throwIfNoEntry: false });
    if (at?.ino === ino) fs.rmSync(path, { force: true });
  };
}

interface Holder {
  pid?: number;
  host?: string;
  time?: string;
}

function readHolder(path: string): Holder | undefined {
  try {
    return JSON.parse(readPolicyFileSync(path, MAX_HOLDER_BYTES)) as Holder;
  } catch {
    // Gone, just created and not written yet, or not a lock of ours (refused by removeIfStale).
    return undefined;
  }
}

function describeHolder(path: string): string {
  const holder = readHolder(path);
  return holder ? `pid ${holder.pid} on ${holder.host} since ${holder.time}` : path;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, it is someone else's.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Removes the lock when it was left behind; true when it did (or the lock is gone already). */
function removeIfStale(path: string, staleMs: number): boolean {
  const before = fs.lstatSync(path, { throwIfNoEntry: false });
  if (!before) return true;
  if (!before.isFile())
    throw new PolicyFileError(path, `is ${fileKind(before)}, not a lock MCP Host took: remove it, and the audit log is written again`);
  const holder = readHolder(path);
  const deadHere = holder?.host === os.hostname() && typeof holder.pid === 'number' && !alive(holder.pid);
  if (!deadHere && Date.now() - before.mtimeMs <= staleMs) return false;
  const now = fs.lstatSync(path, { throwIfNoEntry: false });
  if (now && now.ino === before.ino) fs.rmSync(path, { force: true });
  return true;
}
