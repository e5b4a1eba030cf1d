import * as vscode from 'vscode';
import type { ConsentAnswer } from './answers';
import type { HostUi } from './ui';
import { addToStoredList } from './storedList';
import { forDisplay, fromTemplate, launchHash, launchSummary, McpError, nothingToRedact, type LaunchSummary, type ServerDefinition } from '../core';
import { askModal, notify } from './notifications';

const STORE_KEY = 'mcpHost.allowedLaunches';
/** No person answers a modal this fast; it was dismissed without being shown. */
const MODAL_TOO_FAST_MS = 300;

/**
 * Workspace-defined servers run code from the repository a person opened (stdio) or receive
 * the person's secrets (HTTP headers), so the first start of each asks. The answer is keyed by
 * `launchHash` (command, args, env, envFile and cwd; or url and headers, as written);
 * "always" is kept per workspace.
 */
export class LaunchConsent {
  private readonly allowedThisSession = new Set<string>();

  constructor(
    private readonly workspaceState: vscode.Memento,
    private readonly isTrusted: () => boolean,
    private readonly ui: HostUi,
  ) {}

  needsConsent(def: ServerDefinition): boolean {
    return def.origin.scope !== 'user';
  }

  /** `def` as written in settings (so no secret shows), `cwd` where it will really run. */
  async check(def: ServerDefinition, cwd: string | undefined): Promise<void> {
    if (!this.needsConsent(def)) return;
    if (!this.isTrusted()) throw McpError.invalidRequest(vscode.l10n.t('{0}: workspace servers do not start in an untrusted workspace', def.name));
    const key = launchHash(def);
    const always = this.workspaceState.get<string[]>(STORE_KEY, []);
    if (always.includes(key) || this.allowedThisSession.has(key)) return;
    const answer = await this.ui.allowLaunch(launchSummary(def, cwd));
    if (answer === 'cancel') throw McpError.invalidRequest(vscode.l10n.t('{0}: starting was not allowed', def.name));
    this.allowedThisSession.add(key);
    if (answer === 'always') await addToStoredList(this.workspaceState, STORE_KEY, key);
  }
}

/** The modal's text: what runs or where requests go, and which entries carry which secrets. */
export function consentDetail(launch: LaunchSummary): string {
  const parts: string[] = [];
  if (launch.commandLine !== undefined) {
    parts.push(
      vscode.l10n.t(
        'This workspace\'s settings define the MCP server "{0}". Starting it runs:\n\n{1}\n\nin {2}.',
        launch.def.name,
        launch.commandLine,
        launch.cwd ?? vscode.l10n.t('the first workspace folder'),
      ),
    );
  } else {
    parts.push(vscode.l10n.t('This workspace\'s settings define the MCP server "{0}". Starting it sends requests to:\n\n{1}', launch.def.name, launch.url ?? ''));
  }
  const line = (e: LaunchSummary['entries'][number], sep: string) =>
    `${e.name}${sep}${e.shown}${e.sources.length ? `  (${vscode.l10n.t('secret from {0}', e.sources.join(', '))})` : e.secret ? `  (${vscode.l10n.t('secret, hidden')})` : ''}`;
  if (launch.entries.length) {
    const heading = launch.commandLine !== undefined ? vscode.l10n.t('Environment:') : vscode.l10n.t('Headers:');
    parts.push(`${heading}\n${launch.entries.map((e) => line(e, launch.commandLine !== undefined ? '=' : ': ')).join('\n')}`);
  }
  if (launch.envFile !== undefined) parts.push(vscode.l10n.t('Environment file: {0}', launch.envFile));
  parts.push(launch.commandLine !== undefined ? vscode.l10n.t('Only allow commands you trust.') : vscode.l10n.t('Only allow servers you trust with these values.'));
  return parts.join('\n\n');
}

/** The default `HostUi.allowLaunch`. */
export async function askWithModal(launch: LaunchSummary): Promise<ConsentAnswer> {
  const allow = vscode.l10n.t('Allow');
  const always = vscode.l10n.t('Always Allow in This Workspace');
  // Shown whole (what runs must be read in full); the values it shows are masked already.
  const detail = forDisplay(consentDetail(launch), nothingToRedact, Number.POSITIVE_INFINITY);
  const question = fromTemplate(vscode.l10n.t('Start the MCP server "{0}"?'), forDisplay(launch.def.name, nothingToRedact));
  const asked = Date.now();
  let pick = await askModal('warning', question, detail, allow, always);
  // A modal raised while the web workbench is still loading can come back dismissed at once,
  // before anyone saw it: ask again in a notification, which waits for the person.
  if (pick === undefined && Date.now() - asked < MODAL_TOO_FAST_MS) {
    pick = await notify('warning', forDisplay(`${question} ${detail.replace(/\n+/g, ' ')}`, nothingToRedact, Number.POSITIVE_INFINITY), allow, always);
  }
  return pick === allow ? 'allow' : pick === always ? 'always' : 'cancel';
}
