import * as vscode from 'vscode';
import { McpError, type ServerHandle } from '../core';
import type { McpHost } from './host';
import type { OutputDocuments } from './outputDocuments';
import type { PromptActions } from './prompts/getPrompt';
import type { ServerSetup } from './setup/serverSetup';
import { fillTemplate, openResource, readResourceCommand } from './resources/readResource';
import { askArguments } from './tools/askArguments';
import type { CallRecord, ToolCalls } from './tools/callTool';
import { Commands, Settings } from './ids';
import type { TreeNode } from './tree/nodes';
import { stateLabel } from './tree/serversTree';

/** Registers every command; each takes a tree node or asks which server with a quick pick. */
export function registerCommands(
  host: McpHost,
  mainLog: vscode.LogOutputChannel,
  tools: ToolCalls,
  prompts: PromptActions,
  docs: OutputDocuments,
  setup: ServerSetup,
): vscode.Disposable[] {
  const withServer = (action: (server: ServerHandle) => unknown, filter: (s: ServerHandle) => boolean = () => true) => async (node?: TreeNode | string) => {
    const server = await pickServer(host, node, filter);
    if (server) await action(server);
  };
  const report = (what: string) => (e: unknown) => void vscode.window.showErrorMessage(vscode.l10n.t('MCP Host: {0}: {1}', what, host.redact(McpError.from(e).message)));

  return [
    vscode.commands.registerCommand(
      Commands.startServer,
      withServer((s) => s.start().catch(report(vscode.l10n.t('could not start {0}', s.name))), (s) => s.state.kind !== 'running'),
    ),
    vscode.commands.registerCommand(
      Commands.stopServer,
      withServer((s) => s.stop(), (s) => s.state.kind !== 'stopped'),
    ),
    vscode.commands.registerCommand(
      Commands.restartServer,
      withServer((s) => s.restart().catch(report(vscode.l10n.t('could not restart {0}', s.name)))),
    ),
    vscode.commands.registerCommand(
      Commands.showServerLog,
      withServer((s) => host.logs.channel(s.name).show(true)),
    ),
    vscode.commands.registerCommand(Commands.showTrace, async () => {
      if (vscode.workspace.getConfiguration(Settings.section).get(Settings.trace, 'off') === 'off') {
        const turnOn = vscode.l10n.t('Trace Messages');
        const pick = await vscode.window.showInformationMessage(vscode.l10n.t('The protocol trace is off (setting mcpHost.trace).'), turnOn);
        if (pick === turnOn) await vscode.workspace.getConfiguration(Settings.section).update(Settings.trace, 'messages', vscode.ConfigurationTarget.Global);
      }
      host.trace.show();
    }),
    vscode.commands.registerCommand(Commands.showLog, () => mainLog.show(true)),
    vscode.commands.registerCommand(Commands.refresh, async () => {
      await host.reload();
      await Promise.all(host.servers.map((s) => Promise.all((['tools', 'prompts', 'resources', 'templates'] as const).map((k) => s.refresh(k)))));
    }),
    vscode.commands.registerCommand(Commands.addServer, () => setup.addServer()),
    vscode.commands.registerCommand(Commands.importServers, () => setup.importServers()),
    vscode.commands.registerCommand(Commands.callTool, async (node?: TreeNode) => {
      const chosen = await tools.pickTool(node?.kind === 'tool' ? { server: node.server, tool: node.tool } : undefined);
      if (chosen) await tools.run(chosen.server, chosen.tool);
    }),
    vscode.commands.registerCommand(Commands.rerunLastToolCall, async () => {
      const last = tools.history[0];
      if (!last) return void vscode.window.showInformationMessage(vscode.l10n.t('MCP Host: no tool has been called yet.'));
      await rerun(host, tools, last.server, last.tool, last.args, false);
    }),
    vscode.commands.registerCommand(Commands.showCallHistory, async () => {
      if (!tools.history.length) return void vscode.window.showInformationMessage(vscode.l10n.t('MCP Host: no tool has been called yet.'));
      const pick = await vscode.window.showQuickPick(
        tools.history.map((r) => ({
          label: `${r.server} › ${r.tool}`,
          description: `${new Date(r.at).toLocaleTimeString()} · ${outcomeLabel(r.outcome)}`,
          detail: JSON.stringify(r.args),
          record: r,
        })),
        { title: vscode.l10n.t('MCP Host: Tool Call History'), placeHolder: vscode.l10n.t('Which call?') },
      );
      if (!pick) return;
      const how = await vscode.window.showQuickPick(
        [
          { label: `$(debug-rerun) ${vscode.l10n.t('Rerun')}`, edit: false },
          { label: `$(edit) ${vscode.l10n.t('Edit Arguments and Rerun')}`, edit: true },
        ],
        { placeHolder: `${pick.label} ${pick.detail}` },
      );
      if (how) await rerun(host, tools, pick.record.server, pick.record.tool, pick.record.args, how.edit);
    }),
    vscode.commands.registerCommand(Commands.readResource, () => readResourceCommand(host)),
    vscode.commands.registerCommand(Commands.openResource, async (node?: TreeNode) => {
      if (node?.kind === 'resource') await openResource(node.server, node.resource);
      else if (node?.kind === 'template') await fillTemplate(node.server, node.template);
      else await readResourceCommand(host);
    }),
    vscode.commands.registerCommand(Commands.getPrompt, (node?: TreeNode) => prompts.run(node?.kind === 'prompt' ? { server: node.server, prompt: node.prompt } : undefined)),
    vscode.commands.registerCommand(Commands.copyPrompt, (uri?: vscode.Uri) => prompts.copy(uri)),
    vscode.commands.registerCommand(
      Commands.signOut,
      withServer(async (s) => {
        if (s.definition.type !== 'http') return;
        await host.authFor(s.name).signOut(new URL(s.definition.url));
        void vscode.window.showInformationMessage(vscode.l10n.t('MCP Host: signed out of "{0}".', s.name));
        if (s.state.kind === 'running') await s.restart().catch(report(vscode.l10n.t('could not restart {0}', s.name)));
      }, (s) => s.definition.type === 'http'),
    ),
    // The tree's Cancel on a task: aborts the call, which sends tasks/cancel.
    vscode.commands.registerCommand(Commands.cancelTask, (node?: TreeNode) => {
      if (node?.kind === 'task') node.entry.cancel();
    }),
    vscode.commands.registerCommand(Commands.showSamplingHistory, () => host.sampling.showHistory(docs)),
    vscode.commands.registerCommand(Commands.resetSamplingConsent, async () => {
      await host.sampling.resetAlways();
      void vscode.window.showInformationMessage(vscode.l10n.t('MCP Host: every server will be asked again before it uses a language model.'));
    }),
  ];
}

