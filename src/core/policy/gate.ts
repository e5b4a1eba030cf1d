/**
 * The one gate every request we send passes (tools/call, resources/read, prompts/get,
 * resources/subscribe, completion/complete), whoever asked for it: allow, ask the person, or refuse with a reason,
 * before anything reaches the transport. It is the only place that reads the server's allow/deny
 * lists, tool visibility, autoApprove, trusted `readOnlyHint`, the stored "always" answers and
 * the roots fence.
 */
import { lstat, readlink } from 'node:fs/promises';
import { homedir } from 'node:os';
import type { CompleteParams, Root, Tool } from '../protocol/types';
import { isToolForApp, isToolForPerson } from '../apps/toolUi';
import type { ServerDefinition } from '../servers/definition';
import { isToolOffered } from './offered';
import { pathsOutsideRoots, resourceOutsideRoots, type FenceEnvironment } from './fence';
import { describeProtected, protectedPathsNamed, type InsideReading } from './protectedPaths';
import { argumentLimitProblem } from './limits';
import { describeChange, type PinStatus } from './pins';
import { visibleControls } from '../render/serverText';
import type { GateSession } from './session';
import type { FencedPath, FenceMode, Origin } from './types';
import type { FlowFinding } from '../scan/flowGuard';

export type GateRequest =
  /** `unlisted`: the server does not list the tool (the CLI calls it by name), so `tool` is a stand-in, not its definition. */
  | { method: 'tools/call'; tool: Tool; arguments: Record<string, unknown>; unlisted?: true }
  | { method: 'resources/read' | 'resources/subscribe'; uri: string }
  | { method: 'prompts/get'; name: string; arguments: Record<string, string> }
  /** The value being completed and the earlier answers are fenced like a prompt's arguments: a path's completions list a folder. */
  | { method: 'completion/complete'; params: CompleteParams };

export interface GateContext {
  origin: Exclude<Origin, 'server'>;
  /** What the server's definition says of its tools (the CLI, which has none, passes no lists and no trust). */
  policy: Pick<ServerDefinition, 'tools' | 'autoApprove' | 'trustAnnotations'>;
  /** Whether the person answered "always" for this tool before. */
  alwaysAllowed: boolean;
  fence: FenceMode;
  /** The roots `roots/list` answers for this server. */
  roots: readonly Root[];
  machine: FenceEnvironment;
  /**
   * The folder a stdio server runs in (absolute), where it resolves relative paths: the fence
   * checks a relative path against it and against every root. Undefined for an HTTP server.
   */
  serverCwd?: string;
  /** The environment a stdio server runs with (the fence expands its variables in paths); MCP Host's own for an HTTP server. */
  serverEnv?: Readonly<Record<string, string | undefined>>;
  /**
   * The chat and agents: the client was last told that this tool is read-only, so it may have called
   * it without asking the person. Unless the tool is (trusted) read-only now, the call is refused
   * once and the client is told to list the tools again.
   */
  listedReadOnly?: boolean;
  /** The gateway session the request came in (./session.ts): the audit names it, and the editor's questions name its agent. */
  session?: GateSession;
  /** An agent whose tool calls MCP Host confirms itself (the person's per-agent setting, for agents run without their own confirmation). */
  confirmTools?: boolean;
  /** An agent that has not used this server before: the person is asked once whether it may (the editor remembers the answer per agent). */
  firstUse?: boolean;
  /** The pins are a lock file's (the CLI's and serve's `--pinned`): a tool or prompt it does not have is refused, not only a changed one. */
  lockFile?: string;
  /**
   * How the definition of the tool (tools/call) or prompt (prompts/get) compares with its pin
   * (./pins.ts): the editor's pin of what the person approved, or the CLI's --pinned file. Absent
   * when nothing is pinned. `changed` suspends it: no "always" answer, autoApprove or trusted
   * read-only hint covers it, the person is asked (showing what changed), the chat and the CLI are
   * refused. `new` (never pinned): its read-only hint is not trusted yet; the CLI refuses it.
   */
  pin?: PinStatus;
  /**
   * The flow guard (../scan/flowGuard.ts) holds this call: untrusted content came before it in its
   * session and the tool is a sink. `ask` asks even where an "always" answer, autoApprove or a
   * trusted read-only hint would not; `block` (and the CLI, which has nobody to ask) refuses.
   */
  flow?: { mode: 'ask' | 'block'; finding: FlowFinding };
}

/** Why the person must be asked: a tool that is not (trusted) read-only, or paths outside the roots. */
export type AskReason =
  | { kind: 'confirmTool'; annotationsTrusted: boolean }
  | { kind: 'outsideRoots'; findings: FencedPath[] }
  /** Arguments of a tool that may change things name files that run later (./protectedPaths.ts). */
  | { kind: 'protectedPaths'; findings: FencedPath[] }
  /** The definition changed since it was pinned: `changed` names its members that differ (`description`, `inputSchema`, …). */
  | { kind: 'definitionChanged'; changed: string[] }
  /** Untrusted content came before this sink call in its session (../scan/flowGuard.ts). */
  | { kind: 'untrustedFlow'; finding: FlowFinding }
  /** An agent's first request to this server: may it use the server at all? */
  | { kind: 'firstUse' };

