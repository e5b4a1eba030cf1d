// Helpers for the end-to-end tests (test/e2e/*.test.js): Mocha + playwright-core driving the real
// VS Code workbench that code-server serves, with the extension installed from its VSIX.
// test/harness/run-vscode-tests.js starts code-server and passes these mochaHooks to Mocha, which
// open one browser page on the workbench for all e2e files; tests get it with ctx().page.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const h = require('../harness/lib');

const SCREENSHOT_DIR = path.resolve(h.REPO, process.env.SCREENSHOT_DIR || path.join('media', 'screenshots'));
const VIEWPORT = { width: 1400, height: 900 };
const state = { browser: undefined, page: undefined, pageErrors: [] };

/** The shared browser page and the run's paths. */
function ctx() {
  if (!state.page) throw new Error('no workbench page: run e2e tests through test/harness/run-vscode-tests.js');
  return {
    page: state.page,
    browser: state.browser,
    url: process.env.MCP_HOST_E2E_URL,
    workspace: process.env.MCP_HOST_E2E_WORKSPACE,
    codeServerLog: process.env.MCP_HOST_E2E_LOG,
    pageErrors: state.pageErrors,
  };
}

/** Loads the workbench and waits until it is usable (editor area, status bar, activity bar). */
async function openWorkbench(page, url, { timeout = 90_000 } = {}) {
  await page.goto(url, { timeout, waitUntil: 'domcontentloaded' });
  await page.locator('.monaco-workbench').waitFor({ timeout });
  await page.locator('.part.statusbar').waitFor({ timeout });
  await page.locator('.part.activitybar, .part.sidebar').first().waitFor({ timeout });
  // The remote extension host is up once the status bar's remote/problems entries have rendered.
  await page.locator('.statusbar-item').first().waitFor({ timeout });
}

/** Opens the command palette ("> ..." mode) and returns its input box. */
async function openCommandPalette(page, { timeout = 15_000 } = {}) {
  const input = page.locator('.quick-input-widget input');
  for (let attempt = 1; ; attempt++) {
    await page.keyboard.press('Escape');
    await page.keyboard.press('F1');
    try {
      await input.waitFor({ state: 'visible', timeout: attempt === 1 ? 5_000 : timeout });
      return input;
    } catch (e) {
      if (attempt >= 3) throw e;
      // Focus can sit in the browser chrome just after load: click the editor area and retry.
      await page
        .locator('.part.editor')
        .click({ position: { x: 50, y: 50 } })
        .catch(() => {});
    }
  }
}

/**
 * Opens the palette, types `query` and waits for a row containing `label`; returns that row (palette open).
 * The palette computes its list when it opens and does not refresh it, so a command contributed by an
 * extension that the extension host has not registered yet is retried with a fresh palette until timeout.
 */
async function findInPalette(page, label, { query = label, timeout = 60_000 } = {}) {
  const deadline = Date.now() + timeout;
  for (;;) {
    const input = await openCommandPalette(page);
    await input.fill('>' + query);
    const row = page.locator('.quick-input-list .monaco-list-row', { hasText: label }).first();
    try {
      await row.waitFor({ timeout: Math.max(1_000, Math.min(5_000, deadline - Date.now())) });
      return row;
    } catch (e) {
      if (Date.now() >= deadline)
        throw new Error(`"${label}" not in the command palette after ${timeout} ms (typed "${query}")`, { cause: e });
      await page.keyboard.press('Escape');
      await page.waitForTimeout(1_000);
    }
  }
}

/**
 * Runs a command by its palette label (e.g. "MCP Host: Show Log"): opens the palette, types the label,
 * waits for the matching row and accepts it.
 */
async function runCommand(page, label, { timeout = 60_000 } = {}) {
  await findInPalette(page, label, { timeout });
  // Accept with Enter once the focused row is ours: a click can land on a row that the palette
  // re-sorts under the pointer while late results ("similar commands") arrive.
  const focused = page.locator('.quick-input-list .monaco-list-row.focused', { hasText: label });
  try {
    await focused.waitFor({ timeout: 5_000 });
  } catch {
    await page.locator('.quick-input-list .monaco-list-row', { hasText: label }).first().hover();
    await page.keyboard.press('Home');
    for (let i = 0; i < 20 && !(await focused.count()); i++) await page.keyboard.press('ArrowDown');
    await focused.waitFor({ timeout: 5_000 });
  }
  await page.keyboard.press('Enter');
  await page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: 15_000 });
}

