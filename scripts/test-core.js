// `npm run test:core [-- <file|glob>…] [mocha options]`: the plain-Node tests (test/core), all of them or
// the files named, with .mocharc.json's settings. `npx mocha <file>` runs every suite, because Mocha adds
// the spec of .mocharc.json to the files it is given; this runs Mocha without that spec when files are named.
//   npm run test:core -- test/core/ndjson.test.ts
//   npm run test:core -- --grep 'redirect'
//   npm run test:core -- test/core/http.test.ts --grep 'session'
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const root = path.join(__dirname, '..');
const rc = JSON.parse(fs.readFileSync(path.join(root, '.mocharc.json'), 'utf8'));
/** Mocha options that take a value, so the value is not read as a file. */
const WITH_VALUE = new Set([
  '-g',
  '--grep',
  '-f',
  '--fgrep',
  '-t',
  '--timeout',
  '-s',
  '--slow',
  '-R',
  '--reporter',
  '-O',
  '--reporter-option',
  '--retries',
  '-j',
  '--jobs',
  '-r',
  '--require',
  '-u',
  '--ui',
  '--ignore',
  '--extension',
]);
// npm runs scripts in the package root; a relative file is relative to where the command was typed.
const cwd = process.env.INIT_CWD || process.cwd();

const options = [];
const specs = [];
const args = process.argv.slice(2);
for (let i = 0; i < args.length; i++) {
  const a = args[i];
  if (a.startsWith('-')) {
    options.push(a);
    if (WITH_VALUE.has(a) && i + 1 < args.length) options.push(args[++i]);
  } else specs.push(path.resolve(cwd, a));
}

const mocha = path.join(root, 'node_modules', 'mocha', 'bin', 'mocha.js');
const settings = [
  '--no-config',
  ...rc.require.flatMap((r) => ['--require', r]),
  ...rc.extension.flatMap((e) => ['--extension', e]),
  '--timeout',
  String(rc.timeout),
  '--reporter',
  rc.reporter,
];
if (rc.exit) settings.push('--exit');
const run = spawnSync(process.execPath, [mocha, ...settings, ...options, ...(specs.length ? specs : rc.spec)], {
  cwd: root,
  stdio: 'inherit',
});
process.exit(run.status ?? 1);
