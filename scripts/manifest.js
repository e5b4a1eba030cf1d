// Writes the schema-derived parts of package.json's `contributes` from src/core/servers/schema.ts,
// so settings IntelliSense and the core's validation can never disagree. Run by `npm run build`.
const fs = require('node:fs');
const path = require('node:path');
require('tsx/cjs');
const { SERVERS_SETTING_SCHEMA } = require('../src/core/servers/schema.ts');

const file = path.join(__dirname, '..', 'package.json');
const pkg = JSON.parse(fs.readFileSync(file, 'utf8'));
const props = pkg.contributes.configuration.properties;
const next = { ...SERVERS_SETTING_SCHEMA, scope: 'resource' };
if (JSON.stringify(props['mcpHost.servers']) !== JSON.stringify(next)) {
  props['mcpHost.servers'] = next;
  fs.writeFileSync(file, `${JSON.stringify(pkg, null, 2)}\n`);
  console.log('package.json: mcpHost.servers schema updated');
}
