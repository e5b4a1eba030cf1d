import * as vscode from 'vscode';
import type { ServerOrigin } from '../../core/servers/definition';
import { fromTemplate, type ShownText } from '../../core/render/shownText';

/** Where a server is defined, as the person reads it. A module of its own, so the lazy setup bundle takes it without the tree. */
export function scopeLabel(scope: ServerOrigin['scope']): ShownText {
  const labels: Record<ServerOrigin['scope'], ShownText> = {
    user: fromTemplate(vscode.l10n.t('user settings')),
    workspace: fromTemplate(vscode.l10n.t('workspace settings')),
    folder: fromTemplate(vscode.l10n.t('folder settings')),
  };
  return labels[scope];
}
