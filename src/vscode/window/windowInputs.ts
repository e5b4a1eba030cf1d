import * as vscode from 'vscode';

/**
 * The only calls of VS Code's input boxes, file dialogs and `showTextDocument` (eslint.config.mjs
 * forbids them elsewhere), as notifications.ts is for messages and quickPicks.ts for pickers. The
 * questions among them are asked through `HostUi` (ui/hostUi.ts), whose window implementation calls these,
 * so a test in a real VS Code answers them by replacing one method of the UI.
 */
export function askText(options: vscode.InputBoxOptions, token?: vscode.CancellationToken): Thenable<string | undefined> {
  return vscode.window.showInputBox(options, token);
}

/** An input box the caller drives step by step (validation, buttons). */
export function createTextInput(): vscode.InputBox {
  return vscode.window.createInputBox();
}

export function askSaveLocation(options: vscode.SaveDialogOptions): Thenable<vscode.Uri | undefined> {
  return vscode.window.showSaveDialog(options);
}

export function askOpenLocation(options: vscode.OpenDialogOptions): Thenable<vscode.Uri[] | undefined> {
  return vscode.window.showOpenDialog(options);
}

/** Opens a document (ours: a result, a log, the settings) in an editor. */
export function showDocument(
  target: vscode.TextDocument | vscode.Uri,
  options?: vscode.TextDocumentShowOptions,
): Thenable<vscode.TextEditor> {
  return target instanceof vscode.Uri ? vscode.window.showTextDocument(target, options) : vscode.window.showTextDocument(target, options);
}
