import * as vscode from 'vscode';
import type { SamplingDecision } from '../common/answers';
import { forDisplay, fromTemplate, nothingToRedact, type CreateMessageParams, type Redact, type ShownText } from '../../core';
import { askModal, notify } from '../window/notifications';
import { pickOne } from '../window/quickPicks';
import type { DocumentActions } from '../window/documentActions';
import { describeRequest } from './messages';
import { describeFindings } from '../../core/scan/mask';
import type { MaskFinding } from '../../core/policy/types';
import { showDocument } from '../window/windowInputs';

/** "Masked before sending: 1 × aws-access-key", or nothing when nothing was masked. */
function maskedNote(masked: readonly MaskFinding[]): string {
  return masked.length ? vscode.l10n.t('Masked before sending: {0}', describeFindings(masked)) : '';
}

/** The sampling consent as the modal shows it: what was masked, and the request with the host's secrets redacted. */
export function samplingConsentText(
  server: string,
  params: CreateMessageParams,
  masked: readonly MaskFinding[],
  redact: Redact,
): { question: ShownText; detail: ShownText } {
  const detail = [maskedNote(masked), describeRequest(server, params)].filter(Boolean).join('\n\n');
  return {
    question: fromTemplate(vscode.l10n.t('The MCP server "{0}" wants to use your language model'), forDisplay(server, redact)),
    detail: forDisplay(detail, redact, 3000),
  };
}

/** The person's answer to a sampling request; `review` opens it for editing first. */
export async function askConsent(
  server: string,
  params: CreateMessageParams,
  masked: MaskFinding[],
  redact: Redact,
): Promise<SamplingDecision> {
  const once = vscode.l10n.t('Allow Once');
  const always = vscode.l10n.t('Always Allow for This Server');
  const review = vscode.l10n.t('Review…');
  const deny = vscode.l10n.t('Deny');
  const { question, detail } = samplingConsentText(server, params, masked, redact);
  const pick = await askModal('warning', question, detail, once, always, review, deny);
  return pick === once ? 'once' : pick === always ? 'always' : pick === review ? 'review' : 'deny';
}

export async function pickModelWithQuickPick(models: vscode.LanguageModelChat[]): Promise<vscode.LanguageModelChat | undefined> {
  const pick = await pickOne(
    models.map((m) => ({
      label: forDisplay(m.name, nothingToRedact),
      description: forDisplay(`${m.vendor} · ${m.family} · ${m.id}`, nothingToRedact),
      model: m,
    })),
    { title: fromTemplate(vscode.l10n.t('MCP Host: which model should answer the sampling request?')) },
  );
  return pick?.model;
}

/** Opens the request as JSON; the person may edit the messages, then allow or deny. */
export async function reviewInEditor(
  actions: DocumentActions,
  server: string,
  params: CreateMessageParams,
  masked: MaskFinding[],
  redact: Redact,
): Promise<CreateMessageParams | undefined> {
  const doc = await vscode.workspace.openTextDocument({ language: 'json', content: `${JSON.stringify(params, null, 2)}\n` });
  await showDocument(doc, { preview: false });
  try {
    for (;;) {
      const allow = fromTemplate(vscode.l10n.t('Allow as Edited'));
      const pick = await actions.ask(
        doc,
        masked.length
          ? fromTemplate(
              vscode.l10n.t('Review the sampling request of "{0}" ({1}). Edit the messages if you like, then allow or deny.'),
              forDisplay(server, redact),
              forDisplay(maskedNote(masked), redact),
            )
          : fromTemplate(
              vscode.l10n.t('Review the sampling request of "{0}". Edit the messages if you like, then allow or deny.'),
              forDisplay(server, redact),
            ),
        [allow, fromTemplate(vscode.l10n.t('Deny'))],
      );
      if (pick !== allow) return undefined;
      try {
        const edited = JSON.parse(doc.getText()) as CreateMessageParams;
        if (!Array.isArray(edited.messages)) throw new Error(vscode.l10n.t('messages must be an array'));
        // Only the messages and system prompt are the person's to change; limits stay as the policy set them.
        return { ...params, messages: edited.messages, systemPrompt: edited.systemPrompt };
      } catch (e) {
        void notify('error', fromTemplate(vscode.l10n.t('The request is not valid JSON: {0}'), forDisplay((e as Error).message, redact)));
      }
    }
  } finally {
    await actions.discard(doc);
  }
}
