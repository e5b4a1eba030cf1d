// Shared plumbing for the real-VS-Code harness (tests and demo): installs, the VSIX, scratch folders,
// process groups, free ports, code-server and the bundled VS Code server. Plain CommonJS on purpose:
// it runs on whatever Node runs `npm test`, needs nothing compiled, and knows nothing of the extension
// beyond package.json.
'use strict';
const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');
const http = require('node:http');

const REPO = path.resolve(__dirname, '..', '..');
const HARNESS_DIR = process.env.HARNESS_DIR || path.join(REPO, '.harness');
const t0 = Date.now();

function log(...args) {
  const s = ((Date.now() - t0) / 1000).toFixed(1).padStart(6);
  console.log(`[harness ${s}s]`, ...args);
}

/** Runs a command in the foreground; throws with its output's tail on failure. */
function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { cwd: REPO, encoding: 'utf8', maxBuffer: 64 << 20, ...opts });
  if (r.status !== 0) {
    const out = `${r.stdout || ''}${r.stderr || ''}`.split('\n').slice(-60).join('\n');
    throw new Error(`${cmd} ${args.join(' ')} exited ${r.status ?? r.signal}\n${out}`);
  }
  return r.stdout || '';
}

/**
 * Runs test/harness/install.sh (idempotent, cached) and returns the paths it wrote. Without arguments
 * it installs the default code-server (VS Code 1.139.1); `{ codeServer, node }` installs another one
 * beside it (e.g. the oldest VS Code that engines.vscode claims), run by that Node major.
 */
function install({ codeServer, node } = {}) {
  const t = Date.now();
  const env = { ...process.env, HARNESS_DIR };
  if (codeServer) Object.assign(env, { CODE_SERVER_VERSION: codeServer, NODE_MAJOR: String(node) });
  const r = spawnSync('bash', [path.join(__dirname, 'install.sh')], {
    cwd: REPO,
    stdio: ['ignore', 'inherit', 'inherit'],
    env,
  });
  if (r.status !== 0)
    throw new Error(`test/harness/install.sh${codeServer ? ` (code-server ${codeServer})` : ''} failed (exit ${r.status})`);
  const paths = {};
  const file = codeServer ? `paths-${codeServer}.env` : 'paths.env';
  for (const line of fs.readFileSync(path.join(HARNESS_DIR, file), 'utf8').split('\n')) {
    const m = /^([A-Z0-9_]+)=(.*)$/.exec(line);
    if (m) paths[m[1]] = m[2];
  }
  paths.installSeconds = (Date.now() - t) / 1000;
  return paths;
}

function manifest() {
  return JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8'));
}

/** Extension id as VS Code spells it: publisher.name, lower case. */
function extensionId(pkg = manifest()) {
  return `${pkg.publisher}.${pkg.name}`.toLowerCase();
}

/**
 * Builds the VSIX with the project's own `npm run package` and returns its path
 * (<name>-<version>.vsix in the repo root, as vsce names it). HARNESS_VSIX=<file> skips the build.
 * `{ testSeam: true }` builds the test flavour instead (`npm run package:test`, into the harness
 * folder): the release bundle carries no test seam at all (src/vscode/api.ts), so the suites that
 * drive the host's internals need this one.
 */
function buildVsix({ testSeam = false } = {}) {
  if (process.env.HARNESS_VSIX) return path.resolve(process.env.HARNESS_VSIX);
  const pkg = manifest();
  const t = Date.now();
  if (testSeam) {
    const vsix = path.join(HARNESS_DIR, `${pkg.name}-${pkg.version}-test.vsix`);
    fs.rmSync(vsix, { force: true });
    run('npm', ['run', '--silent', 'package:test', '--', '--out', vsix]);
    log(`test VSIX built in ${((Date.now() - t) / 1000).toFixed(1)}s: ${path.relative(REPO, vsix)}`);
    return vsix;
  }
  const vsix = path.join(REPO, `${pkg.name}-${pkg.version}.vsix`);
  fs.rmSync(vsix, { force: true });
  run('npm', ['run', '--silent', 'package']);
  if (!fs.existsSync(vsix)) {
    const found = fs
      .readdirSync(REPO)
      .filter((f) => f.endsWith('.vsix'))
      .map((f) => path.join(REPO, f))
      .sort((a, b) => fs.statSync(b).mtimeMs - fs.statSync(a).mtimeMs);
    if (!found.length) throw new Error('npm run package produced no .vsix');
    return found[0];
  }
  log(`VSIX built in ${((Date.now() - t) / 1000).toFixed(1)}s: ${path.relative(REPO, vsix)}`);
  return vsix;
}

