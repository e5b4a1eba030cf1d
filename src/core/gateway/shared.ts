/**
 * A server as a gateway's clients see it (VS Code's chat, an agent, the client of `mcp-host
 * serve`): the running handle (in the editor the person's own, so the same process or HTTP session
 * serves everyone), the policy that decides each of the clients' requests, who is asked about what,
 * and where those requests are recorded. Editor-free: the editor layer builds one per shared server
 * and origin (src/vscode/gateway/), `serve` one per server of its configuration (src/cli/serve.ts),
 * the plain-Node tests theirs from a real `ServerHandle`.
 */
import type { ServerClient } from '../client/client';
import { REQUEST_CANCELLED } from '../jsonrpc/connection';
import { ErrorCode, McpError } from '../protocol/errors';
import type { Prompt, Tool } from '../protocol/types';
import type { AskReason, GateContext, GateRequest } from '../policy/gate';
import type { PinStatus } from '../policy/pins';
import type { AskAnswer } from '../policy/run';
import type { GateSession } from '../policy/session';
import type { AuditedServer, AuditSink, Masker, Outcome } from '../policy/types';
import type { RequestTelemetry } from '../policy/telemetry';
import type { ServerHandle } from '../servers/handle';
import type { FlowFinding, FlowGuard, FlowMode } from '../scan/flowGuard';

/**
 * The flow guard (../scan/flowGuard.ts) of a forwarder's origin. The chat's conversations share one
 * guard for the window (a conversation spans servers, and VS Code reaches each over its own
 * connection); an agent's session (its connection: the editor's gateway, or `mcp-host serve`) keeps
 * its own guard in its `GateSession`, so no other session, however many there are, can push its
 * history out, and it ends with the connection.
 */
export interface GatewayFlow {
  /** The chat's guard, by conversation; for an agent, only requests that come without a session use it. */
  readonly guard: FlowGuard;
  /** The mode for this origin, read afresh on each call (`mcpHost.flowGuard`, or serve's `--flow-guard`). */
  mode(): FlowMode;
  /**
   * The chat: VS Code already confirmed the call; untrusted content came before it: the person is
   * asked now, naming what came before. True runs it. Absent where the origin's own `ask` asks (an
   * agent in the editor) or nobody can be asked (`serve`).
   */
  ask?(question: { server: string; tool: string; args: Record<string, unknown>; finding: FlowFinding }): Promise<boolean>;
}

/** One tool call of a gateway's client as it ended, for the editor's history and trace ("by the chat", "by Claude Code"). */
export interface GatewayCall {
  /** The session it came in; absent in tests that do not make one. */
  session?: GateSession;
  server: string;
  tool: string;
  args: Record<string, unknown>;
  at: number;
  /** How long it took, from the request to the answer or the refusal (ms). */
  ms: number;
  outcome: Outcome;
  /** Why the gate refused it, when it did. */
  refused?: string;
  /** The flow guard held it and the person let it run: why it was held. */
  held?: string;
}

export interface SharedServer {
  readonly handle: ServerHandle;
  /** The gate's context for a request of this session, read afresh each time (settings may have changed); the origin is the forwarder's. */
  gateContext(session: GateSession | undefined): Omit<GateContext, 'origin' | 'session'>;
  audited(): AuditedServer;
  audit?: AuditSink;
  /** The team's telemetry: a span per request, continuing the chat's trace (../policy/telemetry.ts). */
  telemetry?: RequestTelemetry;
  /** The masker of results before they go to the chat's model; read afresh each time. */
  masker(): Masker;
  /** How long a request may wait for a stopped or restarting server to run again. */
  readonly requestTimeoutMs: number;
  /** Told of every tools/call a client made, refused ones included. */
  onCall?(call: GatewayCall): void;
  /**
   * Asks the person, in the editor, naming the session's agent (an agent's first use of the server,
   * a path outside the roots under the fence's `ask`, a changed definition, MCP Host's own tool
   * confirmation). Absent where nobody can be asked (the chat, `serve`): an `ask` verdict is refused.
   */
  ask?(request: GateRequest, reasons: AskReason[], session: GateSession | undefined): Promise<AskAnswer>;
  /** Where nobody can be asked: what the refusal says to allow, and where (serve names its flags and its file). */
  refusedUnasked?(request: GateRequest, reasons: AskReason[]): string;
  /**
   * The tools VS Code was last told are read-only (in a tools/list answer), kept across sessions
   * and windows as VS Code keeps its list: VS Code skips its confirmation for them until it lists again.
   */
  readonly toldReadOnly: ToldReadOnly;
  /**
   * How a tool compares with what the person approved (../policy/pins.ts): the editor's pins, or
   * serve's lock file, each with the scan's findings (a flagged tool is `changed`). None, or
   * undefined for a tool: nothing holds it.
   */
  pinOf?(tool: Tool): PinStatus | undefined;
  /** A call of a tool never pinned ran: its definition is pinned now (the person confirmed it in VS Code's dialog). */
  pinUsed?(tool: Tool): void;
  /** How a prompt compares with its pin: a changed one is not offered to the chat, and its prompts/get is refused. */
  promptPinOf?(prompt: Prompt): PinStatus | undefined;
  /** The flow guard; none: the calls are judged one by one. */
  readonly flow?: GatewayFlow;
  /** Makes what `pinOf` and `promptPinOf` read current (the editor's workspace lock files), before the gate decides a call. */
  pinsReady?(): Promise<void>;
}

