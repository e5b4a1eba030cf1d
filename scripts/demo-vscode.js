#!/usr/bin/env node
// The browser demo: MCP Host in a real VS Code (code-server 4.139.1 = VS Code 1.139.1) on 127.0.0.1.
// Run it with `bash scripts/demo-vscode.sh` (which installs npm dependencies first).
//   --port N     port to listen on (default 8080; when 8080 is taken, a free port the system picks)
//   --check      start, verify the workbench is served, save media/screenshots/demo.png, stop
//   --no-build   reuse the existing <name>-<version>.vsix (or HARNESS_VSIX)
//   --rebuild    build the VSIX even if nothing it is made from changed since the demo last built it
'use strict';
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const h = require('../test/harness/lib');

const args = process.argv.slice(2);
const check = args.includes('--check');
const portArg = args.includes('--port') ? Number(args[args.indexOf('--port') + 1]) : undefined;

/** What the VSIX is made from (media/screenshots is not packaged; --check writes demo.png there). */
const VSIX_INPUTS = [
  'src',
  'l10n',
  'media',
  'syntaxes',
  'package.json',
  'package-lock.json',
  'package.nls.json',
  'package.nls.zh-cn.json',
  'README.md',
  'CHANGELOG.md',
  'LICENSE',
  '.vscodeignore',
  'esbuild.js',
  'scripts/bundle-options.js',
];
const STAMP = path.join(h.HARNESS_DIR, 'demo-vsix.json');

/** A hash of every file the VSIX is made from, by path and content. */
function inputsHash() {
  const hash = crypto.createHash('sha256');
  const walk = (rel) => {
    const abs = path.join(h.REPO, rel);
    if (!fs.existsSync(abs)) return;
    if (fs.statSync(abs).isDirectory()) {
      for (const name of fs.readdirSync(abs).sort()) if (rel !== 'media' || name !== 'screenshots') walk(path.join(rel, name));
    } else hash.update(`${rel}\0`).update(fs.readFileSync(abs)).update('\0');
  };
  for (const input of VSIX_INPUTS) walk(input);
  return hash.digest('hex');
}

/**
 * The VSIX to install: the one the demo built last, when nothing it is made from has changed and no
 * other build (npm run package, the test harness) has replaced the file since; otherwise a new build.
 */
function demoVsix() {
  if (process.env.HARNESS_VSIX) return path.resolve(process.env.HARNESS_VSIX);
  const vsix = path.join(h.REPO, `${h.manifest().name}-${h.manifest().version}.vsix`);
  if (args.includes('--no-build')) return vsix;
  const inputs = inputsHash();
  const fileId = () => {
    const st = fs.statSync(vsix);
    return `${st.size}:${st.mtimeMs}`;
  };
  try {
    const stamp = JSON.parse(fs.readFileSync(STAMP, 'utf8'));
    if (!args.includes('--rebuild') && stamp.inputs === inputs && stamp.vsix === vsix && fs.existsSync(vsix) && stamp.file === fileId()) {
      h.log(`VSIX unchanged since the last demo build: ${path.relative(h.REPO, vsix)} (--rebuild to build anyway)`);
      return vsix;
    }
  } catch {
    /* no stamp yet */
  }
  const built = h.buildVsix();
  if (built === vsix) fs.writeFileSync(STAMP, JSON.stringify({ inputs, vsix, file: fileId() }) + '\n');
  return built;
}

/**
 * The demo server goes into the user settings of the demo's own profile: a user-level server
 * starts at once, while a workspace-defined one would first ask for consent.
 */
