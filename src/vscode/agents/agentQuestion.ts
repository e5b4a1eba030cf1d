import * as vscode from 'vscode';
import { forDisplay, fromTemplate, type Redact } from '../../core';
import { describeChange } from '../../core/policy/pins';
import type { AgentQuestion } from '../common/answers';
import { askModal } from '../window/notifications';

/**
 * The default `HostUi.allowAgentRequest`: one modal naming the agent, the server and the request,
 * with every reason it is asked (its first use of the server, paths outside the roots or to files
 * that run later, a changed or flagged definition, the flow guard's untrusted content before a write,
 * MCP Host's own confirmation of the tool) and the arguments, the host's secrets redacted.
 */
export async function askAgentRequest(q: AgentQuestion, redact: Redact): Promise<'allow' | 'cancel'> {
  const allow = vscode.l10n.t('Allow');
  const agent = forDisplay(q.agent, redact);
  const server = forDisplay(q.server, redact);
  const onlyFirstUse = q.reasons.every((r) => r.kind === 'firstUse');
  const question = onlyFirstUse
    ? fromTemplate(vscode.l10n.t('Let {0} use the MCP server "{1}"?'), agent, server)
    : fromTemplate(vscode.l10n.t('{0} asks for {1} of the MCP server "{2}". Allow it?'), agent, forDisplay(q.name, redact), server);
  const parts: string[] = [];
  for (const reason of q.reasons) {
    switch (reason.kind) {
      case 'firstUse':
        parts.push(vscode.l10n.t('{0} has not used this server before. If you allow it, it is not asked again.', q.agent));
        break;
      case 'outsideRoots':
        parts.push(
          `${vscode.l10n.t('Outside the roots:')}\n${reason.findings.map((f) => `${f.pointer || 'URI'} = ${JSON.stringify(f.value)} (${f.resolved})`).join('\n')}\n${vscode.l10n.t('Roots:')}\n${q.roots.join('\n') || vscode.l10n.t('none')}`,
        );
        break;
      case 'definitionChanged':
        parts.push(vscode.l10n.t('It changed since you approved it: {0}.', describeChange(reason.changed)));
        break;
      case 'confirmTool':
        parts.push(vscode.l10n.t('MCP Host confirms the tool calls of this agent (setting mcpHost.agents.confirmTools).'));
        break;
      case 'protectedPaths':
        parts.push(
          `${vscode.l10n.t("Files that run later (git hooks or configuration, the editor's or an agent's settings, shell files):")}\n${reason.findings.map((f) => `${f.pointer || 'URI'} = ${JSON.stringify(f.value)} (${f.resolved})`).join('\n')}`,
        );
        break;
      case 'untrustedFlow': {
        // The flow guard (mcpHost.flowGuard.agents): what came before in this agent's session, and what the call would send.
        const t = reason.finding.taint;
        parts.push(
          vscode.l10n.t(
            'Untrusted content came before it in this session of {0}: the result of {1} at {2}: "{3}".',
            q.agent,
            `${t.server} › ${t.tool}`,
            new Date(t.at).toLocaleTimeString(),
            t.excerpt,
          ),
        );
        if (reason.finding.carries.length) parts.push(vscode.l10n.t('The call sends text read by {0}.', reason.finding.carries.join(', ')));
        parts.push(
          vscode.l10n.t('Text in a tool result can tell the model to send your data elsewhere. Run it only if you asked for this.'),
        );
        break;
      }
    }
  }
  if (!onlyFirstUse && q.arguments) parts.push(`${vscode.l10n.t('Arguments:')}\n${JSON.stringify(q.arguments, null, 2)}`);
  const pick = await askModal('warning', question, forDisplay(parts.join('\n\n'), redact, Number.POSITIVE_INFINITY), allow);
  return pick === allow ? 'allow' : 'cancel';
}
