// MCP Apps in the real workbench: the SDK's example app (@modelcontextprotocol/server-basic-vanillajs)
// opens beside its result, renders, calls its own server's tool through MCP Host's confirmation, the
// call lands in the trace and the history, and the app's theme follows VS Code's. A hostile app of
// ours (test/fixtures/app-server.mjs) tries to leave its sandbox; each try must fail, shown in the app.
// The servers are added to the workspace settings here and removed again after the suite.
'use strict';
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const h = require('../harness/lib');
const {
  ctx,
  QUICK_INPUT,
  findInPalette,
  screenshot,
  startCommand,
  quickInputStep,
  choose,
  dialog,
  clickDialogButton,
  runCommand,
  waitForOutputChannel,
  allowServers,
} = require('./helpers');

const VANILLA = path.join(h.REPO, 'node_modules', '@modelcontextprotocol', 'server-basic-vanillajs');
const BUDGET = path.join(h.REPO, 'node_modules', '@modelcontextprotocol', 'server-budget-allocator');
const FIXTURE = path.join(h.REPO, 'test', 'fixtures', 'app-server.mjs');

/** The frame (webview > app iframe) that has `selector`, once there is one. */
async function appFrame(page, selector, timeout = 60_000) {
  const deadline = Date.now() + timeout;
  for (;;) {
    for (const frame of page.frames()) {
      if (
        await frame
          .locator(selector)
          .count()
          .catch(() => 0)
      )
        return frame;
    }
    if (Date.now() > deadline)
      throw new Error(
        `no frame with ${selector}; frames: ${page
          .frames()
          .map((f) => f.url().slice(0, 80))
          .join(', ')}`,
      );
    await page.waitForTimeout(250);
  }
}

/** Call Tool from the palette for `server`'s tool labelled `label`. */
async function callTool(page, server, label) {
  await startCommand(page, 'MCP Host: Call Tool...');
  await quickInputStep(page, 'MCP Host: Call Tool');
  await choose(page, `${server} › ${label}`);
}

async function setTheme(page, name) {
  await findInPalette(page, 'Preferences: Color Theme');
  // "Preferences: Browse Color Themes in Marketplace" ranks first: click ours.
  await page
    .locator(`${QUICK_INPUT} .quick-input-list .monaco-list-row`, { hasText: 'Preferences: Color Theme' })
    .filter({ hasNotText: 'Browse' })
    .first()
    .click();
  await page.locator(`${QUICK_INPUT} .quick-input-list .monaco-list-row`, { hasText: 'Light Modern' }).first().waitFor({ timeout: 30_000 });
  await choose(page, name);
  await page.locator(QUICK_INPUT).waitFor({ state: 'hidden' });
}

