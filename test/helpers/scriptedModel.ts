// A model on loopback that the real agents take for their provider (OpenAI's chat completions, which Copilot CLI
// speaks with COPILOT_PROVIDER_BASE_URL; Gemini's generateContent, which Gemini CLI speaks with
// GOOGLE_GEMINI_BASE_URL): its first answer calls the offered tool whose name ends with `tool`, with `args`; once the
// tool's result is in the conversation, it answers with plain text. Every request is kept, so a test can see what the
// agent offered and what came back.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ScriptedModel {
  url: string;
  /** Each request's path and body. */
  requests: Array<{ path: string; body: Record<string, unknown> }>;
  close(): Promise<void>;
}

const bodyOf = async (req: IncomingMessage): Promise<Record<string, unknown>> => {
  let text = '';
  for await (const chunk of req) text += String(chunk);
  try {
    return text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    return {};
  }
};

export async function scriptedModel(tool: string, args: Record<string, unknown>): Promise<ScriptedModel> {
  const requests: ScriptedModel['requests'] = [];
  const server: Server = createServer((req, res) => {
    void bodyOf(req)
      .then((body) => {
        const path = req.url ?? '/';
        requests.push({ path, body });
        const sse = (events: unknown[]) => {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          for (const e of events) res.write(`data: ${JSON.stringify(e)}\n\n`);
          res.end();
        };
        const json = (value: unknown) => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify(value));
        };
        if (req.method === 'GET' && /\/models\/?$/.test(path)) return json({ object: 'list', data: [{ id: 'scripted', object: 'model' }] });
        if (/generateContent/i.test(path)) {
          // Gemini: the tool is called once, then the model speaks.
          const contents = (body.contents ?? []) as Array<{ parts?: Array<Record<string, unknown>> }>;
          const answered = contents.some((c) => c.parts?.some((p) => 'functionResponse' in p));
          const names = ((body.tools ?? []) as Array<{ functionDeclarations?: Array<{ name: string }> }>).flatMap((t) =>
            (t.functionDeclarations ?? []).map((d) => d.name),
          );
          const name = names.find((n) => n.endsWith(tool));
          const parts =
            answered || !name
              ? [{ text: answered ? 'done' : `no tool ending with ${tool}: ${names.join(' ')}` }]
              : [{ functionCall: { name, args } }];
          const answer = {
            candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
            usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 1, totalTokenCount: 2 },
          };
          return path.includes('alt=sse') || path.includes('streamGenerateContent') ? sse([answer]) : json(answer);
        }
        if (/chat\/completions/.test(path)) {
          const messages = (body.messages ?? []) as Array<{ role: string }>;
          const answered = messages.some((m) => m.role === 'tool');
          // Copilot also offers tools of other kinds (a `custom` one has no `function`).
          const names = ((body.tools ?? []) as Array<{ function?: { name: string } }>).flatMap((t) =>
            t.function ? [t.function.name] : [],
          );
          const name = names.find((n) => n.endsWith(tool));
          const base = { id: 'chatcmpl-scripted', created: 0, model: 'scripted' };
          const call = { index: 0, id: 'call_1', type: 'function', function: { name, arguments: JSON.stringify(args) } };
          const text = answered ? 'done' : `no tool ending with ${tool}: ${names.join(' ')}`;
          const usage = { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 };
          if (body.stream) {
            const delta =
              answered || !name ? { role: 'assistant', content: text } : { role: 'assistant', content: null, tool_calls: [call] };
            const finish = answered || !name ? 'stop' : 'tool_calls';
            res.writeHead(200, { 'content-type': 'text/event-stream' });
            res.write(
              `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: null }] })}\n\n`,
            );
            res.write(
              `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta: {}, finish_reason: finish }], usage })}\n\n`,
            );
            res.end('data: [DONE]\n\n');
            return;
          }
          const message =
            answered || !name ? { role: 'assistant', content: text } : { role: 'assistant', content: null, tool_calls: [call] };
          return json({
            ...base,
            object: 'chat.completion',
            choices: [{ index: 0, message, finish_reason: answered || !name ? 'stop' : 'tool_calls' }],
            usage,
          });
        }
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `no such route: ${path}` } }));
      })
      .catch((error: unknown) => {
        // A request the script cannot read is answered, so the agent fails now instead of waiting on it.
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: String(error) } }));
      });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