/** Opens a workspace file in an editor through Quick Open (Ctrl+P); waits for its tab. */
async function openFile(page, relativePath, { timeout = 30_000 } = {}) {
  const name = relativePath.split('/').pop();
  for (let attempt = 1; ; attempt++) {
    await page.keyboard.press('Escape');
    await page.keyboard.press('Control+P');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible', timeout: 10_000 });
    await input.fill(relativePath);
    const row = page.locator('.quick-input-list .monaco-list-row', { hasText: name }).first();
    try {
      await row.waitFor({ timeout: 10_000 });
      break;
    } catch (e) {
      if (attempt >= 3) throw e; // the file index may still be building
    }
  }
  await page.keyboard.press('Enter');
  await page.locator('.tabs-container .tab', { hasText: name }).first().waitFor({ timeout });
}

/** Waits for text anywhere in `selector` (default: the whole workbench); returns the locator. */
async function waitForText(page, text, { selector = '.monaco-workbench', timeout = 30_000 } = {}) {
  const loc = page.locator(selector, { hasText: text }).first();
  await loc.waitFor({ timeout });
  return loc;
}

/** The channel currently shown in the Output panel and its text. */
async function outputPanel(page, { timeout = 30_000 } = {}) {
  const view = page.locator('.part.panel .pane-body.output-view, .part.panel .output-view').first();
  await view.waitFor({ timeout });
  const lines = view.locator('.view-lines').first();
  await lines.waitFor({ timeout });
  return { view, text: async () => (await lines.innerText()).replace(/\u00a0/g, ' ') };
}

/** Waits until the Output panel shows `channel` and (optionally) a line containing `text`. */
async function waitForOutputChannel(page, channel, { text, timeout = 60_000 } = {}) {
  const panel = page.locator('.part.panel');
  await panel.waitFor({ timeout });
  // The channel picker is a <select> in the panel's title bar; its selected option is the channel shown.
  await page.waitForFunction(
    (name) => {
      const selects = [...document.querySelectorAll('.part.panel select, .panel .monaco-select-box')];
      return selects.some(
        (s) => s.value === name || (s.selectedOptions && [...s.selectedOptions].some((o) => o.text === name)) || s.title === name,
      );
    },
    channel,
    { timeout },
  );
  const out = await outputPanel(page, { timeout });
  if (text) await waitForText(page, text, { selector: '.part.panel .view-lines', timeout });
  return out;
}

/** Waits (at most `timeout`, never failing) until the status bar no longer says "Activating Extensions". */
async function waitForIdleStatusBar(page, { timeout = 20_000 } = {}) {
  await page
    .locator('.part.statusbar .statusbar-item', { hasText: 'Activating Extensions' })
    .waitFor({ state: 'hidden', timeout })
    .catch(() => {});
}

/** Saves a PNG under media/screenshots/ (or $SCREENSHOT_DIR) and returns its path. */
async function screenshot(page, name, opts = {}) {
  fs.mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const file = path.join(SCREENSHOT_DIR, name.endsWith('.png') ? name : `${name}.png`);
  await page.mouse.move(VIEWPORT.width - 5, VIEWPORT.height - 5).catch(() => {}); // no hover tooltips
  await waitForIdleStatusBar(page);
  await page.screenshot({ path: file, ...opts });
  return file;
}

