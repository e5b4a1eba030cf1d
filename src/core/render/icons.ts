import { createHash } from 'node:crypto';
import type { Icon } from '../protocol/types';
import { readBodyBytes } from '../transport/httpRequest';
import { nodeFetch } from '../transport/nodeFetch';

/**
 * Icons (2025-11-25) are untrusted input from the server. The rules:
 * - only raster images: PNG, JPEG, GIF, WebP, recognised by their magic bytes (a label says
 *   nothing); SVG is refused, as it can carry script and we do not rely on every place VS Code
 *   may show an icon rendering it as an inert image;
 * - `data:` URIs of those types, and `https:` URIs fetched by us without the server's headers or
 *   credentials, size-capped and with a timeout; `http:` is refused (anyone on the path can swap
 *   the image, and it reveals what the person uses in clear text), except loopback in tests;
 * - never `file:` (it would show local files the server names), `javascript:`, `command:` or
 *   any other scheme.
 */
export const ICON_MIME_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'] as const;
export type IconMimeType = (typeof ICON_MIME_TYPES)[number];
export const ICON_EXTENSIONS: Record<IconMimeType, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/gif': 'gif',
  'image/webp': 'webp',
};

/** An icon larger than this is refused, whether inline or fetched. */
export const MAX_ICON_BYTES = 256 * 1024;
/** How long one icon fetch may take, headers and body. */
export const ICON_FETCH_TIMEOUT_MS = 10_000;
/** Distinct `https:` icons fetched per session: a server listing thousands of tools with an icon each makes no more requests than this. */
export const MAX_ICON_FETCHES = 200;

