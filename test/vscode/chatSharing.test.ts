import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { api, channelText, repoRoot, setServers, waitFor } from './helpers';

/** What VS Code 1.139 offers that @types/vscode 1.90 does not name. */
interface LmTools {
  tools: ReadonlyArray<{ name: string }>;
  invokeTool(name: string, options: { input: object; toolInvocationToken: undefined }): Thenable<{ content: unknown[] }>;
}
const lm = () => vscode.lm as unknown as LmTools;
const textOf = (result: { content: unknown[] }) => result.content.map((c) => (c as { value?: string }).value ?? '').join('');
const upstream = () => ({
  command: 'node',
  args: [path.join(repoRoot(), 'test', 'fixtures', 'gateway-upstream.mjs')],
  tools: { deny: ['remove'] },
  shareWithChat: true,
});
const sharedTools = () => lm().tools.filter((t) => /^mcp_.*(echo|read_file|remove|app_helper|slow)$/.test(t.name));

describe('sharing a server with VS Code chat', function () {
  this.timeout(180_000);
  const setTrace = (level: string | undefined) =>
    vscode.workspace.getConfiguration('mcpHost').update('trace', level, vscode.ConfigurationTarget.Global);
  after(async () => {
    await setServers(undefined);
    await setTrace(undefined);
  });

  it("offers the shared server's allowed tools to VS Code's own MCP client, and every call meets MCP Host's gate", async () => {
    const seam = await api();
    assert.ok(seam.sharing.available, 'this VS Code has no MCP server definition provider API');
    await setTrace('messages');
    await setServers({ up: upstream() });
    await waitFor(() => seam.host.registry.get('up')?.state.kind === 'running', 'up to run');
    // VS Code reads the provider's definitions again after its change event, in its own time: a start
    // asked for before it has the new definition starts nothing, so the start is asked again until
    // the shared tools are live (seen in a full run, where an earlier suite had VS Code read the
    // provider while nothing was shared yet).
    const tools = await waitFor(async () => {
      if (sharedTools().length < 2) await vscode.commands.executeCommand('workbench.mcp.startServer', '*', { waitForLiveTools: true });
      return sharedTools().length >= 2 && sharedTools();
    }, 'the shared tools in vscode.lm.tools');
    const names = tools.map((t) => t.name);
    assert.ok(
      names.some((n) => n.endsWith('echo')),
      names.join(),
    );
    assert.ok(!names.some((n) => n.endsWith('remove')), `the denied tool is offered: ${names.join()}`);
    assert.ok(!names.some((n) => n.endsWith('app_helper')), `the app-only tool is offered: ${names.join()}`);

    // Not read-only to VS Code (this entry does not trust annotations), so VS Code confirms the call:
    // while extension tests run its dialog service answers "yes" unseen; test/e2e/14-chat-sharing.test.js
    // answers the real dialog.
    const echo = names.find((n) => n.endsWith('echo'))!;
    const result = await lm().invokeTool(echo, { input: { text: 'from the chat' }, toolInvocationToken: undefined });
    assert.equal(textOf(result), 'from the chat');
    // By default VS Code runs MCP Host's relay as a stdio server: its session is the relay's.
    assert.equal(await seam.sharing.sessionCount('up', 'relay'), 1);
    assert.equal(await seam.sharing.sessionCount('up', 'http'), 0);
    const record = await waitFor(
      () => seam.tools.history.find((r) => r.by === 'chat' && r.tool === 'echo'),
      'the chat call in the history',
    );
    assert.equal(record.outcome, 'ok');

    const readFile = names.find((n) => n.endsWith('read_file'))!;
    const fenced = await lm().invokeTool(readFile, { input: { path: '/etc/passwd' }, toolInvocationToken: undefined });
    assert.match(textOf(fenced), /outside the roots/);
    await waitFor(
      () => seam.tools.history.find((r) => r.by === 'chat' && r.tool === 'read_file' && r.outcome === 'refused'),
      'the refusal',
    );

    // The protocol trace marks both as the chat's, beside the server's messages: the call that ran
    // and the one the fence refused (which never reached the server).
    const logUri = (seam.host as unknown as { context: vscode.ExtensionContext }).context.logUri;
    const byChat = (text: string) => text.split('\n').filter((line) => /^\S+ \[up\] ⇠ by the chat: tools\/call /.test(line));
    const traced = await waitFor(() => {
      const lines = byChat(channelText(logUri, 'MCP Host Trace'));
      return lines.some((l) => l.includes('read_file → refused')) && lines;
    }, "the chat's calls in the protocol trace");
    assert.ok(
      traced.some((l) => l.endsWith('tools/call echo → ok')),
      traced.join('\n'),
    );
    assert.match(
      traced.find((l) => l.includes('read_file'))!,
      /read_file → refused: .*root/,
    );

    await seam.sharing.setShared(seam.host.registry.get('up')!, false);
    await waitFor(() => sharedTools().length === 0 || undefined, 'the tools to go with Stop Sharing');
    // The relay's session ended with it.
    await waitFor(async () => (await seam.sharing.sessionCount('up', 'relay')) === 0 || undefined, 'the relay to go');
  });

  it('offers the same gate over HTTP when mcpHost.chat.connection is http', async () => {
    const seam = await api();
    const connection = (value: string | undefined) =>
      vscode.workspace.getConfiguration('mcpHost').update('chat.connection', value, vscode.ConfigurationTarget.Global);
    await connection('http');
    try {
      await setServers({ overhttp: upstream() });
      await waitFor(() => seam.host.registry.get('overhttp')?.state.kind === 'running', 'overhttp to run');
      const echo = await waitFor(async () => {
        const found = lm().tools.find((t) => /^mcp_overhttp\d*_echo$/.test(t.name))?.name;
        if (!found) await vscode.commands.executeCommand('workbench.mcp.startServer', '*', { waitForLiveTools: true });
        return found;
      }, "overhttp's echo in vscode.lm.tools, named after the server");
      const result = await lm().invokeTool(echo, { input: { text: 'over http' }, toolInvocationToken: undefined });
      assert.equal(textOf(result), 'over http');
      assert.equal(await seam.sharing.sessionCount('overhttp', 'http'), 1);
      assert.equal(await seam.sharing.sessionCount('overhttp', 'relay'), 0);
      const readFile = lm().tools.find((t) => /^mcp_overhttp\d*_read_file$/.test(t.name))!.name;
      const fenced = await lm().invokeTool(readFile, { input: { path: '/etc/passwd' }, toolInvocationToken: undefined });
      assert.match(textOf(fenced), /outside the roots/);
    } finally {
      await setServers(undefined);
      await connection(undefined);
    }
  });
});
