import { strict as assert } from 'node:assert';
import { ErrorCode, McpError, type CreateMessageResult, type CreateTaskResult } from '../../src/core';
import { ServerRequestRouter, clientCapabilitiesOf } from '../../src/core/client/serverRequests';
import type { ClientHandlers } from '../../src/core/client/options';

const signal = new AbortController().signal;
const sampled: CreateMessageResult = { role: 'assistant', content: { type: 'text', text: 'hi' }, model: 'm' };

async function refusal(promise: Promise<unknown>): Promise<McpError> {
  const error = await promise.then(
    () => assert.fail('expected a refusal'),
    (e: unknown) => e,
  );
  assert.ok(error instanceof McpError);
  return error;
}

describe('ServerRequestRouter (the server’s requests of the initialize era)', () => {
  const routers: ServerRequestRouter[] = [];
  const router = (handlers: ClientHandlers) => {
    const r = new ServerRequestRouter(handlers, () => undefined);
    routers.push(r);
    return r;
  };
  after(() => routers.forEach((r) => r.dispose()));

  it('refuses a method it does not know with -32601', async () => {
    const e = await refusal(router({}).handle('files/delete', {}, signal));
    assert.equal(e.code, ErrorCode.MethodNotFound);
    assert.match(e.message, /files\/delete/);
  });

  it('refuses a request whose handler the host did not supply with -32601, and answers ping always', async () => {
    const r = router({});
    assert.deepEqual(await r.handle('ping', undefined, signal), {});
    for (const method of ['sampling/createMessage', 'elicitation/create', 'roots/list', 'tasks/list'])
      assert.equal((await refusal(r.handle(method, {}, signal))).code, ErrorCode.MethodNotFound, method);
  });

  it('offers exactly what the capabilities declare', () => {
    const combos: ClientHandlers[] = [
      {},
      { listRoots: () => [] },
      { createMessage: () => Promise.resolve(sampled) },
      { elicit: () => Promise.resolve({ action: 'cancel' }) },
      { listRoots: () => [], createMessage: () => Promise.resolve(sampled), elicit: () => Promise.resolve({ action: 'cancel' }) },
    ];
    for (const handlers of combos) {
      const methods = new Set(router(handlers).methods);
      const caps = clientCapabilitiesOf(handlers);
      assert.equal(methods.has('roots/list'), !!caps.roots);
      assert.equal(methods.has('sampling/createMessage'), !!caps.sampling);
      assert.equal(methods.has('elicitation/create'), !!caps.elicitation);
      for (const m of ['tasks/get', 'tasks/result', 'tasks/list', 'tasks/cancel']) assert.equal(methods.has(m), !!caps.tasks, m);
      assert.ok(methods.has('ping'));
    }
  });

  it('runs a request that carries `task` as a task it keeps, and a plain one at once', async () => {
    const r = router({ createMessage: () => Promise.resolve(sampled) });
    assert.deepEqual(await r.handle('sampling/createMessage', { messages: [], maxTokens: 5 }, signal), sampled);
    const created = (await r.handle(
      'sampling/createMessage',
      { messages: [], maxTokens: 5, task: { ttl: 60_000 } },
      signal,
    )) as CreateTaskResult;
    assert.equal(typeof created.task.taskId, 'string');
    const { _meta, ...result } = (await r.handle('tasks/result', { taskId: created.task.taskId }, signal)) as CreateMessageResult;
    assert.deepEqual(result, sampled);
    assert.deepEqual(_meta, { 'io.modelcontextprotocol/related-task': { taskId: created.task.taskId } });
    assert.deepEqual(
      r.tasks.list().map((t) => t.taskId),
      [created.task.taskId],
    );
  });
});
