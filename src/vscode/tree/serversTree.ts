import * as vscode from 'vscode';
import {
  appResourceUri,
  assertNever,
  fromTemplate,
  shortener,
  type SandboxReach,
  inline,
  isToolOfferedToPerson,
  joinShown,
  titleAndName,
  type EraDecision,
  type ServerHandle,
  type ServerState,
  type ShownText,
  type Tool,
} from '../../core';
import type { McpHost } from '../host/host';
import type { AgentConnections } from '../agents/agents';
import { agentOfClient, targetLabel } from '../../core/agents/targets';
import type { Sandboxes } from '../host/sandboxes';
import { Commands } from '../common/ids';
import { sandboxRules } from '../policy/consent';
import { isFlaggedMember } from '../../core/scan/detectors';
import { startWithheldBy } from '../policy/vscodeMcpPolicy';
import { lockedSetting, oneOf } from '../common/organisation';
import { CHAT_POLICY_SETTINGS, chatWithheldBy, sameNamesInChat } from '../gateway/chatPolicy';
import { scopeLabel } from '../common/scopes';
import type { ServerIcons } from '../common/icons';
import { resourceTooltip, templateTooltip } from '../resources/tooltips';
import type { GroupKind, TreeNode } from './nodes';
import { elapsedText, type ToolTask, type ToolTasks } from '../tasks/toolTasks';
import { progressText, taskStatusLabel } from '../tools/taskProgress';

/** A function, not a table: `vscode.l10n.t` answers in the editor's language only once the extension runs. */
function groupLabel(group: GroupKind): string {
  const labels: Record<GroupKind, string> = {
    tools: vscode.l10n.t('Tools'),
    prompts: vscode.l10n.t('Prompts'),
    resources: vscode.l10n.t('Resources'),
    templates: vscode.l10n.t('Resource Templates'),
    tasks: vscode.l10n.t('Tasks'),
  };
  return labels[group];
}

const GROUP_ICONS: Record<GroupKind, string> = {
  tools: 'tools',
  prompts: 'comment-discussion',
  resources: 'file',
  templates: 'file-code',
  tasks: 'run-all',
};

/** The "Servers" view: servers, their groups, and what each group lists. */
export class ServersTreeProvider implements vscode.TreeDataProvider<TreeNode>, vscode.Disposable {
  private readonly changeEmitter = new vscode.EventEmitter<TreeNode | undefined>();
  readonly onDidChangeTreeData = this.changeEmitter.event;
  private readonly subscription: vscode.Disposable;

