// Writes the schema-derived parts of package.json's `contributes` from src/core/servers/schema.ts,
// so settings IntelliSense and the core's validation can never disagree. Run by `npm run build`.
const fs = require('node:fs');
const path = require('node:path');
require('tsx/cjs');
const { INPUTS_SETTING_SCHEMA, SERVERS_SETTING_SCHEMA } = require('../src/core/servers/schema.ts');

const file = path.join(__dirname, '..', 'package.json');
const pkg = JSON.parse(fs.readFileSync(file, 'utf8'));
const props = pkg.contributes.configuration.properties;
const wanted = {
  'mcpHost.servers': { ...SERVERS_SETTING_SCHEMA, scope: 'resource' },
  'mcpHost.inputs': { ...INPUTS_SETTING_SCHEMA, scope: 'resource' },
};
let changed = false;
for (const [key, next] of Object.entries(wanted)) {
  if (JSON.stringify(props[key]) !== JSON.stringify(next)) {
    props[key] = next;
    changed = true;
    console.log(`package.json: ${key} schema updated`);
  }
}
if (changed) fs.writeFileSync(file, `${JSON.stringify(pkg, null, 2)}\n`);
