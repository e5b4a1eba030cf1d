import * as vscode from 'vscode';
import type { ServerOrigin } from '../../core';
import { jsonc } from '../../core/jsonc';
import { forDisplay, fromTemplate, nothingToRedact } from '../../core/render/shownText';
import { notify } from '../window/notifications';
import { showStatusMessage } from '../window/statusBar';
import type { McpHost } from '../host/host';
import { Settings } from '../common/ids';
import { scopeLabel } from '../common/scopes';
import type { SetupUi } from '../ui/setupUi';
import { showDocument } from '../window/windowInputs';

/** A server as the settings know it: a running handle's definition, or an entry that could not be used. */
export interface ServerEntry {
  name: string;
  origin: ServerOrigin;
}

function targetOf(origin: ServerOrigin): {
  config: vscode.WorkspaceConfiguration;
  target: vscode.ConfigurationTarget;
  current: Record<string, unknown> | undefined;
} {
  const config = vscode.workspace.getConfiguration(Settings.section, origin.folderUri ? vscode.Uri.parse(origin.folderUri) : undefined);
  const inspected = config.inspect<Record<string, unknown>>(Settings.servers);
  switch (origin.scope) {
    case 'user':
      return { config, target: vscode.ConfigurationTarget.Global, current: inspected?.globalValue };
    case 'workspace':
      return { config, target: vscode.ConfigurationTarget.Workspace, current: inspected?.workspaceValue };
    case 'folder':
      return { config, target: vscode.ConfigurationTarget.WorkspaceFolder, current: inspected?.workspaceFolderValue };
  }
}

/** "Remove Server": deletes the entry from the settings scope that defines it, after asking. */
export async function removeServer(host: McpHost, ui: SetupUi, entry: ServerEntry): Promise<boolean> {
  const { config, target, current } = targetOf(entry.origin);
  const where = scopeLabel(entry.origin.scope);
  if (!current || !(entry.name in current)) {
    void ui.notify('warning', fromTemplate(vscode.l10n.t('MCP Host: "{0}" is no longer in the {1}.'), host.shown(entry.name), where));
    return false;
  }
  const remove = vscode.l10n.t('Remove');
  const ok = await ui.confirm(
    fromTemplate(vscode.l10n.t('Remove the MCP server "{0}" from the {1}?'), host.shown(entry.name), where),
    fromTemplate(
      vscode.l10n.t(
        'The entry is deleted from the settings and the server stops. Its log, consent and sign-in stay until the window closes.',
      ),
    ),
    remove,
  );
  if (!ok) return false;
  const rest = Object.fromEntries(Object.entries(current).filter(([name]) => name !== entry.name));
  await config.update(Settings.servers, Object.keys(rest).length ? rest : undefined, target);
  await host.reload();
  showStatusMessage(fromTemplate(vscode.l10n.t('MCP Host: removed "{0}" from the {1}'), host.shown(entry.name), where), 5000);
  return true;
}

/** "Edit Server Settings": opens the settings JSON that defines the server, with its entry selected. */
export async function editServerSettings(entry: ServerEntry): Promise<vscode.TextEditor | undefined> {
  const file = await settingsFile(entry.origin);
  let editor: vscode.TextEditor | undefined;
  if (file) editor = await showDocument(file, { preview: false });
  else {
    await vscode.commands.executeCommand(
      entry.origin.scope === 'user' ? 'workbench.action.openSettingsJson' : 'workbench.action.openWorkspaceSettingsFile',
    );
    editor = vscode.window.activeTextEditor;
  }
  if (!editor) return undefined;
  const range = entryRange(editor.document, entry.name);
  if (range) {
    editor.selection = new vscode.Selection(range.start, range.end);
    editor.revealRange(range, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
  } else {
    void notify(
      'info',
      fromTemplate(
        vscode.l10n.t('MCP Host: "{0}" is not written in this file as a key of "{1}"; it may come from a setting VS Code merged.'),
        forDisplay(entry.name, nothingToRedact),
        forDisplay(`${Settings.section}.${Settings.servers}`, nothingToRedact),
      ),
    );
  }
  return editor;
}

/** The file of a folder scope, or of the workspace of a single-folder window; undefined for user settings and .code-workspace files. */
async function settingsFile(origin: ServerOrigin): Promise<vscode.Uri | undefined> {
  if (origin.scope === 'user') return undefined;
  if (origin.scope === 'workspace' && vscode.workspace.workspaceFile)
    return vscode.workspace.workspaceFile.scheme === 'untitled' ? undefined : vscode.workspace.workspaceFile;
  const folder = origin.folderUri ? vscode.Uri.parse(origin.folderUri) : vscode.workspace.workspaceFolders?.[0]?.uri;
  return folder ? vscode.Uri.joinPath(folder, '.vscode', 'settings.json') : undefined;
}

/** The `"name": {…}` property inside `mcpHost.servers` (also inside a .code-workspace file's `settings`). */
function entryRange(doc: vscode.TextDocument, name: string): vscode.Range | undefined {
  const { findNodeAtLocation, parseTree } = jsonc();
  const root = parseTree(doc.getText());
  if (!root) return undefined;
  const key = `${Settings.section}.${Settings.servers}`;
  const value = findNodeAtLocation(root, [key, name]) ?? findNodeAtLocation(root, ['settings', key, name]);
  const property = value?.parent;
  if (!property) return undefined;
  return new vscode.Range(doc.positionAt(property.offset), doc.positionAt(property.offset + property.length));
}
