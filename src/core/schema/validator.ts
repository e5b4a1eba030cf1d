import Ajv, { type ValidateFunction } from 'ajv';
import Ajv2019 from 'ajv/dist/2019';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

/** `kind: 'unusableSchema'`: the schema itself cannot be compiled, so nothing is known about the value (callers let it through). */
export type SchemaCheck = { ok: true } | { ok: false; message: string; errors?: unknown[]; kind?: 'unusableSchema' };

type Dialect = 'draft-07' | '2019-09' | '2020-12';

function makeAjv(dialect: Dialect) {
  const options = { allErrors: true, strict: false, validateFormats: true } as const;
  const ajv = dialect === '2020-12' ? new Ajv2020(options) : dialect === '2019-09' ? new Ajv2019(options) : new Ajv(options);
  addFormats(ajv);
  return ajv;
}

/**
 * Dialect from `$schema`. MCP 2025-11-25 says a schema without `$schema` is 2020-12; draft-07
 * and older schemas name themselves, and for draft-04/06 the draft-07 validator is the closest.
 */
function dialectOf(schema: object): Dialect {
  const declared = (schema as { $schema?: unknown }).$schema;
  if (typeof declared !== 'string') return '2020-12';
  if (declared.includes('2020-12')) return '2020-12';
  if (declared.includes('2019-09')) return '2019-09';
  return 'draft-07';
}

/**
 * Compiles JSON Schemas with ajv and caches the compiled validator per schema object, so a tool's
 * schema is compiled once for as long as its tool list is current.
 */
export class SchemaValidator {
  private readonly engines = new Map<Dialect, ReturnType<typeof makeAjv>>();
  private readonly cache = new WeakMap<object, ValidateFunction | Error>();

  /** Validates `value`; a schema that cannot be compiled is reported as such, never thrown. */
  check(schema: object, value: unknown): SchemaCheck {
    const validate = this.compile(schema);
    if (validate instanceof Error) return { ok: false, kind: 'unusableSchema', message: `the schema cannot be used: ${validate.message}` };
    if (validate(value)) return { ok: true };
    const errors = validate.errors ?? [];
    const message = errors
      .map(
        (e) =>
          `${e.instancePath || '(root)'} ${e.message ?? 'is invalid'}${e.params && 'allowedValues' in e.params ? `: ${(e.params.allowedValues as unknown[]).join(', ')}` : ''}`,
      )
      .join('; ');
    return { ok: false, message: message || 'does not match the schema', errors: [...errors] };
  }

  /** A compiled validator, or the reason the schema cannot be compiled. */
  compile(schema: object): ValidateFunction | Error {
    let compiled = this.cache.get(schema);
    if (compiled) return compiled;
    const dialect = dialectOf(schema);
    let engine = this.engines.get(dialect);
    if (!engine) {
      engine = makeAjv(dialect);
      this.engines.set(dialect, engine);
    }
    try {
      const { $schema, $id, ...rest } = schema as { $schema?: unknown; $id?: unknown };
      // $schema picked the engine; $id is dropped so two servers with the same id cannot collide.
      void $schema;
      void $id;
      compiled = engine.compile(rest);
    } catch (e) {
      compiled = e instanceof Error ? e : new Error(String(e));
    }
    this.cache.set(schema, compiled);
    return compiled;
  }
}
