// The entry of dist/apps.js, loaded on the first app (see ./appPanels.ts): the webview panel and
// the host side of the app's postMessage JSON-RPC, spoken by the SDK's AppBridge. AppBridge runs
// here, in the extension host, with no MCP client of its own: every request the app makes reaches
// the AppPolicy, never the server directly. The webview only relays messages between the frame
// and this bridge (./page.ts).
import { AppBridge, type McpUiDisplayMode, type McpUiHostContext } from '@modelcontextprotocol/ext-apps/app-bridge';
import * as vscode from 'vscode';
import type { AppResource, CallToolResult, Tool } from '../../core';
import { allowedOrigins, checkCsp, CSP_REFUSALS, type CheckedCsp } from '../../core/apps/csp';
import { McpError } from '../../core/protocol/errors';
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
  /** Whether the app may name loopback and private origins (`localOriginsAllowed`). */
  localOrigins: boolean;
  /** How long a call waits for the app's ui/notifications/initialized before it is given up. */
  initTimeoutMs: number;
}

export interface AppPanel {
  readonly panel: vscode.WebviewPanel;
  /** Resolves once the app sent ui/notifications/initialized. */
  readonly initialized: Promise<void>;
  /** The page's and the frame's Content-Security-Policy, for tests. */
  readonly csp: { page: string; frame: string };
  readonly hostContext: McpUiHostContext;
  /** What the panel's header told the person beyond the origins (such as an app that never started), for tests. */
  readonly notices: readonly string[];
  /**
   * A new call of the same tool: its input and result go to the app already open, once it has
   * initialised; rejects when it has not within `initTimeoutMs` (the panel says so) or is closed.
   */
  deliver(call: NonNullable<AppPanelOptions['call']>): Promise<void>;
  dispose(): void;
}

/** Messages between this bridge and the webview's relay, as the relay sends them. */
interface FromPage {
  fromApp?: Message;
  context?: {
    theme?: 'light' | 'dark';
    highContrast?: boolean;
    variables?: Record<string, string>;
    size?: { width: number; height: number };
  };
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
  const csp = checkCsp(o.app.csp ?? {}, { localAllowed: o.localOrigins });
  for (const d of csp.dropped)
    o.policy.warn(`${o.app.uri}: the CSP source ${JSON.stringify(d.source)} was refused: ${CSP_REFUSALS[d.refusal]}`);
  const panel = vscode.window.createWebviewPanel(
    'mcpHost.app',
    title,
    { viewColumn: o.column, preserveFocus: true },
    { enableScripts: true, localResourceRoots: [], enableForms: true },
  );
  const page = appPage(o.app.html, csp, granted, panel.webview.cspSource, title, originsLine(o.server, csp));
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
      sandbox: {
        permissions: Object.fromEntries(granted.map((p) => [p, {}])),
        csp: { connectDomains: csp.connect, resourceDomains: csp.resource, frameDomains: csp.frame, baseUriDomains: csp.baseUri },
      },
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
  bridge.ondownloadfile = async (params) => ({
    isError: !(await o.policy.downloadFile(
      params.contents.map((c) => (c.type === 'resource' ? c.resource : { uri: c.uri, mimeType: c.mimeType })),
    )),
  });
  bridge.onmessage = async (params) => (o.policy.show('message', text(params.content)), {});
  bridge.onupdatemodelcontext = async (params) => (
    o.policy.show(
      'modelContext',
      [text(params.content), params.structuredContent ? JSON.stringify(params.structuredContent, null, 2) : ''].filter(Boolean).join('\n'),
    ),
    {}
  );
  bridge.onloggingmessage = (params) =>
    o.policy.log(`app log (${params.level}): ${typeof params.data === 'string' ? params.data : JSON.stringify(params.data)}`);
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

  let markClosed!: () => void;
  const closed = new Promise<void>((resolve) => (markClosed = resolve));
  const notices: string[] = [];
  const notify = (notice: string) => {
    notices.push(notice);
    void panel.webview.postMessage({ notice }).then(undefined, () => undefined);
  };
  /** Resolves once the app has initialised; rejects when it has not within the bound, or was closed first. */
  const ready = async () => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), o.initTimeoutMs)));
    const outcome = await Promise.race([initialized.then(() => 'ready' as const), closed.then(() => 'closed' as const), late]).finally(() =>
      clearTimeout(timer),
    );
    if (outcome === 'closed') throw McpError.connectionClosed('the app was closed');
    if (outcome === 'late') {
      notify(
        vscode.l10n.t(
          'The app did not start within {0} seconds, so the call was not passed to it. Close the panel and call the tool again to retry.',
          Math.round(o.initTimeoutMs / 100) / 10,
        ),
      );
      throw McpError.timeout('ui/notifications/initialized', o.initTimeoutMs);
    }
  };
  const deliver = async (call: NonNullable<AppPanelOptions['call']>) => {
    await ready();
    await bridge.sendToolInput({ arguments: call.args });
    if (call.result) await bridge.sendToolResult(call.result as never);
    else if (call.cancelled) await bridge.sendToolCancelled({ reason: call.cancelled });
  };
  if (o.call) deliver(o.call).catch((e: unknown) => o.policy.warn(`could not send the call to the app: ${McpError.from(e).message}`));

  let disposed = false;
  const dispose = () => {
    if (disposed) return;
    disposed = true;
    markClosed();
    for (const s of subscriptions.splice(0)) s.dispose();
    bridge
      .teardownResource({}, { timeout: 1000 })
      .catch(() => undefined)
      .then(() => bridge.close())
      .catch(() => undefined);
    panel.dispose();
  };
  panel.onDidDispose(() => {
    disposed = true;
    markClosed();
    for (const s of subscriptions.splice(0)) s.dispose();
    bridge.close().catch(() => undefined);
  });
  return { panel, initialized, csp: { page: page.pageCsp, frame: page.frameCsp }, hostContext, notices, deliver, dispose };
}

/** The header's line: every origin the app may reach, or none, and what it asked for but was refused. */
function originsLine(server: string, csp: CheckedCsp): string {
  const origins = allowedOrigins(csp);
  const allowed = origins.length
    ? vscode.l10n.t('This app may connect to: {0}.', origins.join(', '))
    : vscode.l10n.t('This app may make no outside connections.');
  if (!csp.dropped.length) return allowed;
  const refused = [...new Set(csp.dropped.map((d) => d.source))].join(', ');
  return `${allowed} ${vscode.l10n.t('Refused (the reasons are in the log of "{0}"): {1}', server, refused)}`;
}
