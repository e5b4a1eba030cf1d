#!/usr/bin/env node
// `npm run soak [-- options]`: builds bench/soak.ts and runs it with --expose-gc, passing the options on
// (bench/soak.ts lists them); exits non-zero when a check fails.
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildBench } from './build.mjs';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
await buildBench(['soak']);
const run = spawnSync(process.execPath, ['--expose-gc', path.join(root, '.bench', 'soak.js'), ...process.argv.slice(2)], {
  stdio: 'inherit',
});
process.exit(run.status ?? 1);
