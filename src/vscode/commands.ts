import * as vscode from 'vscode';
import type { ServerLog } from './logs/logs';
import { fromTemplate, joinShown, McpError, withIcon, renderServerInfo, type ServerHandle, type ShownText } from '../core';
import { notify } from './window/notifications';
import { pickOne, type ShownPickItem } from './window/quickPicks';
import { exportAuditKey, exportAuditLog, showAuditLog, verifyAuditLog } from './policy/audit';
import type { McpHost } from './host/host';
import type { OutputDocuments } from './common/outputDocuments';
import type { PromptActions } from './prompts/getPrompt';
import type { ServerSetup } from './setup/serverSetup';
import { fillTemplate, openResource, readResourceCommand } from './resources/readResource';
import type { CallRecord, ToolCalls } from './tools/callTool';
import { Commands, ContextKeys, Settings } from './common/ids';
import { knownIcon, warmIcons } from './common/icons';
import { setServerLogLevel } from './logs/logLevel';
import type { ChatSharing } from './gateway/chatSharing';
import type { AgentConnections } from './agents/agents';
import type { ServerEntry } from './setup/editServers';
import type { TreeNode } from './tree/nodes';
import { scopeLabel } from './common/scopes';
import { describeServer, protocolText, stateLabel } from './tree/serversTree';
import { showDocument } from './window/windowInputs';

