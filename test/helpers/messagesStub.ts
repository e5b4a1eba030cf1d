import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback stand-in for Anthropic's Messages API that plays a model following an injection: each
 * request that offers tools is answered with the next `tool_use` of `steps` (which step: the number
 * of tool results in the conversation so far), then with plain text once they are done. Requests
 * without tools (a title, a summary) get plain text. Streamed (SSE) or not, as asked. It keeps every
 * tool result the agent sent back, so a test can read what the agent saw.
 */
export class MessagesStub {
  private server: Server | undefined;
  private waits = 0;
  /** Each tool result the agent returned, in order: its tool_use id's step and its text. */
  readonly toolResults: Array<{ step: number; text: string; isError: boolean }> = [];

  constructor(private readonly steps: Array<{ name: string; input: Record<string, unknown> }>) {}

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      void body(req).then((text) => {
        if (req.method !== 'POST' || !req.url?.startsWith('/v1/messages') || req.url.startsWith('/v1/messages/count_tokens')) {
          res.writeHead(req.url?.includes('count_tokens') ? 200 : 404, { 'content-type': 'application/json' });
          res.end(
            JSON.stringify(
              req.url?.includes('count_tokens')
                ? { input_tokens: 10 }
                : { type: 'error', error: { type: 'not_found_error', message: 'no' } },
            ),
          );
          return;
        }
        const request = JSON.parse(text || '{}') as {
          stream?: boolean;
          model?: string;
          tools?: Array<{ name: string }>;
          messages?: Array<{ content: unknown }>;
        };
        type ToolResult = { type: string; tool_use_id?: string; content?: unknown; is_error?: boolean };
        const results = (request.messages ?? [])
          .flatMap((m) => (Array.isArray(m.content) ? (m.content as ToolResult[]) : []))
          .filter((c) => c.type === 'tool_result' && c.tool_use_id?.startsWith(STEP));
        for (const r of results.slice(this.toolResults.length))
          this.toolResults.push({
            step: Number(r.tool_use_id!.slice(STEP.length)),
            text: contentText(r.content),
            isError: r.is_error === true,
          });
        const offered = new Set((request.tools ?? []).map((t) => t.name));
        const step = offered.size ? this.steps[results.length] : undefined;
        // Claude Code offers an MCP server's tools once it is connected; until then the model may wait for it with its own tool.
        const wait = step && !offered.has(step.name) && offered.has(WAIT) && this.waits++ < 5;
        const block = wait
          ? { type: 'tool_use' as const, id: `toolu_wait_${this.waits}`, name: WAIT, input: {} }
          : step
            ? { type: 'tool_use' as const, id: `${STEP}${results.length}`, name: step.name, input: step.input }
            : { type: 'text' as const, text: 'Done.' };
        reply(res, request.stream === true, request.model ?? 'claude-stub', block, block.type === 'tool_use' ? 'tool_use' : 'end_turn');
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

const STEP = 'toolu_step_';
const WAIT = 'WaitForMcpServers';

function body(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    req.on('data', (d: Buffer) => (text += d.toString()));
    req.on('end', () => resolve(text));
  });
}

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  return Array.isArray(content) ? (content as Array<{ text?: string }>).map((c) => c.text ?? '').join('\n') : '';
}

type Block = { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> } | { type: 'text'; text: string };

function reply(res: import('node:http').ServerResponse, stream: boolean, model: string, block: Block, stop: string): void {
  const usage = { input_tokens: 10, output_tokens: 10 };
  const message = { id: `msg_${Date.now()}`, type: 'message', role: 'assistant', model, stop_sequence: null };
  if (!stream) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ ...message, content: [block], stop_reason: stop, usage }));
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const event = (type: string, data: Record<string, unknown>): void =>
    void res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
  event('message_start', { message: { ...message, content: [], stop_reason: null, usage } });
  if (block.type === 'tool_use') {
    event('content_block_start', { index: 0, content_block: { ...block, input: {} } });
    event('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) } });
  } else {
    event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
    event('content_block_delta', { index: 0, delta: { type: 'text_delta', text: block.text } });
  }
  event('content_block_stop', { index: 0 });
  event('message_delta', { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 10 } });
  event('message_stop', {});
  res.end();
}
