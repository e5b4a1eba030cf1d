import * as vscode from 'vscode';

/**
 * Deterministic test language models, registered by the suite itself (the runner extension
 * contributes the vendor). Each answers "[id] I read: <last message>" and records what it got.
 */
export interface RecordedRequest {
  model: string;
  messages: Array<{ role: 'user' | 'assistant'; text: string }>;
  modelOptions: Record<string, unknown>;
  cancelled: boolean;
}

export const TEST_VENDOR = 'mcp-host-test';

const MODELS: vscode.LanguageModelChatInformation[] = [
  { id: 'test-echo-large', name: 'Test Echo Large', family: 'test-echo', version: '1', maxInputTokens: 100_000, maxOutputTokens: 4096, capabilities: {} },
  { id: 'test-other-mini', name: 'Test Other Mini', family: 'test-other', version: '1', maxInputTokens: 8000, maxOutputTokens: 1024, capabilities: {} },
];

export class TestModels implements vscode.Disposable {
  readonly requests: RecordedRequest[] = [];
  delayMs = 0;
  private readonly registration: vscode.Disposable;

  /** onRequest sees each request as it arrives (the e2e models extension logs them to a file). */
  constructor(onRequest?: (request: RecordedRequest) => void) {
    const textOf = (m: vscode.LanguageModelChatRequestMessage) => m.content.map((p) => (p instanceof vscode.LanguageModelTextPart ? p.value : '')).join('');
    this.registration = vscode.lm.registerLanguageModelChatProvider(TEST_VENDOR, {
      provideLanguageModelChatInformation: () => MODELS,
      provideLanguageModelChatResponse: async (model, messages, options, progress, token) => {
        const record: RecordedRequest = {
          model: model.id,
          messages: messages.map((m) => ({ role: m.role === vscode.LanguageModelChatMessageRole.Assistant ? 'assistant' : 'user', text: textOf(m) })),
          modelOptions: { ...(options.modelOptions ?? {}) },
          cancelled: false,
        };
        this.requests.push(record);
        onRequest?.(record);
        const answer = `[${model.id}] I read: ${record.messages[record.messages.length - 1]?.text ?? ''}`;
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
