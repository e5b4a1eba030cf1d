import { ErrorCode } from '../protocol/errors';
import type { CreateMessageParams, CreateMessageResult, ModelPreferences, SamplingContent, ToolUseContent } from '../protocol/types';
import type { SamplingPolicy } from '../servers/definition';
import { estimatedSamplingTokens, type BudgetReservation, type SamplingBudget } from './budget';
import { toolMessageProblem, usesTools } from './content';
import { chooseModel, type ModelCandidate } from './policy';

// What to do with a `sampling/createMessage`, decided without the editor: the policy, the
// request's own checks, the budget, the model and the shape of the answer. The editor layer
// (src/vscode/sampling/) asks the person and the model where these decisions say so.

/** The spec's example code for a person's refusal. */
export const USER_REJECTED = -1;

/** The answer to the server is an error: `code` and `message` go to it as they are. */
export interface Refusal {
  kind: 'refuse';
  code: number;
  message: string;
  /** The person or their settings said no (the history says "denied", not "refused"). */
  denied: boolean;
}

export interface SamplingPlan {
  kind: 'proceed';
  /** The request as it goes on: `maxTokens` within the policy's cap. */
  request: CreateMessageParams;
  /** Whether the person is asked first (`ask` mode and not always allowed for this server). */
  ask: boolean;
  /** The `includeContext` the server asked for, other than "none": answered by adding no context, as the spec allows. */
  ignoredIncludeContext?: string;
  /** What was changed or ignored, for the server's log. */
  notes: string[];
  /**
   * The request's place in the budget, taken before anything was awaited: commit it once the
   * model was asked, release it on every refusal after this plan.
   */
  reservation: BudgetReservation;
}

export interface SamplingCircumstances {
  /** Whether this editor's language model API can call tools. */
  canCallTools: boolean;
  /** The editor's version, named when tools cannot be called. */
  editorVersion: string;
  /** Whether the person chose "always" for this server. */
  alwaysAllowed: boolean;
  budget: SamplingBudget;
}

const refuse = (code: number, message: string, denied = false): Refusal => ({ kind: 'refuse', code, message, denied });

/** The checks before anyone is asked, in order: policy, well-formed request, tools; then the caps, then the budget's reservation. */
export function planSampling(params: CreateMessageParams, policy: SamplingPolicy, at: SamplingCircumstances): Refusal | SamplingPlan {
  if (policy.mode === 'deny')
    return refuse(
      USER_REJECTED,
      'User rejected sampling request: sampling is denied for this server by mcpHost.servers sampling.mode',
      true,
    );
  const problem = toolMessageProblem(params) ?? toolsProblem(params);
  if (problem) return refuse(ErrorCode.InvalidParams, `Invalid sampling request: ${problem}`);
  if (usesTools(params) && !at.canCallTools) {
    return refuse(
      ErrorCode.InvalidParams,
      `Sampling with tools is not supported: the language model API of this VS Code (${at.editorVersion}) cannot call tools (1.95 or later can), so MCP Host did not declare sampling.tools`,
    );
  }
  const notes: string[] = [];
  let ignoredIncludeContext: string | undefined;
  if (params.includeContext && params.includeContext !== 'none') {
    // 2025-11-25 client/sampling: the client may ignore includeContext (and it is soft-deprecated).
    ignoredIncludeContext = String(params.includeContext);
    notes.push(`includeContext "${params.includeContext}" treated as "none": other servers' context is not shared`);
  }
  const request: CreateMessageParams = { ...params };
  if (policy.maxTokensPerRequest !== undefined && request.maxTokens > policy.maxTokensPerRequest) {
    notes.push(`maxTokens ${request.maxTokens} capped to ${policy.maxTokensPerRequest}`);
    request.maxTokens = policy.maxTokensPerRequest;
  }
  // Taken here, with no await since the budget was read, so concurrent requests see each other.
  const reservation = at.budget.reserve(policy, estimatedSamplingTokens(request));
  if (reservation.kind === 'over') return refuse(ErrorCode.InternalError, `Sampling refused: ${reservation.reason}`);
  return {
    kind: 'proceed',
    request,
    ask: policy.mode === 'ask' && !at.alwaysAllowed,
    ...(ignoredIncludeContext ? { ignoredIncludeContext } : {}),
    notes,
    reservation,
  };
}

/** The person's No in the consent (or an empty Review). */
export const consentRefused = (): Refusal => refuse(USER_REJECTED, 'User rejected sampling request', true);

/** The person closed the model pick without choosing. */
export const noModelChosen = (): Refusal => refuse(USER_REJECTED, 'User rejected sampling request: no model was chosen', true);

export type ModelDecision<M extends ModelCandidate> =
  { kind: 'use'; model: M } | { kind: 'pick'; models: M[] } | { kind: 'none'; reason: string; refusal: Refusal };

/** The model within the allowlist; a tie is the person's to break in `ask` mode, the first one's otherwise. */
export function decideModel<M extends ModelCandidate>(
  models: M[],
  policy: SamplingPolicy,
  prefs: ModelPreferences | undefined,
): ModelDecision<M> {
  const choice = chooseModel(models, policy, prefs);
  switch (choice.kind) {
    case 'none':
      return {
        kind: 'none',
        reason: choice.reason,
        refusal: refuse(ErrorCode.InternalError, `No language model available: ${choice.reason}`),
      };
    case 'ambiguous':
      return policy.mode === 'ask' ? { kind: 'pick', models: choice.models } : { kind: 'use', model: choice.models[0] };
    case 'chosen':
      return { kind: 'use', model: choice.model };
  }
}

export interface ModelOutput {
  /** The text as streamed, already cut at a stop sequence. */
  text: string;
  /** Whether a stop sequence cut it. */
  stopped: boolean;
  uses: ToolUseContent[];
  /** The model's count of what it produced: text and tool calls. */
  tokensOut: number;
}

/**
 * The answer to the server from what the model produced: text that overshot `maxTokens` keeps the
 * share that fits; tool calls end the turn as `toolUse`.
 */
export function samplingAnswer(
  output: ModelOutput,
  maxTokens: number,
  model: string,
): { result: CreateMessageResult; text: string; tokensOut: number } {
  let { text, tokensOut } = output;
  let stopReason: CreateMessageResult['stopReason'] = output.stopped ? 'stopSequence' : 'endTurn';
  if (tokensOut > maxTokens && !output.uses.length) {
    text = text.slice(0, Math.floor((text.length * maxTokens) / tokensOut));
    tokensOut = maxTokens;
    stopReason = 'maxTokens';
  }
  if (output.uses.length) stopReason = 'toolUse';
  const content: SamplingContent[] = [...(text || !output.uses.length ? [{ type: 'text' as const, text }] : []), ...output.uses];
  return { result: { role: 'assistant', content: content.length === 1 ? content[0] : content, model, stopReason }, text, tokensOut };
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
