import { fileURLToPath } from 'node:url';
import * as vscode from 'vscode';
import type { AuditedServer, AuditSink } from '../../core/policy/types';
import type { AuditLog } from '../../core/policy/audit';
import { auditedRoots, auditedServerMethod, startServerRequest } from '../../core/policy/serverRequests';
import { auditFile, createAuditLog, configuredMasker } from '../policy/audit';
import { AuditTrust } from '../policy/auditTrust';
import { EditorGate } from '../policy/gate';
import { EditorTelemetry } from '../policy/telemetry';
import { startWithheldBy } from '../policy/vscodeMcpPolicy';
import { onDidChangeOrganisationPolicy } from '../common/organisation';
import { DefinitionPins } from '../policy/pins';
import { PinReview } from '../policy/pinReview';
import { extraRoots } from '../policy/roots';
import {
  httpTransport,
  McpError,
  rootsFor,
  ServerHandle,
  ServerRegistry,
  StdioTransport,
  stdioParamsFor,
  envFileDigest,
  uiExtensionCapability,
  DEFAULT_RESTART_POLICY,
  EraVerdicts,
  SerialQueue,
  forDisplay,
  type AuthChallenge,
  type ClientHandlers,
  type SandboxAvailability,
  type DefinitionDiagnostic,
  type HttpAuthProvider,
  type LaunchContext,
  type Root,
  type ServerDefinition,
  type ShownText,
  type Transport,
  type UnhandledRequest,
  editorServerEnvironment,
  sandboxedServer,
  sweepMountPoints,
  SandboxUnavailableError,
  type SandboxBlocked,
  type StdioServerParams,
} from '../../core';
import type * as OAuthModule from '../auth/oauth';
import { LaunchConsent } from '../policy/consent';
import { Elicitation } from '../elicitation/elicit';
import { SamplingService } from '../sampling/samplingService';
import { hasToolCalling } from '../sampling/lmApi';
import { ServerLogs, ProtocolTrace, type ServerLog } from '../logs/logs';
import { Secrets } from '../policy/secrets';
import type { HostUi } from '../ui/hostUi';
import {
  folderFor,
  machineSandbox,
  readConfiguredServers,
  restartPolicySettings,
  serverNamesInWorkspaceFiles,
  traceLevel,
  type BlockedServer,
} from '../common/settings';
import { Settings } from '../common/ids';
import { SandboxFallback } from '../policy/sandboxFallback';
import { Sandboxes } from './sandboxes';

const SHUTDOWN_GRACE_MS = 1500;

/** Where the era verdicts live in the global state (hashes of definitions, never their text). */
const ERA_VERDICTS_KEY = 'mcpHost.eraVerdicts';

/**
 * Owns the registry for the extension's lifetime: settings in, handles out, and the editor's
 * answers (roots, consent, secrets) to the core's questions.
 */
