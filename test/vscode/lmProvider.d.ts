// The extension is typed against the oldest VS Code it supports (@types/vscode = engines.vscode), which
// predates the language-model provider API (final in 1.104). Only the test suites use that API, to
// register deterministic models in the newer VS Code they run in (test/vscode/testModels.ts); these
// declarations describe just the parts they use (the tool and data parts included: sampling itself
// reaches those through the runtime checks of src/vscode/sampling/lmApi.ts).
import 'vscode';

declare module 'vscode' {
  export interface LanguageModelChatInformation {
    readonly id: string;
    readonly name: string;
    readonly family: string;
    readonly version: string;
    readonly maxInputTokens: number;
    readonly maxOutputTokens: number;
    readonly capabilities: object;
  }

  export class LanguageModelTextPart {
    value: string;
    constructor(value: string);
  }

  export interface LanguageModelChatRequestMessage {
    readonly role: LanguageModelChatMessageRole;
    readonly content: ReadonlyArray<unknown>;
    readonly name: string | undefined;
  }

  export class LanguageModelDataPart {
    mimeType: string;
    data: Uint8Array;
    constructor(data: Uint8Array, mimeType: string);
  }

  export class LanguageModelToolCallPart {
    callId: string;
    name: string;
    input: object;
    constructor(callId: string, name: string, input: object);
  }

  export class LanguageModelToolResultPart {
    callId: string;
    content: unknown[];
    constructor(callId: string, content: unknown[]);
  }

  export interface LanguageModelChatTool {
    name: string;
    description: string;
    inputSchema?: object;
  }

  export interface ProvideLanguageModelChatResponseOptions {
    readonly modelOptions?: { readonly [name: string]: unknown };
    readonly tools?: readonly LanguageModelChatTool[];
    readonly toolMode?: number;
  }

  export interface LanguageModelChatProvider {
    provideLanguageModelChatInformation(
      options: { silent: boolean },
      token: CancellationToken,
    ): ProviderResult<LanguageModelChatInformation[]>;
    provideLanguageModelChatResponse(
      model: LanguageModelChatInformation,
      messages: readonly LanguageModelChatRequestMessage[],
      options: ProvideLanguageModelChatResponseOptions,
      progress: Progress<LanguageModelTextPart | LanguageModelToolCallPart>,
      token: CancellationToken,
    ): Thenable<void>;
    provideTokenCount(
      model: LanguageModelChatInformation,
      text: string | LanguageModelChatRequestMessage,
      token: CancellationToken,
    ): Thenable<number>;
  }

  export namespace lm {
    export function registerLanguageModelChatProvider(vendor: string, provider: LanguageModelChatProvider): Disposable;
  }
}
