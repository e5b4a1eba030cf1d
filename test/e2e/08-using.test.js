// What a person meets using MCP Host day to day: tools found by name, an empty required value
// questioned, a refused template explained, the palette offering only what applies, the server's
// own report in Show Server Info, and result tabs that survive a reload as a clear note.
'use strict';
const assert = require('node:assert/strict');
const {
  ctx,
  screenshot,
  QUICK_INPUT,
  startCommand,
  quickInputStep,
  editorShows,
  answer,
  openCommandPalette,
  callToolStepByStep,
  waitForText,
  allowWorkspaceServerAfterReload,
} = require('./helpers');

const sidebar = '.part.sidebar';

/** When this file runs alone (--grep), the workspace server still waits for its first-start consent. */
async function everythingRunning(page) {
  await allowWorkspaceServerAfterReload(page);
  const item = page.locator('.activitybar .action-item a[aria-label^="MCP Host"]').first();
  await item.waitFor({ timeout: 60_000 });
  if (!(await page.locator('.activitybar .action-item.checked a[aria-label^="MCP Host"]').count())) await item.click();
  await page
    .locator(`${sidebar} .monaco-list-row`, { hasText: /everything.*running/ })
    .first()
    .waitFor({ timeout: 90_000 });
}

/** The visible rows of the open quick pick. */
async function rowTexts(page) {
  return (await page.locator(`${QUICK_INPUT} .quick-input-list .monaco-list-row`).allInnerTexts()).map((t) => t.replace(/\s+/g, ' '));
}

describe('using MCP Host day to day', () => {
  it('finds a tool by its name in Call Tool, the name shown beside the title', async () => {
    const { page } = ctx();
    await everythingRunning(page);
    await startCommand(page, 'MCP Host: Call Tool...');
    await quickInputStep(page, 'everything ›');
    await page.locator(`${QUICK_INPUT} input`).fill('get-sum');
    const row = page.locator(`${QUICK_INPUT} .quick-input-list .monaco-list-row`, { hasText: 'Get Sum Tool' }).first();
    await row.waitFor({ timeout: 15_000 });
    assert.match((await row.innerText()).replace(/\s+/g, ' '), /Get Sum Tool.*get-sum/);
    await page.keyboard.press('Escape');
  });

  it('asks again before sending an empty required string', async () => {
    const { page } = ctx();
    await callToolStepByStep(page, 'Echo Tool');
    await quickInputStep(page, 'message (required)');
    await page.locator(`${QUICK_INPUT} input`).fill('');
    await page.keyboard.press('Enter');
    await quickInputStep(page, 'Press Enter again to send an empty string');
    await quickInputStep(page, 'everything › echo (1/1)'); // still the same step: nothing was sent
    await answer(page, 'not empty after all');
    await editorShows(page, 'Echo: not empty after all');
  });

  it("explains a template value the server refuses, with the template's description while asking", async () => {
    const { page } = ctx();
    const group = page.locator(`${sidebar} .monaco-list-row[aria-label*="Resource Templates"]`).first();
    await group.waitFor({ timeout: 30_000 });
    if ((await group.getAttribute('aria-expanded')) !== 'true') await group.click();
    await page.locator(`${sidebar} .monaco-list-row`, { hasText: 'Dynamic Text Resource' }).first().click();
    await quickInputStep(page, 'Dynamic Text Resource: resourceId (1/1)');
    assert.match(await page.locator(`${QUICK_INPUT} input`).getAttribute('placeholder'), /must be an integer/);
    await page.locator(`${QUICK_INPUT} input`).fill('hello');
    await quickInputStep(page, 'resourceId: Plaintext dynamic resource'); // the hint above what was typed
    await screenshot(page, 'template-hint');
    await page.locator(`${QUICK_INPUT} .quick-input-list .monaco-list-row`, { hasText: 'hello' }).first().waitFor();
    await page.keyboard.press('Enter');
    await page
      .locator('.notifications-toasts .notification-toast', { hasText: /Unknown resource: .*dynamic\/text\/hello/ })
      .first()
      .waitFor({ timeout: 30_000 });
  });

  it('offers Start Server in the palette only while a server is not running', async () => {
    const { page } = ctx();
    await everythingRunning(page);
    const input = await openCommandPalette(page);
    await input.fill('>MCP Host: S');
    await page
      .locator(`${QUICK_INPUT} .quick-input-list .monaco-list-row`, { hasText: 'MCP Host: Stop Server' })
      .first()
      .waitFor({ timeout: 30_000 });
    const rows = await rowTexts(page);
    assert.ok(
      rows.some((r) => r.includes('MCP Host: Show Server Info')),
      rows.join(' | '),
    );
    assert.ok(!rows.some((r) => r.includes('MCP Host: Start Server')), `every server runs, yet: ${rows.join(' | ')}`);
    assert.ok(!rows.some((r) => r.includes('MCP Host: Sign Out of Server')), 'no HTTP server is configured');
    await page.keyboard.press('Escape');
  });

  it("shows the server's own report in Show Server Info", async () => {
    const { page } = ctx();
    await startCommand(page, 'MCP Host: Show Server Info');
    // With a second server (07-setup adds one) the command asks which.
    const which = page.locator(`${QUICK_INPUT} input[placeholder="Which MCP server?"]`);
    const tab = page.locator('.tabs-container .tab', { hasText: 'everything.md' });
    await which.or(tab).first().waitFor({ timeout: 30_000 });
    if (await which.isVisible()) {
      await which.fill('everything');
      // "everything", not "added-everything".
      await page
        .locator(`${QUICK_INPUT} .quick-input-list .monaco-list-row.focused`, { hasText: /(^|\s)everything/ })
        .waitFor({ timeout: 15_000 });
      await page.keyboard.press('Enter');
    }
    await tab.first().waitFor({ timeout: 30_000 });
    await editorShows(page, '# everything');
    await editorShows(page, 'Capabilities');
    // From the server's own lines down: the line above holds the command, a path of this machine.
    const from = await page.locator('.part.editor .view-line', { hasText: 'Server:' }).first().boundingBox();
    const editor = await page.locator('.part.editor .editor-instance').first().boundingBox();
    await screenshot(page, 'server-info', {
      clip: { x: editor.x, y: from.y - 4, width: editor.width, height: editor.y + editor.height - from.y + 4 },
    });
  });

  it('shows a result tab restored after a reload as gone, with what to do', async () => {
    const { page } = ctx();
    await callToolStepByStep(page, 'Echo Tool');
    await quickInputStep(page, 'message (required)');
    await answer(page, 'before the reload');
    await editorShows(page, 'Echo: before the reload');
    await page.reload({ waitUntil: 'domcontentloaded' });
    await page.locator('.monaco-workbench').waitFor({ timeout: 90_000 });
    // A new window session: the workspace server asks again (Allow was for that session only).
    const consent = page.locator('.monaco-dialog-box', { hasText: 'Start the MCP server "everything"?' });
    await consent.locator('.monaco-button', { hasText: /^Allow$/ }).click({ timeout: 90_000 });
    await consent.waitFor({ state: 'hidden' });
    const tab = page.locator('.tabs-container .tab', { hasText: 'echo.md' }).first();
    await tab.click({ timeout: 60_000 });
    await editorShows(page, 'This tool result is gone', 60_000);
    await waitForText(page, 'Call Tool', { selector: '.part.editor' });
  });
});
