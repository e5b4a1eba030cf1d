import * as vscode from 'vscode';
import { defaultFenceMode, thisMachine, type AskReason, type GateContext, type GateRequest } from '../../core/policy/gate';
import { GatedServer } from '../../core/policy/gated';
import type { RequestTelemetry, TelemetryClient } from '../../core/policy/telemetry';
import { nameOf, type AskAnswer } from '../../core/policy/run';
import type { AuditedServer, AuditSink, FencedPath, FenceMode } from '../../core/policy/types';
import {
  forDisplay,
  fromTemplate,
  launchHash,
  type Redact,
  type Root,
  type ServerDefinition,
  type ServerHandle,
  type Prompt,
  type ShownText,
  type Tool,
} from '../../core';
import type { OutsideRootsQuestion, ToolAsker, ToolConfirmation } from '../common/answers';
import { Settings } from '../common/ids';
import { askModal } from '../window/notifications';
import { addToStoredList } from '../common/storedList';
import { cachedSetting } from '../common/settingCache';
import { lockedSetting, oneOf } from '../common/organisation';
import type { HostUi } from '../ui/hostUi';
import type { PinStatus } from '../../core/policy/pins';
import type { ScanFinding } from '../../core/scan/detectors';

/** What the gate needs of the host; the host hands itself in (no import of host.ts, which owns the gate). */
export interface GateHost {
  readonly ui: HostUi;
  readonly audit: AuditSink;
  redact(text: string): string;
  /** The roots `roots/list` answers for this server: the fence's roots. */
  rootsOf(def: ServerDefinition): Root[];
  /** The servers' sandboxes (../host/sandboxes.ts, named here by shape): how the audit names a server, and what a failure's text says it was denied. */
  readonly sandboxes: {
    audited(def: ServerDefinition): AuditedServer;
    failed(def: ServerDefinition, text: string | (() => string)): Promise<void>;
  };
  /** The pins of what the person approved (./pins.ts; named here by shape, since it keys them with `serverIdentity`). */
  readonly pins: {
    status(handle: ServerHandle, kind: PinKind, item: Tool | Prompt): PinStatus;
    /** The workspace lock files made current: what `status` reads for a gated call. */
    ready(def: ServerDefinition): Promise<void>;
    pinFirstUse(def: ServerDefinition, kind: PinKind, item: Tool | Prompt): Promise<void>;
    /** What MCP Host's scan found in the tool or prompt that the person has not accepted. */
    flagged(def: ServerDefinition, item: Tool | Prompt, kind: PinKind): readonly ScanFinding[];
  };
  /** The team's telemetry (./telemetry.ts), and MCP Host as the client the person's and the apps' requests come through. */
  readonly telemetry: { readonly hook: RequestTelemetry };
  readonly clientInfo: TelemetryClient;
  /** Review Changes (./pinReview.ts): true when the person accepted the change. */
  readonly pinReview: { review(handle: ServerHandle, only?: { kind: PinKind; name: string }): Promise<boolean> };
}

/** What a pin is of: a tool or a prompt. */
export type PinKind = 'tools' | 'prompts';

/** One request from the editor: the person's own (palette, tree, history, rerun, open documents) or an MCP App's. */
interface EditorRequest {
  server: ServerHandle;
  origin: ToolAsker;
  request: GateRequest;
}

const ALWAYS_KEY = 'mcpHost.alwaysAllowedTools';
const FENCE_MODES: readonly FenceMode[] = ['block', 'ask', 'off'];

/**
 * A server's identity for the "always" answers: where it is defined and what runs (as the launch
 * consent keys it), never its name alone, so a workspace server named like one of the person's
 * own inherits none of their answers.
 */
export function serverIdentity(def: ServerDefinition): string {
  return [def.origin.scope, def.origin.folderUri ?? '', def.name, launchHash(def)].join('\u0000');
}

/**
 * The fence for a request from `origin`: `mcpHost.roots.fence` from the user's (or machine's)
 * settings only, so a workspace cannot loosen it; unset, the origin's default (the person is
 * asked, an app or the chat is refused). The editor gate and the chat gateway both fence with it.
 */
