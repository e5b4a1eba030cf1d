/**
 * MCP Apps (the `io.modelcontextprotocol/ui` extension, ext-apps spec 2026-01-26): what a tool's
 * `_meta.ui` says. Written from the spec; the SDK's own helpers live in a bundle the core must not load.
 */
import type { Tool } from '../protocol/types';

/** The extension's id, the key under `capabilities.extensions`. */
export const UI_EXTENSION = 'io.modelcontextprotocol/ui';
/** The one MIME type an app resource may have, and the only one we render. */
export const APP_MIME_TYPE = 'text/html;profile=mcp-app';
/** The older, flat key for the resource URI; servers built with the SDK still send both. */
const LEGACY_RESOURCE_URI_KEY = 'ui/resourceUri';

/** Who may call a tool: the model (for us, the person at the keyboard) and/or the app. */
export type ToolVisibility = 'model' | 'app';

export interface ToolUi {
  /** The `ui://` resource of the tool's app, if it has one. */
  resourceUri?: string;
  visibility: ToolVisibility[];
}

/** The tool's `_meta.ui`, its defaults filled in (visible to both when the server says nothing). */
export function toolUi(tool: Pick<Tool, '_meta'>): ToolUi {
  const meta = (tool._meta ?? {}) as Record<string, unknown>;
  const ui = (typeof meta.ui === 'object' && meta.ui !== null ? meta.ui : {}) as { resourceUri?: unknown; visibility?: unknown };
  const uri =
    typeof ui.resourceUri === 'string'
      ? ui.resourceUri
      : typeof meta[LEGACY_RESOURCE_URI_KEY] === 'string'
        ? (meta[LEGACY_RESOURCE_URI_KEY] as string)
        : undefined;
  const listed = Array.isArray(ui.visibility) ? ui.visibility.filter((v): v is ToolVisibility => v === 'model' || v === 'app') : undefined;
  return {
    ...(uri?.startsWith('ui://') ? { resourceUri: uri } : {}),
    visibility: listed ?? ['model', 'app'],
  };
}

/** The `ui://` resource of the tool's app, or undefined when it has none. */
export function appResourceUri(tool: Pick<Tool, '_meta'>): string | undefined {
  return toolUi(tool).resourceUri;
}

/** Whether the person is offered the tool as an ordinary tool (palette, tree): not an app-only helper. */
export function isToolForPerson(tool: Pick<Tool, '_meta'>): boolean {
  return toolUi(tool).visibility.includes('model');
}

/** Whether an app may call the tool: not a model-only tool. */
export function isToolForApp(tool: Pick<Tool, '_meta'>): boolean {
  return toolUi(tool).visibility.includes('app');
}

/** What the client declares under `capabilities.extensions` for MCP Apps. */
export function uiExtensionCapability(): Record<string, object> {
  return { [UI_EXTENSION]: { mimeTypes: [APP_MIME_TYPE] } };
}
