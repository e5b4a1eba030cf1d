// Every tool server-everything offers, called from the Call Tool palette the way a person would:
// arguments answered (defaults kept, a value per type where one is required), confirmations,
// elicitation forms and sampling consents allowed. None may end in a protocol error: each ends in a
// result document, or in an isError result that is the tool's own ("<tool> failed: ..."), never in
// "MCP Host: <tool> failed: ..." (a JSON-RPC error). The list of tools is read from the palette at
// run time, so a tool the server adds later is walked too. Run after 01-servers (its launch consent).
'use strict';
const assert = require('node:assert/strict');
const { ctx, QUICK_INPUT, startCommand, quickInputStep, runCommand, editorContains } = require('./helpers');

/**
 * What the result of the tools that talk back shows when they went the whole way (not a "[TIMEOUT]"
 * or "[FAILED]" of their own): the task, the client-side tasks, the form, the declined page, the model.
 */
const EXPECTED = {
  'simulate-research-query': 'Research Report: walked-value',
  'trigger-elicitation-request-async': '[COMPLETED] User provided the requested information',
  'trigger-sampling-request-async': '[COMPLETED] Async sampling completed',
  'trigger-elicitation-request': 'User provided the requested information',
  'trigger-url-elicitation': 'User declined to open the URL',
  'trigger-sampling-request': '[test-echo',
};

const ROWS = `${QUICK_INPUT} .quick-input-list .monaco-list-row`;

/** The labels of every "everything › ..." row of the Call Tool pick, walking the (virtualised) list with the arrow keys. */
async function toolsInPalette(page) {
  await startCommand(page, 'MCP Host: Call Tool...');
  await quickInputStep(page, 'everything ›');
  const focused = page.locator(`${ROWS}.focused`);
  await focused.first().waitFor({ timeout: 15_000 });
  const labels = [];
  for (let i = 0; i < 200; i++) {
    const text = (await focused.first().locator('.label-name').first().innerText()).trim();
    if (labels.includes(text)) break; // wrapped around to the first row
    labels.push(text);
    await page.keyboard.press('ArrowDown');
    await page.waitForTimeout(50);
  }
  await page.keyboard.press('Escape');
  return labels.filter((l) => l.startsWith('everything › ')).map((l) => l.slice('everything › '.length));
}

/** The name of a tool from its pick row's description ("get-sum · read-only"). */
async function toolNameOf(page, label) {
  const row = page.locator(ROWS, { hasText: label }).first();
  return (await row.locator('.label-description').first().innerText()).split(' · ')[0].trim();
}

/** A value for a required argument or field the person has to type, from its prompt ("a (required) — number"). */
function valueFor(prompt, attempt) {
  if (/format (uri|url)/i.test(prompt) || /\bURL\b/.test(prompt)) return 'http://127.0.0.1:9/walk';
  if (/— (number|integer)/.test(prompt)) return '1';
  if (/— array/.test(prompt)) return '[]';
  if (/— object/.test(prompt)) return '{}';
  return ['walked-value', '1', 'true', '[]', '{}'][attempt % 5];
}

async function visible(locator) {
  return (await locator.count()) > 0 && (await locator.first().isVisible());
}

/**
 * Answers whatever the call shows until it ends. Returns { result } once a result document opens,
 * { toolError } for the tool's own isError, { protocolError } for a JSON-RPC error.
 */
