import * as vscode from 'vscode';
import type * as Core from '../../core';
import type { ElicitationValue, FormField } from '../../core';
import { forDisplay, fromTemplate, joinShown, withIcon, type Redact, type ShownText } from '../../core/render/shownText';
import { askModal, withProgressNotification } from '../window/notifications';
import { createShownQuickPick, type ShownPickItem, type ShownQuickPick } from '../window/quickPicks';
import { untilAborted } from './abort';
import { formConsentText, type Display } from './consentText';
import type { ElicitationUi, FieldAnswer, FieldStep, ReviewAnswer, ReviewStep } from '../ui/elicitationSteps';
import { createTextInput } from '../window/windowInputs';

/**
 * The entry of dist/forms.js: the quick inputs of an elicitation form, loaded on the first form a
 * server asks (see `LazyElicitationUi` in ./ui.ts). The schema helpers come from the main bundle,
 * so this one does not carry the validator again.
 */
export type FormHelpers = Pick<
  typeof Core,
  'describeFieldValue' | 'formatPropertyValue' | 'multiSelectProblem' | 'parsePropertyInput' | 'pickedValues'
>;

/** `redact` is the host's: a form's texts (the server's question, its field titles and descriptions) are shown through it. */
export function createQuickInputUi(helpers: FormHelpers, redact: Redact): ElicitationUi & { readonly open: Set<vscode.QuickInput> } {
  return new QuickInputUi(helpers, (text, max) => forDisplay(text, redact, max));
}

/** The real questions: modals for consent, quick picks and input boxes for the fields. */
class QuickInputUi implements ElicitationUi {
  /** The quick inputs open now, so a test can see a withdrawn form close. */
  readonly open = new Set<vscode.QuickInput>();

  constructor(
    private readonly helpers: FormHelpers,
    private readonly display: Display,
  ) {}

  async consent(server: string, message: string, fields: FormField[], signal: AbortSignal): Promise<'respond' | 'decline' | undefined> {
    const respond = vscode.l10n.t('Respond');
    const decline = vscode.l10n.t('Decline');
    const { question, detail } = formConsentText(server, message, fields, this.display);
    const pick = await untilAborted(askModal('info', question, detail, respond, decline), signal);
    return pick === respond ? 'respond' : pick === decline ? 'decline' : undefined;
  }

  askField(step: FieldStep, signal: AbortSignal): Promise<FieldAnswer> {
    const f = step.field;
    if (f.kind === 'multi') return this.pickMany(step, f, signal);
    if (f.kind === 'choice' || f.kind === 'boolean') {
      const choices =
        f.kind === 'boolean'
          ? [
              { label: vscode.l10n.t('Yes'), value: true },
              { label: vscode.l10n.t('No'), value: false },
            ]
          : f.choices;
      return this.pickOne(step, choices, signal);
    }
    return this.type(step, signal);
  }

  review(step: ReviewStep, signal: AbortSignal): Promise<ReviewAnswer> {
    type Item = ShownPickItem & { answer: ReviewAnswer };
    const items: Item[] = [];
    if (!step.problem)
      items.push({
        label: withIcon('send', fromTemplate(vscode.l10n.t('Send'))),
        description: fromTemplate(vscode.l10n.t('to {0}'), this.display(step.server)),
        answer: 'send',
      });
    step.fields.forEach((f, i) => {
      const value = step.content[f.name];
      items.push({
        label: withIcon('edit', fromTemplate(vscode.l10n.t('Edit {0}'), this.display(f.title))),
        description:
          value === undefined ? fromTemplate(vscode.l10n.t('(not given)')) : this.display(this.helpers.describeFieldValue(f, value)),
        answer: { edit: i },
      });
    });
    items.push({ label: withIcon('close', fromTemplate(vscode.l10n.t('Cancel'))), answer: undefined });
    const placeholder = step.problem
      ? fromTemplate(vscode.l10n.t('Cannot send yet: {0}'), this.display(step.problem))
      : fromTemplate(vscode.l10n.t('Review your answers; nothing is sent before you choose Send'));
    // The review has no Back: every field is one of its rows.
    return this.quickPick<Item, ReviewAnswer>(
      this.display(step.title),
      placeholder,
      items,
      false,
      signal,
      (qp) => qp.selectedItems[0]?.answer,
      () => undefined,
    ) as Promise<ReviewAnswer>;
  }

