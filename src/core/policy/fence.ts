/**
 * The roots fence (the seed's "roots are a hard fence"): which strings of a request name a file
 * outside every root, read the way servers and the kernel read them. Every string, key or value,
 * at any depth, is a candidate, and so is what a server finds inside one (a flag's value, a
 * `data:` URL's content, a line, JSON: ./fenceStrings.ts); each is read in every plausible way (as
 * given, trimmed, cut at a NUL, percent-decoded, variables expanded (./fenceStrings.ts); as a
 * `file:` URI through the WHATWG parser and as a naive one; `~` and `~user` expanded; relative to
 * the server's working folder and to every root) and every reading must land inside a root. A reading is resolved as the kernel resolves a path, one component at a
 * time with `lstat` and `readlink`, so a `..` after a symlink leaves from the link's target and a
 * dangling link counts where it points. The file system and the platform are handed in, so the
 * same cases run in plain Node for POSIX, macOS and Windows. See docs/security-fence.md.
 */
import * as nodePath from 'node:path';
import type { Root } from '../protocol/types';
import { decoded, innerOf, LINE_BREAK, SCHEME, textVariants, trimmed, urlText, type StringReader, type Text } from './fenceStrings';
import type { FencedPath } from './types';

/** What `lstat` tells the fence: whether the entry is a symlink. */
export interface LinkStat {
  isSymbolicLink(): boolean;
}

/** What the fence needs of the machine it guards. */
export interface FenceEnvironment {
  /** The platform whose path rules apply: separators, drive letters, case (win32 and darwin ignore it). */
  platform: NodeJS.Platform;
  /** `fs.promises.lstat`, resolving undefined where nothing is (or nothing can be seen). */
  lstat(path: string): Promise<LinkStat | undefined>;
  /** `fs.promises.readlink`: a symlink's target as stored. */
  readlink(path: string): Promise<string>;
  /** What `~` means. */
  home: string;
}

/** The roots (as `roots/list` answers them), the server's working folder and the machine. */
export interface FenceContext extends FenceEnvironment {
  roots: readonly Root[];
  /**
   * Where the server resolves a relative path: a stdio server's working folder. Undefined for a
   * server without one of ours (HTTP): a relative path is then checked against every root.
   */
  cwd?: string;
  /** Told of each reading that lands inside a root, with its real path's names below that root (./protectedPaths.ts reads them). */
  onInside?(found: FencedPath, below: readonly string[]): void;
  /** The environment the server runs with: the variables a server (or a shell it runs) expands in a path. Undefined: none is set. */
  env?: Readonly<Record<string, string | undefined>>;
}

/** A JSON Schema, as much of it as the fence reads. */
interface SchemaLike {
  format?: unknown;
  properties?: unknown;
  additionalProperties?: unknown;
  items?: unknown;
}

/**
 * Property names that mean a path. A name is split into words (`filePath`, `source_dir`,
 * `output-file`) and matches when its last word, or its last two joined (`fileName`), is here.
 */
const PATH_WORDS = new Set([
  'path',
  'file',
  'filename',
  'dir',
  'directory',
  'folder',
  'cwd',
  'root',
  'target',
  'source',
  'destination',
  'dest',
  'location',
  'uri',
  'url',
  'pathname',
  'filepath',
  'dirname',
]);
const PLURALS = new Map([...PATH_WORDS].map((w) => [w.endsWith('y') ? `${w.slice(0, -1)}ies` : `${w}s`, w]));

function singular(word: string): string {
  return PLURALS.get(word) ?? word;
}

/** Whether a property name means a path. */
export function isPathName(name: string): boolean {
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
  const last = words.at(-1);
  if (!last) return false;
  if (PATH_WORDS.has(singular(last))) return true;
  return words.length > 1 && PATH_WORDS.has(singular(`${words.at(-2)}${last}`));
}

