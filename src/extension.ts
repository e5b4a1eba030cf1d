import * as vscode from 'vscode';
import { LATEST_PROTOCOL_VERSION } from './core/protocol/versions';

/** Wires the editor layer; the protocol core lives in ./core and knows nothing of VS Code. */
export function activate(context: vscode.ExtensionContext): void {
  const log = vscode.window.createOutputChannel('MCP Host', { log: true });
  context.subscriptions.push(log);
  log.info(`MCP Host activated (protocol ${LATEST_PROTOCOL_VERSION})`);
  context.subscriptions.push(vscode.commands.registerCommand('mcpHost.showLog', () => log.show()));
}

export function deactivate(): void {}
