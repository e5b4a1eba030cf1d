import { strict as assert } from 'node:assert';
import { ErrorCode, McpError, type AuditEntry, type CreateMessageParams, type UnhandledRequest } from '../../src/core';
import { createMasker, describeFindings } from '../../src/core/scan/mask';
import { elicitationSummary, maskSamplingRequest, samplingSummary, startServerRequest } from '../../src/core/policy/serverRequests';
import { closeAll, connect, eventually, rawServer } from '../helpers/servers';

describe('server requests we do not handle are reported', function () {
  this.timeout(20_000);
  afterEach(closeAll);

  it('tells the host of each request it refused for want of a handler: method, params size, the refusal sent', async () => {
    const refused: UnhandledRequest[] = [];
    // sample-with-context sends sampling/createMessage although sampling was never declared.
    const t = await connect(rawServer('sample-with-context'), { handlers: { unhandledRequest: (r) => refused.push(r) } });
    const report = await eventually(async () => refused.find((r) => r.method === 'sampling/createMessage'));
    assert.equal(report.refusal.code, ErrorCode.MethodNotFound);
    assert.match(report.refusal.message, /sampling\/createMessage/);
    assert.ok(report.paramsBytes > 50, `${report.paramsBytes} bytes`);
    // The refusal the host was told of is the one the server got.
    const line = await t.waitForLog((e) => e.message.startsWith('RECEIVED') && e.message.includes('"id":"srv-context"'));
    assert.deepEqual(JSON.parse(line.message.slice('RECEIVED '.length)).error, {
      code: report.refusal.code,
      message: report.refusal.message,
    });
  });

  it('does not report the requests it answers (ping, and the handled ones)', async () => {
    const refused: UnhandledRequest[] = [];
    const t = await connect(rawServer('peer-requests'), {
      handlers: { listRoots: () => [], unhandledRequest: (r) => refused.push(r) },
    });
    // The fixture sends srv-roots after srv-unknown: once roots/list is answered, the unknown one was refused.
    await t.waitForLog((e) => e.message.startsWith('RECEIVED') && e.message.includes('"id":"srv-roots"'));
    assert.deepEqual(
      refused.map((r) => r.method),
      ['no/such/method'],
    );
    assert.equal(refused[0].paramsBytes, 2);
  });
});

