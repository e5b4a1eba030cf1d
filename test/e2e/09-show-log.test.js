// The workbench loads with the extension installed from its VSIX, the command palette finds
// "MCP Host: Show Log", and running it shows the "MCP Host" output channel.
'use strict';
const assert = require('node:assert/strict');
const { ctx, runCommand, findInPalette, waitForOutputChannel, screenshot } = require('./helpers');

describe('MCP Host in the workbench', () => {
  it('loads the workbench with the test workspace', async () => {
    const { page } = ctx();
    await page.locator('.monaco-workbench').waitFor();
    assert.match(await page.title(), /workspace/i);
    await screenshot(page, 'workbench');
  });

  it('finds "MCP Host: Show Log" in the command palette', async () => {
    const { page } = ctx();
    // "MCP Host" alone lists more commands than the palette renders rows (Share with VS Code Chat and
    // Show Audit Log sort before Show Log), so the query narrows to the Show commands.
    await findInPalette(page, 'MCP Host: Show Log', { query: 'MCP Host: Show' });
    await screenshot(page, 'command-palette');
    await page.keyboard.press('Escape');
  });

  it('runs it and shows the "MCP Host" output channel', async () => {
    const { page } = ctx();
    // Once in a full run (CI, after suites that showed the trace) the panel stayed on "MCP Host Trace":
    // whether the palette ran another row or the command was lost is not known, so it is run again
    // (at most three times) and every attempt that did not show the channel is reported.
    let out;
    for (let attempt = 1; !out; attempt++) {
      await runCommand(page, 'MCP Host: Show Log');
      try {
        out = await waitForOutputChannel(page, 'MCP Host', { text: 'MCP Host activated', timeout: attempt < 3 ? 20_000 : 60_000 });
      } catch (e) {
        if (attempt === 3) throw e;
        const shown = await page
          .locator('.part.panel .monaco-select-box')
          .first()
          .getAttribute('title')
          .catch(() => null);
        console.log(`      Show Log attempt ${attempt} did not show the channel (panel shows ${shown ?? 'no channel'}); again`);
      }
    }
    assert.match(await out.text(), /MCP Host activated/);
    await screenshot(page, 'output-channel');
  });
});
