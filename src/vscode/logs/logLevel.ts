import * as vscode from 'vscode';
import {
  forDisplay,
  fromTemplate,
  LOGGING_LEVELS,
  nothingToRedact,
  type LoggingLevel,
  type ServerDefinition,
  type ServerHandle,
  type ShownText,
} from '../../core';
import { pickOne, type ShownPickItem } from '../window/quickPicks';
import { folderFor } from '../common/settings';
import { Settings } from '../common/ids';

/**
 * "Set Server Log Level...": writes the entry's `logLevel` where the entry is defined (user,
 * workspace or folder settings); the settings change tells the running server (logging/setLevel).
 */
export async function setServerLogLevel(
  server: ServerHandle,
  pick: (
    items: Array<ShownPickItem & { level: LoggingLevel }>,
    placeHolder: ShownText,
  ) => Promise<{ level: LoggingLevel } | undefined> = quickPick,
): Promise<LoggingLevel | undefined> {
  const current = server.logLevel;
  const declared = server.client?.serverCapabilities?.logging !== undefined;
  const items = LOGGING_LEVELS.map((level) => ({
    label: forDisplay(level, nothingToRedact),
    description: level === current ? fromTemplate(vscode.l10n.t('current')) : undefined,
    level,
  }));
  const name = forDisplay(server.name, nothingToRedact);
  const placeHolder =
    server.client && !declared
      ? fromTemplate(vscode.l10n.t('"{0}" does not declare logging: the level is kept for when it does'), name)
      : fromTemplate(vscode.l10n.t('The least severe messages "{0}" should send'), name);
  const chosen = await pick(items, placeHolder);
  if (!chosen || chosen.level === current) return chosen?.level;
  await writeLogLevel(server, chosen.level);
  return chosen.level;
}

async function writeLogLevel(server: ServerHandle, level: LoggingLevel): Promise<void> {
  // The default needs no line in settings.
  await updateServerEntry(server.definition, ({ logLevel: _old, ...rest }) => (level === 'info' ? rest : { ...rest, logLevel: level }));
}

/** Rewrites a server's entry where it is defined (user, workspace or folder settings). */
export async function updateServerEntry(
  def: ServerDefinition,
  change: (entry: Record<string, unknown>) => Record<string, unknown>,
): Promise<void> {
  const folder = def.origin.scope === 'folder' ? folderFor(def) : undefined;
  const config = vscode.workspace.getConfiguration(Settings.section, folder?.uri);
  const inspected = config.inspect<Record<string, Record<string, unknown>>>(Settings.servers);
  const [target, current] =
    def.origin.scope === 'user'
      ? [vscode.ConfigurationTarget.Global, inspected?.globalValue]
      : def.origin.scope === 'workspace'
        ? [vscode.ConfigurationTarget.Workspace, inspected?.workspaceValue]
        : [vscode.ConfigurationTarget.WorkspaceFolder, inspected?.workspaceFolderValue];
  const entry = current?.[def.name];
  if (!current || !entry) throw new Error(vscode.l10n.t('the definition of "{0}" was not found in its settings', def.name));
  await config.update(Settings.servers, { ...current, [def.name]: change(entry) }, target);
}

async function quickPick(
  items: Array<ShownPickItem & { level: LoggingLevel }>,
  placeHolder: ShownText,
): Promise<{ level: LoggingLevel } | undefined> {
  return pickOne(items, { title: fromTemplate(vscode.l10n.t('MCP Host: Set Server Log Level')), placeHolder });
}