export function fenceMode(origin: GateContext['origin']): FenceMode {
  return chosenFenceMode() ?? defaultFenceMode(origin);
}

/** `mcpHost.roots.fence` as the organisation locks it, else the person's (user or machine settings), cached until it changes: read on every call. */
// Dropped on any change of MCP Host's settings: that is also when the organisation's managed file is read again.
const chosenFenceMode = cachedSetting(
  Settings.section,
  (): FenceMode | undefined => lockedSetting('mcpHost.roots.fence', oneOf(FENCE_MODES)).value,
);

/** How many allowed reads outside the roots a window remembers (the oldest forgotten first). */
const MAX_REMEMBERED_READS = 500;

/**
 * The editor's side of the one gate (../core/policy/gated.ts): every tools/call, resources/read,
 * prompts/get, resources/subscribe and completion/complete the editor sends goes through the
 * `GatedServer` that `serverFor` makes, which reads the settings and stored answers the gate
 * decides with, asks the person through `HostUi`, audits into the host's log and tells the person
 * why the fence refused.
 */
export class EditorGate {
  /**
   * The person's "Allow" of a read outside the roots, per server and exact URI, for this window:
   * an open document's refreshes read the same URI again and are not asked about again. Tools are
   * never remembered for a path; a new window asks again.
   */
  private readonly allowedReads = new Set<string>();

  constructor(
    private readonly host: GateHost,
    private readonly memento: vscode.Memento,
  ) {}

  /** `server` as `origin` (the person, or an MCP App) sends to it: every gated request of theirs goes through this. */
  serverFor(server: ServerHandle, origin: ToolAsker): GatedServer {
    const toolKeyOf = (request: GateRequest): string | undefined =>
      request.method === 'tools/call' ? `${serverIdentity(server.definition)}\u0000${request.tool.name}` : undefined;
    return new GatedServer(server, origin, {
      context: async (request) => {
        // The workspace's lock files read (again, if one changed) before the pin is judged: off the extension host's thread.
        if (request.method === 'tools/call' || request.method === 'prompts/get') await this.host.pins.ready(server.definition);
        const toolKey = toolKeyOf(request);
        return {
          policy: server.definition,
          alwaysAllowed: toolKey !== undefined && this.memento.get<string[]>(ALWAYS_KEY, []).includes(toolKey),
          fence: fenceMode(origin),
          roots: this.host.rootsOf(server.definition),
          machine: thisMachine(),
          serverCwd: server.workingFolder,
          serverEnv: server.environment,
          pin: this.pinOf(server, request),
        };
      },
      server: () => this.host.sandboxes.audited(server.definition),
      // The audit log redacts the server's secrets and masks before it writes (../core/policy/audit.ts).
      audit: this.host.audit,
      telemetry: this.host.telemetry.hook,
      client: this.host.clientInfo,
      ask: (request, reasons) => this.ask({ server, origin, request }, reasons, toolKeyOf(request)),
      // A sandboxed server's failure may name a path its sandbox hid: told with the setting that allows it.
      onFailed: (_request, text) => void this.host.sandboxes.failed(server.definition, text),
      onRefused: (request, refusal) => {
        if (refusal.decision === 'fenced') this.tellFenced({ server, request }, refusal.fenced ?? []);
      },
      // The first use the person allowed pins the definition it ran under (docs/pinning.md).
      onSent: async (request) => {
        const pinned = pinnedItem(server, request);
        if (pinned && this.host.pins.status(server, pinned.kind, pinned.item).status === 'new')
          await this.host.pins.pinFirstUse(server.definition, pinned.kind, pinned.item);
      },
    });
  }

  /** How the tool or prompt a request names stands against what the person approved; undefined for other requests. */
  private pinOf(server: ServerHandle, request: GateRequest): PinStatus | undefined {
    const pinned = pinnedItem(server, request);
    return pinned && this.host.pins.status(server, pinned.kind, pinned.item);
  }

