import type { McpUiResourceCsp } from '@modelcontextprotocol/ext-apps/app-bridge';
import type { Disposable } from 'vscode-jsonrpc/node';
import type { McpClient } from '../client/client';
import { McpError } from '../protocol/errors';
import type { ReadResourceResult } from '../protocol/types';
import { APP_MIME_TYPE } from './toolUi';

/** `_meta.ui.csp` of an app resource: the origins it may reach beyond itself (the SDK's type; no code of it loads here). */
export type AppCsp = McpUiResourceCsp;

/** `_meta.ui.permissions`: browser features the app asks for; granted only if the person agrees. */
export type AppPermission = 'camera' | 'microphone' | 'geolocation' | 'clipboardWrite';
export const APP_PERMISSIONS: readonly AppPermission[] = ['camera', 'microphone', 'geolocation', 'clipboardWrite'];

/** One `ui://` resource, read and checked: the HTML and what it declares about its sandbox. */
export interface AppResource {
  uri: string;
  html: string;
  csp: AppCsp;
  permissions: AppPermission[];
  prefersBorder?: boolean;
}

type UiClient = Pick<McpClient, 'onResourcesListChanged' | 'onResourceUpdated' | 'onDidClose'>;

/** Reads one `ui://` resource: through the gate (`GatedServer.readResource`), so the read is decided and audited like any other. */
export type UiRead = (uri: string) => Promise<ReadResourceResult>;

/**
 * The app resources of one connection, read through `resources/read` once and kept until the
 * server says they changed (`notifications/resources/list_changed`, or `resources/updated` for
 * the one URI) or the connection closes. A new connection gets a new cache.
 */
export class UiResourceCache {
  private readonly entries = new Map<string, Promise<AppResource>>();
  private readonly listeners: Disposable[];

  constructor(
    client: UiClient,
    private readonly readResource: UiRead,
  ) {
    this.listeners = [
      client.onResourcesListChanged(() => this.entries.clear()),
      client.onResourceUpdated((p) => this.entries.delete(p.uri)),
      client.onDidClose(() => this.dispose()),
    ];
  }

  /** The resource, from the cache or read now; a failed read is not kept. */
  get(uri: string): Promise<AppResource> {
    let entry = this.entries.get(uri);
    if (!entry) {
      entry = this.read(uri);
      this.entries.set(uri, entry);
      entry.catch(() => {
        if (this.entries.get(uri) === entry) this.entries.delete(uri);
      });
    }
    return entry;
  }

  /** The URIs held now, for tests and diagnostics. */
  get cached(): string[] {
    return [...this.entries.keys()];
  }

  dispose(): void {
    this.entries.clear();
    for (const l of this.listeners.splice(0)) l.dispose();
  }

  private async read(uri: string): Promise<AppResource> {
    if (!uri.startsWith('ui://')) throw McpError.invalidParams(`${uri} is not a ui:// resource`);
    const result = await this.readResource(uri);
    const item = result?.contents?.find((c) => c.uri === uri) ?? result?.contents?.[0];
    if (!item) throw McpError.invalidParams(`The server returned no contents for ${uri}`);
    if (item.mimeType?.split(';')[0]?.trim().toLowerCase() !== 'text/html' || !/profile=mcp-app/i.test(item.mimeType ?? '')) {
      throw McpError.invalidParams(`${uri} is ${item.mimeType ?? 'of no MIME type'}, not ${APP_MIME_TYPE}`);
    }
    const html = 'text' in item ? item.text : Buffer.from(item.blob, 'base64').toString('utf8');
    const ui = ((item._meta ?? {}) as { ui?: Record<string, unknown> }).ui ?? {};
    return {
      uri,
      html,
      csp: readCsp(ui.csp),
      permissions: readPermissions(ui.permissions),
      ...(typeof ui.prefersBorder === 'boolean' ? { prefersBorder: ui.prefersBorder } : {}),
    };
  }
}

const caches = new WeakMap<object, UiResourceCache>();

/** The cache of one connection (one McpClient), created on first use; `read` reads what it does not hold. */
export function uiResourcesOf(client: UiClient, read: UiRead): UiResourceCache {
  let cache = caches.get(client);
  if (!cache) {
    cache = new UiResourceCache(client, read);
    caches.set(client, cache);
  }
  return cache;
}

function readCsp(value: unknown): AppCsp {
  if (typeof value !== 'object' || value === null) return {};
  const csp: AppCsp = {};
  for (const key of ['connectDomains', 'resourceDomains', 'frameDomains', 'baseUriDomains'] as const) {
    const list = (value as Record<string, unknown>)[key];
    if (Array.isArray(list)) csp[key] = list.filter((d): d is string => typeof d === 'string');
  }
  return csp;
}

function readPermissions(value: unknown): AppPermission[] {
  if (typeof value !== 'object' || value === null) return [];
  return APP_PERMISSIONS.filter((p) => p in value);
}