export type Verdict =
  | { kind: 'allow'; decision: 'allowed' | 'allowed-always' }
  | { kind: 'ask'; reasons: AskReason[] }
  | {
      kind: 'refuse';
      decision: 'denied' | 'fenced' | 'refused';
      reason: string;
      fenced?: FencedPath[];
      /** Over the limits of ./limits.ts: the arguments are not to be looked at again (nor audited). */
      oversized?: boolean;
    };

/** The fence mode when the setting leaves it unset: the person is asked, an app or the chat is refused, the CLI's is its flags'. */
export function defaultFenceMode(origin: GateContext['origin']): FenceMode {
  return origin === 'person' ? 'ask' : 'block';
}

/** A tool's or prompt's name in a refusal: its invisible characters shown (`look<U+200B>up` is not `lookup`). */
const named = (name: string): string => visibleControls(name);

function describe(findings: FencedPath[]): string {
  return findings.map((f) => `${f.pointer || 'the URI'} = ${JSON.stringify(f.value)} (${f.resolved})`).join('; ');
}

/** The machine this runs on, as the fence reads it: its platform, its symlinks, its home folder. */
export function thisMachine(): FenceEnvironment {
  return { platform: process.platform, lstat: machineLstat, readlink: machineReadlink, home: homedir() };
}

// The same functions on every call: the fence keeps what it learnt of the roots per machine, by its lstat (./fence.ts).
const machineLstat = (p: string) => lstat(p).catch(() => undefined);
const machineReadlink = (p: string) => readlink(p);

/**
 * Whether the tool may run without a confirmation because it says it is read-only and the person
 * trusts its server's annotations, and (when definitions are pinned) the definition that says so
 * is the one pinned: a hint that came with a changed definition, or with a tool never seen, is not trusted.
 */
export function isTrustedReadOnly(tool: Tool, policy: Pick<GateContext['policy'], 'trustAnnotations'>, pin?: PinStatus): boolean {
  return tool.annotations?.readOnlyHint === true && policy.trustAnnotations && (pin === undefined || pin.status === 'same');
}

/** Whether the pin lets earlier answers (an "always", autoApprove) stand: not when the definition changed since. */
function answersStand(pin: PinStatus | undefined): boolean {
  return pin?.status !== 'changed' && pin?.status !== 'removed';
}

/** The refusal (or the question) a pinned definition calls for, before anything else is decided. */
function pinVerdict(request: GateRequest, context: GateContext): Verdict | AskReason | undefined {
  const pin = context.pin;
  if (!pin || (request.method !== 'tools/call' && request.method !== 'prompts/get')) return undefined;
  const what = request.method === 'tools/call' ? `the tool ${named(request.tool.name)}` : `the prompt ${named(request.name)}`;
  const refuse = (reason: string): Verdict => ({ kind: 'refuse', decision: 'refused', reason });
  switch (pin.status) {
    case 'changed':
      if (context.origin === 'cli') return refuse(`${what} changed since it was pinned: ${describeChange(pin.changed)}`);
      // An agent: asked in the editor, naming the agent; refused where nobody can be asked (serve), saying where to look.
      if (context.origin === 'chat')
        return refuse(
          `${what} changed since the person approved it (${describeChange(pin.changed)}); it is suspended until they review and accept the change`,
        );
      return { kind: 'definitionChanged', changed: pin.changed };
    case 'removed':
      return refuse(`${what} is pinned, but the server no longer lists it`);
    case 'new':
      return context.origin === 'cli' || context.lockFile !== undefined
        ? refuse(`${what} is not in the pinned definitions${context.lockFile === undefined ? '' : ` (${context.lockFile})`}`)
        : undefined;
    case 'same':
      return undefined;
  }
}

/** A completion's arguments as the server reads them: the earlier answers and the one being typed. */
export function completedArguments(params: CompleteParams): Record<string, string> {
  return { ...params.context?.arguments, [params.argument.name]: params.argument.value };
}

/** Everything of a request a server reads: what the limits measure before anything else looks at it. */
function measured(request: GateRequest): unknown {
  switch (request.method) {
    case 'tools/call':
      return [request.tool.name, request.arguments];
    case 'prompts/get':
      return [request.name, request.arguments];
    case 'completion/complete':
      return request.params;
    default:
      return request.uri;
  }
}