/** The raster type the bytes begin with, or undefined for anything else (SVG, HTML, text, truncated files). */
export function sniffImage(bytes: Uint8Array): IconMimeType | undefined {
  const at = (offset: number, ...values: number[]) => values.every((v, i) => bytes[offset + i] === v);
  if (bytes.length >= 8 && at(0, 0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return 'image/png';
  if (bytes.length >= 3 && at(0, 0xff, 0xd8, 0xff)) return 'image/jpeg';
  if (bytes.length >= 6 && (at(0, 0x47, 0x49, 0x46, 0x38, 0x37, 0x61) || at(0, 0x47, 0x49, 0x46, 0x38, 0x39, 0x61))) return 'image/gif';
  if (bytes.length >= 12 && at(0, 0x52, 0x49, 0x46, 0x46) && at(8, 0x57, 0x45, 0x42, 0x50)) return 'image/webp';
  return undefined;
}

export interface IconCheckOptions {
  /** Tests only: accept `http:` on a loopback address (there is no TLS server to test `https:` against). */
  allowLoopbackHttp?: boolean;
}

export type IconSource =
  { kind: 'data'; bytes: Buffer; mimeType: IconMimeType } | { kind: 'fetch'; url: URL } | { kind: 'refused'; reason: string };

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** What to do with one icon's `src`: its bytes (a `data:` URI), a URL to fetch, or why not. */
export function checkIconSrc(src: unknown, options: IconCheckOptions = {}): IconSource {
  if (typeof src !== 'string') return { kind: 'refused', reason: 'src is not a string' };
  // Base64 makes 4 characters of 3 bytes; a little room for the header.
  if (src.length > (MAX_ICON_BYTES * 4) / 3 + 256) return { kind: 'refused', reason: 'src is too long' };
  if (/^data:/i.test(src)) return checkDataUri(src);
  let url: URL;
  try {
    url = new URL(src);
  } catch {
    return { kind: 'refused', reason: 'src is not an absolute URL' };
  }
  if (url.username || url.password) return { kind: 'refused', reason: 'the URL carries credentials' };
  if (url.protocol === 'https:' || url.protocol === 'http:') {
    if (options.allowLoopbackHttp && LOOPBACK.has(url.hostname)) return { kind: 'fetch', url };
    // A remote server must not make us reach into the person's own machine or network.
    if (isLocalAddress(url.hostname)) return { kind: 'refused', reason: 'the URL names a local or private address' };
  }
  if (url.protocol === 'https:') return { kind: 'fetch', url };
  if (url.protocol === 'http:' && options.allowLoopbackHttp && LOOPBACK.has(url.hostname)) return { kind: 'fetch', url };
  return { kind: 'refused', reason: `the ${url.protocol} scheme is not allowed` };
}

/** Loopback, private, link-local and unspecified addresses written as such (a name that resolves to one is not caught). */
export function isLocalAddress(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/^\[|\]$/g, '');
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(host);
  const v4 = /^(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(mapped ? mapped[1] : host);
  if (v4) {
    const [a, b] = [Number(v4[1]), Number(v4[2])];
    return (
      a === 0 ||
      a === 10 ||
      a === 127 ||
      (a === 169 && b === 254) ||
      (a === 172 && b >= 16 && b <= 31) ||
      (a === 192 && b === 168) ||
      (a === 100 && b >= 64 && b <= 127)
    );
  }
  if (host.includes(':'))
    return host === '::' || host === '::1' || /^f[cd]/.test(host) || /^fe[89ab]/.test(host) || host.startsWith('::ffff:');
  return false;
}

function checkDataUri(src: string): IconSource {
  const comma = src.indexOf(',');
  if (comma < 0) return { kind: 'refused', reason: 'malformed data: URI' };
  const header = src.slice(5, comma).toLowerCase().split(';');
  const declared = header[0].trim();
  if (!(ICON_MIME_TYPES as readonly string[]).includes(declared))
    return { kind: 'refused', reason: `the type ${declared || '(none)'} is not an allowed image type` };
  const body = src.slice(comma + 1);
  let bytes: Buffer;
  try {
    bytes = header.includes('base64') ? Buffer.from(body, 'base64') : Buffer.from(decodeURIComponent(body), 'latin1');
  } catch {
    return { kind: 'refused', reason: 'malformed data: URI' };
  }
  return checkBytes(bytes);
}

/** Bytes are an icon when they are small enough and begin as one of the raster types. */
export function checkBytes(bytes: Buffer): IconSource {
  if (bytes.length > MAX_ICON_BYTES) return { kind: 'refused', reason: `larger than ${MAX_ICON_BYTES} bytes` };
  const mimeType = sniffImage(bytes);
  if (!mimeType) return { kind: 'refused', reason: 'the bytes are not a PNG, JPEG, GIF or WebP image' };
  return { kind: 'data', bytes, mimeType };
}

/** The largest side an icon's `sizes` names ("48x48" → 48), Infinity for "any", undefined when it says nothing. */
function largestSide(icon: Icon): number | undefined {
  if (!Array.isArray(icon.sizes)) return undefined;
  let best: number | undefined;
  for (const size of icon.sizes) {
    if (typeof size !== 'string') continue;
    if (size.trim().toLowerCase() === 'any') return Infinity;
    const m = /^(\d+)x(\d+)$/i.exec(size.trim());
    if (m) best = Math.max(best ?? 0, Number(m[1]), Number(m[2]));
  }
  return best;
}

/**
 * The icons to try for each theme, best first: those made for that theme or for none, with a
 * declared type we could accept; by size, the smallest at least `size` pixels, then the larger of
 * the rest, then those that name no size. A theme with none of its own falls back to the other's.
 */
export function chooseIcons(icons: unknown, size = 32): { light: Icon[]; dark: Icon[] } {
  const usable = (Array.isArray(icons) ? icons : []).filter(
    (i): i is Icon =>
      !!i &&
      typeof i === 'object' &&
      typeof (i as Icon).src === 'string' &&
      (i.mimeType === undefined || (ICON_MIME_TYPES as readonly string[]).includes(String(i.mimeType).toLowerCase())),
  );
  const rank = (icon: Icon): number => {
    const side = largestSide(icon);
    if (side === undefined) return 3 * 1e6;
    if (side >= size) return side === Infinity ? 1e6 - 1 : side;
    return 2 * 1e6 - side;
  };
  const forTheme = (theme: 'light' | 'dark') =>
    usable
      .filter((i) => i.theme === theme || i.theme === undefined)
      .map((icon, index) => ({ icon, index }))
      .sort((a, b) => rank(a.icon) - rank(b.icon) || a.index - b.index)
      .map((e) => e.icon);
  const light = forTheme('light');
  const dark = forTheme('dark');
  return { light: light.length ? light : dark, dark: dark.length ? dark : light };
}

export type IconFetch = (url: URL, init: RequestInit) => Promise<Response>;

export interface IconFetchOptions extends IconCheckOptions {
  /** node:http(s) by default (nodeFetch.ts: proxies patched in by the editor apply, https never redirects to http). */
  fetch?: IconFetch;
  maxBytes?: number;
  timeoutMs?: number;
}

/** Redirects an icon fetch follows, each hop checked before it is requested. */
const MAX_ICON_REDIRECTS = 5;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/**
 * Fetches one icon: a plain GET with no header of the server's (no Authorization, no cookies, no
 * configured headers), at most `maxBytes` read, within `timeoutMs`; the bytes must sniff as a
 * raster image whatever the Content-Type says. Redirects are followed by hand: each Location is
 * checked like the icon's own `src` before anything is sent there, so a redirect cannot make us
 * reach a local or private address even once.
 */
export async function fetchIcon(url: URL, options: IconFetchOptions): Promise<{ bytes: Buffer; mimeType: IconMimeType }> {
  const maxBytes = options.maxBytes ?? MAX_ICON_BYTES;
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new Error(`no answer within ${options.timeoutMs ?? ICON_FETCH_TIMEOUT_MS} ms`)),
    options.timeoutMs ?? ICON_FETCH_TIMEOUT_MS,
  );
  try {
    let response: Response;
    for (let hops = 0; ; hops++) {
      response = await (options.fetch ?? nodeFetch)(url, {
        method: 'GET',
        headers: { accept: ICON_MIME_TYPES.join(', ') },
        credentials: 'omit',
        redirect: 'manual',
        signal: controller.signal,
      });
      const location = REDIRECT_STATUSES.has(response.status) ? response.headers.get('location') : null;
      if (location === null) break;
      await response.body?.cancel();
      if (hops === MAX_ICON_REDIRECTS) throw new Error(`more than ${MAX_ICON_REDIRECTS} redirects`);
      let next: IconSource;
      try {
        next = checkIconSrc(new URL(location, url).href, options);
      } catch {
        next = { kind: 'refused', reason: 'the Location is not a URL' };
      }
      if (next.kind !== 'fetch')
        throw new Error(`redirected to a URL that is not allowed (${next.kind === 'refused' ? next.reason : 'data'})`);
      url = next.url;
    }
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    const body = await readBodyBytes(response, maxBytes, () => new Error(`larger than ${maxBytes} bytes`));
    const checked = checkBytes(body);
    if (checked.kind !== 'data') throw new Error(checked.kind === 'refused' ? checked.reason : 'not an image');
    return { bytes: checked.bytes, mimeType: checked.mimeType };
  } finally {
    clearTimeout(timer);
  }
}

