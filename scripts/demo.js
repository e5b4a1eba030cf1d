// The demo for now: the command-line client against the default server
// (@modelcontextprotocol/server-everything over stdio), printing its tools, resources and prompts.
const { spawnSync } = require('node:child_process');
const path = require('node:path');

const root = path.join(__dirname, '..');
const server = path.join(root, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
const commandLine = `${JSON.stringify(process.execPath)} ${JSON.stringify(server)} stdio`;

function run(verb) {
  const r = spawnSync(process.execPath, [path.join(root, 'dist', 'cli.js'), '--stdio', commandLine, verb], { encoding: 'utf8' });
  if (r.status !== 0) {
    process.stderr.write(r.stderr);
    process.exit(r.status ?? 1);
  }
  return JSON.parse(r.stdout);
}

const info = run('info');
console.log(
  `Connected to ${info.serverInfo.title ?? info.serverInfo.name} ${info.serverInfo.version} (protocol ${info.protocolVersion})\n`,
);
for (const [title, verb, key] of [
  ['Tools', 'tools', 'name'],
  ['Resources', 'resources', 'uri'],
  ['Resource templates', 'templates', 'uriTemplate'],
  ['Prompts', 'prompts', 'name'],
]) {
  const items = run(verb);
  console.log(`${title} (${items.length}):`);
  for (const item of items) console.log(`  ${item[key]}${item.description ? ` — ${item.description.split('\n')[0]}` : ''}`);
  console.log();
}
