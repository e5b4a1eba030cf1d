import * as fs from 'node:fs';
import { copyFile, lstat, mkdir, open, readdir, readlink, rm, symlink, type FileHandle } from 'node:fs/promises';
import * as path from 'node:path';
import { heldMountPoints, withMountRegistry } from './protected';
import type { CacheSeed } from './reach';

/**
 * The cache of a sandboxed launcher (npx, uvx) is MCP Host's own folder, which no unsandboxed
 * program reads: a sandboxed server that rewrites a cached package changes only what sandboxed
 * servers run. It is seeded from the person's cache so that an offline `npx` still finds the
 * packages the person had: at each start, every file of the person's cache that MCP Host's lacks
 * is copied (a copy-on-write clone where the file system makes one, btrfs or XFS; else a copy), so
 * the first start copies the cache once and later starts only what is new (walking the person's
 * cache again at most every SEED_REUSE_MS in one process). Nothing is linked: a
 * hard link would let the server write the person's file in place.
 *
 * What is copied: npm's `_cacache` (the registry's answers and tarballs, checked against their
 * integrity on every read); not `_npx`, the packages npx unpacked, which npx unpacks again from the
 * tarballs. For uv, everything but its environments (`environments-v*`, which run) and locks.
 */
const SEEDED: Record<string, (top: string) => boolean> = {
  npm: (top) => top === '_cacache',
  uv: (top) => !top.startsWith('environments-') && top !== '.lock' && !top.endsWith('.lock'),
};

/** How long a seeding is taken as current for the next starts of this process: a window that starts ten servers walks the person's cache once. */
export const SEED_REUSE_MS = 5 * 60_000;
const seededAt = new Map<string, { at: number; done: Promise<SeedResult> }>();

/** seedCache, at most once per SEED_REUSE_MS for the same caches in this process. */
export function seedCacheOnce(seed: CacheSeed, now = Date.now()): Promise<SeedResult> {
  const key = `${seed.from}\u0000${seed.to}`;
  const last = seededAt.get(key);
  if (last && now - last.at < SEED_REUSE_MS) return last.done;
  const done = seedCache(seed);
  seededAt.set(key, { at: now, done });
  done.catch(() => seededAt.delete(key));
  return done;
}

/** How many entries of one folder are looked at (and copied) at once. */
const SEED_CONCURRENCY = 16;

/** What a seeding did: files copied, and how long it took (for the log). */
export interface SeedResult {
  copied: number;
  ms: number;
}

/** A folder opened without following a link at its last name: a link planted in its place is refused (ELOOP), never followed. */
const DIRECTORY = fs.constants.O_RDONLY | fs.constants.O_DIRECTORY | fs.constants.O_NOFOLLOW;
/** Where the kernel offers a path for an open descriptor (Linux): names under it are found in the folder opened, whatever is renamed meanwhile. */
const BY_DESCRIPTOR = fs.existsSync('/proc/self/fd') ? '/proc/self/fd' : undefined;

/** An open folder, and the path through which its entries are reached. */
interface OpenFolder {
  handle: FileHandle;
  at: string;
}

async function openFolder(p: string): Promise<OpenFolder | undefined> {
  try {
    const handle = await open(p, DIRECTORY);
    return { handle, at: BY_DESCRIPTOR ? `${BY_DESCRIPTOR}/${handle.fd}` : p };
  } catch {
    return undefined;
  }
}

/**
 * Makes `seed.to` (mode 0700) and copies into it what of `seed.from` it lacks, without blocking
 * (a first seeding may copy gigabytes). A file that cannot be read is passed over.
 *
 * `seed.to` is written by a sandboxed server between two seedings, so nothing in it is trusted: every
 * folder is opened without following a link, and each entry is reached through the descriptor of
 * the folder opened (not its path again), so a link the server planted, or put in place of a folder
 * meanwhile, is refused instead of followed; files are created exclusively (never through a link).
 * The same holds for `seed.from`, which reach.ts never takes from a folder the server may write.
 */
