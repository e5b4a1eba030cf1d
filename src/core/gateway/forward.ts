/**
 * The gateway's requests, forwarded to the person's connection of one shared server through the
 * gate: every tools/call, resources/read, resources/subscribe, prompts/get and completion/complete runs `runGated` with
 * origin `chat` and nobody to ask (VS Code confirmed the call itself), so the fence, the deny
 * lists and the audit apply to the chat exactly as they do to everyone else. No SDK here: the
 * wire side is ./sdkGateway.ts.
 */
import type { Disposable } from 'vscode-jsonrpc/node';
import { REQUEST_CANCELLED } from '../jsonrpc/connection';
import { outcomeOfError, runGated } from '../policy/run';
import { isTrustedReadOnly, type GateRequest } from '../policy/gate';
import type { Outcome } from '../policy/types';
import { ErrorCode, McpError } from '../protocol/errors';
import type {
  CallToolResult,
  CompleteParams,
  CompleteResult,
  GetPromptResult,
  ProgressNotificationParams,
  Prompt,
  ReadResourceResult,
  Resource,
  ResourceTemplate,
  Tool,
} from '../protocol/types';
import type { McpClient } from '../client/client';
import { promptForChat, readForChat, refusedResult, resultForChat, toolsForChat } from './forChat';
import { findTool, runningClient, type SharedServer } from './shared';

export interface ForwardOptions {
  /** Aborted when the chat cancels the request (or its session ends): the upstream request is cancelled too. */
  signal: AbortSignal;
  /** The chat asked for progress: the upstream's progress goes to it. */
  onProgress?: (progress: Omit<ProgressNotificationParams, 'progressToken'>) => void;
}

const isCapabilityDisabled = (error: unknown): boolean => McpError.from(error).kind?.type === 'capabilityDisabled';

/** A list of a capability the server lacks is empty for the chat, not an error. */
async function listOrEmpty<T>(list: () => Promise<T[]>): Promise<T[]> {
  try {
    return await list();
  } catch (error) {
    if (isCapabilityDisabled(error)) return [];
    throw error;
  }
}

function refusal(method: string, name: string, reason: string): McpError {
  return new McpError(ErrorCode.InvalidRequest, `MCP Host refused ${method} ${name}: ${reason}`);
}

/** One shared server's requests from the chat (one per server, shared by every session of the chat). */
export class ChatForwarder {
  private readonly staleListeners = new Set<() => void>();

  constructor(readonly shared: SharedServer) {}

  /** VS Code's list of the tools is out of date in a way that matters (a read-only mark MCP Host no longer gives): its sessions are told to list again. */
  onToolsStale(listener: () => void): Disposable {
    this.staleListeners.add(listener);
    return { dispose: () => void this.staleListeners.delete(listener) };
  }

  /** The tools the chat may see changed without the server saying so (a pin taken or accepted): VS Code is sent tools/list_changed. */
  toolsChanged(): void {
    for (const l of this.staleListeners) l();
  }

  private client(signal?: AbortSignal): Promise<McpClient> {
    return runningClient(this.shared.handle, this.shared.requestTimeoutMs, signal);
  }

  private gated<T>(request: GateRequest, send: () => Promise<T>, outcomeOf?: (r: T) => Outcome, auditedArguments?: unknown) {
    const context = this.shared.gateContext();
    if (request.method === 'tools/call') {
      context.chatSawReadOnly = this.shared.toldReadOnly.has(request.tool.name);
      context.pin = this.shared.pinOf?.(request.tool);
    } else if (request.method === 'prompts/get') {
      const prompt = this.shared.handle.prompts.find((p) => p.name === request.name);
      context.pin = prompt && this.shared.promptPinOf?.(prompt);
    }
    return runGated({
      request,
      context,
      server: this.shared.audited(),
      audit: this.shared.audit,
      send,
      outcomeOf,
      auditedArguments,
    });
  }

  async listTools(options?: Pick<ForwardOptions, 'signal'>): Promise<Tool[]> {
    const client = await this.client(options?.signal);
    const { handle } = this.shared;
    // The handle keeps the list fresh (list_changed); ask the server only when it has none yet.
    const tools = handle.tools.length || !client.serverCapabilities?.tools ? handle.tools : await client.listTools();
    const offered = toolsForChat(tools, this.shared.gateContext().policy, this.shared.pinOf && ((t) => this.shared.pinOf!(t)));
    this.shared.toldReadOnly.told(offered.map((t) => ({ name: t.name, readOnly: t.annotations?.readOnlyHint === true })));
    return offered;
  }

