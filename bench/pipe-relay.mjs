#!/usr/bin/env node
// The hop floor of `mcp-host serve` (bench/serve.ts): a process of the same shape, stdio in front and a
// stdio server behind, that starts the server and pipes the bytes both ways, deciding nothing.
//   node bench/pipe-relay.mjs <command> [args...]
import { spawn } from 'node:child_process';

const child = spawn(process.argv[2], process.argv.slice(3), { stdio: ['pipe', 'pipe', 'inherit'] });
process.stdin.pipe(child.stdin);
child.stdout.pipe(process.stdout);
process.stdin.on('end', () => child.stdin.end());
child.on('exit', (code) => process.exit(code ?? 0));
