import { strict as assert } from 'node:assert';
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { startOtlpReceiver, type OtlpReceiver } from '../helpers/otlpReceiver';
import { api, repoRoot, setServers, waitFor } from './helpers';
import { TEST_VENDOR, TestModels } from './testModels';

/**
 * One trace from VS Code's chat to the server, in the real VS Code. VS Code's MCP client puts
 * `traceparent`/`tracestate` in a tool call's `_meta` only when the tool invocation carries them,
 * and only an extension with the `chatParticipantPrivate` API proposal can put them there
 * (`vscode.lm.invokeTool(name, { …, traceparent, tracestate })`): GitHub Copilot Chat does, from
 * its own OpenTelemetry span, when its tracing is on. Copilot Chat is not on npm, so this suite is
 * the chat agent instead, as Copilot Chat is one: a chat participant that gets a real request from
 * VS Code's chat, lets the test model pick the tool, and invokes it with the request's
 * `toolInvocationToken` and the trace context of its `execute_tool` span.
 */

/** What VS Code 1.139 offers that @types/vscode 1.90 does not name. */
interface ToolInfo {
  name: string;
  description: string;
  inputSchema?: object;
}
interface LmTools {
  tools: readonly ToolInfo[];
  invokeTool(
    name: string,
    options: { input: object; toolInvocationToken: unknown; traceparent?: string; tracestate?: string },
    token?: vscode.CancellationToken,
  ): Thenable<{ content: unknown[] }>;
}
const lm = () => vscode.lm as unknown as LmTools;

interface UpstreamCall {
  tool: string;
  arguments: unknown;
  meta?: Record<string, unknown>;
}