export class McpHost implements vscode.Disposable {
  readonly registry: ServerRegistry;
  readonly secrets: Secrets;
  readonly logs: ServerLogs;
  readonly trace: ProtocolTrace;
  readonly consent: LaunchConsent;
  readonly sampling: SamplingService;
  readonly elicitation: Elicitation;
  /** Entries that could not be used, shown in the tree and logged. */
  diagnostics: DefinitionDiagnostic[] = [];
  /** Workspace and folder servers that Workspace Trust keeps from starting, shown in the tree. */
  blocked: BlockedServer[] = [];
  /** Servers whose start waits for the person to answer a consent or secret prompt. */
  readonly waitingForPermission = new Set<string>();
  /** Whether the workspace is trusted; replaceable so tests can play Restricted Mode. */
  workspaceTrusted: () => boolean = () => vscode.workspace.isTrusted;
  /** The envFile contents (envFileDigest) the launch consent of each workspace server covered: the launch reads the same, or refuses. */
  private readonly consentedEnvFiles = new Map<string, string>();
  /** Whether this machine has a sandbox; replaceable so tests can play a machine without one. */
  sandboxMachine: () => SandboxAvailability = machineSandbox;
  /**
   * The protocol era each definition turned out to speak, shared by every server and kept across
   * sessions, so a legacy server is not asked `server/discover` on every start.
   */
  readonly eraVerdicts: EraVerdicts;
  /** Where every decided request and every request a server made of us is recorded (the gate appends to it). */
  readonly audit: AuditSink;
  private readonly auditLog: AuditLog;
  readonly auditFile: string;
  /** The audit file's key and the head this window wrote last. */
  readonly auditTrust: AuditTrust;
  /** The team's telemetry: a span per gated request, a log record per audit record, off until an endpoint is set (../policy/telemetry.ts). */
  readonly telemetry: EditorTelemetry;
  /** MCP Host as a client, in telemetry (`mcp_host.client.name`) for the person's and the apps' requests. */
  readonly clientInfo: { name: string; version: string };
  /** The one gate every tools/call, resources/read, prompts/get and resources/subscribe of the editor passes. */
  readonly gate: EditorGate;
  /** What the person approved of each server's tools and prompts, and the review of what changed since (../policy/pins.ts). */
  readonly pins: DefinitionPins;
  readonly pinReview: PinReview;
  /** What the person sees of each server's sandbox: its reach, what it hid, roots that changed under it (./sandboxes.ts). */
  readonly sandboxes: Sandboxes;
  /** The question asked once on a machine with no sandbox (../policy/sandboxFallback.ts). */
  private readonly sandboxFallback: SandboxFallback;
  private readonly disposables: vscode.Disposable[] = [];
  private readonly changeEmitter = new vscode.EventEmitter<void>();
  /** Servers, their state or their lists changed. */
  readonly onDidChange = this.changeEmitter.event;
  private readonly resourceUpdatedEmitter = new vscode.EventEmitter<{ server: string; uri: string }>();
  /** `notifications/resources/updated` from any server. */
  readonly onResourceUpdated = this.resourceUpdatedEmitter.event;
  private readonly elicitationCompleteEmitter = new vscode.EventEmitter<{ server: string; elicitationId: string }>();
  /** `notifications/elicitation/complete` from any server. */
  readonly onElicitationComplete = this.elicitationCompleteEmitter.event;
  private readonly sandboxBlockedEmitter = new vscode.EventEmitter<SandboxBlocked>();
  /** A connection a sandboxed server's proxy refused: the host, the port, and the sentence that says what allows it. */
  readonly onSandboxBlocked = this.sandboxBlockedEmitter.event;
  /** Reloads apply one at a time, in order; each fails on its own. */
  private readonly reloads = new SerialQueue();

