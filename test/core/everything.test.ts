import { strict as assert } from 'node:assert';
import {
  ErrorCode,
  McpError,
  REQUEST_CANCELLED,
  type CreateMessageParams,
  type ElicitRequestParams,
  type TextContent,
  type Transport,
} from '../../src/core';
import { EVERYTHING_TRANSPORTS, type EverythingSetup } from '../helpers/httpServers';
import { allHandlers, closeAll, connectTransport, eventually, nextEvent, type TestClient } from '../helpers/servers';

const text = (block: unknown) => (block as TextContent).text;

/** The same feature suite over every transport server-everything speaks. */
for (const [name, setUp] of EVERYTHING_TRANSPORTS) describeEverything(name, setUp);

function describeEverything(name: string, setUp: () => Promise<EverythingSetup>): void {
  describe(`server-everything over ${name}`, function () {
    this.timeout(30_000);
    let setup: EverythingSetup;
    let t: TestClient<Transport>;
    let sampled: CreateMessageParams[];
    let elicited: ElicitRequestParams[];

    before(async () => {
      setup = await setUp();
    });
    after(async () => {
      await setup?.stop?.();
    });

    beforeEach(async () => {
      sampled = [];
      elicited = [];
      t = await connectTransport(setup.transport(), {
        handlers: allHandlers({
          createMessage: async (params) => {
            sampled.push(params);
            return { role: 'assistant', content: { type: 'text', text: 'a sampled answer' }, model: 'test-model', stopReason: 'endTurn' };
          },
          elicit: async (params) => {
            elicited.push(params);
            return { action: 'accept', content: { name: 'Ada Lovelace', check: true, email: 'ada@example.com', integer: 7 } };
          },
        }),
      });
    });
    afterEach(closeAll);

    /** The sampling, elicitation and roots tools are registered once the server has seen our capabilities. */
    const conditionalTools = () =>
      eventually(async () => {
        const tools = await t.client.listTools();
        return tools.some((x) => x.name === 'get-roots-list') ? tools : undefined;
      });

    it('negotiates the newest version, keeps capabilities and instructions', () => {
      const c = t.client;
      assert.equal(c.protocolVersion, '2025-11-25');
      assert.equal(c.serverInfo?.name, 'mcp-servers/everything');
      assert.ok(c.serverCapabilities?.tools && c.serverCapabilities.prompts && c.serverCapabilities.resources?.subscribe);
      assert.ok(c.serverCapabilities?.logging && c.serverCapabilities.completions);
      assert.match(c.instructions ?? '', /Everything Server/);
      assert.deepEqual(Object.keys(c.clientCapabilities).sort(), ['elicitation', 'roots', 'sampling', 'tasks']);
    });

    it('answers ping', async () => {
      assert.deepEqual(await t.client.ping(), {});
    });

    it('lists every tool, resource, template and prompt', async () => {
      const tools = await conditionalTools();
      for (const name of [
        'echo',
        'get-sum',
        'get-tiny-image',
        'get-structured-content',
        'trigger-long-running-operation',
        'get-roots-list',
        'trigger-sampling-request',
        'trigger-elicitation-request',
      ]) {
        assert.ok(
          tools.find((x) => x.name === name),
          `tool ${name} listed`,
        );
      }
      for (const tool of tools) assert.equal(tool.inputSchema.type, 'object', `${tool.name} has an object inputSchema`);
      const resources = await t.client.listResources();
      assert.ok(resources.length >= 5);
      assert.ok(resources.every((r) => typeof r.uri === 'string' && typeof r.name === 'string'));
      const templates = await t.client.listResourceTemplates();
      assert.deepEqual(templates.map((x) => x.uriTemplate).sort(), [
        'demo://resource/dynamic/blob/{resourceId}',
        'demo://resource/dynamic/text/{resourceId}',
      ]);
      const prompts = await t.client.listPrompts();
      assert.deepEqual(prompts.map((p) => p.name).sort(), ['args-prompt', 'completable-prompt', 'resource-prompt', 'simple-prompt']);
    });

    it('calls echo and get-sum', async () => {
      const echo = await t.client.callTool('echo', { message: 'hello 世界' });
      assert.equal(text(echo.result.content[0]), 'Echo: hello 世界');
      const sum = await t.client.callTool('get-sum', { a: 2, b: 40 });
      assert.match(text(sum.result.content[0]), /42/);
    });

    it('returns get-tiny-image as a PNG image block', async () => {
      const { result } = await t.client.callTool('get-tiny-image');
      const image = result.content.find((c) => c.type === 'image');
      assert.ok(image && image.type === 'image');
      assert.equal(image.mimeType, 'image/png');
      assert.deepEqual([...Buffer.from(image.data, 'base64').subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47]);
    });

    it('returns resource links and embedded resources', async () => {
      const links = await t.client.callTool('get-resource-links', { count: 3 });
      const linkBlocks = links.result.content.filter((c) => c.type === 'resource_link');
      assert.equal(linkBlocks.length, 3);
      for (const l of linkBlocks) assert.ok(l.type === 'resource_link' && l.uri.startsWith('demo://'));
      const ref = await t.client.callTool('get-resource-reference', { resourceType: 'Text', resourceId: 3 });
      const embedded = ref.result.content.find((c) => c.type === 'resource');
      assert.ok(embedded && embedded.type === 'resource');
      assert.equal(embedded.resource.uri, 'demo://resource/dynamic/text/3');
      assert.ok('text' in embedded.resource);
    });

    it('validates structuredContent against the outputSchema', async () => {
      await t.client.listTools();
      const outcome = await t.client.callTool('get-structured-content', { location: 'New York' });
      assert.ok(outcome.result.structuredContent);
      assert.deepEqual(outcome.structuredContentCheck, { ok: true });
    });

    it('keeps content annotations', async () => {
      const { result } = await t.client.callTool('get-annotated-message', { messageType: 'error', includeImage: true });
      assert.ok(result.content.some((c) => c.type === 'text' && c.annotations?.priority !== undefined));
      assert.ok(result.content.some((c) => c.type === 'image'));
    });

    it('gives isError, not an exception, for an unknown tool', async () => {
      const { result } = await t.client.callTool('no-such-tool', {});
      assert.equal(result.isError, true);
      assert.match(text(result.content[0]), /not found/);
    });

    it('refuses invalid arguments locally with -32602', async () => {
      await assert.rejects(t.client.callTool('get-sum', { a: 'one' }, { validateInput: true }), (e: McpError) => {
        assert.equal(e.code, ErrorCode.InvalidParams);
        assert.match(e.message, /must have required property 'b'/);
        return true;
      });
    });

    it('reads text and blob resources', async () => {
      const [first] = await t.client.listResources();
      const read = await t.client.readResource(first.uri);
      assert.equal(read.contents[0].uri, first.uri);
      assert.ok('text' in read.contents[0] && read.contents[0].text.length > 0);
      const blob = await t.client.readResource('demo://resource/dynamic/blob/2');
      assert.ok('blob' in blob.contents[0]);
      assert.ok(Buffer.from(blob.contents[0].blob, 'base64').length > 0);
    });

    it('subscribes and receives resources/updated', async () => {
      const uri = 'demo://resource/dynamic/text/1';
      assert.deepEqual(await t.client.subscribeResource(uri), {});
      const updated = nextEvent(t.client.onResourceUpdated, 10_000);
      await t.client.callTool('toggle-subscriber-updates', {});
      assert.equal((await updated).uri, uri);
      assert.deepEqual(await t.client.unsubscribeResource(uri), {});
    });

    it('gets prompts with arguments', async () => {
      const simple = await t.client.getPrompt('simple-prompt');
      assert.equal(simple.messages[0].role, 'user');
      const withArgs = await t.client.getPrompt('args-prompt', { city: 'Lisbon', state: 'PT' });
      assert.match(text(withArgs.messages[0].content), /Lisbon, PT/);
    });

    it('completes prompt arguments, using context', async () => {
      const dept = await t.client.complete({
        ref: { type: 'ref/prompt', name: 'completable-prompt' },
        argument: { name: 'department', value: 'E' },
      });
      assert.deepEqual(dept.completion.values, ['Engineering']);
      const names = await t.client.complete({
        ref: { type: 'ref/prompt', name: 'completable-prompt' },
        argument: { name: 'name', value: '' },
        context: { arguments: { department: 'Sales' } },
      });
      assert.deepEqual(names.completion.values, ['David', 'Eve', 'Frank']);
    });

    it('sets the logging level and receives notifications/message', async () => {
      assert.deepEqual(await t.client.setLoggingLevel('debug'), {});
      const message = nextEvent(t.client.onLogMessage, 15_000);
      await t.client.callTool('toggle-simulated-logging', {});
      const m = await message;
      assert.ok(['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'].includes(m.level));
      assert.ok(m.data !== undefined);
    });

    it('routes progress to the request that asked for it', async () => {
      const seen: number[] = [];
      const { result } = await t.client.callTool(
        'trigger-long-running-operation',
        { duration: 0.6, steps: 3 },
        {
          onProgress: (p) => {
            seen.push(p.progress);
            assert.equal(p.total, 3);
          },
        },
      );
      assert.deepEqual(seen, [1, 2, 3]);
      assert.match(text(result.content[0]), /completed/);
    });

    it('cancels the long-running tool at once and stays usable', async () => {
      const controller = new AbortController();
      const started = Date.now();
      const call = t.client.callTool(
        'trigger-long-running-operation',
        { duration: 10, steps: 10 },
        {
          signal: controller.signal,
          onProgress: () => controller.abort(),
        },
      );
      await assert.rejects(call, (e: McpError) => e.code === REQUEST_CANCELLED);
      assert.ok(Date.now() - started < 5000, 'rejected before the operation would have finished');
      assert.deepEqual(await t.client.ping(), {});
    });

    it('answers roots/list for get-roots-list', async () => {
      await conditionalTools();
      const { result } = await t.client.callTool('get-roots-list', {});
      assert.match(text(result.content[0]), /file:\/\/\/tmp\/mcp-host-test-root/);
      assert.match(text(result.content[0]), /Test Root/);
    });

    it('answers sampling/createMessage through the host handler', async () => {
      await conditionalTools();
      const { result } = await t.client.callTool('trigger-sampling-request', { prompt: 'Say hi', maxTokens: 50 });
      assert.equal(sampled.length, 1);
      assert.equal(sampled[0].maxTokens, 50);
      assert.match(JSON.stringify(sampled[0].messages), /Say hi/);
      assert.match(JSON.stringify(result.content), /a sampled answer/);
    });

    it('answers elicitation/create through the host handler', async () => {
      await conditionalTools();
      const { result } = await t.client.callTool('trigger-elicitation-request', {});
      assert.equal(elicited.length, 1);
      assert.equal(elicited[0].requestedSchema?.type, 'object');
      assert.match(JSON.stringify(result.content), /Ada Lovelace/);
    });
  });
}
