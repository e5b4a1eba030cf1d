import * as vscode from 'vscode';
import { invisibleRemoved } from '../../core/scan/mask';
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
  type UnhandledRequest,
} from '../../core';
import type { AuditedServer, AuditSink, Masker } from '../../core/policy/types';
import {
  auditedServer,
  maskSamplingRequest,
  mergeFindings,
  samplingSummary,
  startServerRequest,
  type ServerRequestRecord,
} from '../../core/policy/serverRequests';
import type { ServerLogs } from '../logs/logs';
import type { OutputDocuments } from '../common/outputDocuments';
import type { HostUi } from '../ui/hostUi';
import { askModel, SamplingFailure } from './execute';
import { showHistory, type SamplingRecord } from './history';
import { hasToolCalling } from './lmApi';
import { addToStoredList, changeStoredList } from '../common/storedList';
import { notify } from '../window/notifications';

const ALWAYS_KEY = 'mcpHost.samplingAlwaysAllowed';

/**
 * Answers `sampling/createMessage` with the editor's language model in two steps: what to do is
 * decided in the core (`planSampling`, `decideModel`: policy, checks, budget, model), and carried
 * out here: the person's consent and pick through `HostUi`, the model through `askModel`, and a
 * record of each exchange in the session's history and the audit log. Every text of the request
 * is masked before anyone sees it: the consent, Review, the history and the model get the masked form.
 */
export class SamplingService {
  readonly records = new SamplingHistory<SamplingRecord>();
  private readonly budgets = new Map<string, SamplingBudget>();

  constructor(
    private readonly memento: vscode.Memento,
    private readonly logs: ServerLogs,
    private readonly ui: HostUi,
    private readonly audit: AuditSink,
    /** Asked at each request, so a change of `mcpHost.masking.patterns` applies to the next one. */
    private readonly masker: () => Masker,
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

  /** The one way a server's sampling request is answered, so each one gets its audit line however it ends. */
  async handle(
    def: ServerDefinition,
    params: CreateMessageParams,
    signal: AbortSignal,
    audited: AuditedServer = auditedServer(def),
  ): Promise<CreateMessageResult> {
    const audit = startServerRequest(this.audit, audited, 'sampling/createMessage', samplingSummary(params));
    try {
      const result = await this.answer(def, params, signal, audit);
      audit.end({ kind: 'ok' });
      return result;
    } catch (error) {
      audit.failed(error);
      throw error;
    }
  }

  /**
   * A server whose sampling mode is `deny` was never offered sampling, and asked anyway: the
   * connection refused it (-32601) without reading it; the history and the audit log keep the attempt.
   */
  refusedUnoffered(def: ServerDefinition, audited: AuditedServer, request: UnhandledRequest): void {
    const message = `sampling is not offered to this server (sampling.mode "${def.sampling.mode}"): refused with ${request.refusal.code}`;
    this.records.add({
      server: def.name,
      at: Date.now(),
      decision: 'refused',
      request: { messages: [], maxTokens: 0 },
      notOffered: { bytes: request.paramsBytes },
      error: message,
    });
    this.logs.channel(def.name).warn(`sampling: ${message}`);
    const audit = startServerRequest(this.audit, audited, 'sampling/createMessage', { paramsBytes: request.paramsBytes });
    audit.end({ kind: 'error', code: request.refusal.code });
  }

  private async answer(
    def: ServerDefinition,
    params: CreateMessageParams,
    signal: AbortSignal,
    audit: ServerRequestRecord,
  ): Promise<CreateMessageResult> {
    const server = def.name;
    const log = this.logs.channel(server);
    // Invisible characters (tag text, zero-width) removed too: the model reads what the person is shown.
    const masker = invisibleRemoved(this.masker());
    // Even a request refused at once is kept masked: the history must not hold what no model may see.
    const record: SamplingRecord = { server, at: Date.now(), decision: 'refused', request: maskedRequestOf(params, masker) };
    this.records.add(record);
    const refuse = (refusal: Refusal): never => {
      if (refusal.denied) {
        record.decision = 'denied';
        // Refused by the settings before anyone was asked; a refusal the person gave is already `asked-refused`.
        if (audit.decision === 'refused') audit.decision = 'denied';
      }
      record.error = refusal.message;
      log.warn(`sampling: ${refusal.message}`);
      throw new McpError(refusal.code, refusal.message);
    };

    const alwaysAllowed = this.alwaysAllowed().includes(server);
    const plan = planSampling(params, def.sampling, {
      canCallTools: hasToolCalling(),
      editorVersion: vscode.version,
      alwaysAllowed,
      budget: this.budget(server),
    });
    if (plan.kind === 'refuse') return refuse(plan);
    // The plan holds the request's place in the budget: committed once the model is asked; every
    // other way out (the person's No, no model, an error) gives it back here.
    const { reservation } = plan;
    try {
      if (plan.ignoredIncludeContext) record.ignoredIncludeContext = plan.ignoredIncludeContext;
      for (const note of plan.notes) log.info(`sampling: ${note}`);
      let { request, found: masked } = maskSamplingRequest(plan.request, masker);
      record.request = request;
      if (masked.length) record.masked = masked;
      this.records.changed(record);
      audit.decision = def.sampling.mode === 'ask' && alwaysAllowed ? 'allowed-always' : 'allowed';

      if (plan.ask) {
        let decision = await this.ui.allowSampling(server, request, masked);
        if (decision === 'review') {
          const edited = await this.ui.reviewSampling(server, request, masked);
          decision = edited ? 'once' : 'deny';
          if (edited) {
            // What the person typed in is masked too: nothing unmasked reaches the model.
            const again = maskSamplingRequest(edited, masker);
            request = again.request;
            masked = mergeFindings(masked, again.found);
            // The history shows what the model was really sent.
            record.request = request;
            if (masked.length) record.masked = masked;
            record.reviewed = true;
            this.records.changed(record);
          }
        }
        if (decision === 'deny') {
          audit.decision = 'asked-refused';
          return refuse(consentRefused());
        }
        audit.decision = 'asked-allowed';
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
      if (!model) {
        audit.decision = 'asked-refused';
        return refuse(noModelChosen());
      }
      record.model = audit.name = model.id;

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

/** The request as the history keeps it when it may not even be well formed: masked where it can be read, else dropped. */
function maskedRequestOf(params: CreateMessageParams, masker: Masker): CreateMessageParams {
  try {
    return maskSamplingRequest(params, masker).request;
  } catch {
    return { messages: [], maxTokens: typeof params?.maxTokens === 'number' ? params.maxTokens : 0 };
  }
}
