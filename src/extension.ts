import * as vscode from 'vscode';
import { registerCommands, serverPickItems, trackContextKeys } from './vscode/commands';
import { DocumentActions } from './vscode/window/documentActions';
import { McpHost } from './vscode/host/host';
import { OutputDocuments } from './vscode/common/outputDocuments';
import { PromptActions, promptPickItems } from './vscode/prompts/getPrompt';
import { ResourceFileSystem } from './vscode/resources/provider';
import { resourcePickItems } from './vscode/resources/readResource';
import { ServerSetup } from './vscode/setup/serverSetup';
import { ToolCalls, toolPickItems } from './vscode/tools/callTool';
import { Views } from './vscode/common/ids';
import { createStatusBar } from './vscode/window/statusBar';
import { ServersTreeProvider } from './vscode/tree/serversTree';
import { ServerIcons } from './vscode/common/icons';
import { AppPanels } from './vscode/apps/appPanels';
import { ChatSharing } from './vscode/gateway/chatSharing';
import { AgentConnections } from './vscode/agents/agents';
import type { HostUi } from './vscode/ui/hostUi';
import { createWindowUi } from './vscode/windowUi';
import { createMainLog } from './vscode/logs/logs';
import { createApi, extensionExports, type McpHostApi } from './vscode/api';
import { watchCachedSettings } from './vscode/common/settingCache';
import { watchManagedPolicy } from './vscode/common/organisation';

let host: McpHost | undefined;

/**
 * The host's internals, for suites in a real VS Code only: `exports.testing` when the harness
 * started a test build's extension host with MCP_HOST_TEST_SEAM=1 (`src/vscode/api.ts`).
 */
export interface McpHostTestSeam {
  host: McpHost;
  tree: ServersTreeProvider;
  tools: ToolCalls;
  prompts: PromptActions;
  docs: OutputDocuments;
  setup: ServerSetup;
  /** Every question the extension asks; tests replace its methods to answer. */
  ui: HostUi;
  /** The palette pickers' items (labels, icons) as the person gets them. */
  pickItems: {
    tools: () => ReturnType<typeof toolPickItems>;
    prompts: () => ReturnType<typeof promptPickItems>;
    resources: () => ReturnType<typeof resourcePickItems>;
    servers: () => ReturnType<typeof serverPickItems>;
  };
  apps: AppPanels;
  sharing: ChatSharing;
  agents: AgentConnections;
}

/** Wires the editor layer; the protocol core lives in ./core and knows nothing of VS Code. */
export async function activate(context: vscode.ExtensionContext): Promise<McpHostApi> {
  const started = performance.now();
  context.subscriptions.push(watchCachedSettings(), watchManagedPolicy());
  // The host is made below with the UI; until then no secret is known, so there is nothing to redact.
  const log = createMainLog({ redact: (text) => host?.redact(text) ?? text });
  const documentActions = new DocumentActions();
  const ui = createWindowUi(documentActions, (text) => host?.redact(text) ?? text);
  host = new McpHost(context, ui, log);
  const output = OutputDocuments.register();
  const tools = new ToolCalls(host, output.docs, documentActions, ui);
  const icons = new ServerIcons(context.globalStorageUri, (message) => log.info(message));
  const prompts = new PromptActions(host, output.docs);
  const setup = new ServerSetup(host, log, ui);
  const apps = new AppPanels(host, tools, log, ui);
  const sharing = new ChatSharing(host, tools, context.globalStorageUri, context.globalState, context.asAbsolutePath('dist/relay.js'));
  const agents = new AgentConnections(
    host,
    sharing,
    tools,
    context.workspaceState,
    context.globalState,
    context.asAbsolutePath('dist/relay.js'),
  );
  const tree = new ServersTreeProvider(host, tools.tasks, icons, agents);
  context.subscriptions.push(
    log,
    documentActions,
    tools,
    tools.tasks,
    icons,
    tree,
    output.disposable,
    ResourceFileSystem.register(host),
    vscode.window.createTreeView(Views.servers, { treeDataProvider: tree, showCollapseAll: true }),
    createStatusBar(host),
    ...registerCommands(host, log, tools, prompts, output.docs, setup, sharing, agents),
    agents,
    sharing,
    trackContextKeys(host),
    apps,
    ...apps.commands(),
  );
  // Servers start after this returns (reload is not awaited): activation never waits for them.
  log.info(`MCP Host activated in ${(performance.now() - started).toFixed(1)} ms`);
  // Off until an endpoint is set; loads OpenTelemetry (dist/otel.js) only then.
  void host.telemetry.configure();
  void host.reload().then(() => log.info(`servers: ${host?.servers.map((s) => `${s.name} (${s.state.kind})`).join(', ') || 'none'}`));
  const servers = () => host?.servers ?? [];
  const shownBy = host;
  const pickItems = {
    tools: () => toolPickItems(shownBy, servers()),
    prompts: () => promptPickItems(shownBy, servers()),
    resources: () => resourcePickItems(shownBy, servers()),
    servers: () => serverPickItems(shownBy, servers()),
  };
  agents.activate();
  const internals: McpHostTestSeam = { host, tree, tools, prompts, docs: output.docs, setup, ui, pickItems, apps, sharing, agents };
  const api = createApi(host);
  // esbuild.js makes process.env.MCP_HOST_BUILD a constant: a release bundle drops this branch, and the seam with it.
  return process.env.MCP_HOST_BUILD === 'test' ? extensionExports(api, internals, process.env) : api;
}

/** Stops every server and its process tree; VS Code waits for the promise (within 5 s). */
export async function deactivate(): Promise<void> {
  const h = host;
  host = undefined;
  await h?.dispose();
}
