import * as vscode from 'vscode';

/**
 * Not `mcp-resource`: VS Code's own MCP support registers that scheme in the workbench, and a
 * second provider for it never receives a request.
 */
export const RESOURCE_SCHEME = 'mcp-host-resource';

const EXTENSIONS: Record<string, string> = {
  'text/markdown': '.md',
  'text/plain': '.txt',
  'text/html': '.html',
  'text/css': '.css',
  'text/csv': '.csv',
  'text/javascript': '.js',
  'application/javascript': '.js',
  'application/json': '.json',
  'application/xml': '.xml',
  'text/xml': '.xml',
  'application/yaml': '.yaml',
  'text/x-python': '.py',
  'text/x-sql': '.sql',
  'image/png': '.png',
  'image/jpeg': '.jpg',
  'image/gif': '.gif',
  'image/webp': '.webp',
  'image/svg+xml': '.svg',
  'audio/wav': '.wav',
  'audio/mpeg': '.mp3',
  'application/pdf': '.pdf',
};

/** A file extension for a mime type, so VS Code picks the language or the image preview. */
export function extensionFor(mimeType: string | undefined): string {
  return (mimeType && EXTENSIONS[mimeType.split(';')[0].trim().toLowerCase()]) ?? '';
}

/**
 * `mcp-host-resource:/<server>/<base64url of the resource URI>/<file name>`: the server and the
 * original URI survive any characters, and the last segment gives the tab title and language.
 */
export function toResourceUri(server: string, resourceUri: string, name?: string, mimeType?: string): vscode.Uri {
  const encoded = Buffer.from(resourceUri, 'utf8').toString('base64url');
  let file = (name || lastSegment(resourceUri) || 'resource').replace(/[/\\?#%*:|"<>]/g, '_').slice(0, 120);
  const ext = extensionFor(mimeType);
  if (ext && !file.toLowerCase().endsWith(ext)) file += ext;
  return vscode.Uri.from({ scheme: RESOURCE_SCHEME, path: `/${encodeURIComponent(server)}/${encoded}/${file}` });
}

export function fromResourceUri(uri: vscode.Uri): { server: string; resourceUri: string } {
  const [, server, encoded] = uri.path.split('/');
  if (uri.scheme !== RESOURCE_SCHEME || !server || !encoded) throw vscode.FileSystemError.FileNotFound(uri);
  return { server: decodeURIComponent(server), resourceUri: Buffer.from(encoded, 'base64url').toString('utf8') };
}

function lastSegment(uri: string): string {
  const withoutQuery = uri.split(/[?#]/)[0];
  const parts = withoutQuery.split('/').filter(Boolean);
  const last = parts[parts.length - 1] ?? '';
  try {
    return decodeURIComponent(last);
  } catch {
    return last;
  }
}