function outcomeLabel(outcome: CallRecord['outcome']): string {
  const labels: Record<NonNullable<CallRecord['outcome']>, string> = {
    ok: vscode.l10n.t('ok'),
    isError: vscode.l10n.t('tool error'),
    failed: vscode.l10n.t('failed'),
    cancelled: vscode.l10n.t('cancelled'),
  };
  return outcome === undefined ? vscode.l10n.t('running') : labels[outcome];
}

async function rerun(host: McpHost, tools: ToolCalls, serverName: string, toolName: string, args: Record<string, unknown>, edit: boolean): Promise<void> {
  const server = host.registry.get(serverName);
  const tool = server?.tools.find((t) => t.name === toolName);
  if (!server || !tool) return void vscode.window.showErrorMessage(vscode.l10n.t('MCP Host: {0} is not available now.', `${serverName} › ${toolName}`));
  if (edit) {
    const edited = await askArguments(`${serverName} › ${toolName}`, tool.inputSchema, args);
    if (edited) await tools.call(server, tool, edited);
  }
  else await tools.call(server, tool, args);
}

async function pickServer(host: McpHost, node: TreeNode | string | undefined, filter: (s: ServerHandle) => boolean): Promise<ServerHandle | undefined> {
  if (typeof node === 'string') return host.registry.get(node);
  if (node && 'server' in node) return node.server;
  const candidates = host.servers.filter(filter);
  if (candidates.length === 0) {
    void vscode.window.showInformationMessage(host.servers.length ? vscode.l10n.t('MCP Host: no server fits.') : vscode.l10n.t('MCP Host: no servers are configured. Use "MCP Host: Add Server...".'));
    return undefined;
  }
  if (candidates.length === 1) return candidates[0];
  const pick = await vscode.window.showQuickPick(
    candidates.map((s) => ({ label: s.name, description: stateLabel(s.state.kind), server: s })),
    { placeHolder: vscode.l10n.t('Which MCP server?') },
  );
  return pick?.server;
}