const mochaHooks = {
  async beforeAll() {
    this.timeout(300_000);
    const url = process.env.MCP_HOST_E2E_URL;
    if (!url) throw new Error('MCP_HOST_E2E_URL is not set: run through test/harness/run-vscode-tests.js');
    state.browser = await h.launchChromium({ CHROMIUM: process.env.MCP_HOST_E2E_CHROMIUM });
    const context = await state.browser.newContext({ viewport: VIEWPORT, deviceScaleFactor: 1 });
    state.page = await context.newPage();
    state.page.on('pageerror', (e) => state.pageErrors.push(String(e)));
    // Startup is the one place that is retried: a cold 2-core machine can miss the first load.
    for (let attempt = 1; ; attempt++) {
      const t = Date.now();
      try {
        await openWorkbench(state.page, url);
        h.log(`e2e: workbench loaded in ${((Date.now() - t) / 1000).toFixed(1)}s (attempt ${attempt})`);
        break;
      } catch (e) {
        h.log(`e2e: workbench did not load (attempt ${attempt}/3): ${e.message.split('\n')[0]}`);
        if (attempt >= 3) throw e;
      }
    }
  },
  async afterEach() {
    const test = this.currentTest;
    if (test && test.state === 'failed' && state.page) {
      const dir = process.env.MCP_HOST_E2E_ARTIFACTS || path.join(h.HARNESS_DIR, 'e2e-artifacts');
      fs.mkdirSync(dir, { recursive: true });
      const file = path.join(
        dir,
        `${test
          .fullTitle()
          .replace(/[^\w.-]+/g, '_')
          .slice(0, 100)}.png`,
      );
      await state.page.screenshot({ path: file, timeout: 20_000 }).then(
        () => console.log(`    screenshot of the failure: ${path.relative(h.REPO, file)}`),
        (e) => console.log(`    no screenshot of the failure: ${e.message.split('\n')[0]}`),
      );
      const notes = await state.page
        .locator('.notifications-toasts .notification-toast')
        .allInnerTexts()
        .catch(() => []);
      if (notes.length) console.log(`    notifications: ${notes.map((n) => n.replace(/\s+/g, ' ')).join(' | ')}`);
      if (state.pageErrors.length) console.log(`    page errors:\n      ${state.pageErrors.slice(-5).join('\n      ')}`);
    }
  },
  async afterAll() {
    if (state.browser) await state.browser.close().catch(() => {});
    state.browser = state.page = undefined;
  },
};

const QUICK_INPUT = '.quick-input-widget';

/**
 * After a reload the window is a new session: the workspace server asks for its first-start consent
 * again (Allow is for one session). Allows it, if asked, and waits until every server runs (the
 * status bar counts them, "1/1").
 */
async function allowWorkspaceServerAfterReload(page, { timeout = 90_000 } = {}) {
  const consent = page.locator('.monaco-dialog-box', { hasText: 'Start the MCP server "everything"?' });
  const allRunning = page.locator('.part.statusbar .statusbar-item', { hasText: /^\s*(\d+)\/\1\s*$/ });
  await consent.or(allRunning).first().waitFor({ timeout });
  if (await consent.isVisible()) {
    await consent.locator('.monaco-button', { hasText: /^Allow$/ }).click();
    await consent.waitFor({ state: 'hidden' });
  }
  await allRunning.first().waitFor({ timeout });
}

/**
 * Allows the first start of every workspace server that asks, until the status bar counts at least
 * `count` servers, all running (earlier suites may have left servers of their own in the user settings).
 */
async function allowServers(page, count, timeout = 120_000) {
  const consent = page.locator('.monaco-dialog-box', { hasText: /Start the MCP server "/ });
  const counts = page.locator('.part.statusbar .statusbar-item', { hasText: /^\s*\d+\/\d+\s*$/ });
  const allRunning = async () => {
    for (const text of await counts.allInnerTexts().catch(() => [])) {
      const [running, total] = text.trim().split('/').map(Number);
      if (running === total && total >= count) return true;
    }
    return false;
  };
  const deadline = Date.now() + timeout;
  while (!(await allRunning())) {
    if (Date.now() > deadline)
      throw new Error(
        `not all ${count} servers run (status bar: ${(await counts.allInnerTexts().catch(() => [])).join(', ') || 'no count'})`,
      );
    // One consent per server, one after another in the same dialog: click, then look again.
    if (await consent.first().isVisible())
      await consent
        .first()
        .locator('.monaco-button', { hasText: /^Allow$/ })
        .click({ timeout: 5_000 })
        .catch(() => {});
    await page.waitForTimeout(500);
  }
}

/**
 * Allows, one after another, the first starts the workspace's servers ask for, up to and including
 * the server `name` (the workspace's own server may ask first, in a fresh window).
 */
async function allowStartsUntil(page, name, timeout = 60_000) {
  for (;;) {
    const box = await dialog(page, 'Start the MCP server "', timeout);
    const [, asking] = /Start the MCP server "([^"]+)"\?/.exec(await box.innerText());
    await box.locator('.monaco-button', { hasText: /^Allow$/ }).click();
    await page.locator('.monaco-dialog-box', { hasText: `Start the MCP server "${asking}"?` }).waitFor({ state: 'hidden' });
    if (asking === name) return;
  }
}