  /** One question for every reason; "always" remembers the tool's confirmation only, never a path outside the roots. */
  private async ask(r: EditorRequest, reasons: AskReason[], toolKey: string | undefined): Promise<AskAnswer> {
    const request = r.request;
    const roots = this.host.rootsOf(r.server.definition);
    const changed = reasons.find((x) => x.kind === 'definitionChanged');
    if (changed) {
      // Suspended: this question replaces the tool's confirmation; "always" cannot be answered until the change is accepted.
      const pinned = pinnedItem(r.server, request);
      if (!pinned) return 'refuse';
      const findings = this.host.pins.flagged(r.server.definition, pinned.item, pinned.kind);
      const answer = await this.host.ui.confirmChangedDefinition(r.server.name, {
        kind: pinned.kind,
        name: pinned.item.name,
        changed: changed.changed,
        ...(findings.length && { findings }),
      });
      if (answer === 'cancel') return 'refuse';
      if (answer === 'review' && !(await this.host.pinReview.review(r.server, { kind: pinned.kind, name: pinned.item.name })))
        return 'refuse';
      if (!reasons.some((x) => x.kind === 'outsideRoots' || x.kind === 'protectedPaths')) return 'once';
    }
    const confirm = changed ? undefined : reasons.find((x) => x.kind === 'confirmTool');
    const outside = reasons.flatMap((x) => (x.kind === 'outsideRoots' ? x.findings : []));
    const protectedFindings = reasons.flatMap((x) => (x.kind === 'protectedPaths' ? x.findings : []));
    const readKey =
      r.origin === 'person' && request.method === 'resources/read'
        ? `${serverIdentity(r.server.definition)}\u0000${request.uri}`
        : undefined;
    if (readKey && !confirm && this.allowedReads.has(readKey)) return 'remembered';
    let answer: ToolConfirmation;
    if (outside.length || protectedFindings.length) {
      answer = await this.host.ui.allowOutsideRoots({
        server: r.server.name,
        asker: r.origin,
        method: request.method,
        name: nameOf(request),
        findings: outside,
        ...(protectedFindings.length ? { protectedFindings } : {}),
        roots: roots.map((root) => root.uri),
        tool:
          confirm && request.method === 'tools/call'
            ? { tool: request.tool, args: request.arguments, annotationsTrusted: confirm.annotationsTrusted }
            : undefined,
      });
    } else if (confirm && request.method === 'tools/call') {
      answer = await this.host.ui.confirmTool(r.server.name, request.tool, request.arguments, confirm.annotationsTrusted, r.origin);
    } else return 'refuse';
    if (answer === 'cancel') return 'refuse';
    if (readKey) {
      if (this.allowedReads.size >= MAX_REMEMBERED_READS) this.allowedReads.delete(this.allowedReads.values().next().value!);
      this.allowedReads.add(readKey);
    }
    if (answer === 'always' && confirm && toolKey) {
      await addToStoredList(this.memento, ALWAYS_KEY, toolKey);
      return 'always';
    }
    return 'once';
  }

  private tellFenced(r: Pick<EditorRequest, 'server' | 'request'>, fenced: FencedPath[]): void {
    const roots = this.host.rootsOf(r.server.definition);
    const shown = (text: string) => forDisplay(text, (t) => this.host.redact(t));
    void this.host.ui.notify(
      'error',
      // The method and name as the request has them, the arguments and paths as given: the server's secrets redacted.
      fromTemplate(
        vscode.l10n.t(
          'MCP Host refused {0} of "{1}" before sending it: it names a path outside the roots: {2}. The roots: {3}. To allow it, add the folder to the setting mcpHost.roots.extra (user settings).',
        ),
        shown(`${r.request.method} ${nameOf(r.request)}`),
        shown(r.server.name),
        shown(describeFindings(fenced)),
        shown(roots.map((root) => root.uri).join(', ') || vscode.l10n.t('none')),
      ),
    );
  }
}

/** The tool or prompt a request runs, as the server lists it now: what its pin is compared with. */
function pinnedItem(server: ServerHandle, request: GateRequest): { kind: PinKind; item: Tool | Prompt } | undefined {
  if (request.method === 'tools/call') return { kind: 'tools', item: request.tool };
  if (request.method !== 'prompts/get') return undefined;
  const prompt = server.prompts.find((p) => p.name === request.name);
  return prompt && { kind: 'prompts', item: prompt };
}

