import * as vscode from 'vscode';

// engines.vscode is ^1.90, whose API has neither tool calling in language model requests (1.93/1.95)
// nor data parts (later). These declarations describe just the parts sampling uses; every use goes
// through the runtime checks below, so an older VS Code refuses or falls back instead of crashing.

export interface ToolCallPart {
  readonly callId: string;
  readonly name: string;
  readonly input: object;
}
interface LmExtras {
  LanguageModelToolCallPart?: new (callId: string, name: string, input: object) => ToolCallPart;
  LanguageModelToolResultPart?: new (callId: string, content: unknown[]) => object;
  LanguageModelTextPart?: new (value: string) => { value: string };
  LanguageModelDataPart?: new (data: Uint8Array, mimeType: string) => object;
  LanguageModelChatToolMode?: { Auto: number; Required: number };
}
const extras = vscode as unknown as LmExtras;

/** The chat request options as 1.95 has them. */
export interface ToolRequestOptions extends vscode.LanguageModelChatRequestOptions {
  tools?: Array<{ name: string; description: string; inputSchema?: object }>;
  toolMode?: number;
}

/** Whether this VS Code can offer tools to a language model and read its tool calls. */
export function hasToolCalling(): boolean {
  return (
    typeof extras.LanguageModelToolCallPart === 'function' &&
    typeof extras.LanguageModelToolResultPart === 'function' &&
    typeof extras.LanguageModelTextPart === 'function' &&
    extras.LanguageModelChatToolMode !== undefined
  );
}

/** Whether this VS Code can send images and audio to a language model. */
export function hasDataParts(): boolean {
  return typeof extras.LanguageModelDataPart === 'function' && typeof extras.LanguageModelTextPart === 'function';
}

export const textPart = (value: string): object => new extras.LanguageModelTextPart!(value);
export const dataPart = (data: Uint8Array, mimeType: string): object => new extras.LanguageModelDataPart!(data, mimeType);
export const toolCallPart = (callId: string, name: string, input: object): object =>
  new extras.LanguageModelToolCallPart!(callId, name, input);
export const toolResultPart = (callId: string, content: object[]): object => new extras.LanguageModelToolResultPart!(callId, content);
export const toolMode = (mode: 'auto' | 'required'): number =>
  mode === 'required' ? extras.LanguageModelChatToolMode!.Required : extras.LanguageModelChatToolMode!.Auto;

export function isToolCall(part: unknown): part is ToolCallPart {
  return typeof extras.LanguageModelToolCallPart === 'function' && part instanceof extras.LanguageModelToolCallPart;
}
export function isTextPart(part: unknown): part is { value: string } {
  return typeof extras.LanguageModelTextPart === 'function' && part instanceof extras.LanguageModelTextPart;
}

/** A chat message of parts (1.93+); only called after the checks above. */
export function partsMessage(role: 'user' | 'assistant', parts: object[]): vscode.LanguageModelChatMessage {
  const make = (role === 'user' ? vscode.LanguageModelChatMessage.User : vscode.LanguageModelChatMessage.Assistant) as unknown as (
    content: object[],
  ) => vscode.LanguageModelChatMessage;
  return make(parts);
}

/** The parts of a response as they stream (1.95's `stream`), or its text where there is no stream. */
export function responseParts(response: vscode.LanguageModelChatResponse): AsyncIterable<unknown> {
  const stream = (response as unknown as { stream?: AsyncIterable<unknown> }).stream;
  return stream ?? response.text;
}
