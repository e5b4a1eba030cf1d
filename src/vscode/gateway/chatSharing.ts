/**
 * Sharing servers with VS Code's chat: the servers whose settings say `shareWithChat` are offered
 * to VS Code's own MCP client (`vscode.lm.registerMcpServerDefinitionProvider`, VS Code 1.101+,
 * detected at run time) as servers at MCP Host's gateway, so every call the chat's agent makes
 * meets the person's policy (../../core/gateway/). By default each is a stdio server VS Code
 * starts, MCP Host's relay (dist/relay.js), piped to the gateway's socket; `mcpHost.chat.connection`
 * `http` offers the gateway's HTTP route instead (VS Code's HTTP client is the slower of its two).
 * The gateway and the SDK load on the first share (dist/gateway.js). The token (and for the relay,
 * the gateway's address) is handed over only in `resolveMcpServerDefinition`: VS Code caches what
 * `provideMcpServerDefinitions` returns in the workspace's storage.
 */
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { definitionHash, fromTemplate, forDisplay, joinShown, nothingToRedact, type ServerDefinition, type ServerHandle } from '../../core';
import type { ChatGateway, GatewayOptions } from '../../core/gateway/sdkGateway';
import type { GateSession } from '../../core/policy/session';
import type { Forwarder } from '../../core/gateway/forward';
import type { GatewayCall, GatewayFlow, SharedServer, ToldReadOnly } from '../../core/gateway/shared';
import { gatewayFlows } from './chatFlow';
import { CHAT_POLICY_SETTINGS, chatWithheldBy, offeredToChat } from './chatPolicy';
import { sameNamedTools } from '../../core/gateway/sameNames';
import { thisMachine } from '../../core/policy/gate';
import { OffPath } from '../../core/policy/offPath';
import { fenceMode, serverIdentity } from '../policy/gate';
import { changeStoredList } from '../common/storedList';
import type * as GatewayModule from './lazy';
import { configuredMasker } from '../policy/audit';
import type { McpHost } from '../host/host';
import { Settings } from '../common/ids';
import { notify } from '../window/notifications';
import { updateServerEntry } from '../logs/logLevel';
import type { ToolCalls } from '../tools/callTool';

/** What an origin's forwarder has of its own (`ChatSharing.forwarderOf`): who is asked, what its client was told, more of the gate's context. */
export type ForwarderParts = Partial<Pick<SharedServer, 'ask' | 'onCall' | 'toldReadOnly'>> & {
  gateContext?: (session: GateSession | undefined) => Partial<ReturnType<SharedServer['gateContext']>>;
};

/** The id in package.json's `contributes.mcpServerDefinitionProviders`. */
export const PROVIDER_ID = 'mcpHost.sharedServers';
const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;
/** Where the tools VS Code was last told are read-only are kept, and how many at most (the oldest dropped). */
const TOLD_READ_ONLY_KEY = 'mcpHost.chatToldReadOnly';
const MAX_TOLD_READ_ONLY = 2000;
/** A Unix socket path longer than this does not fit in `sockaddr_un` on every platform: 127.0.0.1 then. */
const MAX_SOCKET_PATH = 100;

/** What VS Code 1.101+ offers; the installed @types/vscode predates it. */
interface McpHttpDefinitionLike {
  label: string;
  uri: vscode.Uri;
  headers: Record<string, string>;
  version?: string;
}
interface McpStdioDefinitionLike {
  label: string;
  command: string;
  args: string[];
  env: Record<string, string | number | null>;
  version?: string;
}
type McpDefinitionLike = McpHttpDefinitionLike | McpStdioDefinitionLike;
interface McpProvider {
  onDidChangeMcpServerDefinitions: vscode.Event<void>;
  provideMcpServerDefinitions(token: vscode.CancellationToken): Promise<McpDefinitionLike[]>;
  resolveMcpServerDefinition(def: McpDefinitionLike, token: vscode.CancellationToken): Promise<McpDefinitionLike | undefined>;
}
type McpApi = {
  lm: { registerMcpServerDefinitionProvider(id: string, provider: McpProvider): vscode.Disposable };
  McpHttpServerDefinition: new (
    label: string,
    uri: vscode.Uri,
    headers?: Record<string, string>,
    version?: string,
  ) => McpHttpDefinitionLike;
  McpStdioServerDefinition: new (
    label: string,
    command: string,
    args?: string[],
    env?: Record<string, string | number | null>,
    version?: string,
  ) => McpStdioDefinitionLike;
};

