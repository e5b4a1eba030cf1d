/**
 * The flow guard of VS Code's chat (../../core/scan/flowGuard.ts): one guard for every shared
 * server of this window, since a conversation spans servers. VS Code already confirmed the call
 * when it reaches the gateway, so the guard's "ask" is a question of its own: a modal naming the
 * untrusted result that came before (tool, time, an excerpt) and the private results the call
 * would send.
 */
import * as vscode from 'vscode';
import { FlowGuard, defaultFlowMode, type FlowMode } from '../../core/scan/flowGuard';
import type { FlowQuestion } from '../common/answers';
import type { ChatFlow } from '../../core/gateway/shared';
import { forDisplay, fromTemplate, joinShown, type Redact } from '../../core';
import { cachedSetting } from '../common/settingCache';
import { Settings } from '../common/ids';
import type { HostUi } from '../ui/hostUi';
import { askModal } from '../window/notifications';

const MODES: readonly FlowMode[] = ['ask', 'block', 'off'];

/** `mcpHost.flowGuard.chat` from user (or machine) settings only: a workspace cannot loosen it. */
const chatMode = cachedSetting(`${Settings.section}.flowGuard`, (): FlowMode => {
  const value = vscode.workspace.getConfiguration(Settings.section).inspect<{ chat?: unknown }>('flowGuard')?.globalValue?.chat;
  return MODES.find((m) => m === value) ?? defaultFlowMode('chat');
});

export function chatFlow(ui: HostUi): ChatFlow {
  return {
    guard: new FlowGuard(),
    mode: chatMode,
    ask: async (question) => (await ui.confirmFlow(question)) === 'run',
  };
}

/** The default `HostUi.confirmFlow`: one modal; Cancel (or closing it) refuses the call, and the chat's model is told why. */
export async function askFlowQuestion(q: FlowQuestion, redact: Redact): Promise<'run' | 'cancel'> {
  const run = vscode.l10n.t('Run It');
  const t = q.finding.taint;
  const detail = [
    fromTemplate(
      vscode.l10n.t('Untrusted content came before it in this conversation: the result of {0} at {1}: "{2}".'),
      forDisplay(`${t.server} › ${t.tool}`, redact),
      forDisplay(new Date(t.at).toLocaleTimeString(), redact),
      forDisplay(t.excerpt, redact, 300),
    ),
    q.finding.carries.length
      ? fromTemplate(vscode.l10n.t('The call sends text read by {0}.'), forDisplay(q.finding.carries.join(', '), redact))
      : undefined,
    fromTemplate(vscode.l10n.t('Arguments: {0}'), forDisplay(JSON.stringify(q.args, null, 2), redact, 2000)),
    fromTemplate(vscode.l10n.t('Text in a tool result can tell the model to send your data elsewhere. Run it only if you asked for this.')),
  ];
  const pick = await askModal(
    'warning',
    fromTemplate(
      vscode.l10n.t('The chat wants to run "{0}" of the MCP server "{1}" after reading untrusted content. Run it?'),
      forDisplay(q.tool, redact),
      forDisplay(q.server, redact),
    ),
    joinShown(detail, '\n'),
    run,
  );
  return pick === run ? 'run' : 'cancel';
}
