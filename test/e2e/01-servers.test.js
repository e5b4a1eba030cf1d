// The Servers view in the workbench: the workspace-defined server asks before its first start,
// then runs with its tools; Stop, Start and Restart from the palette change its state; the
// protocol trace shows the traffic.
'use strict';
const assert = require('node:assert/strict');
const { ctx, runCommand, waitForText, waitForOutputChannel, waitForIdleStatusBar, screenshot } = require('./helpers');

const sidebar = '.part.sidebar';
const serverRow = (page) => page.locator(`${sidebar} .monaco-list-row`, { hasText: 'everything' }).first();

async function openServersView(page) {
  const item = page.locator('.activitybar .action-item a[aria-label^="MCP Host"]').first();
  await item.waitFor({ timeout: 60_000 });
  const selected = await page.locator('.activitybar .action-item.checked a[aria-label^="MCP Host"]').count();
  if (!selected) await item.click();
  await waitForText(page, 'Servers', { selector: sidebar });
}

async function serverDescription(page) {
  return (await serverRow(page).innerText()).replace(/\s+/g, ' ');
}

async function waitForState(page, pattern, timeout = 60_000) {
  const deadline = Date.now() + timeout;
  for (;;) {
    const text = await serverDescription(page).catch(() => '');
    if (pattern.test(text)) return text;
    if (Date.now() > deadline) throw new Error(`server row stayed "${text}", wanted ${pattern}`);
    await page.waitForTimeout(250);
  }
}

describe('the Servers view', () => {
  it('asks before the first start of the workspace-defined server', async () => {
    const { page } = ctx();
    const dialog = page.locator('.monaco-dialog-box', { hasText: 'Start the MCP server "everything"?' });
    await dialog.waitFor({ timeout: 90_000 });
    const shown = await dialog.innerText();
    assert.match(shown, /server-everything/);
    // The workspace's settings trust this server's annotations: the person sees that before allowing it.
    assert.match(shown, /This server's settings also loosen your policy:\s+trustAnnotations: true/);
    await dialog.locator('.monaco-button', { hasText: /^Allow$/ }).click();
    await dialog.waitFor({ state: 'hidden' });
  });

  it('shows the server running with its tools', async () => {
    const { page } = ctx();
    await waitForIdleStatusBar(page);
    await openServersView(page);
    const text = await waitForState(page, /running · 2025-11-25 · \d+ tools/);
    assert.match(text, /everything/);
    // Expanded the first time it runs, without a click (the row was a leaf while it started).
    await page.locator(`${sidebar} .monaco-list-row[aria-expanded="true"]`, { hasText: 'everything' }).first().waitFor({ timeout: 15_000 });
    await waitForText(page, 'Tools', { selector: sidebar });
    const tools = page.locator(`${sidebar} .monaco-list-row[aria-label*="Tools"]`).first();
    await tools.click();
    await waitForText(page, 'Echo Tool', { selector: sidebar }).catch(() => waitForText(page, 'echo', { selector: sidebar }));
    await screenshot(page, 'servers-view');
  });

  it('stops, starts and restarts from the command palette', async () => {
    const { page } = ctx();
    await runCommand(page, 'MCP Host: Stop Server');
    await waitForState(page, /stopped/);
    await runCommand(page, 'MCP Host: Start Server');
    await waitForState(page, /running/);
    await runCommand(page, 'MCP Host: Restart Server');
    await waitForState(page, /running/);
  });

  it('shows the traffic in the protocol trace', async () => {
    const { page } = ctx();
    await runCommand(page, 'MCP Host: Show Protocol Trace');
    const out = await waitForOutputChannel(page, 'MCP Host Trace', { text: 'result (' });
    // Requests out, results back with their round-trip time.
    assert.match(await out.text(), /\[everything\] → \S+ #\d+/);
    assert.match(await out.text(), /\[everything\] ← \S+ #\d+ result \(\d+ ms\)/);
    await screenshot(page, 'protocol-trace');
  });
});
