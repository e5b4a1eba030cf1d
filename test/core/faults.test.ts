import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import {
  ErrorCode,
  MAX_LIST_BYTES,
  MAX_LIST_PAGES,
  MAX_STDERR_LINE,
  McpClient,
  McpError,
  StdioTransport,
  type TextContent,
  type TransportClosed,
} from '../../src/core';
import { ROOT, allHandlers, closeAll, connect, eventually, rawServer } from '../helpers/servers';

const text = (block: unknown) => (block as TextContent).text;
const received = (method: string) => (e: { source: string; message: string }) =>
  e.source === 'stderr' && e.message.startsWith('RECEIVED') && e.message.includes(`"method":"${method}"`);

describe('fault servers: nothing is lost', function () {
  this.timeout(20_000);
  afterEach(closeAll);

  it('rejects a pending request with -32000 within 100 ms when the server crashes mid-request', async () => {
    const t = await connect(rawServer('crash'));
    let crashedAt = 0;
    t.transport.onDidClose(() => (crashedAt = Date.now()));
    const error = await t.client.callTool('work', {}).then(
      () => assert.fail('expected a rejection'),
      (e: McpError) => e,
    );
    const rejectedAt = Date.now();
    assert.equal(error.code, ErrorCode.ConnectionClosed);
    assert.match(error.message, /exited with code 3/);
    assert.match(error.message, /crashing in the middle/);
    assert.ok(crashedAt > 0 && rejectedAt - crashedAt < 100, `rejected ${rejectedAt - crashedAt} ms after the exit`);
    await assert.rejects(t.client.ping(), (e: McpError) => e.code === ErrorCode.ConnectionClosed);
  });

  it('says how the channel closed: lost when the server crashes, stopped on close, failed when it cannot start', async () => {
    const crashed = await connect(rawServer('crash'));
    const lost = new Promise<TransportClosed>((resolve) => crashed.transport.onDidClose(resolve));
    await crashed.client.callTool('work', {}).catch(() => undefined);
    assert.equal((await lost).kind, 'lost');

    const hung = await connect(rawServer('hang'));
    const stopped = new Promise<TransportClosed>((resolve) => hung.transport.onDidClose(resolve));
    await hung.client.close();
    assert.deepEqual(await stopped, { kind: 'stopped', reason: 'server exited with code 0' });

    const missing = new StdioTransport({ command: 'mcp-host-no-such-command' });
    const failed = new Promise<TransportClosed>((resolve) => missing.onDidClose(resolve));
    await assert.rejects(missing.start(), (e: McpError) => e.code === ErrorCode.ConnectionClosed);
    assert.equal((await failed).kind, 'failed');
  });

  it('takes a malformed result from the server as its internal error (-32603), not as invalid params', async () => {
    const t = await connect(rawServer('malformed-results'));
    await assert.rejects(
      t.client.callTool('work', {}),
      (e: McpError) => e.code === ErrorCode.InternalError && /no content array/.test(e.message),
    );
    await assert.rejects(t.client.listTools(), (e: McpError) => e.code === ErrorCode.InternalError && /no 'tools' array/.test(e.message));
  });

  it('times out a hung request with -32001 and tells the server with notifications/cancelled', async () => {
    const t = await connect(rawServer('hang'));
    await assert.rejects(t.client.callTool('work', {}, { timeoutMs: 300 }), (e: McpError) => {
      assert.equal(e.code, ErrorCode.RequestTimeout);
      assert.match(e.message, /timed out after 300 ms: tools\/call/);
      return true;
    });
    const call = await t.waitForLog(received('tools/call'));
    const id = JSON.parse(call.message.slice('RECEIVED '.length)).id;
    const cancel = await t.waitForLog(received('notifications/cancelled'));
    const params = JSON.parse(cancel.message.slice('RECEIVED '.length)).params;
    assert.equal(params.requestId, id);
    assert.match(params.reason, /timed out/);
    assert.deepEqual(await t.client.ping(), {}, 'the connection lives on');
  });

  it('times out each of several hung requests by its own timeout, a shorter one sent after a longer one first', async () => {
    // One connection timer watches every deadline: a later request due sooner must move it, and the
    // requests still waiting must be watched again after it fired.
    const t = await connect(rawServer('hang'));
    const settled: string[] = [];
    const watch = (name: string, call: Promise<unknown>) =>
      call.then(
        () => assert.fail(`${name} was answered`),
        (e: McpError) => {
          settled.push(name);
          return e;
        },
      );
    const long = watch('long', t.client.callTool('work', {}, { timeoutMs: 1500 }));
    const middle = watch('middle', t.client.callTool('work', {}, { timeoutMs: 800 }));
    const short = watch('short', t.client.callTool('work', {}, { timeoutMs: 200 }));
    const errors = await Promise.all([long, middle, short]);
    assert.deepEqual(settled, ['short', 'middle', 'long']);
    assert.deepEqual(
      errors.map((e) => [e.code, /timed out after (\d+) ms/.exec(e.message)?.[1]]),
      [
        [ErrorCode.RequestTimeout, '1500'],
        [ErrorCode.RequestTimeout, '800'],
        [ErrorCode.RequestTimeout, '200'],
      ],
    );
    assert.deepEqual(t.client.connectionStats?.pendingRequests, 0);
    assert.deepEqual(await t.client.ping(), {}, 'the connection lives on');
  });

  it('resets the timeout on progress only when asked, capped by a hard maximum', async () => {
    const t = await connect(rawServer('slow-progress'));
    const progress: number[] = [];
    const onProgress = (p: { progress: number }) => progress.push(p.progress);
    // Six steps of 100 ms outlast a 250 ms timeout unless progress resets it.
    const { result } = await t.client.callTool('work', { size: 6 }, { timeoutMs: 250, resetTimeoutOnProgress: true, onProgress });
    assert.equal(text(result.content[0]), 'done after 6 steps');
    assert.deepEqual(progress, [1, 2, 3, 4, 5, 6]);
    await assert.rejects(
      t.client.callTool('work', { size: 6 }, { timeoutMs: 250, onProgress }),
      (e: McpError) => e.code === ErrorCode.RequestTimeout,
    );
    await assert.rejects(
      t.client.callTool('work', { size: 6 }, { timeoutMs: 250, resetTimeoutOnProgress: true, maxTotalTimeoutMs: 400, onProgress }),
      (e: McpError) => e.code === ErrorCode.RequestTimeout && /maximum of 400 ms/.test(e.message),
    );
  });

  it('skips garbage lines, invalid messages and stray responses and keeps working', async () => {
    const t = await connect(rawServer('garbage'));
    const tools = await t.client.listTools();
    assert.deepEqual(
      tools.map((x) => x.name),
      ['work'],
    );
    const warnings = t.logs.filter((l) => l.source === 'protocol').map((l) => l.message);
    assert.ok(
      warnings.some((w) => w.startsWith('-32700') && w.includes('this is not json')),
      'parse error logged',
    );
    assert.ok(
      warnings.some((w) => w.startsWith('-32700') && w.includes('"truncated"')),
      'truncated line logged',
    );
    assert.ok(
      warnings.some((w) => w.startsWith('-32600') && w.includes('batches')),
      'batch refused',
    );
    assert.ok(
      warnings.some((w) => w.startsWith('-32600') && w.includes('method must be a string')),
      'bad method logged',
    );
    assert.ok(
      warnings.some((w) => w.includes('unknown id 987654')),
      'stray response logged',
    );
    const { result } = await t.client.callTool('work', { size: 5 });
    assert.equal(text(result.content[0]), 'done 5');
  });

  it('drops a response with the wrong id: the request times out and the connection lives on', async () => {
    const t = await connect(rawServer('wrong-id'));
    await assert.rejects(t.client.callTool('work', {}, { timeoutMs: 300 }), (e: McpError) => e.code === ErrorCode.RequestTimeout);
    assert.ok(t.logs.some((l) => /unknown id ".*-not-yours"/.test(l.message)));
    assert.deepEqual(await t.client.ping(), {});
  });

  it('logs and traces an error response with id null, which settles none of our requests', async () => {
    const t = await connect(rawServer('null-id-error'));
    // The server writes it once it reads notifications/initialized, the last thing connect() sends: nothing of it has been read yet.
    const traced: unknown[] = [];
    t.client.onTrace((e) => e.direction === 'in' && traced.push(e.message));
    const warning = await t.waitForLog((l) => l.source === 'protocol' && l.message.includes('id null'));
    assert.equal(warning.level, 'warning');
    assert.match(warning.message, /-32700.*could not read your request/);
    assert.ok(
      traced.some((m) => (m as { id?: unknown }).id === null && (m as { error?: { code?: number } }).error?.code === -32700),
      'the trace shows it',
    );
    assert.deepEqual(await t.client.ping(), {}, 'the connection lives on');
  });

  it('fails our request on a response that carries both result and error', async () => {
    const t = await connect(rawServer('bad-response'));
    await assert.rejects(
      t.client.callTool('work', {}),
      (e: McpError) => e.code === ErrorCode.InvalidRequest && /exactly one of result and error/.test(e.message),
    );
    assert.deepEqual(await t.client.ping(), {});
  });

  it('receives a 10 MB message whole', async () => {
    const t = await connect(rawServer('big'));
    const size = 10 * 1024 * 1024;
    const { result } = await t.client.callTool('work', { size });
    assert.equal(text(result.content[0]).length, size);
  });

  it('drops a message over the size limit with a clear error and keeps the connection', async () => {
    const t = await connect(rawServer('big', { maxMessageBytes: 1024 * 1024 }));
    await assert.rejects(
      t.client.callTool('work', { size: 2 * 1024 * 1024 }, { timeoutMs: 1500 }),
      (e: McpError) => e.code === ErrorCode.RequestTimeout,
    );
    assert.ok(t.logs.some((l) => /exceeds the limit of 1048576 bytes/.test(l.message)));
    const { result } = await t.client.callTool('work', { size: 10 });
    assert.equal(text(result.content[0]).length, 10);
  });

  it('keeps a bounded piece of a 40 MiB stderr line without a newline and says how much it dropped', async () => {
    const transport = new StdioTransport({ ...rawServer('stderr-flood'), shutdownGraceMs: 500 });
    const lines: string[] = [];
    transport.onLog((e) => e.source === 'stderr' && lines.push(e.message));
    await transport.start();
    const flood = 40 * 1024 * 1024 + 'END OF FLOOD'.length;
    let largestKept = 0;
    try {
      for (const deadline = Date.now() + 60_000; ;) {
        const { kept, droppedBytes } = transport.pendingStderr;
        largestKept = Math.max(largestKept, kept);
        if (kept + droppedBytes === flood) break;
        assert.ok(Date.now() < deadline, `only ${kept + droppedBytes} of ${flood} bytes arrived`);
        await new Promise((r) => setTimeout(r, 20));
      }
    } finally {
      await transport.close();
    }
    assert.ok(largestKept <= MAX_STDERR_LINE, `kept ${largestKept} characters of an unfinished line`);
    // The exit flushes the unfinished line: its head, and a count of the rest.
    assert.equal(lines.length, 1, `${lines.length} stderr lines`);
    assert.ok(lines[0].length < MAX_STDERR_LINE + 100, `a stderr line of ${lines[0].length} characters`);
    assert.ok(lines[0].startsWith('xxxx'));
    assert.ok(lines[0].endsWith(` (… ${flood - MAX_STDERR_LINE} bytes dropped)`), lines[0].slice(-60));
    assert.ok(transport.recentStderr.every((l) => l.length < MAX_STDERR_LINE + 100));
  });

  it('reassembles a response written byte by byte, UTF-8 included', async () => {
    const t = await connect(rawServer('bytewise'));
    const { result } = await t.client.callTool('work', {});
    assert.equal(text(result.content[0]), 'héllo wörld ✓ 😀');
  });

  it('accepts \\r\\n line endings', async () => {
    const t = await connect(rawServer('crlf'));
    const { result } = await t.client.callTool('work', {});
    assert.equal(text(result.content[0]), 'crlf');
  });

  it('fails connect clearly when the server exits at once, with its stderr', async () => {
    await assert.rejects(connect(rawServer('exit-at-once')), (e: McpError) => {
      assert.equal(e.code, ErrorCode.ConnectionClosed);
      assert.match(e.message, /exited with code 7/);
      assert.match(e.message, /refuses to start/);
      return true;
    });
  });

  it('fails connect clearly when the command does not exist', async () => {
    await assert.rejects(connect({ command: 'mcp-host-no-such-command-xyz' }), (e: McpError) => {
      assert.equal(e.code, ErrorCode.ConnectionClosed);
      assert.match(e.message, /Command not found: mcp-host-no-such-command-xyz/);
      assert.match(
        e.message,
        /Check that it is installed and on the PATH the server is started with: \S/,
        'says what to check, and the PATH it was looked up on',
      );
      return true;
    });
  });

  it('refuses a protocol version it does not speak', async () => {
    await assert.rejects(connect(rawServer('bad-version')), (e: McpError) => {
      assert.match(e.message, /"1999-01-01"/);
      assert.match(e.message, /2025-11-25, 2025-06-18, 2025-03-26, 2024-11-05/);
      return true;
    });
  });

  it('accepts an older protocol version the server picks', async () => {
    const t = await connect(rawServer('old-version'));
    assert.equal(t.client.protocolVersion, '2024-11-05');
  });

  it('answers server requests: ping {}, unknown -32601, invalid -32600, roots', async () => {
    const t = await connect(rawServer('peer-requests'), { handlers: allHandlers() });
    const response = async (id: string) => {
      const line = await t.waitForLog((e) => e.message.startsWith('RECEIVED') && e.message.includes(`"id":"${id}"`));
      return JSON.parse(line.message.slice('RECEIVED '.length));
    };
    assert.deepEqual(await response('srv-ping'), { jsonrpc: '2.0', id: 'srv-ping', result: {} });
    assert.equal((await response('srv-unknown')).error.code, ErrorCode.MethodNotFound);
    assert.equal((await response('srv-bad')).error.code, ErrorCode.InvalidRequest);
    assert.equal((await response('srv-old')).error.code, ErrorCode.InvalidRequest);
    assert.deepEqual((await response('srv-roots')).result, { roots: [{ uri: 'file:///tmp/mcp-host-test-root', name: 'Test Root' }] });
  });

  it('sends the -32600 refusal of an invalid server request through the traced path', async () => {
    const transport = new StdioTransport({ shutdownGraceMs: 500, ...rawServer('peer-requests') });
    const client = new McpClient(transport, { requestTimeoutMs: 20_000, handlers: allHandlers() });
    const out: Array<{ id?: unknown; error?: { code: number } }> = [];
    client.onTrace((event) => {
      if (event.direction === 'out') out.push(event.message as { id?: unknown; error?: { code: number } });
    });
    try {
      await client.connect();
      await eventually(async () => (out.some((m) => m.id === 'srv-old') ? true : undefined));
      assert.equal(out.find((m) => m.id === 'srv-bad')?.error?.code, ErrorCode.InvalidRequest);
      assert.equal(out.find((m) => m.id === 'srv-old')?.error?.code, ErrorCode.InvalidRequest);
    } finally {
      await client.close();
    }
  });

  it('rejects a request at once, and keeps nothing of it, when its message cannot be sent', async () => {
    // The hang server never answers tools/call: only the failed send can end this call.
    const t = await connect(rawServer('hang'));
    await assert.rejects(t.client.callTool('work', { size: 10n }), (e: unknown) => {
      assert.ok(e instanceof McpError, `rejected with ${String(e)}`);
      assert.equal(e.code, ErrorCode.InternalError);
      assert.match(e.message, /Could not send tools\/call/);
      return true;
    });
    assert.equal(t.client.connectionStats?.pendingRequests, 0);
    assert.deepEqual(await t.client.ping(), {}, 'the connection lives on');
  });

  it('aborts the host handler named by notifications/cancelled and sends no response', async () => {
    let aborted: unknown;
    const t = await connect(rawServer('cancel-peer-request'), {
      handlers: allHandlers({
        createMessage: (_params, signal) =>
          new Promise((_resolve, reject) =>
            signal.addEventListener('abort', () => {
              aborted = signal.reason;
              reject(signal.reason);
            }),
          ),
      }),
    });
    await t.waitForLog((e) => e.message.startsWith('RECEIVED') && e.message.includes('"id":"srv-after"'));
    assert.ok(aborted instanceof McpError && /Cancelled by the server/.test(aborted.message));
    const answers = t.logs.filter((l) => l.message.startsWith('RECEIVED') && l.message.includes('"id":"srv-sample"'));
    assert.deepEqual(answers, [], 'no response to a cancelled request');
  });

  it('tells a handler still running when we close the connection that it closed, not that the server cancelled', async () => {
    let aborted: unknown;
    let started!: () => void;
    const handlerStarted = new Promise<void>((resolve) => (started = resolve));
    // The server would cancel only after 30 s: the close comes first.
    const t = await connect(
      { ...rawServer('cancel-peer-request'), args: [...rawServer('cancel-peer-request').args!, '30000'] },
      {
        handlers: allHandlers({
          createMessage: (_params, signal) =>
            new Promise((_resolve, reject) => {
              started();
              signal.addEventListener('abort', () => {
                aborted = signal.reason;
                reject(signal.reason);
              });
            }),
        }),
      },
    );
    await handlerStarted;
    await t.client.close();
    assert.ok(aborted instanceof McpError, `aborted with ${String(aborted)}`);
    assert.equal(aborted.code, ErrorCode.ConnectionClosed);
    assert.doesNotMatch(aborted.message, /by the server/);
    assert.match(aborted.message, /closed by the client/);
  });

  it('logs which server request went unanswered when the answer could not be sent', async () => {
    const t = await connect(rawServer('deaf'));
    const line = await t.waitForLog(
      (e) => e.source === 'protocol' && e.message.includes(`could not answer the server's request "srv-deaf-1"`),
    );
    assert.equal(line.level, 'warning');
  });

  it('fails a request whose write finds the server gone (EPIPE) with Connection Closed, as one written after the pipe closed', async () => {
    // The deaf server closes its stdin, then sends a ping: a request written as it arrives meets the closed pipe.
    const t = await connect(rawServer('deaf'));
    const failed = new Promise<unknown>((resolve) => {
      t.client.onTrace((event) => {
        if (event.direction === 'in' && (event.message as { id?: unknown }).id === 'srv-deaf-1')
          t.client.ping().then(() => resolve(undefined), resolve);
      });
    });
    const error = await failed;
    assert.ok(error instanceof McpError, `rejected with ${String(error)}`);
    assert.equal(error.code, ErrorCode.ConnectionClosed, error.message);
    assert.match(error.message, /EPIPE/);
  });

  it('refuses roots/list with -32601 when the host gave no roots handler', async () => {
    const t = await connect(rawServer('peer-requests'), { handlers: {} });
    const line = await t.waitForLog((e) => e.message.startsWith('RECEIVED') && e.message.includes('"id":"srv-roots"'));
    assert.equal(JSON.parse(line.message.slice('RECEIVED '.length)).error.code, ErrorCode.MethodNotFound);
    const init = await t.waitForLog(received('initialize'));
    assert.deepEqual(JSON.parse(init.message.slice('RECEIVED '.length)).params.capabilities, {});
  });

  it('fails an undeclared capability locally with -32002 and sends nothing', async () => {
    const t = await connect(rawServer('tools-only'));
    for (const call of [
      () => t.client.listPrompts(),
      () => t.client.listResources(),
      () => t.client.readResource('x://y'),
      () => t.client.subscribeResource('x://y'),
      () => t.client.complete({ ref: { type: 'ref/prompt', name: 'p' }, argument: { name: 'a', value: '' } }),
      () => t.client.setLoggingLevel('info'),
    ]) {
      await assert.rejects(call(), (e: McpError) => e.code === ErrorCode.CapabilityDisabled);
    }
    await t.client.ping();
    await t.waitForLog(received('ping'));
    const methods = t.logs.filter((l) => l.message.startsWith('RECEIVED')).map((l) => JSON.parse(l.message.slice(9)).method);
    assert.deepEqual(methods, ['initialize', 'notifications/initialized', 'ping']);
  });

  it("names a server's -32002 on resources/read Resource not found, and our own refusal Capability disabled", async () => {
    const t = await connect(rawServer('resource-metadata'));
    const remote = await t.client.readResource('fixture://missing').then(
      () => assert.fail('expected a rejection'),
      (e: McpError) => e,
    );
    assert.equal(remote.code, ErrorCode.ResourceNotFound);
    assert.ok(remote.isResourceNotFound);
    // The server's message is the code's own name, which toString does not repeat.
    assert.equal(remote.toString(), 'Resource not found (-32002)');
    assert.deepEqual(remote.data, { uri: 'fixture://missing' });
    const toolsOnly = await connect(rawServer('tools-only'));
    const local = await toolsOnly.client.readResource('fixture://missing').then(
      () => assert.fail('expected a rejection'),
      (e: McpError) => e,
    );
    assert.equal(local.code, ErrorCode.CapabilityDisabled);
    assert.ok(!local.isResourceNotFound);
    assert.match(local.toString(), /^Capability disabled \(-32002\): The server did not declare the 'resources' capability/);
  });

  it('follows nextCursor to the end, and stops on a repeated cursor', async () => {
    const paged = await connect(rawServer('paging'));
    assert.deepEqual(
      (await paged.client.listTools()).map((x) => x.name),
      ['tool-0', 'tool-1', 'tool-2', 'tool-3', 'tool-4', 'tool-5'],
    );
    const looping = await connect(rawServer('loop-cursor'));
    await assert.rejects(looping.client.listTools(), /repeated the tools\/list cursor "same"/);
  });

  it('stops paging after 1,000 pages, naming the method', async () => {
    const endless = await connect(rawServer('endless-pages'));
    const error = await endless.client.listTools().then(
      () => assert.fail('expected a rejection'),
      (e: McpError) => e,
    );
    assert.equal(error.message, `tools/list returned more than ${MAX_LIST_PAGES} pages; stopped paging`);
    assert.deepEqual(error.data, { method: 'tools/list', limit: MAX_LIST_PAGES });
  });

  it('stops paging once the pages hold more than 64 MB together, though each page is within the message limit', async () => {
    // Pages of 5 MB: the 13th passes 64 MB.
    const large = await connect(
      rawServer('endless-pages', {
        args: [path.join(ROOT, 'test', 'fixtures', 'raw-server.mjs'), 'endless-pages', String(5 * 1024 * 1024)],
      }),
    );
    const error = await large.client.listTools().then(
      () => assert.fail('expected a rejection'),
      (e: McpError) => e,
    );
    assert.equal(error.message, `tools/list returned more than ${MAX_LIST_BYTES} bytes of tools over 13 pages; stopped paging`);
  });

  it('stops a server that ignores stdin and SIGTERM, and its children, with SIGKILL', async () => {
    const transport = new StdioTransport({ ...rawServer('stubborn'), shutdownGraceMs: 200 });
    const client = new McpClient(transport, {});
    const lines: string[] = [];
    client.onLog((e) => lines.push(e.message));
    await client.connect();
    const grandchild = Number(lines.find((l) => l.startsWith('GRANDCHILD'))?.split(' ')[1] ?? (await waitForLine(lines, 'GRANDCHILD')));
    await client.close();
    assert.ok(lines.some((l) => l.includes('sending SIGTERM')));
    assert.ok(lines.some((l) => l.includes('sending SIGKILL')));
    assert.ok(lines.some((l) => l.includes('killed by SIGKILL')));
    assert.throws(() => process.kill(transport.pid!, 0), /ESRCH/);
    await waitUntilGone(grandchild);
  });
});

async function waitForLine(lines: string[], prefix: string): Promise<string> {
  for (let i = 0; i < 100; i++) {
    const line = lines.find((l) => l.startsWith(prefix));
    if (line) return line.split(' ')[1];
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`no ${prefix} line`);
}

async function waitUntilGone(pid: number): Promise<void> {
  for (let i = 0; i < 100; i++) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.fail(`process ${pid} still runs`);
}
