/**
 * The agents connected to this window (Connect an Agent, ./connectAgent.ts): which servers each
 * configuration entry is given, the gateway their relays reach (the chat's gateway, one listener
 * for both), and what their requests meet there. Each entry's sessions get a `Catalog` of the
 * servers given to it, `<server>__<tool>`, through `Forwarder`s of origin `agent` over the person's
 * own running servers; the questions only MCP Host can answer (an agent's first use of a server,
 * a path outside the roots under the fence's `ask`, a changed definition, and MCP Host's own tool
 * confirmation for the agents the person asked it of) are asked here, naming the agent.
 * While any entry is connected, the launcher every entry names and this window's record (the
 * gateway's address and the agents' token, ~/.mcp-host, ../../core/agents/rendezvous.ts) are
 * written at activation, and the record is removed when the window closes.
 */
import { randomBytes } from 'node:crypto';
import { homedir } from 'node:os';
import * as vscode from 'vscode';
import type { ServerDefinition, ServerHandle } from '../../core';
import { agentOfClient, targetById, type AgentTarget } from '../../core/agents/targets';
import { removeGatewayRecord, writeGatewayRecord, writeLauncher } from '../../core/agents/rendezvous';
import type { Catalog } from '../../core/gateway/catalog';
import type { Forwarder } from '../../core/gateway/forward';
import { toldReadOnlyInMemory, type GatewayCall } from '../../core/gateway/shared';
import type { AskReason, GateRequest } from '../../core/policy/gate';
import { nameOf, type AskAnswer } from '../../core/policy/run';
import type { GateSession } from '../../core/policy/session';
import { OffPath } from '../../core/policy/offPath';
import type { McpHost } from '../host/host';
import { serverIdentity } from '../policy/gate';
import { addToStoredList } from '../common/storedList';
import { Settings } from '../common/ids';
import type { ChatSharing } from '../gateway/chatSharing';
import type { ToolCalls } from '../tools/callTool';
import type { HostUi } from '../ui/hostUi';
import type * as AgentsModule from './lazy';
import type { AgentEntries, AgentEntry } from './entries';

/** Where the servers given to each entry are kept: a project's in the workspace's state, a user's in the global one. */
export const ENTRIES_KEY = 'mcpHost.agentEntries';
/** The agents (by id) that may use a server (by identity): the answers to "let Claude Code use notes?". */
const ALLOWED_KEY = 'mcpHost.agentServers';

export class AgentConnections implements vscode.Disposable, AgentEntries {
  private readonly token = randomBytes(32).toString('base64url');
  private readonly forwarders = new Map<ServerHandle, Forwarder>();
  private readonly changed = new vscode.EventEmitter<void>();
  /** The connected entries or their sessions changed (the Servers view lists them). */
  readonly onDidChange = this.changed.event;
  private readonly calls = new OffPath<GatewayCall>((calls) => {
    for (const call of calls) this.recordCall(call);
  });
  private started: Promise<void> | undefined;
  private readonly disposables: vscode.Disposable[] = [this.changed, this.calls];

  constructor(
    private readonly host: McpHost,
    private readonly sharing: ChatSharing,
    /** The editor's call history, where the agents' calls are kept beside the person's and the chat's. */
    private readonly tools: ToolCalls,
    private readonly workspaceState: vscode.Memento,
    private readonly globalState: vscode.Memento,
    /** dist/relay.js, which the launcher runs. */
    private readonly relayPath: string,
  ) {
    sharing.useAgents({
      token: this.token,
      catalogFor: (via) => this.catalogFor(via),
      onSession: () => this.changed.fire(),
    });
    this.disposables.push(
      host.onDidChange(() => {
        for (const handle of this.forwarders.keys()) if (!host.servers.includes(handle)) this.forwarders.delete(handle);
      }),
    );
  }

  /** MCP Host: Connect an Agent… (dist/agents.js). */
  connect(ui: HostUi): Promise<AgentTarget | undefined> {
    return loadAgents().connectAgent(this.host, this, ui.setup);
  }

  /** MCP Host: Disconnect an Agent… (dist/agents.js). */
  disconnect(ui: HostUi): Promise<AgentTarget | undefined> {
    return loadAgents().disconnectAgent(this.host, this, ui.setup);
  }

  /** The connected entries, project ones first. */
  entries(): Array<{ target: AgentTarget; entry: AgentEntry }> {
    const read = (memento: vscode.Memento, scope: 'project' | 'user') =>
      Object.entries(memento.get<Record<string, AgentEntry>>(ENTRIES_KEY, {})).flatMap(([id, entry]) => {
        const target = targetById(id);
        return target && target.scope === scope ? [{ target, entry }] : [];
      });
    return [...read(this.workspaceState, 'project'), ...read(this.globalState, 'user')];
  }

  entryOf(target: AgentTarget): AgentEntry | undefined {
    return this.mementoOf(target).get<Record<string, AgentEntry>>(ENTRIES_KEY, {})[target.id];
  }

  /** Stores (or, with undefined, forgets) an entry; the gateway starts with the first and its sessions end with a change. */
  async setEntry(target: AgentTarget, entry: AgentEntry | undefined): Promise<void> {
    const memento = this.mementoOf(target);
    const all = { ...memento.get<Record<string, AgentEntry>>(ENTRIES_KEY, {}) };
    if (entry) all[target.id] = entry;
    else delete all[target.id];
    await memento.update(ENTRIES_KEY, all);
    await this.sharing.closeAgentSessions(target.id);
    if (this.entries().length) await this.start();
    this.changed.fire();
  }

