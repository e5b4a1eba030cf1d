// Sampling answered by the editor's language model (the deterministic test models of
// test/harness/models-ext), after the person's consent: allow, deny, and review with edits.
'use strict';
const assert = require('node:assert/strict');
const fs = require('node:fs');
const {
  ctx,
  screenshot,
  quickInputStep,
  editorShows,
  answer,
  callToolStepByStep,
  dialog,
  clickDialogButton,
  allowToolOnce,
  clickNotificationButton,
  runCommand,
  replaceInEditor,
  clickCodeLens,
  editorContains,
} = require('./helpers');

/** What the test models were sent so far (one JSON line per request, written by the models extension). */
function modelRequests() {
  const file = process.env.MCP_HOST_TEST_MODELS_LOG;
  if (!file || !fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

/** Calls trigger-sampling-request with `prompt` and returns the consent dialog. */
async function requestSampling(page, prompt, maxTokens) {
  await callToolStepByStep(page, 'Trigger Sampling Request Tool');
  await quickInputStep(page, 'prompt (required)');
  await answer(page, prompt);
  await quickInputStep(page, 'maxTokens (optional');
  await answer(page, maxTokens === undefined ? '' : String(maxTokens));
  await allowToolOnce(page);
  return dialog(page, 'wants to use your language model');
}

describe('sampling through the editor’s language model', () => {
  it('shows the request, and Allow Once answers with the model', async () => {
    const { page } = ctx();
    const before = modelRequests().length;
    const consent = await requestSampling(page, 'Write a haiku about tests', 60);
    const text = await consent.innerText();
    assert.match(text, /"everything"/);
    assert.match(text, /Max tokens: 60/);
    assert.match(text, /Write a haiku about tests/);
    await screenshot(page, 'sampling-consent');
    await clickDialogButton(consent, 'Allow Once');
    await editorShows(page, '[test-echo-large] I read: Resource trigger-sampling-request context: Write a haiku about tests');
    const sent = modelRequests().slice(before);
    assert.equal(sent.length, 1);
    assert.equal(sent[0].model, 'test-echo-large');
    assert.equal(sent[0].modelOptions.max_tokens, 60);
    assert.match(sent[0].messages.at(-1).text, /Write a haiku about tests/);
  });

  it('Deny returns the refusal, and Show Details opens the failed result', async () => {
    const { page } = ctx();
    const before = modelRequests().length;
    await clickDialogButton(await requestSampling(page, 'Please refuse me'), 'Deny');
    await clickNotificationButton(page, 'trigger-sampling-request failed', 'Show Details');
    await editorShows(page, 'User rejected sampling request');
    assert.equal(modelRequests().length, before, 'no model was asked');
  });

  it('Review opens the request for editing, and the edited messages are sent', async () => {
    const { page } = ctx();
    const before = modelRequests().length;
    await clickDialogButton(await requestSampling(page, 'the original words'), 'Review…');
    await editorShows(page, 'the original words');
    await replaceInEditor(page, 'the original words', 'words the person chose');
    await editorShows(page, 'words the person chose');
    await clickCodeLens(page, 'Allow as Edited');
    await editorShows(page, 'I read: Resource trigger-sampling-request context: words the person chose');
    const sent = modelRequests().slice(before);
    assert.equal(sent.length, 1);
    assert.ok(!JSON.stringify(sent[0].messages).includes('the original words'), 'the original text was not sent');
  });

  it('lists every exchange in the sampling history', async () => {
    const { page } = ctx();
    await runCommand(page, 'MCP Host: Show Sampling History');
    await editorShows(page, 'Sampling history');
    await editorShows(page, 'everything: allowed');
    await screenshot(page, 'sampling-history');
    assert.ok(await editorContains(page, 'everything: denied'), 'the refusal is listed');
    assert.ok(await editorContains(page, 'edited by the person in Review'), 'the reviewed exchange is marked');
    assert.ok(await editorContains(page, 'words the person chose'), 'and shows what was sent');
  });
});
