import * as vscode from 'vscode';
import { describeBlock, messageBlocks, offeredTools, resultText, type CreateMessageParams, type SamplingMessage } from '../../core';
import { dataPart, hasDataParts, partsMessage, textPart, toolCallPart, toolResultPart } from './lmApi';

/**
 * The system prompt goes first as a user message: the LM API has no system role. Text stays a
 * string (all 1.90 takes); images and audio of user messages become data parts where this VS Code
 * has them and are described in text where it does not; tool use and results become tool call
 * and tool result parts (the caller has checked that this VS Code has them).
 */
export function toChatMessages(params: CreateMessageParams): vscode.LanguageModelChatMessage[] {
  const out: vscode.LanguageModelChatMessage[] = [];
  if (params.systemPrompt) out.push(vscode.LanguageModelChatMessage.User(`System instructions:\n${params.systemPrompt}`));
  const dataParts = hasDataParts();
  for (const m of params.messages) {
    const blocks = messageBlocks(m);
    const asParts = blocks.some(
      (b) =>
        b.type === 'tool_use' || b.type === 'tool_result' || (dataParts && m.role === 'user' && (b.type === 'image' || b.type === 'audio')),
    );
    if (!asParts) {
      const text = contentText(m);
      out.push(m.role === 'assistant' ? vscode.LanguageModelChatMessage.Assistant(text) : vscode.LanguageModelChatMessage.User(text));
      continue;
    }
    const parts = blocks.map((b) => {
      if (b.type === 'tool_use') return toolCallPart(b.id, b.name, b.input);
      if (b.type === 'tool_result') return toolResultPart(b.toolUseId, [textPart(b.isError ? `Error: ${resultText(b)}` : resultText(b))]);
      if ((b.type === 'image' || b.type === 'audio') && m.role === 'user' && dataParts)
        return dataPart(Buffer.from(b.data, 'base64'), b.mimeType);
      return textPart(blockText(b));
    });
    out.push(partsMessage(m.role === 'assistant' ? 'assistant' : 'user', parts));
  }
  return out;
}

function blockText(b: ReturnType<typeof messageBlocks>[number]): string {
  if (b.type === 'image' || b.type === 'audio')
    return `${describeBlock(b).slice(0, -1)}, not sent: this VS Code's language model API takes no ${b.type}]`;
  return describeBlock(b);
}

function contentText(m: SamplingMessage): string {
  return messageBlocks(m).map(blockText).join('\n');
}

/** The request as the person reads it in the consent modal and the history. */
export function describeRequest(server: string, params: CreateMessageParams): string {
  const lines = [vscode.l10n.t('Server: {0}', server), vscode.l10n.t('Max tokens: {0}', params.maxTokens)];
  if (params.modelPreferences) lines.push(vscode.l10n.t('Model preferences: {0}', JSON.stringify(params.modelPreferences)));
  if (params.systemPrompt) lines.push('', vscode.l10n.t('System prompt:'), params.systemPrompt);
  const tools = offeredTools(params);
  if (tools.length) {
    lines.push('', vscode.l10n.t('Tools offered to the model ({0}):', params.toolChoice?.mode ?? 'auto'));
    for (const t of tools) lines.push(`- ${t.name}${t.description ? `: ${t.description}` : ''}`);
  } else if (params.tools?.length) {
    lines.push('', vscode.l10n.t('Tools: {0} listed, none offered (toolChoice none)', params.tools.length));
  }
  lines.push('', vscode.l10n.t('Messages:'));
  for (const m of params.messages) lines.push(`[${m.role}] ${safeContentText(m)}`);
  return lines.join('\n');
}

function safeContentText(m: SamplingMessage): string {
  try {
    return contentText(m);
  } catch (e) {
    return `[${(e as Error).message}]`;
  }
}