/** Runs a palette command that answers with a quick input of its own (runCommand waits for the palette to close). */
async function startCommand(page, label) {
  await findInPalette(page, label);
  await page.locator(`${QUICK_INPUT} .quick-input-list .monaco-list-row.focused`, { hasText: label }).waitFor({ timeout: 15_000 });
  await page.keyboard.press('Enter');
}

/** Waits for a quick input whose visible text (title, message, rows) contains `text`. */
async function quickInputStep(page, text) {
  await page.locator(QUICK_INPUT, { hasText: text }).waitFor({ timeout: 30_000 });
}

/** Waits until an editor shows `text`. */
async function editorShows(page, text, timeout = 30_000) {
  await page.locator('.part.editor .monaco-editor .view-lines', { hasText: text }).first().waitFor({ timeout });
}

/** Types into the open quick input and accepts. */
async function answer(page, text) {
  await page.locator(`${QUICK_INPUT} input`).fill(text);
  await page.keyboard.press('Enter');
}

/** Filters the open quick pick by `label` and accepts the focused row once it is that one. */
async function choose(page, label) {
  await page.locator(`${QUICK_INPUT} input`).fill(label);
  await page.locator(`${QUICK_INPUT} .quick-input-list .monaco-list-row`, { hasText: label }).first().waitFor({ timeout: 30_000 });
  // Another row may rank first (e.g. "Trigger Async Sampling Request" for "Trigger Sampling Request"): step down to ours.
  const focused = page.locator(`${QUICK_INPUT} .quick-input-list .monaco-list-row.focused`, { hasText: label });
  for (let step = 0; step < 10 && !(await focused.isVisible()); step++) await page.keyboard.press('ArrowDown');
  await focused.waitFor({ timeout: 5_000 });
  await page.keyboard.press('Enter');
}

/** Types `typed`, waits for a row `label` (e.g. a server suggestion) and clicks it. */
async function chooseRow(page, typed, label) {
  await page.locator(`${QUICK_INPUT} input`).fill(typed);
  const row = page.locator(`${QUICK_INPUT} .quick-input-list .monaco-list-row`, { hasText: label }).first();
  await row.waitFor({ timeout: 30_000 });
  await row.click();
}

/** Types `text`, waits until the list offers it (as typed or suggested) and accepts. */
async function typeAndAccept(page, text) {
  await page.locator(`${QUICK_INPUT} input`).fill(text);
  await page.locator(`${QUICK_INPUT} .quick-input-list .monaco-list-row`, { hasText: text }).first().waitFor();
  await page.keyboard.press('Enter');
}

/** "MCP Host: Call Tool..." and the tool whose label contains `toolLabel`. */
async function callToolFromPalette(page, toolLabel) {
  // Right after a restart or a reload the server may not run yet ("no running server offers tools"):
  // the command is tried again once it does, a few times at most.
  const picker = page.locator(QUICK_INPUT, { hasText: 'everything ›' });
  const none = page.locator('.notifications-toasts .notification-toast', { hasText: 'no running server offers tools' });
  for (let attempt = 1; ; attempt++) {
    await startCommand(page, 'MCP Host: Call Tool...');
    await picker.or(none).first().waitFor({ timeout: 30_000 });
    if (await picker.isVisible()) break;
    if (attempt >= 5) throw new Error('no running server offers tools, after 5 tries');
    await page.waitForTimeout(2000);
  }
  await choose(page, toolLabel);
}

/** "MCP Host: Call Tool..." for `toolLabel`, answering its arguments step by step (one input each). */
async function callToolStepByStep(page, toolLabel) {
  await callToolFromPalette(page, toolLabel);
  await quickInputStep(page, 'Step by step');
  await page.keyboard.press('Enter');
}

/** The modal dialog showing `text` (once visible). */
async function dialog(page, text, timeout = 30_000) {
  const box = page.locator('.monaco-dialog-box', { hasText: text });
  await box.waitFor({ timeout });
  return box;
}

/** Clicks `button` (exact label) in a dialog and waits for it to close. */
async function clickDialogButton(box, button) {
  await box.locator('.monaco-button', { hasText: new RegExp(`^${button.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`) }).click();
  await box.waitFor({ state: 'hidden' });
}

/** Answers the confirmation of a tool that is not read-only with "Allow Once". */
async function allowToolOnce(page) {
  await clickDialogButton(await dialog(page, 'Run the tool'), 'Allow Once');
}

