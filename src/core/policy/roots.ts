/**
 * `mcpHost.roots.extra`: folders the person adds to every server's roots (what `roots/list`
 * answers and what the roots fence lets through), as absolute paths, `~/…` or `file:` URIs.
 */
import * as nodePath from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Root } from '../protocol/types';

/** The roots the setting's value names, and a problem for each entry that names none (relative paths, other schemes). */
export function parseExtraRoots(
  value: unknown,
  home: string,
  platform: NodeJS.Platform = process.platform,
): { roots: Root[]; problems: string[] } {
  const roots: Root[] = [];
  const problems: string[] = [];
  const p = platform === 'win32' ? nodePath.win32 : nodePath.posix;
  for (const entry of Array.isArray(value) ? value : value === undefined ? [] : [value]) {
    if (typeof entry !== 'string' || !entry.trim()) {
      problems.push(`${JSON.stringify(entry)} is not a folder`);
      continue;
    }
    const text = entry.trim();
    if (/^file:/i.test(text)) {
      try {
        roots.push({ uri: new URL(text).href, name: p.basename(decodeURIComponent(new URL(text).pathname)) || text });
      } catch {
        problems.push(`${JSON.stringify(text)} is not a usable file: URI`);
      }
      continue;
    }
    const expanded = text === '~' || /^~[\\/]/.test(text) ? p.join(home, text.slice(1)) : text;
    if (!p.isAbsolute(expanded)) {
      problems.push(`${JSON.stringify(text)} is neither an absolute path nor a file: URI`);
      continue;
    }
    const absolute = p.normalize(expanded);
    roots.push({ uri: pathToFileURL(absolute, { windows: platform === 'win32' }).href, name: p.basename(absolute) || absolute });
  }
  return { roots, problems };
}

/**
 * MCP Host's roots as a client's own `roots/list` narrows them, never widens them: each of the
 * client's roots that lies inside one of ours (ours when ours lies inside the client's); a root of
 * ours the client's roots do not reach is left out. A client that names no roots (or none of them
 * `file:`) narrows nothing.
 */
export function narrowRoots(ours: readonly Root[], theirs: readonly Root[] | undefined): Root[] {
  const files = (theirs ?? []).filter((r) => /^file:/i.test(r.uri));
  if (!files.length) return [...ours];
  const pathOf = (r: Root): string | undefined => {
    try {
      return nodePath.resolve(decodeURIComponent(new URL(r.uri).pathname));
    } catch {
      return undefined;
    }
  };
  const inside = (child: string, parent: string): boolean => {
    const rel = nodePath.relative(parent, child);
    return rel === '' || (!rel.startsWith('..') && !nodePath.isAbsolute(rel));
  };
  const out: Root[] = [];
  const seen = new Set<string>();
  const add = (r: Root): void => {
    if (!seen.has(r.uri)) {
      seen.add(r.uri);
      out.push(r);
    }
  };
  for (const mine of ours) {
    const mp = pathOf(mine);
    if (mp === undefined) continue;
    for (const client of files) {
      const cp = pathOf(client);
      if (cp === undefined) continue;
      if (inside(cp, mp)) add({ uri: pathToFileURL(cp).href, name: client.name ?? nodePath.basename(cp) });
      else if (inside(mp, cp)) add(mine);
    }
  }
  return out;
}
