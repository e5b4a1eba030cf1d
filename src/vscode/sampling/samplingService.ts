import * as vscode from 'vscode';
import {
  consentRefused,
  decideModel,
  forDisplay,
  fromTemplate,
  McpError,
  nothingToRedact,
  noModelChosen,
  planSampling,
  SamplingBudget,
  SamplingHistory,
  type CreateMessageParams,
  type CreateMessageResult,
  type Refusal,
  type ServerDefinition,
} from '../../core';
import type { ServerLogs } from '../logs';
import type { OutputDocuments } from '../outputDocuments';
import type { HostUi } from '../ui';
import { askModel, SamplingFailure } from './execute';
import { showHistory, type SamplingRecord } from './history';
import { hasToolCalling } from './lmApi';
import { addToStoredList, changeStoredList } from '../storedList';
import { notify } from '../notifications';

const ALWAYS_KEY = 'mcpHost.samplingAlwaysAllowed';

/**
 * Answers `sampling/createMessage` with the editor's language model in two steps: what to do is
 * decided in the core (`planSampling`, `decideModel`: policy, checks, budget, model), and carried
 * out here: the person's consent and pick through `HostUi`, the model through `askModel`, and a
 * record of each exchange in the session's history.
 */
export class SamplingService {
  readonly records = new SamplingHistory<SamplingRecord>();
  private readonly budgets = new Map<string, SamplingBudget>();

  constructor(
    private readonly memento: vscode.Memento,
    private readonly logs: ServerLogs,
    private readonly ui: HostUi,
  ) {}

  /** The session's exchanges, newest first, within the history's bounds. */
  get history(): readonly SamplingRecord[] {
    return this.records.items;
  }

  showHistory(docs: OutputDocuments): Promise<vscode.Uri> {
    return showHistory(this.history, docs);
  }

  async resetAlways(): Promise<void> {
    await changeStoredList(this.memento, ALWAYS_KEY, () => []);
  }

  async handle(def: ServerDefinition, params: CreateMessageParams, signal: AbortSignal): Promise<CreateMessageResult> {
    const server = def.name;
    const log = this.logs.channel(server);
    const record: SamplingRecord = { server, at: Date.now(), decision: 'refused', request: params };
    this.records.add(record);
    const refuse = (refusal: Refusal): never => {
      if (refusal.denied) record.decision = 'denied';
      record.error = refusal.message;
      log.warn(`sampling: ${refusal.message}`);
      throw new McpError(refusal.code, refusal.message);
    };

    const plan = planSampling(params, def.sampling, {
      canCallTools: hasToolCalling(),
      editorVersion: vscode.version,
      alwaysAllowed: this.alwaysAllowed().includes(server),
      budget: this.budget(server),
    });
    if (plan.kind === 'refuse') return refuse(plan);
    // The plan holds the request's place in the budget: committed once the model is asked; every
    // other way out (the person's No, no model, an error) gives it back here.
    const { reservation } = plan;
    try {
      if (plan.ignoredIncludeContext) record.ignoredIncludeContext = plan.ignoredIncludeContext;
      for (const note of plan.notes) log.info(`sampling: ${note}`);
      let request = plan.request;

      if (plan.ask) {
        let decision = await this.ui.allowSampling(server, request);
        if (decision === 'review') {
          const edited = await this.ui.reviewSampling(server, request);
          decision = edited ? 'once' : 'deny';
          if (edited) {
            request = edited;
            // The history shows what the model was really sent.
            record.request = edited;
            record.reviewed = true;
            this.records.changed(record);
          }
        }
        if (decision === 'deny') return refuse(consentRefused());
        if (decision === 'always') await addToStoredList(this.memento, ALWAYS_KEY, server);
      }

      const choice = decideModel(await vscode.lm.selectChatModels(), def.sampling, request.modelPreferences);
      if (choice.kind === 'none') {
        void notify(
          'error',
          fromTemplate(
            vscode.l10n.t(
              'MCP Host: "{0}" asked for a language model, but {1}. Install and sign in to a language model provider (for example GitHub Copilot), or adjust {2}.',
            ),
            forDisplay(server, nothingToRedact),
            forDisplay(choice.reason, nothingToRedact),
            forDisplay(`mcpHost.servers › ${server} › sampling.models`, nothingToRedact),
          ),
        );
        return refuse(choice.refusal);
      }
      const model = choice.kind === 'use' ? choice.model : await this.ui.pickSamplingModel(choice.models);
      if (!model) return refuse(noModelChosen());
      record.model = model.id;

      const started = Date.now();
      try {
        const answer = await askModel(model, request, server, signal);
        reservation.commit(answer.tokensIn + answer.tokensOut);
        Object.assign(record, {
          decision: 'allowed',
          tokensIn: answer.tokensIn,
          tokensOut: answer.tokensOut,
          durationMs: Date.now() - started,
          response: answer.said,
        });
        this.records.changed(record);
        log.info(
          `sampling: ${model.id} answered (${answer.tokensIn} tokens in, ${answer.tokensOut} out, ${answer.toolCalls ? `${answer.toolCalls} tool call(s), ` : ''}${Date.now() - started} ms)`,
        );
        return answer.result;
      } catch (failure) {
        if (!(failure instanceof SamplingFailure)) throw failure;
        // The model was asked: the request counts against the rate, its tokens are not known.
        reservation.commit(0);
        Object.assign(record, { decision: failure.decision, durationMs: Date.now() - started, error: failure.reason });
        log.warn(`sampling: ${failure.logLine}`);
        throw failure.answer;
      }
    } finally {
      reservation.release();
    }
  }

  private alwaysAllowed(): string[] {
    return this.memento.get<string[]>(ALWAYS_KEY, []);
  }

  private budget(server: string): SamplingBudget {
    let b = this.budgets.get(server);
    if (!b) this.budgets.set(server, (b = new SamplingBudget()));
    return b;
  }
}
