import * as vscode from 'vscode';
import { inline, quoted, SAMPLING_HISTORY_MAX_REQUEST_BYTES, type CreateMessageParams, type SampledExchange } from '../../core';
import { describeFindings } from '../../core/scan/mask';
import type { MaskFinding } from '../../core/policy/types';
import type { OutputDocuments } from '../common/outputDocuments';
import { describeRequest } from './messages';
import { showDocument } from '../window/windowInputs';

/** One sampling exchange of the session, as the history shows it. */
export interface SamplingRecord extends SampledExchange {
  server: string;
  at: number;
  decision: 'allowed' | 'denied' | 'refused' | 'failed' | 'cancelled';
  model?: string;
  tokensIn?: number;
  tokensOut?: number;
  durationMs?: number;
  request: CreateMessageParams;
  /** The person edited the request in Review before it was sent. */
  reviewed?: boolean;
  /** The `includeContext` the server asked for, other than "none": answered as the spec allows, by adding no context. */
  ignoredIncludeContext?: string;
  response?: string;
  error?: string;
  /** What was masked in the request before anyone saw it (the history keeps the masked form). */
  masked?: MaskFinding[];
  /** Sampling was never offered to this server (mode deny): its request of this many bytes was refused unread. */
  notOffered?: { bytes: number };
}

/** Every exchange of the session as a Markdown document, newest first. */
export async function showHistory(history: readonly SamplingRecord[], docs: OutputDocuments): Promise<vscode.Uri> {
  const parts = [`# ${vscode.l10n.t('Sampling history')}`, history.length ? '' : `_${vscode.l10n.t('No sampling requests yet.')}_`];
  for (const r of history) {
    parts.push(
      `## ${new Date(r.at).toLocaleString()} — ${inline(r.server)}: ${decisionLabel(r.decision)}`,
      [
        r.notOffered
          ? `- ${vscode.l10n.t('refused: sampling is not offered to this server; its request ({0} bytes) was not read', r.notOffered.bytes)}`
          : '',
        r.masked?.length ? `- ${vscode.l10n.t('masked before anyone saw it: {0}', describeFindings(r.masked))}` : '',
        r.reviewed ? `- ${vscode.l10n.t('edited by the person in Review')}` : '',
        r.ignoredIncludeContext
          ? `- ${vscode.l10n.t('includeContext "{0}" was ignored: no context of this or other servers was added', inline(r.ignoredIncludeContext))}`
          : '',
        r.model ? `- ${vscode.l10n.t('model: {0}', inline(r.model))}` : '',
        r.tokensIn !== undefined ? `- ${vscode.l10n.t('tokens: {0} in, {1} out', r.tokensIn, r.tokensOut ?? 0)}` : '',
        r.durationMs !== undefined ? `- ${vscode.l10n.t('duration: {0} ms', r.durationMs)}` : '',
        r.error ? `- ${vscode.l10n.t('error: {0}', inline(r.error))}` : '',
        r.omittedRequestBytes !== undefined
          ? `- ${vscode.l10n.t('the request ({0} bytes) is not kept: the history keeps at most {1} bytes of one request', r.omittedRequestBytes, SAMPLING_HISTORY_MAX_REQUEST_BYTES)}`
          : '',
      ]
        .filter(Boolean)
        .join('\n'),
    );
    if (!r.notOffered) parts.push(quoted(describeRequest(r.server, r.request)));
    if (r.response !== undefined) parts.push(vscode.l10n.t('Response:'), quoted(r.response));
  }
  const uri = docs.put('sampling', 'sampling-history.md', parts.join('\n\n'));
  await showDocument(uri, { preview: false });
  return uri;
}

function decisionLabel(decision: SamplingRecord['decision']): string {
  const labels: Record<SamplingRecord['decision'], string> = {
    allowed: vscode.l10n.t('allowed'),
    denied: vscode.l10n.t('denied'),
    refused: vscode.l10n.t('refused'),
    failed: vscode.l10n.t('failed'),
    cancelled: vscode.l10n.t('cancelled'),
  };
  return labels[decision];
}