/** Answers every remaining optional step of a quick-input flow: pick lists skipped, inputs left as they are. */
async function skipRemainingSteps(page) {
  for (let i = 0; i < 30; i++) {
    await page.waitForTimeout(300);
    if (!(await page.locator(QUICK_INPUT).isVisible()) || (await page.locator('.monaco-dialog-box').isVisible())) return;
    // A pick list offers Skip; if the list is still settling under the click, Enter takes the focused row.
    const skip = page.locator(`${QUICK_INPUT} .quick-input-list .monaco-list-row`, { hasText: 'Skip' });
    if (await skip.count())
      await skip
        .first()
        .click({ timeout: 5_000 })
        .catch(() => page.keyboard.press('Enter'));
    else await page.keyboard.press('Enter');
  }
}

/** Clicks `button` on the notification toast that shows `text`. */
async function clickNotificationButton(page, text, button, timeout = 30_000) {
  const toast = page.locator('.notifications-toasts .notification-toast', { hasText: text }).first();
  await toast.waitFor({ timeout });
  await toast.locator('.monaco-button', { hasText: button }).first().click();
}

/** Opens the active editor's Find on `text` (the first match becomes the selection); returns the widget. */
async function findInEditor(page, text) {
  await page.keyboard.press('Control+F');
  const widget = page.locator('.part.editor .find-widget.visible');
  await widget.locator('.find-part textarea, .find-part input').first().fill(text);
  return widget;
}

/** Whether the active editor contains `text` anywhere, also below the fold (asks the editor's Find). */
async function editorContains(page, text) {
  const widget = await findInEditor(page, text);
  // "1 of 3" once found; "No results" both before the search ran and after it found nothing, so poll.
  const found = await widget
    .locator('.matchesCount', { hasText: /\d+ of \d+/ })
    .waitFor({ timeout: 5_000 })
    .then(
      () => true,
      () => false,
    );
  await page.keyboard.press('Escape');
  return found;
}

/** Clicks the CodeLens `title` in the visible editor (e.g. "Call Tool" above arguments edited as JSON). */
async function clickCodeLens(page, title, timeout = 30_000) {
  // A lens above line 1 is out of sight once the editor has scrolled (Find reveals its match): scroll up.
  const editor = page.locator('.part.editor .editor-instance .monaco-editor').first();
  await editor.hover({ position: { x: 200, y: 100 } });
  await page.mouse.wheel(0, -5000);
  // While the editor is scrolled at all, its top shadow (`.scroll-decoration`) lies over a lens on line 1 and takes the click.
  const shadow = editor.locator('.scroll-decoration');
  const atTop = () =>
    shadow.waitFor({ state: 'detached', timeout: 5_000 }).then(
      () => true,
      () => false,
    );
  if (!(await atTop())) {
    await editor.click({ position: { x: 200, y: 100 } });
    await page.keyboard.press('Control+Home');
    await atTop();
  }
  const lens = page.locator('.part.editor .codelens-decoration a', { hasText: title }).first();
  await lens.waitFor({ timeout });
  await lens.click();
}

/** Replaces every `find` in the focused editor with `replacement` through the editor's own Replace widget. */
async function replaceInEditor(page, find, replacement) {
  await page.keyboard.press('Control+H');
  const widget = page.locator('.part.editor .find-widget.visible.replaceToggled');
  await widget.waitFor({ timeout: 15_000 });
  await widget.locator('.find-part textarea, .find-part input').first().fill(find);
  await widget.locator('.replace-part textarea, .replace-part input').first().fill(replacement);
  await widget.locator('[aria-label^="Replace All"]').first().click();
  await page.keyboard.press('Escape');
}

module.exports = {
  QUICK_INPUT,
  allowWorkspaceServerAfterReload,
  allowServers,
  allowStartsUntil,
  startCommand,
  quickInputStep,
  editorShows,
  answer,
  choose,
  chooseRow,
  typeAndAccept,
  callToolFromPalette,
  callToolStepByStep,
  findInEditor,
  dialog,
  clickDialogButton,
  allowToolOnce,
  skipRemainingSteps,
  clickNotificationButton,
  replaceInEditor,
  clickCodeLens,
  editorContains,
  ctx,
  openWorkbench,
  openCommandPalette,
  findInPalette,
  runCommand,
  openFile,
  waitForText,
  outputPanel,
  waitForOutputChannel,
  waitForIdleStatusBar,
  screenshot,
  mochaHooks,
  SCREENSHOT_DIR,
  VIEWPORT,
};
