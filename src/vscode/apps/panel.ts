// The entry of dist/apps.js, loaded on the first app (see ./appPanels.ts): the webview panel and
// the host side of the app's postMessage JSON-RPC, spoken by the SDK's AppBridge. AppBridge runs
// here, in the extension host, with no MCP client of its own: every request the app makes reaches
// the AppPolicy, never the server directly. The webview only relays messages between the frame
// and this bridge (./page.ts).
import { AppBridge, type McpUiDisplayMode, type McpUiHostContext } from '@modelcontextprotocol/ext-apps/app-bridge';
import * as vscode from 'vscode';
import type { AppResource, CallToolResult, Tool } from '../../core';
import { checkCsp } from '../../core/apps/csp';
import { appPage } from './page';
import type { AppPolicy } from './policy';

type BridgeTransport = Parameters<AppBridge['connect']>[0];
type Message = Parameters<BridgeTransport['send']>[0];

export interface AppPanelOptions {
  server: string;
  tool: Tool;
  app: AppResource;
  policy: AppPolicy;
  hostInfo: { name: string; version: string };
  /** The call that opened the app, if one did (Open App opens it without). */
  call?: { args: Record<string, unknown>; result?: CallToolResult; cancelled?: string };
  column: vscode.ViewColumn;
}

export interface AppPanel {
  readonly panel: vscode.WebviewPanel;
  /** Resolves once the app sent ui/notifications/initialized. */
  readonly initialized: Promise<void>;
  /** The page's and the frame's Content-Security-Policy, for tests. */
  readonly csp: { page: string; frame: string };
  readonly hostContext: McpUiHostContext;
  /** A new call of the same tool: its input and result go to the app already open. */
  deliver(call: NonNullable<AppPanelOptions['call']>): Promise<void>;
  dispose(): void;
}

/** Messages between this bridge and the webview's relay, as the relay sends them. */
interface FromPage {
  fromApp?: Message;
  context?: { theme?: 'light' | 'dark'; highContrast?: boolean; variables?: Record<string, string>; size?: { width: number; height: number } };
}

class WebviewTransport implements BridgeTransport {
  onmessage?: BridgeTransport['onmessage'];
  onclose?: () => void;
  onerror?: (error: Error) => void;
  constructor(private readonly webview: vscode.Webview) {}
  async start(): Promise<void> {}
  async send(message: Message): Promise<void> {
    await this.webview.postMessage({ toApp: message });
  }
  async close(): Promise<void> {
    this.onclose?.();
  }
  receive(message: unknown): void {
    if (!message || typeof message !== 'object' || (message as { jsonrpc?: unknown }).jsonrpc !== '2.0') return;
    this.onmessage?.(message as Message);
  }
}