  async openPage(server: string, url: URL, message: string, signal: AbortSignal): Promise<'open' | 'decline' | undefined> {
    const open = vscode.l10n.t('Open {0}', url.host);
    const decline = vscode.l10n.t('Decline');
    const pick = await untilAborted(
      askModal(
        'warning',
        fromTemplate(vscode.l10n.t('The MCP server "{0}" wants you to open a page on {1}'), this.display(server), this.display(url.host)),
        joinShown([this.display(message), this.display(url.toString())], '\n'),
        open,
        decline,
      ),
      signal,
    );
    if (pick !== open) return pick === decline ? 'decline' : undefined;
    await vscode.env.openExternal(vscode.Uri.parse(url.toString()));
    return 'open';
  }

  async waitForPages(
    server: string,
    what: string,
    allCompleted: Promise<void>,
    signal: AbortSignal,
  ): Promise<'completed' | 'retry' | 'stop'> {
    const outcome = await withProgressNotification(
      fromTemplate(
        vscode.l10n.t(
          '{0}: finish in the browser; {1} runs again when the server says the page is done (Cancel to retry or stop yourself).',
        ),
        this.display(server),
        this.display(what),
      ),
      true,
      (_progress, token) =>
        new Promise<'completed' | 'cancelled' | 'aborted'>((resolve) => {
          void allCompleted.then(() => resolve('completed'));
          token.onCancellationRequested(() => resolve('cancelled'));
          signal.addEventListener('abort', () => resolve('aborted'), { once: true });
        }),
    );
    if (outcome !== 'cancelled') return outcome === 'completed' ? 'completed' : 'stop';
    const retry = vscode.l10n.t('Retry');
    const pick = await untilAborted(
      askModal(
        'info',
        fromTemplate(vscode.l10n.t('MCP Host: {0} can run once you have finished in the browser.'), this.display(what)),
        fromTemplate(vscode.l10n.t('Retry {0} with the same arguments?'), this.display(`${server} › ${what}`)),
        retry,
      ),
      signal,
    );
    return pick === retry ? 'retry' : 'stop';
  }

  private pickOne(step: FieldStep, choices: Array<{ label: string; value: unknown }>, signal: AbortSignal): Promise<FieldAnswer> {
    type Item = ShownPickItem & { answer: FieldAnswer };
    const f = step.field;
    const items: Item[] = choices.map((c) => ({
      label: this.display(c.label),
      description: c.value === f.schema.default ? fromTemplate(vscode.l10n.t('default')) : undefined,
      answer: { value: c.value as ElicitationValue },
    }));
    if (!f.required)
      items.push({
        label: withIcon('circle-slash', fromTemplate(vscode.l10n.t('Skip'))),
        description: fromTemplate(vscode.l10n.t('leave this field out')),
        answer: 'skip',
      });
    const start = step.current ?? f.schema.default;
    return this.quickPick<Item, FieldAnswer>(
      this.display(step.title),
      this.display(promptFor(f)),
      items,
      false,
      signal,
      (qp) => qp.selectedItems[0]?.answer,
      (qp) => {
        const active = items.find((it) => typeof it.answer === 'object' && it.answer.value === start);
        if (active) qp.activeItems = [active];
        if (step.canGoBack) qp.buttons = [vscode.QuickInputButtons.Back];
      },
    );
  }

  private pickMany(step: FieldStep, f: FormField & { kind: 'multi' }, signal: AbortSignal): Promise<FieldAnswer> {
    type Item = ShownPickItem & { value: string };
    const picked = this.helpers.pickedValues(f, step.current);
    const items: Item[] = f.choices.map((c) => ({
      label: this.display(c.label),
      value: String(c.value),
      picked: picked.includes(c.value),
    }));
    const prompt = this.display(promptFor(f));
    return this.quickPick<Item, FieldAnswer>(
      this.display(step.title),
      prompt,
      items,
      true,
      signal,
      (qp) => {
        const values = qp.selectedItems.map((it) => it.value);
        if (values.length === 0 && !f.required) return 'skip';
        const problem = this.helpers.multiSelectProblem(f, values.length);
        if (problem) {
          qp.placeholder = joinShown([fromTemplate(vscode.l10n.t('Not yet: {0}'), this.display(problem)), prompt], ' — ');
          return KEEP_OPEN;
        }
        return { value: values };
      },
      (qp) => {
        qp.selectedItems = items.filter((it) => it.picked);
        if (step.canGoBack) qp.buttons = [vscode.QuickInputButtons.Back];
      },
    );
  }

