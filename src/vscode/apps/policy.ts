// What an app may ask of MCP Host, each answer decided by the main bundle's policy (./appPanels.ts)
// and carried out by the lazily loaded panel (./panel.ts, dist/apps.js).
import type { AppPermission, CallToolResult, ReadResourceResult, Resource, ResourceTemplate } from '../../core';

export interface AppPolicy {
  /** A tools/call from the app: refused (thrown) unless the person's own call would go through. */
  callTool(name: string, args: Record<string, unknown>): Promise<CallToolResult>;
  /** resources/list and resources/templates/list: the app's own server's, as the view shows them. */
  resources(): { resources: Resource[]; resourceTemplates: ResourceTemplate[] };
  /** A resources/read, sent to the app's own server only. */
  readResource(uri: string): Promise<ReadResourceResult>;
  /** ui/open-link: http(s) only, after the same consent as a URL elicitation; whether it opened. */
  openLink(url: string): Promise<boolean>;
  /** ui/download-file: each embedded file through a save dialog; whether all were saved. */
  downloadFile(files: Array<{ uri: string; mimeType?: string; text?: string; blob?: string }>): Promise<boolean>;
  /** ui/message and ui/update-model-context: shown to the person and logged, never sent on. */
  show(kind: 'message' | 'modelContext', text: string): void;
  /** The permissions the person grants of those the app declared. */
  grant(asked: AppPermission[]): Promise<AppPermission[]>;
  log(message: string): void;
  /** What the person should find in the server's log: a refused CSP source, a call the app never got. */
  warn(message: string): void;
}