/** `argument /path = "../x" is /etc/x`, one per path; the resource URI itself has no pointer. */
function describeFindings(fenced: FencedPath[]): string {
  return fenced
    .map((f) =>
      f.pointer
        ? vscode.l10n.t('argument {0} = {1} is {2}', f.pointer, JSON.stringify(f.value), f.resolved)
        : vscode.l10n.t('the URI {0} is {1}', JSON.stringify(f.value), f.resolved),
    )
    .join('; ');
}

/** The text of the outside-roots question: each path (argument, value, resolved), the roots, and the tool's own confirmation when it needs one. */
export function outsideRootsDetail(q: OutsideRootsQuestion): string {
  const parts: string[] = [];
  if (q.findings.length) parts.push(`${vscode.l10n.t('Outside the roots:')}\n${describeFindings(q.findings)}`);
  if (q.protectedFindings?.length)
    parts.push(
      `${vscode.l10n.t("Files that run later (git hooks or configuration, the editor's or an agent's settings, shell files):")}\n${describeFindings(q.protectedFindings)}`,
    );
  parts.push(`${vscode.l10n.t('Roots:')}\n${q.roots.join('\n') || vscode.l10n.t('none')}`);
  if (q.tool) parts.push(toolConfirmationText(q.tool.tool, q.tool.annotationsTrusted));
  if (q.tool || q.method === 'prompts/get') parts.push(`${vscode.l10n.t('Arguments:')}\n${JSON.stringify(q.tool?.args ?? {}, null, 2)}`);
  if (q.findings.length) parts.push(vscode.l10n.t('To stop being asked for a folder, add it to the setting mcpHost.roots.extra.'));
  return parts.join('\n\n');
}

/** Why a tool is confirmed: not read-only (and maybe destructive), or read-only by an untrusted claim. */
export function toolConfirmationText(tool: Tool, annotationsTrusted: boolean): string {
  const claimsReadOnly = tool.annotations?.readOnlyHint === true && !annotationsTrusted;
  const hint =
    tool.annotations?.destructiveHint === false
      ? ''
      : ` ${tool.annotations?.destructiveHint ? vscode.l10n.t('It is marked destructive.') : vscode.l10n.t('It may change things.')}`;
  return claimsReadOnly
    ? vscode.l10n.t("The server says the tool is read-only, but this server's annotations are not trusted (setting trustAnnotations).")
    : `${vscode.l10n.t('The tool is not marked read-only.')}${hint}`;
}

/** The outside-roots question as the modal shows it: the arguments and the paths they name shown whole, the host's secrets redacted. */
export function outsideRootsQuestion(q: OutsideRootsQuestion, redact: Redact): { question: ShownText; detail: ShownText } {
  const what = forDisplay(q.name, redact);
  const server = forDisplay(q.server, redact);
  const outside = q.findings.length > 0;
  return {
    question:
      q.asker === 'app'
        ? outside
          ? fromTemplate(
              vscode.l10n.t('The app of the MCP server "{1}" asks for {0} with a path outside the roots. Allow it?'),
              what,
              server,
            )
          : fromTemplate(
              vscode.l10n.t('The app of the MCP server "{1}" asks for {0} with a path to a file that runs later. Allow it?'),
              what,
              server,
            )
        : outside
          ? fromTemplate(vscode.l10n.t('Send {0} to the MCP server "{1}" with a path outside the roots?'), what, server)
          : fromTemplate(vscode.l10n.t('Send {0} to the MCP server "{1}" with a path to a file that runs later?'), what, server),
    detail: forDisplay(outsideRootsDetail(q), redact, Number.POSITIVE_INFINITY),
  };
}

/** The default `HostUi.allowOutsideRoots`: one modal; "Always" is offered only for the tool's confirmation. */
export async function askOutsideRoots(q: OutsideRootsQuestion, redact: Redact): Promise<ToolConfirmation> {
  const once = vscode.l10n.t('Allow Once');
  const always = vscode.l10n.t('Always Allow This Tool');
  const { question, detail } = outsideRootsQuestion(q, redact);
  const pick = await askModal('warning', question, detail, ...(q.tool ? [once, always] : [once]));
  return pick === once ? 'once' : pick === always ? 'always' : 'cancel';
}
