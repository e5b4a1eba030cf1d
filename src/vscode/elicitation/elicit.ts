import * as vscode from 'vscode';
import {
  checkElicitationContent,
  formDefaults,
  formFields,
  type ElicitationWait,
  type ElicitRequestParams,
  type ElicitResult,
  type UrlElicitation,
} from '../../core';
import type { HostUi } from '../ui/hostUi';
import type { AuditedServer, AuditSink } from '../../core/policy/types';
import { elicitationSummary, startServerRequest } from '../../core/policy/serverRequests';
import { untilAborted } from './abort';
import type { ElicitationUi } from '../ui/elicitationSteps';

export interface ElicitationRecord {
  server: string;
  mode: 'form' | 'url' | 'required';
  /** The answer sent, or `withdrawn` when the server cancelled or reported the page done first. */
  outcome: ElicitResult['action'] | 'withdrawn' | 'retried' | 'stopped';
}

/**
 * Answers `elicitation/create` and -32042. Form mode: a consent naming the server, each field in
 * turn with its default, then a review where any field can be changed before Send; the answer
 * is checked against `requestedSchema` first. URL mode opens a page only after the person agrees.
 * A request the server cancels closes whatever it still shows.
 */
export class Elicitation {
  readonly history: ElicitationRecord[] = [];

  constructor(
    private readonly onComplete: vscode.Event<{ server: string; elicitationId: string }>,
    private readonly hostUi: HostUi,
    private readonly audit?: AuditSink,
  ) {}

  /** Asked at each question, so a test that replaces `HostUi.elicitation` answers the next one. */
  private get ui(): ElicitationUi {
    return this.hostUi.elicitation;
  }

  /** The one way a server's `elicitation/create` is answered; `audited` names the server in the audit log. */
  async handle(server: string, params: ElicitRequestParams, signal: AbortSignal, audited?: AuditedServer): Promise<ElicitResult> {
    const mode = params.mode === 'url' ? 'url' : 'form';
    const audit = audited && startServerRequest(this.audit, audited, 'elicitation/create', elicitationSummary(params));
    if (audit) audit.name = mode;
    const withdrawn = new AbortController();
    signal.addEventListener('abort', () => withdrawn.abort(), { once: true });
    if (signal.aborted) withdrawn.abort();
    let result: ElicitResult;
    try {
      result = mode === 'url' ? await this.url(server, params, withdrawn) : await this.form(server, params, signal);
    } catch (error) {
      audit?.failed(error);
      throw error;
    }
    const outcome = withdrawn.signal.aborted ? 'withdrawn' : result.action;
    this.history.unshift({ server, mode, outcome });
    this.history.splice(50);
    if (audit) {
      // A page that is not http(s) is declined without asking anyone.
      audit.decision = mode === 'url' && !pageUrl(params.url) ? 'refused' : result.action === 'accept' ? 'asked-allowed' : 'asked-refused';
      audit.end(outcome === 'withdrawn' ? { kind: 'cancelled' } : { kind: 'ok' });
    }
    return result;
  }

  /** The handler of a -32042 answer: consent per page, then wait for the server's completion (or the person's Retry). */
  async urlRequired(
    server: string,
    pages: UrlElicitation[],
    wait: ElicitationWait,
    request: { method: string; params?: Record<string, unknown> },
    signal: AbortSignal,
  ): Promise<'retry' | 'stop'> {
    const what =
      typeof request.params?.name === 'string'
        ? request.params.name
        : typeof request.params?.uri === 'string'
          ? request.params.uri
          : request.method;
    const decision = await this.finishPages(server, what, pages, wait, signal);
    this.history.unshift({ server, mode: 'required', outcome: decision === 'retry' ? 'retried' : 'stopped' });
    return decision;
  }

  private async finishPages(
    server: string,
    what: string,
    pages: UrlElicitation[],
    wait: ElicitationWait,
    signal: AbortSignal,
  ): Promise<'retry' | 'stop'> {
    const completed = wait.allCompleted.then(() => 'completed' as const);
    for (const page of pages) {
      if (wait.isCompleted(page.elicitationId)) continue;
      const url = pageUrl(page.url);
      if (!url) return 'stop';
      const answer = await Promise.race([this.ui.openPage(server, url, page.message, signal), completed]);
      if (answer === 'completed') return 'retry';
      if (answer !== 'open' || signal.aborted) return 'stop';
    }
    if (pages.every((p) => wait.isCompleted(p.elicitationId))) return 'retry';
    const after = await this.ui.waitForPages(server, what, wait.allCompleted, signal);
    return after === 'stop' || signal.aborted ? 'stop' : 'retry';
  }

  private async form(server: string, params: ElicitRequestParams, signal: AbortSignal): Promise<ElicitResult> {
    const schema = params.requestedSchema;
    const fields = formFields(schema);
    const consent = await untilAborted(this.ui.consent(server, params.message, fields, signal), signal);
    if (consent === 'decline') return { action: 'decline' };
    if (consent !== 'respond' || signal.aborted) return { action: 'cancel' };
    const content = formDefaults(fields);
    const title = vscode.l10n.t('"{0}" asks', server);
    const ask = async (i: number, canGoBack: boolean) => {
      const field = fields[i];
      return untilAborted(
        this.ui.askField({ title: `${title} (${i + 1}/${fields.length})`, field, current: content[field.name], canGoBack }, signal),
        signal,
      );
    };
    for (let i = 0; i < fields.length;) {
      const answer = await ask(i, i > 0);
      if (answer === undefined || signal.aborted) return { action: 'cancel' };
      if (answer === 'back') {
        i = Math.max(0, i - 1);
        continue;
      }
      if (answer === 'skip') delete content[fields[i].name];
      else content[fields[i].name] = answer.value;
      i++;
    }
    for (;;) {
      const check = checkElicitationContent(schema, content);
      const problem = check.ok ? undefined : check.message.replace(/^\(root\) /, '');
      const choice = await untilAborted(this.ui.review({ server, title, fields, content, problem }, signal), signal);
      if (choice === undefined || signal.aborted) return { action: 'cancel' };
      if (choice === 'send') {
        if (problem) continue;
        return { action: 'accept', content };
      }
      const answer = await ask(choice.edit, true);
      if (answer === undefined || signal.aborted) return { action: 'cancel' };
      if (answer === 'skip') delete content[fields[choice.edit].name];
      else if (answer !== 'back') content[fields[choice.edit].name] = answer.value;
    }
  }

  /** `withdrawn` fires when the server cancels the request or reports the page done (finished elsewhere) while the consent still shows. */
  private async url(server: string, params: ElicitRequestParams, withdrawn: AbortController): Promise<ElicitResult> {
    const url = pageUrl(params.url);
    if (!url) return { action: 'decline' };
    const sub = this.onComplete((e) => e.server === server && e.elicitationId === params.elicitationId && withdrawn.abort());
    const either = withdrawn.signal;
    try {
      const answer = await untilAborted(this.ui.openPage(server, url, params.message, either), either);
      if (either.aborted) return { action: 'cancel' };
      if (answer === 'decline') return { action: 'decline' };
      if (answer !== 'open') return { action: 'cancel' };
      return { action: 'accept' };
    } finally {
      sub.dispose();
    }
  }
}

/** Only http and https pages are opened. */
function pageUrl(text: string | undefined): URL | undefined {
  try {
    const url = new URL(text ?? '');
    return url.protocol === 'https:' || url.protocol === 'http:' ? url : undefined;
  } catch {
    return undefined;
  }
}
