import { strict as assert } from 'node:assert';
import * as vscode from 'vscode';
import type { Task } from '../../src/core';
import { api, running, serverScript, setServers, waitFor } from './helpers';

describe('tasks in a real VS Code', function () {
  this.timeout(120_000);

  before(async () => {
    const a = await api();
    a.host.consent.prompt = async () => 'allow';
    a.tools.confirm = async () => 'once';
    await setServers({ everything: { command: 'node', args: [serverScript('server-everything'), 'stdio'] } });
    await running(a, 'everything');
  });
  after(async () => setServers(undefined));

  const researchTool = async () => {
    const a = await api();
    const ev = await running(a, 'everything');
    const tool = await waitFor(async () => (await ev.client!.listTools()).find((t) => t.name === 'simulate-research-query'), 'the task tool');
    assert.equal(tool.execution?.taskSupport, 'required');
    return { a, ev, tool };
  };

  it('calls a tool that must run as a task, follows the task and opens the result', async () => {
    const { a, ev, tool } = await researchTool();
    const statuses: string[] = [];
    const sub = ev.client!.onTaskStatus((t: Task) => statuses.push(t.status));
    try {
      const record = await a.tools.call(ev, tool, { topic: 'rivers' });
      assert.equal(record?.outcome, 'ok');
    } finally {
      sub.dispose();
    }
    const doc = await waitFor(
      () => vscode.window.activeTextEditor?.document.uri.scheme === 'mcp-output' && /Research Report: rivers/.test(vscode.window.activeTextEditor.document.getText()) && vscode.window.activeTextEditor.document,
      'the research report',
    );
    assert.match(doc.getText(), /Stage 4: Generating report/);
    assert.ok(statuses.includes('working') && statuses.at(-1) === 'completed', `statuses: ${statuses.join(', ')}`);
  });

  it('a task cancelled on the server ends the call as cancelled, and no result opens', async () => {
    const { a, ev, tool } = await researchTool();
    let cancelled: Promise<Task> | undefined;
    const sub = ev.client!.onTaskStatus((t: Task) => void (cancelled ??= ev.client!.cancelTask(t.taskId)));
    const opened: string[] = [];
    const docs = vscode.window.onDidChangeActiveTextEditor((e) => e && /Research Report: fjords/.test(e.document.getText()) && opened.push(e.document.uri.toString()));
    try {
      const record = await a.tools.call(ev, tool, { topic: 'fjords' });
      assert.equal(record?.outcome, 'cancelled');
      assert.equal((await cancelled)?.status, 'cancelled');
      assert.deepEqual(opened, []);
    } finally {
      sub.dispose();
      docs.dispose();
    }
  });
});
