// A tool call that runs as a task (server-everything's simulate-research-query), from the palette:
// its progress notification's Cancel asks whether to cancel the task or let it run in the
// background, and a call in the background offers its result when it ends. Run after 01-servers
// (its launch consent).
'use strict';
const assert = require('node:assert/strict');
const {
  ctx,
  QUICK_INPUT,
  quickInputStep,
  answer,
  callToolStepByStep,
  skipRemainingSteps,
  allowToolOnce,
  dialog,
  clickDialogButton,
  clickNotificationButton,
  editorShows,
  startCommand,
} = require('./helpers');

const TOAST = '.notifications-toasts .notification-toast';

/** Calls the research tool on `topic` and presses its progress notification's Cancel; the question that asks. */
async function startResearchAndCancel(page, topic) {
  await callToolStepByStep(page, 'Simulate Research Query');
  await quickInputStep(page, 'topic (required)');
  await answer(page, topic);
  await skipRemainingSteps(page);
  await allowToolOnce(page);
  // The task runs about four seconds; its status message shows in the notification.
  const progress = page.locator(TOAST, { hasText: 'Simulate Research Query' }).filter({ hasText: /working/ });
  await progress.waitFor({ timeout: 30_000 });
  // The status message changes every second or so and the toast moves with it: under load it is never
  // "stable" for Playwright's click before the task ends, so the click is dispatched to the button itself.
  await progress.locator('.monaco-button', { hasText: /^Cancel$/ }).dispatchEvent('click');
  return dialog(page, 'Cancel the task of simulate-research-query');
}

describe('a tool call that runs as a task, sent to the background', () => {
  it("the progress notification's Cancel offers Run in Background; the result is then offered, not opened", async () => {
    const { page } = ctx();
    const question = await startResearchAndCancel(page, 'lagoons');
    await clickDialogButton(question, 'Run in Background');
    const done = page.locator(TOAST, { hasText: 'simulate-research-query finished in the background' });
    await done.waitFor({ timeout: 30_000 });
    assert.equal(
      await page.locator('.part.editor .view-lines', { hasText: 'Research Report: lagoons' }).count(),
      0,
      'the result did not take the editor',
    );
    await clickNotificationButton(page, 'simulate-research-query finished in the background', 'Open Result');
    await editorShows(page, 'Research Report: lagoons');
    await startCommand(page, 'MCP Host: Show Tool Call History');
    const row = page.locator(`${QUICK_INPUT} .quick-input-list .monaco-list-row`, { hasText: 'simulate-research-query' }).first();
    await row.waitFor({ timeout: 15_000 });
    assert.match((await row.innerText()).replace(/\s+/g, ' '), /ok · \d+ ms · in the background/);
    await page.keyboard.press('Escape');
  });

  it('Cancel Task instead cancels it on the server, and says so', async () => {
    const { page } = ctx();
    const question = await startResearchAndCancel(page, 'atolls');
    await clickDialogButton(question, 'Cancel Task');
    await page.locator(TOAST, { hasText: 'simulate-research-query was cancelled' }).waitFor({ timeout: 15_000 });
  });
});
