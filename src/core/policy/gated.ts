/**
 * The only way to send the five gated requests (tools/call, resources/read, prompts/get,
 * resources/subscribe, completion/complete). A `GatedServer` is one server as one origin (the
 * person, an MCP App, VS Code's chat, the CLI) sees it: it owns the gate's context, the ask
 * callback and the audit sink, computes the audited arguments and the outcome in one place, and
 * sends on the connection's whole client only when the gate allowed the request. The handle hands
 * everyone else a client without those five methods (`ServerClient`), and
 * test/core/structure.test.ts fails when a file outside src/core/policy and src/core/client calls
 * them on the whole one.
 */
import type { Disposable } from 'vscode-jsonrpc/node';
import type { CachingRequestOptions } from '../client/cache';
import type { CallToolOptions, McpClient, ToolCallOutcome } from '../client/client';
import type { RequestOptions } from '../jsonrpc/connection';
import { McpError } from '../protocol/errors';
import type { CompleteParams, CompleteResult, GetPromptResult, ReadResourceResult, Tool } from '../protocol/types';
import type { SubscribeSender } from '../servers/handle';
import type { Caller, RequestTelemetry, TelemetryClient } from './telemetry';
import { completedArguments, type AskReason, type GateContext, type GateRequest } from './gate';
import { runGated, type AskAnswer, type GatedResult, type SendHow } from './run';
import type { GateSession } from './session';
import type { AuditedServer, AuditEntry, AuditSink, Outcome } from './types';

/** Who a gated server sends for; the server's own requests of us are answered elsewhere (./serverRequests.ts). */
export type GatedOrigin = GateContext['origin'];

/** Where gated requests go: a `ServerHandle` (its running connection and its subscriptions), or the CLI's one connection. */
export interface GatedTarget {
  readonly name: string;
  /** The running connection's whole client, gated methods included; undefined while it does not run. */
  readonly rawClient: McpClient | undefined;
  /** Keeps a subscription across restarts (a `ServerHandle`); absent where nothing can be subscribed. */
  subscribeResource?(uri: string, send: SubscribeSender): Promise<Disposable>;
}

export interface GatedServerOptions {
  /**
   * The gate's context for one request, read afresh each time (settings and stored answers change); the origin is the gated
   * server's, the session the request's (a gateway's requests come in sessions). A promise where it must read first (the
   * editor's workspace lock files).
   */
  context(
    request: GateRequest,
    session: GateSession | undefined,
  ): Omit<GateContext, 'origin' | 'session'> | Promise<Omit<GateContext, 'origin' | 'session'>>;
  /** The server as the audit names it. */
  server(): AuditedServer;
  audit?: AuditSink;
  /** The team's telemetry: a span per request, the trace context to the server (./telemetry.ts). */
  telemetry?: RequestTelemetry;
  /** The client the requests come through, unless a request's caller names its own (the chat's VS Code, an agent). */
  client?: TelemetryClient;
  /** Asks the person about every reason at once; absent where nobody can be asked (the chat, the CLI): an `ask` verdict is then refused. */
  ask?(request: GateRequest, reasons: AskReason[], session: GateSession | undefined): Promise<AskAnswer>;
  /** Where `ask` is absent: asks the flow guard's question alone (the chat's calls, ./run.ts `askFlow`). */
  askFlow?(request: GateRequest, reasons: AskReason[], session: GateSession | undefined): Promise<AskAnswer>;
  /** Where nobody can be asked: the refusal's reason, saying what to allow and where (`runGated`'s `refusedUnasked`). */
  refusedUnasked?(request: GateRequest, reasons: AskReason[]): string;
  /** Told of every request the gate refused, with the refusal (the editor says why the fence refused). */
  onRefused?(request: GateRequest, refusal: Extract<GatedResult<unknown>, { sent: false }>): void;
  /** Told of every request the gate let through once it was sent (the editor pins a tool's definition at its first use). */
  onSent?(request: GateRequest): Promise<void>;
  /**
   * Told of every request that was sent and failed (an error, or a result its outcome counts as `isError`), with the error's or
   * the result's text, made when asked for (only a sandboxed server's failure is read).
   */
  onFailed?(request: GateRequest, text: () => string): void;
}