const URI_FORMATS = new Set(['uri', 'uri-reference', 'iri', 'iri-reference']);
/** Linux's limit on symlinks followed in one lookup (ELOOP); past it the path resolves to nothing, and counts as outside. */
export const MAX_SYMLINKS = 40;
/** No file system has names longer (NAME_MAX): such a component cannot exist, so it is not looked up. */
const NAME_MAX = 255;
/**
 * The longest path a system call takes (Linux's PATH_MAX; Windows' with `\\?\`): a longer one fails
 * (ENAMETOOLONG) before anything is looked up, so it reaches nothing and is not walked (walking
 * `a/a/a/…` component by component cost its length at every component).
 */
const PATH_MAX = { posix: 4096, win32: 32_767 };
/** How many strings inside strings (flag values, data: URLs, lines, JSON) one request may hold; past it, it is refused. */
export const MAX_INNER_STRINGS = 10_000;
/** How deep strings nest inside strings (JSON in a data: URL in JSON…); past it, it is refused. */
export const MAX_INNER_DEPTH = 4;
/** How many strings are looked up at once. */
const CONCURRENT_CHECKS = 16;
/** Schemes whose URLs name another machine: under a name that does not mean a path, never a path. */
const WEB_SCHEMES = new Set(['http:', 'https:', 'ws:', 'wss:', 'ftp:']);

type PathApi = typeof nodePath.posix;
const api = (platform: NodeJS.Platform): PathApi => (platform === 'win32' ? nodePath.win32 : nodePath.posix);

/**
 * A Windows path without its `\\?\` or `\\.\` prefix where what follows is a drive's path
 * (`\\?\C:\x`) or a share (`\\?\UNC\server\share` is `\\server\share`). Anything else there is
 * the device namespace (`\\?\GLOBALROOT\??\C:\…`, `\\?\Volume{…}\…`, `\\.\PhysicalDrive0`, the
 * raw volume `\\.\C:`), which reaches any file of the machine: it keeps its prefix, and so stays
 * an absolute path in no root.
 */
function withoutDevicePrefix(text: string): string {
  const m = /^[\\/]{2}[?.][\\/](.*)$/s.exec(text);
  if (!m) return text;
  if (/^unc[\\/]/i.test(m[1])) return `\\\\${m[1].slice(4)}`;
  return /^[a-z]:[\\/]/i.test(m[1]) ? m[1] : text;
}

