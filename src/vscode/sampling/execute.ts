import * as vscode from 'vscode';
import {
  applyStopSequences,
  describeBlock,
  ErrorCode,
  McpError,
  offeredTools,
  REQUEST_CANCELLED,
  samplingAnswer,
  type CreateMessageParams,
  type CreateMessageResult,
  type ToolUseContent,
} from '../../core';
import { isTextPart, isToolCall, responseParts, toolMode, type ToolCallPart, type ToolRequestOptions } from './lmApi';
import { toChatMessages } from './messages';

/** What the model answered, for the server and the history. */
export interface ModelAnswer {
  result: CreateMessageResult;
  tokensIn: number;
  tokensOut: number;
  toolCalls: number;
  /** The answer as the history shows it: the text, then each tool call. */
  said: string;
}

/** The request did not get an answer: cancelled by the server, our side closing, or the model failing. */
export class SamplingFailure extends Error {
  constructor(
    readonly decision: 'cancelled' | 'failed',
    /** For the history. */
    readonly reason: string,
    /** For the server's log. */
    readonly logLine: string,
    /** For the server. */
    readonly answer: McpError,
  ) {
    super(reason);
  }
}

const cancelledByServer = () => new McpError(REQUEST_CANCELLED, 'Sampling cancelled by the server');

/**
 * Sends the (decided, consented) request to `model` and reads its answer: streamed text cut at a
 * stop sequence, tool calls, and the token counts. `signal` is the server's cancellation.
 */
export async function askModel(
  model: vscode.LanguageModelChat,
  request: CreateMessageParams,
  server: string,
  signal: AbortSignal,
): Promise<ModelAnswer> {
  const messages = toChatMessages(request);
  const source = new vscode.CancellationTokenSource();
  const onAbort = () => source.cancel();
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    // The server may cancel while the person is still deciding; an aborted signal never fires again.
    if (signal.aborted) throw cancelledByServer();
    const tools = offeredTools(request);
    const options: ToolRequestOptions = {
      justification: vscode.l10n.t('The MCP server "{0}" asks for a completion (sampling).', server),
      modelOptions: {
        ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
        ...(request.stopSequences?.length ? { stop: request.stopSequences } : {}),
        max_tokens: request.maxTokens,
      },
      ...(tools.length
        ? {
            tools: tools.map((t) => ({ name: t.name, description: t.description ?? t.title ?? t.name, inputSchema: t.inputSchema })),
            toolMode: toolMode(request.toolChoice?.mode === 'required' ? 'required' : 'auto'),
          }
        : {}),
    };
    const response = await model.sendRequest(messages, options, source.token);
    let text = '';
    let stopped = false;
    const calls: ToolCallPart[] = [];
    // With tools offered the parts are read (text and tool calls); otherwise the text, as 1.90 has it.
    for await (const part of tools.length ? responseParts(response) : response.text) {
      if (isToolCall(part)) {
        calls.push(part);
        continue;
      }
      text += typeof part === 'string' ? part : isTextPart(part) ? part.value : '';
      const cut = applyStopSequences(text, request.stopSequences);
      if (cut.stopped) {
        text = cut.text;
        stopped = true;
        source.cancel();
        break;
      }
    }
    if (signal.aborted) throw cancelledByServer();
    let tokensOut = await model.countTokens(text);
    for (const c of calls) tokensOut += await model.countTokens(`${c.name} ${JSON.stringify(c.input)}`);
    const uses: ToolUseContent[] = calls.map((c) => ({
      type: 'tool_use',
      id: c.callId,
      name: c.name,
      input: { ...(c.input as Record<string, unknown>) },
    }));
    const answer = samplingAnswer({ text, stopped, uses, tokensOut }, request.maxTokens, model.id);
    let tokensIn = 0;
    for (const m of messages) tokensIn += await model.countTokens(m);
    const said = [answer.text, ...uses.map((u) => describeBlock(u))].filter(Boolean).join('\n');
    return { result: answer.result, tokensIn, tokensOut: answer.tokensOut, toolCalls: uses.length, said };
  } catch (error) {
    throw failure(error, signal);
  } finally {
    signal.removeEventListener('abort', onAbort);
    source.dispose();
  }
}

function failure(error: unknown, signal: AbortSignal): SamplingFailure {
  const cancelled = signal.aborted;
  // Our side closing the connection aborts the signal too: the server is not to blame for that.
  const closed =
    cancelled && signal.reason instanceof McpError && signal.reason.code === ErrorCode.ConnectionClosed
      ? (signal.reason as McpError)
      : undefined;
  const message = closed
    ? closed.message
    : error instanceof vscode.LanguageModelError
      ? `${error.code}: ${error.message}`
      : modelErrorText(error);
  const logLine = closed ? `stopped: ${message}` : cancelled ? 'cancelled by the server' : `model error: ${message}`;
  const answer =
    closed ?? (cancelled ? cancelledByServer() : new McpError(ErrorCode.InternalError, `The language model failed: ${message}`));
  return new SamplingFailure(cancelled ? 'cancelled' : 'failed', message, logLine, answer);
}

/** What went wrong, also when the model API rejects with something that is not an Error. */
function modelErrorText(error: unknown): string {
  if (error instanceof Error || error instanceof McpError) return McpError.from(error).message;
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    return String(error);
  }
}