/** What a tool result counts as in the audit. */
function toolOutcome(outcome: ToolCallOutcome): Outcome {
  return outcome.result.isError ? { kind: 'isError' } : { kind: 'ok' };
}

/** How much of a failed result's JSON is handed to `onFailed`: its error text, not a whole document. */
const MAX_FAILURE_TEXT = 16_384;

function failureText(result: unknown): string {
  try {
    return (JSON.stringify(result) ?? '').slice(0, MAX_FAILURE_TEXT);
  } catch {
    return '';
  }
}

/** The arguments as the audit records them (the sink redacts and masks them): a call's or a prompt's, a completion's answers so far. */
function auditedArguments(request: GateRequest): Record<string, unknown> | undefined {
  const args =
    request.method === 'tools/call' || request.method === 'prompts/get'
      ? request.arguments
      : request.method === 'completion/complete'
        ? completedArguments(request.params)
        : undefined;
  return args && Object.keys(args).length ? args : undefined;
}

/** The options a send goes out with: the caller's, plus the run's trace context in `_meta` and its wish for the request id. */
function sentWith<O extends RequestOptions>(options: O | undefined, how: SendHow): O {
  const told = options?.onRequestId;
  return {
    ...options,
    meta: { ...options?.meta, ...how.meta },
    onRequestId: (id) => {
      how.onRequestId(id);
      told?.(id);
    },
  } as O;
}

/** Of one request: the session it came in (a gateway's), who called (trace, conversation, client), and the flow guard's part. */
export interface GatedHow {
  session?: GateSession;
  caller?: Caller;
  /** The flow guard's finding for this call, and its mode (../scan/flowGuard.ts). */
  flow?: GateContext['flow'];
  /** Told of the audit record as appended. */
  onRecord?: (entry: AuditEntry) => void;
}

/** One server as one origin sends to it: every request decided by the gate, asked where the origin can be asked, audited. */
export class GatedServer {
  constructor(
    private readonly target: GatedTarget,
    readonly origin: GatedOrigin,
    private readonly options: GatedServerOptions,
  ) {}

  /** A tool call; the audit counts an `isError` result as such. */
  /** `unlisted`: the server does not list the tool (the CLI calls one by name), so `tool` is a stand-in, not its definition. */
  callTool(
    tool: Tool,
    args: Record<string, unknown>,
    options?: CallToolOptions,
    how: GatedHow & { unlisted?: boolean } = {},
  ): Promise<GatedResult<ToolCallOutcome>> {
    const request: GateRequest = how.unlisted
      ? { method: 'tools/call', tool, arguments: args, unlisted: true }
      : { method: 'tools/call', tool, arguments: args };
    // The definition the gate checked is the one the client validates with and decides the task by (a stand-in is no definition).
    const checked = how.unlisted ? options : { ...options, tool };
    return this.run(request, (client, sent) => client().callTool(tool.name, args, sentWith(checked, sent)), toolOutcome, how);
  }

  /**
   * A tool call whose sending the caller surrounds (the person's progress notification and result
   * document): `around` gets the call, bound to this tool and these arguments, and may send it once;
   * `outcomeOf` says how what it returns counts in the audit.
   */
  callToolAround<T>(
    tool: Tool,
    args: Record<string, unknown>,
    around: (send: (options?: CallToolOptions) => Promise<ToolCallOutcome>) => Promise<T>,
    outcomeOf: (result: T) => Outcome,
  ): Promise<GatedResult<T>> {
    return this.run(
      { method: 'tools/call', tool, arguments: args },
      (client, sent) => around((options) => client().callTool(tool.name, args, sentWith({ ...options, tool }, sent))),
      outcomeOf,
    );
  }

  readResource(uri: string, options?: CachingRequestOptions, how: GatedHow = {}): Promise<GatedResult<ReadResourceResult>> {
    return this.run(
      { method: 'resources/read', uri },
      (client, sent) => client().readResource(uri, sentWith(options, sent)),
      undefined,
      how,
    );
  }

