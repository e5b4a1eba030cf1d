// Sharing a server with VS Code's chat, in the real workbench: VS Code's own MCP client calls a shared
// server's tool the way the chat does (test/harness/chat-ext, "Test Chat: Call the Shared echo as the
// Chat": vscode.lm.invokeTool without a chat request). A tool whose readOnlyHint MCP Host does not pass
// on (the server's annotations are not trusted) makes VS Code ask first, in its own dialog: Cancel sends
// nothing (the fixture logs every tools/call it receives, and MCP Host's history has no call), Yes runs
// it. With the annotations trusted the same call runs without a question, and untrusted again it asks
// again. The shared server and its tools in VS Code's own tool picker make the README's picture.
// In the extension-host suites VS Code answers every such confirmation "yes" without showing it (its
// dialog service refuses to show dialogs while extension tests run), so this is the place to see it.
// The server is added to the workspace settings here and removed again after the suite.
'use strict';
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const h = require('../harness/lib');
const {
  ctx,
  QUICK_INPUT,
  allowServers,
  allowStartsUntil,
  clickDialogButton,
  dialog,
  quickInputStep,
  runCommand,
  screenshot,
  startCommand,
} = require('./helpers');

const FIXTURE = path.join(h.REPO, 'test', 'fixtures', 'gateway-upstream.mjs');
const CALL = 'Test Chat: Call the Shared echo as the Chat';

/** The JSON lines of a log file, none if it is not there yet. */
const lines = (file) =>
  fs.existsSync(file)
    ? fs
        .readFileSync(file, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l))
    : [];

/** The outcome chat-ext recorded for its call number `call`, once it has one. */
async function outcomeOf(page, call, timeout = 60_000) {
  const deadline = Date.now() + timeout;
  for (;;) {
    const done = lines(process.env.MCP_HOST_TEST_CHAT_LOG).find((e) => e.call === call && e.outcome !== 'invoking');
    if (done) return done;
    if (Date.now() > deadline)
      throw new Error(`chat-ext recorded no outcome for call ${call}: ${JSON.stringify(lines(process.env.MCP_HOST_TEST_CHAT_LOG))}`);
    await page.waitForTimeout(250);
  }
}

/** Waits until VS Code's own server list ("MCP: List Servers") shows the shared server in `state`. */
async function vsCodeListsAs(page, state, timeout = 60_000) {
  const deadline = Date.now() + timeout;
  for (;;) {
    await startCommand(page, 'MCP: List Servers');
    const row = page.locator(`${QUICK_INPUT} .quick-input-list .monaco-list-row`, { hasText: 'chat-shared' }).first();
    await row.waitFor({ timeout: 15_000 });
    const text = await row.innerText();
    await page.keyboard.press('Escape');
    if (text.includes(state)) return;
    if (Date.now() > deadline) throw new Error(`VS Code lists chat-shared as "${text}", not ${state}`);
    await page.waitForTimeout(1_000);
  }
}

/** The rows of MCP Host's Tool Call History for the shared server's echo. */
async function historyOfEcho(page) {
  await startCommand(page, 'MCP Host: Show Tool Call History');
  const none = page.locator('.notifications-toasts .notification-toast', { hasText: 'no tool has been called yet' });
  const picker = page.locator(QUICK_INPUT, { hasText: 'MCP Host: Tool Call History' });
  await none.or(picker).first().waitFor({ timeout: 30_000 });
  if (await none.isVisible()) {
    await page.keyboard.press('Escape');
    return [];
  }
  const rows = page.locator(`${QUICK_INPUT} .quick-input-list .monaco-list-row`);
  await rows.first().waitFor({ timeout: 15_000 });
  await page.locator(`${QUICK_INPUT} input`).fill('chat-shared');
  await page.waitForTimeout(500);
  const texts = await rows.allInnerTexts();
  await page.keyboard.press('Escape');
  return texts.filter((t) => t.includes('chat-shared › echo'));
}

