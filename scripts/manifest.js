// Writes the schema-derived parts of package.json's `contributes` from src/core/servers/schema.ts,
// so settings IntelliSense and the core's validation can never disagree. Run by `npm run build`.
// The schemas' texts go to package.nls.json (keys `config.servers.*`, `config.inputs.*`) and
// package.json gets `%key%` placeholders, so package.nls.<locale>.json can translate them.
const fs = require('node:fs');
const path = require('node:path');
require('tsx/cjs');
const { INPUTS_SETTING_SCHEMA, SERVERS_SETTING_SCHEMA } = require('../src/core/servers/schema.ts');
const { localizeSchema } = require('./nls');

const ROOT = path.join(__dirname, '..');
const read = (name) => JSON.parse(fs.readFileSync(path.join(ROOT, name), 'utf8'));
const write = (name, value) => fs.writeFileSync(path.join(ROOT, name), `${JSON.stringify(value, null, 2)}\n`);

const GENERATED = {
  'mcpHost.servers': ['config.servers', SERVERS_SETTING_SCHEMA],
  'mcpHost.inputs': ['config.inputs', INPUTS_SETTING_SCHEMA],
};

const pkg = read('package.json');
const nls = read('package.nls.json');
const props = pkg.contributes.configuration.properties;
// Hand-written keys first, in their order; the generated ones after them, made afresh.
const prefixes = Object.values(GENERATED).map(([prefix]) => `${prefix}.`);
const texts = Object.fromEntries(Object.entries(nls).filter(([key]) => !prefixes.some((p) => key.startsWith(p))));
for (const [setting, [prefix, schema]] of Object.entries(GENERATED)) {
  const next = { ...localizeSchema(schema, prefix, texts), scope: 'resource' };
  if (JSON.stringify(props[setting]) !== JSON.stringify(next)) {
    props[setting] = next;
    console.log(`package.json: ${setting} schema updated`);
  }
}
if (JSON.stringify(pkg) !== JSON.stringify(read('package.json'))) write('package.json', pkg);
if (JSON.stringify(texts) !== JSON.stringify(nls)) {
  write('package.nls.json', texts);
  console.log('package.nls.json: settings texts updated');
}
// The core validates entries with code generated from the same schema (no Ajv at activation).
require('./settings-validators')
  .write()
  .catch((error) => {
    console.error(error);
    process.exit(1);
  });