  constructor(
    private readonly host: McpHost,
    private readonly tasks?: ToolTasks,
    /** The servers' own icons (2025-11-25 `icons`), where accepted; the theme icons otherwise. */
    readonly icons?: ServerIcons,
    /** The agents connected to this window, listed after the servers. */
    private readonly agents?: AgentConnections,
  ) {
    this.subscription = vscode.Disposable.from(
      ...(agents ? [agents.onDidChange(() => this.changeEmitter.fire(undefined))] : []),
      host.onDidChange(() => this.changeEmitter.fire(undefined)),
      ...(tasks ? [tasks.onDidChange(() => this.changeEmitter.fire(undefined))] : []),
      ...(icons ? [icons.onDidChange(() => this.changeEmitter.fire(undefined))] : []),
      // A shared server's row says whether VS Code's policies let the chat have it.
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (CHAT_POLICY_SETTINGS.some((key) => e.affectsConfiguration(key))) this.changeEmitter.fire(undefined);
      }),
    );
  }

  getChildren(node?: TreeNode): TreeNode[] {
    if (!node) {
      return [
        ...this.host.servers.map((server): TreeNode => ({ kind: 'server', server })),
        ...this.host.blocked.map((b): TreeNode => ({ kind: 'blocked', name: b.name, origin: b.origin })),
        ...this.host.diagnostics.map((diagnostic): TreeNode => ({ kind: 'invalid', diagnostic })),
        ...(this.agents?.entries().length ? [{ kind: 'agents' } as const] : []),
      ];
    }
    switch (node.kind) {
      case 'agents':
        return (this.agents?.entries() ?? []).map(({ target, entry }): TreeNode => ({ kind: 'agentEntry', target, entry }));
      case 'agentEntry':
        return (this.agents?.sessions() ?? [])
          .filter((session) => session.via === node.target.id)
          .map((session): TreeNode => ({ kind: 'agentSession', session }));
      case 'server':
        return [...groupsOf(node.server), ...(this.tasks?.of(node.server.name).length ? (['tasks'] as const) : [])].map(
          (group): TreeNode => ({ kind: 'group', server: node.server, group }),
        );
      case 'group': {
        const s = node.server;
        switch (node.group) {
          case 'tools':
            return s.tools
              .filter((t) => isToolOfferedToPerson(s.definition, t))
              .map((tool): TreeNode => ({ kind: 'tool', server: s, tool }));
          case 'prompts':
            return s.prompts.map((prompt): TreeNode => ({ kind: 'prompt', server: s, prompt }));
          case 'resources':
            return s.resources.map((resource): TreeNode => ({ kind: 'resource', server: s, resource }));
          case 'templates':
            return s.templates.map((template): TreeNode => ({ kind: 'template', server: s, template }));
          case 'tasks':
            return (this.tasks?.of(s.name) ?? []).map((entry): TreeNode => ({ kind: 'task', server: s, entry }));
          default:
            return assertNever(node.group);
        }
      }
      default:
        return [];
    }
  }

  getTreeItem(node: TreeNode): vscode.TreeItem {
    switch (node.kind) {
      case 'server': {
        const item = serverItem(node.server, (text) => this.host.redact(text), this.host.sandboxes);
        if (node.server.state.kind === 'starting' && this.host.waitingForPermission.has(node.server.name)) {
          item.description = vscode.l10n.t('waiting for your permission');
          item.iconPath = new vscode.ThemeIcon('question');
        } else if (node.server.state.kind === 'running') {
          // Only a running server's own icon: the others keep the icon that says their state.
          item.iconPath = this.icons?.iconPath(node.server.client?.serverInfo?.icons) ?? item.iconPath;
          const instructions = this.host.pins.changes(node.server).find((c) => c.kind === 'instructions');
          const notes = [
            instructions && !instructions.changed.every(isFlaggedMember)
              ? vscode.l10n.t('instructions changed since you approved them')
              : undefined,
            instructions?.findings ? vscode.l10n.t('instructions flagged by the scan: review them') : undefined,
          ].filter(Boolean);
          if (notes.length) item.description = [...notes, String(item.description ?? '')].join(' · ');
          if (instructions?.findings) item.iconPath = new vscode.ThemeIcon('shield', new vscode.ThemeColor('list.errorForeground'));
        }
        return item;
      }
      case 'agents': {
        const item = new vscode.TreeItem(vscode.l10n.t('Agents'), vscode.TreeItemCollapsibleState.Expanded);
        item.iconPath = new vscode.ThemeIcon('hubot');
        item.contextValue = 'agents';
        item.id = 'agents';
        return item;
      }
      case 'agentEntry': {
        const sessions = (this.agents?.sessions() ?? []).filter((s) => s.via === node.target.id).length;
        const item = new vscode.TreeItem(
          targetLabel(node.target),
          sessions ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.None,
        );
        item.description = `${this.host.redact(node.entry.servers.join(', '))} · ${
          sessions ? vscode.l10n.t('{0} connected', sessions) : vscode.l10n.t('not connected now')
        }`;
        item.tooltip = fromTemplate(
          vscode.l10n.t('Connected through "mcp-host" in {0}; given: {1}.'),
          this.host.shown(node.entry.file),
          this.host.shown(node.entry.servers.join(', ')),
        );
        item.iconPath = new vscode.ThemeIcon(sessions ? 'plug' : 'debug-disconnect');
        item.contextValue = 'agentEntry';
        item.id = `agents/${node.target.id}`;
        return item;
      }
      case 'agentSession': {
        const { session } = node;
        const agent = agentOfClient(session.client?.name, undefined).label;
        const item = new vscode.TreeItem(this.host.shown(agent), vscode.TreeItemCollapsibleState.None);
        item.description = `${session.client ? this.host.redact(`${session.client.name} ${session.client.version}`) : ''} · ${vscode.l10n.t(
          'since {0}',
          new Date(session.started).toLocaleTimeString(),
        )}`;
        item.iconPath = new vscode.ThemeIcon('debug-start');
        item.contextValue = 'agentSession';
        item.id = `agents/session/${session.id}`;
        return item;
      }
      case 'blocked': {
        const item = new vscode.TreeItem(node.name, vscode.TreeItemCollapsibleState.None);
        item.description = vscode.l10n.t('blocked: this workspace is not trusted');
        item.tooltip = fromTemplate(
          vscode.l10n.t('{0} ({1}) does not start in Restricted Mode. Click to manage Workspace Trust.'),
          this.host.shown(node.name),
          scopeLabel(node.origin.scope),
        );
        item.iconPath = new vscode.ThemeIcon('workspace-untrusted');
        item.contextValue = 'blockedServer';
        item.command = { command: 'workbench.trust.manage', title: vscode.l10n.t('Manage Workspace Trust') };
        return item;
      }
      case 'invalid': {
        const item = new vscode.TreeItem(node.diagnostic.name, vscode.TreeItemCollapsibleState.None);
        item.description = vscode.l10n.t('invalid: {0}', node.diagnostic.message);
        item.tooltip = this.host.shown(
          `${node.diagnostic.name} (${scopeLabel(node.diagnostic.origin.scope)}): ${node.diagnostic.message}`,
          2000,
        );
        item.iconPath = new vscode.ThemeIcon('warning', new vscode.ThemeColor('problemsWarningIcon.foreground'));
        item.contextValue = 'invalidServer';
        return item;
      }
      case 'group': {
        const count = this.getChildren(node).length;
        const open = node.group === 'tasks' ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.Collapsed;
        const item = new vscode.TreeItem(groupLabel(node.group), count ? open : vscode.TreeItemCollapsibleState.None);
        item.description = String(count);
        item.iconPath = new vscode.ThemeIcon(GROUP_ICONS[node.group]);
        item.contextValue = `group.${node.group}`;
        item.id = `${node.server.name}/${node.group}`;
        return item;
      }
      case 'tool': {
        const t = node.tool;
        const shown = titleAndName(t);
        const item = new vscode.TreeItem(shown.label);
        const hints = [
          t.annotations?.readOnlyHint ? vscode.l10n.t('read-only') : undefined,
          t.annotations?.destructiveHint && !t.annotations?.readOnlyHint ? vscode.l10n.t('destructive') : undefined,
        ].filter(Boolean);
        const status = this.host.pins.status(node.server, 'tools', t);
        const changed = status.status === 'changed';
        const flagged = changed && this.host.pins.flagged(node.server.definition, t).length > 0;
        // Suspended because the definition changed, not (only) because the scan flagged it.
        const redefined = status.status === 'changed' && !status.changed.every(isFlaggedMember);
        // Another shared server's tool of the same name: the chat's model can take one for the other.
        const sameName = sameNamesInChat(node.server, this.host.servers).get(t.name);
        item.description = [
          redefined ? vscode.l10n.t('changed since you approved it') : undefined,
          flagged ? vscode.l10n.t('flagged by the scan: review it') : undefined,
          sameName ? vscode.l10n.t('same name in the chat as a tool of {0}', this.host.redact(sameName.join(', '))) : undefined,
          shown.name,
          hints.join(', '),
          firstLine(t.description),
        ]
          .filter(Boolean)
          .join(' · ');
        const tooltip = toolTooltip(t, (text, max) => this.host.shown(text, max));
        item.tooltip = sameName
          ? joinShown(
              [
                tooltip,
                fromTemplate(
                  vscode.l10n.t(
                    'The chat is also offered a tool named {0} by {1}: its model may call one for the other. Both are named after their server in the chat.',
                  ),
                  this.host.shown(t.name),
                  this.host.shown(sameName.join(', ')),
                ),
              ],
              '\n',
            )
          : tooltip;
        item.iconPath = flagged
          ? new vscode.ThemeIcon('shield', new vscode.ThemeColor('list.errorForeground'))
          : (this.icons?.iconPath(t.icons) ??
            new vscode.ThemeIcon(t.annotations?.readOnlyHint ? 'eye' : t.annotations?.destructiveHint ? 'warning' : 'tools'));
        // "toolWithApp" adds Open App to the menu; ".changed", Review Changes.
        item.contextValue = `${appResourceUri(t) ? 'toolWithApp' : 'tool'}${changed ? '.changed' : ''}`;
        item.command = { command: Commands.callTool, title: vscode.l10n.t('Call Tool'), arguments: [node] };
        item.id = `${node.server.name}/tools/${t.name}`;
        return item;
      }
      case 'prompt': {
        const p = node.prompt;
        const shown = titleAndName(p);
        const item = new vscode.TreeItem(shown.label);
        const status = this.host.pins.status(node.server, 'prompts', p);
        const changed = status.status === 'changed';
        const flagged = changed && this.host.pins.flagged(node.server.definition, p, 'prompts').length > 0;
        const redefined = changed && !status.changed.every(isFlaggedMember);
        item.description = [
          redefined ? vscode.l10n.t('changed since you approved it') : undefined,
          flagged ? vscode.l10n.t('flagged by the scan: review it') : undefined,
          shown.name,
          firstLine(p.description),
        ]
          .filter(Boolean)
          .join(' · ');
        item.tooltip = this.host.shown(
          `${p.name}${p.arguments?.length ? `(${p.arguments.map((a) => `${a.name}${a.required ? '' : '?'}`).join(', ')})` : ''}\n${p.description ?? ''}`,
          2000,
        );
        item.iconPath = flagged
          ? new vscode.ThemeIcon('shield', new vscode.ThemeColor('list.errorForeground'))
          : (this.icons?.iconPath(p.icons) ?? new vscode.ThemeIcon('comment'));
        item.contextValue = changed ? 'prompt.changed' : 'prompt';
        item.command = { command: Commands.getPrompt, title: vscode.l10n.t('Get Prompt'), arguments: [node] };
        item.id = `${node.server.name}/prompts/${p.name}`;
        return item;
      }
      case 'resource': {
        const r = node.resource;
        const shown = titleAndName(r);
        const item = new vscode.TreeItem(shown.label);
        item.description = [shown.name, r.uri].filter(Boolean).join(' · ');
        item.tooltip = resourceTooltip(r);
        item.iconPath = this.icons?.iconPath(r.icons) ?? new vscode.ThemeIcon(r.mimeType?.startsWith('image/') ? 'file-media' : 'file');
        item.contextValue = 'resource';
        item.command = { command: Commands.openResource, title: vscode.l10n.t('Open Resource'), arguments: [node] };
        item.id = `${node.server.name}/resources/${r.uri}`;
        return item;
      }
      case 'template': {
        const r = node.template;
        const shown = titleAndName(r);
        const item = new vscode.TreeItem(shown.label);
        item.description = [shown.name, r.uriTemplate].filter(Boolean).join(' · ');
        item.tooltip = templateTooltip(r);
        item.iconPath = this.icons?.iconPath(r.icons) ?? new vscode.ThemeIcon('file-code');
        item.contextValue = 'template';
        item.command = { command: Commands.openResource, title: vscode.l10n.t('Fill In Template'), arguments: [node] };
        item.id = `${node.server.name}/templates/${r.uriTemplate}`;
        return item;
      }
      case 'task':
        return taskItem(node.server, node.entry, (text) => this.host.shown(text));
      default:
        return assertNever(node);
    }
  }

  dispose(): void {
    this.subscription.dispose();
    this.changeEmitter.dispose();
  }
}

