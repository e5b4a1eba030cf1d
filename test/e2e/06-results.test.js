// The rest of the tool-call flow: arguments edited as JSON, resource links in a result opened as
// resource documents, and URL elicitation opened in the browser only after consent.
'use strict';
const assert = require('node:assert/strict');
const {
  ctx,
  screenshot,
  quickInputStep,
  editorShows,
  answer,
  choose,
  callToolFromPalette,
  callToolStepByStep,
  findInEditor,
  dialog,
  clickDialogButton,
  allowToolOnce,
  skipRemainingSteps,
  runCommand,
  replaceInEditor,
  clickCodeLens,
} = require('./helpers');

/** Selects the first match of `text` in the active editor (Find, then back to the editor). */
async function selectInEditor(page, text) {
  await findInEditor(page, text);
  await page.keyboard.press('Escape');
}

describe('tool results, links and URL elicitation in the workbench', () => {
  it('calls a tool with arguments edited as JSON', async () => {
    const { page } = ctx();
    await callToolFromPalette(page, 'Echo Tool');
    await quickInputStep(page, 'Edit as JSON');
    await choose(page, 'Edit as JSON');
    // It starts from the required key, not from {}.
    await editorShows(page, '"message": ""');
    await replaceInEditor(page, '""', '"typed as JSON"');
    await editorShows(page, 'typed as JSON');
    await screenshot(page, 'tool-edit-as-json');
    await clickCodeLens(page, 'Call Tool');
    await editorShows(page, 'Echo: typed as JSON');
  });

  it('opens a resource link of a result as a resource document', async () => {
    const { page } = ctx();
    await callToolStepByStep(page, 'Get Resource Links');
    await quickInputStep(page, 'count (optional');
    await answer(page, '2');
    await editorShows(page, 'Text Resource 2');
    await screenshot(page, 'tool-result-links');
    // The cursor inside the link's target, then the editor's own "Open Link".
    await selectInEditor(page, 'Text%20Resource%202');
    await runCommand(page, 'Open Link');
    await page.locator('.tabs-container .tab', { hasText: 'Text Resource 2' }).waitFor({ timeout: 30_000 });
    await editorShows(page, 'Resource 2: This is a plaintext resource');
  });

  it('asks before opening a URL elicitation, then opens it in the browser', async () => {
    const { page } = ctx();
    // Not a loopback URL: the remote workbench would rewrite that through its port forwarding.
    const target = 'https://mcp-host-e2e.invalid/url-elicitation';
    await callToolStepByStep(page, 'Trigger URL Elicitation');
    await quickInputStep(page, 'url (required)');
    await answer(page, target);
    await skipRemainingSteps(page);
    await allowToolOnce(page);
    const ask = await dialog(page, 'wants you to open a page on mcp-host-e2e.invalid');
    await screenshot(page, 'elicitation-url');
    // The name does not resolve: the browser's request for the page is the proof that it was opened.
    const opened = page.context().waitForEvent('request', { predicate: (r) => r.url().startsWith(target), timeout: 30_000 });
    await clickDialogButton(ask, 'Open mcp-host-e2e.invalid');
    // The workbench may ask once more before it opens an outside link.
    const outside = page.locator('.monaco-dialog-box', { hasText: 'external website' });
    if (
      await outside.waitFor({ timeout: 5_000 }).then(
        () => true,
        () => false,
      )
    )
      await clickDialogButton(outside, 'Open');
    assert.equal((await opened).url(), target);
    for (const other of page.context().pages()) if (other !== page) await other.close().catch(() => {});
    await editorShows(page, 'User completed the URL elicitation flow');
  });
});
