import { strict as assert } from 'node:assert';
import {
  EraVerdicts,
  ErrorCode,
  HttpTransport,
  REQUEST_CANCELLED,
  McpError,
  MetaKeys,
  ServerHandle,
  StdioTransport,
  headerParamsOf,
  headerValue,
  invalidHeaderAnnotations,
  definitionHash,
  judgeDiscoverError,
  parseServerDefinitions,
  type ClientHandlers,
  type ElicitResult,
  type McpClient,
  type ServerDefinition,
  type StdioServerParams,
  type TextContent,
  type TraceEvent,
  type Transport,
} from '../../src/core';
import { startEverything, startFixture, useFixtures, type Fixture } from '../helpers/httpServers';
import {
  V2_FIXTURE,
  closeAll,
  connect,
  connectTransport,
  eventually,
  everythingServer,
  rawServer,
  v2StdioServer,
} from '../helpers/servers';

const text = (result: { content: unknown[] }) => (result.content[0] as TextContent).text;
type WireMessage = { id?: unknown; method?: string; params?: Record<string, unknown> };
const sent = (trace: TraceEvent[]) => trace.filter((e) => e.direction === 'out').map((e) => e.message as WireMessage);
const methodsSent = (trace: TraceEvent[]) => sent(trace).map((m) => m.method);

function traced(client: McpClient): TraceEvent[] {
  const events: TraceEvent[] = [];
  client.onTrace((e) => events.push(e));
  return events;
}

/** Handlers that answer like a person and a model would, and remember what they were asked. */
function recordingHandlers(asked: string[]): ClientHandlers {
  return {
    listRoots: () => [{ uri: 'file:///work/project', name: 'project' }],
    createMessage: async () => {
      asked.push('sampling');
      return { role: 'assistant', content: { type: 'text', text: 'roses' }, model: 'test-model', stopReason: 'endTurn' };
    },
    elicit: async (params): Promise<ElicitResult> => {
      asked.push(`elicit ${params.message}`);
      return { action: 'accept', content: params.message === 'Your name?' ? { name: 'Ada' } : { sure: true } };
    },
  };
}