/** Decides one request. Nothing is sent by it; the caller asks, sends and audits with `runGated` (run.ts). */
export async function decide(request: GateRequest, context: GateContext): Promise<Verdict> {
  // First, and without recursion: nothing below (the fence, the audit, validation, the writer) may see a value over the limits.
  const oversized = argumentLimitProblem(measured(request));
  if (oversized) return { kind: 'refuse', decision: 'refused', reason: oversized, oversized: true };
  const reasons: AskReason[] = [];
  const pinned = pinVerdict(request, context);
  if (pinned?.kind === 'refuse') return pinned;
  if (pinned?.kind === 'definitionChanged') reasons.push(pinned);
  if (request.method === 'tools/call') {
    const { tool } = request;
    if (!isToolOffered(context.policy as ServerDefinition, tool.name)) {
      return { kind: 'refuse', decision: 'denied', reason: `${named(tool.name)} is not allowed by this server's tools.allow / tools.deny` };
    }
    if (context.origin === 'app' && !isToolForApp(tool))
      return { kind: 'refuse', decision: 'denied', reason: `${named(tool.name)} is not for apps (its visibility is model-only)` };
    if ((context.origin === 'person' || context.origin === 'chat' || context.origin === 'agent') && !isToolForPerson(tool)) {
      return { kind: 'refuse', decision: 'denied', reason: `${named(tool.name)} is for its app only (its visibility is app-only)` };
    }
    if (context.listedReadOnly && !isTrustedReadOnly(tool, context.policy, context.pin)) {
      const client = context.origin === 'chat' ? 'VS Code' : 'the agent';
      return {
        kind: 'refuse',
        decision: 'refused',
        reason:
          `${context.origin === 'chat' ? "VS Code's" : "The agent's"} list of ${named(tool.name)} still says it is read-only, so ${client} may not have asked you; ` +
          `MCP Host no longer trusts that and has told ${client} to list the tools again: call it again to be asked`,
      };
    }
  }
  // Before anything else is asked: an agent that may not use the server at all is not asked about its arguments.
  if (
    context.origin === 'agent' &&
    context.firstUse &&
    request.method !== 'completion/complete' &&
    request.method !== 'resources/subscribe'
  )
    reasons.unshift({ kind: 'firstUse' });
  if (context.fence !== 'off') {
    const inside: InsideReading[] = [];
    const fence = {
      ...context.machine,
      roots: context.roots,
      cwd: context.serverCwd,
      env: context.serverEnv ?? process.env,
      onInside: (found: FencedPath, below: readonly string[]) => void inside.push({ found, below }),
    };
    const findings =
      request.method === 'tools/call'
        ? await pathsOutsideRoots(request.arguments, fence, request.tool.inputSchema)
        : request.method === 'prompts/get'
          ? await pathsOutsideRoots(request.arguments, fence)
          : request.method === 'completion/complete'
            ? [
                // A resource template's URI is read by the server to complete against (its folder).
                ...(request.params.ref.type === 'ref/resource'
                  ? (await resourceOutsideRoots(request.params.ref.uri, fence)).map((f) => ({ ...f, pointer: '/ref/uri' }))
                  : []),
                ...(await pathsOutsideRoots(completedArguments(request.params), fence)),
              ]
            : await resourceOutsideRoots(request.uri, fence);
    if (findings.length > 0) {
      if (context.fence === 'block' || context.origin === 'cli') {
        return {
          kind: 'refuse',
          decision: 'fenced',
          reason: `outside the roots: ${describe(findings)}; add a root (mcpHost.roots.extra, or --root) to allow it`,
          fenced: findings,
        };
      }
      reasons.push({ kind: 'outsideRoots', findings });
    }
    const named = request.method === 'tools/call' ? protectedPathsNamed(request.tool, inside) : [];
    if (named.length) {
      if (context.origin === 'cli') return { kind: 'refuse', decision: 'fenced', reason: describeProtected(named), fenced: named };
      reasons.push({ kind: 'protectedPaths', findings: named });
    }
  }
  if (request.method === 'tools/call' && context.flow) {
    const { finding } = context.flow;
    if (context.flow.mode === 'block' || context.origin === 'cli')
      return { kind: 'refuse', decision: 'refused', reason: `held by MCP Host's flow guard: ${finding.reason}` };
    reasons.push({ kind: 'untrustedFlow', finding });
  }
  // The CLI has nobody to ask; the chat's calls were confirmed by VS Code itself, which asks before
  // every tool we do not pass on as (trusted) read-only, and so are an agent's, unless the person
  // asked MCP Host to confirm that agent's calls itself.
  const confirms = context.origin === 'person' || context.origin === 'app' || (context.origin === 'agent' && context.confirmTools === true);
  if (request.method === 'tools/call' && confirms) {
    const { tool } = request;
    const stand = answersStand(context.pin);
    if (!isTrustedReadOnly(tool, context.policy, context.pin) && !(stand && context.policy.autoApprove.includes(tool.name))) {
      if (context.alwaysAllowed && stand) return reasons.length ? { kind: 'ask', reasons } : { kind: 'allow', decision: 'allowed-always' };
      reasons.push({ kind: 'confirmTool', annotationsTrusted: context.policy.trustAnnotations });
    }
  }
  return reasons.length ? { kind: 'ask', reasons } : { kind: 'allow', decision: 'allowed' };
}