/** A tool call running (or run) as a task: status, elapsed time, the server's status message; Cancel while it runs. */
function taskItem(server: ServerHandle, entry: ToolTask, shown: (text: string) => ShownText): vscode.TreeItem {
  const { task } = entry;
  const item = new vscode.TreeItem(entry.tool);
  const status =
    entry.ending === 'lost'
      ? fromTemplate(vscode.l10n.t('lost'))
      : entry.ending === 'cancelled'
        ? taskStatusLabel('cancelled')
        : taskStatusLabel(task.status);
  const running = entry.endedAt === undefined;
  const progress = running && entry.progress ? progressText(entry.progress, shown) : undefined;
  item.description = [status, elapsedText(entry), progress, firstLine(task.statusMessage)].filter(Boolean).join(' · ');
  item.tooltip = joinShown(
    [
      shown(`${entry.tool} (${task.taskId})`),
      task.statusMessage ? joinShown([status, shown(task.statusMessage)], ': ') : status,
      progress,
      entry.background ? fromTemplate(vscode.l10n.t('Runs in the background: a notification says when it ends.')) : undefined,
    ],
    '\n',
  );
  item.iconPath = new vscode.ThemeIcon(
    running
      ? task.status === 'input_required'
        ? 'question'
        : 'loading~spin'
      : entry.ending === 'lost'
        ? 'debug-disconnect'
        : task.status === 'completed'
          ? 'pass'
          : task.status === 'failed'
            ? 'error'
            : 'circle-slash',
  );
  // task.running: its call still shows a progress notification, so it can also go to the background.
  item.contextValue = !running ? 'task.ended' : entry.toBackground ? 'task.running' : 'task.background';
  item.id = `${server.name}/tasks/${task.taskId}`;
  return item;
}