/** Registers every command; each takes a tree node or asks which server with a quick pick. */
export function registerCommands(
  host: McpHost,
  mainLog: ServerLog,
  tools: ToolCalls,
  prompts: PromptActions,
  docs: OutputDocuments,
  setup: ServerSetup,
  sharing: ChatSharing,
  agents: AgentConnections,
): vscode.Disposable[] {
  // Audit records are written a little after their calls (../core/policy/offPath.ts): the audit commands read the file once they are all in.
  const withAuditWritten = (read: () => unknown) => async () => {
    await host.auditWritten();
    return read();
  };
  const withServer =
    (action: (server: ServerHandle) => unknown, filter: (s: ServerHandle) => boolean = () => true, noneFits?: () => ShownText) =>
    async (node?: TreeNode | string) => {
      const server = await pickServer(host, node, filter, noneFits);
      if (server) await action(server);
    };
  const withEntry = (action: (entry: ServerEntry) => unknown) => async (node?: TreeNode | string) => {
    const entry = await pickEntry(host, node);
    if (entry) await action(entry);
  };
  // The error is the server's text (an HTTP body, a stderr tail, an initialize error): shown, never raw.
  const report = (what: ShownText) => (e: unknown) =>
    void host.ui.notify('error', fromTemplate(vscode.l10n.t('MCP Host: {0}: {1}'), what, host.shown(McpError.from(e).message)));

  return [
    vscode.commands.registerCommand(
      Commands.startServer,
      withServer(
        (s) =>
          s
            .start()
            .catch(
              report(
                fromTemplate(
                  vscode.l10n.t('could not start {0} (defined in the {1})'),
                  host.shown(s.name),
                  scopeLabel(s.definition.origin.scope),
                ),
              ),
            ),
        (s) => s.state.kind !== 'running',
        () => fromTemplate(vscode.l10n.t('MCP Host: every server is running already.')),
      ),
    ),
    vscode.commands.registerCommand(
      Commands.stopServer,
      withServer(
        (s) => s.stop(),
        (s) => s.state.kind !== 'stopped',
        () => fromTemplate(vscode.l10n.t('MCP Host: no server is running.')),
      ),
    ),
    vscode.commands.registerCommand(
      Commands.restartServer,
      withServer((s) => s.restart().catch(report(fromTemplate(vscode.l10n.t('could not restart {0}'), host.shown(s.name))))),
    ),
    vscode.commands.registerCommand(
      Commands.shareWithChat,
      withServer(
        (s) => sharing.setShared(s, true).catch(report(fromTemplate(vscode.l10n.t('could not share {0}'), host.shown(s.name)))),
        (s) => !s.definition.shareWithChat,
        () => fromTemplate(vscode.l10n.t('MCP Host: every server is shared with the chat already.')),
      ),
    ),
    vscode.commands.registerCommand(
      Commands.stopSharingWithChat,
      withServer(
        (s) => sharing.setShared(s, false).catch(report(fromTemplate(vscode.l10n.t('could not stop sharing {0}'), host.shown(s.name)))),
        (s) => s.definition.shareWithChat,
        () => fromTemplate(vscode.l10n.t('MCP Host: no server is shared with the chat.')),
      ),
    ),
    vscode.commands.registerCommand(Commands.connectAgent, () =>
      agents.connect(host.ui).catch(report(fromTemplate(vscode.l10n.t('could not connect the agent')))),
    ),
    vscode.commands.registerCommand(Commands.disconnectAgent, () =>
      agents.disconnect(host.ui).catch(report(fromTemplate(vscode.l10n.t('could not disconnect the agent')))),
    ),
    vscode.commands.registerCommand(
      Commands.showServerLog,
      withServer((s) => host.logs.channel(s.name).show(true)),
    ),
    vscode.commands.registerCommand(
      Commands.setServerLogLevel,
      withServer((s) =>
        setServerLogLevel(s).catch(report(fromTemplate(vscode.l10n.t('could not set the log level of {0}'), host.shown(s.name)))),
      ),
    ),
    vscode.commands.registerCommand(
      Commands.showServerInfo,
      withServer(async (s) => {
        const def = s.definition;
        const c = s.client;
        const markdown = renderServerInfo({
          name: s.name,
          reachedBy: def.type === 'stdio' ? `stdio: ${[def.command, ...def.args].join(' ')}` : def.url,
          scope: scopeLabel(def.origin.scope),
          state: host.waitingForPermission.has(s.name) ? vscode.l10n.t('waiting for your permission') : describeServer(s),
          serverInfo: c?.serverInfo,
          protocolVersion: protocolText(s) || undefined,
          capabilities: c?.serverCapabilities,
          instructions: c?.instructions,
          labels: {
            server: vscode.l10n.t('Server'),
            version: vscode.l10n.t('Version'),
            protocol: vscode.l10n.t('Protocol'),
            capabilities: vscode.l10n.t('Capabilities'),
            instructions: vscode.l10n.t('Instructions'),
            none: vscode.l10n.t('(none)'),
            notRunning: vscode.l10n.t('The server is not running: start it to see what it reports.'),
          },
        });
        await showDocument(docs.put('info', `${s.name}.md`, markdown), { preview: false });
      }),
    ),
    vscode.commands.registerCommand(
      Commands.editServerSettings,
      withEntry((e) => setup.editServerSettings(e)),
    ),
    vscode.commands.registerCommand(
      Commands.removeServer,
      withEntry((e) => setup.removeServer(e)),
    ),
    vscode.commands.registerCommand(Commands.showTrace, async () => {
      if (vscode.workspace.getConfiguration(Settings.section).get(Settings.trace, 'off') === 'off') {
        const turnOn = vscode.l10n.t('Trace Messages');
        const pick = await notify('info', fromTemplate(vscode.l10n.t('The protocol trace is off (setting mcpHost.trace).')), turnOn);
        if (pick === turnOn)
          await vscode.workspace.getConfiguration(Settings.section).update(Settings.trace, 'messages', vscode.ConfigurationTarget.Global);
      }
      host.trace.show();
    }),
    vscode.commands.registerCommand(Commands.showLog, () => mainLog.show(true)),
    vscode.commands.registerCommand(Commands.refresh, async () => {
      await host.reload();
      await Promise.all(
        host.servers.map((s) =>
          Promise.all((['tools', 'prompts', 'resources', 'templates'] as const).map((k) => s.refresh(k, { fresh: true }))),
        ),
      );
    }),
    vscode.commands.registerCommand(Commands.addServer, () => setup.addServer()),
    vscode.commands.registerCommand(Commands.importServers, () => setup.importServers()),
    vscode.commands.registerCommand(Commands.callTool, async (node?: TreeNode) => {
      const chosen = await tools.pickTool(node?.kind === 'tool' ? { server: node.server, tool: node.tool } : undefined);
      if (chosen) await tools.run(chosen.server, chosen.tool);
    }),
    // On a tool or prompt: its own change; on a server (or from the palette): every change of the server.
    vscode.commands.registerCommand(Commands.reviewChanges, async (node?: TreeNode | string) => {
      const only =
        node && typeof node !== 'string'
          ? node.kind === 'tool'
            ? { kind: 'tools' as const, name: node.tool.name }
            : node.kind === 'prompt'
              ? { kind: 'prompts' as const, name: node.prompt.name }
              : undefined
          : undefined;
      const server = await pickServer(
        host,
        node,
        (s) => host.pins.changes(s).length > 0,
        () => fromTemplate(vscode.l10n.t('MCP Host: no tool or prompt changed since you approved it.')),
      );
      if (server) await host.pinReview.review(server, only);
    }),
    vscode.commands.registerCommand(Commands.rerunLastToolCall, async () => {
      const last = tools.history[0];
      if (!last) return void notify('info', fromTemplate(vscode.l10n.t('MCP Host: no tool has been called yet.')));
      await rerun(host, tools, last.server, last.tool, last.args, false);
    }),
    vscode.commands.registerCommand(Commands.showCallHistory, async () => {
      if (!tools.history.length) return void notify('info', fromTemplate(vscode.l10n.t('MCP Host: no tool has been called yet.')));
      const pick = await pickOne(
        tools.history.map((r) => ({
          label: host.shown(`${r.server} › ${r.tool}`),
          description: joinShown(
            [
              host.shown(new Date(r.at).toLocaleTimeString()),
              outcomeLabel(r.outcome),
              r.ms !== undefined ? fromTemplate(vscode.l10n.t('{0} ms'), host.shown(String(r.ms))) : undefined,
              r.background ? fromTemplate(vscode.l10n.t('in the background')) : undefined,
              r.by === 'app' ? fromTemplate(vscode.l10n.t('by the app')) : undefined,
              r.by === 'chat' ? fromTemplate(vscode.l10n.t('by the chat')) : undefined,
              r.agent ? agentLabel(host, r.agent) : undefined,
            ],
            ' · ',
          ),
          // The arguments are redacted too: a secret typed as an argument is *** in the trace and here.
          detail: host.shown(JSON.stringify(r.args)),
          record: r,
        })),
        { title: fromTemplate(vscode.l10n.t('MCP Host: Tool Call History')), placeHolder: fromTemplate(vscode.l10n.t('Which call?')) },
      );
      if (!pick) return;
      const how = await pickOne(
        [
          // Masked arguments are not what the client sent: rerun only after the person has seen and edited them.
          ...(pick.record.masked ? [] : [{ label: withIcon('debug-rerun', fromTemplate(vscode.l10n.t('Rerun'))), edit: false }]),
          { label: withIcon('edit', fromTemplate(vscode.l10n.t('Edit Arguments and Rerun'))), edit: true },
        ],
        { placeHolder: joinShown([pick.label, pick.detail], ' ') },
      );
      if (how) await rerun(host, tools, pick.record.server, pick.record.tool, pick.record.args, how.edit);
    }),
    vscode.commands.registerCommand(Commands.readResource, () => readResourceCommand(host)),
    vscode.commands.registerCommand(Commands.openResource, async (node?: TreeNode) => {
      if (node?.kind === 'resource') await openResource(node.server, node.resource);
      else if (node?.kind === 'template')
        await fillTemplate(node.server, host.gate.serverFor(node.server, 'person'), node.template, (text) => host.redact(text));
      else await readResourceCommand(host);
    }),
    vscode.commands.registerCommand(Commands.getPrompt, (node?: TreeNode) =>
      prompts.run(node?.kind === 'prompt' ? { server: node.server, prompt: node.prompt } : undefined),
    ),
    vscode.commands.registerCommand(Commands.copyPrompt, (uri?: vscode.Uri) => prompts.copy(uri)),
    vscode.commands.registerCommand(
      Commands.signOut,
      withServer(
        async (s) => {
          if (s.definition.type !== 'http') return;
          await host.authFor(s.name).signOut(new URL(s.definition.url));
          void notify('info', fromTemplate(vscode.l10n.t('MCP Host: signed out of "{0}".'), host.shown(s.name)));
          if (s.state.kind === 'running')
            await s.restart().catch(report(fromTemplate(vscode.l10n.t('could not restart {0}'), host.shown(s.name))));
        },
        (s) => s.definition.type === 'http',
        () => fromTemplate(vscode.l10n.t('MCP Host: Sign Out applies to HTTP servers, and none is configured.')),
      ),
    ),
    // The tree's Cancel on a task: aborts the call, which sends tasks/cancel.
    vscode.commands.registerCommand(Commands.cancelTask, (node?: TreeNode) => {
      if (node?.kind === 'task') node.entry.cancel();
    }),
    // The tree's Run in Background on a task whose call still shows its progress notification.
    vscode.commands.registerCommand(Commands.runTaskInBackground, (node?: TreeNode) => {
      if (node?.kind === 'task') node.entry.toBackground?.();
    }),
    vscode.commands.registerCommand(Commands.showSamplingHistory, () => host.sampling.showHistory(docs)),
    vscode.commands.registerCommand(
      Commands.showAuditLog,
      withAuditWritten(() => showAuditLog(host.auditFile, docs)),
    ),
    vscode.commands.registerCommand(
      Commands.verifyAuditLog,
      withAuditWritten(() => verifyAuditLog(host.auditFile, host.auditTrust)),
    ),
    vscode.commands.registerCommand(
      Commands.exportAuditLog,
      withAuditWritten(() => exportAuditLog(host.auditFile, host.ui)),
    ),
    vscode.commands.registerCommand(Commands.exportAuditKey, () => exportAuditKey(host.auditFile, host.auditTrust, host.ui)),
    vscode.commands.registerCommand(Commands.setTelemetryHeaders, () => host.telemetry.setHeaders(host.ui)),
    vscode.commands.registerCommand(Commands.resetSamplingConsent, async () => {
      await host.sampling.resetAlways();
      void notify(
        'info',
        fromTemplate(vscode.l10n.t('MCP Host: in this workspace, every server will be asked again before it uses a language model.')),
      );
    }),
  ];
}

