import * as vscode from 'vscode';
import {
  applyStopSequences,
  chooseModel,
  describeBlock,
  offeredTools,
  toolMessageProblem,
  usesTools,
  ErrorCode,
  inline,
  McpError,
  quoted,
  SamplingBudget,
  type CreateMessageParams,
  type CreateMessageResult,
  type SamplingContent,
  type ServerDefinition,
  type ToolUseContent,
} from '../../core';
import { hasToolCalling, isTextPart, isToolCall, responseParts, toolMode, type ToolCallPart, type ToolRequestOptions } from './lmApi';
import type { HostUi } from '../ui';
import { describeRequest, toChatMessages } from './messages';
import type { ServerLogs } from '../logs';
import type { OutputDocuments } from '../outputDocuments';

export interface SamplingRecord {
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
}

const ALWAYS_KEY = 'mcpHost.samplingAlwaysAllowed';
/** The spec's example code for a person's refusal. */
const USER_REJECTED = -1;

/**
 * Answers `sampling/createMessage` with the editor's language model: policy, consent, model
 * choice within the allowlist, budget, mapping, stop sequences, and a history for the session.
 */
export class SamplingService {
  readonly history: SamplingRecord[] = [];
  private readonly budgets = new Map<string, SamplingBudget>();

  constructor(
    private readonly memento: vscode.Memento,
    private readonly logs: ServerLogs,
    private readonly ui: HostUi,
  ) {}

  /** Every exchange of the session as a Markdown document. */
  async showHistory(docs: OutputDocuments): Promise<vscode.Uri> {
    const parts = [`# ${vscode.l10n.t('Sampling history')}`, this.history.length ? '' : `_${vscode.l10n.t('No sampling requests yet.')}_`];
    for (const r of this.history) {
      parts.push(
        `## ${new Date(r.at).toLocaleString()} — ${inline(r.server)}: ${decisionLabel(r.decision)}`,
        [
          r.reviewed ? `- ${vscode.l10n.t('edited by the person in Review')}` : '',
          r.ignoredIncludeContext ? `- ${vscode.l10n.t('includeContext "{0}" was ignored: no context of this or other servers was added', inline(r.ignoredIncludeContext))}` : '',
          r.model ? `- ${vscode.l10n.t('model: {0}', inline(r.model))}` : '',
          r.tokensIn !== undefined ? `- ${vscode.l10n.t('tokens: {0} in, {1} out', r.tokensIn, r.tokensOut ?? 0)}` : '',
          r.durationMs !== undefined ? `- ${vscode.l10n.t('duration: {0} ms', r.durationMs)}` : '',
          r.error ? `- ${vscode.l10n.t('error: {0}', inline(r.error))}` : '',
        ]
          .filter(Boolean)
          .join('\n'),
        quoted(describeRequest(r.server, r.request)),
      );
      if (r.response !== undefined) parts.push(vscode.l10n.t('Response:'), quoted(r.response));
    }
    const uri = docs.put('sampling', 'sampling-history.md', parts.join('\n\n'));
    await vscode.window.showTextDocument(uri, { preview: false });
    return uri;
  }

  async resetAlways(): Promise<void> {
    await this.memento.update(ALWAYS_KEY, []);
  }