/** How VS Code's client reaches the gateway (`mcpHost.chat.connection`). */
type Connection = 'relay' | 'http';
const connection = (): Connection =>
  vscode.workspace.getConfiguration(Settings.section).get<string>(Settings.chatConnection) === 'http' ? 'http' : 'relay';

/** VS Code's MCP API, or undefined before 1.101. */
export function mcpApi(): McpApi | undefined {
  const api = vscode as unknown as Partial<McpApi> & { lm?: Partial<McpApi['lm']> };
  return typeof api.lm?.registerMcpServerDefinitionProvider === 'function' &&
    typeof api.McpHttpServerDefinition === 'function' &&
    typeof api.McpStdioServerDefinition === 'function'
    ? (api as McpApi)
    : undefined;
}

export class ChatSharing implements vscode.Disposable {
  private readonly token = randomBytes(32).toString('base64url');
  private readonly changed = new vscode.EventEmitter<void>();
  /** The chat's calls, for the history, the trace and the log, a short while after their answers. */
  private readonly chatCalls = new OffPath<GatewayCall>((calls) => {
    for (const call of calls) this.recordCall(call);
  });
  private readonly disposables: vscode.Disposable[] = [this.changed, this.chatCalls];
  private gatewayStart: Promise<ChatGateway> | undefined;
  private gatewayReady: ChatGateway | undefined;
  private readonly forwarders = new Map<ServerHandle, Forwarder>();
  /** The flow guard of each origin: the chat's one guard for every shared server (a conversation spans servers), the agents' mode. */
  readonly flows: { chat: GatewayFlow; agents: GatewayFlow };
  /** What each shared server was offered as (its definition and state), to tell VS Code only of real changes and end stale sessions. */
  private offered = new Map<string, string>();
  private module: typeof GatewayModule | undefined;
  /** Counts the changes of the settings the chat's sessions were opened under: part of each definition's version. */
  private policyEpoch = 0;
  /** The agents connected to this window (../agents/agents.ts), whose relays reach the same gateway. */
  private agents: GatewayOptions['agents'];

  constructor(
    private readonly host: McpHost,
    private readonly tools: ToolCalls,
    private readonly storage: vscode.Uri,
    private readonly memento: vscode.Memento,
    /** dist/relay.js, which VS Code starts for each shared server (../../core/gateway/relay.ts). */
    private readonly relayPath: string,
  ) {
    this.flows = gatewayFlows(host.ui);
    const api = mcpApi();
    if (!api) return;
    this.disposables.push(
      api.lm.registerMcpServerDefinitionProvider(PROVIDER_ID, {
        onDidChangeMcpServerDefinitions: this.changed.event,
        provideMcpServerDefinitions: () => this.provide(api),
        resolveMcpServerDefinition: (def) => this.resolve(def),
      }),
      host.onDidChange(() => this.reconcile()),
      // A pin taken, accepted or found changed: VS Code lists the shared tools and prompts again (list_changed).
      host.pins.onDidChange(() => {
        for (const forwarder of this.forwarders.values()) {
          forwarder.listChanged('tools');
          forwarder.listChanged('prompts');
        }
      }),
      vscode.workspace.onDidChangeConfiguration((e) => {
        // The policy the chat's sessions were opened under changed: they end, and VS Code (seeing new
        // versions) starts the servers anew and lists their tools again.
        if (
          e.affectsConfiguration(`${Settings.section}.${Settings.rootsFence}`) ||
          e.affectsConfiguration(`${Settings.section}.${Settings.rootsExtra}`) ||
          CHAT_POLICY_SETTINGS.some((key) => e.affectsConfiguration(key)) ||
          e.affectsConfiguration(`${Settings.section}.${Settings.chatConnection}`)
        ) {
          this.policyEpoch++;
          void this.closeAll();
          this.changed.fire();
        }
      }),
    );
  }

  /** Whether this VS Code can share at all (1.101+). */
  get available(): boolean {
    return mcpApi() !== undefined;
  }

  /** The shared servers VS Code is offered now: shared, enabled, and let through by VS Code's organisation policies. */
  sharedServers(): ServerHandle[] {
    return offeredToChat(this.host.servers);
  }

