import * as vscode from 'vscode';
import {
  choicesOf,
  forDisplay,
  formatPropertyValue,
  fromTemplate,
  parsePropertyInput,
  primaryType,
  withIcon,
  type PropertySpec,
  type Redact,
  type ShownText,
} from '../../core';
import type { ArgumentAnswer, ArgumentStep } from '../common/answers';
import { createShownQuickPick, pickOne, type ShownPickItem } from '../window/quickPicks';
import type { HostUi } from '../ui/hostUi';
import { createTextInput } from '../window/windowInputs';

type Display = (text: string) => ShownText;

/**
 * The window's `HostUi.pickArgumentEntry` and `HostUi.askArgument`: a quick pick for how to give a
 * tool's arguments, and per argument a pick list (enums, booleans) or a typed input box with
 * validation, a default, Skip for an optional one and Back. The schema's texts are the server's:
 * shown through `redact` (the host's secrets) with their links broken.
 */
export function windowArgumentInput(redact: Redact): Pick<HostUi, 'pickArgumentEntry' | 'askArgument'> {
  const display = (text: string) => forDisplay(text, redact);
  return {
    pickArgumentEntry: async (server, tool) => {
      const picked = await pickOne(
        [
          {
            label: withIcon('list-ordered', fromTemplate(vscode.l10n.t('Step by step'))),
            description: fromTemplate(vscode.l10n.t('one input per argument')),
            entry: 'steps' as const,
          },
          {
            label: withIcon('json', fromTemplate(vscode.l10n.t('Edit as JSON'))),
            description: fromTemplate(vscode.l10n.t('the whole argument object in an editor')),
            entry: 'json' as const,
          },
        ],
        { title: display(`${server} › ${tool.name}`), placeHolder: fromTemplate(vscode.l10n.t('How do you want to give the arguments?')) },
      );
      return picked?.entry;
    },
    askArgument: (step) => {
      const choices = choicesOf(step.spec.schema);
      const texts = argumentTexts(step, redact);
      return choices ? pick(display, texts, step, choices) : type(texts, step);
    },
  };
}

/** What a step shows of the schema (the server's): its title, the argument's prompt (type, bounds, description), and its title or name as placeholder. */
export function argumentTexts(step: ArgumentStep, redact: Redact): { title: ShownText; prompt: ShownText; placeholder: ShownText } {
  return {
    title: forDisplay(step.title, redact),
    prompt: forDisplay(promptFor(step.spec), redact),
    placeholder: forDisplay(step.spec.schema.title ?? step.spec.name, redact),
  };
}

function promptFor(spec: PropertySpec): string {
  const s = spec.schema;
  const type = primaryType(s) ?? 'any';
  const bounds = [
    s.minimum !== undefined ? `≥ ${s.minimum}` : '',
    s.maximum !== undefined ? `≤ ${s.maximum}` : '',
    s.format ? vscode.l10n.t('format {0}', s.format) : '',
    s.pattern ? vscode.l10n.t('pattern {0}', s.pattern) : '',
  ]
    .filter(Boolean)
    .join(', ');
  const name = spec.required ? vscode.l10n.t('{0} (required)', spec.name) : vscode.l10n.t('{0} (optional: leave empty to skip)', spec.name);
  return `${name} — ${type}${bounds ? `, ${bounds}` : ''}${s.description ? `: ${s.description}` : ''}`;
}

type Texts = ReturnType<typeof argumentTexts>;

function pick(
  display: Display,
  texts: Texts,
  { spec, current, canGoBack }: ArgumentStep,
  choices: Array<{ label: string; value: unknown }>,
): Promise<ArgumentAnswer> {
  return new Promise((resolve) => {
    const qp = createShownQuickPick<ShownPickItem & { answer: ArgumentAnswer }>();
    qp.title = texts.title;
    qp.placeholder = texts.prompt;
    qp.ignoreFocusOut = true;
    const items = choices.map((c) => ({
      label: display(c.label),
      description: c.value === spec.schema.default ? fromTemplate(vscode.l10n.t('default')) : undefined,
      answer: { value: c.value } as ArgumentAnswer,
    }));
    if (!spec.required)
      items.push({
        label: withIcon('circle-slash', fromTemplate(vscode.l10n.t('Skip'))),
        description: fromTemplate(vscode.l10n.t('leave this argument out')),
        answer: 'skip',
      });
    qp.items = items;
    const active = items.find(
      (it) => typeof it.answer === 'object' && it.answer && (it.answer as { value: unknown }).value === (current ?? spec.schema.default),
    );
    if (active) qp.activeItems = [active];
    if (canGoBack) qp.buttons = [vscode.QuickInputButtons.Back];
    let done = false;
    const finish = (a: ArgumentAnswer) => {
      if (done) return;
      done = true;
      resolve(a);
      qp.dispose();
    };
    qp.onDidTriggerButton(() => finish('back'));
    qp.onDidAccept(() => finish(qp.selectedItems[0]?.answer));
    qp.onDidHide(() => finish(undefined));
    qp.show();
  });
}

function type(texts: Texts, { spec, current, canGoBack }: ArgumentStep): Promise<ArgumentAnswer> {
  return new Promise((resolve) => {
    const box = createTextInput();
    box.title = texts.title;
    box.prompt = texts.prompt;
    box.ignoreFocusOut = true;
    const start = current ?? spec.schema.default;
    box.value = start === undefined ? '' : formatPropertyValue(start);
    box.placeholder = texts.placeholder;
    if (canGoBack) box.buttons = [vscode.QuickInputButtons.Back];
    const validate = (text: string): string | undefined => {
      if (text === '' && !spec.required) return undefined;
      if (text === '' && primaryType(spec.schema) !== 'string') return vscode.l10n.t('This argument is required');
      const parsed = parsePropertyInput(spec.schema, text);
      return 'error' in parsed ? parsed.error : undefined;
    };
    // A required string left empty is more often a slip than meant: the first Enter asks, the second sends "".
    let emptyConfirmed = false;
    box.onDidChangeValue((v) => {
      emptyConfirmed = false;
      box.validationMessage = validate(v);
    });
    let done = false;
    const finish = (a: ArgumentAnswer) => {
      if (done) return;
      done = true;
      resolve(a);
      box.dispose();
    };
    box.onDidTriggerButton(() => finish('back'));
    box.onDidAccept(() => {
      const message = validate(box.value);
      if (message) {
        box.validationMessage = message;
        return;
      }
      if (box.value === '' && !spec.required) return finish('skip');
      if (box.value === '' && !emptyConfirmed) {
        emptyConfirmed = true;
        box.validationMessage = {
          message: vscode.l10n.t('{0} is empty. Press Enter again to send an empty string, or type a value.', spec.name),
          severity: vscode.InputBoxValidationSeverity.Warning,
        };
        return;
      }
      const parsed = parsePropertyInput(spec.schema, box.value);
      if ('value' in parsed) finish({ value: parsed.value });
    });
    box.onDidHide(() => finish(undefined));
    box.show();
  });
}
