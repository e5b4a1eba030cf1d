import * as fs from 'node:fs';
import { copyFile, mkdir, readdir, readlink, symlink } from 'node:fs/promises';
import * as path from 'node:path';
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

/**
 * Makes `seed.to` (mode 0700) and copies into it what of `seed.from` it lacks, without blocking
 * (a first seeding may copy gigabytes). A file that cannot be read is passed over.
 */
export async function seedCache(seed: CacheSeed): Promise<SeedResult> {
  const started = Date.now();
  await mkdir(seed.to, { recursive: true, mode: 0o700 });
  const keep = SEEDED[path.basename(seed.to)] ?? (() => false);
  let copied = 0;
  const walk = async (from: string, to: string, top: boolean): Promise<void> => {
    const entries = await readdir(from, { withFileTypes: true }).catch(() => [] as fs.Dirent[]);
    const existing = new Set(await readdir(to).catch(() => [] as string[]));
    const one = async (e: fs.Dirent): Promise<void> => {
      if (top && !keep(e.name)) return;
      const src = path.join(from, e.name);
      const dst = path.join(to, e.name);
      try {
        if (e.isDirectory()) {
          if (!existing.has(e.name)) await mkdir(dst, { mode: 0o700 });
          await walk(src, dst, false);
        } else if (existing.has(e.name)) return;
        else if (e.isFile()) {
          await copyFile(src, dst, fs.constants.COPYFILE_FICLONE | fs.constants.COPYFILE_EXCL);
          copied++;
        } else if (e.isSymbolicLink()) await symlink(await readlink(src), dst);
      } catch {
        // Unreadable, or written meanwhile by a sandboxed launcher: its own copy stands.
      }
    };
    // A few at a time: the file system answers in parallel, and the descriptors stay few.
    for (let i = 0; i < entries.length; i += SEED_CONCURRENCY) await Promise.all(entries.slice(i, i + SEED_CONCURRENCY).map(one));
  };
  await walk(seed.from, seed.to, true);
  return { copied, ms: Date.now() - started };
}
