/**
 * The flow guard of this window's gateway (../../core/scan/flowGuard.ts) for VS Code's chat and the
 * connected agents. The chat's conversations share one guard (a conversation spans servers); an
 * agent's connection keeps its own (../../core/gateway/forward.ts). VS Code already confirmed a chat
 * call when it reaches the gateway, so the chat's "ask" is a question of its own: a modal naming the
 * untrusted result that came before (tool, time, an excerpt) and the private results the call would
 * send. An agent's held call is asked in the agent's question (../agents/agentQuestion.ts), naming
 * the agent.
 */
import * as vscode from 'vscode';
import { FlowGuard, flowGuardSettingOf, type FlowGuardSetting } from '../../core/scan/flowGuard';
import type { FlowQuestion } from '../common/answers';
import type { GatewayFlow } from '../../core/gateway/shared';
import { forDisplay, fromTemplate, joinShown, type Redact } from '../../core';
import { cachedSetting } from '../common/settingCache';
import { lockedSetting } from '../common/organisation';
import { Settings } from '../common/ids';
import type { HostUi } from '../ui/hostUi';
import { askModal } from '../window/notifications';

const isSetting = (v: unknown): v is FlowGuardSetting => v !== undefined;

/**
 * `mcpHost.flowGuard` as the organisation locks it (`McpHostFlowGuard`: a member it leaves out is
 * the default, never the person's), else from user (or machine) settings only: a workspace cannot
 * loosen it. Dropped on any change of MCP Host's settings, when the managed file is read again too.
 */
const modes = cachedSetting(
  Settings.section,
  (): FlowGuardSetting => lockedSetting('mcpHost.flowGuard', isSetting, flowGuardSettingOf).value ?? flowGuardSettingOf({})!,
);

/** The chat's and the agents' flow guards: one guard for the chat's conversations, each mode read afresh. */
export function gatewayFlows(ui: HostUi): { chat: GatewayFlow; agents: GatewayFlow } {
  const guard = new FlowGuard();
  return {
    chat: { guard, mode: () => modes().chat, ask: async (question) => (await ui.confirmFlow(question)) === 'run' },
    // An agent's held call is one more reason of its question in the editor (the forwarder's `ask`).
    agents: { guard, mode: () => modes().agents },
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
