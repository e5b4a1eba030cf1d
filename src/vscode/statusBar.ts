import * as vscode from 'vscode';
import type { McpHost } from './host';
import { Views } from './ids';

/** "$(server) 2/3" with an error count; a click opens the Servers view. */
export function createStatusBar(host: McpHost): vscode.Disposable {
  const item = vscode.window.createStatusBarItem('mcpHost.status', vscode.StatusBarAlignment.Left, 50);
  item.name = 'MCP Host';
  item.command = `${Views.servers}.focus`;
  const update = () => {
    const all = host.servers;
    const running = all.filter((s) => s.state.kind === 'running').length;
    const errors = all.filter((s) => s.state.kind === 'error').length;
    item.text = `$(server-process) ${running}/${all.length}${errors ? ` $(error) ${errors}` : ''}`;
    item.tooltip = errors ? vscode.l10n.t('MCP Host: {0} of {1} servers running, {2} in error', running, all.length, errors) : vscode.l10n.t('MCP Host: {0} of {1} servers running', running, all.length);
    item.backgroundColor = errors ? new vscode.ThemeColor('statusBarItem.errorBackground') : undefined;
    if (all.length) item.show();
    else item.hide();
  };
  update();
  const sub = host.onDidChange(update);
  return vscode.Disposable.from(item, sub);
}