  private quickPick<I extends ShownPickItem, A>(
    title: ShownText,
    placeholder: ShownText,
    items: I[],
    many: boolean,
    signal: AbortSignal,
    accept: (qp: ShownQuickPick<I>) => A | typeof KEEP_OPEN,
    setUp: (qp: ShownQuickPick<I>) => void,
  ): Promise<A | 'back' | undefined> {
    const qp = createShownQuickPick<I>();
    qp.title = title;
    qp.placeholder = placeholder;
    qp.ignoreFocusOut = true;
    qp.canSelectMany = many;
    qp.items = items;
    setUp(qp);
    return this.run(qp, signal, (finish) => {
      qp.onDidTriggerButton(() => finish('back'));
      qp.onDidAccept(() => {
        const a = accept(qp);
        if (a !== KEEP_OPEN) finish(a);
      });
    });
  }

  private type(step: FieldStep, signal: AbortSignal): Promise<FieldAnswer> {
    const f = step.field;
    const box = createTextInput();
    box.title = this.display(step.title);
    box.prompt = this.display(promptFor(f));
    box.ignoreFocusOut = true;
    const start = step.current ?? f.schema.default;
    box.value = start === undefined ? '' : this.helpers.formatPropertyValue(start);
    box.placeholder = this.display(f.title);
    if (step.canGoBack) box.buttons = [vscode.QuickInputButtons.Back];
    const check = (text: string): string | undefined => {
      if (text === '') return f.required ? vscode.l10n.t('This field is required') : undefined;
      const parsed = this.helpers.parsePropertyInput(f.schema, text);
      return 'error' in parsed ? parsed.error : undefined;
    };
    return this.run(box, signal, (finish) => {
      box.onDidChangeValue((v) => (box.validationMessage = v === '' ? undefined : check(v)));
      box.onDidTriggerButton(() => finish('back'));
      box.onDidAccept(() => {
        const problem = check(box.value);
        if (problem) return void (box.validationMessage = problem);
        if (box.value === '') return finish('skip');
        const parsed = this.helpers.parsePropertyInput(f.schema, box.value);
        if ('value' in parsed) finish({ value: parsed.value as ElicitationValue });
      });
    });
  }

  /** Shows the input until it answers, is hidden, or the signal fires; then disposes it. */
  private run<A>(
    input: vscode.QuickInput,
    signal: AbortSignal,
    wire: (finish: (a: A | undefined) => void) => void,
  ): Promise<A | undefined> {
    return new Promise((resolve) => {
      let done = false;
      const finish = (a: A | undefined) => {
        if (done) return;
        done = true;
        signal.removeEventListener('abort', onAbort);
        this.open.delete(input);
        resolve(a);
        input.dispose();
      };
      const onAbort = () => finish(undefined);
      if (signal.aborted) return finish(undefined);
      signal.addEventListener('abort', onAbort, { once: true });
      wire(finish);
      input.onDidHide(() => finish(undefined));
      this.open.add(input);
      input.show();
    });
  }
}

const KEEP_OPEN = Symbol('keep open');

function promptFor(f: FormField): string {
  const s = f.schema;
  const limits = [
    s.minimum !== undefined ? `≥ ${s.minimum}` : '',
    s.maximum !== undefined ? `≤ ${s.maximum}` : '',
    s.minLength !== undefined ? vscode.l10n.t('at least {0} characters', s.minLength) : '',
    s.maxLength !== undefined ? vscode.l10n.t('at most {0} characters', s.maxLength) : '',
    s.format ? vscode.l10n.t('format {0}', s.format) : '',
    f.kind === 'multi' && f.minItems !== undefined ? vscode.l10n.t('pick at least {0}', f.minItems) : '',
    f.kind === 'multi' && f.maxItems !== undefined ? vscode.l10n.t('pick at most {0}', f.maxItems) : '',
  ].filter(Boolean);
  const name = f.required ? vscode.l10n.t('{0} (required)', f.title) : vscode.l10n.t('{0} (optional)', f.title);
  return `${name}${limits.length ? ` — ${limits.join(', ')}` : ''}${f.description ? `: ${f.description}` : ''}`;
}
