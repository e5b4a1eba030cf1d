// Tools, resources and prompts from the palette and the Servers view, the way a person uses them.
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
  callToolFromPalette: callTool,
  callToolStepByStep,
} = require('./helpers');

const sidebar = '.part.sidebar';

async function historyRows(page) {
  await startCommand(page, 'MCP Host: Show Tool Call History');
  // Wait for the history's own rows, not the palette rows it replaces.
  await page
    .locator(QUICK_INPUT, { hasText: 'Which call?' })
    .or(page.locator(`${QUICK_INPUT} .quick-input-list .monaco-list-row`, { hasText: 'everything ›' }))
    .first()
    .waitFor({ timeout: 15_000 });
  const rows = page.locator(`${QUICK_INPUT} .quick-input-list .monaco-list-row`, { hasText: 'everything ›' });
  await rows.first().waitFor({ timeout: 15_000 });
  const texts = (await rows.allInnerTexts()).map((t) => t.replace(/\s+/g, ' '));
  await page.keyboard.press('Escape');
  return texts;
}

describe('tools, resources and prompts in the workbench', () => {
  it('calls echo with typed text and opens the result', async () => {
    const { page } = ctx();
    await callToolStepByStep(page, 'Echo Tool');
    await quickInputStep(page, 'message (required)');
    await answer(page, 'hello from the palette');
    await editorShows(page, 'Echo: hello from the palette');
    await screenshot(page, 'tool-result');
  });

  it('calls get-sum with numbers', async () => {
    const { page } = ctx();
    await callToolStepByStep(page, 'Get Sum Tool');
    await quickInputStep(page, 'a (required)');
    await answer(page, '2');
    await quickInputStep(page, 'b (required)');
    await answer(page, '40');
    await editorShows(page, 'is 42');
  });

  it('refuses a number that is not one, and nothing is sent', async () => {
    const { page } = ctx();
    const before = await historyRows(page);
    await callToolStepByStep(page, 'Get Sum Tool');
    await quickInputStep(page, 'a (required)');
    await page.locator(`${QUICK_INPUT} input`).fill('abc');
    await quickInputStep(page, 'Enter a number');
    await page.keyboard.press('Enter');
    await page.waitForTimeout(500);
    await quickInputStep(page, 'Enter a number'); // still on the same step, still refused
    await page.keyboard.press('Escape');
    assert.deepEqual(await historyRows(page), before, 'no call was made');
  });

  it('asks before a tool that is not read-only; Cancel sends nothing', async () => {
    const { page } = ctx();
    const before = await historyRows(page);
    await callTool(page, 'Toggle Simulated Logging');
    const dialog = page.locator('.monaco-dialog-box', { hasText: 'Run the tool "toggle-simulated-logging"' });
    await dialog.waitFor({ timeout: 30_000 });
    await screenshot(page, 'tool-confirmation');
    await dialog.locator('.monaco-button', { hasText: /^Cancel$/ }).click();
    await dialog.waitFor({ state: 'hidden' });
    assert.deepEqual(await historyRows(page), before);
  });

  it('shows progress of the long-running tool, and Cancel stops it', async () => {
    const { page } = ctx();
    await callToolStepByStep(page, 'Trigger Long Running Operation');
    await quickInputStep(page, 'duration (optional');
    await answer(page, '30');
    await quickInputStep(page, 'steps (optional');
    await answer(page, '30');
    const toast = page.locator('.notifications-toasts .notification-toast', { hasText: 'Trigger Long Running Operation' });
    await toast.locator('text=/\\d+ of 30/').waitFor({ timeout: 30_000 });
    await screenshot(page, 'tool-progress');
    await toast.locator('.monaco-button', { hasText: 'Cancel' }).click();
    await toast.waitFor({ state: 'hidden', timeout: 15_000 });
    // Not silent: a notice says it was cancelled.
    await page
      .locator('.notifications-toasts .notification-toast', { hasText: 'trigger-long-running-operation was cancelled' })
      .waitFor({ timeout: 15_000 });
    const rows = await historyRows(page);
    assert.match(rows[0], /Trigger Long Running Operation|trigger-long-running-operation/);
    assert.match(rows[0], /cancelled/);
  });

  it('opens a resource from the Servers view as a document', async () => {
    const { page } = ctx();
    const item = page.locator('.activitybar .action-item a[aria-label^="MCP Host"]').first();
    if (!(await page.locator('.activitybar .action-item.checked a[aria-label^="MCP Host"]').count())) await item.click();
    const group = page.locator(`${sidebar} .monaco-list-row[aria-label*="Resources"]`).first();
    await group.waitFor({ timeout: 30_000 });
    if ((await group.getAttribute('aria-expanded')) !== 'true') await group.click();
    await page.locator(`${sidebar} .monaco-list-row`, { hasText: 'architecture.md' }).first().click();
    await page.locator('.tabs-container .tab', { hasText: 'architecture.md' }).waitFor({ timeout: 30_000 });
    await editorShows(page, 'Architecture');
    await screenshot(page, 'resource-document');
  });

  it('gets a prompt from the Servers view', async () => {
    const { page } = ctx();
    const group = page.locator(`${sidebar} .monaco-list-row[aria-label*="Prompts"]`).first();
    if ((await group.getAttribute('aria-expanded')) !== 'true') await group.click();
    await page.locator(`${sidebar} .monaco-list-row`, { hasText: 'Simple' }).first().click();
    await editorShows(page, 'Prompt: simple-prompt');
    await screenshot(page, 'prompt-document');
  });
});