describe("VS Code's own chat client and a shared server, in the workbench", function () {
  this.timeout(300_000);
  let settingsFile;
  let original;
  let upstreamLog;

  const writeEntry = async (extra, { asks }) => {
    const { page } = ctx();
    const settings = JSON.parse(original.replace(/^\s*\/\/.*$/gm, ''));
    settings['mcpHost.servers']['chat-shared'] = {
      type: 'stdio',
      command: 'node',
      args: [FIXTURE],
      env: { GATEWAY_UPSTREAM_CALL_LOG: upstreamLog },
      // A workspace server runs in the sandbox by default: its call log is outside the roots, so it may write there.
      sandbox: { filesystem: { allowWrite: [path.dirname(upstreamLog)] } },
      // Fewer tools for the picture, and a denied tool that must not show in VS Code's list.
      tools: { deny: ['remove', 'leak', 'add_tool', 'cancelled_count'] },
      shareWithChat: true,
      ...extra,
    };
    fs.writeFileSync(settingsFile, JSON.stringify(settings, null, 2));
    // A workspace server asks before its first start, and again when its entry grants it more
    // (trusted annotations): the status bar may still count the old launch as running until then.
    if (asks) await allowStartsUntil(page, 'chat-shared');
    await allowServers(page, Object.keys(settings['mcpHost.servers']).length);
  };

  before(async () => {
    const { workspace } = ctx();
    settingsFile = path.join(workspace, '.vscode', 'settings.json');
    original = fs.readFileSync(settingsFile, 'utf8');
    upstreamLog = path.join(path.dirname(process.env.MCP_HOST_TEST_CHAT_LOG), 'upstream-calls.jsonl');
    fs.rmSync(upstreamLog, { force: true });
    await writeEntry({}, { asks: true });
  });

  after(async () => {
    if (settingsFile && original !== undefined) fs.writeFileSync(settingsFile, original);
    await ctx().page.keyboard.press('Escape');
  });

  it('asks before a shared tool whose readOnlyHint MCP Host does not pass on: Cancel sends nothing, Yes runs it', async () => {
    const { page } = ctx();
    await runCommand(page, CALL);
    // VS Code's confirmation, not MCP Host's: its title and the tool's description, Cancel and Yes.
    const ask = await dialog(page, 'Run echo', 60_000);
    assert.match(await ask.innerText(), /Echoes text/);
    await clickDialogButton(ask, 'Cancel');
    const refused = await outcomeOf(page, 1);
    assert.equal(refused.outcome, 'cancelled', JSON.stringify(refused));
    assert.deepEqual(lines(upstreamLog), [], 'a refused call reached the server');
    assert.deepEqual(await historyOfEcho(page), [], "a refused call is in MCP Host's history");

    await runCommand(page, CALL);
    await clickDialogButton(await dialog(page, 'Run echo', 60_000), 'Yes');
    const ran = await outcomeOf(page, 2);
    assert.deepEqual([ran.outcome, ran.text], ['ok', 'from the chat, call 2'], JSON.stringify(ran));
    // What the server received: the tool and its arguments (its `_meta`, VS Code's progress token and trace, is MCP Host's to pass on).
    assert.deepEqual(
      lines(upstreamLog).map(({ tool, arguments: args }) => ({ tool, arguments: args })),
      [{ tool: 'echo', arguments: { text: 'from the chat, call 2' } }],
    );
    const history = await historyOfEcho(page);
    assert.equal(history.length, 1, history.join(' | '));
    assert.match(history[0], /by the chat/);
  });

  it("shows the shared server and the tools MCP Host offers in VS Code's own tool picker", async () => {
    const { page } = ctx();
    // A quiet workbench for the picture: no editors or panel the earlier suites left open.
    await runCommand(page, 'View: Close All Editors');
    const hidePanel = page.locator('.part.panel [aria-label^="Hide Panel"], .part.panel [aria-label^="Close Panel"]').first();
    if (await hidePanel.isVisible()) await hidePanel.click();
    // MCP Host's servers view beside it: the shared one marked so.
    await page.locator('.activitybar .action-item a[aria-label^="MCP Host"]').click();
    await page.locator('.part.sidebar .monaco-list-row', { hasText: 'shared with chat' }).first().waitFor({ timeout: 30_000 });
    await page.keyboard.press('Control+Alt+I');
    const configure = page.locator('.part.auxiliarybar [aria-label^="Configure Tools"]').first();
    await configure.waitFor({ timeout: 30_000 });
    await configure.click();
    await quickInputStep(page, 'Configure Tools');
    const row = (text) => page.locator(`${QUICK_INPUT} .monaco-list-row`, { hasText: text }).first();
    // Built-in tools folded away, the shared server's group open (named after the server, as MCP Host's
    // gateway names it to VS Code): the tools MCP Host offers.
    await row('Built-In').locator('.monaco-tl-twistie').click();
    const group = row('chat-shared');
    await group.waitFor({ timeout: 15_000 });
    await group.locator('.monaco-tl-twistie').click();
    await row('read_file').waitFor({ timeout: 15_000 });
    const tools = await page.locator(`${QUICK_INPUT} .monaco-list-row`).allInnerTexts();
    for (const offered of ['echo', 'read_file', 'slow'])
      assert.ok(
        tools.some((t) => t.startsWith(offered)),
        `${offered}: ${tools.join(' | ')}`,
      );
    for (const withheld of ['remove', 'app_helper', 'leak'])
      assert.ok(!tools.some((t) => t.startsWith(withheld)), `${withheld} is offered: ${tools.join(' | ')}`);
    await screenshot(page, 'chat-shared-tools');
    await page.keyboard.press('Escape');
  });

  it("runs the same call without asking once the server's annotations are trusted, and asks again when they are not", async () => {
    const { page } = ctx();
    const ask = page.locator('.monaco-dialog-box', { hasText: 'Run echo' });
    const callWithoutAnswering = async (call) => {
      await runCommand(page, CALL);
      return Promise.race([outcomeOf(page, call), ask.waitFor({ timeout: 60_000 }).then(() => ({ outcome: 'asked' }))]);
    };
    await writeEntry({ trustAnnotations: true }, { asks: true });
    const trusted = await callWithoutAnswering(3);
    assert.deepEqual([trusted.outcome, trusted.text], ['ok', 'from the chat, call 3'], JSON.stringify(trusted));
    assert.equal(await ask.count(), 0);

    // A narrower entry starts without a consent. MCP Host ends the chat's session of the changed
    // server (VS Code lists it as stopped), and VS Code's next start lists the tools without the hint.
    await writeEntry({}, { asks: false });
    await vsCodeListsAs(page, 'Stopped');
    assert.equal((await callWithoutAnswering(4)).outcome, 'asked');
    await clickDialogButton(ask, 'Cancel');
    assert.equal((await outcomeOf(page, 4)).outcome, 'cancelled');
    assert.equal(lines(upstreamLog).length, 2, JSON.stringify(lines(upstreamLog)));
  });
});