/** A fresh scratch folder under .harness/<name> (emptied first). */
function scratch(name) {
  const dir = path.join(HARNESS_DIR, name);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

/** HOME/TMPDIR for code-server and friends, so nothing touches the caller's home. */
function scratchEnv(base, extra = {}) {
  const home = path.join(base, 'home');
  const tmp = path.join(base, 'tmp');
  fs.mkdirSync(home, { recursive: true });
  fs.mkdirSync(tmp, { recursive: true });
  const env = {
    ...process.env,
    HOME: home,
    TMPDIR: tmp,
    XDG_CONFIG_HOME: path.join(home, '.config'),
    XDG_DATA_HOME: path.join(home, '.local', 'share'),
    XDG_CACHE_HOME: path.join(home, '.cache'),
    ...extra,
  };
  // These would leak into the extension host (and from there into MCP servers it starts).
  for (const k of ['NODE_OPTIONS', 'ELECTRON_RUN_AS_NODE', 'VSCODE_IPC_HOOK_CLI', 'VSCODE_CWD', 'PWD', 'INIT_CWD']) delete env[k];
  for (const k of Object.keys(env)) if (k.startsWith('npm_') || k.startsWith('VSCODE_')) delete env[k];
  return env;
}

/**
 * Copies a workspace template, replacing ${MCP_HOST_REPO}, ${EVERYTHING_SERVER} and ${NODE} in every
 * text file it copies, so committed settings can name absolute paths computed at run time.
 */
function prepareWorkspace(template, dest, vars = {}) {
  const all = {
    MCP_HOST_REPO: REPO,
    EVERYTHING_SERVER: path.join(REPO, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js'),
    NODE: process.execPath,
    ...vars,
  };
  fs.rmSync(dest, { recursive: true, force: true });
  fs.cpSync(template, dest, { recursive: true });
  const walk = (dir) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.(json|jsonc|md|txt|js|ts)$/.test(e.name)) {
        const text = fs.readFileSync(p, 'utf8');
        const out = text.replace(/\$\{([A-Z0-9_]+)\}/g, (m, k) => (k in all ? jsonInner(all[k]) : m));
        if (out !== text) fs.writeFileSync(p, out);
      }
    }
  };
  walk(dest);
  return dest;
}
// The value as it goes inside a JSON string literal.
const jsonInner = (s) => JSON.stringify(String(s)).slice(1, -1);

/** A free TCP port on 127.0.0.1. */
function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/** GET url; resolves with the status code, or 0 when nothing answers. */
function httpStatus(url, timeoutMs = 3000) {
  return new Promise((resolve) => {
    const req = http.get(url, (res) => {
      res.resume();
      resolve(res.statusCode || 0);
    });
    req.setTimeout(timeoutMs, () => req.destroy());
    req.on('error', () => resolve(0));
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const groups = new Set();
/**
 * Starts a long-lived process in its own process group (setsid via `detached`), output to logFile.
 * stop() signals the whole group: TERM, then KILL after a grace period.
 */
function startGroup(cmd, args, { env, cwd = REPO, logFile, name = path.basename(cmd) }) {
  fs.mkdirSync(path.dirname(logFile), { recursive: true });
  const fd = fs.openSync(logFile, 'a');
  const child = spawn(cmd, args, { cwd, env, detached: true, stdio: ['ignore', fd, fd] });
  fs.closeSync(fd);
  let exited = false;
  const exit = new Promise((resolve) =>
    child.on('exit', (code, signal) => {
      exited = true;
      resolve({ code, signal });
    }),
  );
  const proc = {
    name,
    pid: child.pid,
    logFile,
    exit,
    get exited() {
      return exited;
    },
    async stop(graceMs = 5000) {
      groups.delete(proc);
      if (!signalGroup(child.pid, 'SIGTERM')) return;
      const deadline = Date.now() + graceMs;
      while (Date.now() < deadline && groupAlive(child.pid)) await sleep(100);
      signalGroup(child.pid, 'SIGKILL');
    },
  };
  groups.add(proc);
  return proc;
}
function signalGroup(pgid, sig) {
  try {
    process.kill(-pgid, sig);
    return true;
  } catch {
    return false;
  }
}
function groupAlive(pgid) {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}
/** Kills every group this process started (used on exit and on Ctrl-C). */
function killAllGroups() {
  for (const p of groups) signalGroup(p.pid, 'SIGKILL');
  groups.clear();
}
process.on('exit', killAllGroups);

/** Last n lines of a file, for failure reports. */
function tail(file, n = 60) {
  try {
    const lines = fs.readFileSync(file, 'utf8').split('\n');
    return lines.slice(-n - 1).join('\n');
  } catch (e) {
    return `(no ${file}: ${e.code || e.message})`;
  }
}

/**
 * Prints the tail of a process's log, then of the VS Code logs under dirs that explain extension
 * failures: the extension host's own log, the remote agent's, and every output channel of the
 * extension under test (<logs>/<session>/exthostN/<publisher.name>/NAME.log).
 */
function dumpLogs(title, logFile, dirs = [], n = 60) {
  console.log(`\n----- ${title}: last ${n} lines of ${path.relative(REPO, logFile)} -----`);
  console.log(tail(logFile, n));
  let id = '';
  try {
    id = extensionId();
  } catch {
    /* no package.json */
  }
  for (const dir of dirs) {
    for (const f of findFiles(dir, /\.log$/)) {
      const base = path.basename(f);
      const wanted = /^(remote)?exthost\d*\.log$|^remoteagent\.log$/.test(base) || (id && f.split(path.sep).includes(id));
      if (!wanted) continue;
      console.log(`----- last 30 lines of ${path.relative(REPO, f)} -----`);
      console.log(tail(f, 30));
    }
  }
  console.log('----- end of logs -----\n');
}
function findFiles(dir, re, out = []) {
  let entries;
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const e of entries) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) findFiles(p, re, out);
    else if (re.test(e.name)) out.push(p);
  }
  return out;
}