/** "by Claude Code (claude-code 2.1.0), session 1a2b3c4d": who made an agent's call, and in which of its sessions. */
function agentLabel(host: McpHost, agent: NonNullable<CallRecord['agent']>): ShownText {
  const who = agent.client ? `${agent.label} (${agent.client})` : agent.label;
  return agent.session
    ? fromTemplate(vscode.l10n.t('by {0}, session {1}'), host.shown(who), host.shown(agent.session.slice(0, 8)))
    : fromTemplate(vscode.l10n.t('by {0}'), host.shown(who));
}

function outcomeLabel(outcome: CallRecord['outcome']): ShownText {
  const labels: Record<NonNullable<CallRecord['outcome']>, ShownText> = {
    ok: fromTemplate(vscode.l10n.t('ok')),
    isError: fromTemplate(vscode.l10n.t('tool error')),
    failed: fromTemplate(vscode.l10n.t('failed')),
    cancelled: fromTemplate(vscode.l10n.t('cancelled')),
    refused: fromTemplate(vscode.l10n.t('refused, not sent')),
  };
  return outcome === undefined ? fromTemplate(vscode.l10n.t('running')) : labels[outcome];
}

async function rerun(
  host: McpHost,
  tools: ToolCalls,
  serverName: string,
  toolName: string,
  args: Record<string, unknown>,
  edit: boolean,
): Promise<void> {
  const server = host.registry.get(serverName);
  const tool = server?.tools.find((t) => t.name === toolName);
  if (!server || !tool)
    return void notify(
      'error',
      fromTemplate(vscode.l10n.t('MCP Host: {0} is not available now.'), host.shown(`${serverName} › ${toolName}`)),
    );
  if (edit) {
    const edited = await tools.askArguments(server, tool, args);
    if (edited) await tools.call(server, tool, edited);
  } else await tools.call(server, tool, args);
}