  private async provide(api: McpApi): Promise<McpDefinitionLike[]> {
    const shared = this.sharedServers();
    if (!shared.length) return [];
    const gateway = await this.gateway();
    const how = connection();
    // The version changes with the definition, the connection and the policy's settings: VS Code then starts the server anew.
    return shared.map((s) => {
      const version = `${definitionHash(s.definition)}:${how}:${this.policyEpoch}`;
      return how === 'http'
        ? new api.McpHttpServerDefinition(s.name, this.uriOf(gateway, s.name), {}, version)
        : // The extension host's own runtime runs the relay: Node here, Electron (as Node) in the desktop VS Code.
          new api.McpStdioServerDefinition(s.name, process.execPath, [this.relayPath, s.name], { ELECTRON_RUN_AS_NODE: '1' }, version);
    });
  }

  private async resolve(def: McpDefinitionLike): Promise<McpDefinitionLike | undefined> {
    if (!this.sharedServers().some((s) => s.name === def.label)) return undefined;
    const gateway = await this.gateway();
    if ('headers' in def) def.headers = { ...def.headers, Authorization: `Bearer ${this.token}` };
    else
      def.env = {
        ...def.env,
        MCP_HOST_GATEWAY: this.loaded().ChatGateway.relayTarget(gateway.relayAddress),
        MCP_HOST_GATEWAY_TOKEN: this.token,
      };
    return def;
  }

  private uriOf(gateway: ChatGateway, name: string): vscode.Uri {
    const route = this.loaded().ChatGateway.pathOf(name);
    const at = gateway.address;
    // VS Code's client sends `unix:`/`pipe:` URIs to the socket in the path, with the HTTP path in the fragment.
    if (at.kind === 'socket')
      return vscode.Uri.from({ scheme: process.platform === 'win32' ? 'pipe' : 'unix', path: at.path, fragment: route });
    return vscode.Uri.parse(`http://127.0.0.1:${at.port}${route}`);
  }

  /** The agents' side of the gateway (set before it starts). */
  useAgents(agents: NonNullable<GatewayOptions['agents']>): void {
    this.agents = agents;
  }

  /** Where relays reach the gateway (started now if it was not). */
  async relayTarget(): Promise<string> {
    return this.loaded().ChatGateway.relayTarget((await this.gateway()).relayAddress);
  }

  /** The agents' sessions open now. */
  agentSessions(): GateSession[] {
    return this.gatewayReady?.agentSessions() ?? [];
  }

  /** Ends an agent entry's sessions (it was disconnected or given other servers): its agent connects again under the new grant. */
  async closeAgentSessions(via: string): Promise<void> {
    if (this.gatewayStart) await (await this.gatewayStart).closeAgentSessions(via);
  }

  /** dist/gateway.js: the gateway, the forwarder and the catalog. */
  loaded(): typeof GatewayModule {
    return (this.module ??= require('./gateway.js') as typeof GatewayModule);
  }

  private gateway(): Promise<ChatGateway> {
    this.gatewayStart ??= (async () => {
      const name = `gw-${randomBytes(6).toString('hex')}`;
      await fs.mkdir(this.storage.fsPath, { recursive: true }).catch(() => undefined);
      // What a crashed window left in the shared storage folder goes before this window adds its own.
      await this.loaded().removeStaleSockets(this.storage.fsPath);
      const gateway = await this.loaded().ChatGateway.start({
        token: this.token,
        socketPath: this.socketPath(name),
        relaySocketPath: this.socketPath(`${name}-relay`),
        forwarderFor: (id) => this.forwarderFor(id),
        agents: this.agents,
      });
      this.gatewayReady = gateway;
      return gateway;
    })();
    return this.gatewayStart;
  }

  /** A named pipe on Windows; a socket in the extension's storage elsewhere, when its path fits (else 127.0.0.1). */
  private socketPath(name: string): string | undefined {
    if (process.platform === 'win32') return `\\\\.\\pipe\\mcp-host-${name}`;
    const candidate = path.join(this.storage.fsPath, `${name}.sock`);
    return candidate.length <= MAX_SOCKET_PATH ? candidate : undefined;
  }

  private forwarderFor(name: string): Forwarder | undefined {
    const handle = this.sharedServers().find((s) => s.name === name);
    return handle && this.forwarderOf(handle, this.forwarders, 'chat');
  }

