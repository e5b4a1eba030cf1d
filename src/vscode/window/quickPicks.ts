import * as vscode from 'vscode';
import type { ShownText } from '../../core/render/shownText';

/**
 * The only calls of `vscode.window.showQuickPick` and `createQuickPick` (eslint.config.mjs forbids
 * them elsewhere). A row's label, description and detail, and the picker's title and placeholder,
 * are ShownText: a tool's name, a completion the server suggested or an enum value of its schema
 * reach a picker only through `forDisplay` (secrets redacted, controls visible, schemes broken).
 */
export type ShownPickItem = Omit<vscode.QuickPickItem, 'label' | 'description' | 'detail'> & {
  label: ShownText;
  description?: ShownText;
  detail?: ShownText;
};

export type ShownPickOptions = Omit<vscode.QuickPickOptions, 'title' | 'placeHolder' | 'canPickMany'> & {
  title?: ShownText;
  placeHolder?: ShownText;
};

export function pickOne<T extends ShownPickItem>(
  items: readonly T[] | Thenable<readonly T[]>,
  options: ShownPickOptions,
): Thenable<T | undefined> {
  return vscode.window.showQuickPick(items, options);
}

export function pickSome<T extends ShownPickItem>(items: readonly T[], options: ShownPickOptions): Thenable<T[] | undefined> {
  return vscode.window.showQuickPick(items, { ...options, canPickMany: true });
}

/** A quick pick whose items and texts are ShownText; the rest is VS Code's own. */
export type ShownQuickPick<T extends ShownPickItem> = Omit<vscode.QuickPick<T>, 'title' | 'placeholder'> & {
  title: ShownText | undefined;
  placeholder: ShownText | undefined;
};

export function createShownQuickPick<T extends ShownPickItem>(): ShownQuickPick<T> {
  return vscode.window.createQuickPick<T>() as ShownQuickPick<T>;
}
