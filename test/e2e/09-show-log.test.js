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
    await findInPalette(page, 'MCP Host: Show Log', { query: 'MCP Host' });
    await screenshot(page, 'command-palette');
    await page.keyboard.press('Escape');
  });

  it('runs it and shows the "MCP Host" output channel', async () => {
    const { page } = ctx();
    await runCommand(page, 'MCP Host: Show Log');
    const out = await waitForOutputChannel(page, 'MCP Host', { text: 'MCP Host activated' });
    assert.match(await out.text(), /MCP Host activated/);
    await screenshot(page, 'output-channel');
  });
});