  /**
   * The forwarder of one of the person's servers for an origin (the chat's, or the agents'), made
   * once per handle: the same gate, audit, masker and pins, the fence of `mcpHost.roots.fence` (else
   * the origin's default, block); what differs comes in `own` (who is asked, what the client was told).
   */
  forwarderOf(handle: ServerHandle, cache: Map<ServerHandle, Forwarder>, origin: 'chat' | 'agent', own: ForwarderParts = {}): Forwarder {
    let forwarder = cache.get(handle);
    if (!forwarder) {
      forwarder = new (this.loaded().Forwarder)(this.sharedServer(handle, origin, own), origin);
      cache.set(handle, forwarder);
    }
    return forwarder;
  }

  private sharedServer(handle: ServerHandle, origin: 'chat' | 'agent', own: ForwarderParts): SharedServer {
    const host = this.host;
    // The definition's hash is the same for every call until the handle adopts a new definition.
    let hashed: { def: ServerDefinition; hash: string } | undefined;
    const hashOf = (def: ServerDefinition): string =>
      hashed?.def === def ? hashed.hash : (hashed = { def, hash: definitionHash(def) }).hash;
    return {
      handle,
      gateContext: (session) => ({
        policy: handle.definition,
        alwaysAllowed: false,
        // The person's own setting (user or machine settings only, as for their calls), else the origin's default: block.
        fence: fenceMode(origin),
        roots: host.rootsOf(handle.definition),
        machine: thisMachine(),
        serverCwd: handle.workingFolder,
        serverEnv: handle.environment,
        ...own.gateContext?.(session),
      }),
      audited: () => ({ name: handle.name, scope: handle.definition.origin.scope, definition: hashOf(handle.definition) }),
      audit: host.audit,
      telemetry: host.telemetry.hook,
      // The masker of the settings at this moment (configuredMasker rebuilds it when the patterns change).
      masker: configuredMasker,
      requestTimeoutMs: handle.definition.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
      // Off the call's path, with the audit (../../core/policy/offPath.ts): the history, the trace and the log.
      onCall: own.onCall ?? ((call) => this.chatCalls.add(call)),
      toldReadOnly: own.toldReadOnly ?? this.toldReadOnly(handle),
      pinOf: (tool) => host.pins.status(handle, 'tools', tool),
      pinUsed: (tool) => void host.pins.pinFirstUse(handle.definition, 'tools', tool),
      promptPinOf: (prompt) => host.pins.status(handle, 'prompts', prompt),
      pinsReady: () => host.pins.ready(handle.definition),
      ask: own.ask,
      flow: origin === 'chat' ? this.flows.chat : this.flows.agents,
    };
  }

  /**
   * Which tools VS Code was last told are read-only, in the global state: VS Code keeps its list
   * across windows, so a policy changed while it was closed is still caught (../../core/policy/gate.ts).
   */
  private toldReadOnly(handle: ServerHandle): ToldReadOnly {
    // The identity hashes the launch: once per definition, not on every call the chat makes.
    let identity: { def: ServerDefinition; id: string } | undefined;
    const keyOf = (tool: string): string => {
      if (identity?.def !== handle.definition) identity = { def: handle.definition, id: serverIdentity(handle.definition) };
      return `${identity.id}\u0000${tool}`;
    };
    return {
      has: (tool) => this.memento.get<string[]>(TOLD_READ_ONLY_KEY, []).includes(keyOf(tool)),
      told: (tools) => {
        const add = tools.filter((t) => t.readOnly).map((t) => keyOf(t.name));
        const drop = new Set(tools.filter((t) => !t.readOnly).map((t) => keyOf(t.name)));
        const current = this.memento.get<string[]>(TOLD_READ_ONLY_KEY, []);
        if (add.every((k) => current.includes(k)) && !current.some((k) => drop.has(k))) return;
        void changeStoredList(this.memento, TOLD_READ_ONLY_KEY, (stored) =>
          [...stored.filter((k) => !drop.has(k) && !add.includes(k)), ...add].slice(-MAX_TOLD_READ_ONLY),
        );
      },
    };
  }

  private recordCall(call: GatewayCall): void {
    this.tools.recordGatewayCall(call, 'chat');
    const how = call.refused
      ? `refused: ${call.refused}`
      : `${call.outcome.kind}${call.held ? ` (run after the flow guard asked: ${call.held})` : ''}`;
    this.host.trace.note(call.server, `⇠ by the chat: tools/call ${call.tool} → ${how}`);
    this.host.logs.channel(call.server).info(`[chat] tools/call ${call.tool} → ${how}`);
  }

