import { strict as assert } from 'node:assert';
import * as vscode from 'vscode';
import type { ServerHandle } from '../../src/core';
import { toResourceUri } from '../../src/vscode/resources/uri';
import { api, startEverything, running, setServers, v2ServerEntry, waitFor } from './helpers';

describe('an open resource document after a restart', function () {
  this.timeout(120_000);

  before(() => startEverything('watched'));
  after(async () => setServers(undefined));

  it('keeps refreshing: the subscription is made again on the new connection', async () => {
    const a = await api();
    const handle = await running(a, 'watched');
    const resource = 'demo://resource/dynamic/text/2';
    const doc = await vscode.workspace.openTextDocument(toResourceUri('watched', resource, 'text-2', 'text/plain'));
    await vscode.window.showTextDocument(doc);
    const subscribed = (h: ServerHandle) =>
      new Promise<void>((resolve) => {
        const sub = h.onLogMessage((m) => {
          if (!String(m.data).includes(`Subscribe Resource request for URI: ${resource}`)) return;
          sub.dispose();
          resolve();
        });
      });
    const again = subscribed(handle);
    await handle.restart();
    const h = await running(a, 'watched');
    assert.equal(h, handle, 'the same handle, a new process');
    await Promise.race([
      again,
      new Promise((_, reject) => setTimeout(() => reject(new Error('no resources/subscribe after the restart')), 15_000)),
    ]);
    const updates: string[] = [];
    const sub = a.host.onResourceUpdated((u) => updates.push(u.uri));
    const first = doc.getText();
    await h.rawClient!.callTool('toggle-subscriber-updates', {});
    try {
      // The text carries the time of reading, so a re-read after an update shows as a change.
      await waitFor(() => updates.includes(resource) && doc.getText() !== first, 'the open document to refresh after the restart', 20_000);
    } finally {
      await h.rawClient!.callTool('toggle-subscriber-updates', {});
      sub.dispose();
      await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
    }
  });
});

describe('an open resource document of a 2026-07-28 server', function () {
  this.timeout(120_000);

  after(async () => setServers(undefined));

  it('refreshes through subscriptions/listen when the server updates the resource', async () => {
    const a = await api();
    a.ui.allowLaunch = async () => 'allow';
    await setServers({ v2listen: v2ServerEntry() });
    const handle = await running(a, 'v2listen');
    assert.equal(handle.client?.era, 'modern');
    const resource = 'fixture://counter';
    const doc = await vscode.workspace.openTextDocument(toResourceUri('v2listen', resource, 'counter', 'text/plain'));
    await vscode.window.showTextDocument(doc);
    try {
      assert.equal(doc.getText(), 'touched 0 times');
      // The listen is replaced by one that carries the open document's resource.
      await waitFor(
        () => handle.client?.listening?.acknowledged.resourceSubscriptions?.includes(resource),
        'a listen that carries the resource',
        20_000,
      );
      await handle.rawClient!.callTool('bump', {});
      await waitFor(
        () => doc.getText() === 'touched 1 times',
        `the open document to show the update (it shows ${JSON.stringify(doc.getText())})`,
        20_000,
      );
    } finally {
      await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
    }
  });
});