/**
 * A tool's tooltip is plain text, never Markdown: the server's description shows as written, so
 * no image loads and no link appears (docs/security.md, "Server content is data").
 */
function toolTooltip(tool: Tool, shown: (text: string, max?: number) => ShownText): ShownText {
  const hints = [
    tool.annotations?.readOnlyHint ? fromTemplate(vscode.l10n.t('read-only')) : undefined,
    tool.annotations?.destructiveHint && !tool.annotations?.readOnlyHint ? fromTemplate(vscode.l10n.t('destructive')) : undefined,
  ];
  return joinShown([joinShown([shown(tool.name), ...hints], ' · '), tool.description ? shown(tool.description, 2000) : undefined], '\n');
}

/** The groups a running server declares. */
export function groupsOf(server: ServerHandle): GroupKind[] {
  const caps = server.client?.serverCapabilities;
  if (!caps) return [];
  const groups: GroupKind[] = [];
  if (caps.tools) groups.push('tools');
  if (caps.prompts) groups.push('prompts');
  if (caps.resources) groups.push('resources', 'templates');
  return groups;
}

function serverItem(server: ServerHandle, redact: (text: string) => string, sandboxes: Sandboxes): vscode.TreeItem {
  const state = server.state;
  const running = state.kind === 'running';
  const item = new vscode.TreeItem(server.name, running ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.None);
  // VS Code remembers each id's collapse state, and a server row was a leaf while it started: a
  // new id once it runs lets Expanded apply the first time, and keeps the person's choice after.
  item.id = running ? `server/${server.name}/running` : `server/${server.name}`;
  item.iconPath = stateIcon(state);
  const shared = server.definition.shareWithChat;
  const withheld = shared ? chatWithheldBy(server) : undefined;
  const badge = withheld ? vscode.l10n.t('withheld from chat by {0}', withheld) : vscode.l10n.t('shared with chat');
  const sandboxed = server.definition.type === 'stdio' && server.definition.sandboxEnabled === true;
  const kept = startWithheldBy(server.definition);
  const badges = [
    ...(kept ? [vscode.l10n.t('managed by your organisation')] : []),
    ...(sandboxed ? [vscode.l10n.t('sandboxed')] : []),
    ...(shared ? [badge] : []),
  ];
  item.description = redact([...badges, describeServer(server)].join(' · '));
  // `.http` lets the menus offer what only an HTTP server has (Sign Out); `.shared`, Stop Sharing.
  item.contextValue = `server.${state.kind}${server.definition.type === 'http' ? '.http' : ''}${shared ? '.shared' : ''}`;
  item.tooltip = serverTooltip(server, redact, sandboxed ? sandboxes.reachOf(server.definition, running) : undefined);
  if (!running)
    item.command = { command: Commands.showServerLog, title: vscode.l10n.t('Show Server Log'), arguments: [{ kind: 'server', server }] };
  return item;
}

