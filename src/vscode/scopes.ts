import * as vscode from 'vscode';
import type { ServerOrigin } from '../core/servers/definition';

/** Where a server is defined, as the person reads it. A module of its own, so the lazy setup bundle takes it without the tree. */
export function scopeLabel(scope: ServerOrigin['scope']): string {
  const labels: Record<ServerOrigin['scope'], string> = {
    user: vscode.l10n.t('user settings'),
    workspace: vscode.l10n.t('workspace settings'),
    folder: vscode.l10n.t('folder settings'),
  };
  return labels[scope];
}
