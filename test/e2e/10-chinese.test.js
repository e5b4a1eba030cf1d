// The workbench in Simplified Chinese: the page is reloaded with the `vscode.nls.locale=zh-cn` cookie
// (the harness installed a zh-cn language pack and registered it, see installChineseLanguagePack in
// test/harness/run-vscode-tests.js), and MCP Host's own texts show in Chinese, from
// l10n/bundle.l10n.zh-cn.json and package.nls.zh-cn.json: the Servers view, a Call Tool flow and the
// consent modal. Afterwards the page is English again.
'use strict';
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const h = require('../harness/lib');
const { ctx, openWorkbench, findInPalette, screenshot, QUICK_INPUT, dialog, allowWorkspaceServerAfterReload } = require('./helpers');

const bundle = JSON.parse(fs.readFileSync(path.join(h.REPO, 'l10n', 'bundle.l10n.zh-cn.json'), 'utf8'));
const nls = JSON.parse(fs.readFileSync(path.join(h.REPO, 'package.nls.zh-cn.json'), 'utf8'));
/** The Chinese of an English message of the bundle, with its {0}, {1} filled in. */
const zh = (english, ...args) => {
  const text = bundle[english];
  if (!text) throw new Error(`no Chinese for ${JSON.stringify(english)} in l10n/bundle.l10n.zh-cn.json`);
  return text.replace(/\{(\d+)\}/g, (_, i) => args[Number(i)]);
};
const sidebar = '.part.sidebar';
const LOCALE_COOKIE = 'vscode.nls.locale';

/** The languages the extension hosts reported so far, one per window that started. */
function reportedLanguages() {
  const file = process.env.MCP_HOST_TEST_ENV_LOG;
  if (!file) throw new Error('MCP_HOST_TEST_ENV_LOG is not set: run through test/harness/run-vscode-tests.js');
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l).language);
}

async function reloadIn(page, url, locale) {
  const context = page.context();
  await context.clearCookies({ name: LOCALE_COOKIE });
  if (locale) await context.addCookies([{ name: LOCALE_COOKIE, value: locale, url }]);
  await openWorkbench(page, url);
}

describe('the workbench in Simplified Chinese', () => {
  let hostsBefore = 0;

  before(async function () {
    this.timeout(180_000);
    const { page, url } = ctx();
    hostsBefore = reportedLanguages().length;
    await reloadIn(page, url, 'zh-cn');
  });

  after(async function () {
    this.timeout(180_000);
    const { page, url } = ctx();
    await page.keyboard.press('Escape');
    await reloadIn(page, url, undefined);
    assert.equal(await page.evaluate(() => globalThis._VSCODE_NLS_LANGUAGE ?? 'en'), 'en');
    // The suites after this one expect the workspace server running, as 01-servers left it.
    await allowWorkspaceServerAfterReload(page);
  });

  it('loads the zh-cn messages and reports vscode.env.language zh-cn to extensions', async () => {
    const { page } = ctx();
    // The web workbench's language, which it hands to its extension host.
    assert.equal(await page.evaluate(() => globalThis._VSCODE_NLS_LANGUAGE), 'zh-cn');
    const deadline = Date.now() + 60_000;
    while (reportedLanguages().length <= hostsBefore && Date.now() < deadline) await page.waitForTimeout(250);
    assert.deepEqual(reportedLanguages().slice(hostsBefore), ['zh-cn']);
  });

  it('shows the MCP Host view, a Call Tool flow and the consent modal in Chinese', async () => {
    const { page } = ctx();
    // The server starts by itself; alone (--grep) this window is its first start, which asks first
    // (in Chinese) and blocks the window until answered.
    const item = page.locator('.activitybar .action-item a[aria-label^="MCP Host"]').first();
    const viewSelected = page.locator('.activitybar .action-item.checked a[aria-label^="MCP Host"]');
    const row = page.locator(`${sidebar} .monaco-list-row`, { hasText: 'everything', hasNotText: 'added-everything' }).first();
    const startDialog = page.locator('.monaco-dialog-box', { hasText: zh('Start the MCP server "{0}"?', 'everything') });
    const deadline = Date.now() + 90_000;
    for (;;) {
      if (await startDialog.isVisible()) {
        await startDialog.locator('.monaco-button', { hasText: new RegExp(`^${zh('Allow')}$`) }).click();
        await startDialog.waitFor({ state: 'hidden' });
      } else if ((await item.isVisible()) && !(await viewSelected.count())) await item.click({ timeout: 2_000 }).catch(() => {});
      const text = await row.innerText().catch(() => '');
      if (text.includes(zh('running')) && text.includes(zh('{0} tools', '').trim())) break;
      if (Date.now() > deadline) throw new Error(`server row stayed "${text.replace(/\s+/g, ' ')}"`);
      await page.waitForTimeout(250);
    }
    // The view's title from package.nls.zh-cn.json (a lone view's title is in the side bar's).
    assert.equal(
      await page.locator(`${sidebar} .composite.title .title-label`).innerText(),
      `${nls.displayName}: ${nls['view.servers.name']}`,
    );

    // The command title from package.nls.zh-cn.json, its category (displayName) in front.
    const command = `${nls.displayName}: ${nls['command.callTool.title']}`;
    await findInPalette(page, command);
    await page.locator(`${QUICK_INPUT} .quick-input-list .monaco-list-row.focused`, { hasText: command }).waitFor({ timeout: 15_000 });
    await page.keyboard.press('Enter');
    const input = page.locator(`${QUICK_INPUT} input`);
    await page.locator(QUICK_INPUT, { hasText: zh('MCP Host: Call Tool') }).waitFor({ timeout: 30_000 });
    await page.waitForFunction(
      (want) => document.querySelector('.quick-input-widget input')?.getAttribute('placeholder') === want,
      zh('Which tool?'),
      { timeout: 30_000 },
    );
    // Read-only tools say so in Chinese.
    await input.fill('Echo Tool');
    await page
      .locator(`${QUICK_INPUT} .quick-input-list .monaco-list-row`, { hasText: zh('read-only') })
      .first()
      .waitFor({ timeout: 30_000 });

    // A tool that is not read-only asks first; the modal is MCP Host's text.
    await input.fill('Trigger Elicitation Request');
    // Not "Trigger Async Elicitation Request", which the filter shows too, nor the server that
    // 07-setup adds ("added-everything").
    const tool = page
      .locator(`${QUICK_INPUT} .quick-input-list .monaco-list-row`, {
        hasText: 'everything › Trigger Elicitation Request',
        hasNotText: 'added-everything',
      })
      .first();
    await tool.waitFor({ timeout: 30_000 });
    await tool.click();
    const modal = await dialog(page, zh('Run the tool "{0}" of the MCP server "{1}"?', 'trigger-elicitation-request', 'everything'));
    const modalText = await modal.innerText();
    for (const s of [zh('The tool is not marked read-only.'), zh('Arguments:'), zh('Allow Once'), zh('Always Allow This Tool')])
      assert.ok(modalText.includes(s), `the modal lacks "${s}": ${modalText}`);
    await screenshot(page, 'zh-cn');
    // Cancelled: nothing runs.
    await page.keyboard.press('Escape');
    await modal.waitFor({ state: 'hidden' });
  });
});
