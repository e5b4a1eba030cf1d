/**
 * The roots fence (the seed's "roots are a hard fence"): which strings of a request's arguments
 * name a file-system path, and which of those lie outside every root. Pure: the file system
 * (symlinks) and the platform are handed in, so the same table of cases runs in plain Node for
 * POSIX, macOS and Windows.
 */
import * as nodePath from 'node:path';
import type { Root } from '../protocol/types';
import type { FencedPath } from './types';

/** What the fence needs of the machine it guards. */
export interface FenceEnvironment {
  /** The platform whose path rules apply: separators, drive letters, case (win32 and darwin ignore it). */
  platform: NodeJS.Platform;
  /** `fs.promises.realpath`: the path with every symlink resolved; rejects when it does not exist. */
  realpath(path: string): Promise<string>;
  /** What `~` means. */
  home: string;
}

/** The roots (as `roots/list` answers them) and the machine. */
export interface FenceContext extends FenceEnvironment {
  roots: readonly Root[];
}

/** A JSON Schema, as much of it as the fence reads. */
interface SchemaLike {
  format?: unknown;
  properties?: unknown;
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

const FILE_URI = /^file:/i;
/** A URI of another scheme (`https://…`, `mailto:`): never a path. Drive letters (`C:`) are one letter, schemes two or more. */
const OTHER_URI = /^[a-z][a-z0-9+.-]+:/i;

/** Whether a string, wherever it sits, looks like a path on its own: absolute, UNC, `~`, or with a `..` segment. */
function looksLikePath(text: string): boolean {
  if (/[\r\n]/.test(text) || OTHER_URI.test(text)) return false;
  if (text.startsWith('/') || text.startsWith('\\\\') || /^[a-z]:[\\/]/i.test(text)) return true;
  if (text === '~' || /^~[\\/]/.test(text)) return true;
  return text.split(/[\\/]/).includes('..');
}

/** `file:` URI to a path of the platform; undefined when it is not a usable file URI. */
function fileUriToPath(uri: string, windows: boolean): string | undefined {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return undefined;
  }
  let pathname: string;
  try {
    pathname = decodeURIComponent(url.pathname);
  } catch {
    return undefined;
  }
  if (!windows) return url.hostname ? `//${url.hostname}${pathname}` : pathname;
  if (url.hostname) return `\\\\${url.hostname}${pathname.replace(/\//g, '\\')}`;
  return /^\/[a-z]:/i.test(pathname) ? pathname.slice(1).replace(/\//g, '\\') : pathname.replace(/\//g, '\\');
}

function decodedOrSame(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** The segments compared: the root part (`/`, `C:\`, `\\server\share\`) and each name, in the platform's case rule. */
function segments(absolute: string, env: FenceEnvironment): string[] {
  const p = env.platform === 'win32' ? nodePath.win32 : nodePath.posix;
  const normal = p.normalize(absolute);
  const { root } = p.parse(normal);
  const names = normal.slice(root.length).split(p.sep).filter(Boolean);
  const all = [root.replace(/[\\/]+/g, p.sep), ...names];
  return env.platform === 'win32' || env.platform === 'darwin' ? all.map((s) => s.toLowerCase()) : all;
}

function isWithin(candidate: string[], root: string[]): boolean {
  return root.length <= candidate.length && root.every((s, i) => s === candidate[i]);
}

/** The path with symlinks of its longest existing prefix resolved; the rest, which does not exist yet, kept. */
async function resolveLinks(absolute: string, env: FenceEnvironment): Promise<string> {
  const p = env.platform === 'win32' ? nodePath.win32 : nodePath.posix;
  let existing = p.normalize(absolute);
  const rest: string[] = [];
  for (;;) {
    try {
      const real = await env.realpath(existing);
      return rest.length ? p.join(real, ...rest.reverse()) : real;
    } catch {
      const parent = p.dirname(existing);
      if (parent === existing) return p.normalize(absolute);
      rest.push(p.basename(existing));
      existing = parent;
    }
  }
}

/** The roots as resolved absolute paths of the platform (roots of other schemes fence nothing). */
async function rootPaths(ctx: FenceContext): Promise<string[]> {
  const windows = ctx.platform === 'win32';
  const paths = ctx.roots
    .map((r) => (FILE_URI.test(r.uri) ? fileUriToPath(r.uri, windows) : undefined))
    .filter((p): p is string => p !== undefined);
  return Promise.all(paths.map((p) => resolveLinks(p, ctx)));
}

/** One reading of a value as an absolute path: `file:` URIs decoded, `~` expanded, relative paths against the first root. */
function absoluteOf(value: string, ctx: FenceContext, firstRoot: string | undefined): string {
  const p = ctx.platform === 'win32' ? nodePath.win32 : nodePath.posix;
  if (FILE_URI.test(value)) return fileUriToPath(value, ctx.platform === 'win32') ?? value;
  if (value === '~' || /^~[\\/]/.test(value)) return p.join(ctx.home, value.slice(1));
  if (p.isAbsolute(value)) return p.resolve(firstRoot ?? p.sep, value);
  // Without a root a relative path has nothing to be inside of: it stays as given and so is outside.
  return firstRoot === undefined ? value : p.resolve(firstRoot, value);
}

class Checker {
  readonly found: FencedPath[] = [];
  /** The roots resolved (symlinks and all), the first time a value is a path: most calls carry none, and cost no realpath. */
  private resolvedRoots?: Promise<{ roots: string[][]; first: string | undefined }>;
  constructor(private readonly ctx: FenceContext) {}

  private roots(): Promise<{ roots: string[][]; first: string | undefined }> {
    this.resolvedRoots ??= rootPaths(this.ctx).then((paths) => ({ roots: paths.map((r) => segments(r, this.ctx)), first: paths[0] }));
    return this.resolvedRoots;
  }

  /** Checks one string known to be a path; its literal and, for plain paths, its percent-decoded reading must both be inside. */
  async check(pointer: string, value: string): Promise<void> {
    const readings = FILE_URI.test(value) ? [value] : [...new Set([value, decodedOrSame(value)])];
    const { roots, first } = await this.roots();
    for (const reading of readings) {
      const absolute = absoluteOf(reading, this.ctx, first);
      const resolved = await resolveLinks(absolute, this.ctx);
      const candidate = segments(resolved, this.ctx);
      if (!roots.some((root) => isWithin(candidate, root))) {
        this.found.push({ pointer, value, resolved });
        return;
      }
    }
  }

  async walk(value: unknown, pointer: string, schema: SchemaLike | undefined, pathByName: boolean): Promise<void> {
    if (typeof value === 'string') {
      const format = schema?.format;
      const bySchema = format === 'uri' || format === 'uri-reference';
      if (value === '') return;
      if (FILE_URI.test(value)) return this.check(pointer, value);
      if ((pathByName || bySchema) && !OTHER_URI.test(value)) return this.check(pointer, value);
      if (looksLikePath(value) || looksLikePath(decodedOrSame(value))) return this.check(pointer, value);
      return;
    }
    if (Array.isArray(value)) {
      const items = schema?.items;
      for (const [i, item] of value.entries()) {
        const itemSchema = Array.isArray(items) ? (items[i] as SchemaLike | undefined) : (items as SchemaLike | undefined);
        // Items of `paths: [...]` are paths as their property is.
        await this.walk(item, `${pointer}/${i}`, asSchema(itemSchema), pathByName);
      }
      return;
    }
    if (typeof value === 'object' && value !== null) {
      const properties = asSchema(schema)?.properties as Record<string, unknown> | undefined;
      for (const [key, item] of Object.entries(value)) {
        await this.walk(item, `${pointer}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`, asSchema(properties?.[key]), isPathName(key));
      }
    }
  }
}

function asSchema(value: unknown): SchemaLike | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as SchemaLike) : undefined;
}

/** Every path in the arguments (any depth) that lies outside every root; `schema` is the tool's `inputSchema`, when there is one. */
export async function pathsOutsideRoots(args: unknown, ctx: FenceContext, schema?: unknown): Promise<FencedPath[]> {
  const checker = new Checker(ctx);
  await checker.walk(args, '', asSchema(schema), false);
  return checker.found;
}

/** A resource URI itself (resources/read, resources/subscribe): a `file:` URI outside every root; other schemes are the server's own. */
export async function resourceOutsideRoots(uri: string, ctx: FenceContext): Promise<FencedPath[]> {
  if (!FILE_URI.test(uri)) return [];
  const checker = new Checker(ctx);
  await checker.check('', uri);
  return checker.found;
}
