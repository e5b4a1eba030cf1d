import { strict as assert } from 'node:assert';
import * as vscode from 'vscode';
import type { Task } from '../../src/core';
import type { TreeNode } from '../../src/vscode/tree/nodes';
import * as path from 'node:path';
import { api, repoRoot, running, serverScript, setServers, waitFor } from './helpers';

describe('tasks in a real VS Code', function () {
  this.timeout(120_000);

  before(async () => {
    const a = await api();
    a.ui.allowLaunch = async () => 'allow';
    a.ui.confirmTool = async () => 'once';
    await setServers({
      everything: { command: 'node', args: [serverScript('server-everything'), 'stdio'] },
      tasks: { command: 'node', args: [path.join(repoRoot(), 'test', 'fixtures', 'task-server.mjs'), 'tasks'] },
    });
    await running(a, 'everything');
  });
  afterEach(async () => {
    const a = await api();
    a.ui.announceCall = (severity, message, ...actions) =>
      severity === 'error'
        ? vscode.window.showErrorMessage(message, ...actions)
        : vscode.window.showInformationMessage(message, ...actions);
  });
  after(async () => setServers(undefined));

  type TaskNode = Extract<TreeNode, { kind: 'task' }>;
  const taskNodesOf = async (serverName: string): Promise<TaskNode[]> => taskNodesIn(await api(), serverName);
  const taskNodesIn = (a: Awaited<ReturnType<typeof api>>, serverName: string): TaskNode[] => {
    const serverNode = a.tree.getChildren().find((n) => n.kind === 'server' && n.server.name === serverName);
    const group = serverNode && a.tree.getChildren(serverNode).find((n) => n.kind === 'group' && n.group === 'tasks');
    return group ? a.tree.getChildren(group).filter((n): n is TaskNode => n.kind === 'task') : [];
  };
  /** Every ending a call announces, answered with `answer` (Open Result, say) once `release` is called. */
  const recordAnnouncements = async () => {
    const a = await api();
    const told: Array<{ severity: string; message: string; actions: string[] }> = [];
    let release: (answer: string | undefined) => void = () => {};
    const answered = new Promise<string | undefined>((resolve) => (release = resolve));
    a.ui.announceCall = (severity, message, ...actions) => {
      told.push({ severity, message, actions });
      return answered;
    };
    return { told, release };
  };

  const researchTool = async () => {
    const a = await api();
    const ev = await running(a, 'everything');
    const tool = await waitFor(
      async () => (await ev.client!.listTools()).find((t) => t.name === 'simulate-research-query'),
      'the task tool',
    );
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
      () =>
        vscode.window.activeTextEditor?.document.uri.scheme === 'mcp-output' &&
        /Research Report: rivers/.test(vscode.window.activeTextEditor.document.getText()) &&
        vscode.window.activeTextEditor.document,
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
    const docs = vscode.window.onDidChangeActiveTextEditor(
      (e) => e && /Research Report: fjords/.test(e.document.getText()) && opened.push(e.document.uri.toString()),
    );
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
    const running = await waitFor(
      () => tasksOf().find((n): n is Extract<TreeNode, { kind: 'task' }> => n.kind === 'task' && n.entry.endedAt === undefined),
      'a running task in the tree',
    );
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
      return (
        group &&
        a.tree.getChildren(group).find((n): n is Extract<TreeNode, { kind: 'task' }> => n.kind === 'task' && n.entry.endedAt === undefined)
      );
    }, 'a running task in the tree');
    await ev.restart();
    const record = await call;
    assert.equal(record?.outcome, 'failed');
    assert.equal(node.entry.ending, 'lost');
    assert.match(String(a.tree.getTreeItem(node).description), /^lost/);
    await running(a, 'everything');
  });

  it('Run in Background from the tree: the progress notification goes, the call goes on, and its result is offered, not opened', async () => {
    const { a, ev, tool } = await researchTool();
    const { told, release } = await recordAnnouncements();
    const call = a.tools.call(ev, tool, { topic: 'deltas' });
    const node = await waitFor(
      async () =>
        (await taskNodesOf('everything')).find(
          (n) => n.entry.endedAt === undefined && a.tree.getTreeItem(n).contextValue === 'task.running',
        ),
      'a running task in the tree',
    );
    await vscode.commands.executeCommand('mcpHost.runTaskInBackground', node);
    assert.equal(a.tree.getTreeItem(node).contextValue, 'task.background', 'in the background it offers Cancel only');
    assert.match(String(a.tree.getTreeItem(node).tooltip), /background/);
    const record = await call;
    assert.equal(record?.outcome, 'ok');
    assert.equal(record?.background, true);
    assert.equal(a.tools.history[0], record, 'the history has the call, marked as run in the background');
    assert.deepEqual(
      told.map((t) => [t.severity, t.message, t.actions]),
      [['info', 'MCP Host: simulate-research-query finished in the background.', ['Open Result']]],
    );
    const isReport = () => /Research Report: deltas/.test(vscode.window.activeTextEditor?.document.getText() ?? '');
    assert.ok(!isReport(), 'the result did not take the editor');
    release('Open Result');
    const doc = await waitFor(
      () => isReport() && vscode.window.activeTextEditor!.document,
      'the research report, opened from the notification',
    );
    assert.equal(doc.uri.scheme, 'mcp-output');
  });

  it('a background task cancelled from the tree ends cancelled on the server, and the ending says so', async () => {
    const { a, ev, tool } = await researchTool();
    const { told } = await recordAnnouncements();
    const call = a.tools.call(ev, tool, { topic: 'moraines' });
    const node = await waitFor(
      async () =>
        (await taskNodesOf('everything')).find(
          (n) => n.entry.endedAt === undefined && a.tree.getTreeItem(n).contextValue === 'task.running',
        ),
      'a running task in the tree',
    );
    await vscode.commands.executeCommand('mcpHost.runTaskInBackground', node);
    await vscode.commands.executeCommand('mcpHost.cancelTask', node);
    const record = await call;
    assert.equal(record?.outcome, 'cancelled');
    assert.equal(record?.background, true);
    const onServer = await waitFor(async () => {
      const t = await ev.client!.getTask(node.entry.task.taskId);
      return t.status === 'cancelled' && t;
    }, 'the task cancelled on the server');
    assert.equal(onServer.status, 'cancelled');
    assert.match(String(a.tree.getTreeItem(node).description), /^cancelled/);
    assert.equal(told.length, 1);
    assert.match(told[0].message, /simulate-research-query was cancelled; the server was told to stop/);
  });

  it("the server's progress during a task shows on the task in the tree", async () => {
    const a = await api();
    const server = await running(a, 'tasks');
    const tool = await waitFor(
      async () => (await server.client!.listTools()).find((t) => t.name === 'reports-progress'),
      'the fixture task tool',
    );
    const descriptions: string[] = [];
    // Read at each change, synchronously: the last step comes just before the task ends.
    const sub = a.tools.tasks.onDidChange(() => {
      for (const n of taskNodesIn(a, 'tasks')) descriptions.push(String(a.tree.getTreeItem(n).description));
    });
    try {
      const record = await a.tools.call(server, tool, {});
      assert.equal(record?.outcome, 'ok');
    } finally {
      sub.dispose();
    }
    for (const step of [1, 2, 3])
      assert.ok(
        descriptions.some((d) => d.startsWith('working') && d.includes(`${step} of 3: step ${step} of 3`)),
        `step ${step} in: ${[...new Set(descriptions)].join(' | ')}`,
      );
  });
});
