// Adding a server through the guided flow, and the pickers behind the remaining commands, the way
// a person meets them (these also provide the README's pictures of those commands).
'use strict';
const path = require('node:path');
const h = require('../harness/lib');
const { ctx, screenshot, QUICK_INPUT, startCommand, quickInputStep, answer, choose } = require('./helpers');

const everything = path.join(h.REPO, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');

describe('adding servers and the command pickers', () => {
  it('adds a stdio server to the user settings and starts it', async () => {
    const { page } = ctx();
    await startCommand(page, 'MCP Host: Add Server...');
    await quickInputStep(page, 'Add MCP Server (1/4)');
    await screenshot(page, 'add-server');
    await choose(page, 'Command (stdio)');
    await quickInputStep(page, 'Add MCP Server (2/4)');
    await answer(page, `node ${everything} stdio`);
    await quickInputStep(page, 'Add MCP Server (3/4)');
    await answer(page, 'added-everything');
    await quickInputStep(page, 'Add MCP Server (4/4)');
    await choose(page, 'User settings');
    const row = page.locator('.part.sidebar .monaco-list-row', { hasText: 'added-everything' }).first();
    await row.filter({ hasText: 'running' }).waitFor({ timeout: 60_000 });
  });

  it('lists the tool-call history to rerun or edit a call', async () => {
    const { page } = ctx();
    await startCommand(page, 'MCP Host: Show Tool Call History');
    await page
      .locator(`${QUICK_INPUT} .quick-input-list .monaco-list-row`, { hasText: 'everything ›' })
      .first()
      .waitFor({ timeout: 15_000 });
    await screenshot(page, 'tool-history');
    await page.keyboard.press('Escape');
  });

  it('offers every resource and template of the running servers', async () => {
    const { page } = ctx();
    await startCommand(page, 'MCP Host: Read Resource...');
    await page
      .locator(`${QUICK_INPUT} .quick-input-list .monaco-list-row`, { hasText: 'Dynamic Text Resource' })
      .first()
      .waitFor({ timeout: 15_000 });
    await screenshot(page, 'read-resource');
    await page.keyboard.press('Escape');
  });
});
