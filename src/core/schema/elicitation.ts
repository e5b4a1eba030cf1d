import type { ElicitResult, JsonSchemaObject } from '../protocol/types';
import { choicesOf, orderedProperties, primaryType, type PropertySchema } from './arguments';
import { SchemaValidator, type SchemaCheck } from './validator';

export type ElicitationValue = string | number | boolean | string[];
export type ElicitationContent = NonNullable<ElicitResult['content']>;
export interface Choice {
  label: string;
  value: string | number | boolean;
}

interface FieldBase {
  name: string;
  /** The schema's `title`, else the property name. */
  title: string;
  description?: string;
  required: boolean;
  schema: PropertySchema;
}

/** One field of an elicitation form, by the kinds the 2025-11-25 spec allows. */
export type FormField =
  | (FieldBase & { kind: 'choice'; choices: Choice[] })
  | (FieldBase & { kind: 'multi'; choices: Choice[]; minItems?: number; maxItems?: number })
  | (FieldBase & { kind: 'boolean' })
  | (FieldBase & { kind: 'number' | 'integer' })
  | (FieldBase & { kind: 'string' });

/**
 * The choices of a multi-select field: `type: array` whose `items` are an `enum` (untitled) or
 * an `anyOf`/`oneOf` of `{const, title}` (titled); undefined for any other schema.
 */
export function multiChoicesOf(s: PropertySchema): Choice[] | undefined {
  if (primaryType(s) !== 'array' || !s.items || typeof s.items !== 'object') return undefined;
  const choices = choicesOf(s.items as PropertySchema);
  return choices && primaryType(s.items as PropertySchema) !== 'boolean' ? (choices as Choice[]) : undefined;
}

/** The fields of a requested schema, required ones first, each with what it takes to ask it. */
export function formFields(schema: JsonSchemaObject | undefined): FormField[] {
  return orderedProperties(schema).map(({ name, schema: s, required }) => {
    const base: FieldBase = {
      name,
      title: typeof s.title === 'string' && s.title ? s.title : name,
      description: s.description,
      required,
      schema: s,
    };
    const multi = multiChoicesOf(s);
    if (multi)
      return { ...base, kind: 'multi', choices: multi, minItems: numberOrUndefined(s.minItems), maxItems: numberOrUndefined(s.maxItems) };
    const type = primaryType(s);
    if (type === 'boolean') return { ...base, kind: 'boolean' };
    const choices = choicesOf(s);
    if (choices) return { ...base, kind: 'choice', choices: choices as Choice[] };
    if (type === 'number' || type === 'integer') return { ...base, kind: type };
    return { ...base, kind: 'string' };
  });
}

/** The values a form starts from: the schema's defaults, for every field that has one. */
export function formDefaults(fields: FormField[]): ElicitationContent {
  const out: ElicitationContent = {};
  for (const f of fields) if (isElicitationValue(f.schema.default)) out[f.name] = f.schema.default;
  return out;
}

/** The values of a multi-select that start picked: the current answer, else the default. */
export function pickedValues(field: FormField & { kind: 'multi' }, current: unknown): unknown[] {
  const start = current ?? field.schema.default;
  return Array.isArray(start) ? start : [];
}

/** Why a multi-select answer has too few or too many values, or undefined when it fits. */
export function multiSelectProblem(field: FormField & { kind: 'multi' }, count: number): string | undefined {
  if (field.minItems !== undefined && count < field.minItems) return `pick at least ${field.minItems}`;
  if (field.maxItems !== undefined && count > field.maxItems) return `pick at most ${field.maxItems}`;
  return undefined;
}

/** A value as the person reads it in the review: choice titles instead of their constants. */
export function describeFieldValue(field: FormField, value: unknown): string {
  if (value === undefined) return '';
  const label = (v: unknown) =>
    ('choices' in field ? field.choices.find((c) => c.value === v)?.label : undefined) ?? (typeof v === 'string' ? v : JSON.stringify(v));
  return Array.isArray(value) ? value.map(label).join(', ') : label(value);
}

const validator = new SchemaValidator();

/**
 * Checks an answer against the server's `requestedSchema` (ajv, with formats) before it is
 * sent, and that it holds only the flat values the spec allows.
 */
export function checkElicitationContent(schema: JsonSchemaObject | undefined, content: ElicitationContent): SchemaCheck {
  for (const [name, value] of Object.entries(content))
    if (!isElicitationValue(value)) return { ok: false, message: `/${name} is not a string, number, boolean or list of strings` };
  return validator.check(schema ?? { type: 'object' }, content);
}

function isElicitationValue(v: unknown): v is ElicitationValue {
  return (
    typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' || (Array.isArray(v) && v.every((x) => typeof x === 'string'))
  );
}

function numberOrUndefined(v: unknown): number | undefined {
  return typeof v === 'number' ? v : undefined;
}
