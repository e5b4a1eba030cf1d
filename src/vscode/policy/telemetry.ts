/**
 * The editor's telemetry: off until `mcpHost.telemetry.endpoint` is set (by the person in user
 * settings, or locked by the organisation); then every gated request of the window (the person's,
 * an MCP App's, the chat's) is a span and every audit record a log record, sent over OTLP/HTTP.
 * The collector's headers (a token) live in the secret storage, set with "Set Telemetry Headers".
 * A failed export is told once per streak; the calls and the local audit never wait for it.
 */
import * as vscode from 'vscode';
import { exportForEditor, OTLP_PROTOCOLS, parseKeyValues } from '../../core/telemetry/config';
import { cleanerOf } from '../../core/telemetry/exporter';
import { startExporter, TelemetrySwitch } from '../../core/telemetry/load';
import type { Masker } from '../../core/policy/types';
import { forDisplay, fromTemplate, nothingToRedact } from '../../core';
import { isBoolean, isString, lockedSetting, oneOf } from '../common/organisation';
import { notify } from '../window/notifications';
import { askText } from '../window/windowInputs';
import type { HostUi } from '../ui/hostUi';

/** The secret storage key of the headers, a JSON object of names and values. */
const HEADERS_KEY = 'mcpHost.telemetry.headers';

/** The question of "Set Telemetry Headers"; its answer is never shown (a password box). */
export function askHeadersWithInputBox(names: string[]): Promise<string | undefined> {
  return Promise.resolve(
    askText({
      title: vscode.l10n.t('MCP Host: Set Telemetry Headers'),
      prompt: names.length
        ? vscode.l10n.t(
            'Headers kept now: {0}. Enter them all again (Name=value, separated by commas), or leave empty to remove them.',
            names.join(', '),
          )
        : vscode.l10n.t(
            'Headers for the OTLP collector, as Name=value separated by commas (for example Authorization=Bearer%20TOKEN). They are kept in the secret storage.',
          ),
      password: true,
      ignoreFocusOut: true,
    }),
  );
}

export class EditorTelemetry implements vscode.Disposable {
  /** What the gate's run path and the audit log call: pointed at the exporter of the settings in force. */
  readonly hook = new TelemetrySwitch();
  private configuring: Promise<void> = Promise.resolve();
  private readonly listener: vscode.Disposable;

  constructor(
    private readonly storage: vscode.SecretStorage,
    private readonly redact: (text: string) => string,
    private readonly masker: () => Masker,
    private readonly version: string,
  ) {
    this.listener = vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('mcpHost.telemetry')) void this.configure();
    });
  }

  /** Reads the settings and the headers again and exports (or stops exporting) accordingly; calls apply in order. */
  configure(): Promise<void> {
    this.configuring = this.configuring.then(() => this.apply()).catch((e: unknown) => console.warn(`MCP Host: telemetry: ${String(e)}`));
    return this.configuring;
  }

  private async apply(): Promise<void> {
    const endpoint = lockedSetting('mcpHost.telemetry.endpoint', isString);
    // Settings win, the editor's own OTEL_* variables fill in (exportForEditor, docs/teams.md).
    const { config, problems } = exportForEditor(
      {
        endpoint: endpoint.value,
        locked: endpoint.lockedBy !== undefined,
        protocol: lockedSetting('mcpHost.telemetry.protocol', oneOf(OTLP_PROTOCOLS)).value,
        headers: await this.headers(),
        exportContent: lockedSetting('mcpHost.telemetry.exportContent', isBoolean).value,
        resource: { 'service.version': this.version, 'mcp_host.host': 'vscode', 'mcp_host.vscode.version': vscode.version },
      },
      process.env,
    );
    for (const problem of problems)
      void notify('warning', fromTemplate(vscode.l10n.t('MCP Host exports no telemetry: {0}'), forDisplay(problem, nothingToRedact)));
    if (!config) return this.hook.use(undefined);
    const masker = this.masker;
    const exporter = startExporter({
      config,
      clean: cleanerOf(this.redact, {
        maskText: (t) => masker().maskText(t),
        maskParts: (p) => masker().maskParts(p),
        maskValue: (v) => masker().maskValue(v),
      }),
      onError: (message) => void notify('warning', fromTemplate(vscode.l10n.t('MCP Host: {0}'), forDisplay(message, this.redact))),
      resource: config.resource,
    });
    await this.hook.use(exporter);
  }

  private async headers(): Promise<Record<string, string>> {
    const stored = await this.storage.get(HEADERS_KEY);
    if (!stored) return {};
    try {
      const parsed = JSON.parse(stored) as unknown;
      if (typeof parsed !== 'object' || parsed === null) return {};
      return Object.fromEntries(Object.entries(parsed).filter((e): e is [string, string] => typeof e[1] === 'string'));
    } catch {
      return {};
    }
  }

  /** "Set Telemetry Headers": asks for them (a password box), keeps them in the secret storage, exports with them from now on. */
  async setHeaders(ui: Pick<HostUi, 'askTelemetryHeaders'>): Promise<void> {
    const answer = await ui.askTelemetryHeaders(Object.keys(await this.headers()));
    if (answer === undefined) return;
    const problems: string[] = [];
    const headers = parseKeyValues(answer, vscode.l10n.t('the headers'), problems);
    if (problems.length) {
      void notify(
        'error',
        fromTemplate(vscode.l10n.t('MCP Host: the headers were not changed: {0}'), forDisplay(problems.join('; '), nothingToRedact)),
      );
      return;
    }
    if (Object.keys(headers).length) await this.storage.store(HEADERS_KEY, JSON.stringify(headers));
    else await this.storage.delete(HEADERS_KEY);
    await this.configure();
  }

  /** Sends what is queued and stops, within the bound. */
  async stop(): Promise<void> {
    this.listener.dispose();
    await this.configuring;
    await this.hook.use(undefined);
  }

  dispose(): void {
    void this.stop();
  }
}
