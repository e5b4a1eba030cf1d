import type { ErrorObject, ValidateFunction } from 'ajv';
import type * as CompilerModule from './compiler';

/** `kind: 'unusableSchema'`: the schema itself cannot be compiled, so nothing is known about the value (callers let it through). */
export type SchemaCheck = { ok: true } | { ok: false; message: string; errors?: unknown[]; kind?: 'unusableSchema' };

/** A validator as Ajv compiles it, or as its standalone code generates it (the settings' schemas). */
export type Validate = Pick<ValidateFunction, 'errors'> & ((value: unknown) => boolean);

/** Ajv's compiler, loaded on the first schema to compile; the extension's build makes it dist/schema.js (esbuild.js). */
function loadCompiler(): typeof CompilerModule {
  return require('./compiler') as typeof CompilerModule;
}

/** The outcome of one validation in the words the person reads: `path message` per error, joined. */
export function checkWith(validate: Validate, value: unknown): SchemaCheck {
  if (validate(value)) return { ok: true };
  const errors: ErrorObject[] = validate.errors ?? [];
  const message = errors
    .map(
      (e) =>
        `${e.instancePath || '(root)'} ${e.message ?? 'is invalid'}${e.params && 'allowedValues' in e.params ? `: ${(e.params.allowedValues as unknown[]).join(', ')}` : ''}`,
    )
    .join('; ');
  return { ok: false, message: message || 'does not match the schema', errors: [...errors] };
}

/**
 * Compiles JSON Schemas with ajv and caches the compiled validator per schema object, so a tool's
 * schema is compiled once for as long as its tool list is current.
 */
export class SchemaValidator {
  private readonly cache = new WeakMap<object, ValidateFunction | Error>();
  private compiler?: (schema: object) => ValidateFunction | Error;

  /** Validates `value`; a schema that cannot be compiled is reported as such, never thrown. */
  check(schema: object, value: unknown): SchemaCheck {
    const validate = this.compile(schema);
    if (validate instanceof Error) return { ok: false, kind: 'unusableSchema', message: `the schema cannot be used: ${validate.message}` };
    return checkWith(validate, value);
  }

  /** A compiled validator, or the reason the schema cannot be compiled. */
  compile(schema: object): ValidateFunction | Error {
    let compiled = this.cache.get(schema);
    if (!compiled) {
      this.compiler ??= loadCompiler().schemaCompiler();
      compiled = this.compiler(schema);
      this.cache.set(schema, compiled);
    }
    return compiled;
  }
}
