import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { setServerLogLevel } from '../../src/vscode/logs/logLevel';
import { api, channelText, repoRoot, running, serverScript, setServers, waitFor } from './helpers';

// eslint-disable-next-line no-control-regex
const BREAKERS = /[\r\u000b\u000c\u001b\u0085\u2028\u2029]/;

describe('trace and server log: a hostile server cannot forge lines', function () {
  this.timeout(120_000);
  const trace = () => vscode.workspace.getConfiguration('mcpHost').update('trace', 'verbose', vscode.ConfigurationTarget.Global);

  before(async () => {
    const a = await api();
    a.ui.allowLaunch = async () => 'allow';
  });
  after(async () => {
    await setServers(undefined);
    await vscode.workspace.getConfiguration('mcpHost').update('trace', undefined, vscode.ConfigurationTarget.Global);
  });

  it('writes method names, error texts, log messages and stderr of a server as one line each', async () => {
    const a = await api();
    await trace();
    await setServers({ hostile: { command: 'node', args: [path.join(repoRoot(), 'test', 'fixtures', 'raw-server.mjs'), 'forge'] } });
    const h = await running(a, 'hostile');
    await assert.rejects(h.rawClient!.callTool('work', {}), /failed/);
    const logUri = (a.host as unknown as { context: vscode.ExtensionContext }).context.logUri;
    // The channels reach their files a little later; wait for the last line each should have.
    const traceText = await waitFor(() => {
      const t = channelText(logUri, 'MCP Host Trace');
      return t.includes('tools/call #') && t.includes('→ ping #3') && t;
    }, 'the trace file to show the failed call');
    const logText = await waitFor(() => {
      const t = channelText(logUri, 'MCP Host: hostile');
      return t.includes('[stderr] stderr line') && t.includes('{"key') && t.includes('[evil') && t;
    }, 'the server log to show the forged messages');

    assert.doesNotMatch(traceText, BREAKERS);
    assert.doesNotMatch(logText, BREAKERS);
    for (const line of traceText.split('\n').filter(Boolean)) {
      // Our lines: a time and the server in brackets, or the indented JSON of a verbose body.
      assert.match(line, /^(\d\d:\d\d:\d\d\.\d{3} \[[^\]]+\] | {4})/, `a trace line we did not write: ${line}`);
      if (line.includes('[victim]')) assert.match(line, /^(\d\d:\d\d:\d\d\.\d{3} \[hostile\] | {4})/, `a forged trace line: ${line}`);
    }
    const hostileLines = logText.split('\n').filter(Boolean);
    for (const line of hostileLines)
      assert.match(line, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} \[\w+\] /, `a log line without its time and level: ${line}`);
    assert.ok(
      hostileLines.every((l) => !/^\S+ \S+ \[\w+\] \[transport\] server exited with code 0/.test(l)),
      'a forged [transport] line',
    );
    assert.ok(traceText.includes('notifications/hello\\n12:00:00.000 [victim]'), 'the forged method is shown, escaped');
    assert.ok(logText.includes('[evil\\n[transport]] one\\n[transport] server exited'), 'the logger name and data are shown, escaped');
  });

  it('notes a failed completion request in the server log instead of swallowing it', async () => {
    const a = await api();
    await setServers({
      completing: { command: 'node', args: [path.join(repoRoot(), 'test', 'fixtures', 'raw-server.mjs'), 'bad-completion'] },
    });
    const h = await running(a, 'completing');
    const lines: string[] = [];
    const sub = h.onLog((e) => e.source === 'server' && lines.push(e.message));
    try {
      const asked = a.prompts.run({ server: h, prompt: { name: 'greet', arguments: [{ name: 'who' }] } });
      const line = await waitFor(() => lines.find((l) => l.includes('completion/complete')), 'a log line about the failed completion');
      assert.match(line, /completion\/complete for who failed: .*Method not found/);
      await vscode.commands.executeCommand('workbench.action.closeQuickOpen');
      assert.equal(await asked, undefined);
    } finally {
      sub.dispose();
    }
  });
});

describe('server log level', function () {
  this.timeout(120_000);
  after(async () => setServers(undefined));

  it('Set Server Log Level writes logLevel to the entry and the running server is told, without a restart', async () => {
    const a = await api();
    a.ui.allowLaunch = async () => 'allow';
    await setServers({ leveled: { command: 'node', args: [serverScript('server-everything'), 'stdio'] } });
    const h = await running(a, 'leveled');
    assert.equal(h.logLevel, 'info');
    const told: string[] = [];
    const sub = h.onLog((e) => {
      const m = /^log level set to (\w+)$/.exec(e.message);
      if (m) told.push(m[1]);
    });
    try {
      const offered: string[] = [];
      const chosen = await setServerLogLevel(h, async (items) => {
        offered.push(...items.map((i) => `${i.label}${i.description ? ` (${i.description})` : ''}`));
        return items.find((i) => i.level === 'debug');
      });
      assert.equal(chosen, 'debug');
      assert.deepEqual(offered, ['debug', 'info (current)', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency']);
      const entry = vscode.workspace.getConfiguration('mcpHost').inspect<Record<string, Record<string, unknown>>>('servers')
        ?.globalValue?.leveled;
      assert.equal(entry?.logLevel, 'debug');
      await waitFor(() => told.includes('debug'), 'server-everything to accept logging/setLevel debug');
      assert.equal(a.host.registry.get('leveled'), h, 'the same handle: no restart');
      assert.equal(h.state.kind, 'running');
      assert.equal(h.logLevel, 'debug');
      // It is a command, on every server's context menu.
      assert.ok((await vscode.commands.getCommands(true)).includes('mcpHost.setServerLogLevel'));
      const menus = vscode.extensions.all.find((e) => e.packageJSON.name === 'mcp-host')!.packageJSON.contributes.menus[
        'view/item/context'
      ] as Array<{ command: string; when: string }>;
      assert.ok(
        menus.some((m) => m.command === 'mcpHost.setServerLogLevel' && m.when.includes('viewItem =~ /^server\\./')),
        JSON.stringify(menus),
      );
    } finally {
      sub.dispose();
    }
  });
});
