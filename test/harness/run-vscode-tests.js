#!/usr/bin/env node
// Tests the extension inside a real VS Code (1.139, from code-server) on this machine:
//   1. test/harness/install.sh: chromium, node@24, code-server (cached under .harness/)
//   2. `npm run package` builds the VSIX, which is installed into a scratch extensions dir
//   3. exthost: test/vscode/*.test.ts, bundled with Mocha by esbuild, run inside the real extension
//      host (VS Code server + the smoke-test driver's extensionTestsPath hook, opened in Chromium)
//   4. e2e: test/e2e/*.test.js, Mocha + playwright-core against code-server in Chromium
// Prints `vscode: N passed, M failed` last and exits non-zero on any failure.
//
//   5. smoke: test/vscode-smoke/*.test.ts in the oldest VS Code that engines.vscode claims (an older
//      code-server, installed beside the default one) and in 1.139.1, each with its own VSIX install
// Usage: node test/harness/run-vscode-tests.js [--only exthost|e2e|smoke] [--grep PATTERN]
//   --grep PATTERN (Mocha's: a regular expression, or /re/flags, matched against each test's full title):
//   a phase none of whose tests match is skipped before anything is installed or started for it (its
//   titles are read from the source); if no phase has a match the run fails. Without --grep every phase
//   runs, and a phase in which no test runs fails.
// Environment: HARNESS_VSIX=<file> (skip the build), HARNESS_DIR, SCREENSHOT_DIR (default media/screenshots),
//   MCP_HOST_EXTHOST_TIMEOUT (ms, whole exthost run, default 900000), MCP_HOST_TEST_TIMEOUT (ms per test).
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const util = require('node:util');
const h = require('./lib');

const args = process.argv.slice(2);
const opt = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const only = opt('--only');
const grep = opt('--grep');
const timings = [];
const NOISE =
  /^(Resolving connection token|Resolved connection token|Creating a socket|\[reconnection-grace-time\]|Updating additional builtin|\[AccountPolicyGate\]|\[lifecycle\]|\[Service Worker\])|ENOTFOUND|EAI_AGAIN|AgentHost|ChatModelSelection|open-vsx|marketplace/i;

function time(label, seconds) {
  timings.push([label, seconds]);
}

const PHASES = {
  exthost: { dir: 'test/vscode', re: /\.test\.ts$/ },
  e2e: { dir: 'test/e2e', re: /\.test\.js$/ },
  smoke: { dir: 'test/vscode-smoke', re: /\.test\.ts$/ },
};

/** Mocha's reading of a --grep string: `/re/flags` or a regular expression's source. */
function grepRegExp(pattern) {
  const m = pattern.match(/^\/(.*)\/([a-z]*)$|.*/);
  return new RegExp(m[1] || m[0], m[2]);
}

/**
 * The full titles (describe titles and the test's, joined by spaces as Mocha's fullTitle()) of the tests
 * in `files`, read from the source with the TypeScript parser without running it (the suites need VS Code).
 * A title built with `${…}` counts with each substitution empty, so --grep matches its literal parts only.
 * Tests marked .skip are left out.
 */
function testTitles(files) {
  const ts = require(path.join(h.REPO, 'node_modules', 'typescript'));
  const SUITES = new Set(['describe', 'context', 'suite']);
  const TESTS = new Set(['it', 'specify', 'test']);
  const titles = [];
  const literal = (node) => {
    if (!node) return undefined;
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
    if (ts.isTemplateExpression(node)) return node.head.text + node.templateSpans.map((span) => span.literal.text).join('');
    return undefined;
  };
  for (const file of files) {
    const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
    const visit = (node, parents) => {
      if (ts.isCallExpression(node)) {
        let callee = node.expression;
        let modifier;
        if (ts.isPropertyAccessExpression(callee) && ts.isIdentifier(callee.expression)) {
          modifier = callee.name.text;
          callee = callee.expression;
        }
        const kind = ts.isIdentifier(callee)
          ? SUITES.has(callee.text)
            ? 'suite'
            : TESTS.has(callee.text)
              ? 'test'
              : undefined
          : undefined;
        const title = literal(node.arguments[0]);
        if (kind && title !== undefined && modifier !== 'skip') {
          if (kind === 'test') titles.push([...parents, title].join(' '));
          else for (const arg of node.arguments.slice(1)) visit(arg, [...parents, title]);
          return;
        }
        if (kind && modifier === 'skip') return;
      }
      ts.forEachChild(node, (child) => visit(child, parents));
    };
    visit(source, []);
  }
  return titles;
}

