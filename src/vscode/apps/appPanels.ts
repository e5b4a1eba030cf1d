// MCP Apps in the editor: which tool calls open an app, the policy every request of an app goes
// through, and the lazy load of dist/apps.js (the SDK's AppBridge and the panel, ./panel.ts).
import * as vscode from 'vscode';
import type { ServerLog } from '../logs/logs';
import {
  appResourceUri,
  forDisplay,
  fromTemplate,
  localOriginsAllowed,
  uiResourcesOf,
  McpError,
  type CallToolResult,
  type ReadResourceResult,
  type Redact,
  type ServerHandle,
  type ShownText,
  type Tool,
} from '../../core';
import type { McpHost } from '../host/host';
import { Commands } from '../common/ids';
import type { ToolCalls } from '../tools/callTool';
import { askModal, notify } from '../window/notifications';
import type { HostUi } from '../ui/hostUi';
import type { AppPrompts } from '../common/answers';
import type { AppPanel, AppPanelOptions } from './panel';
import type { AppPolicy } from './policy';
import { askSaveLocation } from '../window/windowInputs';

type PanelModule = typeof import('./panel');

/** How long a call waits for its app to send ui/notifications/initialized; the panel says when it gave up. */
const APP_INIT_TIMEOUT_MS = 30_000;

/** Everything an app the person opened says or asks, in order, for tests and the log. */
export interface AppEvent {
  server: string;
  kind: 'message' | 'modelContext' | 'openLink' | 'download' | 'log';
  text: string;
}

export class AppPanels implements vscode.Disposable {
  /** Open panels by server and tool; a new call of the tool goes to its open app. */
  readonly open = new Map<string, AppPanel>();
  readonly events: AppEvent[] = [];
  /** `APP_INIT_TIMEOUT_MS`; tests make it short. */
  initTimeoutMs = APP_INIT_TIMEOUT_MS;
  private module: PanelModule | undefined;

  constructor(
    private readonly host: McpHost,
    private readonly tools: ToolCalls,
    private readonly log: ServerLog,
    private readonly ui: HostUi,
  ) {
    tools.afterCall = (server, tool, args, end) => {
      if (!appResourceUri(tool)) return;
      // A call that ended without a result tells an app already open (ui/notifications/tool-cancelled), and opens none.
      if ('result' in end) void this.openApp(server, tool, { args, result: end.result });
      else {
        const open = this.open.get(`${server.name}\u0000${tool.name}`);
        if (open) void this.deliver(server.name, open, { args, cancelled: end.cancelled });
      }
    };
  }

  /** Sends a call to an open app; what goes wrong (an app that never started, one closed meanwhile) is logged, never thrown. */
  private async deliver(server: string, panel: AppPanel, call: NonNullable<AppPanelOptions['call']>): Promise<void> {
    try {
      await panel.deliver(call);
    } catch (error) {
      this.warn(server, `could not send the call to the app: ${McpError.from(error).message}`);
    }
  }

  /** Opens (or reveals, and sends the call to) the tool's app beside the result document. */
  async openApp(server: ServerHandle, tool: Tool, call?: AppPanelOptions['call']): Promise<AppPanel | undefined> {
    const uri = appResourceUri(tool);
    const client = server.client;
    if (!uri || !client) return undefined;
    const key = `${server.name}\u0000${tool.name}`;
    const existing = this.open.get(key);
    if (existing) {
      existing.panel.reveal(undefined, true);
      if (call) await this.deliver(server.name, existing, call);
      return existing;
    }
    try {
      // The app's own ui:// resource is read through the app's gate, audited like its other requests.
      const app = await uiResourcesOf(client, (ui) => this.readForApp(server, ui)).get(uri);
      this.module ??= require('./apps.js') as PanelModule;
      const panel = await this.module.openAppPanel({
        server: server.name,
        tool,
        app,
        call,
        policy: this.policyFor(server),
        hostInfo: {
          name: 'mcp-host',
          version: String(vscode.extensions.getExtension('mcp-host.mcp-host')?.packageJSON.version ?? '0.0.0'),
        },
        column: vscode.ViewColumn.Beside,
        localOrigins: localOriginsAllowed(server.definition),
        initTimeoutMs: this.initTimeoutMs,
      });
      this.open.set(key, panel);
      panel.panel.onDidDispose(() => this.open.get(key) === panel && this.open.delete(key));
      return panel;
    } catch (error) {
      void notify(
        'error',
        fromTemplate(
          vscode.l10n.t('MCP Host: cannot open the app of {0}: {1}'),
          this.host.shown(tool.name),
          this.host.shown(McpError.from(error).message),
        ),
      );
      return undefined;
    }
  }

  private record(server: string, kind: AppEvent['kind'], text: string): void {
    this.events.push({ server, kind, text });
    this.events.splice(0, this.events.length - 100);
    this.log.info(`[app ${server}] ${kind}: ${this.host.redact(text)}`);
  }

