import * as vscode from 'vscode';
import { decodeResourceLocation, encodeResourceLocation, isSafeResourceFileName, type DecodedResource } from '../../core';

/**
 * Not `mcp-resource`: VS Code's own MCP support registers that scheme in the workbench, and a
 * second provider for it never receives a request.
 */
export const RESOURCE_SCHEME = 'mcp-host-resource';

/**
 * `mcp-host-resource:/<server>/<scheme>/<authority>/<path>.<our extension>?<resource URI>`: readable
 * in tabs and breadcrumbs, relative links resolve as on the resource's own URI, and the
 * extension (ours, from the MIME type) picks the editor. See `encodeResourceLocation`.
 */
export function toResourceUri(server: string, resourceUri: string, name?: string, mimeType?: string): vscode.Uri {
  const { path, query } = encodeResourceLocation(server, resourceUri, name, mimeType);
  return vscode.Uri.from({ scheme: RESOURCE_SCHEME, path, query });
}

/** The server and resource a URI of ours names; a name that would pick an editor we do not accept for server content is refused. */
export function fromResourceUri(uri: vscode.Uri): DecodedResource {
  const decoded = uri.scheme === RESOURCE_SCHEME ? decodeResourceLocation(uri.path, uri.query) : undefined;
  if (!decoded) throw vscode.FileSystemError.FileNotFound(uri);
  if (!isSafeResourceFileName(decoded.fileName))
    throw vscode.FileSystemError.NoPermissions(vscode.l10n.t('MCP Host opens server content only as text or media: {0}', decoded.fileName));
  return decoded;
}
