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
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import { dirname } from 'node:path';

export interface LockOptions {
  /** A lock older than this is taken as left behind, whoever holds it (10 s). */
  staleMs?: number;
  /** Give up (the batch fails, reported) after waiting this long (staleMs + 5 s). */
  timeoutMs?: number;
}

const DEFAULT_STALE_MS = 10_000;

export function lockPath(file: string): string {
  return `${file}.lock`;
}

/** Takes the lock of `file`, waiting for another holder; resolves to its release. */
export async function acquireLock(file: string, options: LockOptions = {}): Promise<() => void> {
  const staleMs = options.staleMs ?? DEFAULT_STALE_MS;
  const timeoutMs = options.timeoutMs ?? staleMs + 5_000;
  const path = lockPath(file);
  const started = Date.now();
  for (let attempt = 0; ; attempt++) {
    const taken = tryLock(path);
    if (taken) return taken;
    if (removeIfStale(path, staleMs)) continue;
    if (Date.now() - started > timeoutMs) throw new Error(`the audit log is locked by another writer (${describeHolder(path)})`);
    // A holder keeps it for a few milliseconds: short waits with jitter, so two waiters do not retry in step.
    await new Promise((resolve) => setTimeout(resolve, Math.min(2 + attempt, 20) * (0.5 + Math.random())));
  }
}

/** The release of a lock just taken, or undefined when another holds it. */
function tryLock(path: string): (() => void) | undefined {
  let fd: number;
  try {
    fd = fs.openSync(path, 'wx', 0o600);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return undefined;
    if (code !== 'ENOENT') throw error;
    // The log's folder was deleted: made again, as the log itself would be.
    fs.mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    return tryLock(path);
  }
  let ino: number;
  try {
    fs.writeSync(fd, JSON.stringify({ pid: process.pid, host: os.hostname(), time: new Date().toISOString() }));
    ino = fs.fstatSync(fd).ino;
  } finally {
    fs.closeSync(fd);
  }
  return () => {
    // Only our own lock: a lock judged stale and taken by another writer is theirs now.
    const at = fs.statSync(path, { throwIfNoEntry: false });
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
    return JSON.parse(fs.readFileSync(path, 'utf8')) as Holder;
  } catch {
    // Gone, or just created and not written yet.
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
  const before = fs.statSync(path, { throwIfNoEntry: false });
  if (!before) return true;
  const holder = readHolder(path);
  const deadHere = holder?.host === os.hostname() && typeof holder.pid === 'number' && !alive(holder.pid);
  if (!deadHere && Date.now() - before.mtimeMs <= staleMs) return false;
  const now = fs.statSync(path, { throwIfNoEntry: false });
  if (now && now.ino === before.ino) fs.rmSync(path, { force: true });
  return true;
}
