/**
 * Runs one request through the gate: decide, ask the person when the verdict says so, send only
 * when allowed, and audit how it was decided and how it ended. Every caller (the person's calls,
 * an MCP App's, the chat gateway's, the CLI's) goes through `runGated`, so no path can send a
 * request the gate did not decide on, or send one without its audit line.
 */
import { McpError } from '../protocol/errors';
import { REQUEST_CANCELLED } from '../jsonrpc/connection';
import type { RequestId } from '../protocol/types';
import type { ConnectionFacts } from '../client/client';
import { traceMeta } from '../protocol/traceContext';
import { passThrough, type Caller, type RequestEnding, type RequestSpan, type RequestTelemetry } from './telemetry';
import { decide, type AskReason, type GateContext, type GateRequest } from './gate';
import { toolDefinitionHash } from './pins';
import type { AuditedFlow, AuditedServer, AuditEntry, AuditSink, Decision, FencedPath, Outcome } from './types';

/**
 * The person's answer to an ask: run it this once, run it and remember ("always"), or refuse;
 * `remembered` when nobody was asked now because an earlier answer covers it (audited as allowed-always).
 */
export type AskAnswer = 'once' | 'always' | 'remembered' | 'refuse';

export interface GatedRun<T> {
  request: GateRequest;
  context: GateContext;
  server: AuditedServer;
  /** Where the decision and outcome are recorded; none in tests that do not look. */
  audit?: AuditSink;
  /**
   * Asks the person about every reason at once. An origin nobody can be asked for (the chat's
   * calls, the CLI's) passes none: an `ask` verdict is then refused.
   */
  ask?: (reasons: AskReason[]) => Promise<AskAnswer>;
  /**
   * Asks the person about the flow guard's question only (../scan/flowGuard.ts), where `ask` is
   * absent: the chat, whose calls VS Code confirmed, is asked again when untrusted content came
   * before a sink. Any other reason to ask is still refused there.
   */
  askFlow?: (reasons: AskReason[]) => Promise<AskAnswer>;
  /**
   * Where nobody can be asked (`ask` absent): the refusal's reason, saying what to allow and where
   * (`mcp-host serve` names its flags and its configuration file). A generic reason when absent.
   */
  refusedUnasked?: (reasons: AskReason[]) => string;
  /**
   * Sends the request; called at most once, only when the gate allowed it. `how.meta` goes in the
   * request's `params._meta` (the trace context for the server); `how.onRequestId` is told the id.
   */
  send: (how: SendHow) => Promise<T>;
  /** How a result counts in the audit (a tool result with `isError` is `isError`); `ok` when absent. */
  outcomeOf?: (result: T) => Outcome;
  /** Told of the audit record as appended (the flow guard names a tainting call by its hash, `AuditSink.hashOf`). */
  onRecord?: (entry: AuditEntry) => void;
  /** The arguments as they go in the audit, already passed through the server's secret redactor; the sink masks them. */
  auditedArguments?: unknown;
  /** The team's telemetry (./telemetry.ts): one span per request. None: the caller's trace is passed on unchanged. */
  telemetry?: RequestTelemetry;
  /** Who asked, as far as it is known: the caller's trace context, conversation and client. */
  caller?: Caller;
  /** The connection it went out on, read when the request ended. */
  connection?: () => ConnectionFacts | undefined;
  now?: () => number;
}

/** What `send` puts on the request for the run: the trace context in `_meta`, and who wants its id. */
export interface SendHow {
  meta?: Record<string, string>;
  onRequestId(id: RequestId): void;
}

export type GatedResult<T> =
  { sent: true; decision: Decision; result: T } | { sent: false; decision: Decision; reason: string; fenced?: FencedPath[] };

/** What the audit keeps of arguments over the limits (./limits.ts) instead of them. */
export const OVERSIZED_ARGUMENTS = '[not recorded: over the size or depth limit]';
const MAX_OVERSIZED_NAME = 200;

/** What the audit names a request by: the tool, the prompt or the resource URI. */
export function nameOf(request: GateRequest): string {
  switch (request.method) {
    case 'tools/call':
      return request.tool.name;
    case 'prompts/get':
      return request.name;
    case 'completion/complete': {
      const { ref, argument } = request.params;
      return `${ref.type === 'ref/prompt' ? ref.name : ref.uri} › ${argument.name}`;
    }
    default:
      return request.uri;
  }
}

/** The outcome of a send that threw: cancelled, or an error with its JSON-RPC code. */
export function outcomeOfError(error: unknown): Outcome {
  const e = McpError.from(error);
  return e.code === REQUEST_CANCELLED ? { kind: 'cancelled' } : { kind: 'error', code: e.code };
}

/**
 * Decides, asks, sends and audits one request. A refusal resolves (`sent: false`, with a reason
 * meant for the person or a model to read); an error of the send itself is audited and rethrown.
 */