/** Installs a VSIX into an extensions dir with code-server's CLI. */
function installVsix(paths, vsix, { extensionsDir, userDataDir, base }) {
  const t = Date.now();
  // Older code-server CLIs do not create these themselves.
  for (const d of [extensionsDir, userDataDir]) fs.mkdirSync(d, { recursive: true });
  run(
    paths.CODE_SERVER_NODE,
    [paths.CODE_SERVER_JS, '--user-data-dir', userDataDir, '--extensions-dir', extensionsDir, '--install-extension', vsix, '--force'],
    { env: scratchEnv(base) },
  );
  log(`installed ${path.basename(vsix)} into ${path.relative(REPO, extensionsDir)} in ${((Date.now() - t) / 1000).toFixed(1)}s`);
}

/** User settings that keep the workbench quiet and deterministic for tests, demos and screenshots. */
const QUIET_SETTINGS = {
  'workbench.startupEditor': 'none',
  'workbench.tips.enabled': false,
  'workbench.enableExperiments': false,
  'security.workspace.trust.enabled': false,
  'telemetry.telemetryLevel': 'off',
  'update.mode': 'none',
  'extensions.autoCheckUpdates': false,
  'extensions.autoUpdate': false,
  'extensions.ignoreRecommendations': true,
  'git.enabled': false,
  'workbench.colorTheme': 'Default Dark Modern',
  'window.commandCenter': false,
  // The Chat view would otherwise fill the secondary side bar of every screenshot.
  'workbench.secondarySideBar.defaultVisibility': 'hidden',
};

/**
 * Starts code-server on 127.0.0.1 with the given folders and waits for /healthz.
 * Retries startup (only startup) up to `attempts` times with a fresh port.
 */