describe('MCP Apps', function () {
  this.timeout(300_000);
  let settingsFile;
  let original;

  before(async () => {
    const { page, workspace } = ctx();
    settingsFile = path.join(workspace, '.vscode', 'settings.json');
    original = fs.readFileSync(settingsFile, 'utf8');
    const settings = JSON.parse(original.replace(/^\s*\/\/.*$/gm, ''));
    settings['mcpHost.servers'].vanilla = {
      type: 'stdio',
      command: 'node',
      args: [path.join(VANILLA, 'dist', 'index.js'), '--stdio'],
      cwd: VANILLA,
    };
    settings['mcpHost.servers'].budget = {
      type: 'stdio',
      command: 'node',
      args: [path.join(BUDGET, 'dist', 'index.js'), '--stdio'],
      cwd: BUDGET,
    };
    settings['mcpHost.servers']['apps-fixture'] = {
      type: 'stdio',
      command: 'node',
      args: [FIXTURE],
      tools: { deny: ['denied-tool'] },
      trustAnnotations: true,
    };
    fs.writeFileSync(settingsFile, JSON.stringify(settings, null, 2));
    await allowServers(page, Object.keys(settings['mcpHost.servers']).length);
  });

  after(async () => {
    if (settingsFile && original !== undefined) fs.writeFileSync(settingsFile, original);
    const { page } = ctx();
    await page.keyboard.press('Escape');
  });

  it('opens the vanilla app beside the result; its button calls get-time through the confirmation, in the trace and the history', async () => {
    const { page } = ctx();
    await callTool(page, 'vanilla', 'Get Time');
    // get-time is not marked read-only: the person's call asks first.
    await clickDialogButton(await dialog(page, 'Run the tool "get-time"'), 'Allow Once');
    await page.locator('.tabs-container .tab', { hasText: 'get-time.md' }).first().waitFor({ timeout: 30_000 });
    await page.locator('.tabs-container .tab', { hasText: 'vanilla › Get Time' }).first().waitFor({ timeout: 30_000 });
    const app = await appFrame(page, '#get-time-btn');
    // The call's result was delivered to the app (ui/notifications/tool-result): it shows that time.
    const shown = app.locator('#server-time');
    await app.waitForFunction(() => /\d{4}-\d\d-\d\dT/.test(document.getElementById('server-time')?.textContent ?? ''), null, {
      timeout: 30_000,
    });
    const first = (await shown.innerText()).trim();
    assert.equal(await app.evaluate(() => typeof acquireVsCodeApi), 'undefined', 'no VS Code API in the app frame');
    await screenshot(page, 'mcp-app');

    await page.waitForTimeout(1100); // a later second, so the new time differs
    await app.locator('#get-time-btn').click();
    // The app's own call meets the same confirmation as the person's, and the question says the app asks.
    await clickDialogButton(await dialog(page, 'The app of the MCP server "vanilla" asks to run the tool "get-time"'), 'Allow Once');
    await app.waitForFunction((before) => (document.getElementById('server-time')?.textContent ?? '').trim() !== before, first, {
      timeout: 30_000,
    });
    assert.match((await shown.innerText()).trim(), /\d{4}-\d\d-\d\dT/);

    // ui/message: no chat to send it to, so the person sees it, with Copy.
    await app.locator('#send-message-btn').click();
    await page
      .locator('.notifications-toasts .notification-toast', { hasText: 'sends a message' })
      .filter({ hasText: 'This is message text.' })
      .first()
      .waitFor({ timeout: 30_000 });
    // ui/open-link to a web page: the URL consent, which the person declines.
    await app.locator('#open-link-btn').click();
    await clickDialogButton(await dialog(page, 'wants you to open a page on modelcontextprotocol.io'), 'Decline');
    // Focus goes back to the app's webview; the workbench is the person's again after a click on the result.
    await page.locator('.part.editor .monaco-editor .view-lines').first().click();
    await page.waitForTimeout(500);

    await runCommand(page, 'MCP Host: Show Protocol Trace');
    await waitForOutputChannel(page, 'MCP Host Trace', { text: 'tools/call' });

    await startCommand(page, 'MCP Host: Show Tool Call History');
    const byApp = page
      .locator(`${QUICK_INPUT} .quick-input-list .monaco-list-row`, { hasText: 'vanilla › get-time' })
      .filter({ hasText: 'by the app' });
    await byApp.first().waitFor({ timeout: 15_000 });
    await page.keyboard.press('Escape');
  });

  it("follows VS Code's colour theme", async () => {
    const { page } = ctx();
    const app = await appFrame(page, '#get-time-btn');
    assert.equal(await app.evaluate(() => document.documentElement.getAttribute('data-theme')), 'dark');
    const background = () => app.evaluate(() => document.documentElement.style.getPropertyValue('--color-background-primary'));
    assert.ok(await background(), 'the spec style variables are set from the theme');
    const dark = await background();
    try {
      await setTheme(page, 'Light Modern');
      await app.waitForFunction(() => document.documentElement.getAttribute('data-theme') === 'light', null, { timeout: 30_000 });
      assert.notEqual(await background(), dark);
    } finally {
      await setTheme(page, 'Dark Modern');
    }
    await app.waitForFunction(() => document.documentElement.getAttribute('data-theme') === 'dark', null, { timeout: 30_000 });
  });

  it('keeps a hostile app inside its sandbox: each escape fails and the app says so', async () => {
    const { page } = ctx();
    await callTool(page, 'apps-fixture', 'Hostile App');
    // It declares clipboardWrite: the person is asked, and says no.
    const ask = await dialog(page, 'asks for: clipboardWrite');
    await clickDialogButton(ask, 'Cancel');
    const app = await appFrame(page, '[data-try="finished"]');
    // Above the app, a line of ours: where it may connect, and what it asked for but was refused.
    const origins = await app.parentFrame().locator('#mcp-host-origins').innerText();
    assert.match(
      origins,
      /^This app may connect to: https:\/\/allowed\.example\. Refused \(the reasons are in the log of "apps-fixture"\): .*https:\/\/\*\.com, http:\/\/127\.0\.0\.1:\*/,
    );
    const outcome = async (name) => (await app.locator(`[data-try="${name}"]`).innerText()).replace(/^[^:]+: /, '');
    const all = await app.locator('[data-try]').allInnerTexts();
    assert.doesNotMatch(all.join('\n'), /REACHED/, all.join('\n'));
    assert.equal(await outcome('vscode-api'), 'absent');
    assert.match(await outcome('parent-vscode-api'), /^(blocked|absent)/);
    assert.match(await outcome('navigate-top'), /^blocked/);
    assert.match(await outcome('fetch'), /^blocked/);
    assert.match(await outcome('call-denied'), /^refused: .*tools\.allow \/ tools\.deny/);
    assert.match(await outcome('call-model-only'), /^refused: .*model-only/);
    assert.match(await outcome('open-command'), /^refused/);
    assert.match(await outcome('open-file'), /^refused/);
    assert.match(await outcome('read-other'), /^refused/);
    assert.match(await outcome('call-echo'), /from the app/);
    // Nothing left the sandbox: the workbench is still here, and no consent for the links was asked.
    assert.equal(await page.locator('.monaco-dialog-box').count(), 0);
    assert.ok(await page.locator('.monaco-workbench').isVisible());
  });

  it('runs a richer app, the budget allocator: its sliders and chart come from the tool result', async () => {
    const { page } = ctx();
    await callTool(page, 'budget', 'Get Budget Data');
    await clickDialogButton(await dialog(page, 'Run the tool "get-budget-data"'), 'Allow Once');
    const app = await appFrame(page, '#sliders-container');
    await app.waitForFunction(
      () =>
        document.querySelectorAll('#sliders-container > *').length > 0 && document.querySelectorAll('#budget-selector option').length > 0,
      null,
      { timeout: 30_000 },
    );
    assert.ok(await app.locator('#budget-chart').isVisible(), 'the chart is drawn');
    assert.notEqual((await app.locator('#status-bar').innerText()).trim(), '');
  });

  it('does not offer an app-only tool in the palette', async () => {
    const { page } = ctx();
    await startCommand(page, 'MCP Host: Call Tool...');
    await quickInputStep(page, 'MCP Host: Call Tool');
    await page.locator(`${QUICK_INPUT} input`).fill('apps-fixture ›');
    const rows = page.locator(`${QUICK_INPUT} .quick-input-list .monaco-list-row`);
    await rows.filter({ hasText: 'apps-fixture › echo' }).first().waitFor({ timeout: 30_000 });
    const labels = await rows.allInnerTexts();
    await page.keyboard.press('Escape');
    assert.ok(
      labels.some((l) => l.includes('model-only')),
      labels.join(' | '),
    );
    assert.ok(!labels.some((l) => l.includes('app-helper')), labels.join(' | '));
  });
});