/** Sets the context keys the manifest's `when` clauses read, now and whenever the servers change. */
export function trackContextKeys(host: McpHost): vscode.Disposable {
  const set = (key: string, value: boolean) => void vscode.commands.executeCommand('setContext', key, value);
  const update = () => {
    const all = host.servers;
    set(ContextKeys.hasServer, all.length > 0 || host.diagnostics.length > 0);
    set(
      ContextKeys.hasStartableServer,
      all.some((s) => s.state.kind !== 'running'),
    );
    set(
      ContextKeys.hasStoppableServer,
      all.some((s) => s.state.kind !== 'stopped'),
    );
    set(
      ContextKeys.hasHttpServer,
      all.some((s) => s.definition.type === 'http'),
    );
  };
  update();
  return host.onDidChange(update);
}

/** The server pickers' items: name and state, and the server's own icon (serverInfo.icons) once it ran. */
export async function serverPickItems(
  host: McpHost,
  servers: readonly ServerHandle[],
): Promise<Array<ShownPickItem & { server: ServerHandle }>> {
  await warmIcons(servers.map((s) => s.client?.serverInfo?.icons));
  return servers.map((s) => ({
    label: host.shown(s.name),
    iconPath: knownIcon(s.client?.serverInfo?.icons),
    description: stateLabel(s.state.kind),
    server: s,
  }));
}

