import { strict as assert } from 'node:assert';
import * as vscode from 'vscode';
import type { Task } from '../../src/core';
import type { TreeNode } from '../../src/vscode/tree/nodes';
import { api, running, serverScript, setServers, waitFor } from './helpers';

describe('tasks in a real VS Code', function () {
  this.timeout(120_000);

  before(async () => {
    const a = await api();
    a.ui.allowLaunch = async () => 'allow';
    a.ui.confirmTool = async () => 'once';
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

  it('lists the running task under its server in "Tasks", and its Cancel cancels the task on the server', async () => {
    const { a, ev, tool } = await researchTool();
    const call = a.tools.call(ev, tool, { topic: 'glaciers' });
    const tasksOf = () => {
      const serverNode = a.tree.getChildren().find((n) => n.kind === 'server' && n.server.name === 'everything')!;
      const group = a.tree.getChildren(serverNode).find((n) => n.kind === 'group' && n.group === 'tasks');
      return group ? a.tree.getChildren(group) : [];
    };
    const running = await waitFor(() => tasksOf().find((n): n is Extract<TreeNode, { kind: 'task' }> => n.kind === 'task' && n.entry.endedAt === undefined), 'a running task in the tree');
    const item = a.tree.getTreeItem(running);
    assert.equal(item.label, 'simulate-research-query');
    assert.equal(item.contextValue, 'task.running');
    assert.match(String(item.description), /working · \d+ s/);
    await vscode.commands.executeCommand('mcpHost.cancelTask', running);
    const record = await call;
    assert.equal(record?.outcome, 'cancelled');
    const onServer = await waitFor(async () => {
      const t = await ev.client!.getTask(running.entry.task.taskId);
      return t.status === 'cancelled' && t;
    }, 'the task cancelled on the server');
    assert.equal(onServer.status, 'cancelled');
    const ended = tasksOf().find((n) => n.kind === 'task' && n.entry.task.taskId === running.entry.task.taskId)!;
    const endedItem = a.tree.getTreeItem(ended);
    assert.equal(endedItem.contextValue, 'task.ended');
    assert.match(String(endedItem.description), /^cancelled/);
  });

  it('a server restarted mid-task leaves the call failed and the task shown as lost, not a hang', async () => {
    const { a, ev, tool } = await researchTool();
    const call = a.tools.call(ev, tool, { topic: 'tides' });
    const node = await waitFor(() => {
      const serverNode = a.tree.getChildren().find((n) => n.kind === 'server' && n.server.name === 'everything')!;
      const group = a.tree.getChildren(serverNode).find((n) => n.kind === 'group' && n.group === 'tasks');
      return group && a.tree.getChildren(group).find((n): n is Extract<TreeNode, { kind: 'task' }> => n.kind === 'task' && n.entry.endedAt === undefined);
    }, 'a running task in the tree');
    await ev.restart();
    const record = await call;
    assert.equal(record?.outcome, 'failed');
    assert.equal(node.entry.ending, 'lost');
    assert.match(String(a.tree.getTreeItem(node).description), /^lost/);
    await running(a, 'everything');
  });
});