  getPrompt(
    name: string,
    args: Record<string, string>,
    options?: RequestOptions,
    how: GatedHow = {},
  ): Promise<GatedResult<GetPromptResult>> {
    return this.run(
      { method: 'prompts/get', name, arguments: args },
      (client, sent) => client().getPrompt(name, args, sentWith(options, sent)),
      undefined,
      how,
    );
  }

  /** Suggestions while someone types: never asked about (an `ask` verdict refuses it, and no suggestions come). */
  complete(params: CompleteParams, options?: RequestOptions, how: GatedHow = {}): Promise<GatedResult<CompleteResult>> {
    return this.run(
      { method: 'completion/complete', params },
      (client, sent) => client().complete(params, sentWith(options, sent)),
      undefined,
      {
        ...how,
        askable: false,
      },
    );
  }

  /**
   * Keeps `notifications/resources/updated` coming for `uri` until the disposable is disposed. The
   * gate decides now, and again each time the handle sends `resources/subscribe` on a new
   * connection (a restart, a renewed session): each of those is audited, and one the gate refuses
   * then is not sent. Never asked: a subscription follows a read that was (an `ask` verdict refuses it).
   */
  subscribe(uri: string, how: GatedHow = {}): Promise<GatedResult<Disposable>> {
    const request: GateRequest = { method: 'resources/subscribe', uri };
    const subscribeTo = this.target.subscribeResource?.bind(this.target);
    if (!subscribeTo) return Promise.reject(McpError.invalidRequest(`${this.target.name} keeps no subscriptions`));
    let first: SendHow | undefined;
    const send: SubscribeSender = async (client, when) => {
      // The first one is sent inside the run below, which decided it and audits it.
      if (when === 'first') return void (await client.subscribeResource(uri, first && sentWith(undefined, first)));
      const again = await this.run(request, (_, sent) => client.subscribeResource(uri, sentWith(undefined, sent)), undefined, {
        ...how,
        askable: false,
      });
      if (!again.sent) throw McpError.invalidRequest(`the gate refused it: ${again.reason}`);
    };
    // Held also while the server does not run: the handle sends it once it does, through `send`.
    return this.run(
      request,
      (_, sent) => {
        first = sent;
        return subscribeTo(uri, send);
      },
      undefined,
      { ...how, askable: false },
    );
  }

  private async run<T>(
    request: GateRequest,
    /** Sends on the running connection's client, which `client()` gives (it throws while the server does not run). */
    send: (client: () => McpClient, sent: SendHow) => Promise<T>,
    outcomeOf?: (result: T) => Outcome,
    how: GatedHow & { askable?: boolean } = {},
  ): Promise<GatedResult<T>> {
    const { options } = this;
    const ask = options.ask?.bind(options);
    const askFlow = options.askFlow?.bind(options);
    const { session } = how;
    let result: GatedResult<T>;
    try {
      result = await runGated({
        request,
        context: { ...(await options.context(request, session)), origin: this.origin, session, ...(how.flow && { flow: how.flow }) },
        server: options.server(),
        audit: options.audit,
        auditedArguments: auditedArguments(request),
        ask: how.askable === false || !ask ? undefined : (reasons) => ask(request, reasons, session),
        askFlow: how.askable === false || !askFlow ? undefined : (reasons) => askFlow(request, reasons, session),
        refusedUnasked: options.refusedUnasked && ((reasons) => options.refusedUnasked!(request, reasons)),
        onRecord: how.onRecord,
        send: (sent) =>
          send(() => {
            const client = this.target.rawClient;
            if (!client) throw McpError.connectionClosed(`${this.target.name} is not running`);
            return client;
          }, sent),
        outcomeOf,
        telemetry: options.telemetry,
        caller: { ...how.caller, client: how.caller?.client ?? session?.client ?? options.client },
        connection: () => this.target.rawClient?.connectionFacts,
      });
    } catch (error) {
      options.onFailed?.(request, () => McpError.from(error).message);
      throw error;
    }
    if (result.sent && outcomeOf?.(result.result).kind === 'isError') options.onFailed?.(request, () => failureText(result.result));
    if (!result.sent) options.onRefused?.(request, result);
    else await options.onSent?.(request);
    return result;
  }
}
