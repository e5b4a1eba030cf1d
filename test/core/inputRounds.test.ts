import { strict as assert } from 'node:assert';
import {
  McpError,
  REQUEST_CANCELLED,
  type ClientHandlers,
  type ElicitRequestParams,
  type ElicitResult,
  type McpClientOptions,
  type TextContent,
  type TraceEvent,
} from '../../src/core';
import { MAX_INPUT_REQUESTS_PER_ROUND, answerInputRequests } from '../../src/core/client/inputRequests';
import { closeAll, connect, v2StdioServer } from '../helpers/servers';

// Multi-round-trip requests (2026-07-28 `input_required`) beyond era.test.ts: failures inside a
// round, declines, URL-mode elicitation without elicitationId, the default round cap.

type WireMessage = { id?: unknown; method?: string; params?: Record<string, unknown> };
const text = (result: { content: unknown[] }) => (result.content[0] as TextContent).text;

async function connectModern(handlers: ClientHandlers, options: McpClientOptions = {}) {
  const t = await connect(v2StdioServer(), { protocol: 'auto', probeTimeoutMs: 3000, handlers, ...options });
  assert.equal(t.client.era, 'modern');
  const trace: TraceEvent[] = [];
  t.client.onTrace((e) => trace.push(e));
  const calls = () =>
    trace.filter((e) => e.direction === 'out' && (e.message as WireMessage).method === 'tools/call').map((e) => e.message as WireMessage);
  return { ...t, calls };
}

describe('multi-round-trip requests: failures, declines, URL elicitation, the cap', function () {
  this.timeout(30_000);
  afterEach(closeAll);

  it('fails the whole call when a handler throws in a round, names the input request, and sends no further round', async () => {
    const asked: string[] = [];
    const t = await connectModern({
      listRoots: () => {
        asked.push('roots');
        return [];
      },
      elicit: async (params) => {
        asked.push(`elicit ${params.message}`);
        return { action: 'accept', content: { name: 'Ada' } };
      },
      createMessage: async () => {
        asked.push('sampling');
        throw new McpError(-1, 'The person refused the sampling request');
      },
    });
    await assert.rejects(t.client.callTool('interview', {}), (e: McpError) => {
      assert.equal(e.code, -1, 'the handler’s own code is kept');
      assert.match(e.message, /The person refused the sampling request/);
      assert.match(e.message, /tools\/call/);
      assert.match(e.message, /'poem'/);
      assert.match(e.message, /sampling\/createMessage/);
      return true;
    });
    assert.deepEqual(asked, ['elicit Your name?', 'sampling'], 'the roots after the failed request are not asked for');
    assert.equal(t.calls().length, 1, 'no round after the failure');
  });

  it('wraps an unexpected exception of a handler the same way', async () => {
    const t = await connectModern({
      listRoots: () => {
        throw new TypeError('no folders today');
      },
      elicit: async () => ({ action: 'accept', content: { name: 'Ada' } }),
      createMessage: async () => ({ role: 'assistant', content: { type: 'text', text: 'roses' }, model: 'm' }),
    });
    await assert.rejects(t.client.callTool('interview', {}), /'roots'.*roots\/list.*no folders today/);
    assert.equal(t.calls().length, 1);
  });

  it('sends a declined elicitation to the server as an answer: the server decides, and the rounds go on', async () => {
    const t = await connectModern({
      listRoots: () => [{ uri: 'file:///w', name: 'w' }],
      elicit: async (): Promise<ElicitResult> => ({ action: 'decline' }),
      createMessage: async () => ({ role: 'assistant', content: { type: 'text', text: 'roses' }, model: 'm' }),
    });
    const { result } = await t.client.callTool('interview', {});
    assert.match(text(result), /poem=roses roots=file:\/\/\/w confirm=decline$/);
    const rounds = t.calls();
    assert.equal(rounds.length, 3);
    assert.deepEqual((rounds[1].params?.inputResponses as Record<string, unknown>).name, { action: 'decline' });
  });

  it('hands a URL-mode elicitation of a round to elicit as it came, without elicitationId, -32042 or a wait for completion', async () => {
    const seen: ElicitRequestParams[] = [];
    let urlElicitationRequired = 0;
    const t = await connectModern({
      elicitationModes: ['form', 'url'],
      elicit: async (params) => {
        seen.push(params);
        return { action: 'accept' };
      },
      urlElicitationRequired: async () => {
        urlElicitationRequired++;
        return 'stop';
      },
    });
    const { result } = await t.client.callTool('visit', {});
    assert.equal(text(result), 'page accept');
    assert.equal(seen.length, 1);
    assert.equal(seen[0].mode, 'url');
    assert.equal(seen[0].url, 'https://example.test/sign-in');
    assert.equal(seen[0].message, 'Sign in, please');
    assert.equal(seen[0].elicitationId, undefined);
    assert.equal(urlElicitationRequired, 0, 'no -32042 path');
    const rounds = t.calls();
    assert.equal(rounds.length, 2);
    assert.deepEqual(rounds[1].params?.inputResponses, { page: { action: 'accept' } });
  });

  it('stops at the default cap of 8 rounds', async () => {
    const t = await connectModern({ elicit: async () => ({ action: 'accept', content: {} }) });
    await assert.rejects(t.client.callTool('insist', {}), /still asked for input after 8 rounds of tools\/call/);
    assert.equal(t.calls().length, 9, 'the first request and 8 answered rounds');
  });

  it('rejects at once when the call is cancelled during a round, even if the handler never answers, and sends no round', async () => {
    const controller = new AbortController();
    let elicited = 0;
    let handlerSignal: AbortSignal | undefined;
    const t = await connectModern({
      elicit: (_params, signal) => {
        elicited++;
        handlerSignal = signal;
        setTimeout(() => controller.abort(), 50);
        return new Promise<ElicitResult>(() => undefined);
      },
    });
    await assert.rejects(t.client.callTool('insist', {}, { signal: controller.signal }), (e: McpError) => e.code === REQUEST_CANCELLED);
    assert.equal(handlerSignal?.aborted, true, 'the handler was told');
    assert.equal(elicited, 1);
    assert.equal(t.calls().length, 1, 'no round after the cancel');
  });

  it('refuses a round that asks for more inputs than a person can be asked at once, before asking any', async () => {
    let asked = 0;
    const elicit = async (): Promise<ElicitResult> => {
      asked++;
      return { action: 'accept', content: {} };
    };
    const many = (n: number) =>
      Object.fromEntries(
        Array.from({ length: n }, (_, i) => [
          `q${i}`,
          { method: 'elicitation/create', params: { message: `Question ${i}?`, requestedSchema: { type: 'object', properties: {} } } },
        ]),
      );
    await assert.rejects(
      answerInputRequests(many(MAX_INPUT_REQUESTS_PER_ROUND + 1), { elicit }, new AbortController().signal, "tools/call 'flood'"),
      (e: McpError) => {
        assert.match(e.message, /tools\/call 'flood': the server asked for 17 inputs in one round; MCP Host answers at most 16/);
        return true;
      },
    );
    assert.equal(asked, 0);
    const answered = await answerInputRequests(many(MAX_INPUT_REQUESTS_PER_ROUND), { elicit }, new AbortController().signal);
    assert.equal(Object.keys(answered).length, MAX_INPUT_REQUESTS_PER_ROUND);
  });
});
