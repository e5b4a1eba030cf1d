#!/usr/bin/env node
// `npm run test:electron`: the extension-host suites (test/vscode/*.test.ts) in desktop VS Code, downloaded
// by @vscode/test-electron, instead of the VS Code server that run-vscode-tests.js drives in Chromium.
// Needs access to VS Code's download site and a display (xvfb-run on a headless Linux box). The extension
// is loaded from this checkout (npm run build), next to the same test-runner extension the harness uses.
// Prints `electron: N passed, M failed` last.
//
// `--prepare` only lays out the runner extension, the workspace and an env file in .vscode-test/debug/ for
// the "Extension Tests" launch configuration (.vscode/launch.json), which runs the suites under the debugger.
//
// Environment: VSCODE_VERSION (default: stable; e.g. 1.90.2 for the oldest engines.vscode admits),
//   MCP_HOST_TEST_TIMEOUT, MCP_HOST_TEST_GREP.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const h = require('./lib');
const { buildRunnerExtension, listTests, prepareSuiteRun } = require('./run-vscode-tests');

/** The runner extension (the suites, bundled), a scratch workspace and the suites' environment, under base. */
async function prepare(base) {
  const files = listTests('test/vscode', /\.test\.ts$/);
  const runnerExt = path.join(base, 'runner-ext');
  const testsEntry = await buildRunnerExtension(files, runnerExt);
  const { workspaceFile, resultsFile, env } = prepareSuiteRun(base, 'electron', process.env.MCP_HOST_TEST_GREP);
  return { runnerExt, testsEntry, workspaceFile, resultsFile, env };
}

async function main() {
  if (process.argv.includes('--prepare')) {
    const base = path.join(h.REPO, '.vscode-test', 'debug');
    fs.rmSync(base, { recursive: true, force: true });
    const { env } = await prepare(base);
    fs.writeFileSync(
      path.join(base, 'env'),
      Object.entries(env)
        .map(([k, v]) => `${k}=${v}`)
        .join('\n') + '\n',
    );
    console.log(`extension tests laid out in ${path.relative(h.REPO, base)}`);
    return;
  }
  const { downloadAndUnzipVSCode, runTests } = require(path.join(h.REPO, 'node_modules', '@vscode', 'test-electron'));
  const version = process.env.VSCODE_VERSION || 'stable';
  const base = h.scratch('electron');
  const cache = path.join(h.HARNESS_DIR, 'vscode-electron');
  let executable;
  try {
    executable = await downloadAndUnzipVSCode({ version, cachePath: cache, timeout: 60_000 });
  } catch (e) {
    console.log(`electron: could not download VS Code ${version} (${e.message.split('\n')[0]}).`);
    console.log("npm run test:electron needs access to VS Code's download site. Without it, run the same suites in");
    console.log('the VS Code server from the npm registry instead: node test/harness/run-vscode-tests.js --only exthost');
    process.exit(2);
  }
  h.run('npm', ['run', '--silent', 'build']);
  const { runnerExt, testsEntry, workspaceFile, resultsFile, env } = await prepare(base);
  let code;
  try {
    code = await runTests({
      vscodeExecutablePath: executable,
      extensionDevelopmentPath: [runnerExt, h.REPO],
      extensionTestsPath: testsEntry,
      extensionTestsEnv: env,
      launchArgs: [
        workspaceFile,
        '--disable-workspace-trust',
        '--skip-welcome',
        '--skip-release-notes',
        '--user-data-dir',
        path.join(base, 'user-data'),
        '--extensions-dir',
        path.join(base, 'extensions'),
      ],
    });
  } catch (e) {
    console.log(`electron: VS Code exited with an error: ${e.message || e}`);
    code = 1;
  }
  const results = fs.existsSync(resultsFile) ? JSON.parse(fs.readFileSync(resultsFile, 'utf8')) : { passed: 0, failed: 0, failures: [] };
  const failed = results.failed || (code !== 0 || results.passed === 0 ? 1 : 0);
  for (const f of results.failures || []) console.log(`  FAILED ${f.title}\n    ${String(f.error).split('\n').slice(0, 6).join('\n    ')}`);
  console.log(`\nelectron: ${results.passed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
}

main().catch((e) => {
  console.log(`electron: ${e.stack || e}`);
  process.exit(1);
});
