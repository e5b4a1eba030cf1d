// Resource templates and prompts filled in with the server's completion suggestions, and
// elicitation answered (and declined) through the UI.
'use strict';
const {
  ctx,
  screenshot,
  QUICK_INPUT,
  startCommand,
  quickInputStep,
  editorShows,
  chooseRow,
  typeAndAccept,
  allowToolOnce,
  skipRemainingSteps,
} = require('./helpers');
/** Calls trigger-elicitation-request and returns the server's question, once it shows. */
async function startElicitation(page) {
  await startCommand(page, 'MCP Host: Call Tool...');
  await chooseRow(page, 'Trigger Elicitation Request', 'Trigger Elicitation Request');
  await allowToolOnce(page);
  const ask = page.locator('.monaco-dialog-box', { hasText: 'The MCP server "everything" asks for information' });
  await ask.waitFor({ timeout: 30_000 });
  return ask;
}

describe('completion suggestions and elicitation in the workbench', () => {
  it('fills a resource template with a suggested value', async () => {
    const { page } = ctx();
    await startCommand(page, 'MCP Host: Read Resource...');
    await chooseRow(page, 'Dynamic Text', 'Dynamic Text Resource');
    await quickInputStep(page, 'Dynamic Text Resource: resourceId (1/1)');
    await typeAndAccept(page, '3');
    await editorShows(page, 'Resource 3: This is a plaintext resource');
  });

  it('gets completable-prompt with the server’s suggestions, the first answer narrowing the second', async () => {
    const { page } = ctx();
    await startCommand(page, 'MCP Host: Get Prompt...');
    await chooseRow(page, 'Team Management', 'Team Management');
    await quickInputStep(page, 'completable-prompt (1/2)');
    await page.locator(`${QUICK_INPUT} input`).fill('E');
    const suggestion = page.locator(`${QUICK_INPUT} .quick-input-list .monaco-list-row`, { hasText: 'suggested by the server' });
    await suggestion.filter({ hasText: 'Engineering' }).first().waitFor({ timeout: 30_000 });
    await screenshot(page, 'prompt-completion');
    await suggestion.filter({ hasText: 'Engineering' }).first().click();
    await quickInputStep(page, 'completable-prompt (2/2)');
    for (const name of ['Alice', 'Bob', 'Charlie']) await suggestion.filter({ hasText: name }).first().waitFor({ timeout: 30_000 });
    await suggestion.filter({ hasText: 'Bob' }).first().click();
    await editorShows(page, 'Please promote Bob to the head of the Engineering team');
  });

  it('gets args-prompt, leaving the optional argument out', async () => {
    const { page } = ctx();
    await startCommand(page, 'MCP Host: Get Prompt...');
    await chooseRow(page, 'Arguments Prompt', 'Arguments Prompt');
    await quickInputStep(page, 'args-prompt (1/2)');
    await typeAndAccept(page, 'Oslo');
    await quickInputStep(page, 'args-prompt (2/2)');
    await page.keyboard.press('Enter');
    await editorShows(page, "What's weather in Oslo?");
  });

  it('answers an elicitation form, naming the server', async () => {
    const { page } = ctx();
    const ask = await startElicitation(page);
    await screenshot(page, 'elicitation');
    await ask.locator('.monaco-button', { hasText: /^Respond$/ }).click();
    // Fields are named by their schema titles: server-everything titles its name field "String".
    await quickInputStep(page, 'String (required)');
    await page.locator(`${QUICK_INPUT} input`).fill('Ada Lovelace');
    await page.keyboard.press('Enter');
    // Every other field is optional: skip pick lists, keep defaults or leave inputs empty; the
    // review that follows has Send first, which Enter takes.
    await skipRemainingSteps(page);
    await editorShows(page, 'Ada Lovelace');
  });

  it('reviews the answers before they are sent, going back to a field from the review', async () => {
    const { page } = ctx();
    const ask = await startElicitation(page);
    await ask.locator('.monaco-button', { hasText: /^Respond$/ }).click();
    await quickInputStep(page, 'String (required)');
    await page.locator(`${QUICK_INPUT} input`).fill('Ada Lovelace');
    await page.keyboard.press('Enter');
    // Keep every other answer of the 13 fields (Enter takes the default, or leaves an input empty).
    for (let step = 2; step <= 13; step++) {
      await quickInputStep(page, `asks (${step}/13)`);
      await page.keyboard.press('Enter');
    }
    const review = page.locator(QUICK_INPUT, { hasText: 'Edit Legacy Titled Single Select Enum' });
    await review.waitFor({ timeout: 30_000 });
    await page.locator(`${QUICK_INPUT} .quick-input-list .monaco-list-row`, { hasText: 'Ada Lovelace' }).waitFor({ timeout: 30_000 });
    await chooseRow(page, 'Edit String', 'Edit String');
    await quickInputStep(page, 'String (required)');
    await page.locator(`${QUICK_INPUT} input`).fill('Grace Hopper');
    await page.keyboard.press('Enter');
    await review.waitFor({ timeout: 30_000 });
    await page.locator(`${QUICK_INPUT} .quick-input-list .monaco-list-row`, { hasText: 'Grace Hopper' }).waitFor({ timeout: 30_000 });
    await chooseRow(page, 'Send', 'Send');
    await editorShows(page, 'Name: Grace Hopper');
  });

  it('declines an elicitation', async () => {
    const { page } = ctx();
    const ask = await startElicitation(page);
    await ask.locator('.monaco-button', { hasText: /^Decline$/ }).click();
    await editorShows(page, 'decline');
  });
});
