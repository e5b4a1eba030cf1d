import * as vscode from 'vscode';
import { fromTemplate, type ShownText } from '../../core/render/shownText';
import { Settings } from '../common/ids';
import type { SetupUi } from '../ui/setupUi';

type Servers = Record<string, unknown>;

/** Every server name in any settings scope, so a new one cannot shadow or be shadowed. */
export function configuredServers(): Servers {
  const top = vscode.workspace.getConfiguration(Settings.section).inspect<Servers>(Settings.servers);
  const all: Servers = { ...top?.globalValue, ...top?.workspaceValue };
  for (const folder of vscode.workspace.workspaceFolders ?? []) {
    Object.assign(
      all,
      vscode.workspace.getConfiguration(Settings.section, folder.uri).inspect<Servers>(Settings.servers)?.workspaceFolderValue,
    );
  }
  return all;
}

/** User or workspace settings; without an open folder there is only the user's. */
export async function askScope(ui: SetupUi, title: ShownText, preferWorkspace = false): Promise<vscode.ConfigurationTarget | undefined> {
  if (!vscode.workspace.workspaceFolders?.length) return vscode.ConfigurationTarget.Global;
  const user = {
    label: fromTemplate(vscode.l10n.t('User settings')),
    description: fromTemplate(vscode.l10n.t('every window; starts without asking')),
    target: vscode.ConfigurationTarget.Global,
  };
  const workspace = {
    label: fromTemplate(vscode.l10n.t('Workspace settings')),
    description: fromTemplate(vscode.l10n.t('this workspace only; asks before the first start, only in a trusted workspace')),
    target: vscode.ConfigurationTarget.Workspace,
  };
  const pick = await ui.pick('scope', preferWorkspace ? [workspace, user] : [user, workspace], {
    title,
    placeHolder: fromTemplate(vscode.l10n.t('Where should the server be saved?')),
  });
  return pick?.target;
}

/** Adds entries to one scope's object-valued setting (`mcpHost.servers` by default), keeping what is there. */
export async function addToSettings(
  entries: Servers,
  target: vscode.ConfigurationTarget,
  setting: string = Settings.servers,
): Promise<void> {
  const config = vscode.workspace.getConfiguration(Settings.section);
  const current = config.inspect<Servers>(setting);
  const scoped = (target === vscode.ConfigurationTarget.Global ? current?.globalValue : current?.workspaceValue) ?? {};
  await config.update(setting, { ...scoped, ...entries }, target);
}

export function scopeLabel(target: vscode.ConfigurationTarget): ShownText {
  return target === vscode.ConfigurationTarget.Global
    ? fromTemplate(vscode.l10n.t('user settings'))
    : fromTemplate(vscode.l10n.t('workspace settings'));
}