/** The paths a `file:` URI names: the WHATWG parser's (host kept and ignored, decoded and not) and a naive split's (query and fragment kept). */
function fileUriPaths(uri: string, windows: boolean): string[] {
  const out: string[] = [];
  const add = (path: string) => {
    for (const p of [path, decoded(path) ?? path]) {
      const local = windows && /^\/[a-z](:|%3a)/i.test(p) ? p.slice(1) : p;
      out.push(local);
    }
  };
  let url: URL | undefined;
  try {
    url = new URL(uri);
  } catch {
    url = undefined;
  }
  if (url?.protocol === 'file:') {
    const host = url.hostname;
    const path = decoded(url.pathname) ?? url.pathname;
    if (host && host !== 'localhost') out.push(windows ? `\\\\${host}${path.replace(/\//g, '\\')}` : `//${host}${path}`);
    add(url.pathname);
  }
  const naive = /^file:(?:\/\/[^/?#\\]*)?(.*)$/is.exec(uri);
  if (naive) add(naive[1]);
  return out;
}

/** The folder a root's `file:` URI names (ours, well formed); undefined for other schemes, which fence nothing. */
function rootPathOf(uri: string, windows: boolean): string | undefined {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'file:') return undefined;
  const path = decoded(url.pathname);
  if (path === undefined) return undefined;
  const host = url.hostname === 'localhost' ? '' : url.hostname;
  if (!windows) return host ? `//${host}${path}` : path;
  if (host) return `\\\\${host}${path.replace(/\//g, '\\')}`;
  return (/^\/[a-z]:/i.test(path) ? path.slice(1) : path).replace(/\//g, '\\');
}

/** One way of reading a string: a path (absolute, or relative to a base folder) of the platform. */
interface Reading {
  path: string;
  /** From a URI or `~`: always absolute, never relative to a base. */
  absoluteOnly?: boolean;
  /** Variables expanded in it whose values are not to be shown (./fenceStrings.ts). */
  hidden?: readonly string[];
}

/** How a string sits in the arguments: under a name (or schema format) that means a path, or not. */
interface Place {
  pathNamed: boolean;
}

/** Whether a URI's path climbs (a `..` segment; `.. ` is `..` on Windows): a URL parser removes it, a server joining the rest to its folder leaves it. */
const climbs = (uri: string) => uri.split(/[\\/]/).some((segment) => /^\.\. *$/.test(segment));

/**
 * The paths a URI of a scheme of no one's (`ab:/../secret`, `note://one/../../x`) names for a
 * server that maps its scheme onto its folder: the rest joined to it, with and without the authority.
 */
function schemeRests(rest: string): string[] {
  const out = [rest.replace(/^[\\/]+/, '')];
  const authority = /^[\\/]{2}[^\\/]*(.*)$/s.exec(rest);
  if (authority) out.push(authority[1].replace(/^[\\/]+/, ''));
  return out;
}

/** Where `~user` may live: beside each home (`/home/user`, `C:\Users\user`), and root's own. */
function otherHomes(user: string, homes: readonly string[], platform: NodeJS.Platform): string[] {
  const p = api(platform);
  const out = homes.map((home) => p.join(p.dirname(home), user));
  if (user === 'root' && platform !== 'win32') out.push(platform === 'darwin' ? '/var/root' : '/root');
  return out;
}

/** A user name as `~user` may name one outside a path-named place (so `~5 minutes` and `~~` are no homes). */
const USER_HOME = /^~([A-Za-z_][A-Za-z0-9_.-]*)(?:$|[\\/])/;
/** Under a path name, any `~name`. */
const ANY_HOME = /^~([^\\/~]+)(?:$|[\\/])/;

/**
 * Whether a string is not read at all (nor what is inside it): under an ordinary name, nothing, a
 * web URL (it names another machine), or several lines (prose, or code: a file's content), unless
 * a URL parser makes one URL of them (it strips the line breaks: `fi\nle:///x`).
 */
function unread(text: string, place: Place): boolean {
  if (place.pathNamed) return false;
  const nul = text.indexOf('\u0000');
  const core = trimmed(nul >= 0 ? text.slice(0, nul) : text);
  if (core === '') return true;
  const url = urlText(core);
  const scheme = SCHEME.exec(url ?? core)?.[0].toLowerCase();
  if (scheme && WEB_SCHEMES.has(scheme) && URL.canParse(url ?? core)) return true;
  return url === undefined && LINE_BREAK.test(core);
}

/** What a string that starts with `~` names: a home (`~`, `~user`) or the shell's `~+` and `~-` (its PWD and OLDPWD), joined to the rest. */
function tildePaths(text: string, place: Place, ctx: FenceContext): string[] {
  const windows = ctx.platform === 'win32';
  const p = api(ctx.platform);
  // Ours, and the server's when it differs.
  const server = ctx.env?.[windows ? 'USERPROFILE' : 'HOME'];
  const homes = server && server !== ctx.home && p.isAbsolute(server) ? [ctx.home, server] : [ctx.home];
  // `~\x` on POSIX: a server that turns backslashes into slashes first reads `~/x`.
  if (/^~(?:$|[\\/])/.test(text)) return homes.map((home) => p.join(home, windows ? text.slice(1) : text.slice(1).replace(/\\/g, '/')));
  if (/^~[+-](?:$|[\\/])/.test(text)) {
    const folder = ctx.env?.[text[1] === '+' ? 'PWD' : 'OLDPWD'];
    return folder && p.isAbsolute(folder) ? [p.join(folder, text.slice(2))] : [];
  }
  const user = (place.pathNamed ? ANY_HOME : USER_HOME).exec(text)?.[1];
  return user ? otherHomes(user, homes, ctx.platform).map((home) => p.join(home, text.slice(1 + user.length))) : [];
}

/** Every reading of a string (its variants) as a path. */
function readingsOf(variants: readonly Text[], place: Place, ctx: FenceContext): Reading[] {
  const windows = ctx.platform === 'win32';
  const readings: Reading[] = [];
  for (const { text: variant, hidden } of variants) {
    if (variant === '') continue;
    const read = (path: string, absoluteOnly?: true) => readings.push({ path, absoluteOnly, hidden });
    const scheme = SCHEME.exec(variant)?.[0].toLowerCase();
    // A `file:` URL inside another's: `git+file:///x` (git, pip, npm), `jar:file:/x.jar!/entry` (Java).
    const nested = /^(?:[a-z][a-z0-9.-]*\+|jar:)(file:.*)$/is.exec(variant)?.[1];
    if (nested)
      for (const uri of new Set([nested.replace(/!\/.*$/s, ''), nested]))
        for (const path of fileUriPaths(uri, windows)) read(windows ? withoutDevicePrefix(path) : path);
    if (scheme === 'file:') {
      for (const path of fileUriPaths(variant, windows)) read(windows ? withoutDevicePrefix(path) : path);
    } else if (scheme && scheme !== 'data:' && !WEB_SCHEMES.has(scheme) && climbs(variant)) {
      for (const rest of schemeRests(variant.slice(scheme.length))) read(rest);
    }
    if (variant.startsWith('~')) for (const path of tildePaths(variant, place, ctx)) read(path, true);
    read(windows ? withoutDevicePrefix(variant) : variant);
    // A server that turns Windows separators into its own.
    if (!windows && variant.includes('\\')) read(variant.replace(/\\/g, '/'));
  }
  return readings;
}

/** A path's root (`/`, `C:\`, `\\server\share\`) and its components, nothing normalised (a `..` stays a `..`). */
function splitPath(path: string, p: PathApi): { root: string; names: string[] } {
  const root = p.parse(path).root;
  const names = path.slice(root.length).split(p === nodePath.win32 ? /[\\/]/ : '/');
  return { root: p === nodePath.win32 ? root.replace(/\//g, '\\') : root, names };
}

/** A Windows name as Windows opens it: trailing dots and spaces dropped (`.. ` is `..`, `secret.` is `secret`). */
function win32Name(name: string): string {
  if (/^[. ]+$/.test(name)) {
    const t = name.replace(/ +$/, '');
    return t === '.' || t === '..' ? t : name;
  }
  return name.replace(/[. ]+$/, '');
}

/** The segments compared: the root part and each name, in the platform's case rule. */
function segments(absolute: string, env: FenceEnvironment): string[] {
  const p = api(env.platform);
  const { root, names } = splitPath(absolute, p);
  const all = [root, ...names.filter((n) => n !== '' && n !== '.')];
  const named = env.platform === 'win32' ? all.map(win32Name) : all;
  return env.platform === 'win32' || env.platform === 'darwin' ? named.map((s) => s.toLowerCase()) : named;
}

function isWithin(candidate: string[], root: string[]): boolean {
  return root.length <= candidate.length && root.every((s, i) => s === candidate[i]);
}

/**
 * Resolves paths as the kernel does, caching what it looked up for the request being decided.
 * A path resolves to the real path it reaches (a part that does not exist kept as written), or to
 * undefined when it passes more than {@link MAX_SYMLINKS} symlinks.
 */
class Resolver {
  private readonly stats = new Map<string, Promise<LinkStat | undefined>>();
  private readonly resolved = new Map<string, Promise<string | undefined>>();
  readonly p: PathApi;
  constructor(private readonly env: FenceEnvironment) {
    this.p = api(env.platform);
  }

  resolve(absolute: string): Promise<string | undefined> {
    let result = this.resolved.get(absolute);
    if (!result) {
      result = this.walk(absolute);
      this.resolved.set(absolute, result);
    }
    return result;
  }

  /**
   * Real folders known to exist (the roots', see `Checker.prepare`): they and every folder above them
   * are folders, no symlinks, and the walk passes them without asking the file system again.
   */
  knowFolders(realFolders: readonly string[]): void {
    const known = Promise.resolve(FOLDER);
    for (const real of realFolders) {
      for (let at = real, up = this.p.dirname(at); at !== up; at = up, up = this.p.dirname(at)) {
        if (this.stats.has(at)) break;
        this.stats.set(at, known);
      }
    }
  }

  /** Whether a real path (no symlink on the way) names something that exists and is no symlink. */
  async isFolder(real: string): Promise<boolean> {
    const stat = await this.lstat(real);
    return stat !== undefined && !stat.isSymbolicLink();
  }

  private lstat(path: string): Promise<LinkStat | undefined> {
    let stat = this.stats.get(path);
    if (!stat) {
      stat = this.env.lstat(path).catch(() => undefined);
      this.stats.set(path, stat);
    }
    return stat;
  }

  /** One component at a time: a symlink's target replaces it (and is resolved in turn), `..` leaves the real folder reached so far. */
  private async walk(absolute: string): Promise<string | undefined> {
    const p = this.p;
    const windows = this.env.platform === 'win32';
    const start = splitPath(absolute, p);
    let current = start.root;
    const pending = start.names.reverse();
    let links = 0;
    let missing = false;
    while (pending.length > 0) {
      const raw = pending.pop()!;
      const name = windows ? win32Name(raw) : raw;
      if (name === '' || name === '.') continue;
      if (name === '..') {
        current = p.dirname(current);
        // Climbing back may reach what exists again: look again from here.
        missing = false;
        continue;
      }
      const next = p.join(current, name);
      if (missing || name.length > NAME_MAX) {
        missing = true;
        current = next;
        continue;
      }
      const stat = await this.lstat(next);
      if (!stat) {
        missing = true;
        current = next;
        continue;
      }
      if (!stat.isSymbolicLink()) {
        current = next;
        continue;
      }
      if (++links > MAX_SYMLINKS) return undefined;
      let target: string;
      try {
        target = await this.env.readlink(next);
      } catch {
        current = next;
        missing = true;
        continue;
      }
      if (windows) target = withoutDevicePrefix(target);
      const link = splitPath(target, p);
      if (link.root) {
        // `\x` on Windows is rooted on the link's own drive.
        current = windows && /^[\\/]$/.test(link.root) ? p.parse(current).root : link.root;
      }
      pending.push(...link.names.reverse());
    }
    return current;
  }
}

/** The roots and the working folder as the fence compares with them: each root's real segments, each base with its real path. */
interface Prepared {
  roots: string[][];
  bases: Array<{ path: string; resolved: string[] | undefined }>;
  /** The real folders of the roots and the working folder that exist: each of their components is a folder, no symlink. */
  realFolders: string[];
}

/**
 * How long the real paths of the roots and the working folder are reused from one check to the
 * next. Every gated call checks its strings against them, and looking them up again, component by
 * component, was most of the fence's cost on a chat call. What a server names inside them is looked
 * up fresh on every call; only a change of the folders above it (the person's own, outside every
 * root) takes up to this long to be seen.
 */
export const PREPARED_MS = 1000;
/** Per machine (its `lstat`: tests bring their own), by platform, roots and working folder. */
const preparedCache = new WeakMap<FenceEnvironment['lstat'], Map<string, { until: number; prepared: Promise<Prepared> }>>();
const MAX_PREPARED = 64;

/** A folder found to exist on the real path of a root: no symlink, so the walk passes it without asking again. */
const FOLDER: LinkStat = { isSymbolicLink: () => false };

class Checker {
  private readonly resolver: Resolver;
  private prepared?: Promise<Prepared>;
  constructor(private readonly ctx: FenceContext) {
    this.resolver = new Resolver(ctx);
  }

  /** The roots and the working folder, resolved the first time a string is checked (or reused from a check of the last second). */
  private async prepare(): Promise<Prepared> {
    this.prepared ??= this.cachedPrepared();
    const prepared = await this.prepared;
    this.resolver.knowFolders(prepared.realFolders);
    return prepared;
  }

  private cachedPrepared(): Promise<Prepared> {
    let byKey = preparedCache.get(this.ctx.lstat);
    if (!byKey) preparedCache.set(this.ctx.lstat, (byKey = new Map()));
    const key = JSON.stringify([this.ctx.platform, this.ctx.roots.map((r) => r.uri), this.ctx.cwd ?? null]);
    const now = Date.now();
    const hit = byKey.get(key);
    if (hit && hit.until > now) return hit.prepared;
    if (byKey.size >= MAX_PREPARED) for (const [k, v] of byKey) if (v.until <= now || byKey.size >= MAX_PREPARED) byKey.delete(k);
    const prepared = this.resolvePrepared();
    byKey.set(key, { until: now + PREPARED_MS, prepared });
    // A lookup that failed is not kept.
    prepared.catch(() => byKey.delete(key));
    return prepared;
  }

  private async resolvePrepared(): Promise<Prepared> {
    const p = this.resolver.p;
    const windows = this.ctx.platform === 'win32';
    const rootPaths = this.ctx.roots
      .map((r) => rootPathOf(r.uri, windows))
      .filter((r): r is string => r !== undefined && p.isAbsolute(r))
      .map((r) => p.normalize(r));
    const roots: string[][] = [];
    const realFolders: string[] = [];
    const found = async (path: string): Promise<string | undefined> => {
      const real = await this.resolver.resolve(path);
      if (real !== undefined && (await this.resolver.isFolder(real))) realFolders.push(real);
      return real;
    };
    for (const r of rootPaths) {
      const real = await found(r);
      if (real !== undefined) roots.push(segments(real, this.ctx));
    }
    const bases = [...(this.ctx.cwd === undefined ? [] : [this.ctx.cwd]), ...rootPaths];
    const resolvedBases = [];
    for (const base of [...new Set(bases)]) {
      const real = await found(base);
      resolvedBases.push({ path: base, resolved: real === undefined ? undefined : segments(real, this.ctx) });
    }
    return { roots, bases: resolvedBases, realFolders };
  }

  /** Checks one string: the first reading found outside every root, or undefined when every reading is inside. */
  async check({ pointer, value, variants, place }: Candidate): Promise<FencedPath | undefined> {
    const readings = readingsOf(variants, place, this.ctx);
    if (readings.length === 0) return undefined;
    const p = this.resolver.p;
    const { roots, bases } = await this.prepare();
    const seen = new Set<string>();
    for (const reading of readings) {
      const absolute = this.isFullyAbsolute(reading.path) || reading.absoluteOnly;
      const anchors: Array<{ path: string; resolved: string[] | undefined } | undefined> = absolute ? [undefined] : bases;
      if (anchors.length === 0) {
        // Nothing to be relative to (no root, no working folder): a path is outside; a word is no path.
        if (place.pathNamed || p.normalize(reading.path).split(/[\\/]/)[0] === '..') {
          return { pointer, value, resolved: reading.path };
        }
        continue;
      }
      for (const base of anchors) {
        // Normalised first (path.resolve, os.path.abspath) and as the kernel gets it (`..` after a link leaves the link's target).
        const raw = base ? this.rawJoin(base.path, reading.path) : reading.path;
        const lexical = p.resolve(raw);
        for (const candidate of lexical === raw ? [lexical] : [lexical, raw]) {
          // What the kernel is given: a relative reading as it is (resolved from the server's folder), not joined to it.
          const given = candidate === raw && base ? reading.path : candidate;
          if (seen.has(candidate) || given.length > PATH_MAX[this.ctx.platform === 'win32' ? 'win32' : 'posix']) continue;
          seen.add(candidate);
          const real = await this.resolver.resolve(candidate);
          const realSegments = real === undefined ? undefined : segments(real, this.ctx);
          // A word under an ordinary name that stays in the server's folder names nothing we fence.
          if (!place.pathNamed && base?.resolved && realSegments && isWithin(realSegments, base.resolved)) continue;
          const root = realSegments && roots.find((r) => isWithin(realSegments, r));
          if (!root) {
            // A variable's value that is no path may be a secret: the person and the audit see its name, not where it leads.
            if (reading.hidden?.length)
              return { pointer, value, resolved: `(where ${reading.hidden.map((n) => `$${n}`).join(', ')} lead: not shown)` };
            return { pointer, value, resolved: real ?? `${p.normalize(candidate)} (more than ${MAX_SYMLINKS} symlinks)` };
          }
          this.ctx.onInside?.({ pointer, value, resolved: real! }, realSegments!.slice(root.length));
        }
      }
    }
    return undefined;
  }

  /** Absolute on its own: `/x`, `C:\x`, `\\server\share`; not `\x` or `C:x` on Windows, which depend on the base's drive. */
  private isFullyAbsolute(path: string): boolean {
    if (this.ctx.platform !== 'win32') return path.startsWith('/');
    return /^[a-z]:[\\/]/i.test(path) || /^[\\/]{2}[^\\/]/.test(path);
  }

  /** The base and the path joined as text, nothing normalised, as the kernel receives a relative path from that folder. */
  private rawJoin(base: string, path: string): string {
    const p = this.resolver.p;
    if (this.ctx.platform !== 'win32') return path.startsWith('/') ? path : `${base}/${path}`;
    if (/^[\\/]/.test(path)) return `${p.parse(base).root.replace(/[\\/]+$/, '')}${path}`;
    // `C:x`: relative to the base when it is on that drive, else (no working folder of ours there) to the drive's root.
    const drive = /^([a-z]:)(.*)$/is.exec(path);
    if (drive) {
      const sameDrive = p.parse(base).root.slice(0, 2).toLowerCase() === drive[1].toLowerCase();
      return sameDrive ? `${base}\\${drive[2]}` : `${drive[1]}\\${drive[2]}`;
    }
    return `${base}\\${path}`;
  }
}

function asSchema(value: unknown): SchemaLike | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as SchemaLike) : undefined;
}

function isUriFormat(schema: SchemaLike | undefined): boolean {
  return typeof schema?.format === 'string' && URI_FORMATS.has(schema.format);
}

/** JSON pointer escaping of one key. */
const escapeKey = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1');

/** A string to check: where it sits, the string given there (`value`) and the variants of the text read (it, or a text inside it). */
interface Candidate {
  pointer: string;
  value: string;
  variants: Text[];
  place: Place;
}

interface Frame {
  value: unknown;
  pointer: string;
  schema: SchemaLike | undefined;
  pathNamed: boolean;
  /** For what was found inside a string: that string, as given, and how deep strings nest there. */
  within?: { value: string; depth: number; hidden?: readonly string[] };
}

/**
 * The strings of a value to check (any depth, keys included), and what servers find inside them
 * (./fenceStrings.ts), as strings of their own at the same pointer; `problems` when there is too
 * much inside strings to read. Walks with an explicit stack: the gate has already refused
 * arguments over the limits (./limits.ts), and no depth recurses here.
 */
function candidatesOf(start: Frame, reader: StringReader): { strings: Candidate[]; problems: FencedPath[] } {
  const stack: Frame[] = [start];
  const strings: Candidate[] = [];
  const problems: FencedPath[] = [];
  let innerStrings = 0;
  while (stack.length > 0) {
    const frame = stack.pop()!;
    const { value, pointer, schema: s, pathNamed, within } = frame;
    if (typeof value === 'string') {
      const shown = within?.value ?? value;
      if (within && ++innerStrings > MAX_INNER_STRINGS) {
        if (innerStrings === MAX_INNER_STRINGS + 1)
          problems.push({ pointer, value: shown, resolved: `(more than ${MAX_INNER_STRINGS} strings inside strings: not read)` });
        continue;
      }
      const place = { pathNamed: pathNamed || isUriFormat(s) };
      if (unread(value, place)) continue;
      const variants = textVariants(value, reader, within?.hidden);
      const unreadable = variants.find((v) => v.problem !== undefined);
      if (unreadable) {
        problems.push({ pointer, value: shown, resolved: unreadable.problem! });
        continue;
      }
      strings.push({ pointer, value: shown, variants, place });
      const inner = innerOf(variants, place.pathNamed);
      const depth = (within?.depth ?? 0) + 1;
      const found = inner.texts.length > 0 || inner.values.length > 0;
      if (inner.problem || (found && depth > MAX_INNER_DEPTH)) {
        problems.push({
          pointer,
          value: shown,
          resolved: inner.problem ?? `(strings inside strings nested more than ${MAX_INNER_DEPTH} deep: not read)`,
        });
        continue;
      }
      // Pushed last first, so they are checked in order, after the string itself.
      const frames: Frame[] = [
        ...inner.texts.map((t) => ({ value: t.text, hidden: t.hidden })),
        ...inner.values.map((v) => ({ value: v.value, hidden: v.hidden })),
      ].map((t) => ({
        value: t.value,
        pointer,
        schema: undefined,
        pathNamed: place.pathNamed,
        within: { value: shown, depth, hidden: t.hidden },
      }));
      for (let i = frames.length - 1; i >= 0; i--) stack.push(frames[i]);
    } else if (Array.isArray(value)) {
      const items = s?.items;
      // Items of `paths: [...]` are paths as their property is. Pushed last first, so they are checked in order.
      for (let i = value.length - 1; i >= 0; i--) {
        const itemSchema = asSchema(Array.isArray(items) ? items[i] : items);
        stack.push({ value: value[i], pointer: within ? pointer : `${pointer}/${i}`, schema: itemSchema, pathNamed, within });
      }
    } else if (typeof value === 'object' && value !== null) {
      const properties = asSchema(s?.properties) as Record<string, unknown> | undefined;
      const frames: Frame[] = [];
      for (const [key, item] of Object.entries(value)) {
        const at = within ? pointer : `${pointer}/${escapeKey(key)}`;
        // A key is a string a server may read as a path too (`{"files": {"a.txt": …}}`): as a path when its object's name means one.
        frames.push({ value: key, pointer: at, schema: undefined, pathNamed, within });
        const itemSchema = asSchema(properties?.[key] ?? s?.additionalProperties);
        frames.push({ value: item, pointer: at, schema: itemSchema, pathNamed: isPathName(key), within });
      }
      for (let i = frames.length - 1; i >= 0; i--) stack.push(frames[i]);
    }
  }
  return { strings, problems };
}

/** The strings of `start` found outside every root, in the order they sit in; or, when there was too much to read, only that. */
async function outsideOf(start: Frame, ctx: FenceContext): Promise<FencedPath[]> {
  const checker = new Checker(ctx);
  const { strings, problems } = candidatesOf(start, ctx);
  // What could not be read is reason enough to refuse (or ask): nothing more is looked up.
  if (problems.length > 0) return problems;
  // Looked up a few at a time (the file system answers in parallel), reported in the order they sit in.
  const found: Array<FencedPath | undefined> = new Array<FencedPath | undefined>(strings.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < strings.length) {
      const i = next++;
      found[i] = await checker.check(strings[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENT_CHECKS, strings.length) }, worker));
  // One finding per place: a string and what is inside it share a pointer and a value.
  const seen = new Set<string>();
  return found
    .filter((f): f is FencedPath => f !== undefined)
    .filter((f) => {
      const key = `${f.pointer}\u0000${f.value}`;
      return !seen.has(key) && seen.add(key);
    });
}

/** Every string of the arguments (any depth, keys included) that names something outside every root; `schema` is the tool's `inputSchema`, when there is one. */
export function pathsOutsideRoots(args: unknown, ctx: FenceContext, schema?: unknown): Promise<FencedPath[]> {
  return outsideOf({ value: args, pointer: '', schema: asSchema(schema), pathNamed: false }, ctx);
}

/**
 * Whether a resource URI is of the server's own scheme (`note://one`, `ui://app`): a name in its
 * namespace, not a path of ours. Only a URI that starts right away with a scheme other than `file:`
 * is; anything with leading space or control characters, or that any reading turns into a `file:`
 * URI, is read as a path.
 */
function isServerScheme(uri: string, reader: StringReader): boolean {
  const scheme = /^([a-z][a-z0-9+.-]+):/i.exec(uri)?.[1].toLowerCase();
  if (scheme === undefined || scheme === 'file' || scheme === 'data') return false;
  // `ab:/../secret`: a server that joins the rest to its folder leaves it.
  return !textVariants(uri, reader).some(({ text }) => /^\s*(?:file|data):/i.test(text) || climbs(text));
}

/** A resource URI itself (resources/read, resources/subscribe, a completion's ref.uri): read as a path in every way a server may. */
export async function resourceOutsideRoots(uri: string, ctx: FenceContext): Promise<FencedPath[]> {
  if (isServerScheme(uri, ctx)) return [];
  return outsideOf({ value: uri, pointer: '', schema: undefined, pathNamed: true }, ctx);
}
