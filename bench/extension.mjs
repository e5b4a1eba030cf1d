// The extension's figures for `npm run bench`: the production bundle's size, the VSIX's size, and
// how long activate() takes inside code-server (the real workbench in headless Chromium) with no
// servers configured and with five. The extension logs "MCP Host activated in N ms" at the end of
// activate(); server start is not awaited, so the five servers show up in the log afterwards.
// Reuses the real-VS-Code harness (test/harness/lib.js): its cached code-server and Chromium.
import { createRequire } from 'node:module';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const here = path.dirname(fileURLToPath(import.meta.url));
const h = require(path.join(here, '..', 'test', 'harness', 'lib.js'));
const ACTIVATED = /MCP Host activated in ([\d.]+) ms/;
const SERVERS_LINE = /servers: (.*)/;

const kb = (bytes) => `${(bytes / 1024).toFixed(0)} KB`;

/** Opens the workbench once with the given user settings and reads the activation line of the log. */
async function activationOnce(paths, browser, extensionsDir, label, settings) {
  const base = h.scratch(`bench-${label}`);
  const folder = path.join(base, 'folder');
  fs.mkdirSync(folder, { recursive: true });
  const userDataDir = path.join(base, 'user-data');
  const cs = await h.startCodeServer(paths, { base, extensionsDir, userDataDir, folder, settings, name: `code-server-${label}` });
  const page = await browser.newPage();
  try {
    await page.goto(cs.folderUrl, { timeout: 120_000 });
    const logsDir = path.join(userDataDir, 'logs');
    const readLog = () =>
      h
        .findFiles(logsDir, /^.*MCP Host\.log$/)
        .map((f) => fs.readFileSync(f, 'utf8'))
        .join('\n');
    const activated = await h.waitFor(() => ACTIVATED.exec(readLog()), 180_000, 250);
    if (!activated) throw new Error(`${label}: no "MCP Host activated" line in the extension's log`);
    const servers = await h.waitFor(() => SERVERS_LINE.exec(readLog()), 60_000, 250);
    return { activateMs: Number(activated[1]), servers: servers ? servers[1] : undefined };
  } finally {
    await page.close().catch(() => undefined);
    await cs.stop(2000);
  }
}

export async function measureExtension({ repetitions = 3 } = {}) {
  const notes = [];
  const figures = {};
  const result = { activation: {} };
  try {
    const paths = h.install();
    const vsix = h.buildVsix();
    result.bundleBytes = fs.statSync(path.join(h.REPO, 'dist', 'extension.js')).size;
    result.vsixBytes = fs.statSync(vsix).size;
    figures['bundle dist/extension.js (production)'] = kb(result.bundleBytes);
    figures.VSIX = kb(result.vsixBytes);
    const base = h.scratch('bench-extension');
    const extensionsDir = path.join(base, 'extensions');
    h.installVsix(paths, vsix, { extensionsDir, userDataDir: path.join(base, 'install-user-data'), base });
    const fixture = path.join(h.REPO, 'bench', 'fixture-server.mjs');
    const five = Object.fromEntries(
      ['one', 'two', 'three', 'four', 'five'].map((name) => [name, { command: process.execPath, args: [fixture, 'stdio'] }]),
    );
    const browser = await h.launchChromium(paths);
    try {
      for (const [label, settings] of [
        ['no-servers', {}],
        ['five-servers', { 'mcpHost.servers': five }],
      ]) {
        const runs = [];
        for (let i = 0; i < repetitions; i++) runs.push(await activationOnce(paths, browser, extensionsDir, label, settings));
        const ms = runs.map((r) => r.activateMs).sort((a, b) => a - b);
        result.activation[label] = { samplesMs: ms, medianMs: ms[ms.length >> 1], servers: runs[runs.length - 1].servers };
        figures[`activate() with ${label.replace('-', ' ')}`] =
          `median ${ms[ms.length >> 1].toFixed(1)} ms (${ms[0].toFixed(1)}–${ms[ms.length - 1].toFixed(1)}, ${ms.length} runs; target < 50 ms)` +
          (label === 'five-servers'
            ? `; afterwards, without blocking it: ${runs[runs.length - 1].servers ?? 'servers not reported within 60 s'}`
            : '');
      }
    } finally {
      await browser.close().catch(() => undefined);
    }
  } catch (error) {
    notes.push(`extension figures incomplete: ${error.message.split('\n')[0]}`);
  }
  return { ...result, figures, notes };
}

// `node bench/extension.mjs` measures the extension alone.
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  measureExtension().then(
    (r) => {
      for (const [label, value] of Object.entries(r.figures)) console.log(`${label}: ${value}`);
      for (const note of r.notes) console.log(`note: ${note}`);
      process.exit(0);
    },
    (error) => {
      console.error(error);
      process.exit(1);
    },
  );
}
