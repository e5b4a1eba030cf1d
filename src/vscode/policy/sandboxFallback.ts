import * as vscode from 'vscode';
import { forDisplay, fromTemplate, type Redact } from '../../core';
import type { HostUi } from '../ui/hostUi';
import { askModal } from '../window/notifications';

/** Where the answer is kept: per machine (the global state), never per workspace. */
const ANSWER_KEY = 'mcpHost.sandbox.unavailableAnswer';

/** The person's answer on a machine with no sandbox: start the servers only the default would sandbox unsandboxed, or not. */
export type NoSandboxAnswer = 'unsandboxed' | 'refuse';

/**
 * `mcpHost.sandbox.default` asks for a sandbox this machine does not have: the person is asked
 * once, with the reason and what to install, whether the servers only that default would sandbox
 * start unsandboxed. The answer is kept for the machine; a dismissed question counts as "no" until
 * the window reloads. Never asked for an entry that sets `"sandboxEnabled": true`: it does not start.
 */
export class SandboxFallback {
  private dismissed = false;
  private asking = false;

  constructor(
    private readonly globalState: vscode.Memento,
    private readonly ui: HostUi,
  ) {}

  /** Whether the person chose to start them unsandboxed. */
  get unsandboxed(): boolean {
    return this.globalState.get<NoSandboxAnswer>(ANSWER_KEY) === 'unsandboxed';
  }

  /** Asks, unless answered (or asked in this window already); true when the answer is to start them unsandboxed. */
  async ask(reason: string, servers: string[]): Promise<boolean> {
    if (this.asking || this.dismissed || this.globalState.get(ANSWER_KEY) !== undefined) return false;
    this.asking = true;
    try {
      const answer = await this.ui.startWithoutSandbox(reason, servers);
      if (answer === undefined) {
        this.dismissed = true;
        return false;
      }
      await this.globalState.update(ANSWER_KEY, answer);
      return answer === 'unsandboxed';
    } finally {
      this.asking = false;
    }
  }
}

/** The default `HostUi.startWithoutSandbox`: a modal with the reason. */
export async function askWithoutSandbox(reason: string, servers: string[], redact: Redact): Promise<NoSandboxAnswer | undefined> {
  const start = vscode.l10n.t('Start Unsandboxed');
  const refuse = vscode.l10n.t('Do Not Start Them');
  const pick = await askModal(
    'warning',
    fromTemplate(vscode.l10n.t('This machine has no sandbox for MCP servers.')),
    fromTemplate(
      vscode.l10n.t(
        'mcpHost.sandbox.default sandboxes {0}, but: {1}\n\nStart them unsandboxed, with all your rights, on this machine from now on? Otherwise they do not start until a sandbox is installed. Entries that set "sandboxEnabled": true never start unsandboxed.',
      ),
      forDisplay(servers.map((s) => `"${s}"`).join(', '), redact),
      forDisplay(reason, redact),
    ),
    start,
    refuse,
  );
  return pick === start ? 'unsandboxed' : pick === refuse ? 'refuse' : undefined;
}
