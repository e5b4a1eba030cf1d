import * as vscode from 'vscode';
import type { ShownText } from '../../core/render/shownText';
import { askModal, notify, type Severity } from '../window/notifications';
import { pickOne, pickSome, type ShownPickItem, type ShownPickOptions } from '../window/quickPicks';
import { askOpenLocation, askText } from '../window/windowInputs';

/** Names the question being asked, so a test can answer each step of a guided flow. */
export type SetupStep = 'kind' | 'target' | 'name' | 'scope' | 'source' | 'servers' | 'collision' | 'confirm' | 'agent' | 'connection';

/**
 * The questions Add Server and Import Servers ask. The default asks with VS Code's quick input;
 * it is `HostUi.setup` (`./hostUi.ts`), which tests in a real VS Code replace.
 */
export interface SetupUi {
  pick<T extends ShownPickItem>(step: SetupStep, items: readonly T[], options: ShownPickOptions): Promise<T | undefined>;
  pickMany<T extends ShownPickItem>(step: SetupStep, items: readonly T[], options: ShownPickOptions): Promise<T[] | undefined>;
  input(step: SetupStep, options: vscode.InputBoxOptions): Promise<string | undefined>;
  openJsonFile(): Promise<vscode.Uri | undefined>;
  notify(kind: Severity, message: ShownText, ...actions: string[]): Promise<string | undefined>;
  /** A modal question with one action besides Cancel; true when the person chose the action. */
  confirm(message: ShownText, detail: ShownText, action: string): Promise<boolean>;
}

export const windowUi: SetupUi = {
  pick: async (_step, items, options) => pickOne(items, { ignoreFocusOut: true, ...options }),
  pickMany: async (_step, items, options) => pickSome(items, { ignoreFocusOut: true, ...options }),
  input: async (_step, options) => askText({ ignoreFocusOut: true, ...options }),
  openJsonFile: async () =>
    (
      await askOpenLocation({
        canSelectMany: false,
        openLabel: vscode.l10n.t('Import'),
        filters: { [vscode.l10n.t('JSON files')]: ['json', 'jsonc'] },
        title: vscode.l10n.t('MCP Host: choose a file with "mcpServers" or "servers"'),
      })
    )?.[0],
  notify: async (kind, message, ...actions) => notify(kind, message, ...actions),
  confirm: async (message, detail, action) => (await askModal('warning', message, detail, action)) === action,
};