async function drive(page, name, label) {
  const resultTab = page.locator('.tabs-container .tab', { hasText: `${name}.md` });
  const toasts = page.locator('.notifications-toasts .notification-toast .notification-list-item-message');
  const input = page.locator(`${QUICK_INPUT} input`);
  let lastPrompt = '';
  let attempts = 0;
  const dialogs = [];
  for (let step = 0; step < 400; step++) {
    if (await visible(resultTab)) return { result: true, dialogs };
    for (const text of await toasts.allInnerTexts().catch(() => [])) {
      if (text.startsWith(`MCP Host: ${name} failed`) || text.startsWith(`MCP Host: the task of ${name}`))
        return { protocolError: text, dialogs };
      if (text.startsWith(`${name} failed:`)) return { toolError: text, dialogs };
    }
    const box = page.locator('.monaco-dialog-box').first();
    if (await visible(box)) {
      const text = await box.innerText();
      const click = async (button) => {
        dialogs.push(button);
        await box.locator('.monaco-button', { hasText: new RegExp(`^${button}$`) }).click();
        // If it is still there (the click came before the dialog took input), the loop answers it again.
        await box.waitFor({ state: 'hidden', timeout: 5_000 }).catch(() => {});
      };
      if (/Run the tool/.test(text)) await click('Allow Once');
      else if (/asks for information/.test(text)) await click('Respond');
      else if (/wants to use your language model/.test(text)) await click('Allow Once');
      // Opening the page cannot be finished headless (nobody completes it in a browser): Decline is the
      // person's other documented answer, and the tool then ends with its own result.
      else if (/wants you to open a page/.test(text)) await click('Decline');
      else throw new Error(`${name}: unexpected dialog: ${text}`);
      continue;
    }
    if (await visible(page.locator(QUICK_INPUT))) {
      const widget = page.locator(QUICK_INPUT);
      const text = (await widget.innerText()).replace(/\s+/g, ' ');
      if (/How do you want to give the arguments\?/.test(text)) {
        await page.locator(ROWS, { hasText: 'Step by step' }).first().click();
      } else if (/Which tool\?/.test(text) || (await visible(page.locator(ROWS, { hasText: label })))) {
        // Still on the tool pick (it closes once the choice is taken).
        await page.waitForTimeout(200);
        continue;
      } else if (await visible(page.locator(ROWS, { hasText: /^\s*Send\b/ }))) {
        await page
          .locator(ROWS, { hasText: /^\s*Send\b/ })
          .first()
          .click(); // the review of an elicitation form
      } else if (await visible(page.locator(`${QUICK_INPUT} .quick-input-list .monaco-list-row`))) {
        await page.keyboard.press('Enter'); // a pick list: the default, or the first choice
      } else {
        // An input box: keep its value (a default), skip it if optional, type a value if required.
        attempts = text === lastPrompt ? attempts + 1 : 0;
        lastPrompt = text;
        if (/\(required\)/.test(text) && ((await input.inputValue()) === '' || attempts > 0)) await input.fill(valueFor(text, attempts));
        await page.keyboard.press('Enter');
      }
      await page.waitForTimeout(300);
      continue;
    }
    await page.waitForTimeout(250);
  }
  throw new Error(`${name}: did not end`);
}

describe('every tool of server-everything from the palette', () => {
  it('calls each one, and none ends in a protocol error', async function () {
    this.timeout(20 * 60_000);
    const { page } = ctx();
    const labels = await toolsInPalette(page);
    // The task tools and the elicitation/sampling tools are offered (the client declared what they need).
    assert.ok(labels.length >= 19, `only ${labels.length} tools: ${labels.join(', ')}`);
    const outcomes = {};
    for (const label of labels) {
      await runCommand(page, 'View: Close All Editors');
      await runCommand(page, 'Notifications: Clear All Notifications');
      await startCommand(page, 'MCP Host: Call Tool...');
      await quickInputStep(page, 'everything ›');
      await page.locator(`${QUICK_INPUT} input`).fill(label);
      const row = page.locator(`${ROWS}.focused`, { hasText: label });
      await row.waitFor({ timeout: 30_000 });
      const name = await toolNameOf(page, label);
      await page.keyboard.press('Enter');
      outcomes[name] = await drive(page, name, label);
      if (outcomes[name].result && EXPECTED[name]) outcomes[name].shows = await editorContains(page, EXPECTED[name]);
      console.log(`      ${name}: ${JSON.stringify(outcomes[name]).slice(0, 300)}`);
    }
    for (const [name, text] of Object.entries(EXPECTED)) {
      assert.ok(name in outcomes, `${name} was walked`);
      assert.equal(outcomes[name].shows, true, `${name}'s result shows "${text}": ${JSON.stringify(outcomes[name])}`);
    }
    const failed = Object.entries(outcomes).filter(([, o]) => o.protocolError);
    assert.deepEqual(failed, [], 'no tool ends in a protocol error');
  });
});
