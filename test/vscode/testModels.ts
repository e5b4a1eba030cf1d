import * as vscode from 'vscode';

/**
 * Deterministic test language models, registered by the suite itself (the runner extension
 * contributes the vendor). Each answers "[id] I read: <last message>" and records what it got.
 * Offered tools, it calls the first one instead (each required string property set to the last
 * word of the last message), unless the last message carries tool results: those it reads back.
 * Data parts (images, audio) are recorded and named in the answer.
 */
export interface RecordedRequest {
  model: string;
  messages: Array<{
    role: 'user' | 'assistant';
    text: string;
    data?: Array<{ mimeType: string; base64: string }>;
    toolCalls?: Array<{ callId: string; name: string; input: unknown }>;
    toolResults?: Array<{ callId: string; text: string }>;
  }>;
  modelOptions: Record<string, unknown>;
  tools?: string[];
  toolMode?: number;
  cancelled: boolean;
}

export const TEST_VENDOR = 'mcp-host-test';

const MODELS: vscode.LanguageModelChatInformation[] = [
  {
    id: 'test-echo-large',
    name: 'Test Echo Large',
    family: 'test-echo',
    version: '1',
    maxInputTokens: 100_000,
    maxOutputTokens: 4096,
    capabilities: { imageInput: true, toolCalling: true },
  },
  {
    id: 'test-other-mini',
    name: 'Test Other Mini',
    family: 'test-other',
    version: '1',
    maxInputTokens: 8000,
    maxOutputTokens: 1024,
    capabilities: {},
  },
];

const textOfParts = (parts: ReadonlyArray<unknown>) =>
  parts.map((p) => (p instanceof vscode.LanguageModelTextPart ? p.value : '')).join('');

export class TestModels implements vscode.Disposable {
  readonly requests: RecordedRequest[] = [];
  delayMs = 0;
  private readonly registration: vscode.Disposable;

  /** onRequest sees each request as it arrives (the e2e models extension logs them to a file). */
  constructor(onRequest?: (request: RecordedRequest) => void) {
    const textOf = (m: vscode.LanguageModelChatRequestMessage) => textOfParts(m.content);
    this.registration = vscode.lm.registerLanguageModelChatProvider(TEST_VENDOR, {
      provideLanguageModelChatInformation: () => MODELS,
      provideLanguageModelChatResponse: async (model, messages, options, progress, token) => {
        const record: RecordedRequest = {
          model: model.id,
          messages: messages.map((m) => {
            const data = m.content
              .filter((p) => p instanceof vscode.LanguageModelDataPart)
              .map((p) => ({ mimeType: p.mimeType, base64: Buffer.from(p.data).toString('base64') }));
            const toolCalls = m.content
              .filter((p) => p instanceof vscode.LanguageModelToolCallPart)
              .map((p) => ({ callId: p.callId, name: p.name, input: p.input }));
            const toolResults = m.content
              .filter((p) => p instanceof vscode.LanguageModelToolResultPart)
              .map((p) => ({ callId: p.callId, text: textOfParts(p.content) }));
            return {
              role: m.role === vscode.LanguageModelChatMessageRole.Assistant ? 'assistant' : 'user',
              text: textOf(m),
              ...(data.length ? { data } : {}),
              ...(toolCalls.length ? { toolCalls } : {}),
              ...(toolResults.length ? { toolResults } : {}),
            };
          }),
          modelOptions: { ...(options.modelOptions ?? {}) },
          ...(options.tools?.length ? { tools: options.tools.map((t) => t.name), toolMode: options.toolMode } : {}),
          cancelled: false,
        };
        this.requests.push(record);
        onRequest?.(record);
        const last = record.messages[record.messages.length - 1];
        const tool = options.tools?.[0];
        if (tool && !last?.toolResults) {
          const word = (last?.text ?? '').split(/\s+/).pop()?.replace(/\W+$/, '') ?? '';
          const schema = (tool.inputSchema ?? {}) as { required?: string[] };
          const input = Object.fromEntries((schema.required ?? []).map((k) => [k, word]));
          progress.report(new vscode.LanguageModelTextPart(`[${model.id}] calling ${tool.name}`));
          progress.report(new vscode.LanguageModelToolCallPart(`call-${this.requests.length}`, tool.name, input));
          return;
        }
        const seen = [
          ...(last?.data ?? []).map((d) => `${d.mimeType}, ${Buffer.from(d.base64, 'base64').length} bytes`),
          ...(last?.toolResults ?? []).map((r) => `result of ${r.callId}: ${r.text}`),
        ];
        const answer = `[${model.id}] I read: ${last?.text ?? ''}${seen.length ? ` (${seen.join('; ')})` : ''}`;
        for (const word of answer.split(/(?<= )/)) {
          if (token.isCancellationRequested) break;
          if (this.delayMs) await new Promise((r) => setTimeout(r, this.delayMs));
          progress.report(new vscode.LanguageModelTextPart(word));
        }
        record.cancelled = token.isCancellationRequested;
      },
      // One token per four characters: predictable for budget checks.
      provideTokenCount: async (_model, text) => Math.ceil((typeof text === 'string' ? text : textOf(text)).length / 4),
    });
  }

  reset(): void {
    this.requests.length = 0;
    this.delayMs = 0;
  }

  dispose(): void {
    this.registration.dispose();
  }
}
