#!/usr/bin/env node
// `npm run soak`: builds bench/soak.ts and runs it with --expose-gc; exits non-zero when a target fails.
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildBench } from './build.mjs';

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
await buildBench(['soak']);
const run = spawnSync(process.execPath, ['--expose-gc', path.join(root, '.bench', 'soak.js')], { stdio: 'inherit' });
process.exit(run.status ?? 1);
