import * as fs from 'node:fs';
import * as path from 'node:path';
import type { CacheSeed } from './reach';

/**
 * The cache of a sandboxed launcher (npx, uvx) is MCP Host's own folder, which no unsandboxed
 * program reads: a sandboxed server that rewrites a cached package changes only what sandboxed
 * servers run. It is seeded from the person's cache so that an offline `npx` still finds the
 * packages the person had: at each start, every file of the person's cache that MCP Host's lacks
 * is copied (a copy-on-write clone where the file system makes one, btrfs or XFS; else a copy), so
 * the first start copies the cache once and later starts only what is new. Nothing is linked: a
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

/** What a seeding did: files copied, and how long it took (for the log). */
export interface SeedResult {
  copied: number;
  ms: number;
}

/** Makes `seed.to` (mode 0700) and copies into it what of `seed.from` it lacks. A file that cannot be read is passed over. */
export function seedCache(seed: CacheSeed): SeedResult {
  const started = Date.now();
  fs.mkdirSync(seed.to, { recursive: true, mode: 0o700 });
  const keep = SEEDED[path.basename(seed.to)] ?? (() => false);
  let copied = 0;
  const walk = (from: string, to: string, top: boolean) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(from, { withFileTypes: true });
    } catch {
      return;
    }
    let existing: Set<string> | undefined;
    for (const e of entries) {
      if (top && !keep(e.name)) continue;
      existing ??= new Set(readdirOrEmpty(to));
      const src = path.join(from, e.name);
      const dst = path.join(to, e.name);
      try {
        if (e.isDirectory()) {
          if (!existing.has(e.name)) fs.mkdirSync(dst, { mode: 0o700 });
          walk(src, dst, false);
        } else if (existing.has(e.name)) continue;
        else if (e.isFile()) {
          fs.copyFileSync(src, dst, fs.constants.COPYFILE_FICLONE | fs.constants.COPYFILE_EXCL);
          copied++;
        } else if (e.isSymbolicLink()) fs.symlinkSync(fs.readlinkSync(src), dst);
      } catch {
        // Unreadable, or written meanwhile by a sandboxed launcher: its own copy stands.
      }
    }
  };
  walk(seed.from, seed.to, true);
  return { copied, ms: Date.now() - started };
}

function readdirOrEmpty(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}