export function describeServer(server: ServerHandle): string {
  const state = server.state;
  switch (state.kind) {
    case 'stopped':
      return server.definition.enabled ? stateLabel('stopped') : vscode.l10n.t('disabled');
    case 'starting':
      return `${stateLabel('starting')}…`;
    case 'running': {
      const c = server.client;
      const parts = [
        stateLabel('running'),
        c?.era === 'modern' ? vscode.l10n.t('{0} stateless', c.protocolVersion ?? '') : (c?.protocolVersion ?? ''),
      ];
      if (c?.serverCapabilities?.tools)
        parts.push(vscode.l10n.t('{0} tools', server.tools.filter((t) => isToolOfferedToPerson(server.definition, t)).length));
      return parts.filter(Boolean).join(' · ');
    }
    case 'error':
      return state.restartAt
        ? vscode.l10n.t('error: {0} (restarting)', firstLine(state.message))
        : vscode.l10n.t('error: {0}', firstLine(state.message));
    default:
      return assertNever(state);
  }
}

/** A server state's name as the person reads it. */
export function stateLabel(kind: ServerState['kind']): ShownText {
  const labels: Record<ServerState['kind'], ShownText> = {
    stopped: fromTemplate(vscode.l10n.t('stopped')),
    starting: fromTemplate(vscode.l10n.t('starting')),
    running: fromTemplate(vscode.l10n.t('running')),
    error: fromTemplate(vscode.l10n.t('error')),
  };
  return labels[kind];
}