async function startCodeServer(
  paths,
  { base, extensionsDir, userDataDir, folder, settings = {}, port, attempts = 3, name = 'code-server', extraArgs = [] },
) {
  const userDir = path.join(userDataDir, 'User');
  fs.mkdirSync(userDir, { recursive: true });
  fs.writeFileSync(path.join(userDir, 'settings.json'), JSON.stringify({ ...QUIET_SETTINGS, ...settings }, null, 2));
  const logFile = path.join(base, 'logs', `${name}.log`);
  fs.mkdirSync(path.dirname(logFile), { recursive: true });
  let lastError;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    const p = port && attempt === 1 ? port : await freePort();
    const args = [
      paths.CODE_SERVER_JS,
      '--bind-addr',
      `127.0.0.1:${p}`,
      '--auth',
      'none',
      '--disable-telemetry',
      '--disable-update-check',
      '--disable-workspace-trust',
      '--disable-getting-started-override',
      '--reconnection-grace-time',
      '5',
      '--user-data-dir',
      userDataDir,
      '--extensions-dir',
      extensionsDir,
      ...extraArgs,
      folder,
    ];
    fs.appendFileSync(logFile, `\n=== attempt ${attempt}: ${args.join(' ')}\n`);
    const proc = startGroup(paths.CODE_SERVER_NODE, args, { env: scratchEnv(base), logFile, name });
    const url = `http://127.0.0.1:${p}/`;
    const ok = await waitFor(async () => (proc.exited ? 'exited' : (await httpStatus(url + 'healthz')) === 200), 90_000);
    if (ok === true) {
      log(`${name} up on ${url} (attempt ${attempt}, pid ${proc.pid})`);
      return Object.assign(proc, { port: p, url, folderUrl: `${url}?folder=${folder.split('/').map(encodeURIComponent).join('/')}` });
    }
    lastError = new Error(`${name} did not answer on ${url}healthz (${ok || 'timeout'})`);
    log(`${lastError.message}; attempt ${attempt}/${attempts}`);
    await proc.stop(2000);
  }
  dumpLogs(name, logFile, [path.join(userDataDir, 'logs')]);
  throw lastError;
}

/**
 * Starts VS Code's own server (bundled in code-server) with the smoke-test driver enabled, which lets
 * a browser page pass extensionDevelopmentPath/extensionTestsPath and get the exit code back. `env` is
 * added to the server's environment, which its extension hosts inherit (VS Code 1.90's web workbench
 * ignores the payload's extensionEnvironment, so the suites' variables travel this way too).
 */
async function startVSCodeServer(paths, { base, extensionsDir, serverDataDir, attempts = 3, env = {} }) {
  const logFile = path.join(base, 'logs', 'vscode-server.log');
  fs.mkdirSync(path.dirname(logFile), { recursive: true });
  let lastError;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    const p = await freePort();
    const args = [
      paths.VSCODE_SERVER_MAIN,
      '--host',
      '127.0.0.1',
      '--port',
      String(p),
      '--without-connection-token',
      '--accept-server-license-terms',
      '--enable-smoke-test-driver',
      '--disable-telemetry',
      '--disable-workspace-trust',
      '--server-data-dir',
      serverDataDir,
      '--extensions-dir',
      extensionsDir,
    ];
    fs.appendFileSync(logFile, `\n=== attempt ${attempt}: ${args.join(' ')}\n`);
    const proc = startGroup(paths.CODE_SERVER_NODE, args, { env: scratchEnv(base, env), logFile, name: 'vscode-server' });
    const url = `http://127.0.0.1:${p}/`;
    const ok = await waitFor(async () => (proc.exited ? 'exited' : (await httpStatus(url)) === 200), 90_000);
    if (ok === true) {
      log(`VS Code server up on ${url} (attempt ${attempt}, pid ${proc.pid})`);
      return Object.assign(proc, { port: p, url });
    }
    lastError = new Error(`VS Code server did not answer on ${url} (${ok || 'timeout'})`);
    log(`${lastError.message}; attempt ${attempt}/${attempts}`);
    await proc.stop(2000);
  }
  dumpLogs('vscode-server', logFile, [serverDataDir]);
  throw lastError;
}

/** Polls fn until it returns a truthy value (returned) or the timeout passes (returns undefined). */
async function waitFor(fn, timeoutMs, everyMs = 250) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const v = await fn();
    if (v) return v;
    await sleep(everyMs);
  }
  return undefined;
}

/** Chromium flags that work headless as root in a container with 2 cores. */
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
  '--disable-features=Translate,MediaRouter',
  '--password-store=basic',
  '--use-mock-keychain',
];

/** Launches Debian's Chromium through playwright-core (the repo's devDependency). */
async function launchChromium(paths = {}) {
  const { chromium } = require(path.join(REPO, 'node_modules', 'playwright-core'));
  return chromium.launch({ executablePath: paths.CHROMIUM || '/usr/bin/chromium', headless: true, args: CHROMIUM_ARGS, timeout: 120_000 });
}

module.exports = {
  REPO,
  HARNESS_DIR,
  log,
  run,
  install,
  manifest,
  extensionId,
  buildVsix,
  scratch,
  scratchEnv,
  prepareWorkspace,
  freePort,
  httpStatus,
  sleep,
  startGroup,
  killAllGroups,
  tail,
  dumpLogs,
  installVsix,
  startCodeServer,
  startVSCodeServer,
  waitFor,
  launchChromium,
  findFiles,
  CHROMIUM_ARGS,
  QUIET_SETTINGS,
};
