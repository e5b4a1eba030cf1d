import * as vscode from 'vscode';
import { registerCommands, trackContextKeys } from './vscode/commands';
import { DocumentActions } from './vscode/documentActions';
import { McpHost } from './vscode/host';
import { OutputDocuments } from './vscode/outputDocuments';
import { PromptActions } from './vscode/prompts/getPrompt';
import { ResourceFileSystem } from './vscode/resources/provider';
import { ServerSetup } from './vscode/setup/serverSetup';
import { ToolCalls } from './vscode/tools/callTool';
import { Views } from './vscode/ids';
import { createStatusBar } from './vscode/statusBar';
import { ServersTreeProvider } from './vscode/tree/serversTree';
import { ServerIcons } from './vscode/icons';
import { AppPanels } from './vscode/apps/appPanels';

let host: McpHost | undefined;

/** What tests in a real VS Code reach through `extension.exports`. */
export interface McpHostApi {
  host: McpHost;
  tree: ServersTreeProvider;
  tools: ToolCalls;
  prompts: PromptActions;
  docs: OutputDocuments;
  setup: ServerSetup;
  apps: AppPanels;
}

/** Wires the editor layer; the protocol core lives in ./core and knows nothing of VS Code. */
export async function activate(context: vscode.ExtensionContext): Promise<McpHostApi> {
  const started = performance.now();
  const log = vscode.window.createOutputChannel('MCP Host', { log: true });
  const documentActions = new DocumentActions();
  host = new McpHost(context, documentActions);
  const output = OutputDocuments.register();
  const tools = new ToolCalls(host, output.docs, context.globalState, documentActions);
  const icons = new ServerIcons(context.globalStorageUri, (message) => log.info(message));
  const tree = new ServersTreeProvider(host, tools.tasks, icons);
  const prompts = new PromptActions(host, output.docs);
  const setup = new ServerSetup(host, log);
  const apps = new AppPanels(host, tools, log);
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
    ...registerCommands(host, log, tools, prompts, output.docs, setup),
    trackContextKeys(host),
    apps,
    ...apps.commands(),
  );
  // Servers start after this returns (reload is not awaited): activation never waits for them.
  log.info(`MCP Host activated in ${(performance.now() - started).toFixed(1)} ms`);
  void host.reload().then(() => log.info(`servers: ${host?.servers.map((s) => `${s.name} (${s.state.kind})`).join(', ') || 'none'}`));
  return { host, tree, tools, prompts, docs: output.docs, setup, apps };
}

/** Stops every server and its process tree; VS Code waits for the promise (within 5 s). */
export async function deactivate(): Promise<void> {
  const h = host;
  host = undefined;
  await h?.dispose();
}
