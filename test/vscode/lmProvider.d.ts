// The extension is typed against the oldest VS Code it supports (@types/vscode = engines.vscode), which
// predates the language-model provider API (final in 1.104). Only the test suites use that API, to
// register deterministic models in the newer VS Code they run in (test/vscode/testModels.ts); these
// declarations describe just the parts they use.
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

  export interface ProvideLanguageModelChatResponseOptions {
    readonly modelOptions?: { readonly [name: string]: unknown };
  }

  export interface LanguageModelChatProvider {
    provideLanguageModelChatInformation(options: { silent: boolean }, token: CancellationToken): ProviderResult<LanguageModelChatInformation[]>;
    provideLanguageModelChatResponse(
      model: LanguageModelChatInformation,
      messages: readonly LanguageModelChatRequestMessage[],
      options: ProvideLanguageModelChatResponseOptions,
      progress: Progress<LanguageModelTextPart>,
      token: CancellationToken,
    ): Thenable<void>;
    provideTokenCount(model: LanguageModelChatInformation, text: string | LanguageModelChatRequestMessage, token: CancellationToken): Thenable<number>;
  }

  export namespace lm {
    export function registerLanguageModelChatProvider(vendor: string, provider: LanguageModelChatProvider): Disposable;
  }
}