function listTests(dir, re) {
  const abs = path.join(h.REPO, dir);
  if (!fs.existsSync(abs)) return [];
  return fs
    .readdirSync(abs)
    .filter((f) => re.test(f))
    .sort()
    .map((f) => path.join(abs, f));
}

/**
 * Lays out the test-runner extension in outDir: test/harness/runner-ext/package.json, plus out/suites.js
 * (test/vscode/*.test.ts + the Mocha runner, bundled) and out/index.js (the extensionTestsPath, which
 * turns on source maps for stack traces before loading the bundle). Keeping the bundle inside the
 * runner extension lets VS Code attribute the suites' `require('vscode')` to that extension.
 * `manifest` replaces the runner's package.json (bench/chat-vscode.mjs adds a contribution to it).
 */
async function buildRunnerExtension(files, outDir, manifest = runnerManifest()) {
  const esbuild = require(path.join(h.REPO, 'node_modules', 'esbuild'));
  fs.mkdirSync(path.join(outDir, 'out'), { recursive: true });
  fs.writeFileSync(path.join(outDir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  const entry = path.join(outDir, 'entry.js');
  const lines = [
    `const { runSuites } = require(${JSON.stringify(path.join(__dirname, 'exthost-runner.ts'))});`,
    'exports.run = () => runSuites([',
    ...files.map((f) => `  { file: ${JSON.stringify(f)}, load: () => require(${JSON.stringify(f)}) },`),
    ']);',
  ];
  fs.writeFileSync(entry, lines.join('\n') + '\n');
  await esbuild.build({
    entryPoints: [entry],
    outfile: path.join(outDir, 'out', 'suites.js'),
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    external: ['vscode'],
    sourcemap: 'inline',
    logLevel: 'error',
    nodePaths: [path.join(h.REPO, 'node_modules')],
    ...require(path.join(h.REPO, 'scripts', 'bundle-options.js')),
  });
  // A `main` makes it a workspace extension that runs in the (remote) extension host with the suites.
  fs.writeFileSync(path.join(outDir, 'out', 'extension.js'), "'use strict';\nexports.activate = () => {};\n");
  const index = path.join(outDir, 'out', 'index.js');
  fs.writeFileSync(index, "'use strict';\nprocess.setSourceMapsEnabled?.(true);\nmodule.exports = require('./suites.js');\n");
  return index;
}

/** test/harness/runner-ext/package.json: the manifest of the extension the suites run as. */
function runnerManifest() {
  return JSON.parse(fs.readFileSync(path.join(__dirname, 'runner-ext', 'package.json'), 'utf8'));
}

/**
 * Bundles and packages a test-only extension of test/harness (`folder`: its package.json and
 * extension.ts) into a VSIX in outDir, for the e2e profile, where Playwright cannot reach what the
 * extension-host suites register in-process: models-ext (the deterministic test models) and chat-ext
 * (VS Code's own MCP client calling a shared server's tool as the chat does).
 */
async function buildTestExtension(folder, outDir) {
  const esbuild = require(path.join(h.REPO, 'node_modules', 'esbuild'));
  fs.rmSync(outDir, { recursive: true, force: true });
  fs.mkdirSync(path.join(outDir, 'out'), { recursive: true });
  fs.copyFileSync(path.join(__dirname, folder, 'package.json'), path.join(outDir, 'package.json'));
  await esbuild.build({
    entryPoints: [path.join(__dirname, folder, 'extension.ts')],
    outfile: path.join(outDir, 'out', 'extension.js'),
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    external: ['vscode'],
    logLevel: 'error',
  });
  const vsix = path.join(outDir, `${JSON.parse(fs.readFileSync(path.join(outDir, 'package.json'), 'utf8')).name}.vsix`);
  packageTestExtension(outDir, vsix);
  return vsix;
}

/** Packages the test-only extension in `dir` (a manifest and its files) into `vsix` with the project's vsce. */
function packageTestExtension(dir, vsix) {
  h.run(
    process.execPath,
    [
      path.join(h.REPO, 'node_modules', '@vscode', 'vsce', 'vsce'),
      'package',
      '--no-dependencies',
      '--allow-missing-repository',
      '--skip-license',
      '-o',
      vsix,
    ],
    { cwd: dir },
  );
}

/**
 * Packages test/harness/zh-cn-pack (a language pack for zh-cn), installs it into `extensionsDir` and
 * registers it in `userDataDir`, so a page that asks for zh-cn gets the web workbench in Simplified
 * Chinese. VS Code's server chooses the display language per page load: `--locale`, else the `locale`
 * of `User/argv.json`, else the `vscode.nls.locale` cookie, else Accept-Language. It then looks the
 * language up in `languagepacks.json` of the user data dir, which only the server's own extension
 * management writes (code-server's `--install-extension` CLI does not), so it is written here; without
 * it every locale falls back to English. An `argv.json` without `locale` is written too: when the file
 * is missing the server reads its locale as "en" and never looks at the cookie. The rest of the run
 * stays English; test/e2e/10-chinese.test.js sets the cookie.
 */
function installChineseLanguagePack(paths, { dir, base, extensionsDir, userDataDir }) {
  const src = path.join(__dirname, 'zh-cn-pack');
  fs.rmSync(dir, { recursive: true, force: true });
  fs.cpSync(src, dir, { recursive: true });
  const vsix = path.join(dir, 'mcp-host-test-zh-cn.vsix');
  packageTestExtension(dir, vsix);
  h.installVsix(paths, vsix, { extensionsDir, userDataDir: path.join(base, 'install-user-data'), base });
  const manifest = JSON.parse(fs.readFileSync(path.join(src, 'package.json'), 'utf8'));
  const id = `${manifest.publisher}.${manifest.name}`;
  const installed = path.join(extensionsDir, `${id}-${manifest.version}`);
  const [localization] = manifest.contributes.localizations;
  const translations = Object.fromEntries(localization.translations.map((t) => [t.id, path.join(installed, t.path)]));
  for (const file of Object.values(translations))
    if (!fs.existsSync(file)) throw new Error(`language pack not installed where expected: ${file}`);
  const hash = require('node:crypto').createHash('md5').update(id).update(manifest.version).digest('hex');
  const packs = {
    [localization.languageId]: {
      hash,
      extensions: [{ extensionIdentifier: { id }, version: manifest.version }],
      translations,
      label: localization.localizedLanguageName,
    },
  };
  fs.mkdirSync(path.join(userDataDir, 'User'), { recursive: true });
  fs.writeFileSync(path.join(userDataDir, 'languagepacks.json'), JSON.stringify(packs, null, 2));
  fs.writeFileSync(path.join(userDataDir, 'User', 'argv.json'), '{}\n');
}

/**
 * Runs extension-host suites in the VS Code server of `paths` (a code-server install). `name` labels the
 * run (its folder under base, its logs); `machineSettings` are written to the server's machine settings
 * before the window opens; `env` is added to the suites' environment; `manifest` is the runner
 * extension's package.json (default test/harness/runner-ext's).
 */
async function runExtHost(
  paths,
  { base, extensionsDir, files = listTests(PHASES.exthost.dir, PHASES.exthost.re), name = 'exthost', machineSettings, env = {}, manifest },
) {
  if (!files.length) {
    h.log(`${name}: no suites`);
    return { passed: 0, failed: 0 };
  }
  const t = Date.now();
  const dir = path.join(base, name);
  fs.mkdirSync(dir, { recursive: true });
  const runnerExt = path.join(dir, 'runner-ext');
  const testsEntry = await buildRunnerExtension(files, runnerExt, manifest);
  h.log(`${name}: bundled ${files.length} suite file(s) in ${((Date.now() - t) / 1000).toFixed(1)}s`);
  const { workspaceFile, resultsFile, env: suiteEnv } = prepareSuiteRun(dir, name, grep);
  const extensionEnvironment = {
    ...suiteEnv,
    // VS Code's log folder (output channels included), so suites can check what reaches the disk.
    MCP_HOST_VSCODE_LOGS: path.join(dir, 'server-data', 'data', 'logs'),
    ...env,
  };
  const serverDataDir = path.join(dir, 'server-data');
  if (machineSettings) {
    fs.mkdirSync(path.join(serverDataDir, 'data', 'Machine'), { recursive: true });
    fs.writeFileSync(path.join(serverDataDir, 'data', 'Machine', 'settings.json'), JSON.stringify(machineSettings, null, 2));
  }
  const consoleLog = path.join(base, 'logs', `${name}-console.log`);
  const overall = Number(process.env.MCP_HOST_EXTHOST_TIMEOUT || 900_000);
  const startupTimeout = 180_000;
  const browser = await h.launchChromium(paths);
  let server;
  let code;
  let failedToStart = false;
  try {
    for (let attempt = 1; attempt <= 3; attempt++) {
      fs.rmSync(resultsFile, { force: true });
      server = await h.startVSCodeServer(paths, { base, extensionsDir, serverDataDir, env: extensionEnvironment });
      const page = await browser.newPage();
      let done;
      const exited = new Promise((r) => (done = r));
      await page.exposeFunction('codeAutomationLog', (type, logArgs) => {
        const line = util.format(...(logArgs || []).map((a) => (typeof a === 'string' ? a.replace(/%c/g, '') : a)));
        fs.appendFileSync(consoleLog, `[${type}] ${line}\n`);
        // Mocha's reporter and the suites' console.log come through as 'log'; the web workbench's own
        // warnings and errors (no internet, no Copilot, requests cancelled at shutdown) go to the file only.
        if ((type === 'log' || type === 'info') && !NOISE.test(line)) console.log(line);
      });
      await page.exposeFunction('codeAutomationExit', (c) => done(c));
      const payload = JSON.stringify([
        ['extensionDevelopmentPath', `vscode-remote://remote${runnerExt}`],
        ['extensionTestsPath', `vscode-remote://remote${testsEntry}`],
        ['extensionEnvironment', JSON.stringify(extensionEnvironment)],
        ['skipWelcome', 'true'],
      ]);
      const loaded = await page
        .goto(`${server.url}?workspace=${encodeURIComponent(workspaceFile)}&payload=${encodeURIComponent(payload)}`, { timeout: 120_000 })
        .then(
          () => true,
          (e) => {
            h.log(`${name}: page load failed: ${e.message.split('\n')[0]}`);
            return false;
          },
        );
      const started = loaded && (await h.waitFor(() => fs.existsSync(resultsFile) || server.exited, startupTimeout, 500));
      if (started === true && fs.existsSync(resultsFile)) {
        let timer;
        const timedOut = new Promise((r) => (timer = setTimeout(() => r('timeout'), overall)));
        code = await Promise.race([exited, timedOut]);
        // A caller that goes on (bench/chat-vscode.mjs) must not be kept alive by the run's deadline.
        clearTimeout(timer);
        await page.close().catch(() => {});
        break;
      }
      h.log(`${name}: the test runner did not start within ${startupTimeout / 1000}s (attempt ${attempt}/3)`);
      h.dumpLogs('vscode-server', server.logFile, [path.join(serverDataDir, 'data', 'logs')], 30);
      await page.close().catch(() => {});
      await server.stop();
      server = undefined;
      failedToStart = attempt === 3;
    }
  } finally {
    await browser.close().catch(() => {});
    if (server) await server.stop();
  }
  const results = fs.existsSync(resultsFile) ? JSON.parse(fs.readFileSync(resultsFile, 'utf8')) : { passed: 0, failed: 0, failures: [] };
  let { passed, failed } = results;
  if (code !== 0 && failed === 0) failed = 1; // crash, timeout or no test ran
  const seconds = (Date.now() - t) / 1000;
  h.log(
    `${name}: exit code ${code}${failedToStart ? ' (never started)' : ''}; ${passed} passed, ${failed} failed in ${seconds.toFixed(1)}s`,
  );
  if (failed) {
    for (const f of results.failures || [])
      console.log(`  FAILED ${f.title}\n    ${String(f.error).split('\n').slice(0, 6).join('\n    ')}`);
    h.dumpLogs('vscode-server', server?.logFile ?? path.join(base, 'logs', 'vscode-server.log'), [
      path.join(serverDataDir, 'data', 'logs'),
    ]);
    console.log(`----- last 40 lines of ${path.relative(h.REPO, consoleLog)} (workbench console) -----`);
    console.log(h.tail(consoleLog, 40));
  }
  time(`${name} suites`, seconds);
  const failures = (results.failures || []).map((f) => `${name}: ${f.title}`);
  if (failed > failures.length) failures.push(`${name}: exit code ${code}${failedToStart ? ' (never started)' : ''}`);
  return { passed, failed, failures };
}

/**
 * The VS Codes the compatibility smoke scenario runs in: the oldest one engines.vscode claims (its
 * code-server and the Node major that code-server needs, installed beside the default one) and the
 * default code-server (VS Code 1.139.1). test/vscode-smoke/smoke.test.ts checks that engines.vscode
 * admits each, so raising engines.vscode without moving the oldest one here fails the run.
 */
const SMOKE_TARGETS = [{ codeServer: '4.90.3', node: 20 }, { codeServer: undefined }];

async function runSmoke(defaultPaths, { base, vsix }) {
  const files = listTests(PHASES.smoke.dir, PHASES.smoke.re);
  let passed = 0;
  let failed = 0;
  const failures = [];
  for (const target of SMOKE_TARGETS) {
    const t = Date.now();
    const paths = target.codeServer ? h.install(target) : defaultPaths;
    if (target.codeServer) time(`install.sh code-server ${target.codeServer}`, paths.installSeconds);
    const vscodeDir = path.dirname(path.dirname(paths.VSCODE_SERVER_MAIN));
    const vscodeVersion = JSON.parse(fs.readFileSync(path.join(vscodeDir, 'product.json'), 'utf8')).version;
    const name = `smoke-${vscodeVersion}`;
    const smokeBase = path.join(base, 'smoke');
    const extensionsDir = path.join(smokeBase, name, 'extensions');
    h.installVsix(paths, vsix, { extensionsDir, userDataDir: path.join(smokeBase, name, 'install-user-data'), base: smokeBase });
    // The server is in the settings before the window opens: the extension must activate and start it alone.
    const everything = path.join(h.REPO, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
    const machineSettings = { 'mcpHost.servers': { smoke: { command: process.execPath, args: [everything, 'stdio'] } } };
    h.log(`${name}: code-server ${paths.CODE_SERVER_VERSION} (VS Code ${vscodeVersion}) on node ${spawnVersion(paths.CODE_SERVER_NODE)}`);
    const r = await runExtHost(paths, {
      base: smokeBase,
      extensionsDir,
      files,
      name,
      machineSettings,
      env: { MCP_HOST_EXPECT_VSCODE: vscodeVersion },
    });
    passed += r.passed;
    failed += r.failed;
    failures.push(...r.failures);
    time(`${name} total`, (Date.now() - t) / 1000);
  }
  return { passed, failed, failures };
}

function spawnVersion(node) {
  return require('node:child_process').execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
}

async function runE2E(paths, { base, extensionsDir }) {
  const files = listTests(PHASES.e2e.dir, PHASES.e2e.re);
  if (!files.length) {
    h.log('e2e: no test/e2e/*.test.js');
    return { passed: 0, failed: 0 };
  }
  const t = Date.now();
  const dir = path.join(base, 'e2e');
  const workspace = h.prepareWorkspace(path.join(h.REPO, 'test', 'e2e', 'workspace'), path.join(dir, 'workspace'));
  const userDataDir = path.join(dir, 'user-data');
  // Installed only now: in the extension-host run the suites register the same model vendor themselves.
  for (const folder of ['models-ext', 'chat-ext']) {
    const vsix = await buildTestExtension(folder, path.join(dir, folder));
    h.installVsix(paths, vsix, { extensionsDir, userDataDir: path.join(base, 'install-user-data'), base });
  }
  process.env.MCP_HOST_TEST_MODELS_LOG = path.join(dir, 'models-requests.jsonl');
  // One line per call the chat-ext makes as the chat (test/harness/chat-ext).
  process.env.MCP_HOST_TEST_CHAT_LOG = path.join(dir, 'chat-calls.jsonl');
  // One line per extension host that starts (each window has its own): its vscode.env.language.
  process.env.MCP_HOST_TEST_ENV_LOG = path.join(dir, 'extension-host-env.jsonl');
  fs.rmSync(process.env.MCP_HOST_TEST_ENV_LOG, { force: true });
  const t0 = Date.now();
  installChineseLanguagePack(paths, { dir: path.join(dir, 'zh-cn-pack'), base, extensionsDir, userDataDir });
  time('e2e zh-cn language pack', (Date.now() - t0) / 1000);
  let cs;
  try {
    cs = await h.startCodeServer(paths, { base: dir, extensionsDir, userDataDir, folder: workspace });
  } catch (e) {
    console.log(`e2e: ${e.message}`);
    time('e2e (failed to start)', (Date.now() - t) / 1000);
    return { passed: 0, failed: 1, failures: ['e2e: code-server did not start'] };
  }
  Object.assign(process.env, {
    MCP_HOST_E2E_URL: cs.folderUrl,
    MCP_HOST_E2E_WORKSPACE: workspace,
    MCP_HOST_E2E_LOG: cs.logFile,
    MCP_HOST_E2E_ARTIFACTS: path.join(dir, 'artifacts'),
    MCP_HOST_E2E_CHROMIUM: paths.CHROMIUM,
  });
  let stats;
  const failures = [];
  try {
    const Mocha = require(path.join(h.REPO, 'node_modules', 'mocha', 'lib', 'mocha.cjs'));
    const { mochaHooks } = require(path.join(h.REPO, 'test', 'e2e', 'helpers.js'));
    const mocha = new Mocha({ ui: 'bdd', reporter: 'spec', timeout: 120_000, slow: 10_000, rootHooks: mochaHooks, grep });
    for (const f of files) mocha.addFile(f);
    stats = await new Promise((resolve) => {
      const runner = mocha.run(() => resolve(runner.stats));
      runner.on('fail', (test) => failures.push(`e2e: ${test.fullTitle()}`));
    });
  } finally {
    await cs.stop();
  }
  const seconds = (Date.now() - t) / 1000;
  const passed = stats.passes;
  const failed = stats.failures + (stats.passes + stats.failures === 0 ? 1 : 0);
  h.log(`e2e: ${passed} passed, ${failed} failed in ${seconds.toFixed(1)}s`);
  if (failed) h.dumpLogs('code-server', cs.logFile, [path.join(userDataDir, 'logs')]);
  time('e2e suites', seconds);
  return { passed, failed, failures };
}

/**
 * What an extension-host run of test/vscode needs under `dir`: a scratch copy of the suites'
 * workspace, a multi-root workspace file of that one folder (so suites can add folders without the
 * window reloading), the results file and out folder, and the suites' environment.
 */
function prepareSuiteRun(dir, name, grep) {
  const workspace = h.prepareWorkspace(path.join(h.REPO, 'test', 'vscode', 'workspace'), path.join(dir, 'workspace'));
  const workspaceFile = path.join(dir, `${name}.code-workspace`);
  fs.writeFileSync(workspaceFile, JSON.stringify({ folders: [{ path: workspace }], settings: {} }, null, 2));
  const resultsFile = path.join(dir, 'results.json');
  const out = path.join(dir, 'out');
  fs.mkdirSync(out, { recursive: true });
  const env = {
    MCP_HOST_REPO: h.REPO,
    MCP_HOST_WORKSPACE: workspace,
    MCP_HOST_EVERYTHING_SERVER: path.join(h.REPO, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js'),
    MCP_HOST_TEST_OUT: out,
    MCP_HOST_TEST_RESULTS: resultsFile,
    // The extension's exports carry its internals (`testing`) only with this (src/vscode/api.ts).
    MCP_HOST_TEST_SEAM: '1',
    ...(grep ? { MCP_HOST_TEST_GREP: grep } : {}),
    ...(process.env.MCP_HOST_TEST_TIMEOUT ? { MCP_HOST_TEST_TIMEOUT: process.env.MCP_HOST_TEST_TIMEOUT } : {}),
  };
  return { workspace, workspaceFile, resultsFile, env };
}

async function main() {
  const tAll = Date.now();
  let passed = 0;
  let failed = 0;
  const failures = [];
  const runners = { exthost: runExtHost, e2e: runE2E, smoke: runSmoke };
  if (only && !runners[only]) {
    console.log(`--only ${only}: no such phase (${Object.keys(runners).join(', ')})`);
    process.exit(2);
  }
  let phases = Object.keys(runners).filter((name) => !only || only === name);
  if (grep) {
    const re = grepRegExp(grep);
    phases = phases.filter((name) => {
      const matching = testTitles(listTests(PHASES[name].dir, PHASES[name].re)).filter((t) => re.test(t));
      h.log(
        matching.length ? `${name}: ${matching.length} test(s) match --grep ${grep}` : `${name}: no test matches --grep ${grep}; skipped`,
      );
      return matching.length > 0;
    });
    if (!phases.length) {
      console.log(`\nvscode: no test matches --grep ${grep}${only ? ` in ${only}` : ''}`);
      process.exit(1);
    }
  }
  try {
    const paths = h.install();
    time('install.sh', paths.installSeconds);
    let t = Date.now();
    const vsix = h.buildVsix({ testSeam: true });
    time('build VSIX (npm run package:test)', (Date.now() - t) / 1000);
    const base = h.scratch('run');
    const extensionsDir = path.join(base, 'extensions');
    t = Date.now();
    h.installVsix(paths, vsix, { extensionsDir, userDataDir: path.join(base, 'install-user-data'), base });
    time('install VSIX', (Date.now() - t) / 1000);
    for (const name of phases) {
      try {
        const r = await runners[name](paths, { base, extensionsDir, vsix });
        passed += r.passed;
        failed += r.failed;
        failures.push(...(r.failures ?? []));
      } catch (e) {
        console.log(`${name}: harness error: ${e.stack || e}`);
        failed += 1;
        failures.push(`${name}: harness error`);
      }
    }
  } catch (e) {
    console.log(`harness error: ${e.stack || e}`);
    failed += 1;
  }
  time('total', (Date.now() - tAll) / 1000);
  console.log('\nTimings:');
  for (const [label, s] of timings) console.log(`  ${label.padEnd(32)} ${s.toFixed(1)} s`);
  // Repeated at the end, where a CI log cut to its last lines still shows them.
  if (failures.length) console.log(`\nFailed:\n${failures.map((f) => `  ${f}`).join('\n')}`);
  console.log(`\nvscode: ${passed} passed, ${failed} failed`);
  h.killAllGroups();
  process.exit(failed ? 1 : 0);
}

module.exports = { buildRunnerExtension, runExtHost, listTests, prepareSuiteRun, testTitles, grepRegExp, PHASES };

if (require.main === module) {
  for (const sig of ['SIGINT', 'SIGTERM']) {
    process.on(sig, () => {
      h.killAllGroups();
      process.exit(130);
    });
  }
  main();
}
