import * as vscode from 'vscode';
import type { ElicitRequestParams, ElicitResult } from '../../core';
import { askArguments } from '../tools/askArguments';

/**
 * Answers `elicitation/create`. Form mode asks each requested field in turn (the server is always
 * named); URL mode opens the URL only after the person agrees. Decline and Cancel map to the
 * spec's actions.
 */
export async function elicit(server: string, params: ElicitRequestParams): Promise<ElicitResult> {
  if (params.mode === 'url') return elicitUrl(server, params);
  const respond = vscode.l10n.t('Respond');
  const decline = vscode.l10n.t('Decline');
  const fields = Object.keys(params.requestedSchema?.properties ?? {});
  const pick = await vscode.window.showInformationMessage(
    vscode.l10n.t('The MCP server "{0}" asks for information', server),
    { modal: true, detail: `${params.message}${fields.length ? `\n\n${vscode.l10n.t('Fields: {0}', fields.join(', '))}` : ''}` },
    respond,
    decline,
  );
  if (pick === decline) return { action: 'decline' };
  if (pick !== respond) return { action: 'cancel' };
  const content = await askArguments(vscode.l10n.t('"{0}" asks', server), params.requestedSchema);
  if (!content) return { action: 'cancel' };
  return { action: 'accept', content: content as ElicitResult['content'] };
}

async function elicitUrl(server: string, params: ElicitRequestParams): Promise<ElicitResult> {
  let url: URL;
  try {
    url = new URL(params.url ?? '');
  } catch {
    return { action: 'decline' };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return { action: 'decline' };
  const open = vscode.l10n.t('Open {0}', url.host);
  const decline = vscode.l10n.t('Decline');
  const pick = await vscode.window.showWarningMessage(
    vscode.l10n.t('The MCP server "{0}" wants you to open a page on {1}', server, url.host),
    { modal: true, detail: `${params.message}\n\n${url.toString()}` },
    open,
    decline,
  );
  if (pick === decline) return { action: 'decline' };
  if (pick !== open) return { action: 'cancel' };
  await vscode.env.openExternal(vscode.Uri.parse(url.toString()));
  return { action: 'accept' };
}
