// Runs inside the real extension host (VS Code's extensionTestsPath hook). run-vscode-tests.js bundles
// this file with every test/vscode/*.test.ts and Mocha into one CommonJS file and calls run() through
// the generated entry, which passes each suite as a thunk so Mocha's globals exist before it loads.
// Counts go to MCP_HOST_TEST_RESULTS (JSON) because the page only gets an exit code back.
import * as fs from 'node:fs';
import { findSourceMap } from 'node:module';
import * as path from 'node:path';
import { heldMountPoints, PROTECTED_NAMES } from '../../src/core/servers/sandbox/protected';
import { thisHost } from '../../src/core/servers/sandbox/reach';
// Mocha 12's package entry is ESM; its CommonJS build bundles cleanly.
const Mocha = require('mocha/lib/mocha.cjs');

export interface SuiteModule {
  file: string;
  load: () => unknown;
}

interface Results {
  started: string;
  finished?: string;
  passed: number;
  failed: number;
  pending: number;
  failures: { title: string; error: string }[];
}

function write(results: Results): void {
  const file = process.env.MCP_HOST_TEST_RESULTS;
  if (file) fs.writeFileSync(file, JSON.stringify(results, null, 2));
}

/**
 * The extension host installs its own Error.prepareStackTrace, so Node does not apply source maps to
 * stacks: map this bundle's frames back to the .ts sources with the inline map (loaded by out/index.js
 * after process.setSourceMapsEnabled(true)).
 */
function mapStack(stack: string): string {
  const map = findSourceMap(__filename);
  if (!map) return stack;
  const repo = process.env.MCP_HOST_REPO || process.cwd();
  // Frames come both absolute and relative to the server's cwd.
  const frame = new RegExp(`[^\\s(]*${path.basename(__filename).replace('.', '\\.')}:(\\d+):(\\d+)`, 'g');
  return stack
    .split('\n')
    .map((line) =>
      line.replace(frame, (m, l: string, c: string) => {
        const e = map.findEntry(Number(l) - 1, Number(c) - 1) as {
          originalSource?: string;
          originalLine?: number;
          originalColumn?: number;
        };
        if (!e || !e.originalSource) return m;
        const abs = e.originalSource.startsWith('file://')
          ? new URL(e.originalSource).pathname
          : path.resolve(path.dirname(__filename), e.originalSource);
        return `${path.relative(repo, abs)}:${(e.originalLine ?? 0) + 1}:${(e.originalColumn ?? 0) + 1}`;
      }),
    )
    .filter((line) => !/node_modules\/mocha\/|node:internal\/(timers|process)/.test(line))
    .join('\n');
}

interface SuiteLike {
  title: string;
  afterAll(title: string, fn: (this: { timeout(ms: number): void }) => Promise<void>): void;
}

/**
 * After each suite file's top suite: a protected name (src/core/servers/sandbox/protected.ts) at the
 * top of the workspace folder that was not there before and that no running sandbox binds fails
 * that suite, named. The sandbox suite checks that a launch leaves nothing behind, which an earlier
 * suite's leftovers would hide; a suite removes what it made.
 */
function failSuitesLeavingProtectedNames(top: SuiteLike[]): void {
  const folder = process.env.MCP_HOST_WORKSPACE;
  if (!folder) return;
  const registry = path.join(thisHost().sandboxCache!, 'mounts');
  const names = [...new Set([...PROTECTED_NAMES.map((p) => p.name.split('/')[0]), '.git', 'HEAD'])];
  const present = () => {
    const held = heldMountPoints(registry);
    return names
      .filter((name) => fs.existsSync(path.join(folder, name)))
      .map((name) => ({ name, held: held.has(path.join(folder, name)) }));
  };
  const unheld = () =>
    present()
      .filter((p) => !p.held)
      .map((p) => p.name);
  // Names the folder holds that no suite is blamed for: those it started with, and those a suite left that were named once.
  // One a running sandbox binds at a suite's end is not known yet: if it outlives the sandbox, the suite then is named.
  let known = new Set(present().map((p) => p.name));
  for (const suite of top)
    suite.afterAll('no protected name left in the workspace folder', async function () {
      this.timeout(30_000);
      const left = () => unheld().filter((name) => !known.has(name));
      // A sandbox's release runs on a little after its server left the registry.
      for (let i = 0; i < 100 && left().length; i++) await new Promise((resolve) => setTimeout(resolve, 100));
      const found = left();
      known = new Set(
        present()
          .filter((p) => known.has(p.name) || !p.held)
          .map((p) => p.name),
      );
      if (found.length) throw new Error(`"${suite.title}" left ${found.join(', ')} in the workspace folder (${folder})`);
    });
}

export async function runSuites(suites: SuiteModule[]): Promise<void> {
  const results: Results = { started: new Date().toISOString(), passed: 0, failed: 0, pending: 0, failures: [] };
  write(results);
  const mocha = new Mocha({
    ui: 'bdd',
    reporter: 'spec',
    color: false,
    timeout: Number(process.env.MCP_HOST_TEST_TIMEOUT || 60_000),
    slow: 5_000,
    grep: process.env.MCP_HOST_TEST_GREP || undefined,
  });
  for (const s of suites) {
    mocha.suite.emit('pre-require', globalThis, s.file, mocha);
    try {
      s.load();
    } catch (e) {
      // A suite that throws while loading is a failure, not a silent skip.
      results.failed++;
      results.failures.push({ title: `loading ${s.file}`, error: String((e as Error)?.stack ?? e) });
    }
    mocha.suite.emit('require', undefined, s.file, mocha);
    mocha.suite.emit('post-require', globalThis, s.file, mocha);
  }
  failSuitesLeavingProtectedNames(mocha.suite.suites as SuiteLike[]);
  await new Promise<void>((resolve) => {
    const runner = mocha.run(() => resolve());
    // Before the reporter prints it: stacks in terms of test/vscode/*.ts.
    runner.prependListener('fail', (_test: unknown, err: Error) => {
      if (err && typeof err.stack === 'string') {
        try {
          err.stack = mapStack(err.stack);
        } catch {
          /* keep the bundle's stack */
        }
      }
    });
    runner.on('pass', () => {
      results.passed++;
    });
    runner.on('pending', () => {
      results.pending++;
    });
    runner.on('fail', (test: { fullTitle(): string }, err: Error) => {
      results.failed++;
      results.failures.push({ title: test.fullTitle(), error: String(err?.stack ?? err) });
    });
  });
  results.finished = new Date().toISOString();
  write(results);
  console.log(`extension-host mocha: ${results.passed} passed, ${results.failed} failed, ${results.pending} pending`);
  if (results.failed > 0) throw new Error(`${results.failed} extension-host test(s) failed`);
  if (results.passed === 0) throw new Error('no extension-host test ran');
}