function stateIcon(state: ServerState): vscode.ThemeIcon {
  switch (state.kind) {
    case 'running':
      return new vscode.ThemeIcon('pass-filled', new vscode.ThemeColor('testing.iconPassed'));
    case 'starting':
      return new vscode.ThemeIcon('loading~spin');
    case 'stopped':
      return new vscode.ThemeIcon('circle-large-outline');
    case 'error':
      return new vscode.ThemeIcon('error', new vscode.ThemeColor('testing.iconFailed'));
    default:
      return assertNever(state);
  }
}

/** A few lines: the editor stays visible while the pointer passes on to the inline buttons; the rest is in Show Server Info. */
export function serverTooltip(server: ServerHandle, redact: (text: string) => string, reach?: SandboxReach): vscode.MarkdownString {
  const md = new vscode.MarkdownString(undefined, true);
  const def = server.definition;
  md.appendMarkdown(
    `**${inline(server.name)}** — ${def.type === 'stdio' ? 'stdio' : inline(def.url)} (${scopeLabel(def.origin.scope)})\n\n`,
  );
  if (def.type === 'stdio' && def.sandboxEnabled) md.appendMarkdown(sandboxLines(reach, def.sandbox?.network?.allowedDomains));
  md.appendMarkdown(organisationLines(server));
  const c = server.client;
  if (c?.serverInfo) {
    md.appendMarkdown(
      `${vscode.l10n.t('{0} {1}, protocol {2}', inline(c.serverInfo.title ?? c.serverInfo.name, 100), inline(String(c.serverInfo.version), 50), inline(protocolText(server)))}\n\n`,
    );
    md.appendMarkdown(
      `$(info) [${vscode.l10n.t('Show Server Info')}](command:${Commands.showServerInfo}?${encodeURIComponent(JSON.stringify([server.name]))}) ${vscode.l10n.t('for capabilities and instructions')}`,
    );
    md.isTrusted = { enabledCommands: [Commands.showServerInfo] };
  } else if (server.state.kind === 'error') {
    const message = redact(server.state.message).split('\n').slice(0, 3).join('\n');
    md.appendCodeblock(message.length > 300 ? `${message.slice(0, 300)}…` : message, 'text');
  }
  return md;
}