describe('protocol era per server (2026-07-28 beside 2025-11-25)', function () {
  this.timeout(30_000);
  afterEach(closeAll);

  describe('over stdio', () => {
    it('speaks 2026-07-28 to a v2 serveStdio server: discover, no initialize, _meta on every request', async () => {
      const t = await connect(v2StdioServer(), { protocol: 'auto', probeTimeoutMs: 3000 });
      const trace = traced(t.client);
      assert.equal(t.client.era, 'modern');
      assert.equal(t.client.protocolVersion, '2026-07-28');
      assert.equal(t.client.serverInfo?.name, 'v2-fixture-stdio');
      const tools = await t.client.listTools();
      assert.ok(tools.some((tool) => tool.name === 'echo'));
      const { result } = await t.client.callTool('echo', { text: 'hi' });
      assert.equal(text(result), 'echo: hi');
      const out = sent(trace);
      assert.ok(out.length >= 2);
      for (const message of out) {
        const meta = message.params?._meta as Record<string, unknown>;
        assert.equal(meta[MetaKeys.protocolVersion], '2026-07-28', JSON.stringify(message));
        assert.ok(meta[MetaKeys.clientCapabilities] && typeof meta[MetaKeys.clientCapabilities] === 'object');
        assert.equal((meta[MetaKeys.clientInfo] as { name: string }).name, 'mcp-host');
      }
      await assert.rejects(t.client.ping(), (e: McpError) => e.code === ErrorCode.CapabilityDisabled);
    });

    it('speaks 2025-11-25 to the same server when the definition says so', async () => {
      const t = await connect(v2StdioServer(), { protocol: '2025-11-25' });
      assert.equal(t.client.era, 'legacy');
      assert.equal(t.client.protocolVersion, '2025-11-25');
      assert.equal(text((await t.client.callTool('echo', { text: 'old' })).result), 'echo: old');
    });

    it('falls back to initialize for server-everything, which answers the probe with an error', async () => {
      const t = await connect(everythingServer(), { protocol: 'auto', probeTimeoutMs: 3000 });
      assert.equal(t.client.era, 'legacy');
      assert.equal(t.client.protocolVersion, '2025-11-25');
      assert.ok((await t.client.listTools()).length > 0);
      assert.ok(
        t.logs.some((l) => /server\/discover failed with -?\d+.*using initialize/.test(l.message)),
        t.logs.map((l) => l.message).join('\n'),
      );
    });

    it('counts a server that stays silent on the probe as legacy after the probe timeout', async () => {
      const t = await connect(rawServer('mute-before-initialize'), { protocol: 'auto', probeTimeoutMs: 300 });
      assert.equal(t.client.era, 'legacy');
      assert.ok(t.logs.some((l) => /no answer to server\/discover within 300 ms/.test(l.message)));
    });

    it('reports a server that exits on the probe as probeLost, for the caller to start again', async () => {
      await assert.rejects(
        connect(rawServer('exit-before-initialize'), { protocol: 'auto', probeTimeoutMs: 3000 }),
        (e: McpError) => e.kind?.type === 'probeLost',
      );
    });

    it('cancels a stateless request on stdio with notifications/cancelled', async () => {
      const t = await connect(v2StdioServer(), { protocol: 'auto', probeTimeoutMs: 3000 });
      const controller = new AbortController();
      const call = t.client.callTool('wait', {}, { signal: controller.signal });
      setTimeout(() => controller.abort(), 200);
      await assert.rejects(call, (e: McpError) => e.code === REQUEST_CANCELLED);
      await t.waitForLog((l) => l.source === 'stderr' && /CANCELLED/.test(l.message));
    });

    it('insists on 2026-07-28 when told, and fails clearly against a legacy server', async () => {
      await assert.rejects(connect(everythingServer(), { protocol: '2026-07-28' }), /does not speak protocol 2026-07-28/);
    });
  });

  describe('a server handle', () => {
    const handles: ServerHandle[] = [];
    afterEach(async () => {
      await Promise.all(handles.splice(0).map((h) => h.dispose()));
    });

    function handleFor(params: StdioServerParams, entry: Record<string, unknown> = {}): { handle: ServerHandle; trace: TraceEvent[] } {
      const def = parseServerDefinitions({ probe: { command: params.command, args: params.args, ...entry } }, { scope: 'user' })
        .definitions[0];
      const handle = new ServerHandle(def, {
        prepare: async (d: ServerDefinition) => d,
        createTransport: (d) =>
          new StdioTransport({
            command: (d as typeof def & { command: string }).command,
            args: (d as { args: string[] }).args,
            shutdownGraceMs: 500,
          }),
        handlers: () => ({}),
      });
      handles.push(handle);
      const trace: TraceEvent[] = [];
      handle.onTrace((e) => trace.push(e));
      return { handle, trace };
    }

    it('starts a legacy server that exits on the probe again with initialize, and skips the probe from then on', async () => {
      const { handle, trace } = handleFor(rawServer('exit-before-initialize'));
      const lines: string[] = [];
      handle.onLog((e) => lines.push(e.message));
      await handle.start();
      assert.equal(handle.state.kind, 'running');
      assert.equal(handle.client?.era, 'legacy');
      assert.ok(
        lines.some((l) => /starting it again with initialize/.test(l)),
        lines.join('\n'),
      );
      assert.deepEqual(methodsSent(trace).slice(0, 2), ['server/discover', 'initialize']);
      trace.length = 0;
      await handle.restart();
      assert.equal(handle.state.kind, 'running');
      assert.equal(methodsSent(trace)[0], 'initialize');
      assert.ok(!methodsSent(trace).includes('server/discover'));
    });

    it('sends the log level with each stateless request instead of logging/setLevel', async () => {
      const { handle, trace } = handleFor(v2StdioServer(), { logLevel: 'warning' });
      const messages: string[] = [];
      handle.onLogMessage((m) => messages.push(`${m.level} ${String(m.data)}`));
      await handle.start();
      assert.equal(text((await handle.rawClient!.callTool('chatty', {})).result), 'done');
      handle.setLogLevel('debug');
      assert.equal(text((await handle.rawClient!.callTool('chatty', {})).result), 'done');
      const calls = sent(trace).filter((m) => m.method === 'tools/call');
      assert.deepEqual(
        calls.map((c) => (c.params?._meta as Record<string, unknown>)[MetaKeys.logLevel]),
        ['warning', 'debug'],
      );
      assert.deepEqual(messages, ['warning a warning line', 'debug a debug line', 'warning a warning line']);
      assert.ok(!methodsSent(trace).includes('logging/setLevel'));
    });

    it('takes the era from the definition: protocol "2025-11-25" never probes', async () => {
      const { handle, trace } = handleFor(v2StdioServer(), { protocol: '2025-11-25' });
      await handle.start();
      assert.equal(handle.client?.era, 'legacy');
      assert.equal(methodsSent(trace)[0], 'initialize');
    });

    it('lists a v2 server in the stateless era under protocol "auto", without the removed logging/setLevel and resources/subscribe', async () => {
      const { handle, trace } = handleFor(v2StdioServer());
      const lines: string[] = [];
      handle.onLog((e) => lines.push(`${e.level} ${e.message}`));
      await handle.subscribeResource('fixture://hello', async (client) => void (await client.subscribeResource('fixture://hello')));
      await handle.start();
      handle.setLogLevel('debug');
      await handle.refresh('tools');
      assert.ok(!lines.some((l) => /^(warning|error)/.test(l)), lines.join('\n'));
      assert.ok(
        handle.tools.some((t) => t.name === 'bad-header'),
        'header annotations do not matter on stdio',
      );
      assert.ok(!methodsSent(trace).some((m) => m === 'logging/setLevel' || m === 'resources/subscribe'));
      assert.equal(handle.client?.era, 'modern');
      assert.ok(handle.tools.some((t) => t.name === 'interview'));
      assert.ok(handle.prompts.some((p) => p.name === 'greet'));
      assert.ok(handle.resources.some((r) => r.uri === 'fixture://hello'));
    });
  });

  describe('multi-round-trip requests', () => {
    for (const protocol of ['auto', '2025-11-25'] as const) {
      it(`answers elicitation, sampling and roots in one call through the same handlers (${protocol === 'auto' ? 'input_required rounds' : "the SDK's legacy server requests"})`, async () => {
        const asked: string[] = [];
        const t = await connect(v2StdioServer(), { protocol, probeTimeoutMs: 3000, handlers: recordingHandlers(asked) });
        const trace = traced(t.client);
        const { result } = await t.client.callTool('interview', {});
        assert.equal(text(result), 'name=Ada poem=roses roots=file:///work/project confirm=accept');
        assert.deepEqual(asked, ['elicit Your name?', 'sampling', 'elicit Sure?']);
        if (protocol !== 'auto') return;
        const calls = sent(trace).filter((m) => m.method === 'tools/call');
        assert.equal(calls.length, 3);
        assert.equal(new Set(calls.map((c) => c.id)).size, 3, 'each round has a new id');
        assert.equal(calls[0].params?.requestState, undefined);
        assert.equal(calls[0].params?.inputResponses, undefined);
        assert.equal(calls[1].params?.requestState, 'round-2');
        assert.deepEqual(Object.keys(calls[1].params?.inputResponses as object).sort(), ['name', 'poem', 'roots']);
        assert.match(String(calls[2].params?.requestState), /^round-3 /);
        assert.deepEqual(Object.keys(calls[2].params?.inputResponses as object), ['confirm']);
        for (const call of calls) assert.deepEqual(call.params?.arguments, {});
      });
    }

    it('runs the rounds of prompts/get and resources/read too', async () => {
      const asked: string[] = [];
      const t = await connect(v2StdioServer(), { protocol: 'auto', probeTimeoutMs: 3000, handlers: recordingHandlers(asked) });
      const prompt = await t.client.getPrompt('personal');
      assert.equal((prompt.messages[0].content as TextContent).text, 'Hello, Ada');
      const read = await t.client.readResource('fixture://guarded');
      assert.equal((read.contents[0] as { text: string }).text, 'guarded accept asked');
      assert.deepEqual(asked, ['elicit Your name?', 'elicit Sure?']);
    });

    it('stops a server that keeps asking after the round cap', async () => {
      const t = await connect(v2StdioServer(), {
        protocol: 'auto',
        probeTimeoutMs: 3000,
        maxInputRounds: 3,
        handlers: recordingHandlers([]),
      });
      const trace = traced(t.client);
      await assert.rejects(t.client.callTool('insist', {}), /still asked for input after 3 rounds/);
      assert.equal(sent(trace).filter((m) => m.method === 'tools/call').length, 4);
    });

    it("hands on the server's refusal when the host declared none of the capabilities a call needs", async () => {
      const t = await connect(v2StdioServer(), { protocol: 'auto', probeTimeoutMs: 3000, handlers: {} });
      await assert.rejects(t.client.callTool('interview', {}), (e: McpError) => e.code === ErrorCode.MissingRequiredClientCapability);
    });
  });

  describe('over HTTP', () => {
    const start = useFixtures();
    const fixtures: Fixture[] = [];
    afterEach(async () => {
      await Promise.all(fixtures.splice(0).map((f) => f.stop()));
    });
    const startV2 = async (mode: 'http-modern' | 'http-dual') => {
      const f = await startFixture(mode, V2_FIXTURE);
      fixtures.push(f);
      return f;
    };

    for (const mode of ['http-modern', 'http-dual'] as const) {
      it(`speaks 2026-07-28 to a v2 ${mode} server, statelessly, with the standard headers`, async () => {
        const f = await startV2(mode);
        const t = await connectTransport<Transport>(new HttpTransport({ url: f.url }), { protocol: 'auto' });
        assert.equal(t.client.era, 'modern');
        assert.equal(t.client.serverInfo?.name, `v2-fixture-${mode}`);
        const tools = await t.client.listTools();
        assert.equal(text((await t.client.callTool('weather', { region: 'Zürich' })).result), 'sunny in Zürich');
        assert.equal(text((await t.client.callTool('weather', { region: 'north' })).result), 'sunny in north');
        assert.ok(!tools.some((tool) => tool.name === 'bad-header'), 'a tool with an invalid x-mcp-header is dropped');
        assert.ok(t.logs.some((l) => /dropped tool "bad-header"/.test(l.message)));
        const posts = (await f.requests()).filter((r) => r.method === 'POST');
        assert.ok(posts.every((r) => r.headers['mcp-protocol-version'] === '2026-07-28'));
        assert.ok(posts.every((r) => r.headers['mcp-method'] === r.body?.method));
        assert.ok(posts.every((r) => r.headers['mcp-session-id'] === undefined));
        assert.ok(!posts.some((r) => r.body?.method === 'initialize'));
        const calls = posts.filter((r) => r.body?.method === 'tools/call');
        assert.deepEqual(
          calls.map((r) => [r.headers['mcp-name'], r.headers['mcp-param-region']]),
          [
            ['weather', `=?base64?${Buffer.from('Zürich').toString('base64')}?=`],
            ['weather', 'north'],
          ],
        );
        assert.ok(!(await f.requests()).some((r) => r.method === 'GET' && r.path !== '/_requests'), 'no GET stream');
      });
    }

    it('cancels a stateless request by closing its POST, without a notifications/cancelled', async () => {
      const f = await startV2('http-modern');
      const t = await connectTransport<Transport>(new HttpTransport({ url: f.url }), { protocol: 'auto' });
      const controller = new AbortController();
      const call = t.client.callTool('wait', {}, { signal: controller.signal });
      await eventually(async () => ((await f.requests()).some((r) => r.body?.method === 'tools/call') ? true : undefined));
      controller.abort();
      await assert.rejects(call, (e: McpError) => e.code === REQUEST_CANCELLED);
      const seen = await eventually(async () => {
        const requests = await f.requests();
        return requests.some((r) => r.method === 'CLOSED') ? requests : undefined;
      });
      assert.ok(seen.some((r) => r.method === 'CLOSED' && r.body?.method === 'tools/call'));
      assert.ok(!seen.some((r) => r.body?.method === 'notifications/cancelled'));
    });

    it("hands on a modern-only server's -32022 to initialize, instead of trying HTTP+SSE", async () => {
      const f = await startV2('http-modern');
      await assert.rejects(
        connectTransport<Transport>(new HttpTransport({ url: f.url }), { protocol: '2025-11-25' }),
        (e: McpError) =>
          e.code === ErrorCode.UnsupportedProtocolVersion && (e.data as { supported: string[] }).supported.includes('2026-07-28'),
      );
      assert.ok(!(await f.requests()).some((r) => r.method === 'GET'), 'no HTTP+SSE attempt');
    });

    it('asks again when a server remembered as legacy now refuses initialize with -32022', async () => {
      const f = await startV2('http-modern');
      const def = parseServerDefinitions({ remote: { type: 'http', url: f.url } }, { scope: 'user' }).definitions[0];
      const verdicts = new EraVerdicts([[definitionHash(def), { era: 'legacy' }]]);
      const handle = new ServerHandle(def, {
        prepare: async (d) => d,
        createTransport: () => new HttpTransport({ url: f.url }),
        handlers: () => ({}),
        eraVerdicts: verdicts,
      });
      try {
        await handle.start();
        assert.equal(handle.client?.era, 'modern');
        assert.deepEqual(verdicts.get(definitionHash(def)), { era: 'modern', version: '2026-07-28' });
        assert.ok(handle.tools.some((t) => t.name === 'echo'));
      } finally {
        await handle.dispose();
      }
    });

    it('falls back to initialize for server-everything over Streamable HTTP', async () => {
      const everything = await startEverything('streamableHttp');
      try {
        const t = await connectTransport<Transport>(new HttpTransport({ url: everything.url }), { protocol: 'auto' });
        assert.equal(t.client.era, 'legacy');
        assert.ok((await t.client.listTools()).length > 0);
        await t.client.close();
      } finally {
        await everything.stop();
      }
    });

    it('falls back to initialize, then HTTP+SSE, for a 2024-11-05 server', async () => {
      const f = await start('legacy');
      const t = await connectTransport(new HttpTransport({ url: f.url }), { protocol: 'auto' });
      assert.equal(t.client.era, 'legacy');
      assert.equal(t.transport.kind, 'sse');
    });
  });

  describe('judging the probe', () => {
    it('takes only the new-style errors for the stateless era, and picks a shared version from -32022', () => {
      assert.deepEqual(
        judgeDiscoverError(new McpError(-32022, 'no', { supported: ['2026-07-28', '2027-01-01'], requested: '2099-01-01' }), '2026-07-28'),
        {
          kind: 'retry',
          version: '2026-07-28',
        },
      );
      assert.equal(judgeDiscoverError(new McpError(-32022, 'no', { supported: ['2025-11-25'] }), '2026-07-28').kind, 'legacy');
      assert.throws(
        () => judgeDiscoverError(new McpError(-32022, 'no', { supported: ['2099-01-01'] }), '2026-07-28'),
        /speaks \["2099-01-01"\]/,
      );
      for (const code of [-32020, -32021]) assert.equal(judgeDiscoverError(new McpError(code, 'x'), '2026-07-28').kind, 'modern');
      for (const code of [-32601, -32602, -32600, -32000, -32603, -32002])
        assert.equal(judgeDiscoverError(new McpError(code, 'x'), '2026-07-28').kind, 'legacy');
    });

    it('encodes header values: plain ASCII as it is, anything else as =?base64?…?=', () => {
      assert.equal(headerValue('eu-west-1'), 'eu-west-1');
      assert.equal(headerValue(' padded'), `=?base64?${Buffer.from(' padded').toString('base64')}?=`);
      assert.equal(headerValue('東京'), `=?base64?${Buffer.from('東京').toString('base64')}?=`);
      assert.equal(headerValue(''), '');
      const tool = {
        name: 't',
        inputSchema: {
          type: 'object' as const,
          properties: {
            n: { type: 'integer', 'x-mcp-header': 'Count' },
            s: { type: 'string' },
            b: { type: 'boolean', 'x-mcp-header': 'On' },
          },
        },
      };
      assert.deepEqual(headerParamsOf(tool, { n: 3, s: 'x', b: null }), { 'Mcp-Param-Count': '3' });
      assert.equal(invalidHeaderAnnotations(tool), undefined);
      for (const type of ['number', 'null', 'object', 'array']) {
        assert.match(
          String(
            invalidHeaderAnnotations({ name: 'bad', inputSchema: { type: 'object', properties: { v: { type, 'x-mcp-header': 'V' } } } }),
          ),
          /on a property of type/,
        );
      }
    });
  });
});