/** Which of a shared server's tools VS Code's last list marked read-only. */
export interface ToldReadOnly {
  has(tool: string): boolean;
  /** Records what a tools/list answer told VS Code: each listed tool's read-only hint. */
  told(tools: ReadonlyArray<{ name: string; readOnly: boolean }>): void;
}

/** A memory of it for one process (the plain-Node tests and the bench; the editor keeps it in its global state). */
export function toldReadOnlyInMemory(): ToldReadOnly {
  const readOnly = new Set<string>();
  return {
    has: (tool) => readOnly.has(tool),
    told: (tools) => {
      for (const t of tools) {
        if (t.readOnly) readOnly.add(t.name);
        else readOnly.delete(t.name);
      }
    },
  };
}

/**
 * The running client, now or once the server runs again (a restart, a crash's automatic restart),
 * within `timeoutMs`; otherwise a clear error. Only a server asked to run is waited for (starting,
 * restarting, due to restart after a crash): a stopped one fails at once, since nobody asked it to run.
 */
export function runningClient(handle: ServerHandle, timeoutMs: number, signal?: AbortSignal): Promise<ServerClient> {
  const usable = (): ServerClient | undefined => {
    const client = handle.client;
    return client && !client.isClosed ? client : undefined;
  };
  // Asked to run, and not given up on (a crash that used up its restarts).
  const comingBack = (): boolean => handle.wantsToRun && !(handle.state.kind === 'error' && handle.state.restartAt === undefined);
  const now = usable();
  if (now) return Promise.resolve(now);
  if (!comingBack()) return Promise.reject(notRunning(handle));
  return new Promise<ServerClient>((resolve, reject) => {
    const end = (error?: McpError): void => {
      clearTimeout(timer);
      subscription.dispose();
      signal?.removeEventListener('abort', onAbort);
      const client = usable();
      if (client && !error) resolve(client);
      else reject(error ?? notRunning(handle));
    };
    const onAbort = (): void => end(new McpError(REQUEST_CANCELLED, 'cancelled by the client'));
    const timer = setTimeout(
      () =>
        end(new McpError(ErrorCode.RequestTimeout, `${handle.name} did not run again within ${timeoutMs} ms (it is ${handle.state.kind})`)),
      timeoutMs,
    );
    const subscription = handle.onDidChangeState(() => {
      if (usable()) end();
      else if (!comingBack()) end(notRunning(handle));
    });
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function notRunning(handle: ServerHandle): McpError {
  const s = handle.state;
  const why = s.kind === 'error' ? `it failed: ${s.message}` : 'it is stopped';
  return new McpError(ErrorCode.ConnectionClosed, `${handle.name} is not running (${why}); start it in MCP Host`);
}

/** The tool as listed now; a name the list does not have is looked up once more (a list_changed may be on its way). */
export async function findTool(handle: ServerHandle, client: ServerClient, name: string): Promise<Tool | undefined> {
  return handle.tools.find((t) => t.name === name) ?? (await client.listTools()).find((t) => t.name === name);
}
