/**
 * A gateway's requests, forwarded to one server's connection through the gate: every tools/call,
 * resources/read, resources/subscribe, prompts/get and completion/complete goes through the
 * `GatedServer` of the forwarder's origin (../policy/gated.ts), `chat` for VS Code's chat, `agent`
 * for an agent (connected to the editor, or the client of `mcp-host serve`), so the fence, the deny
 * lists, the pins and the audit apply to them exactly as they do to everyone else. Who is asked is
 * the shared server's to say (./shared.ts): nobody for the chat (VS Code confirmed the call itself)
 * and for `serve` (refused, saying what to allow), the person in the editor for a connected agent.
 * One forwarder per server and origin serves every session; each request names its session. No SDK
 * here: the wire side is ./wire.ts.
 */
import type { Disposable } from 'vscode-jsonrpc/node';
import { REQUEST_CANCELLED } from '../jsonrpc/connection';
import { GatedServer } from '../policy/gated';
import type { Caller } from '../policy/telemetry';
import { traceContextOf } from '../protocol/traceContext';
import { SessionKey, type GateSession } from '../policy/session';
import { outcomeOfError } from '../policy/run';
import { isTrustedReadOnly } from '../policy/gate';
import type { AuditEntry, Outcome } from '../policy/types';
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
import type { ServerClient } from '../client/client';
import {
  errorForChat,
  listForChat,
  promptForChat,
  promptText,
  readForChat,
  readText,
  refusedResult,
  resultForChat,
  resultText,
  toolsForChat,
} from './forChat';
import { FlowGuard, promptLabels, resourceLabels, toolLabels, type FlowFinding, type FlowResult } from '../scan/flowGuard';
import { invisibleRemoved } from '../scan/mask';
import type { Masker } from '../policy/types';
import { findTool, runningClient, type SharedServer } from './shared';

export interface ForwardOptions {
  /** Aborted when the client cancels the request (or its session ends): the upstream request is cancelled too. */
  signal: AbortSignal;
  /** The session the request came in (the audit names it; the editor asks naming its agent). */
  session?: GateSession;
  /** The chat asked for progress: the upstream's progress goes to it. */
  onProgress?: (progress: Omit<ProgressNotificationParams, 'progressToken'>) => void;
  /**
   * The chat's trace context, conversation and client (VS Code), from the request's `_meta` and the
   * session's initialize. The conversation is also the flow guard's session; every call of this
   * window's chat without one is one session (`CHAT_WITHOUT_CONVERSATION`), so a flow across two
   * servers is still seen.
   */
  caller?: Caller;
}

/** The longest conversation id taken from `_meta` (VS Code's are UUIDs). */
const MAX_CONVERSATION_ID = 200;

/**
 * Who a gateway's request came from, as telemetry and the flow guard name it: its
 * `_meta.traceparent`/`tracestate` (VS Code's chat, or an agent that traces), VS Code's
 * `vscode.conversationId`, its client.
 */
export function callerOf(meta: unknown, client: { name?: unknown; version?: unknown } | undefined): Caller {
  const caller: Caller = {};
  const trace = traceContextOf(meta);
  if (trace) caller.trace = trace;
  const conversation = typeof meta === 'object' && meta !== null ? (meta as Record<string, unknown>)['vscode.conversationId'] : undefined;
  if (typeof conversation === 'string' && conversation) caller.conversationId = conversation.slice(0, MAX_CONVERSATION_ID);
  if (typeof client?.name === 'string')
    caller.client = {
      name: client.name.slice(0, MAX_CONVERSATION_ID),
      ...(typeof client.version === 'string' ? { version: client.version.slice(0, 50) } : {}),
    };
  return caller;
}

/** An agent's flow guard, in its session's own state: one history per connection, gone with it. */
const AGENT_FLOW = new SessionKey('flow guard', () => new FlowGuard({ maxSessions: 1 }));

/**
 * The flow guard and its session of a request. The chat's: its conversation (VS Code's
 * `vscode.conversationId`) in the window's guard; every call of this window's chat without one is
 * one session, so a flow across two servers is still seen. An agent's: its connection, whatever its
 * `_meta` says (an agent that named a fresh conversation for its next call would start it clean).
 */
