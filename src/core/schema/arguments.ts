import type { JsonSchemaObject } from '../protocol/types';
import { SchemaValidator } from './validator';

export interface PropertySpec {
  name: string;
  schema: PropertySchema;
  required: boolean;
}

export interface PropertySchema {
  type?: string | string[];
  title?: string;
  description?: string;
  default?: unknown;
  enum?: unknown[];
  oneOf?: Array<{ const?: unknown; title?: string }>;
  anyOf?: Array<{ const?: unknown; title?: string }>;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  pattern?: string;
  format?: string;
  minLength?: number;
  maxLength?: number;
  [key: string]: unknown;
}

/** The properties to ask for, required ones first, each group in schema order. */
export function orderedProperties(schema: JsonSchemaObject | undefined): PropertySpec[] {
  const props = Object.entries((schema?.properties ?? {}) as Record<string, PropertySchema>);
  const required = new Set(schema?.required ?? []);
  const specs = props.map(([name, s]) => ({ name, schema: s ?? {}, required: required.has(name) }));
  return [...specs.filter((s) => s.required), ...specs.filter((s) => !s.required)];
}

/** An argument object holding every default the schema gives. */
export function defaultArguments(schema: JsonSchemaObject | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const { name, schema: s } of orderedProperties(schema)) if (s.default !== undefined) out[name] = s.default;
  return out;
}

/**
 * The argument object a person starts from when editing JSON: every required key (its default,
 * else its first example, const or choice, else an empty value of its type) and every default.
 */
export function templateArguments(schema: JsonSchemaObject | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const { name, schema: s, required } of orderedProperties(schema)) {
    if (s.default !== undefined) out[name] = s.default;
    else if (required) out[name] = sampleValue(s);
  }
  return out;
}

function sampleValue(s: PropertySchema): unknown {
  if (Array.isArray(s.examples) && s.examples.length) return s.examples[0];
  if ('const' in s) return s.const;
  if (primaryType(s) === 'boolean') return false;
  const choices = choicesOf(s);
  if (choices?.length) return choices[0].value;
  switch (primaryType(s)) {
    case 'number':
    case 'integer':
      return typeof s.minimum === 'number' ? s.minimum : 0;
    case 'array':
      return [];
    case 'object':
      return {};
    case 'null':
      return null;
    default:
      return '';
  }
}

/** The main type of a property: the first non-null one. */
export function primaryType(s: PropertySchema): string | undefined {
  if (Array.isArray(s.type)) return s.type.find((t) => t !== 'null');
  if (s.type) return s.type;
  if (s.enum) return typeof s.enum[0] === 'number' ? 'number' : 'string';
  return undefined;
}

/** Choices for an enum, a titled enum (oneOf/anyOf of consts) or a boolean; undefined for free input. */
export function choicesOf(s: PropertySchema): Array<{ label: string; value: unknown }> | undefined {
  if (s.enum) {
    // The legacy `enumNames` (pre-2025-11-25 elicitation) titles the values in order.
    const names = Array.isArray(s.enumNames) ? s.enumNames : [];
    return s.enum.map((v, i) => ({ label: typeof names[i] === 'string' ? (names[i] as string) : String(v), value: v }));
  }
  const titled = s.oneOf ?? s.anyOf;
  if (titled && titled.length && titled.every((o) => o && 'const' in o))
    return titled.map((o) => ({ label: o.title ?? String(o.const), value: o.const }));
  if (primaryType(s) === 'boolean')
    return [
      { label: 'true', value: true },
      { label: 'false', value: false },
    ];
  return undefined;
}

const validator = new SchemaValidator();

/**
 * Turns what a person typed into the property's value, or explains why it cannot: numbers and
 * integers parsed and bounded, strings checked by pattern and format, arrays and objects as JSON.
 */
export function parsePropertyInput(s: PropertySchema, text: string): { value: unknown } | { error: string } {
  const type = primaryType(s);
  let value: unknown;
  switch (type) {
    case 'number':
    case 'integer': {
      const t = text.trim();
      if (t === '' || Number.isNaN(Number(t))) return { error: `Enter ${type === 'integer' ? 'a whole number' : 'a number'}` };
      value = Number(t);
      break;
    }
    case 'boolean':
      if (!/^(true|false)$/i.test(text.trim())) return { error: 'Enter true or false' };
      value = text.trim().toLowerCase() === 'true';
      break;
    case 'array':
    case 'object':
      try {
        value = JSON.parse(text);
      } catch (e) {
        return { error: `Enter JSON (${(e as Error).message})` };
      }
      break;
    case 'null':
      value = null;
      break;
    default:
      value = text;
  }
  const check = validator.check(s as object, value);
  if (!check.ok) return { error: check.message.replace(/^\(root\) /, '') };
  return { value };
}

/** How a value is shown back in an input box. */
export function formatPropertyValue(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}
