import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import {
  ErrorCode,
  MAX_ENDED_RECEIVER_TASKS,
  MAX_LIVE_RECEIVER_TASKS,
  MAX_RECEIVER_TASK_TTL_MS,
  McpError,
  RELATED_TASK_META_KEY,
  REQUEST_CANCELLED,
  ReceiverTasks,
  StdioTransport,
  StreamableHttpTransport,
  isTaskLost,
  type ElicitRequestParams,
  type ElicitResult,
  type Task,
  type TextContent,
  type Transport,
} from '../../src/core';
import { EVERYTHING_TRANSPORTS, startEverything, type EverythingSetup } from '../helpers/httpServers';
import { ROOT, allHandlers, closeAll, connect, connectTransport, eventually, everythingServer, type TestClient } from '../helpers/servers';

const text = (blocks: unknown[]) => blocks.map((b) => (b as TextContent).text).join('\n');

for (const [name, setUp] of EVERYTHING_TRANSPORTS) describeTasks(name, setUp);

/** Tasks (2025-11-25) both ways against server-everything: its task tool, and the requests it has us run as tasks. */
function describeTasks(name: string, setUp: () => Promise<EverythingSetup>): void {
  describe(`tasks with server-everything over ${name}`, function () {
    this.timeout(30_000);
    let setup: EverythingSetup;
    let t: TestClient<Transport>;
    let elicited: ElicitRequestParams[];
    let sampled: number;

    before(async () => {
      setup = await setUp();
    });
    after(async () => {
      await setup?.stop?.();
    });
    beforeEach(async () => {
      elicited = [];
      sampled = 0;
      t = await connectTransport(setup.transport(), {
        handlers: allHandlers({
          elicit: async (params): Promise<ElicitResult> => {
            elicited.push(params);
            if (params.requestedSchema?.properties?.interpretation) return { action: 'accept', content: { interpretation: 'snake' } };
            return { action: 'accept', content: { name: 'Ada Lovelace', favoriteColor: 'Green', agreeToTerms: true } };
          },
          createMessage: async () => {
            sampled++;
            return { role: 'assistant', content: { type: 'text', text: 'a sampled answer' }, model: 'test-model', stopReason: 'endTurn' };
          },
        }),
      });
    });
    afterEach(closeAll);

    const toolsWith = (toolName: string) =>
      eventually(async () => {
        const tools = await t.client.listTools();
        return tools.some((x) => x.name === toolName) ? tools : undefined;
      });

    it('declares tasks, and the server then offers its task tool and both async tools', async () => {
      assert.deepEqual(t.client.clientCapabilities.tasks, {
        list: {},
        cancel: {},
        requests: { sampling: { createMessage: {} }, elicitation: { create: {} } },
      });
      const tools = await toolsWith('trigger-elicitation-request-async');
      const research = tools.find((x) => x.name === 'simulate-research-query');
      assert.equal(research?.execution?.taskSupport, 'required');
      assert.ok(tools.some((x) => x.name === 'trigger-sampling-request-async'));
    });

    it('runs simulate-research-query as a task: polls, answers its elicitation, fetches the result', async () => {
      await toolsWith('simulate-research-query');
      const statuses: Task[] = [];
      const outcome = await t.client.callTool(
        'simulate-research-query',
        { topic: 'python', ambiguous: true },
        { onTaskStatus: (task) => statuses.push(task) },
      );
      assert.equal(outcome.task?.status, 'completed');
      assert.ok(!outcome.result.isError);
      assert.match(text(outcome.result.content), /# Research Report: python \(snake\)/);
      assert.equal(elicited.length, 1);
      assert.match(elicited[0].message, /multiple interpretations/);
      const seen = statuses.map((s) => s.status);
      assert.equal(seen[0], 'working');
      assert.ok(seen.includes('input_required'), `statuses seen: ${seen.join(', ')}`);
      assert.equal(seen.at(-1), 'completed');
      assert.ok(statuses.every((s) => s.taskId === outcome.task?.taskId));
    });

    it('runs the server-initiated elicitation as our task and the tool completes with the answer', async () => {
      await toolsWith('trigger-elicitation-request-async');
      const outcome = await t.client.callTool('trigger-elicitation-request-async', {});
      const body = text(outcome.result.content);
      assert.match(body, /\[COMPLETED\]/);
      assert.match(body, /Name: Ada Lovelace/);
      assert.match(body, /Favorite Color: Green/);
      assert.equal(outcome.task, undefined, 'the tool itself is not a task');
      assert.equal(elicited.length, 1);
      // Finished tasks stay listed until their ttl, with their status.
      assert.deepEqual(
        t.client.tasksRunForServer.map((x) => x.status),
        ['completed'],
      );
    });

    it('runs the server-initiated sampling as our task and the tool completes with the answer', async () => {
      await toolsWith('trigger-sampling-request-async');
      const outcome = await t.client.callTool('trigger-sampling-request-async', { prompt: 'hello', maxTokens: 20 });
      const body = text(outcome.result.content);
      assert.match(body, /a sampled answer/);
      assert.doesNotMatch(body, /\[SYNC\]|\[TIMEOUT\]|\[FAILED\]/);
      assert.equal(sampled, 1);
    });

    it('aborting the call cancels the task on the server', async () => {
      await toolsWith('simulate-research-query');
      const controller = new AbortController();
      let taskId: string | undefined;
      const call = t.client.callTool(
        'simulate-research-query',
        { topic: 'rivers' },
        {
          signal: controller.signal,
          onTaskStatus: (task) => {
            taskId = task.taskId;
            controller.abort();
          },
        },
      );
      await assert.rejects(call, (e: { code?: number }) => e.code === REQUEST_CANCELLED);
      assert.ok(taskId);
      const onServer = await eventually(async () => {
        const task = await t.client.getTask(taskId!);
        return task.status === 'cancelled' ? task : undefined;
      });
      assert.equal(onServer.status, 'cancelled');
    });

    it('a task cancelled from elsewhere (tasks/cancel) ends the waiting call as cancelled', async () => {
      await toolsWith('simulate-research-query');
      let cancelled: Promise<Task> | undefined;
      const call = t.client.callTool(
        'simulate-research-query',
        { topic: 'rivers' },
        {
          onTaskStatus: (task) => {
            cancelled ??= t.client.cancelTask(task.taskId);
          },
        },
      );
      await assert.rejects(call, (e: { code?: number; message: string }) => e.code === REQUEST_CANCELLED && /cancelled/.test(e.message));
      assert.equal((await cancelled)?.status, 'cancelled');
      assert.ok((await t.client.listTasks()).some((x) => x.status === 'cancelled'));
    });
  });
}

describe('tasks: a server that goes away mid-task', function () {
  this.timeout(30_000);
  afterEach(closeAll);

  it('stdio: the server process dies while the task runs: "task lost", not a hang', async () => {
    const transport = new StdioTransport({ shutdownGraceMs: 500, ...everythingServer() });
    const t = await connectTransport(transport, { handlers: allHandlers() });
    await eventually(async () => ((await t.client.listTools()).some((x) => x.name === 'simulate-research-query') ? true : undefined));
    let killed = false;
    const call = t.client.callTool(
      'simulate-research-query',
      { topic: 'rivers' },
      {
        onTaskStatus: () => {
          if (killed) return;
          killed = true;
          process.kill(transport.pid!, 'SIGKILL');
        },
      },
    );
    await assert.rejects(call, (e: Error) => isTaskLost(e) && /lost/.test(e.message));
  });

  it('Streamable HTTP: the server stops while the task runs: "task lost"', async () => {
    const first = await startEverything('streamableHttp');
    const t = await connectTransport(new StreamableHttpTransport({ url: first.url }), { handlers: allHandlers() });
    await eventually(async () => ((await t.client.listTools()).some((x) => x.name === 'simulate-research-query') ? true : undefined));
    let stopped: Promise<void> | undefined;
    const call = t.client.callTool('simulate-research-query', { topic: 'rivers' }, { onTaskStatus: () => void (stopped ??= first.stop()) });
    try {
      await assert.rejects(call, (e: Error) => isTaskLost(e) && /lost/.test(e.message));
    } finally {
      await stopped;
    }
  });

  it('Streamable HTTP: the server restarts on the same port and no longer knows the task: "task lost"', async () => {
    const first = await startEverything('streamableHttp');
    let second: Awaited<ReturnType<typeof startEverything>> | undefined;
    try {
      const t = await connectTransport(new StreamableHttpTransport({ url: first.url }), { handlers: allHandlers() });
      await eventually(async () => ((await t.client.listTools()).some((x) => x.name === 'simulate-research-query') ? true : undefined));
      let restarted: Promise<void> | undefined;
      const call = t.client.callTool(
        'simulate-research-query',
        { topic: 'rivers' },
        {
          onTaskStatus: () =>
            void (restarted ??= first.stop().then(async () => {
              second = await startEverything('streamableHttp', 15_000, first.port);
            })),
        },
      );
      await assert.rejects(call, (e: Error) => isTaskLost(e) && /lost/.test(e.message));
      await restarted;
    } finally {
      await first.stop();
      await second?.stop();
    }
  });
});

describe('tasks we run for the server (ReceiverTasks)', () => {
  it('cancel aborts the handler, reports the status, fails tasks/result; an ended task cannot be cancelled', async () => {
    const statuses: Task[] = [];
    const tasks = new ReceiverTasks((task) => statuses.push(task));
    let handlerSignal: AbortSignal | undefined;
    const { task } = tasks.create(5_000, (signal) => {
      handlerSignal = signal;
      return new Promise(() => undefined);
    });
    assert.equal(task.status, 'working');
    assert.equal(task.ttl, 5_000);
    const result = tasks.result(task.taskId, new AbortController().signal);
    assert.equal(tasks.cancel(task.taskId).status, 'cancelled');
    assert.equal(handlerSignal?.aborted, true);
    await assert.rejects(result, (e: { code?: number }) => e.code === REQUEST_CANCELLED);
    assert.deepEqual(
      statuses.map((s) => s.status),
      ['cancelled'],
    );
    assert.throws(
      () => tasks.cancel(task.taskId),
      (e: { code?: number }) => e.code === ErrorCode.InvalidParams,
    );
    assert.throws(
      () => tasks.get('no-such-task'),
      (e: { code?: number }) => e.code === ErrorCode.InvalidParams,
    );
    tasks.dispose();
  });

  it('a completed task answers tasks/result with its result, tied to the task; a ttl above the cap is capped', async () => {
    const tasks = new ReceiverTasks(() => undefined, { maxTtlMs: 1_000 });
    const { task } = tasks.create(10 * 60_000, async () => ({ action: 'accept', content: { x: 1 } }));
    assert.equal(task.ttl, 1_000);
    const result = (await tasks.result(task.taskId, new AbortController().signal)) as Record<string, unknown>;
    assert.equal(result.action, 'accept');
    assert.deepEqual((result._meta as Record<string, unknown>)[RELATED_TASK_META_KEY], { taskId: task.taskId });
    assert.equal(tasks.get(task.taskId).status, 'completed');
    assert.deepEqual(
      tasks.list().map((x) => x.taskId),
      [task.taskId],
    );
    tasks.dispose();
  });
});

describe('tasks we run for the server: bounds a hostile server cannot push past', () => {
  it('refuses a task past the live cap, naming it, and takes one again once a task ended; the ttl stays capped', async () => {
    const tasks = new ReceiverTasks(() => undefined, { maxTtlMs: 24 * 60 * 60_000 });
    const finishers: Array<() => void> = [];
    for (let i = 0; i < MAX_LIVE_RECEIVER_TASKS; i++)
      tasks.create(10 * 24 * 60 * 60_000, () => new Promise((resolve) => finishers.push(() => resolve({}))));
    assert.ok(tasks.list().every((t) => t.ttl === MAX_RECEIVER_TASK_TTL_MS));
    assert.throws(
      () => tasks.create(1_000, () => assert.fail('a refused task must not run')),
      (e: McpError) =>
        e.code === ErrorCode.InternalError &&
        e.message.includes(
          `${MAX_LIVE_RECEIVER_TASKS} tasks of this server are still running, and MCP Host runs at most ${MAX_LIVE_RECEIVER_TASKS} at once`,
        ),
    );
    const first = tasks.list()[0];
    finishers[0]();
    await tasks.result(first.taskId, new AbortController().signal);
    assert.equal(tasks.create(1_000, () => new Promise(() => undefined)).task.status, 'working', 'one ended: a place is free');
    tasks.dispose();
  });

  it('keeps the results of at most 256 ended tasks: the oldest ended are forgotten', async () => {
    const tasks = new ReceiverTasks(() => undefined);
    const ids: string[] = [];
    for (let i = 0; i < MAX_ENDED_RECEIVER_TASKS + 20; i++) {
      const { task } = tasks.create(60_000, async () => ({ n: i }));
      ids.push(task.taskId);
      await tasks.result(task.taskId, new AbortController().signal);
    }
    assert.equal(tasks.list().length, MAX_ENDED_RECEIVER_TASKS);
    assert.throws(
      () => tasks.get(ids[0]),
      (e: McpError) => e.code === ErrorCode.InvalidParams,
      'the oldest is forgotten',
    );
    assert.equal(tasks.get(ids.at(-1)).status, 'completed');
    tasks.dispose();
  });
});

describe('tasks: the cases of the task fixture server', function () {
  this.timeout(20_000);
  afterEach(closeAll);
  const taskServer = (scenario: 'tasks' | 'no-tasks') => ({
    command: process.execPath,
    args: [path.join(ROOT, 'test', 'fixtures', 'task-server.mjs'), scenario],
  });
  const sentCall = (t: TestClient, tool: string) =>
    t.logs.map((l) => l.message).find((m) => m.includes('RECEIVED') && m.includes('"tools/call"') && m.includes(`"${tool}"`));

  it('without tasks.requests.tools.call: a required-task tool is refused locally, an optional one is called plainly', async () => {
    const t = await connect(taskServer('no-tasks'));
    await t.client.listTools();
    await assert.rejects(
      t.client.callTool('must-be-task', {}),
      (e: { code?: number; message: string }) => e.code === ErrorCode.CapabilityDisabled && /tasks\.requests\.tools\.call/.test(e.message),
    );
    const outcome = await t.client.callTool('may-be-task', {});
    assert.equal(text(outcome.result.content), 'plain call of may-be-task');
    assert.equal(outcome.task, undefined);
    await t.waitForLog(() => !!sentCall(t, 'may-be-task'));
    assert.ok(!sentCall(t, 'must-be-task'), 'nothing was sent for the refused call');
    assert.doesNotMatch(sentCall(t, 'may-be-task')!, /"task"/);
  });

  it('with it: an optional tool runs as a task with the ttl asked for, even when the tool list was not fetched first', async () => {
    const t = await connect(taskServer('tasks'));
    const outcome = await t.client.callTool('may-be-task', {}, { taskTtlMs: 12_345 });
    assert.equal(text(outcome.result.content), 'task call of may-be-task');
    assert.equal(outcome.task?.status, 'completed');
    await t.waitForLog(() => !!sentCall(t, 'may-be-task'));
    assert.match(sentCall(t, 'may-be-task')!, /"task":\{"ttl":12345\}/);
  });

  it('a pollInterval of 0 does not make us flood the server with tasks/get', async () => {
    const t = await connect(taskServer('tasks'));
    await t.client.callTool('may-be-task', {});
    const polls = t.logs.filter((l) => l.message.includes('RECEIVED') && l.message.includes('"tasks/get"')).length;
    // The task runs 300 ms; polling at the lower bound (200 ms) asks a few times, unbounded it would ask hundreds.
    assert.ok(polls >= 1 && polls < 10, `tasks/get sent ${polls} times`);
  });

  it("a failed task gives the tool's error result and says the task failed", async () => {
    const t = await connect(taskServer('tasks'));
    const outcome = await t.client.callTool('fails', {});
    assert.equal(outcome.result.isError, true);
    assert.equal(outcome.task?.status, 'failed');
    assert.equal(outcome.task?.statusMessage, 'it broke');
  });

  it("progress the server sends during the task, with the call's token, reaches the caller until the task ends", async () => {
    const t = await connect(taskServer('tasks'));
    const seen: string[] = [];
    let taskCreated = false;
    const outcome = await t.client.callTool(
      'reports-progress',
      {},
      {
        onTaskStatus: () => void (taskCreated = true),
        onProgress: (p) => void seen.push(`${taskCreated ? 'task' : 'call'}: ${p.progress}/${p.total} ${p.message}`),
      },
    );
    assert.equal(outcome.task?.status, 'completed');
    // All of it arrives after tools/call was answered with the task, when the call's own request is over.
    assert.deepEqual(seen, ['task: 1/3 step 1 of 3', 'task: 2/3 step 2 of 3', 'task: 3/3 step 3 of 3']);
    await t.waitForLog(() => !!sentCall(t, 'reports-progress'));
    assert.match(sentCall(t, 'reports-progress')!, /"_meta":\{"progressToken":"task-progress-\d+"\}/);
  });

  it('a task whose ttl runs out before it ends is lost, not waited on forever', async () => {
    const t = await connect(taskServer('tasks'));
    await assert.rejects(t.client.callTool('short-ttl', {}), (e: Error) => isTaskLost(e) && /ttl of 300 ms/.test(e.message));
  });
});
