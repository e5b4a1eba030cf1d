import * as vscode from 'vscode';
import {
  choicesOf,
  forDisplay,
  formatPropertyValue,
  fromTemplate,
  nothingToRedact,
  orderedProperties,
  parsePropertyInput,
  primaryType,
  withIcon,
  type JsonSchemaObject,
  type PropertySpec,
} from '../../core';
import { createShownQuickPick, type ShownPickItem } from '../quickPicks';
import { createTextInput } from '../windowInputs';

/** A schema's titles, descriptions and enum labels (the server's), as a picker shows them. */
const display = (text: string) => forDisplay(text, nothingToRedact);

const SKIP = Symbol('skip');
const BACK = Symbol('back');
type StepAnswer = { value: unknown } | typeof SKIP | typeof BACK | undefined;

/**
 * Asks for each property of an input schema in turn (required first, marked), with defaults,
 * pick lists for enums and booleans, typed validation, skipping of optional ones and Back.
 * Resolves undefined when the person cancels.
 */
export async function askArguments(
  title: string,
  schema: JsonSchemaObject | undefined,
  initial: Record<string, unknown> = {},
): Promise<Record<string, unknown> | undefined> {
  const specs = orderedProperties(schema);
  const args: Record<string, unknown> = { ...initial };
  for (let i = 0; i < specs.length;) {
    const spec = specs[i];
    const answer = await askOne(`${title} (${i + 1}/${specs.length})`, spec, args[spec.name], i > 0);
    if (answer === undefined) return undefined;
    if (answer === BACK) {
      i--;
      continue;
    }
    if (answer === SKIP) delete args[spec.name];
    else args[spec.name] = answer.value;
    i++;
  }
  return args;
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

function askOne(title: string, spec: PropertySpec, current: unknown, canGoBack: boolean): Promise<StepAnswer> {
  const choices = choicesOf(spec.schema);
  return choices ? pick(title, spec, choices, current, canGoBack) : type(title, spec, current, canGoBack);
}

function pick(
  title: string,
  spec: PropertySpec,
  choices: Array<{ label: string; value: unknown }>,
  current: unknown,
  canGoBack: boolean,
): Promise<StepAnswer> {
  return new Promise((resolve) => {
    const qp = createShownQuickPick<ShownPickItem & { answer: StepAnswer }>();
    qp.title = display(title);
    qp.placeholder = display(promptFor(spec));
    qp.ignoreFocusOut = true;
    const items = choices.map((c) => ({
      label: display(c.label),
      description: c.value === spec.schema.default ? fromTemplate(vscode.l10n.t('default')) : undefined,
      answer: { value: c.value } as StepAnswer,
    }));
    if (!spec.required)
      items.push({
        label: withIcon('circle-slash', fromTemplate(vscode.l10n.t('Skip'))),
        description: fromTemplate(vscode.l10n.t('leave this argument out')),
        answer: SKIP,
      });
    qp.items = items;
    const active = items.find(
      (it) => typeof it.answer === 'object' && it.answer && (it.answer as { value: unknown }).value === (current ?? spec.schema.default),
    );
    if (active) qp.activeItems = [active];
    if (canGoBack) qp.buttons = [vscode.QuickInputButtons.Back];
    let done = false;
    const finish = (a: StepAnswer) => {
      if (done) return;
      done = true;
      resolve(a);
      qp.dispose();
    };
    qp.onDidTriggerButton(() => finish(BACK));
    qp.onDidAccept(() => finish(qp.selectedItems[0]?.answer));
    qp.onDidHide(() => finish(undefined));
    qp.show();
  });
}

function type(title: string, spec: PropertySpec, current: unknown, canGoBack: boolean): Promise<StepAnswer> {
  return new Promise((resolve) => {
    const box = createTextInput();
    box.title = title;
    box.prompt = promptFor(spec);
    box.ignoreFocusOut = true;
    const start = current ?? spec.schema.default;
    box.value = start === undefined ? '' : formatPropertyValue(start);
    box.placeholder = spec.schema.title ?? spec.name;
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
    const finish = (a: StepAnswer) => {
      if (done) return;
      done = true;
      resolve(a);
      box.dispose();
    };
    box.onDidTriggerButton(() => finish(BACK));
    box.onDidAccept(() => {
      const message = validate(box.value);
      if (message) {
        box.validationMessage = message;
        return;
      }
      if (box.value === '' && !spec.required) return finish(SKIP);
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