async function pickServer(
  host: McpHost,
  node: TreeNode | string | undefined,
  filter: (s: ServerHandle) => boolean,
  noneFits?: () => ShownText,
): Promise<ServerHandle | undefined> {
  if (typeof node === 'string') return host.registry.get(node);
  if (node && 'server' in node) return node.server;
  const candidates = host.servers.filter(filter);
  if (candidates.length === 0) {
    void notify(
      'info',
      host.servers.length
        ? (noneFits?.() ?? fromTemplate(vscode.l10n.t('MCP Host: no server fits.')))
        : fromTemplate(vscode.l10n.t('MCP Host: no servers are configured. Use "MCP Host: Add Server...".')),
    );
    return undefined;
  }
  if (candidates.length === 1) return candidates[0];
  const pick = await pickOne(await serverPickItems(host, candidates), { placeHolder: fromTemplate(vscode.l10n.t('Which MCP server?')) });
  return pick?.server;
}

/** A server or an unusable entry of the settings, from the tree, by name, or picked. */
async function pickEntry(host: McpHost, node: TreeNode | string | undefined): Promise<ServerEntry | undefined> {
  if (typeof node === 'string') {
    const found = host.registry.get(node)?.definition ?? host.diagnostics.find((d) => d.name === node);
    return found && { name: found.name, origin: found.origin };
  }
  if (node?.kind === 'invalid') return { name: node.diagnostic.name, origin: node.diagnostic.origin };
  if (node?.kind === 'blocked') return { name: node.name, origin: node.origin };
  if (node && 'server' in node) return { name: node.server.name, origin: node.server.definition.origin };
  const entries: Array<ShownPickItem & { entry: ServerEntry }> = [
    ...(await serverPickItems(host, host.servers)).map(({ server: s, ...item }) => ({
      ...item,
      description: joinShown([scopeLabel(s.definition.origin.scope), item.description], ' · '),
      entry: { name: s.name, origin: s.definition.origin },
    })),
    ...host.diagnostics
      .filter((d) => d.name !== '(all)')
      .map((d) => ({
        label: host.shown(d.name),
        description: joinShown([scopeLabel(d.origin.scope), host.shown(d.message)], ' · '),
        entry: { name: d.name, origin: d.origin },
      })),
  ];
  if (!entries.length) {
    void notify('info', fromTemplate(vscode.l10n.t('MCP Host: no servers are configured. Use "MCP Host: Add Server...".')));
    return undefined;
  }
  if (entries.length === 1) return entries[0].entry;
  return (await pickOne(entries, { placeHolder: fromTemplate(vscode.l10n.t('Which MCP server?')) }))?.entry;
}