export async function openAppPanel(o: AppPanelOptions): Promise<AppPanel> {
  const title = `${o.server} › ${o.tool.title ?? o.tool.name}`;
  const granted = o.app.permissions.length ? await o.policy.grant(o.app.permissions) : [];
  const csp = checkCsp(o.app.csp ?? {});
  if (csp.dropped.length) o.policy.log(`${o.app.uri}: CSP entries that are not origins were ignored: ${csp.dropped.join(', ')}`);
  const panel = vscode.window.createWebviewPanel('mcpHost.app', title, { viewColumn: o.column, preserveFocus: true }, { enableScripts: true, localResourceRoots: [], enableForms: true });
  const page = appPage(o.app.html, csp, granted, panel.webview.cspSource, title);
  const kind = vscode.window.activeColorTheme.kind;
  let displayMode: McpUiDisplayMode = 'inline';
  const hostContext: McpUiHostContext = {
    toolInfo: { tool: o.tool as never },
    theme: kind === vscode.ColorThemeKind.Light || kind === vscode.ColorThemeKind.HighContrastLight ? 'light' : 'dark',
    displayMode,
    availableDisplayModes: ['inline', 'fullscreen'],
    locale: vscode.env.language,
    timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
    platform: 'desktop',
    userAgent: `${o.hostInfo.name}/${o.hostInfo.version} (VS Code ${vscode.version})`,
  };
  const bridge = new AppBridge(
    null,
    o.hostInfo,
    {
      openLinks: {},
      downloadFile: {},
      serverTools: {},
      serverResources: {},
      logging: {},
      message: { text: {} },
      updateModelContext: { text: {} },
      sandbox: { permissions: Object.fromEntries(granted.map((p) => [p, {}])), csp: { connectDomains: csp.connect, resourceDomains: csp.resource, frameDomains: csp.frame, baseUriDomains: csp.baseUri } },
    },
    { hostContext },
  );
  const text = (blocks: unknown) =>
    (Array.isArray(blocks) ? blocks : [])
      .map((b: { type?: string; text?: string }) => (b?.type === 'text' ? b.text : `[${b?.type ?? '?'}]`))
      .filter(Boolean)
      .join('\n');
  bridge.oncalltool = async (params) => o.policy.callTool(params.name, (params.arguments ?? {}) as Record<string, unknown>) as never;
  bridge.onreadresource = async (params) => o.policy.readResource(params.uri) as never;
  bridge.onlistresources = async () => ({ resources: o.policy.resources().resources }) as never;
  bridge.onlistresourcetemplates = async () => ({ resourceTemplates: o.policy.resources().resourceTemplates }) as never;
  bridge.onopenlink = async (params) => ({ isError: !(await o.policy.openLink(params.url)) });
  bridge.ondownloadfile = async (params) => ({ isError: !(await o.policy.downloadFile(params.contents.map((c) => (c.type === 'resource' ? c.resource : { uri: c.uri, mimeType: c.mimeType })))) });
  bridge.onmessage = async (params) => (o.policy.show('message', text(params.content)), {});
  bridge.onupdatemodelcontext = async (params) => (
    o.policy.show('modelContext', [text(params.content), params.structuredContent ? JSON.stringify(params.structuredContent, null, 2) : ''].filter(Boolean).join('\n')),
    {}
  );
  bridge.onloggingmessage = (params) => o.policy.log(`app log (${params.level}): ${typeof params.data === 'string' ? params.data : JSON.stringify(params.data)}`);
  bridge.onsizechange = (params) => o.policy.log(`app size: ${JSON.stringify(params)}`);
  bridge.onrequestteardown = () => panel.dispose();
  bridge.onrequestdisplaymode = async (params) => {
    // Fullscreen is the panel's editor group maximised; there is no picture-in-picture here.
    const wanted = params.mode === 'fullscreen' || params.mode === 'inline' ? params.mode : displayMode;
    if (wanted !== displayMode) {
      panel.reveal(undefined, false);
      await vscode.commands.executeCommand('workbench.action.toggleMaximizeEditorGroup').then(undefined, () => undefined);
      displayMode = wanted;
      bridge.setHostContext({ displayMode });
    }
    return { mode: displayMode };
  };
  let markInitialized!: () => void;
  const initialized = new Promise<void>((resolve) => (markInitialized = resolve));
  bridge.oninitialized = () => markInitialized();

  const transport = new WebviewTransport(panel.webview);
  const subscriptions: vscode.Disposable[] = [
    panel.webview.onDidReceiveMessage((m: FromPage) => {
      if (m?.fromApp !== undefined) return transport.receive(m.fromApp);
      const c = m?.context;
      if (!c) return;
      const change: McpUiHostContext = {};
      if (c.theme === 'light' || c.theme === 'dark') change.theme = c.theme;
      if (c.variables) change.styles = { variables: c.variables as never };
      if (c.size) change.containerDimensions = { width: c.size.width, height: c.size.height };
      bridge.setHostContext({ ...hostContext, ...change });
      Object.assign(hostContext, change);
    }),
  ];
  await bridge.connect(transport);
  panel.webview.html = page.html;
  o.policy.log(`opened ${o.app.uri} for ${o.tool.name}; page CSP: ${page.pageCsp}`);

  const deliver = async (call: NonNullable<AppPanelOptions['call']>) => {
    await initialized;
    await bridge.sendToolInput({ arguments: call.args });
    if (call.result) await bridge.sendToolResult(call.result as never);
    else if (call.cancelled) await bridge.sendToolCancelled({ reason: call.cancelled });
  };
  if (o.call) void deliver(o.call).catch((e) => o.policy.log(`could not send the call to the app: ${String(e)}`));

  let disposed = false;
  const dispose = () => {
    if (disposed) return;
    disposed = true;
    for (const s of subscriptions.splice(0)) s.dispose();
    bridge.teardownResource({}, { timeout: 1000 }).then(
      () => bridge.close(),
      () => bridge.close(),
    );
    panel.dispose();
  };
  panel.onDidDispose(() => {
    disposed = true;
    for (const s of subscriptions.splice(0)) s.dispose();
    void bridge.close();
  });
  return { panel, initialized, csp: { page: page.pageCsp, frame: page.frameCsp }, hostContext, deliver, dispose };
}
