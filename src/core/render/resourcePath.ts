import { createHash } from 'node:crypto';

/**
 * How a resource of a server is named in the editor: `/<server>/<scheme>/<authority>/<path>` with
 * the exact resource URI in the query, behind a digest of the path: the Markdown extension keeps
 * the query when it resolves a relative link, so the digest tells our own URI from a link's.
 * The path is what tabs and breadcrumbs show (readable, not base64), and a relative link in a
 * resource document resolves against it the way it would against the resource's own URI
 * (`structure.md` beside `architecture.md`).
 *
 * The file name always ends with an extension of ours, derived from the MIME type: the editor
 * VS Code picks goes by that extension, so a server naming its resource `report.ipynb` or `x.svg`
 * gets a text editor, never the notebook editor or an image preview running its scripts.
 */

/** The only extensions our resource names end with: languages of a text editor, and media previews that run no script. */
const EXTENSIONS: Record<string, string> = {
  'text/markdown': '.md',
  'text/plain': '.txt',
  'text/css': '.css',
  'text/csv': '.csv',
  'text/javascript': '.js',
  'application/javascript': '.js',
  'application/json': '.json',
  'application/xml': '.xml',
  'text/xml': '.xml',
  'application/yaml': '.yaml',
  'text/yaml': '.yaml',
  'text/x-python': '.py',
  'text/x-sql': '.sql',
  // SVG can carry scripts and HTML is a page: both are read as text.
  'image/svg+xml': '.xml',
  'image/png': '.png',
  'image/jpeg': '.jpg',
  'image/gif': '.gif',
  'image/webp': '.webp',
  'audio/wav': '.wav',
  'audio/mpeg': '.mp3',
  'audio/ogg': '.ogg',
};

const MEDIA = new Set(['.png', '.jpg', '.gif', '.webp', '.wav', '.mp3', '.ogg']);
const SAFE = new Set(Object.values(EXTENSIONS).concat('.txt'));

/** Our extension for a MIME type: structured `+json`/`+xml` types by their suffix, everything else plain text. */
export function resourceExtension(mimeType: string | undefined): string {
  const mime = (mimeType ?? '').split(';')[0].trim().toLowerCase();
  if (EXTENSIONS[mime]) return EXTENSIONS[mime];
  if (mime.endsWith('+json')) return '.json';
  if (mime.endsWith('+xml')) return '.xml';
  return '.txt';
}

function extensionOf(fileName: string): string {
  const dot = fileName.lastIndexOf('.');
  return dot > 0 ? fileName.slice(dot).toLowerCase() : '';
}

/** Whether a file name opens in an editor we accept for server content (no extension means plain text). */
export function isSafeResourceFileName(fileName: string): boolean {
  const ext = extensionOf(fileName);
  return ext === '' || SAFE.has(ext);
}

/** Whether the document of this name opens in a media preview (its bytes are shown as they are). */
export function isMediaFileName(fileName: string): boolean {
  return MEDIA.has(extensionOf(fileName));
}

/** One path segment: no separators, no control characters, never `.` or `..` (which a path normaliser would fold). */
function segment(text: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are what this replaces
  const clean = text.replace(/[\\/\u0000-\u001f\u007f]/g, '_');
  return clean === '' ? '~' : clean === '.' || clean === '..' ? '_' : clean;
}

const HIERARCHICAL = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)([^?#]*)/;
const OPAQUE = /^([A-Za-z][A-Za-z0-9+.-]*):([^?#]*)/;

export interface ResourceLocation {
  /** The path of our URI (decoded form). */
  path: string;
  /** The query of our URI: `<digest of the path>:<the exact resource URI>`. */
  query: string;
}

export function encodeResourceLocation(server: string, resourceUri: string, name?: string, mimeType?: string): ResourceLocation {
  const h = HIERARCHICAL.exec(resourceUri);
  const o = h ? undefined : OPAQUE.exec(resourceUri);
  const dirs = h ? [h[1], h[2], ...h[3].split('/').slice(1)] : o ? [o[1], ...o[2].split('/')] : ['resource'];
  // The folders are the resource URI's, so relative links resolve as on it; the file name is the
  // resource's name, which the tab shows.
  const last = dirs.length > 1 ? dirs.pop()! : '';
  let file = segment(name || last || 'resource')
    .replace(/[?#*:|"<>]/g, '_')
    .slice(0, 120);
  const ext = resourceExtension(mimeType);
  if (!file.toLowerCase().endsWith(ext)) file += ext;
  const path = `/${[encodeURIComponent(server), ...dirs.map(segment), file].join('/')}`;
  return { path, query: `${digest(path)}:${resourceUri}` };
}

function digest(path: string): string {
  return createHash('sha256').update(path).digest('hex').slice(0, 8);
}

export interface DecodedResource {
  server: string;
  resourceUri: string;
  /** The last segment of the path, which chose the editor. */
  fileName: string;
  /**
   * `false` for a URI we did not make ourselves: a relative link in a resource document resolved
   * against ours (its name was chosen by the server, so it is read only when that name is safe).
   */
  ours: boolean;
}

export function decodeResourceLocation(path: string, query: string): DecodedResource | undefined {
  const parts = path.split('/').slice(1);
  if (parts.length < 2 || !parts[0]) return undefined;
  let server: string;
  try {
    server = decodeURIComponent(parts[0]);
  } catch {
    return undefined;
  }
  const fileName = parts[parts.length - 1];
  const exact = /^([0-9a-f]{8}):([\s\S]*)$/.exec(query);
  if (exact && exact[1] === digest(path)) return { server, resourceUri: exact[2], fileName, ours: true };
  const legacy = legacyResourceUri(parts);
  if (legacy) return { server, resourceUri: legacy, fileName, ours: false };
  if (parts.length < 3) return undefined;
  const [scheme, authority, ...rest] = parts.slice(1);
  if (!/^[A-Za-z][A-Za-z0-9+.-]*$/.test(scheme)) return undefined;
  return { server, resourceUri: `${scheme}://${authority === '~' ? '' : authority}/${rest.join('/')}`, fileName, ours: false };
}

/** Version 0.1's `/<server>/<base64url of the URI>/<file name>`, so tabs restored from it still read. */
function legacyResourceUri(parts: string[]): string | undefined {
  if (parts.length !== 3 || !/^[A-Za-z0-9_-]+$/.test(parts[1])) return undefined;
  const decoded = Buffer.from(parts[1], 'base64url').toString('utf8');
  return /^[A-Za-z][A-Za-z0-9+.-]*:/.test(decoded) && Buffer.from(decoded, 'utf8').toString('base64url') === parts[1] ? decoded : undefined;
}