describe('what a server asks of us, as the audit and a model see it', () => {
  const { masker } = createMasker();
  const AWS = 'AKIAIOSFODNN7EXAMPLE';
  const GH = `ghp_${'a1B2'.repeat(9)}`;
  const PNG = Buffer.from('not really a png, AKIAIOSFODNN7EXAMPLE').toString('base64');

  it('masks every text a model reads: system prompt, text, tool calls and their results; keeps media and ids', () => {
    const params: CreateMessageParams = {
      systemPrompt: `deploy with ${AWS}`,
      maxTokens: 100,
      messages: [
        { role: 'user', content: { type: 'text', text: `my token is ${GH}` } },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'call-ghp', name: 'login', input: { password: 'hunter2', user: 'me' } }] },
        {
          role: 'user',
          content: [
            { type: 'tool_result', toolUseId: 'call-ghp', content: [{ type: 'text', text: `key=${AWS}` }] },
            { type: 'image', mimeType: 'image/png', data: PNG },
          ],
        },
      ],
    };
    const before = JSON.stringify(params);
    const { request, found } = maskSamplingRequest(params, masker);
    assert.equal(JSON.stringify(params), before, 'the request itself is not changed');
    assert.equal(request.systemPrompt, 'deploy with [masked: aws-access-key]');
    assert.deepEqual(request.messages[0].content, { type: 'text', text: 'my token is [masked: github-token]' });
    assert.deepEqual(request.messages[1].content, [
      { type: 'tool_use', id: 'call-ghp', name: 'login', input: { password: '[masked: password]', user: 'me' } },
    ]);
    const [result, image] = request.messages[2].content as Array<Record<string, unknown>>;
    assert.deepEqual(result, {
      type: 'tool_result',
      toolUseId: 'call-ghp',
      content: [{ type: 'text', text: 'key=[masked: aws-access-key]' }],
    });
    assert.equal(image.data, PNG, 'media bytes are not text');
    assert.equal(describeFindings(found), '2 × aws-access-key, 1 × github-token, 1 × password');
  });

  it('masks a request nested 3,000 deep without overflowing the stack', () => {
    let deep: unknown = { type: 'text', text: `deep ${GH}` };
    for (let i = 0; i < 3000; i++) deep = { type: 'tool_result', toolUseId: 'x', content: [deep] };
    const params = { maxTokens: 5, messages: [{ role: 'user', content: deep }] } as unknown as CreateMessageParams;
    const { request, found } = maskSamplingRequest(params, masker);
    let inner = request.messages[0].content as unknown as { content: unknown[]; text?: string };
    for (let i = 0; i < 3000; i++) inner = inner.content[0] as typeof inner;
    assert.equal(inner.text, 'deep [masked: github-token]');
    assert.equal(describeFindings(found), '1 × github-token');
  });

  it('finds nothing in a request without secrets, and changes nothing', () => {
    const params: CreateMessageParams = {
      maxTokens: 5,
      messages: [{ role: 'user', content: { type: 'text', text: 'a/b path, sk is fine' } }],
    };
    const { request, found } = maskSamplingRequest(params, masker);
    assert.deepEqual(request, params);
    assert.deepEqual(found, []);
  });

  it('summarises a request without its text: counts and limits, form fields, a page host', () => {
    assert.deepEqual(
      samplingSummary({
        maxTokens: 9,
        systemPrompt: `s ${AWS}`,
        includeContext: 'thisServer',
        tools: [{ name: 't', inputSchema: { type: 'object' } }],
        messages: [{ role: 'user', content: { type: 'text', text: GH } }],
      }),
      { messages: 1, maxTokens: 9, systemPrompt: true, tools: 1, includeContext: 'thisServer' },
    );
    assert.deepEqual(
      elicitationSummary({
        message: `give me ${GH}`,
        requestedSchema: { type: 'object', properties: { name: { type: 'string' }, age: { type: 'number' } } },
      }),
      { fields: ['name', 'age'] },
    );
    assert.deepEqual(elicitationSummary({ mode: 'url', message: 'm', url: 'https://login.example.com/path?token=abc' }), {
      urlHost: 'login.example.com',
    });
    assert.deepEqual(elicitationSummary({ mode: 'url', message: 'm', url: 'not a url' }), { url: 'invalid' });
  });

  it('records one line per request, with the decision and outcome it ended with, once', () => {
    const lines: AuditEntry[] = [];
    let clock = 1_000;
    const server = { name: 's', scope: 'user' as const, definition: 'abc' };
    const r = startServerRequest({ append: (e) => lines.push(e) }, server, 'sampling/createMessage', { messages: 1 }, () => clock);
    r.decision = 'asked-allowed';
    r.name = 'test-echo-large';
    clock = 1_250;
    r.end({ kind: 'ok' });
    r.end({ kind: 'cancelled' });
    assert.deepEqual(lines, [
      {
        time: new Date(1_000).toISOString(),
        origin: 'server',
        server,
        method: 'sampling/createMessage',
        name: 'test-echo-large',
        arguments: { messages: 1 },
        decision: 'asked-allowed',
        outcome: { kind: 'ok' },
        ms: 250,
      },
    ]);
    const failed = startServerRequest({ append: (e) => lines.push(e) }, server, 'roots/list');
    failed.failed(new McpError(-32800, 'Request cancelled'));
    const refused = startServerRequest({ append: (e) => lines.push(e) }, server, 'elicitation/create');
    refused.failed(new McpError(-32602, 'bad'));
    assert.deepEqual(
      lines.slice(1).map((l) => [l.method, l.decision, l.outcome, 'arguments' in l]),
      [
        ['roots/list', 'refused', { kind: 'cancelled' }, false],
        ['elicitation/create', 'refused', { kind: 'error', code: -32602 }, false],
      ],
    );
  });
});
