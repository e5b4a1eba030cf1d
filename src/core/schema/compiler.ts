import Ajv, { type ValidateFunction } from 'ajv';
import Ajv2019 from 'ajv/dist/2019';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

/**
 * Ajv's compiler with its formats: a third of what the extension would otherwise load at activation,
 * so dist/extension.js requires it as dist/schema.js on the first schema a server sends (esbuild.js).
 * The settings' own schemas never need it: their validators are generated (src/core/servers/entryValidators.ts).
 */
type Dialect = 'draft-07' | '2019-09' | '2020-12';

function makeAjv(dialect: Dialect): Ajv {
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
 * A compile function with engines of its own: Ajv keeps every schema it compiled, so they go away
 * with the one who made the function (a client's tool schemas with the client).
 */
export function schemaCompiler(): (schema: object) => ValidateFunction | Error {
  const engines = new Map<Dialect, Ajv>();
  return (schema) => {
    const dialect = dialectOf(schema);
    let engine = engines.get(dialect);
    if (!engine) {
      engine = makeAjv(dialect);
      engines.set(dialect, engine);
    }
    try {
      const { $schema, $id, ...rest } = schema as { $schema?: unknown; $id?: unknown };
      // $schema picked the engine; $id is dropped so two servers with the same id cannot collide.
      void $schema;
      void $id;
      return engine.compile(rest);
    } catch (e) {
      return e instanceof Error ? e : new Error(String(e));
    }
  };
}