/** A stored icon: where `store` put it. */
export interface IconResolverOptions<T> extends IconFetchOptions {
  /** Writes accepted bytes where the editor can show them; `name` is `<sha256>.<ext>`. */
  store: (name: string, bytes: Buffer) => Promise<T>;
  maxFetches?: number;
  onRefused?: (src: string, reason: string) => void;
}

/**
 * Turns icons into stored files, once per `src` for the session (a refusal is remembered too,
 * so a failing URL is not fetched again each time the tree redraws).
 */
export class IconResolver<T> {
  private readonly cache = new Map<string, Promise<T | undefined>>();
  private fetches = 0;

  constructor(readonly options: IconResolverOptions<T>) {}

  /** The first of `candidates` that is accepted, stored; undefined when none is. */
  async resolveFirst(candidates: readonly Icon[]): Promise<T | undefined> {
    for (const icon of candidates) {
      const stored = await this.resolve(icon.src);
      if (stored !== undefined) return stored;
    }
    return undefined;
  }

  resolve(src: string): Promise<T | undefined> {
    const key = createHash('sha256').update(src).digest('hex');
    let entry = this.cache.get(key);
    if (!entry) {
      entry = this.load(src).catch((e: unknown) => {
        this.options.onRefused?.(src, e instanceof Error ? e.message : String(e));
        return undefined;
      });
      this.cache.set(key, entry);
    }
    return entry;
  }

  private async load(src: string): Promise<T | undefined> {
    const checked = checkIconSrc(src, this.options);
    let image: { bytes: Buffer; mimeType: IconMimeType };
    if (checked.kind === 'refused') throw new Error(checked.reason);
    if (checked.kind === 'fetch') {
      if (this.fetches >= (this.options.maxFetches ?? MAX_ICON_FETCHES)) throw new Error('too many icons to fetch in this session');
      this.fetches++;
      image = await fetchIcon(checked.url, this.options);
    } else {
      image = checked;
    }
    const name = `${createHash('sha256').update(image.bytes).digest('hex')}.${ICON_EXTENSIONS[image.mimeType]}`;
    return this.options.store(name, image.bytes);
  }
}