  /** Tells VS Code when a shared server appears, goes, restarts or changes; ends the sessions a change made stale. */
  private reconcile(): void {
    const now = new Map(this.sharedServers().map((s) => [s.name, `${definitionHash(s.definition)}:${s.state.kind}`]));
    let differs = now.size !== this.offered.size;
    for (const [name, key] of this.offered) {
      const next = now.get(name);
      if (next !== key) differs = true;
      // Gone, or its definition changed: the chat's session of it ends (a state change alone keeps it).
      if (next === undefined || next.split(':')[0] !== key.split(':')[0]) void this.closeSessions(name);
    }
    for (const handle of this.forwarders.keys())
      if (!this.host.servers.includes(handle) || !now.has(handle.name)) this.forwarders.delete(handle);
    this.offered = now;
    if (differs) this.changed.fire();
  }

  /** The chat's sessions of a shared server open now, by way in (tests look). */
  async sessionCount(name: string, via: 'relay' | 'http'): Promise<number> {
    return this.gatewayStart ? (await this.gatewayStart).sessionCount(name, via) : 0;
  }

  private async closeSessions(name: string): Promise<void> {
    if (this.gatewayStart) await (await this.gatewayStart).closeSessions(name);
  }

  private async closeAll(): Promise<void> {
    for (const name of this.offered.keys()) await this.closeSessions(name);
  }

  /** Share with VS Code Chat / Stop Sharing: writes `shareWithChat` where the server is defined. */
  async setShared(server: ServerHandle, share: boolean): Promise<void> {
    if (share && !this.available) {
      void notify('warning', fromTemplate(vscode.l10n.t('MCP Host: sharing a server with the chat needs VS Code 1.101 or newer.')));
      return;
    }
    // Shared all the same (the entry is the person's), but the chat is not offered it while one of VS Code's settings says no.
    const withheld = share ? chatWithheldBy(server) : undefined;
    if (withheld) {
      const name = forDisplay(server.name, nothingToRedact);
      void notify(
        'warning',
        withheld === 'chat.mcp.access'
          ? fromTemplate(vscode.l10n.t('MCP Host: VS Code\'s "chat.mcp.access" setting does not allow MCP servers in the chat.'))
          : withheld === 'chat.mcp.deniedServers'
            ? fromTemplate(
                vscode.l10n.t('MCP Host: "{0}" is denied by VS Code\'s "chat.mcp.deniedServers": the chat is not offered it.'),
                name,
              )
            : fromTemplate(
                vscode.l10n.t('MCP Host: "{0}" is not in VS Code\'s "chat.mcp.allowedServers": the chat is not offered it.'),
                name,
              ),
      );
    }
    await updateServerEntry(server.definition, ({ shareWithChat: _old, ...rest }) => (share ? { ...rest, shareWithChat: true } : rest));
    const sameNames = share ? this.sameNamesOnShare(server) : [];
    void this.host.ui.notify(
      sameNames.length ? 'warning' : 'info',
      share
        ? joinShown(
            [
              fromTemplate(
                vscode.l10n.t('MCP Host: "{0}" is shared with VS Code\'s chat, through your policy.'),
                forDisplay(server.name, nothingToRedact),
              ),
              sameNames.length
                ? fromTemplate(
                    vscode.l10n.t("Tools of the same name on other shared servers, which the chat's model may confuse: {0}."),
                    forDisplay(sameNames.join('; '), (text) => this.host.redact(text)),
                  )
                : undefined,
            ],
            ' ',
          )
        : fromTemplate(vscode.l10n.t('MCP Host: "{0}" is no longer shared with the chat.'), forDisplay(server.name, nothingToRedact)),
    );
  }

  /** The tools of a server just shared that another shared server also has: "search (also docs, web)". */
  private sameNamesOnShare(server: ServerHandle): string[] {
    // The settings write may not have reached the handle yet: the server counts as shared here.
    const others = offeredToChat(this.host.servers).filter((s) => s !== server);
    return [...sameNamedTools(server, [server, ...others])].sort().map(([tool, servers]) => `${tool} (${servers.join(', ')})`);
  }

  dispose(): void {
    for (const d of this.disposables.splice(0)) d.dispose();
    const started = this.gatewayStart;
    this.gatewayStart = undefined;
    void started?.then((g) => g.close()).catch(() => undefined);
  }
}
