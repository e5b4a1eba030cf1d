import * as vscode from 'vscode';
import { fromTemplate, type ShownText } from '../../core/render/shownText';
import type { ServerHandle } from '../../core';
import { Views } from '../common/ids';

/**
 * The only writer of the status bar (eslint.config.mjs): what it shows is ShownText. A message for
 * a while, or until the returned disposable is disposed.
 */
export function showStatusMessage(message: ShownText, hideAfterMs?: number): vscode.Disposable {
  return hideAfterMs === undefined ? vscode.window.setStatusBarMessage(message) : vscode.window.setStatusBarMessage(message, hideAfterMs);
}

/**
 * What the status bar reads of the host (McpHost, which it does not import: the window's helpers sit below the host).
 */
interface ServerCounts {
  readonly servers: readonly ServerHandle[];
  readonly onDidChange: vscode.Event<void>;
}

/** "$(server) 2/3" with an error count; a click opens the Servers view. */
export function createStatusBar(host: ServerCounts): vscode.Disposable {
  const item = vscode.window.createStatusBarItem('mcpHost.status', vscode.StatusBarAlignment.Left, 50);
  item.name = 'MCP Host';
  item.command = `${Views.servers}.focus`;
  const update = () => {
    const all = host.servers;
    const running = all.filter((s) => s.state.kind === 'running').length;
    const errors = all.filter((s) => s.state.kind === 'error').length;
    // Numbers only; the tooltip is ours with numbers in it.
    item.text = `$(server-process) ${running}/${all.length}${errors ? ` $(error) ${errors}` : ''}`;
    const tooltip: ShownText = errors
      ? fromTemplate(vscode.l10n.t('MCP Host: {0} of {1} servers running, {2} in error'), running, all.length, errors)
      : fromTemplate(vscode.l10n.t('MCP Host: {0} of {1} servers running'), running, all.length);
    item.tooltip = tooltip;
    item.backgroundColor = errors ? new vscode.ThemeColor('statusBarItem.errorBackground') : undefined;
    if (all.length) item.show();
    else item.hide();
  };
  update();
  const sub = host.onDidChange(update);
  return vscode.Disposable.from(item, sub);
}