function flowSessionOf(origin: GatewayOrigin, guard: FlowGuard, options: ForwardOptions): { guard: FlowGuard; key: string } {
  if (origin === 'agent')
    return options.session ? { guard: options.session.state(AGENT_FLOW), key: 'connection' } : { guard, key: 'agent' };
  const conversation = options.caller?.conversationId;
  return { guard, key: conversation ? `chat:${conversation}` : CHAT_WITHOUT_CONVERSATION };
}

/**
 * The session whose content counts for a chat session too: VS Code names no conversation on
 * resources/read and prompts/get, so what they bring may be in any conversation of the window.
 */
function windowSessionOf(session: string): string | undefined {
  return session.startsWith('chat:') ? CHAT_WITHOUT_CONVERSATION : undefined;
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

/** A list a client holds that can go out of date without the server saying so. */
export type StaleList = 'tools' | 'prompts';

function refusal(method: string, name: string, reason: string): McpError {
  return new McpError(ErrorCode.InvalidRequest, `MCP Host refused ${method} ${name}: ${reason}`);
}

/** The flow guard's session of the chat's calls that name no conversation. */
export const CHAT_WITHOUT_CONVERSATION = 'chat:no-conversation';

/** The origins whose requests come through a gateway. */
export type GatewayOrigin = 'chat' | 'agent';

/** One server's requests from one origin's clients (one per server and origin, shared by every session). */
export class Forwarder {
  private readonly staleListeners = new Set<(list: StaleList) => void>();
  private readonly gate: GatedServer;

  constructor(
    readonly shared: SharedServer,
    readonly origin: GatewayOrigin = 'chat',
  ) {
    this.gate = new GatedServer(shared.handle, origin, {
      context: async (request, session) => {
        if (request.method === 'tools/call' || request.method === 'prompts/get') await shared.pinsReady?.();
        const context = shared.gateContext(session);
        if (request.method === 'tools/call') {
          context.listedReadOnly = shared.toldReadOnly.has(request.tool.name);
          context.pin = shared.pinOf?.(request.tool);
        } else if (request.method === 'prompts/get') {
          const prompt = shared.handle.prompts.find((p) => p.name === request.name);
          context.pin = prompt && shared.promptPinOf?.(prompt);
        }
        return context;
      },
      server: () => shared.audited(),
      audit: shared.audit,
      // VS Code confirmed the call; when the flow guard holds it, the person is asked again, naming what came before.
      askFlow: async (request, reasons) => {
        const finding = reasons.find((r): r is { kind: 'untrustedFlow'; finding: FlowFinding } => r.kind === 'untrustedFlow')?.finding;
        if (!finding || !shared.flow?.ask || request.method !== 'tools/call') return 'refuse';
        const run = await shared.flow.ask({ server: shared.handle.name, tool: request.tool.name, args: request.arguments, finding });
        return run ? 'once' : 'refuse';
      },
      telemetry: shared.telemetry,
      ask: shared.ask && ((request, reasons, session) => shared.ask!(request, reasons, session)),
      refusedUnasked: shared.refusedUnasked && ((request, reasons) => shared.refusedUnasked!(request, reasons)),
    });
  }

  /** The masker of what the chat reads, with the invisible characters of a server's text removed (a model reads them, a person does not see them). */
  private masker(): Masker {
    return invisibleRemoved(this.shared.masker());
  }

  /**
   * A client's list of the tools or prompts is out of date in a way that matters (a read-only mark MCP
   * Host no longer gives, a definition suspended or accepted): its sessions are told to list again.
   */
  onListStale(listener: (list: StaleList) => void): Disposable {
    this.staleListeners.add(listener);
    return { dispose: () => void this.staleListeners.delete(listener) };
  }

  /**
   * What the clients may see changed without the server saying so (a pin taken, found changed or
   * accepted): they are sent tools/list_changed or prompts/list_changed.
   */
  listChanged(list: StaleList): void {
    for (const l of this.staleListeners) l(list);
  }

  /** What goes to the client when a request fails: the error with its message masked (a server may echo a secret in it). */
  private masked<T>(run: () => Promise<T>): Promise<T> {
    return run().catch((error: unknown) => {
      throw errorForChat(error, this.masker());
    });
  }

  /** The running client, waited for while the server comes back; the gated requests then go through `gate`. */
  private client(signal?: AbortSignal): Promise<ServerClient> {
    return runningClient(this.shared.handle, this.shared.requestTimeoutMs, signal);
  }

  listTools(options?: Pick<ForwardOptions, 'signal'>): Promise<Tool[]> {
    return this.masked(async () => listForChat(await this.offeredTools(options), this.masker()));
  }

  private async offeredTools(options?: Pick<ForwardOptions, 'signal'>): Promise<Tool[]> {
    const client = await this.client(options?.signal);
    const { handle } = this.shared;
    // The handle keeps the list fresh (list_changed); ask the server only when it has none yet.
    const tools = handle.tools.length || !client.serverCapabilities?.tools ? handle.tools : await client.listTools();
    const offered = toolsForChat(tools, this.shared.gateContext(undefined).policy, this.shared.pinOf && ((t) => this.shared.pinOf!(t)));
    this.shared.toldReadOnly.told(offered.map((t) => ({ name: t.name, readOnly: t.annotations?.readOnlyHint === true })));
    return offered;
  }

  /** A call, decided by the gate; a refusal, and a failure of the server, come back as an `isError` result the model can read. */
  async callTool(name: string, args: Record<string, unknown>, options: ForwardOptions): Promise<CallToolResult> {
    const { handle } = this.shared;
    const at = Date.now();
    const told = (outcome: Outcome, refused?: string, held?: string): void =>
      this.shared.onCall?.({
        session: options.session,
        server: handle.name,
        tool: name,
        args,
        at,
        ms: Date.now() - at,
        outcome,
        refused,
        ...(held !== undefined && { held }),
      });
    let client: ServerClient;
    try {
      client = await this.client(options.signal);
    } catch (error) {
      const e = McpError.from(error);
      if (e.code === REQUEST_CANCELLED) throw e;
      told(outcomeOfError(e));
      return resultForChat(refusedResult(handle.name, name, e.message), this.masker());
    }
    const masker = this.masker();
    try {
      const tool = await findTool(handle, client, name);
      if (!tool) {
        told({ kind: 'not-sent' }, 'no such tool');
        return refusedResult(handle.name, name, `${handle.name} has no tool named ${JSON.stringify(name)}`);
      }
      // The flow guard: the session's history decides whether this sink call is held (../scan/flowGuard.ts).
      const flow = this.shared.flow;
      const mode = flow?.mode() ?? 'off';
      const flowAt = flow && mode !== 'off' ? flowSessionOf(this.origin, flow.guard, options) : undefined;
      const pinned = this.shared.pinOf?.(tool);
      const labels = flowAt
        ? toolLabels(
            tool,
            handle.definition.flowLabels,
            handle.definition.trustAnnotations && (pinned === undefined || pinned.status === 'same'),
          )
        : undefined;
      const finding = labels && flowAt!.guard.check(flowAt!.key, { labels, arguments: args }, windowSessionOf(flowAt!.key));
      let entry: AuditEntry | undefined;
      const run = await this.gate.callTool(
        tool,
        args,
        {
          signal: options.signal,
          onProgress:
            options.onProgress &&
            ((p) =>
              options.onProgress!({
                progress: p.progress,
                total: p.total,
                message: p.message === undefined ? undefined : masker.maskText(p.message).text,
              })),
          resetTimeoutOnProgress: true,
          timeoutMs: this.shared.requestTimeoutMs,
        },
        {
          session: options.session,
          caller: options.caller,
          flow: finding && mode !== 'off' ? { mode, finding } : undefined,
          onRecord: (e) => (entry = e),
        },
      );
      const pin = this.shared.pinOf?.(tool);
      if (!run.sent) {
        told({ kind: 'not-sent' }, run.reason);
        // The client's list said read-only when MCP Host no longer does, or offers a tool now suspended: it is told to list again.
        if (
          (this.shared.toldReadOnly.has(name) && !isTrustedReadOnly(tool, this.shared.handle.definition, pin)) ||
          pin?.status === 'changed'
        )
          this.listChanged('tools');
        return resultForChat(refusedResult(handle.name, name, run.reason), masker);
      }
      if (pin?.status === 'new') this.shared.pinUsed?.(tool);
      const { result } = run.result;
      told(result.isError ? { kind: 'isError' } : { kind: 'ok' }, undefined, finding?.reason);
      const forChat = resultForChat(result, masker);
      if (labels) {
        const read = resultText(forChat);
        const unmasked = resultText(result);
        flowAt!.guard.record(flowAt!.key, {
          server: handle.name,
          tool: name,
          kind: 'tool',
          labels,
          text: read,
          unmasked,
          maskedSecret: read !== unmasked && /\[masked: /.test(read),
          entry,
        });
      }
      return forChat;
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

  listResources(options?: Pick<ForwardOptions, 'signal'>): Promise<Resource[]> {
    return this.masked(async () => {
      const client = await this.client(options?.signal);
      return listForChat(await listOrEmpty(() => client.listResources()), this.masker());
    });
  }

  listResourceTemplates(options?: Pick<ForwardOptions, 'signal'>): Promise<ResourceTemplate[]> {
    return this.masked(async () => {
      const client = await this.client(options?.signal);
      return listForChat(await listOrEmpty(() => client.listResourceTemplates()), this.masker());
    });
  }

  readResource(uri: string, options: ForwardOptions): Promise<ReadResourceResult> {
    return this.masked(async () => {
      await this.client(options.signal);
      let entry: AuditEntry | undefined;
      const how = { session: options.session, caller: options.caller, onRecord: (e: AuditEntry) => (entry = e) };
      const run = await this.gate.readResource(uri, { signal: options.signal }, how);
      if (!run.sent) throw refusal('resources/read', uri, run.reason);
      const forChat = readForChat(run.result, this.masker());
      const labels = resourceLabels(this.shared.handle.definition.flowLabels);
      this.recordFlow(options, { tool: uri, kind: 'resource', labels, text: readText(forChat), unmasked: readText(run.result), entry });
      return forChat;
    });
  }

  /** Subscribes through the handle (one subscription per URI however many hold it); the returned disposable unsubscribes. */
  subscribe(uri: string, options: ForwardOptions): Promise<Disposable> {
    return this.masked(async () => {
      await this.client(options.signal);
      const run = await this.gate.subscribe(uri, { session: options.session, caller: options.caller });
      if (!run.sent) throw refusal('resources/subscribe', uri, run.reason);
      return run.result;
    });
  }

  listPrompts(options?: Pick<ForwardOptions, 'signal'>): Promise<Prompt[]> {
    return this.masked(async () => {
      const client = await this.client(options?.signal);
      const prompts = await listOrEmpty(() => client.listPrompts());
      // A prompt changed since the person approved it is not offered until they accept the change.
      const offered = prompts.filter((p) => this.shared.promptPinOf?.(p)?.status !== 'changed');
      return listForChat(offered, this.masker());
    });
  }

  getPrompt(name: string, args: Record<string, string>, options: ForwardOptions): Promise<GetPromptResult> {
    return this.masked(async () => {
      await this.client(options.signal);
      let entry: AuditEntry | undefined;
      const how = { session: options.session, caller: options.caller, onRecord: (e: AuditEntry) => (entry = e) };
      const run = await this.gate.getPrompt(name, args, { signal: options.signal }, how);
      if (!run.sent) {
        // The client offers a prompt now suspended: it is told to list the prompts again.
        const prompt = this.shared.handle.prompts.find((p) => p.name === name);
        if (prompt && this.shared.promptPinOf?.(prompt)?.status === 'changed') this.listChanged('prompts');
        throw refusal('prompts/get', name, run.reason);
      }
      const forChat = promptForChat(run.result, this.masker());
      const labels = promptLabels(this.shared.handle.definition.flowLabels);
      this.recordFlow(options, { tool: name, kind: 'prompt', labels, text: promptText(forChat), unmasked: promptText(run.result), entry });
      return forChat;
    });
  }

  /** A resource read or a prompt's messages, recorded by the flow guard as a tool's result is: what addresses the model taints, what is private is indexed. */
  private recordFlow(options: ForwardOptions, result: Omit<FlowResult, 'server'>): void {
    const flow = this.shared.flow;
    if (!flow || flow.mode() === 'off') return;
    const at = flowSessionOf(this.origin, flow.guard, options);
    at.guard.record(at.key, { ...result, server: this.shared.handle.name });
  }

  /** Completion values are offered to the client as text: masked like everything else it reads. */
  complete(params: CompleteParams, options: ForwardOptions): Promise<CompleteResult> {
    return this.masked(async () => {
      await this.client(options.signal);
      const run = await this.gate.complete(params, { signal: options.signal }, { session: options.session, caller: options.caller });
      if (!run.sent) throw refusal('completion/complete', params.argument.name, run.reason);
      return this.masker().maskValue(run.result).value;
    });
  }
}