/**
 * Where the organisation's policy decides for this server, one paragraph (empty where it does not):
 * VS Code's MCP policies keeping it out, and the locked settings that hold for every server.
 */
function organisationLines(server: ServerHandle): string {
  const kept = startWithheldBy(server.definition);
  // Each read with its own values: VS Code hands an unset string setting without a default as '' (not a policy).
  const locked = (
    [
      ['mcpHost.sandbox.default', lockedSetting('mcpHost.sandbox.default', oneOf(['off', 'workspace', 'all']))],
      ['mcpHost.roots.fence', lockedSetting('mcpHost.roots.fence', oneOf(['ask', 'block', 'off']))],
    ] as const
  ).flatMap(([setting, { value, lockedBy }]) => (lockedBy && value !== undefined ? [`${setting} ${value}`] : []));
  const lines = [
    ...(kept ? [vscode.l10n.t('Managed by your organisation: its {0} keeps this server from running.', kept)] : []),
    ...(locked.length ? [vscode.l10n.t('Managed by your organisation: {0}.', locked.join(', '))] : []),
  ];
  return lines.map((line) => `$(organization) ${line}\n\n`).join('');
}

/** A sandboxed server's limits as computed for this machine (at its start, or as it would start now), in one paragraph: the tooltip stays short. */
function sandboxLines(reach: SandboxReach | undefined, allowedDomains: readonly string[] | undefined): string {
  if (!reach) return `$(shield) ${sandboxRules(allowedDomains, inline)}\n\n`;
  const short = shortener(reach.home);
  const list = (paths: string[]) => paths.map((p) => inline(short(p))).join(', ');
  const parts = [vscode.l10n.t('Reads and writes: {0}', list(reach.readWrite) || vscode.l10n.t('nothing'))];
  if (reach.readOnly.length) parts.push(vscode.l10n.t('Reads: {0}', list(reach.readOnly)));
  if (reach.denyRead.length) parts.push(vscode.l10n.t('Hidden: {0}', list(reach.denyRead)));
  if (reach.denyWrite.length) parts.push(vscode.l10n.t('Never writes: {0}', list(reach.denyWrite)));
  parts.push(
    vscode.l10n.t(
      'Network: {0}',
      reach.allowedDomains.length ? reach.allowedDomains.map((d) => inline(d)).join(', ') : vscode.l10n.t('none'),
    ),
  );
  return `$(shield) ${vscode.l10n.t('Sandboxed: it sees the system, and of your files only these.')} ${parts.join(' · ')}\n\n`;
}

/** The running connection's protocol revision, its era and how that was chosen, e.g. "2026-07-28 (stateless, answered server/discover)". */
export function protocolText(server: ServerHandle): string {
  const c = server.client;
  if (!c?.protocolVersion) return '';
  const era = c.era === 'modern' ? vscode.l10n.t('stateless') : vscode.l10n.t('session with initialize');
  const decision = server.eraDecision;
  const how: Record<EraDecision, string> = {
    setting: vscode.l10n.t('as the protocol setting says'),
    remembered: vscode.l10n.t('remembered from an earlier start'),
    discover: c.era === 'modern' ? vscode.l10n.t('answered server/discover') : vscode.l10n.t('did not answer server/discover'),
    exitedOnDiscover: vscode.l10n.t('exited on server/discover, started again'),
  };
  return `${c.protocolVersion} (${decision ? `${era}, ${how[decision]}` : era})`;
}

function firstLine(text: string | undefined): string {
  return (text ?? '').split('\n')[0];
}