export async function seedCache(seed: CacheSeed): Promise<SeedResult> {
  const started = Date.now();
  await mkdir(seed.to, { recursive: true, mode: 0o700 });
  const keep = SEEDED[path.basename(seed.to)] ?? (() => false);
  let copied = 0;
  const walk = async (from: OpenFolder, to: OpenFolder, top: boolean): Promise<void> => {
    const entries = await readdir(from.at, { withFileTypes: true }).catch(() => [] as fs.Dirent[]);
    const existing = new Set(await readdir(to.at).catch(() => [] as string[]));
    const one = async (e: fs.Dirent): Promise<void> => {
      if (top && !keep(e.name)) return;
      const src = path.join(from.at, e.name);
      const dst = path.join(to.at, e.name);
      try {
        if (e.isDirectory()) {
          if (!existing.has(e.name)) await mkdir(dst, { mode: 0o700 });
          const [source, target] = await Promise.all([openFolder(src), openFolder(dst)]);
          try {
            if (source && target) await walk(source, target, false);
          } finally {
            await Promise.all([source?.handle.close(), target?.handle.close()]);
          }
        } else if (existing.has(e.name)) return;
        else if (e.isFile()) {
          const file = await open(src, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
          try {
            if (!(await file.stat()).isFile()) return;
            const source = BY_DESCRIPTOR ? `${BY_DESCRIPTOR}/${file.fd}` : src;
            await copyFile(source, dst, fs.constants.COPYFILE_FICLONE | fs.constants.COPYFILE_EXCL);
            copied++;
          } finally {
            await file.close();
          }
        } else if (e.isSymbolicLink()) await symlink(await readlink(src), dst);
      } catch {
        // Unreadable, a link where a folder was, or written meanwhile by a sandboxed launcher: its own copy stands.
      }
    };
    // A few at a time: the file system answers in parallel, and the descriptors stay few.
    for (let i = 0; i < entries.length; i += SEED_CONCURRENCY) await Promise.all(entries.slice(i, i + SEED_CONCURRENCY).map(one));
  };
  const [from, to] = await Promise.all([openFolder(seed.from), openFolder(seed.to)]);
  try {
    if (from && to) await walk(from, to, true);
  } finally {
    await Promise.all([from?.handle.close(), to?.handle.close()]);
  }
  return { copied, ms: Date.now() - started };
}

/**
 * Caches of launch identities are collected at a sandboxed launch (at most once per
 * COLLECT_EVERY_MS on a machine): one not used for CACHE_UNUSED_DAYS goes, and while all of them
 * together take more than CACHE_MAX_BYTES on disk the least recently used go. One a running launch
 * holds (its claim in the mount registry, protected.ts) stays, whatever its age or size.
 */
export const CACHE_UNUSED_DAYS = 30;
export const CACHE_MAX_BYTES = 4 * 1024 ** 3;
export const COLLECT_EVERY_MS = 60 * 60_000;

/** A launch identity's folder (reach.ts), and one being removed. */
const IDENTITY = /^[0-9a-f]{16}$/;
const REMOVING = /^\.removing-[0-9a-f]{16}-[0-9a-f]+$/;
/** The registry's file whose time is when the caches were last collected. */
const COLLECTED = 'collected';

/** Marks an identity's folder used now: its time is what collection reads. The folder itself is not bound into any sandbox, so no server changes it. */
export function markUsed(folder: string, now = new Date()): void {
  fs.lutimesSync(folder, now, now);
}

/** Whether a collection is due, and if so marks it begun (under the registry's lock). */
export function collectionDue(registry: string, now = Date.now()): boolean {
  const file = path.join(registry, COLLECTED);
  const last = fs.lstatSync(file, { throwIfNoEntry: false });
  if (last?.isFile() && now - last.mtimeMs < COLLECT_EVERY_MS && last.mtimeMs <= now) return false;
  // Whatever is in its place (a link) goes first; a new file is made, never one found there written.
  fs.rmSync(file, { force: true });
  fs.writeFileSync(file, '', { flag: 'wx', mode: 0o600 });
  fs.utimesSync(file, now / 1000, now / 1000);
  return true;
}

/** The bytes a folder takes on disk, every entry read with lstat: a link counts as itself, never what it names. */
async function diskUsage(folder: string): Promise<number> {
  let total = 0;
  const todo = [folder];
  for (let dir = todo.pop(); dir !== undefined; dir = todo.pop()) {
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => [] as fs.Dirent[]);
    for (let i = 0; i < entries.length; i += SEED_CONCURRENCY) {
      await Promise.all(
        entries.slice(i, i + SEED_CONCURRENCY).map(async (e) => {
          const p = path.join(dir, e.name);
          const s = await lstat(p).catch(() => undefined);
          if (!s) return;
          total += s.blocks ? s.blocks * 512 : s.size;
          if (s.isDirectory()) todo.push(p);
        }),
      );
    }
  }
  return total;
}

export interface CollectOptions {
  now?: number;
  unusedDays?: number;
  maxBytes?: number;
}

/**
 * Removes the caches of identities in `cacheRoot` that are unused or over the size (see
 * CACHE_UNUSED_DAYS), never one a live claim in `registry` holds. What goes is first renamed
 * (`.removing-…`, under the registry's lock, after the claims are read), so no launch starts with
 * half a cache, then removed without following any link in it: a server may have planted links to
 * anywhere in its cache, and only the links go. A removal cut short is finished by the next one.
 * The identities removed.
 */
export async function collectCaches(cacheRoot: string, registry: string, options: CollectOptions = {}): Promise<string[]> {
  const now = options.now ?? Date.now();
  const maxAge = (options.unusedDays ?? CACHE_UNUSED_DAYS) * 86_400_000;
  const maxBytes = options.maxBytes ?? CACHE_MAX_BYTES;
  const entries = await readdir(cacheRoot, { withFileTypes: true }).catch(() => [] as fs.Dirent[]);
  const found: Array<{ folder: string; used: number; bytes: number }> = [];
  for (const e of entries) {
    if (!e.isDirectory() || !IDENTITY.test(e.name)) continue;
    const folder = path.join(cacheRoot, e.name);
    const s = await lstat(folder).catch(() => undefined);
    if (s?.isDirectory()) found.push({ folder, used: s.mtimeMs, bytes: await diskUsage(folder) });
  }
  // Most recently used first: each is kept while the total stays under the size.
  found.sort((a, b) => b.used - a.used);
  const removed = await withMountRegistry(registry, () => {
    const held = heldMountPoints(registry, { dropDead: true });
    const gone: string[] = [];
    let total = 0;
    for (const { folder, used, bytes } of found) {
      total += bytes;
      if (held.has(folder) || (now - used <= maxAge && total <= maxBytes)) continue;
      // Used since it was measured (a launch marks it under this lock before it claims it): it stays.
      if (fs.lstatSync(folder, { throwIfNoEntry: false })?.mtimeMs !== used) continue;
      try {
        fs.renameSync(folder, path.join(cacheRoot, `.removing-${path.basename(folder)}-${Math.random().toString(16).slice(2)}`));
        total -= bytes;
        gone.push(path.basename(folder));
      } catch {
        // Gone meanwhile, or not ours to move: left for the next collection.
      }
    }
    return gone;
  });
  for (const e of await readdir(cacheRoot, { withFileTypes: true }).catch(() => [] as fs.Dirent[]))
    if (REMOVING.test(e.name)) await rm(path.join(cacheRoot, e.name), { recursive: true, force: true }).catch(() => undefined);
  return removed;
}