function demoSettings() {
  const server = path.join(h.REPO, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
  if (!fs.existsSync(server)) throw new Error(`${server} is missing: run npm ci`);
  return {
    'mcpHost.servers': {
      everything: { type: 'stdio', command: 'node', args: [server, 'stdio'] },
    },
    'mcpHost.trace': 'messages',
  };
}

async function portFree(port) {
  const net = require('node:net');
  return new Promise((resolve) => {
    const srv = net.createServer().once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/** Loads the page in Chromium, opens the MCP Host UI that exists, and saves a screenshot. */
async function screenshotDemo(url, file) {
  const e2e = require('../test/e2e/helpers');
  const browser = await h.launchChromium();
  try {
    const page = await (await browser.newContext({ viewport: e2e.VIEWPORT })).newPage();
    await e2e.openWorkbench(page, url);
    // The "MCP Host" view container, once the extension contributes it; otherwise its log.
    const container = page.locator('.activitybar .action-item a[aria-label^="MCP Host"]').first();
    if (
      await container.waitFor({ timeout: 15_000 }).then(
        () => true,
        () => false,
      )
    ) {
      await container.click();
      await page.waitForTimeout(2_000);
    }
    await e2e.openFile(page, 'README.md').catch((e) => console.log(`(could not open README.md: ${e.message.split('\n')[0]})`));
    await e2e.runCommand(page, 'MCP Host: Show Log');
    await e2e.waitForOutputChannel(page, 'MCP Host', { text: 'MCP Host' });
    await e2e.waitForIdleStatusBar(page);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    await page.mouse.move(e2e.VIEWPORT.width - 5, e2e.VIEWPORT.height - 5);
    await page.screenshot({ path: file });
    return await page.title();
  } finally {
    await browser.close().catch(() => {});
  }
}

async function main() {
  const paths = h.install();
  const vsix = demoVsix();
  const base = h.scratch('demo');
  const extensionsDir = path.join(base, 'extensions');
  h.installVsix(paths, vsix, { extensionsDir, userDataDir: path.join(base, 'user-data'), base });
  const workspace = path.join(h.REPO, 'demo', 'workspace');

  let port = portArg || 8080;
  if (!portArg && !(await portFree(port))) port = await h.freePort();
  const cs = await h.startCodeServer(paths, {
    base,
    extensionsDir,
    userDataDir: path.join(base, 'user-data'),
    folder: workspace,
    port,
    attempts: portArg ? 1 : 3,
    name: 'code-server',
    settings: demoSettings(),
  });
  let stopping = false;
  const stop = async (code) => {
    if (stopping) return;
    stopping = true;
    console.log('\nStopping code-server (process group %d)…', cs.pid);
    await cs.stop();
    process.exit(code);
  };
  process.on('SIGINT', () => stop(0));
  process.on('SIGTERM', () => stop(0));

  // It is up: prove the workbench itself is served, not just /healthz.
  const res = await fetch(cs.folderUrl);
  const html = await res.text();
  if (res.status !== 200 || !/workbench/i.test(html)) {
    h.dumpLogs('code-server', cs.logFile, [path.join(base, 'user-data', 'logs')]);
    throw new Error(`GET ${cs.folderUrl} answered ${res.status} without the workbench`);
  }

  console.log(`
  MCP Host demo: VS Code ${'(code-server ' + paths.CODE_SERVER_VERSION + ')'} with ${path.basename(vsix)} installed

    Open  ${cs.folderUrl}

  Workspace: ${path.relative(h.REPO, workspace)} (mcpHost.servers -> server-everything over stdio)
  Log:       ${path.relative(h.REPO, cs.logFile)}
  Listening on 127.0.0.1 only; from another machine use an SSH tunnel (ssh -L ${cs.port}:127.0.0.1:${cs.port} ...).
  Press Ctrl-C to stop.
`);

  if (check) {
    const shot = path.join(h.REPO, process.env.SCREENSHOT_DIR || path.join('media', 'screenshots'), 'demo.png');
    try {
      const title = await screenshotDemo(cs.folderUrl, shot);
      console.log(`check: page "${title}" served; screenshot ${path.relative(h.REPO, shot)}`);
    } catch (e) {
      console.log(`check failed: ${e.message}`);
      h.dumpLogs('code-server', cs.logFile, [path.join(base, 'user-data', 'logs')]);
      return stop(1);
    }
    return stop(0);
  }
  const { code, signal } = await cs.exit;
  if (!stopping) {
    console.log(`code-server exited on its own (${code ?? signal}); last lines of its log:`);
    console.log(h.tail(cs.logFile, 40));
    process.exit(1);
  }
}

main().catch((e) => {
  console.error(e.stack || String(e));
  h.killAllGroups();
  process.exit(1);
});