export async function runGated<T>(run: GatedRun<T>): Promise<GatedResult<T>> {
  const now = run.now ?? Date.now;
  const span = beginSpan(run);
  let verdict: Awaited<ReturnType<typeof decide>>;
  try {
    verdict = await decide(run.request, run.context);
  } catch (error) {
    endSpan(span, { decision: 'refused', outcome: { kind: 'not-sent' }, error });
    throw error;
  }
  // Arguments over the limits are never looked at again: the audit keeps a placeholder and a name cut short.
  const oversized = verdict.kind === 'refuse' && verdict.oversized === true;
  // A call the flow guard held names the record of the call that tainted its session, by its hash (written by now, or waited for).
  const flow = run.request.method === 'tools/call' && run.context.flow?.finding;
  const audited: AuditedFlow | undefined = flow
    ? {
        session: flow.session,
        reason: flow.reason,
        ...(flow.taint.entry && { taintedBy: await run.audit?.hashOf?.(flow.taint.entry as AuditEntry) }),
        ...(flow.carries.length && { carries: flow.carries }),
      }
    : undefined;
  const record = (decision: Decision, outcome: Outcome, ms: number, fenced?: FencedPath[]): void => {
    const entry: AuditEntry = {
      time: new Date(now()).toISOString(),
      origin: run.context.origin,
      server: run.server,
      method: run.request.method,
      name: oversized ? nameOf(run.request).slice(0, MAX_OVERSIZED_NAME) : nameOf(run.request),
      decision,
      outcome,
      ms,
    };
    // The definition the call ran under (./pins.ts), so a record shows which description and schema the tool had then.
    if (run.request.method === 'tools/call' && !run.request.unlisted && !oversized)
      entry.tool = { definition: toolDefinitionHash(run.request.tool) };
    if (oversized) entry.arguments = OVERSIZED_ARGUMENTS;
    else if (run.auditedArguments !== undefined) entry.arguments = run.auditedArguments;
    if (fenced?.length) entry.fenced = fenced;
    if (audited) entry.flow = audited;
    if (span.ids) entry.trace = span.ids;
    if (run.context.session) entry.session = run.context.session.audited();
    run.audit?.append(entry);
    run.onRecord?.(entry);
  };
  /** Refused before anything was sent: audited, and the span ends with the refusal. */
  const refuse = (decision: Decision, reason: string, fenced?: FencedPath[], asked?: AskReason[]): GatedResult<T> => {
    record(decision, { kind: 'not-sent' }, 0, fenced);
    endSpan(span, { decision, outcome: { kind: 'not-sent' }, reason, fenced, asked: asked?.map((r) => r.kind) });
    return { sent: false, decision, reason, fenced };
  };

  let decision: Decision;
  let fenced: FencedPath[] | undefined;
  let asked: AskReason[] | undefined;
  if (verdict.kind === 'refuse') return refuse(verdict.decision, verdict.reason, verdict.fenced);
  if (verdict.kind === 'ask') {
    fenced = verdict.reasons.flatMap((r) => (r.kind === 'outsideRoots' ? r.findings : []));
    asked = verdict.reasons;
    const onlyFlow = verdict.reasons.every((r) => r.kind === 'untrustedFlow');
    const ask = run.ask ?? (onlyFlow ? run.askFlow : undefined);
    if (!ask) {
      const reason =
        flow && onlyFlow
          ? `held by MCP Host's flow guard, and nobody can be asked for this request: ${flow.reason}`
          : (run.refusedUnasked?.(verdict.reasons) ??
            (fenced.length
              ? `outside the roots, and nobody can be asked for a ${run.context.origin} request`
              : 'it needs the person to confirm it, and nobody can be asked for this request'));
      return refuse('refused', reason, fenced, asked);
    }
    let answer: AskAnswer;
    try {
      answer = await ask(verdict.reasons);
    } catch (error) {
      endSpan(span, { decision: 'refused', outcome: { kind: 'not-sent' }, error, asked: asked.map((r) => r.kind) });
      throw error;
    }
    if (answer === 'refuse') {
      const reason = flow ? `the person refused it after MCP Host's flow guard asked: ${flow.reason}` : 'the person refused it';
      return refuse('asked-refused', reason, fenced, asked);
    }
    decision = answer === 'remembered' ? 'allowed-always' : 'asked-allowed';
  } else decision = verdict.decision;

  let requestId: RequestId | undefined;
  const how: SendHow = {
    meta: traceMeta(span.propagated),
    onRequestId: (id) => void (requestId ??= id),
  };
  const started = now();
  const ended = (outcome: Outcome, more: Pick<RequestEnding, 'result' | 'error'>): void => {
    const ms = now() - started;
    record(decision, outcome, ms, fenced);
    endSpan(span, {
      decision,
      outcome,
      asked: asked?.map((r) => r.kind),
      requestId,
      connection: connectionOf(run),
      sentMs: ms,
      ...more,
    });
  };
  let result: T;
  try {
    result = await run.send(how);
  } catch (error) {
    ended(outcomeOfError(error), { error });
    throw error;
  }
  ended(run.outcomeOf?.(result) ?? { kind: 'ok' }, { result });
  return { sent: true, decision, result };
}

/** The request's span; telemetry that throws costs the span, never the request. */
function beginSpan<T>(run: GatedRun<T>): RequestSpan {
  const start = { ...run.caller, request: run.request, origin: run.context.origin, server: run.server };
  try {
    return (run.telemetry ?? passThrough).begin(start);
  } catch {
    return passThrough.begin(start);
  }
}

function endSpan(span: RequestSpan, ending: RequestEnding): void {
  try {
    span.end(ending);
  } catch {
    // The request is done whatever the span does.
  }
}

function connectionOf<T>(run: GatedRun<T>): ConnectionFacts | undefined {
  try {
    return run.connection?.();
  } catch {
    return undefined;
  }
}