  /** Into the server's own log (where the person looks first) as well as the events. */
  private warn(server: string, text: string): void {
    this.record(server, 'log', text);
    this.host.logs.channel(server).warn(`[app] ${text}`);
  }

  /** A resources/read for an app (its ui:// page, or what it asks for), through the app's gate; throws when refused. */
  private async readForApp(server: ServerHandle, uri: string): Promise<ReadResourceResult> {
    if (!server.client) throw McpError.connectionClosed(`${server.name} is not running`);
    const gated = await this.host.gate.serverFor(server, 'app').readResource(uri);
    if (!gated.sent) throw McpError.invalidRequest(gated.reason);
    return gated.result;
  }

  private policyFor(server: ServerHandle): AppPolicy {
    const name = server.name;
    return {
      callTool: (tool, args): Promise<CallToolResult> => this.tools.callForApp(server, tool, args),
      resources: () => ({ resources: server.resources, resourceTemplates: server.templates }),
      readResource: (uri) => this.readForApp(server, uri),
      openLink: async (text) => {
        this.record(name, 'openLink', text);
        let url: URL;
        try {
          url = new URL(text);
        } catch {
          return false;
        }
        // Only web pages; command:, file:, vscode: and the rest are refused without asking.
        if (url.protocol !== 'https:' && url.protocol !== 'http:') return false;
        const signal = new AbortController().signal;
        return (
          (await this.ui.elicitation.openPage(name, url, vscode.l10n.t('The app of "{0}" wants to open this page.', name), signal)) ===
          'open'
        );
      },
      downloadFile: async (files) => {
        for (const file of files) {
          this.record(name, 'download', file.uri);
          if (file.text === undefined && file.blob === undefined) return false;
          const target = await this.ui.apps.saveLocation(name, file.uri.split('/').pop() || 'download');
          if (!target) return false;
          await vscode.workspace.fs.writeFile(
            target,
            file.text !== undefined ? Buffer.from(file.text, 'utf8') : Buffer.from(file.blob!, 'base64'),
          );
        }
        return true;
      },
      show: (kind, text) => {
        this.record(name, kind, text);
        this.ui.apps.show(name, kind, text);
      },
      grant: (asked) => this.ui.apps.grant(name, asked),
      log: (message) => this.record(name, 'log', message),
      warn: (message) => this.warn(name, message),
    };
  }

  /** The tree's "Open App": the app with no call behind it. */
  commands(): vscode.Disposable[] {
    return [
      vscode.commands.registerCommand(Commands.openApp, async (node?: { kind?: string; server?: ServerHandle; tool?: Tool }) => {
        if (node?.kind === 'tool' && node.server && node.tool) await this.openApp(node.server, node.tool);
      }),
    ];
  }

  dispose(): void {
    for (const panel of this.open.values()) panel.dispose();
    this.open.clear();
  }
}

/** What an app's ui/message or ui/update-model-context shows: the app's text, cut, with the host's secrets redacted. */
export function appMessageText(server: string, kind: 'message' | 'modelContext', text: string, redact: Redact): ShownText {
  const parts = [forDisplay(server, redact), forDisplay(text, redact, 500)] as const;
  return kind === 'message'
    ? fromTemplate(vscode.l10n.t('The app of "{0}" sends a message (there is no chat here; nothing was sent on): {1}'), ...parts)
    : fromTemplate(
        vscode.l10n.t('The app of "{0}" updates the model context (there is no model here; nothing was sent on): {1}'),
        ...parts,
      );
}

/** The default `HostUi.apps`: a modal for permissions, a notification with Copy, the save dialog; server text through `redact`. */
export const windowAppPrompts = (redact: Redact): AppPrompts => ({
  async grant(server, asked) {
    const allow = vscode.l10n.t('Allow');
    const pick = await askModal(
      'warning',
      fromTemplate(
        vscode.l10n.t('The app of the MCP server "{0}" asks for: {1}'),
        forDisplay(server, redact),
        forDisplay(asked.join(', '), redact),
      ),
      fromTemplate(vscode.l10n.t('Without them the app still opens, with these browser features turned off.')),
      allow,
    );
    return pick === allow ? asked : [];
  },
  show(server, kind, text) {
    const copy = vscode.l10n.t('Copy');
    void notify('info', appMessageText(server, kind, text, redact), copy).then((pick) => {
      if (pick === copy) void vscode.env.clipboard.writeText(text);
    });
  },
  saveLocation: async (_server, suggested) =>
    askSaveLocation({
      defaultUri: vscode.Uri.file(suggested.replace(/[\\/:*?"<>|]/g, '_')),
      saveLabel: vscode.l10n.t('Save'),
    }),
});
