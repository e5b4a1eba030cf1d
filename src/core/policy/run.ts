/**
 * Runs one request through the gate: decide, ask the person when the verdict says so, send only
 * when allowed, and audit how it was decided and how it ended. Every caller (the person's calls,
 * an MCP App's, the chat gateway's, the CLI's) goes through `runGated`, so no path can send a
 * request the gate did not decide on, or send one without its audit line.
 */
import { McpError } from '../protocol/errors';
import { REQUEST_CANCELLED } from '../jsonrpc/connection';
import { decide, type AskReason, type GateContext, type GateRequest } from './gate';
import { toolDefinitionHash } from './pins';
import type { AuditedServer, AuditEntry, AuditSink, Decision, FencedPath, Outcome } from './types';

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
   * Where nobody can be asked (`ask` absent): the refusal's reason, saying what to allow and where
   * (`mcp-host serve` names its flags and its configuration file). A generic reason when absent.
   */
  refusedUnasked?: (reasons: AskReason[]) => string;
  /** Sends the request; called at most once, only when the gate allowed it. */
  send: () => Promise<T>;
  /** How a result counts in the audit (a tool result with `isError` is `isError`); `ok` when absent. */
  outcomeOf?: (result: T) => Outcome;
  /** The arguments as they go in the audit, already passed through the server's secret redactor; the sink masks them. */
  auditedArguments?: unknown;
  now?: () => number;
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
  const verdict = await decide(run.request, run.context);
  // Arguments over the limits are never looked at again: the audit keeps a placeholder and a name cut short.
  const oversized = verdict.kind === 'refuse' && verdict.oversized === true;
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
    if (run.context.session) entry.session = run.context.session.audited();
    run.audit?.append(entry);
  };

  let decision: Decision;
  let fenced: FencedPath[] | undefined;
  if (verdict.kind === 'refuse') {
    record(verdict.decision, { kind: 'not-sent' }, 0, verdict.fenced);
    return { sent: false, decision: verdict.decision, reason: verdict.reason, fenced: verdict.fenced };
  }
  if (verdict.kind === 'ask') {
    fenced = verdict.reasons.flatMap((r) => (r.kind === 'outsideRoots' ? r.findings : []));
    if (!run.ask) {
      const reason =
        run.refusedUnasked?.(verdict.reasons) ??
        (fenced.length
          ? `outside the roots, and nobody can be asked for a ${run.context.origin} request`
          : 'it needs the person to confirm it, and nobody can be asked for this request');
      record('refused', { kind: 'not-sent' }, 0, fenced);
      return { sent: false, decision: 'refused', reason, fenced };
    }
    const answer = await run.ask(verdict.reasons);
    if (answer === 'refuse') {
      record('asked-refused', { kind: 'not-sent' }, 0, fenced);
      return { sent: false, decision: 'asked-refused', reason: 'the person refused it', fenced };
    }
    decision = answer === 'remembered' ? 'allowed-always' : 'asked-allowed';
  } else decision = verdict.decision;

  const started = now();
  let result: T;
  try {
    result = await run.send();
  } catch (error) {
    record(decision, outcomeOfError(error), now() - started, fenced);
    throw error;
  }
  record(decision, run.outcomeOf?.(result) ?? { kind: 'ok' }, now() - started, fenced);
  return { sent: true, decision, result };
}