describe("teams: a chat call's span continues VS Code's trace, in the real VS Code", function () {
  this.timeout(150_000);
  let receiver: OtlpReceiver | undefined;
  let models: TestModels | undefined;
  let participant: vscode.Disposable | undefined;
  const config = () => vscode.workspace.getConfiguration('mcpHost');

  /** The collector's token, set with Set Telemetry Headers: it goes in the header, never in what is exported. */
  const TOKEN = `otlp-${randomBytes(12).toString('hex')}`;
  let savedAsk: ((names: string[]) => Promise<string | undefined>) | undefined;

  after(async () => {
    participant?.dispose();
    models?.dispose();
    await setServers(undefined);
    const seam = await api();
    if (savedAsk) {
      seam.ui.askTelemetryHeaders = async () => '';
      await vscode.commands.executeCommand('mcpHost.setTelemetryHeaders');
      seam.ui.askTelemetryHeaders = savedAsk;
    }
    await config().update('telemetry.endpoint', undefined, vscode.ConfigurationTarget.Global);
    await receiver?.close();
  });

  it("VS Code passes the chat agent's trace to MCP Host, whose span is its child and the server's parent", async () => {
    const seam = await api();
    receiver = await startOtlpReceiver();
    savedAsk = seam.ui.askTelemetryHeaders;
    seam.ui.askTelemetryHeaders = async () => `Authorization=Bearer%20${TOKEN}`;
    await vscode.commands.executeCommand('mcpHost.setTelemetryHeaders');
    await config().update('telemetry.endpoint', receiver.url, vscode.ConfigurationTarget.Global);
    await waitFor(() => seam.host.telemetry.hook.exporter, 'the exporter to start');

    const callLog = path.join(await fs.mkdtemp(path.join(os.tmpdir(), 'chat-trace-')), 'calls.jsonl');
    await setServers({
      traced: {
        command: 'node',
        args: [path.join(repoRoot(), 'test', 'fixtures', 'gateway-upstream.mjs')],
        env: { GATEWAY_UPSTREAM_CALL_LOG: callLog },
        shareWithChat: true,
      },
    });
    await waitFor(() => seam.host.registry.get('traced')?.state.kind === 'running', 'traced to run');
    const echo = await waitFor(async () => {
      const found = lm().tools.find((t) => /^mcp_traced\d*_echo$/.test(t.name));
      if (!found) await vscode.commands.executeCommand('workbench.mcp.startServer', '*', { waitForLiveTools: true });
      return found;
    }, "traced's echo in vscode.lm.tools");

    models = new TestModels();
    // The chat agent's span, as an OpenTelemetry SDK makes it: a new trace, sampled.
    const traceId = randomBytes(16).toString('hex');
    const chatSpanId = randomBytes(8).toString('hex');
    const traceparent = `00-${traceId}-${chatSpanId}-01`;
    const tracestate = 'copilot=chat';
    let answered: (text: string) => void;
    const answer = new Promise<string>((resolve) => (answered = resolve));
    participant = vscode.chat.createChatParticipant('mcp-host-test.tracer', async (request, _context, stream, token) => {
      try {
        const [model] = await vscode.lm.selectChatModels({ vendor: TEST_VENDOR, family: 'test-echo' });
        const reply = await model.sendRequest(
          [vscode.LanguageModelChatMessage.User(request.prompt)],
          {
            tools: [{ name: echo.name, description: echo.description, inputSchema: echo.inputSchema }],
          } as vscode.LanguageModelChatRequestOptions,
          token,
        );
        let call: vscode.LanguageModelToolCallPart | undefined;
        for await (const part of (reply as unknown as { stream: AsyncIterable<unknown> }).stream)
          if (part instanceof vscode.LanguageModelToolCallPart) call = part;
        assert.ok(call, 'the model called a tool');
        const result = await lm().invokeTool(
          call.name,
          {
            // The test model sets only required properties, and echo's `text` is optional: the agent fills it in.
            input: { ...(call.input as object), text: 'hello' },
            toolInvocationToken: (request as unknown as { toolInvocationToken: unknown }).toolInvocationToken,
            traceparent,
            tracestate,
          },
          token,
        );
        // The parts as VS Code hands them over (text parts carry `value`), whole, for the assertion to show.
        const text = JSON.stringify(result.content);
        stream.markdown(text);
        answered(text);
      } catch (error) {
        answered(`failed: ${String(error)}`);
      }
    });

    // The chat sends a request with the model it has selected (VS Code has no default one without Copilot): the test model.
    await vscode.commands.executeCommand('workbench.action.chat.open', {
      query: '@tracer echo hello',
      isPartialQuery: false,
      modelSelector: { vendor: TEST_VENDOR, id: 'test-echo-large' },
    });
    // VS Code confirms a call of a tool it does not know to be read-only, in the chat: accepted as a person would.
    const accepting = setInterval(() => void vscode.commands.executeCommand('workbench.action.chat.acceptTool'), 500);
    let text: string;
    try {
      text = await answer;
    } finally {
      clearInterval(accepting);
    }
    assert.match(text, /hello/, 'the chat agent got the tool result');

    const calls = (await fs.readFile(callLog, 'utf8'))
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l) as UpstreamCall);
    assert.equal(calls.length, 1);
    const sent = calls[0].meta ?? {};

    await seam.host.telemetry.hook.exporter!.flush();
    await receiver.waitFor(() => receiver!.spans.some((s) => s.name === 'tools/call echo'));
    const span = receiver.spans.find((s) => s.name === 'tools/call echo')!;
    console.log(`the span as the receiver got it: ${JSON.stringify(span)}`);
    assert.equal(span.traceId, traceId, "MCP Host's span is in the chat's trace");
    assert.equal(span.parentSpanId, chatSpanId, "the chat agent's span is its parent");
    assert.equal(sent.traceparent, `00-${traceId}-${span.spanId}-01`, "the server got MCP Host's span as its parent");
    assert.equal(sent.tracestate, tracestate);
    assert.equal(span.attributes['mcp_host.origin'], 'chat');
    // VS Code's chat session, from the `vscode.conversationId` VS Code put beside the traceparent (not passed on to the server).
    assert.match(String(span.attributes['gen_ai.conversation.id']), /^[0-9a-f-]{36}$/);
    assert.equal(sent['vscode.conversationId'], undefined);
    // Nothing secret in what was exported: the collector's token (a header) and the server's environment stay out.
    const everything = receiver.everything();
    assert.doesNotMatch(everything, new RegExp(TOKEN));
    assert.equal(receiver.requests.find((r) => r.path === '/v1/traces')?.headers.authorization, `Bearer ${TOKEN}`);
  });
});
