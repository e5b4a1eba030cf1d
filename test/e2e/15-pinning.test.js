// Pinned tool definitions in the workbench: a server whose tools change on its next start (the
// changing fixture, its version read from a file in the workspace) has them marked "changed since
// you approved it" in the Servers view; Review Changes opens VS Code's diff editor, the approved
// definition beside the current one (the old description on the left, the one aimed at the model on
// the right), with MCP Host's Accept / Keep Suspended question; Accept lifts the mark. The picture is
// docs/pinning.md's. The server is added to the workspace settings here and removed after the suite.
'use strict';
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const h = require('../harness/lib');
const {
  ctx,
  allowServers,
  allowStartsUntil,
  choose,
  clickDialogButton,
  dialog,
  runCommand,
  screenshot,
  startCommand,
} = require('./helpers');

const FIXTURE = path.join(h.REPO, 'test', 'fixtures', 'changing-server.mjs');
const sidebar = '.part.sidebar';
const CHANGED = 'changed since you approved it';

/** The Servers view's row whose text contains `text`. */
const row = (page, text) => page.locator(`${sidebar} .monaco-list-row`, { hasText: text }).first();

/** The Servers view with only the pinned server's tools open (the view virtualises rows out of sight). */
async function showPinnedTools(page) {
  const item = page.locator('.activitybar .action-item a[aria-label^="MCP Host"]').first();
  if (!(await page.locator('.activitybar .action-item.checked a[aria-label^="MCP Host"]').count())) await item.click();
  await page.locator(`${sidebar} .monaco-list-row`).first().waitFor({ timeout: 30_000 });
  await page.locator(`${sidebar} .action-label[aria-label^="Collapse All"]`).first().click({ force: true });
  const server = row(page, 'pinned');
  await server.waitFor({ timeout: 30_000 });
  if ((await server.getAttribute('aria-expanded')) !== 'true') await server.locator('.monaco-tl-twistie').click();
  const tools = page.locator(`${sidebar} .monaco-list-row[aria-label*="Tools"]`).first();
  await tools.waitFor({ timeout: 15_000 });
  if ((await tools.getAttribute('aria-expanded')) !== 'true') await tools.locator('.monaco-tl-twistie').click();
  await row(page, 'Removes a file').waitFor({ timeout: 15_000 });
}

describe('pinned tool definitions in the workbench', function () {
  this.timeout(300_000);
  let settingsFile;
  let original;
  let versionFile;

  before(async () => {
    const { page, workspace } = ctx();
    settingsFile = path.join(workspace, '.vscode', 'settings.json');
    original = fs.readFileSync(settingsFile, 'utf8');
    // In the workspace folder: inside the roots, so the sandboxed server may read it.
    versionFile = path.join(workspace, 'pinned-version.txt');
    fs.writeFileSync(versionFile, '1');
    const settings = JSON.parse(original.replace(/^\s*\/\/.*$/gm, ''));
    settings['mcpHost.servers'].pinned = {
      type: 'stdio',
      command: 'node',
      args: [FIXTURE],
      env: { CHANGING_SERVER_FILE: versionFile },
    };
    fs.writeFileSync(settingsFile, JSON.stringify(settings, null, 2));
    await allowStartsUntil(page, 'pinned', 90_000);
    await allowServers(page, Object.keys(settings['mcpHost.servers']).length);
  });

  after(async () => {
    if (settingsFile && original !== undefined) fs.writeFileSync(settingsFile, original);
    if (versionFile) fs.rmSync(versionFile, { force: true });
    await ctx().page.keyboard.press('Escape');
  });

  it('marks the tools that changed on restart, shows old beside new in the diff editor, and Accept lifts the mark', async () => {
    const { page } = ctx();
    await showPinnedTools(page);
    assert.doesNotMatch(await row(page, 'Looks up a word').innerText(), new RegExp(CHANGED), 'version 1 is the baseline');

    // The server changes behind the person's back, and comes back on its next start.
    fs.writeFileSync(versionFile, '2');
    await startCommand(page, 'MCP Host: Restart Server');
    await choose(page, 'pinned');
    // The restarted server's row says its instructions changed; its groups are new, closed again.
    await row(page, 'instructions changed since you approved them').waitFor({ timeout: 60_000 });
    await showPinnedTools(page);
    await row(page, 'New in version 2').waitFor({ timeout: 30_000 });
    await row(page, 'Looks up a word').filter({ hasText: CHANGED }).waitFor({ timeout: 30_000 });
    assert.match(await row(page, 'Removes a file').innerText(), new RegExp(CHANGED));
    assert.doesNotMatch(await row(page, 'Never changes').innerText(), new RegExp(CHANGED));

    // A quiet workbench for the picture, then Review Changes of the server (the only one with changes: no pick).
    await runCommand(page, 'View: Close All Editors');
    const hidePanel = page.locator('.part.panel [aria-label^="Hide Panel"], .part.panel [aria-label^="Close Panel"]').first();
    if (await hidePanel.isVisible()) await hidePanel.click();
    await runCommand(page, 'MCP Host: Review Changes');
    const diff = page.locator('.part.editor .monaco-diff-editor').first();
    await diff.waitFor({ timeout: 30_000 });
    const side = (which) => diff.locator(`.editor.${which} .view-lines`);
    await side('original').filter({ hasText: '"Looks up a word."' }).waitFor({ timeout: 30_000 });
    await side('modified').filter({ hasText: 'read ~/.aws/credentials' }).waitFor({ timeout: 30_000 });
    assert.doesNotMatch(await side('original').innerText(), /aws/, 'the approved side has the old description only');
    const question = await dialog(page, 'Accept the changed definitions of the MCP server "pinned"?');
    assert.match(await question.innerText(), /tool lookup: description, input schema/);
    assert.match(await question.innerText(), /tool remove: annotations/);
    await screenshot(page, 'definition-review');

    await clickDialogButton(question, 'Accept');
    await showPinnedTools(page);
    await row(page, 'Looks up a word').filter({ hasNotText: CHANGED }).waitFor({ timeout: 30_000 });
    assert.doesNotMatch(await row(page, 'Removes a file').innerText(), new RegExp(CHANGED));
    await runCommand(page, 'View: Close All Editors');
  });
});