  private mementoOf(target: AgentTarget): vscode.Memento {
    return target.scope === 'project' ? this.workspaceState : this.globalState;
  }

  /** The launcher's path (written once, here, for every entry). */
  launcher(): Promise<string> {
    return writeLauncher(homedir(), process.execPath, this.relayPath);
  }

  /** At activation: when an entry is connected, the launcher and this window's record are written (and the gateway started). */
  activate(): void {
    if (this.entries().length) void this.start().catch((e) => console.warn(`MCP Host: the agents' gateway did not start: ${String(e)}`));
  }

  private start(): Promise<void> {
    this.started ??= (async () => {
      await this.launcher();
      const address = await this.sharing.relayTarget();
      await writeGatewayRecord(homedir(), workspaceKey(), {
        version: 1,
        folders: (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath),
        address,
        token: this.token,
        pid: process.pid,
        written: Date.now(),
      });
    })();
    return this.started;
  }

  /** The agents' sessions open now. */
  sessions(): GateSession[] {
    return this.sharing.agentSessions();
  }

  private catalogFor(via: string): Catalog | undefined {
    const target = targetById(via);
    const entry = target && this.entryOf(target);
    if (!target || !entry) return undefined;
    const servers = entry.servers.flatMap((name) => {
      const handle = this.host.servers.find((s) => s.name === name && s.definition.enabled);
      return handle ? [{ name, forwarder: this.forwarderFor(handle) }] : [];
    });
    // Always <server>__<tool>: the names stay when the person gives the agent another server.
    return new (this.sharing.loaded().Catalog)(servers, true);
  }

  private forwarderFor(handle: ServerHandle): Forwarder {
    return this.sharing.forwarderOf(handle, this.forwarders, 'agent', {
      gateContext: (session) => ({ confirmTools: this.confirmsFor(session), firstUse: !this.allowed(session, handle.definition) }),
      onCall: (call) => this.calls.add(call),
      toldReadOnly: toldReadOnlyInMemory(),
      ask: (request, reasons, session) => this.ask(handle, request, reasons, session),
    });
  }

  /** Who the session's client is: the agent its `initialize` names, else the first agent of the entry it came through. */
  private agentOf(session: GateSession | undefined): { id: string; label: string } {
    return agentOfClient(session?.client?.name, session ? targetById(session.via) : undefined);
  }

  private confirmsFor(session: GateSession | undefined): boolean {
    const agents = vscode.workspace.getConfiguration(Settings.section).get<string[]>(Settings.agentsConfirmTools, []);
    return Array.isArray(agents) && agents.includes(this.agentOf(session).id);
  }

  private allowed(session: GateSession | undefined, def: ServerDefinition): boolean {
    return this.globalState.get<string[]>(ALLOWED_KEY, []).includes(`${this.agentOf(session).id}\u0000${serverIdentity(def)}`);
  }

  /** One question in the editor for every reason, naming the agent; "Allow" remembers that the agent may use the server. */
  private async ask(
    handle: ServerHandle,
    request: GateRequest,
    reasons: AskReason[],
    session: GateSession | undefined,
  ): Promise<AskAnswer> {
    const agent = this.agentOf(session);
    const answer = await this.host.ui.allowAgentRequest({
      agent: agent.label,
      server: handle.name,
      method: request.method,
      name: nameOf(request),
      arguments: request.method === 'tools/call' || request.method === 'prompts/get' ? request.arguments : undefined,
      reasons,
      roots: this.host.rootsOf(handle.definition).map((r) => r.uri),
    });
    if (answer === 'cancel') return 'refuse';
    if (reasons.some((r) => r.kind === 'firstUse'))
      await addToStoredList(this.globalState, ALLOWED_KEY, `${agent.id}\u0000${serverIdentity(handle.definition)}`);
    return 'once';
  }

  private recordCall(call: GatewayCall): void {
    const agent = this.agentOf(call.session).label;
    const client = call.session?.client;
    this.tools.recordGatewayCall(call, 'agent', {
      label: agent,
      ...(client && { client: `${client.name} ${client.version}` }),
      ...(call.session && { session: call.session.id }),
    });
    const how = call.refused ? `refused: ${call.refused}` : call.outcome.kind;
    this.host.trace.note(call.server, `⇠ by ${agent}: tools/call ${call.tool} → ${how}`);
    this.host.logs.channel(call.server).info(`[agent ${agent}] tools/call ${call.tool} → ${how}`);
  }

  dispose(): void {
    for (const d of this.disposables.splice(0)) d.dispose();
    if (this.started) void removeGatewayRecord(homedir(), workspaceKey(), this.token).catch(() => undefined);
  }
}

function loadAgents(): typeof AgentsModule {
  return require('./agents.js') as typeof AgentsModule;
}

/** What identifies this workspace for its record: its .code-workspace file, else its first folder. */
function workspaceKey(): string {
  return (vscode.workspace.workspaceFile ?? vscode.workspace.workspaceFolders?.[0]?.uri)?.toString() ?? 'no-folder';
}
