import * as vscode from 'vscode';
import { launchHash, McpError, type ServerDefinition } from '../core';

export type ConsentAnswer = 'allow' | 'always' | 'cancel';
export type ConsentPrompt = (def: ServerDefinition, commandLine: string, cwd: string | undefined) => Promise<ConsentAnswer>;

const STORE_KEY = 'mcpHost.allowedLaunches';
/** No person answers a modal this fast; it was dismissed without being shown. */
const MODAL_TOO_FAST_MS = 300;

/**
 * Workspace-defined commands run code from the repository a person opened, so the first start
 * of each (keyed by a hash of command, args, env and cwd) asks; "always" is kept per workspace.
 */
export class LaunchConsent {
  private readonly allowedThisSession = new Set<string>();
  /** Replaceable so tests in a real VS Code can answer the modal. */
  prompt: ConsentPrompt = askWithModal;
  /** Servers whose start waits for the person's answer right now (the tree says so). */
  readonly waiting = new Set<string>();
  /** Called when `waiting` changes. */
  onWaitingChanged: () => void = () => undefined;

  constructor(private readonly workspaceState: vscode.Memento) {}

  needsConsent(def: ServerDefinition): boolean {
    return def.origin.scope !== 'user' && def.type === 'stdio';
  }

  /** `def` as written in settings (so no secret shows), `cwd` where it will really run. */
  async check(def: ServerDefinition, cwd: string | undefined): Promise<void> {
    if (!this.needsConsent(def) || def.type !== 'stdio') return;
    if (!vscode.workspace.isTrusted) throw McpError.invalidRequest(vscode.l10n.t('{0}: workspace servers do not start in an untrusted workspace', def.name));
    const key = launchHash(def);
    const always = this.workspaceState.get<string[]>(STORE_KEY, []);
    if (always.includes(key) || this.allowedThisSession.has(key)) return;
    const commandLine = [def.command, ...def.args].map((w) => (/[\s"'$]/.test(w) ? JSON.stringify(w) : w)).join(' ');
    this.waiting.add(def.name);
    this.onWaitingChanged();
    let answer: ConsentAnswer;
    try {
      answer = await this.prompt(def, commandLine, cwd);
    } finally {
      this.waiting.delete(def.name);
      this.onWaitingChanged();
    }
    if (answer === 'cancel') throw McpError.invalidRequest(vscode.l10n.t('{0}: starting was not allowed', def.name));
    this.allowedThisSession.add(key);
    if (answer === 'always') await this.workspaceState.update(STORE_KEY, [...always, key]);
  }
}

async function askWithModal(def: ServerDefinition, commandLine: string, cwd: string | undefined): Promise<ConsentAnswer> {
  const allow = vscode.l10n.t('Allow');
  const always = vscode.l10n.t('Always Allow in This Workspace');
  const detail = vscode.l10n.t(
    'This workspace\'s settings define the MCP server "{0}". Starting it runs:\n\n{1}\n\nin {2}.\n\nOnly allow commands you trust.',
    def.name,
    commandLine,
    cwd ?? vscode.l10n.t('the first workspace folder'),
  );
  const question = vscode.l10n.t('Start the MCP server "{0}"?', def.name);
  const asked = Date.now();
  let pick = await vscode.window.showWarningMessage(question, { modal: true, detail }, allow, always);
  // A modal raised while the web workbench is still loading can come back dismissed at once,
  // before anyone saw it: ask again in a notification, which waits for the person.
  if (pick === undefined && Date.now() - asked < MODAL_TOO_FAST_MS) {
    pick = await vscode.window.showWarningMessage(`${question} ${detail.replace(/\n+/g, ' ')}`, allow, always);
  }
  return pick === allow ? 'allow' : pick === always ? 'always' : 'cancel';
}
