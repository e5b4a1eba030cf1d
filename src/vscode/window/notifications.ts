import * as vscode from 'vscode';
import type { ShownText } from '../../core/render/shownText';

/**
 * The only calls of `vscode.window.show…Message` and of a notification's progress (eslint.config.mjs
 * forbids them elsewhere): each takes ShownText, so server text reaches a notification only
 * through `forDisplay` (links broken, secrets redacted). Action labels are ours.
 */
export type Severity = 'info' | 'warning' | 'error';

export function notify(severity: Severity, message: ShownText, ...actions: string[]): Thenable<string | undefined> {
  switch (severity) {
    case 'error':
      return vscode.window.showErrorMessage(message, ...actions);
    case 'warning':
      return vscode.window.showWarningMessage(message, ...actions);
    case 'info':
      return vscode.window.showInformationMessage(message, ...actions);
  }
}

/** A modal question; the action chosen, undefined when the person closes it. */
export function askModal(
  severity: 'info' | 'warning',
  message: ShownText,
  detail: ShownText | undefined,
  ...actions: string[]
): Thenable<string | undefined> {
  return severity === 'info'
    ? vscode.window.showInformationMessage(message, { modal: true, detail }, ...actions)
    : vscode.window.showWarningMessage(message, { modal: true, detail }, ...actions);
}

/** A progress notification whose title is `title`; its messages go through `report`, also ShownText. */
export function withProgressNotification<R>(
  title: ShownText,
  cancellable: boolean,
  task: (progress: vscode.Progress<{ message?: ShownText; increment?: number }>, token: vscode.CancellationToken) => Thenable<R>,
): Thenable<R> {
  return vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title, cancellable }, task);
}
