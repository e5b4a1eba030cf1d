import * as os from 'node:os';
import * as vscode from 'vscode';
import {
  HttpTransport,
  McpError,
  resolveVariables,
  rootsFor,
  ServerHandle,
  ServerRegistry,
  StdioTransport,
  stdioParamsFor,
  DEFAULT_RESTART_POLICY,
  type AuthChallenge,
  type DefinitionDiagnostic,
  type HttpAuthProvider,
  type InputDefinition,
  type LaunchContext,
  type Root,
  type ServerDefinition,
  type Transport,
} from '../core';
import type * as OAuthModule from './auth/oauth';
import { LaunchConsent } from './consent';
import { elicit } from './elicitation/elicit';
import { SamplingService } from './sampling/samplingService';
import type { DocumentActions } from './documentActions';
import { ServerLogs, ProtocolTrace } from './logs';
import { folderFor, readConfiguredServers, restartPolicySettings, traceLevel } from './settings';
import { Settings } from './ids';

const SHUTDOWN_GRACE_MS = 1500;

/**
 * Owns the registry for the extension's lifetime: settings in, handles out, and the editor's
 * answers (roots, consent, secrets) to the core's questions.
 */
export class McpHost implements vscode.Disposable {
  readonly registry: ServerRegistry;
  readonly logs = new ServerLogs();
  readonly trace = new ProtocolTrace(traceLevel);
  readonly consent: LaunchConsent;
  readonly sampling: SamplingService;
  /** Entries that could not be used, shown in the tree and logged. */
  diagnostics: DefinitionDiagnostic[] = [];
  private readonly disposables: vscode.Disposable[] = [];
  private readonly changeEmitter = new vscode.EventEmitter<void>();
  /** Servers, their state or their lists changed. */
  readonly onDidChange = this.changeEmitter.event;
  private readonly resourceUpdatedEmitter = new vscode.EventEmitter<{ server: string; uri: string }>();
  /** `notifications/resources/updated` from any server. */
  readonly onResourceUpdated = this.resourceUpdatedEmitter.event;
  /** Values typed for `${input:…}`, kept out of every log line. */
  private readonly secretValues = new Set<string>();
  private reconciling: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly context: vscode.ExtensionContext,
    documentActions: DocumentActions,
  ) {
    this.consent = new LaunchConsent(context.workspaceState);
    this.consent.onWaitingChanged = () => this.changeEmitter.fire();
    this.sampling = new SamplingService(context.workspaceState, this.logs, documentActions);
    this.registry = new ServerRegistry(
      (def) => this.createHandle(def),
      (def) => def.enabled && def.autostart && this.isAllowedByTrust(def),
    );
    this.disposables.push(
      this.logs,
      this.trace,
      this.changeEmitter,
      this.resourceUpdatedEmitter,
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration(`${Settings.section}.${Settings.servers}`)) void this.reload();
      }),
      vscode.workspace.onDidChangeWorkspaceFolders(() => {
        void this.reload();
        void this.notifyRootsChanged();
      }),
      vscode.workspace.onDidGrantWorkspaceTrust(() => void this.reload()),
    );
    this.registry.onDidChange(() => this.changeEmitter.fire());
  }

  get servers(): ServerHandle[] {
    return this.registry.all;
  }

  /** Reads settings and reconciles; calls queue so two quick edits apply in order. */
  reload(): Promise<unknown> {
    this.reconciling = this.reconciling.then(async () => {
      const { definitions, diagnostics } = readConfiguredServers();
      const allowed = definitions.filter((d) => this.isAllowedByTrust(d));
      const blocked = definitions.filter((d) => !this.isAllowedByTrust(d));
      this.diagnostics = [
        ...diagnostics,
        ...blocked.map((d) => ({ name: d.name, origin: d.origin, message: vscode.l10n.t('not started: this workspace is not trusted') })),
      ];
      for (const d of this.diagnostics) this.logs.channel(d.name).warn(`settings: ${d.message}`);
      const result = await this.registry.reconcile(allowed);
      this.changeEmitter.fire();
      return result;
    });
    return this.reconciling;
  }

  /** The open folders as roots, plus nothing else; each server adds its own extras. */
  workspaceRoots(): Root[] {
    return (vscode.workspace.workspaceFolders ?? []).map((f) => ({ uri: f.uri.toString(), name: f.name }));
  }

  private async notifyRootsChanged(): Promise<void> {
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
    return def.origin.scope === 'user' || vscode.workspace.isTrusted;
  }

  private createHandle(def: ServerDefinition): ServerHandle {
    const launch: LaunchContext = {
      prepare: (d) => this.prepare(d),
      createTransport: (d) => this.createTransport(d),
      handlers: (d) => ({
        listRoots: () => rootsFor(d, this.workspaceRoots(), folderFor(d)?.uri.fsPath),
        elicit: (params) => elicit(d.name, params),
        createMessage: (params, signal) => this.sampling.handle(d, params, signal),
        elicitationModes: ['form', 'url'],
      }),
      clientInfo: { name: 'mcp-host', title: 'MCP Host', version: String(this.context.extension.packageJSON.version ?? '0.0.0') },
    };
    const { maxRestarts, windowMs } = restartPolicySettings();
    const handle = new ServerHandle(def, launch, { ...DEFAULT_RESTART_POLICY, maxRestarts, windowMs });
    handle.onLog((e) => this.logs.write(def.name, { ...e, message: this.redact(e.message) }));
    handle.onLogMessage((m) => this.logs.writeServerMessage(def.name, m));
    handle.onTrace((e) => this.trace.record(def.name, e));
    handle.onDidChangeState(() => this.changeEmitter.fire());
    handle.onDidChangeLists(() => this.changeEmitter.fire());
    handle.onResourceUpdated((uri) => this.resourceUpdatedEmitter.fire({ server: def.name, uri }));
    return handle;
  }

  private async prepare(def: ServerDefinition): Promise<ServerDefinition> {
    if (!this.isAllowedByTrust(def)) throw McpError.invalidRequest(vscode.l10n.t('{0}: workspace servers do not start in an untrusted workspace', def.name));
    const folder = folderFor(def);
    const resolved = await resolveVariables(def, {
      workspaceFolder: folder?.uri.fsPath,
      userHome: os.homedir(),
      env: process.env,
      input: (id) => this.askInput(id),
    });
    if (resolved.type === 'stdio') await this.consent.check(def, resolved.cwd ?? folder?.uri.fsPath);
    return resolved;
  }

  private async createTransport(def: ServerDefinition): Promise<Transport> {
    if (def.type === 'http') {
      return new HttpTransport({ url: def.url, headers: def.headers, authProvider: this.authFor(def.name) });
    }
    const params = await stdioParamsFor(def, folderFor(def)?.uri.fsPath);
    return new StdioTransport({ ...params, shutdownGraceMs: SHUTDOWN_GRACE_MS });
  }

  /** One OAuth provider per server: tokens in SecretStorage, sign-in in the browser. */
  private readonly auth = new Map<string, LazyOAuth>();
  authFor(server: string): LazyOAuth {
    let provider = this.auth.get(server);
    if (!provider) {
      provider = new LazyOAuth(() => loadOAuth().createOAuthProvider(server, this.context.secrets, (m) => this.logs.channel(server).info(`[auth] ${m}`)));
      this.auth.set(server, provider);
    }
    return provider;
  }

  /** Asks for an `${input:ID}` value as `mcpHost.inputs` describes it; replaceable so tests in a real VS Code can answer. */
  inputPrompt = (id: string, definition: InputDefinition | undefined): Promise<string | undefined> =>
    Promise.resolve(
      vscode.window.showInputBox({
        title: vscode.l10n.t('MCP Host: value for {0}', `\${input:${id}}`),
        prompt: definition?.description ? vscode.l10n.t('{0} (kept in the secret storage)', definition.description) : vscode.l10n.t('Stored in the editor’s secret storage'),
        value: definition?.default,
        password: definition?.password !== false,
        ignoreFocusOut: true,
      }),
    );

  /** `${input:ID}`: asked once, then kept in SecretStorage. */
  private async askInput(id: string): Promise<string> {
    const key = `mcpHost.input.${id}`;
    let value = await this.context.secrets.get(key);
    if (value === undefined) {
      const definitions = vscode.workspace.getConfiguration(Settings.section).get<Record<string, InputDefinition>>(Settings.inputs, {});
      value = await this.inputPrompt(id, definitions[id]);
      if (value === undefined) throw McpError.invalidRequest(vscode.l10n.t('no value given for {0}', `\${input:${id}}`));
      await this.context.secrets.store(key, value);
    }
    if (value.length >= 4) this.secretValues.add(value);
    return value;
  }

  private redact(text: string): string {
    let out = text;
    for (const secret of this.secretValues) out = out.split(secret).join('***');
    return out;
  }

  /** Stops every server (and its process tree) before the channels they log to go away. */
  async dispose(): Promise<void> {
    await this.registry.dispose();
    for (const d of this.disposables.splice(0)) d.dispose();
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
