/**
 * The one hook through which the gate's run path (./run.ts) tells a team's telemetry about
 * each gated request: `begin` when the gate starts deciding, `end` once it was refused, or sent and
 * answered. Every origin's requests (the person's, an MCP App's, the chat's, the CLI's, an agent's)
 * pass `runGated`, so whoever builds a `GatedServer` with a `RequestTelemetry` exports them all.
 *
 * Nothing here loads OpenTelemetry: `passThrough` is what runs when nothing is exported (it passes
 * a caller's trace context on unchanged), and the exporter that speaks OTLP lives in its own
 * bundle, loaded only once an endpoint is configured (../telemetry/load.ts, ../telemetry/otel.ts).
 */
import type { ConnectionFacts } from '../client/client';
import type { RequestId } from '../protocol/types';
import type { TraceContext } from '../protocol/traceContext';
import type { GateRequest } from './gate';
import type { AuditedServer, Decision, Origin, Outcome } from './types';

/** The client a request came through: VS Code for the chat, an agent for `serve`, MCP Host itself for the person and the CLI. */
export interface TelemetryClient {
  name: string;
  version?: string;
}

/** What the caller of a gated request brings: its trace, its conversation, its client. All optional. */
export interface Caller {
  /** The trace the caller's request carried in `_meta` (checked with `traceContextOf`): MCP Host's span continues it. */
  trace?: TraceContext;
  /** The chat's conversation (`_meta["vscode.conversationId"]`), as `gen_ai.conversation.id`. */
  conversationId?: string;
  client?: TelemetryClient;
}

export interface RequestStart extends Caller {
  request: GateRequest;
  origin: Exclude<Origin, 'server'> | (string & {});
  server: AuditedServer;
}

export interface RequestEnding {
  decision: Decision;
  outcome: Outcome;
  /** Why the gate refused it (meant for a person), when it did. */
  reason?: string;
  /** Where the fence found paths outside the roots: their pointers go out, their values only with the arguments. */
  fenced?: ReadonlyArray<{ pointer: string }>;
  /** What the person was asked about, when they were. */
  asked?: string[];
  /** The id the request went out with. */
  requestId?: RequestId;
  connection?: ConnectionFacts;
  /** From the moment it was sent to its answer, in milliseconds. */
  sentMs?: number;
  /** The result, for `gen_ai.tool.call.result` where arguments are exported (masked there). */
  result?: unknown;
  /** The send's error: its message is the span's status (masked). */
  error?: unknown;
}

/** One gated request's span. */
export interface RequestSpan {
  /** What goes to the server in `params._meta`: this span's context, or the caller's unchanged when nothing is exported. */
  readonly propagated: TraceContext | undefined;
  /** The ids an audit record of the request carries, so a record and its span can be joined; absent when nothing is exported. */
  readonly ids?: { traceId: string; spanId: string };
  end(ending: RequestEnding): void;
}

/** The hook. An implementation never throws into the call and never waits for the network. */
export interface RequestTelemetry {
  begin(start: RequestStart): RequestSpan;
}

/** Nothing is exported: the caller's trace goes on to the server as it came (W3C's rule for a hop that does not take part). */
export const passThrough: RequestTelemetry = {
  begin: (start) => ({ propagated: start.trace, end: () => undefined }),
};
