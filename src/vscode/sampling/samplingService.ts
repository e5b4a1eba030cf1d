import * as vscode from 'vscode';
import {
  applyStopSequences,
  chooseModel,
  describeBlock,
  messageBlocks,
  offeredTools,
  resultText,
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
  type SamplingMessage,
  type ServerDefinition,
  type ToolUseContent,
} from '../../core';
import {
  dataPart,
  hasDataParts,
  hasToolCalling,
  isTextPart,
  isToolCall,
  partsMessage,
  responseParts,
  textPart,
  toolCallPart,
  toolMode,
  toolResultPart,
  type ToolCallPart,
  type ToolRequestOptions,
} from './lmApi';
import type { DocumentActions } from '../documentActions';
import type { ServerLogs } from '../logs';
import type { OutputDocuments } from '../outputDocuments';

export type SamplingDecision = 'once' | 'always' | 'deny' | 'review';

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
  /** Replaceable so tests in a real VS Code can answer without a modal. */
  consent: (server: string, params: CreateMessageParams) => Promise<SamplingDecision> = askConsent;
  pickModel: (models: vscode.LanguageModelChat[]) => Promise<vscode.LanguageModelChat | undefined> = pickModelWithQuickPick;
  review: (server: string, params: CreateMessageParams) => Promise<CreateMessageParams | undefined>;

  constructor(
    private readonly memento: vscode.Memento,
    private readonly logs: ServerLogs,
    documentActions: DocumentActions,
  ) {
    this.review = (server, params) => reviewInEditor(documentActions, server, params);
  }

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
      let decision = await this.consent(server, request);
      if (decision === 'review') {
        const edited = await this.review(server, request);
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
      model = policy.mode === 'ask' ? await this.pickModel(choice.models) : choice.models[0];
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
    const asParts = blocks.some((b) => b.type === 'tool_use' || b.type === 'tool_result' || (dataParts && m.role === 'user' && (b.type === 'image' || b.type === 'audio')));
    if (!asParts) {
      const text = contentText(m);
      out.push(m.role === 'assistant' ? vscode.LanguageModelChatMessage.Assistant(text) : vscode.LanguageModelChatMessage.User(text));
      continue;
    }
    const parts = blocks.map((b) => {
      if (b.type === 'tool_use') return toolCallPart(b.id, b.name, b.input);
      if (b.type === 'tool_result') return toolResultPart(b.toolUseId, [textPart(b.isError ? `Error: ${resultText(b)}` : resultText(b))]);
      if ((b.type === 'image' || b.type === 'audio') && m.role === 'user' && dataParts) return dataPart(Buffer.from(b.data, 'base64'), b.mimeType);
      return textPart(blockText(b));
    });
    out.push(partsMessage(m.role === 'assistant' ? 'assistant' : 'user', parts));
  }
  return out;
}

function blockText(b: ReturnType<typeof messageBlocks>[number]): string {
  if (b.type === 'image' || b.type === 'audio') return `${describeBlock(b).slice(0, -1)}, not sent: this VS Code's language model API takes no ${b.type}]`;
  return describeBlock(b);
}

function contentText(m: SamplingMessage): string {
  return messageBlocks(m).map(blockText).join('\n');
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

/** What went wrong, also when the model API rejects with something that is not an Error. */
function modelErrorText(error: unknown): string {
  if (error instanceof Error || error instanceof McpError) return McpError.from(error).message;
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    return String(error);
  }
}

function safeContentText(m: SamplingMessage): string {
  try {
    return contentText(m);
  } catch (e) {
    return `[${(e as Error).message}]`;
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

async function askConsent(server: string, params: CreateMessageParams): Promise<SamplingDecision> {
  const once = vscode.l10n.t('Allow Once');
  const always = vscode.l10n.t('Always Allow for This Server');
  const review = vscode.l10n.t('Review…');
  const deny = vscode.l10n.t('Deny');
  const detail = describeRequest(server, params);
  const pick = await vscode.window.showWarningMessage(
    vscode.l10n.t('The MCP server "{0}" wants to use your language model', server),
    { modal: true, detail: detail.length > 3000 ? `${detail.slice(0, 3000)}…` : detail },
    once,
    always,
    review,
    deny,
  );
  return pick === once ? 'once' : pick === always ? 'always' : pick === review ? 'review' : 'deny';
}

async function pickModelWithQuickPick(models: vscode.LanguageModelChat[]): Promise<vscode.LanguageModelChat | undefined> {
  const pick = await vscode.window.showQuickPick(
    models.map((m) => ({ label: m.name, description: `${m.vendor} · ${m.family} · ${m.id}`, model: m })),
    { title: vscode.l10n.t('MCP Host: which model should answer the sampling request?') },
  );
  return pick?.model;
}

/** Opens the request as JSON; the person may edit the messages, then allow or deny. */
async function reviewInEditor(actions: DocumentActions, server: string, params: CreateMessageParams): Promise<CreateMessageParams | undefined> {
  const doc = await vscode.workspace.openTextDocument({ language: 'json', content: `${JSON.stringify(params, null, 2)}\n` });
  await vscode.window.showTextDocument(doc, { preview: false });
  try {
    for (;;) {
      const allow = vscode.l10n.t('Allow as Edited');
      const pick = await actions.ask(doc, vscode.l10n.t('Review the sampling request of "{0}". Edit the messages if you like, then allow or deny.', server), [allow, vscode.l10n.t('Deny')]);
      if (pick !== allow) return undefined;
      try {
        const edited = JSON.parse(doc.getText()) as CreateMessageParams;
        if (!Array.isArray(edited.messages)) throw new Error(vscode.l10n.t('messages must be an array'));
        // Only the messages and system prompt are the person's to change; limits stay as the policy set them.
        return { ...params, messages: edited.messages, systemPrompt: edited.systemPrompt };
      } catch (e) {
        void vscode.window.showErrorMessage(vscode.l10n.t('The request is not valid JSON: {0}', (e as Error).message));
      }
    }
  } finally {
    await actions.discard(doc);
  }
}