  async handle(def: ServerDefinition, params: CreateMessageParams, signal: AbortSignal): Promise<CreateMessageResult> {
    const server = def.name;
    const log = this.logs.channel(server);
    const policy = def.sampling;
    const record: SamplingRecord = { server, at: Date.now(), decision: 'refused', request: params };
    this.history.unshift(record);
    const refuse = (code: number, message: string): never => {
      record.error = message;
      log.warn(`sampling: ${message}`);
      throw new McpError(code, message);
    };
    if (policy.mode === 'deny') {
      record.decision = 'denied';
      refuse(USER_REJECTED, 'User rejected sampling request: sampling is denied for this server by mcpHost.servers sampling.mode');
    }
    const problem = toolMessageProblem(params) ?? toolsProblem(params);
    if (problem) refuse(ErrorCode.InvalidParams, `Invalid sampling request: ${problem}`);
    if (usesTools(params) && !hasToolCalling()) {
      refuse(
        ErrorCode.InvalidParams,
        `Sampling with tools is not supported: the language model API of this VS Code (${vscode.version}) cannot call tools (1.95 or later can), so MCP Host did not declare sampling.tools`,
      );
    }
    const budget = this.budget(server);
    const over = budget.refusal(policy);
    if (over) refuse(-32603, `Sampling refused: ${over}`);
    if (params.includeContext && params.includeContext !== 'none') {
      // 2025-11-25 client/sampling: the client may ignore includeContext (and it is soft-deprecated).
      record.ignoredIncludeContext = String(params.includeContext);
      log.info(`sampling: includeContext "${params.includeContext}" treated as "none": other servers' context is not shared`);
    }
    let request: CreateMessageParams = { ...params };
    if (policy.maxTokensPerRequest !== undefined && request.maxTokens > policy.maxTokensPerRequest) {
      log.info(`sampling: maxTokens ${request.maxTokens} capped to ${policy.maxTokensPerRequest}`);
      request.maxTokens = policy.maxTokensPerRequest;
    }

    if (policy.mode === 'ask' && !this.memento.get<string[]>(ALWAYS_KEY, []).includes(server)) {
      let decision = await this.ui.allowSampling(server, request);
      if (decision === 'review') {
        const edited = await this.ui.reviewSampling(server, request);
        decision = edited ? 'once' : 'deny';
        if (edited) {
          request = edited;
          // The history shows what the model was really sent.
          record.request = edited;
          record.reviewed = true;
        }
      }
      if (decision === 'deny') {
        record.decision = 'denied';
        refuse(USER_REJECTED, 'User rejected sampling request');
      }
      if (decision === 'always') await this.memento.update(ALWAYS_KEY, [...this.memento.get<string[]>(ALWAYS_KEY, []), server]);
    }

    const all = await vscode.lm.selectChatModels();
    const choice = chooseModel(all, policy, request.modelPreferences);
    let model: vscode.LanguageModelChat | undefined;
    if (choice.kind === 'none') {
      void vscode.window.showErrorMessage(
        vscode.l10n.t(
          'MCP Host: "{0}" asked for a language model, but {1}. Install and sign in to a language model provider (for example GitHub Copilot), or adjust {2}.',
          server,
          choice.reason,
          `mcpHost.servers › ${server} › sampling.models`,
        ),
      );
      refuse(-32603, `No language model available: ${choice.reason}`);
    } else if (choice.kind === 'ambiguous') {
      model = policy.mode === 'ask' ? await this.ui.pickSamplingModel(choice.models) : choice.models[0];
      if (!model) {
        record.decision = 'denied';
        refuse(USER_REJECTED, 'User rejected sampling request: no model was chosen');
      }
    } else {
      model = choice.model;
    }
    const chosen = model!;
    record.model = chosen.id;
    budget.recordRequest();

    const messages = toChatMessages(request);
    const source = new vscode.CancellationTokenSource();
    const onAbort = () => source.cancel();
    signal.addEventListener('abort', onAbort, { once: true });
    const started = Date.now();
    try {
      // The server may cancel while the person is still deciding; an aborted signal never fires again.
      if (signal.aborted) throw new McpError(-32800, 'Sampling cancelled by the server');
      const tools = offeredTools(request);
      const options: ToolRequestOptions = {
        justification: vscode.l10n.t('The MCP server "{0}" asks for a completion (sampling).', server),
        modelOptions: {
          ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
          ...(request.stopSequences?.length ? { stop: request.stopSequences } : {}),
          max_tokens: request.maxTokens,
        },
        ...(tools.length
          ? {
              tools: tools.map((t) => ({ name: t.name, description: t.description ?? t.title ?? t.name, inputSchema: t.inputSchema })),
              toolMode: toolMode(request.toolChoice?.mode === 'required' ? 'required' : 'auto'),
            }
          : {}),
      };
      const response = await chosen.sendRequest(messages, options, source.token);
      let text = '';
      const calls: ToolCallPart[] = [];
      let stopReason: CreateMessageResult['stopReason'] = 'endTurn';
      // With tools offered the parts are read (text and tool calls); otherwise the text, as 1.90 has it.
      for await (const part of tools.length ? responseParts(response) : response.text) {
        if (isToolCall(part)) {
          calls.push(part);
          continue;
        }
        const chunk = typeof part === 'string' ? part : isTextPart(part) ? part.value : '';
        text += chunk;
        const cut = applyStopSequences(text, request.stopSequences);
        if (cut.stopped) {
          text = cut.text;
          stopReason = 'stopSequence';
          source.cancel();
          break;
        }
      }
      if (signal.aborted) throw new McpError(-32800, 'Sampling cancelled by the server');
      let tokensOut = await chosen.countTokens(text);
      for (const c of calls) tokensOut += await chosen.countTokens(`${c.name} ${JSON.stringify(c.input)}`);
      if (tokensOut > request.maxTokens && !calls.length) {
        // The model overshot: keep the share of text that fits.
        text = text.slice(0, Math.floor((text.length * request.maxTokens) / tokensOut));
        tokensOut = request.maxTokens;
        stopReason = 'maxTokens';
      }
      let tokensIn = 0;
      for (const m of messages) tokensIn += await chosen.countTokens(m);
      budget.recordTokens(tokensIn + tokensOut);
      const uses: ToolUseContent[] = calls.map((c) => ({ type: 'tool_use', id: c.callId, name: c.name, input: { ...(c.input as Record<string, unknown>) } }));
      if (uses.length) stopReason = 'toolUse';
      const content: SamplingContent[] = [...(text || !uses.length ? [{ type: 'text' as const, text }] : []), ...uses];
      const said = [text, ...uses.map((u) => describeBlock(u))].filter(Boolean).join('\n');
      Object.assign(record, { decision: 'allowed', tokensIn, tokensOut, durationMs: Date.now() - started, response: said });
      log.info(`sampling: ${chosen.id} answered (${tokensIn} tokens in, ${tokensOut} out, ${uses.length ? `${uses.length} tool call(s), ` : ''}${Date.now() - started} ms)`);
      return { role: 'assistant', content: content.length === 1 ? content[0] : content, model: chosen.id, stopReason };
    } catch (error) {
      const cancelled = signal.aborted;
      // Our side closing the connection aborts the signal too: the server is not to blame for that.
      const closed = cancelled && signal.reason instanceof McpError && signal.reason.code === ErrorCode.ConnectionClosed ? (signal.reason as McpError) : undefined;
      record.decision = cancelled ? 'cancelled' : 'failed';
      record.durationMs = Date.now() - started;
      const message = closed ? closed.message : error instanceof vscode.LanguageModelError ? `${error.code}: ${error.message}` : modelErrorText(error);
      record.error = message;
      log.warn(`sampling: ${closed ? `stopped: ${message}` : cancelled ? 'cancelled by the server' : `model error: ${message}`}`);
      if (closed) throw closed;
      throw cancelled ? new McpError(-32800, 'Sampling cancelled by the server') : new McpError(-32603, `The language model failed: ${message}`);
    } finally {
      signal.removeEventListener('abort', onAbort);
      source.dispose();
    }
  }

  private budget(server: string): SamplingBudget {
    let b = this.budgets.get(server);
    if (!b) this.budgets.set(server, (b = new SamplingBudget()));
    return b;
  }
}

/** The offered tools must be well formed before they reach a model. */
function toolsProblem(params: CreateMessageParams): string | undefined {
  if (params.tools === undefined) return undefined;
  if (!Array.isArray(params.tools)) return 'tools must be an array';
  for (const [i, t] of params.tools.entries()) {
    if (typeof t?.name !== 'string' || !t.name) return `tool ${i} has no name`;
    if (!t.inputSchema || typeof t.inputSchema !== 'object') return `tool "${t.name}" has no inputSchema object`;
  }
  return undefined;
}

/** What went wrong, also when the model API rejects with something that is not an Error. */
function modelErrorText(error: unknown): string {
  if (error instanceof Error || error instanceof McpError) return McpError.from(error).message;
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    return String(error);
  }
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