  constructor(
    private readonly context: vscode.ExtensionContext,
    /** The questions and notifications of the host; commands notify through it too. */
    readonly ui: HostUi,
    /** The extension's own log, for what belongs to no one server. */
    private readonly log: ServerLog,
  ) {
    this.secrets = new Secrets(context.secrets, ui);
    this.eraVerdicts = EraVerdicts.fromStored(context.globalState.get(ERA_VERDICTS_KEY), {
      // Losing them costs a probe at the next start, nothing else: the extension host's log is enough.
      onDidChange: (stored) =>
        void context.globalState
          .update(ERA_VERDICTS_KEY, stored)
          .then(undefined, (e) => console.warn(`MCP Host: could not store the protocol eras: ${String(e)}`)),
    });
    this.logs = new ServerLogs(this.secrets);
    this.sandboxes = new Sandboxes(
      ui,
      this.logs,
      (text) => this.shown(text),
      (def) => this.rootPaths(def),
      (def) => (def.type === 'stdio' ? (def.cwd ?? folderFor(def)?.uri.fsPath) : undefined),
    );
    this.sandboxFallback = new SandboxFallback(context.globalState, ui);
    // Mount points a window closed before its sandboxed servers stopped left in the folders (protected.ts).
    void sweepMountPoints().catch((e: unknown) =>
      log.warn(`[sandbox] could not remove the mount points earlier launches left: ${String(e)}`),
    );
    this.auditFile = auditFile(context);
    this.auditTrust = new AuditTrust(this.auditFile, context.secrets, context.globalState);
    this.clientInfo = { name: 'MCP Host', version: String((context.extension.packageJSON as { version?: unknown }).version ?? '') };
    this.telemetry = new EditorTelemetry(context.secrets, (text) => this.secrets.redact(text), configuredMasker, this.clientInfo.version);
    this.auditLog = createAuditLog(
      this.auditFile,
      (text) => this.secrets.redact(text),
      this.auditTrust,
      (records) => this.telemetry.hook.auditRecords(records),
    );
    this.audit = this.auditLog;
    // The scan's shadowing detector reads the other running servers' tool names.
    this.pins = new DefinitionPins(
      context.globalStorageUri.fsPath,
      this.audit,
      (def) =>
        new Map(
          this.registry.all.filter((h) => h.name !== def.name).flatMap((h) => h.tools.map((t): [string, string] => [t.name, h.name])),
        ),
    );
    this.pinReview = new PinReview(this.pins, ui, (text) => this.secrets.redact(text));
    this.gate = new EditorGate(this, context.globalState);
    this.trace = new ProtocolTrace(traceLevel, this.secrets);
    this.consent = new LaunchConsent(context.workspaceState, () => this.workspaceTrusted(), ui);
    this.sampling = new SamplingService(context.workspaceState, this.logs, ui, this.audit, configuredMasker);
    this.elicitation = new Elicitation(this.elicitationCompleteEmitter.event, ui, this.audit);
    this.registry = new ServerRegistry(
      (def) => this.createHandle(def),
      (def) => def.enabled && def.autostart && this.isAllowedByTrust(def),
    );
    this.disposables.push(
      this.pins,
      this.pinReview,
      this.pins.onDidChange(() => this.changeEmitter.fire()),
      this.logs,
      this.trace,
      this.changeEmitter,
      this.resourceUpdatedEmitter,
      this.elicitationCompleteEmitter,
      this.sandboxBlockedEmitter,
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (
          e.affectsConfiguration(`${Settings.section}.${Settings.servers}`) ||
          e.affectsConfiguration(`${Settings.section}.${Settings.sandboxDefault}`)
        )
          void this.reload();
        if (e.affectsConfiguration(`${Settings.section}.roots.extra`)) void this.notifyRootsChanged();
      }),
      vscode.workspace.onDidChangeWorkspaceFolders(() => {
        void this.reload();
        void this.notifyRootsChanged();
      }),
      vscode.workspace.onDidGrantWorkspaceTrust(() => void this.reload()),
      onDidChangeOrganisationPolicy(() => void this.stopWithheld()),
    );
    this.registry.onDidChange(() => this.changeEmitter.fire());
  }

  get servers(): ServerHandle[] {
    return this.registry.all;
  }

  /**
   * Reads settings and reconciles; calls queue so two quick edits apply in order. Resolves once
   * the servers are what the settings say, without waiting for their starts (a start waits for
   * prompts and handshakes, and reports its own failure). A reload that fails is logged and
   * leaves the next one to run as usual.
   */
  reload(): Promise<void> {
    return this.reloads
      .run(() => this.applySettings())
      .catch((e: unknown) => this.log.error(`settings could not be applied: ${this.redact(McpError.from(e).message)}`));
  }

  private async applySettings(): Promise<void> {
    const { definitions, diagnostics, withoutSandbox } = readConfiguredServers(this.sandboxFallback.unsandboxed, this.sandboxMachine);
    // Asked in the background: meanwhile those servers do not start (their error says what to install); "start unsandboxed" reloads.
    if (withoutSandbox)
      void this.sandboxFallback
        .ask(withoutSandbox.reason, withoutSandbox.servers)
        .then((unsandboxed) => (unsandboxed ? this.reload() : undefined));
    const allowed = definitions.filter((d) => this.isAllowedByTrust(d));
    this.blocked = this.workspaceTrusted() ? [] : await this.blockedServers(definitions);
    // A blocked entry is blocked whatever else is wrong with it: its errors would only mislead.
    const blockedKey = new Set(this.blocked.map((b) => `${b.origin.scope}\u0000${b.name}`));
    this.diagnostics = diagnostics.filter((d) => d.origin.scope === 'user' || !blockedKey.has(`${d.origin.scope}\u0000${d.name}`));
    for (const d of this.diagnostics) this.logs.channel(d.name).warn(`settings: ${d.message}`);
    for (const b of this.blocked) this.logs.channel(b.name).warn('settings: blocked: this workspace is not trusted');
    await this.registry.reconcile(allowed);
    this.changeEmitter.fire();
  }

  /**
   * The organisation's policy changed (its managed file, or VS Code's MCP settings): each server
   * that runs, or is starting, and that the policy now keeps out is stopped, with the reason in its
   * state (the Servers view shows it), its log and a notification. A new start is refused in `prepare`.
   */
  private async stopWithheld(): Promise<void> {
    const stopping: Array<Promise<void>> = [];
    for (const handle of this.registry.all) {
      const { state } = handle;
      const live = state.kind === 'running' || state.kind === 'starting' || (state.kind === 'error' && state.restartAt !== undefined);
      const withheld = live && handle.wantsToRun ? startWithheldBy(handle.definition) : undefined;
      if (!withheld) continue;
      const message = vscode.l10n.t("{0} was stopped: your organisation's {1} no longer allows it", handle.name, withheld);
      this.logs.channel(handle.name).warn(message);
      stopping.push(handle.stop(message));
      void this.ui.notify('warning', this.shown(message));
    }
    await Promise.all(stopping);
  }

  /** The open folders as roots, plus the person's `mcpHost.roots.extra`; each server adds its own extras. */
  workspaceRoots(): Root[] {
    return [...(vscode.workspace.workspaceFolders ?? []).map((f) => ({ uri: f.uri.toString(), name: f.name })), ...extraRoots()];
  }

  /**
   * The roots `roots/list` answers for this server, and the same list the gate fences its
   * requests by. A workspace server's own `roots` are in it only because its launch consent
   * showed them (`policyGrant`): it does not start otherwise.
   */
  rootsOf(def: ServerDefinition): Root[] {
    return rootsFor(def, this.workspaceRoots(), folderFor(def)?.uri.fsPath);
  }

  /** The file paths of a server's roots: its sandbox's boundary. */
  private rootPaths(def: ServerDefinition): string[] {
    return this.rootsOf(def).flatMap((r) => (r.uri.startsWith('file:') ? [fileURLToPath(r.uri)] : []));
  }

  private async notifyRootsChanged(): Promise<void> {
    // A sandbox is made at launch: the new roots reach the server's process only after a restart, which the person is offered.
    void this.sandboxes.rootsChanged(this.servers.filter((s) => s.client));
    await Promise.all(
      this.servers.map(async (s) => {
        try {
          await s.client?.sendRootsListChanged();
        } catch (e) {
          this.logs.channel(s.name).warn(`could not send roots/list_changed: ${McpError.from(e).message}`);
        }
      }),
    );
  }

  private isAllowedByTrust(def: ServerDefinition): boolean {
    return def.origin.scope === 'user' || this.workspaceTrusted();
  }

  /**
   * The workspace's servers in Restricted Mode: those VS Code still shows us, and those its
   * settings files name (VS Code hides restricted settings from an untrusted workspace).
   */
  private async blockedServers(definitions: ServerDefinition[]): Promise<BlockedServer[]> {
    const all = [
      ...definitions.filter((d) => d.origin.scope !== 'user').map((d) => ({ name: d.name, origin: d.origin })),
      ...(await serverNamesInWorkspaceFiles()),
    ];
    const seen = new Set<string>();
    return all.filter((b) => {
      const key = `${b.origin.scope}\u0000${b.origin.folderUri ?? ''}\u0000${b.name}`;
      return !seen.has(key) && seen.add(key);
    });
  }

  private createHandle(def: ServerDefinition): ServerHandle {
    // A new definition has not run yet: no record names the sandbox of the one it replaces.
    this.sandboxes.started(def.name, undefined);
    const launch: LaunchContext = {
      prepare: (d, signal) => this.prepare(d, signal),
      createTransport: (d) => this.createTransport(d),
      handlers: (d) => this.handlers(d, def),
      clientInfo: { name: 'mcp-host', title: 'MCP Host', version: String(this.context.extension.packageJSON.version ?? '0.0.0') },
      eraVerdicts: this.eraVerdicts,
    };
    const { maxRestarts, windowMs } = restartPolicySettings();
    const handle = new ServerHandle(def, launch, { ...DEFAULT_RESTART_POLICY, maxRestarts, windowMs });
    handle.onLog((e) => {
      this.logs.write(def.name, e);
      if (e.source === 'stderr') this.sandboxes.stderrLine(def.name, e.message);
    });
    handle.onLogMessage((m) => this.logs.writeServerMessage(def.name, m));
    handle.onTrace((e) => this.trace.record(def.name, e));
    handle.onDidChangeState((state) => {
      // Its instructions are pinned on its first run and compared on every later one.
      if (state.kind === 'running') void this.pins.noticeStart(handle);
      // An exit or a failed start of a sandboxed server: the paths its error and stderr name that the sandbox hid.
      if (state.kind === 'error') void this.sandboxes.failed(def, state.message);
      this.changeEmitter.fire();
    });
    handle.onDidChangeLists((kind) => {
      // The first listing is the baseline; a definition that differs from its pin is audited once and marked in the tree.
      if (kind === 'tools' || kind === 'prompts') void this.pins.noticeList(handle, kind);
      this.changeEmitter.fire();
    });
    handle.onResourceUpdated((uri) => this.resourceUpdatedEmitter.fire({ server: def.name, uri }));
    handle.onElicitationComplete((elicitationId) => this.elicitationCompleteEmitter.fire({ server: def.name, elicitationId }));
    return handle;
  }

  /**
   * What the server may ask of us on one launch. The audit names the server as its settings define
   * it (`def`, before any secret is resolved into it), with the sandbox this launch runs in.
   */
  private handlers(d: ServerDefinition, def: ServerDefinition): ClientHandlers {
    const audited = this.sandboxes.audited(def);
    return {
      listRoots: () => auditedRoots(this.audit, audited, () => this.rootsOf(d)),
      elicit: (params, signal) => this.elicitation.handle(d.name, params, signal, audited),
      urlElicitationRequired: (pages, wait, request, signal) => this.elicitation.urlRequired(d.name, pages, wait, request, signal),
      // Sampling is declared only where it can be answered: a "deny" server would only ever be refused.
      // No language model yet still declares it; the refusal then says so.
      createMessage: d.sampling.mode === 'deny' ? undefined : (params, signal) => this.sampling.handle(d, params, signal, audited),
      // sampling.tools only where this VS Code's language model API can call tools.
      samplingTools: hasToolCalling(),
      elicitationModes: ['form', 'url'],
      // MCP Apps: a tool's ui:// interface opens in a sandboxed panel (../apps/).
      extensions: uiExtensionCapability(),
      unhandledRequest: (request) => this.refusedServerRequest(d, audited, request),
    };
  }

  /** A server asked what it was not offered (sampling of a `deny` server, say): refused by the connection, recorded here. */
  private refusedServerRequest(def: ServerDefinition, server: AuditedServer, request: UnhandledRequest): void {
    const method = auditedServerMethod(request.method);
    if (method === 'sampling/createMessage') return this.sampling.refusedUnoffered(def, server, request);
    if (!method) return;
    startServerRequest(this.audit, server, method, { paramsBytes: request.paramsBytes }).end({
      kind: 'error',
      code: request.refusal.code,
    });
  }

  /**
   * Trust first, then consent (shown as written in settings, so no secret shows), and only then
   * the secrets: a workspace server the person refuses never sees a secret prompt.
   */
  private async prepare(def: ServerDefinition, signal: AbortSignal): Promise<ServerDefinition> {
    if (!this.isAllowedByTrust(def))
      throw McpError.invalidRequest(vscode.l10n.t('{0}: workspace servers do not start in an untrusted workspace', def.name));
    // VS Code's MCP policies hold for every server MCP Host starts (docs/teams.md): MCP Host is not the way around them.
    const withheld = startWithheldBy(def);
    if (withheld)
      throw McpError.invalidRequest(vscode.l10n.t("{0} does not start: your organisation's {1} does not allow it", def.name, withheld));
    const folder = folderFor(def);
    this.consentedEnvFiles.delete(def.name);
    if (this.consent.needsConsent(def)) {
      // The limits computed for this machine, as the launch will compute them.
      const reach = this.sandboxes.reachOf(def, false);
      const sandbox = reach && this.sandboxes.describe(reach);
      const envFile = await envFileDigest(def, folder?.uri.fsPath);
      await this.waitingFor(def.name, () =>
        this.consent.check(
          def,
          def.type === 'stdio' ? (def.cwd ?? folder?.uri.fsPath) : undefined,
          sandbox,
          envFile,
          this.pins.knownFindings(def),
        ),
      );
      if (envFile !== undefined) this.consentedEnvFiles.set(def.name, envFile);
    }
    return this.secrets.resolve(def, folder?.uri.fsPath, (ask) => this.waitingFor(def.name, ask), signal);
  }

  /** Marks the server as waiting for the person while `ask` runs, for the tree to say so. */
  private async waitingFor<T>(server: string, ask: () => Promise<T>): Promise<T> {
    this.waitingForPermission.add(server);
    this.changeEmitter.fire();
    try {
      return await ask();
    } finally {
      this.waitingForPermission.delete(server);
      this.changeEmitter.fire();
    }
  }

  /** Text for the person's eyes (errors in notifications and the tree), without secrets. */
  redact(text: string): string {
    return this.secrets.redact(text);
  }

  /** Server text (or a name from the settings) as a notification, picker or tooltip may show it: redacted, links broken. */
  shown(text: string, max?: number): ShownText {
    return forDisplay(text, (t) => this.redact(t), max);
  }

  private async createTransport(def: ServerDefinition): Promise<Transport> {
    if (def.type === 'http') {
      return httpTransport({ url: def.url, headers: def.headers, authProvider: this.authFor(def.name) });
    }
    const params: StdioServerParams = {
      ...(await stdioParamsFor(def, folderFor(def)?.uri.fsPath, this.consentedEnvFiles.get(def.name))),
      // Only a small base of the extension host's environment and what the entry names: never VS Code's IPC hooks or tokens.
      baseEnv: editorServerEnvironment(process.env),
      shutdownGraceMs: SHUTDOWN_GRACE_MS,
    };
    this.sandboxes.started(def.name, undefined);
    if (!def.sandboxEnabled) return new StdioTransport(params);
    // The sandbox's boundary is the fence's list: the folders, mcpHost.roots.extra and the entry's own roots.
    const roots = this.rootPaths(def);
    try {
      const sandboxed = await sandboxedServer(params, roots, def.sandbox, {
        server: def.name,
        onBlocked: (blocked) => {
          this.logs.channel(def.name).warn(`[sandbox] ${blocked.message}`);
          this.sandboxBlockedEmitter.fire(blocked);
          void this.sandboxes.blocked(def, blocked);
        },
      });
      this.logs.channel(def.name).info(`[sandbox] ${sandboxed.description}`);
      this.sandboxes.started(def.name, { reach: sandboxed.reach, roots });
      return sandboxed.transport();
    } catch (e) {
      if (!(e instanceof SandboxUnavailableError)) throw e;
      // Never started unsandboxed without the person's choice: the entry's sandboxEnabled, or the default and the person's answer, say so.
      throw McpError.invalidRequest(vscode.l10n.t('{0} asks for a sandbox and does not start without one: {1}', def.name, e.message));
    }
  }

  /** One OAuth provider per server: tokens in SecretStorage, sign-in in the browser. */
  private readonly auth = new Map<string, LazyOAuth>();
  authFor(server: string): LazyOAuth {
    let provider = this.auth.get(server);
    if (!provider) {
      provider = new LazyOAuth(() =>
        loadOAuth().createOAuthProvider(
          server,
          this.secrets.storage,
          (m) => this.logs.channel(server).info(`[auth] ${m}`),
          (text) => this.redact(text),
        ),
      );
      this.auth.set(server, provider);
    }
    return provider;
  }

  /** Resolves when every audit record made so far is in the file (they are written a little after their calls): read it then. */
  auditWritten(): Promise<void> {
    return this.auditLog.flushed();
  }

  /** Stops every server (and its process tree) before the channels they log to go away. */
  async dispose(): Promise<void> {
    await this.registry.dispose();
    for (const d of this.disposables.splice(0)) d.dispose();
    // The servers' last records (their stops among them) are written, and the file is closed.
    await this.auditLog.close();
    // Then what is queued for the collector goes out, within its bound.
    await this.telemetry.stop();
  }
}

/** dist/auth.js, built from ./auth/oauth.ts beside dist/extension.js. */
function loadOAuth(): typeof OAuthModule {
  return require('./auth.js') as typeof OAuthModule;
}

/** The OAuth provider of one server, created (and its bundle loaded) on first use. */
type OAuthProvider = ReturnType<typeof OAuthModule.createOAuthProvider>;

class LazyOAuth implements HttpAuthProvider {
  private provider: OAuthProvider | undefined;

  constructor(private readonly create: () => OAuthProvider) {}

  private get(): OAuthProvider {
    return (this.provider ??= this.create());
  }

  authorizationHeader(serverUrl: URL): Promise<string | undefined> {
    return this.get().authorizationHeader(serverUrl);
  }

  onChallenge(challenge: AuthChallenge): Promise<boolean> {
    return this.get().onChallenge(challenge);
  }

  signOut(serverUrl: URL): Promise<void> {
    return this.get().signOut(serverUrl);
  }
}