  /** A call, decided by the gate; a refusal, and a failure of the server, come back as an `isError` result the model can read. */
  async callTool(name: string, args: Record<string, unknown>, options: ForwardOptions): Promise<CallToolResult> {
    const { handle } = this.shared;
    const at = Date.now();
    const told = (outcome: Outcome, refused?: string): void =>
      this.shared.onChatCall?.({ server: handle.name, tool: name, args, at, outcome, refused });
    let client: McpClient;
    try {
      client = await this.client(options.signal);
    } catch (error) {
      const e = McpError.from(error);
      if (e.code === REQUEST_CANCELLED) throw e;
      told(outcomeOfError(e));
      return refusedResult(handle.name, name, e.message);
    }
    const masker = this.shared.masker();
    try {
      const tool = await findTool(handle, client, name);
      if (!tool) {
        told({ kind: 'not-sent' }, 'no such tool');
        return refusedResult(handle.name, name, `${handle.name} has no tool named ${JSON.stringify(name)}`);
      }
      const run = await this.gated(
        { method: 'tools/call', tool, arguments: args },
        async () =>
          (
            await client.callTool(name, args, {
              signal: options.signal,
              onProgress: options.onProgress && ((p) => options.onProgress!({ progress: p.progress, total: p.total, message: p.message })),
              resetTimeoutOnProgress: true,
              timeoutMs: this.shared.requestTimeoutMs,
            })
          ).result,
        (r) => (r.isError ? { kind: 'isError' } : { kind: 'ok' }),
        // The audit sink redacts the server's secrets and masks before it writes.
        args,
      );
      const pin = this.shared.pinOf?.(tool);
      if (!run.sent) {
        told({ kind: 'not-sent' }, run.reason);
        // VS Code's list said read-only when MCP Host no longer does, or offers a tool now suspended: it is told to list again.
        if (
          (this.shared.toldReadOnly.has(name) && !isTrustedReadOnly(tool, this.shared.handle.definition, pin)) ||
          pin?.status === 'changed'
        )
          this.toolsChanged();
        return refusedResult(handle.name, name, run.reason);
      }
      if (pin?.status === 'new') this.shared.pinUsed?.(tool);
      told(run.result.isError ? { kind: 'isError' } : { kind: 'ok' });
      return resultForChat(run.result, masker);
    } catch (error) {
      const e = McpError.from(error);
      told(outcomeOfError(e));
      if (e.code === REQUEST_CANCELLED) throw e;
      const message = masker.maskText(e.message).text;
      const why =
        e.code === ErrorCode.ConnectionClosed ? `${handle.name} stopped during the call (${message}); it was not retried` : message;
      return { content: [{ type: 'text', text: `${handle.name} › ${name} failed: ${why}` }], isError: true };
    }
  }

  async listResources(options?: Pick<ForwardOptions, 'signal'>): Promise<Resource[]> {
    const client = await this.client(options?.signal);
    return listOrEmpty(() => client.listResources());
  }

  async listResourceTemplates(options?: Pick<ForwardOptions, 'signal'>): Promise<ResourceTemplate[]> {
    const client = await this.client(options?.signal);
    return listOrEmpty(() => client.listResourceTemplates());
  }

  async readResource(uri: string, options: ForwardOptions): Promise<ReadResourceResult> {
    const client = await this.client(options.signal);
    const run = await this.gated({ method: 'resources/read', uri }, () => client.readResource(uri, { signal: options.signal }));
    if (!run.sent) throw refusal('resources/read', uri, run.reason);
    return readForChat(run.result, this.shared.masker());
  }

  /** Subscribes through the handle (one subscription per URI however many hold it); the returned disposable unsubscribes. */
  async subscribe(uri: string, options: ForwardOptions): Promise<Disposable> {
    const { handle } = this.shared;
    await this.client(options.signal);
    let held: Disposable | undefined;
    const run = await this.gated({ method: 'resources/subscribe', uri }, async () => {
      held = handle.subscribeResource(uri);
    });
    if (!run.sent || !held) throw refusal('resources/subscribe', uri, run.sent ? 'not subscribed' : run.reason);
    return held;
  }

  async listPrompts(options?: Pick<ForwardOptions, 'signal'>): Promise<Prompt[]> {
    const client = await this.client(options?.signal);
    const prompts = await listOrEmpty(() => client.listPrompts());
    // A prompt changed since the person approved it is not offered until they accept the change.
    return prompts.filter((p) => this.shared.promptPinOf?.(p).status !== 'changed');
  }

  async getPrompt(name: string, args: Record<string, string>, options: ForwardOptions): Promise<GetPromptResult> {
    const client = await this.client(options.signal);
    const run = await this.gated({ method: 'prompts/get', name, arguments: args }, () =>
      client.getPrompt(name, args, { signal: options.signal }),
    );
    if (!run.sent) throw refusal('prompts/get', name, run.reason);
    return promptForChat(run.result, this.shared.masker());
  }

  /** Completion values are offered to the chat as text: masked like everything else it reads. */
  async complete(params: CompleteParams, options: ForwardOptions): Promise<CompleteResult> {
    const client = await this.client(options.signal);
    const run = await this.gated({ method: 'completion/complete', params }, () => client.complete(params, { signal: options.signal }));
    if (!run.sent) throw refusal('completion/complete', params.argument.name, run.reason);
    const result = run.result;
    const masker = this.shared.masker();
    return { ...result, completion: { ...result.completion, values: result.completion.values.map((v) => masker.maskText(v).text) } };
  }
}
