import * as vscode from 'vscode';
import {
  checkJsonArguments,
  isToolOfferedToPerson,
  fromTemplate,
  joinShown,
  McpError,
  templateArguments,
  titleAndName,
  renderToolResult,
  type CallToolOptions,
  type CallToolResult,
  forDisplay,
  type Redact,
  type ServerHandle,
  type ShownText,
  type Tool,
  type ToolCallOutcome,
  type Decision,
  type Outcome,
} from '../../core';
import { outcomeOfError } from '../../core/policy/run';
import { toolConfirmationText } from '../policy/gate';
import { knownIcon, warmIcons } from '../common/icons';
import type { DocumentActions } from '../window/documentActions';
import type { McpHost } from '../host/host';
import type { ToolAsker } from '../common/answers';
import type { HostUi } from '../ui/hostUi';
import type { OutputDocuments } from '../common/outputDocuments';
import { toResourceUri } from '../resources/uri';
import { configuredMasker, maskedForPerson } from '../policy/audit';
import { cleanedValue } from '../../core/policy/audit';
import type { GatewayCall } from '../../core/gateway/shared';
import { askArguments } from './askArguments';
import { isTaskLost, REQUEST_CANCELLED } from '../../core';
import { progressText, taskFailureMessage, taskProgressMessage } from './taskProgress';
import { ToolTasks } from '../tasks/toolTasks';
import { askModal, notify, withProgressNotification } from '../window/notifications';
import { pickOne, type ShownPickItem } from '../window/quickPicks';
import { showDocument } from '../window/windowInputs';

export interface CallRecord {
  server: string;
  tool: string;
  args: Record<string, unknown>;
  at: number;
  /** `refused`: the gate refused it, nothing was sent. */
  outcome?: 'ok' | 'isError' | 'failed' | 'cancelled' | 'refused';
  /** Set when an MCP App, VS Code's chat or an agent (both through the gateway) made the call, not the person. */
  by?: 'app' | 'chat' | 'agent';
  /** An agent's call: the agent, its client's name and version from its `initialize`, and its session's id. */
  agent?: { label: string; client?: string; session?: string };
  /** Set when the person sent the call (a task) to the background. */
  background?: boolean;
  /** How long it took, once it ended (ms). */
  ms?: number;
  /** The arguments were kept masked (a gateway client's call, as the audit keeps them): a rerun sends what is shown. */
  masked?: boolean;
}

/** How a call ended, before the person is told. */
type CallEnding = { kind: 'result'; outcome: ToolCallOutcome } | { kind: 'error'; error: McpError; aborted: boolean };

/** A call's ending as the audit records it. */
function outcomeOfEnding(end: CallEnding): Outcome {
  if (end.kind === 'result') return end.outcome.result.isError ? { kind: 'isError' } : { kind: 'ok' };
  return end.aborted ? { kind: 'cancelled' } : outcomeOfError(end.error);
}

/** How a gateway client's call ended, as the history shows it. */
function outcomeOfGatewayCall(outcome: Outcome): NonNullable<CallRecord['outcome']> {
  switch (outcome.kind) {
    case 'ok':
    case 'isError':
    case 'cancelled':
      return outcome.kind;
    case 'error':
    case 'not-sent':
      return 'failed';
  }
}

/** One call on its way: what its progress notification, its tree entry and its ending share. */
class RunningCall {
  readonly controller = new AbortController();
  taskId: string | undefined;
  /** The progress notification, until the call ends or goes to the background. */
  progress: vscode.Progress<{ message?: ShownText; increment?: number }> | undefined;
  private resolveBackgrounded: () => void = () => {};
  /** Resolves when the call goes to the background. */
  readonly backgrounded = new Promise<void>((resolve) => (this.resolveBackgrounded = resolve));

  constructor(readonly record: CallRecord) {}

  sendToBackground(): void {
    this.record.background = true;
    this.progress = undefined;
    this.resolveBackgrounded();
  }
}

const HISTORY_SIZE = 20;
const MAX_CALL_MS = 30 * 60_000;
/**
 * A call from the editor has a person watching its progress with a Cancel button, and may wait on
 * that person (sampling consent, elicitation), so it gets longer than the default 60 s.
 */
const INTERACTIVE_IDLE_MS = 10 * 60_000;

/** Everything about calling a tool from the editor: pick, arguments, consent, progress, result. */
export class ToolCalls implements vscode.Disposable {
  readonly history: CallRecord[] = [];
  /** Calls that run as tasks, for the tree's "Tasks" group. */
  readonly tasks = new ToolTasks();
  /** Told after each call from the editor ends with a result, or is cancelled (MCP Apps open theirs, ../apps/appPanels.ts). */
  afterCall:
    | ((server: ServerHandle, tool: Tool, args: Record<string, unknown>, end: { result: CallToolResult } | { cancelled: string }) => void)
    | undefined;

  constructor(
    private readonly host: McpHost,
    private readonly docs: OutputDocuments,
    private readonly documentActions: DocumentActions,
    private readonly ui: HostUi,
  ) {}

  /**
   * A call VS Code's chat or an agent made through the gateway, in the history marked so ("by the
   * chat", "by Claude Code"). Its arguments are kept as the audit keeps them, secrets redacted and
   * masked: they are a client's, and the history outlives the call.
   */
  recordGatewayCall(call: GatewayCall, by: 'chat' | 'agent', agent?: CallRecord['agent']): void {
    let args: Record<string, unknown>;
    try {
      args = cleanedValue(call.args, (text) => this.host.redact(text), configuredMasker()) as Record<string, unknown>;
    } catch {
      args = {};
    }
    this.history.unshift({
      server: call.server,
      tool: call.tool,
      args,
      at: call.at,
      ms: call.ms,
      outcome: call.refused ? 'refused' : outcomeOfGatewayCall(call.outcome),
      by,
      ...(agent && { agent }),
      ...(JSON.stringify(args) !== JSON.stringify(call.args) && { masked: true }),
    });
    this.history.splice(HISTORY_SIZE);
  }

  /** Quick pick of every offered tool of every running server, unless the tree chose one. */
  async pickTool(preset?: { server: ServerHandle; tool: Tool }): Promise<{ server: ServerHandle; tool: Tool } | undefined> {
    if (preset) return preset;
    const items = await toolPickItems(this.host, this.host.servers);
    if (items.length === 0) {
      void notify('info', fromTemplate(vscode.l10n.t('MCP Host: no running server offers tools.')));
      return undefined;
    }
    return pickOne(items, {
      title: fromTemplate(vscode.l10n.t('MCP Host: Call Tool')),
      placeHolder: fromTemplate(vscode.l10n.t('Which tool?')),
      matchOnDescription: true,
      matchOnDetail: true,
    });
  }

  /** The whole flow for one tool; `args` skips asking (rerun). */
  async run(server: ServerHandle, tool: Tool, args?: Record<string, unknown>): Promise<void> {
    if (!args) {
      const how = Object.keys(tool.inputSchema?.properties ?? {}).length ? await this.ui.pickArgumentEntry(server.name, tool) : 'steps';
      if (!how) return;
      args = how === 'json' ? await this.argsFromJsonEditor(server, tool) : await this.askArguments(server, tool);
      if (!args) return;
    }
    await this.call(server, tool, args);
  }

  /** The tool's arguments one by one (`HostUi.askArgument`), starting from `initial`; undefined when the person cancels. */
  askArguments(server: ServerHandle, tool: Tool, initial?: Record<string, unknown>): Promise<Record<string, unknown> | undefined> {
    return askArguments((step) => this.ui.askArgument(step), `${server.name} › ${tool.name}`, tool.inputSchema, initial);
  }

  /** Validates, confirms, calls with progress and shows the result. Nothing is sent if a check fails. */
  async call(server: ServerHandle, tool: Tool, args: Record<string, unknown>): Promise<CallRecord | undefined> {
    const client = server.client;
    if (!client) {
      void notify('error', fromTemplate(vscode.l10n.t('MCP Host: "{0}" is not running.'), this.host.shown(server.name)));
      return undefined;
    }
    const check = client.checkToolArguments(tool, args);
    if (!check.ok && check.kind !== 'unusableSchema') {
      void notify(
        'error',
        fromTemplate(
          vscode.l10n.t('MCP Host: invalid arguments for {0} (-32602): {1}. Nothing was sent.'),
          this.host.shown(tool.name),
          this.host.shown(check.message),
        ),
      );
      return undefined;
    }
    const gated = await this.host.gate.serverFor(server, 'person').callToolAround(
      tool,
      args,
      (send) => this.send(send, server, tool, args),
      ({ end }) => outcomeOfEnding(end),
    );
    if (gated.sent) return gated.result.record;
    this.remember({ server: server.name, tool: tool.name, args, at: Date.now() }, gated.decision);
    if (gated.decision === 'denied' || gated.decision === 'refused')
      void this.ui.notify(
        'error',
        fromTemplate(vscode.l10n.t('MCP Host: {0} was not sent: {1}'), this.host.shown(tool.name), this.host.shown(gated.reason)),
      );
    return undefined;
  }

  /** A call into the history; one refused before sending is marked so, except when the person said no themselves. */
  private remember(record: CallRecord, refusal?: Decision): void {
    if (refusal === 'asked-refused') return;
    if (refusal) record.outcome = 'refused';
    this.history.unshift(record);
    this.history.splice(HISTORY_SIZE);
  }

  /** Sends an allowed call (`sendCall`, the gate's) with its progress notification and shows how it ended. */
  private async send(
    sendCall: (options: CallToolOptions) => Promise<ToolCallOutcome>,
    server: ServerHandle,
    tool: Tool,
    args: Record<string, unknown>,
  ): Promise<{ record: CallRecord; end: CallEnding }> {
    const record: CallRecord = { server: server.name, tool: tool.name, args, at: Date.now() };
    this.remember(record);
    const call = new RunningCall(record);
    const ending = this.runCall(sendCall, server, tool, call);
    // The notification shows the call until it ends or goes to the background; the call itself goes on either way.
    await withProgressNotification(
      joinShown([this.host.shown(server.name), this.host.shown(tool.title ?? tool.name)], ' › '),
      true,
      (progress, token) => {
        call.progress = progress;
        token.onCancellationRequested(() => void this.cancelRequested(server, tool, call));
        return Promise.race([ending, call.backgrounded]);
      },
    );
    const end = await ending;
    call.progress = undefined;
    if (end.kind === 'error') {
      this.reportFailure(tool, end.error, end.aborted);
      this.afterCall?.(server, tool, args, { cancelled: record.outcome === 'cancelled' ? 'cancelled by the person' : end.error.message });
      return { record, end };
    }
    const doc = this.renderResult(server, tool, args, end.outcome);
    // The result is rendered: what follows a call (such as a tool's own interface) hooks in here.
    await this.reportResult(tool, call, end.outcome, doc);
    this.afterCall?.(server, tool, args, { result: end.outcome.result });
    return { record, end };
  }

  /**
   * A tools/call an MCP App makes: the argument check, then the gate (allow/deny, visibility, the
   * roots fence, the confirmation) as for the person's own, in the history marked "by the app".
   * Throws (the app gets the error) when refused.
   */
  async callForApp(server: ServerHandle, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
    const client = server.client;
    if (!client) throw McpError.connectionClosed(`${server.name} is not running`);
    const tool = server.tools.find((t) => t.name === name);
    if (!tool) throw McpError.invalidParams(`${server.name} has no tool ${name}`);
    const check = client.checkToolArguments(tool, args);
    if (!check.ok && check.kind !== 'unusableSchema') throw McpError.invalidParams(`invalid arguments for ${name}: ${check.message}`);
    const record: CallRecord = { server: server.name, tool: name, args, at: Date.now(), by: 'app' };
    const gated = await this.host.gate.serverFor(server, 'app').callToolAround(
      tool,
      args,
      async (send) => {
        this.remember(record);
        try {
          const outcome = await send({ timeoutMs: INTERACTIVE_IDLE_MS, resetTimeoutOnProgress: true, maxTotalTimeoutMs: MAX_CALL_MS });
          record.outcome = outcome.result.isError ? 'isError' : 'ok';
          return outcome.result;
        } catch (error) {
          record.outcome = McpError.from(error).code === REQUEST_CANCELLED ? 'cancelled' : 'failed';
          throw error;
        } finally {
          record.ms = Date.now() - record.at;
        }
      },
      (result) => (result.isError ? { kind: 'isError' } : { kind: 'ok' }),
    );
    if (gated.sent) return gated.result;
    this.remember(record, gated.decision);
    throw McpError.invalidRequest(gated.decision === 'asked-refused' ? `the person did not allow ${name}` : gated.reason);
  }

  /** Runs the call to its end; the progress and task statuses go to the notification (while there is one) and the tree. */
  private async runCall(
    sendCall: (options: CallToolOptions) => Promise<ToolCallOutcome>,
    server: ServerHandle,
    tool: Tool,
    call: RunningCall,
  ): Promise<CallEnding> {
    const { record, controller } = call;
    let last = 0;
    const shown = (text: string) => this.host.shown(text);
    try {
      const outcome = await sendCall({
        signal: controller.signal,
        timeoutMs: INTERACTIVE_IDLE_MS,
        resetTimeoutOnProgress: true,
        maxTotalTimeoutMs: MAX_CALL_MS,
        // A task's progress comes with the call's token for as long as the task runs.
        onProgress: (p) => {
          if (call.taskId) this.tasks.progress(server.name, call.taskId, p);
          const pct = p.total ? (p.progress / p.total) * 100 : undefined;
          call.progress?.report({
            message: p.message ? shown(p.message) : progressText(p, shown),
            increment: pct !== undefined ? Math.max(0, pct - last) : undefined,
          });
          if (pct !== undefined) last = pct;
        },
        // A task-augmented call: its status is the progress; Cancel sends tasks/cancel.
        onTaskStatus: (task) => {
          call.taskId = task.taskId;
          call.progress?.report({ message: taskProgressMessage(task, shown) });
          this.tasks.update(
            server.name,
            tool.name,
            task,
            record.at,
            () => controller.abort(),
            () => this.toBackground(server, call),
          );
        },
      });
      record.outcome = outcome.result.isError ? 'isError' : 'ok';
      record.ms = Date.now() - record.at;
      if (call.taskId) this.tasks.end(server.name, call.taskId);
      return { kind: 'result', outcome };
    } catch (error) {
      const e = McpError.from(error);
      const aborted = controller.signal.aborted;
      record.outcome = aborted || e.code === REQUEST_CANCELLED ? 'cancelled' : 'failed';
      record.ms = Date.now() - record.at;
      if (call.taskId)
        this.tasks.end(server.name, call.taskId, isTaskLost(e) ? 'lost' : record.outcome === 'cancelled' ? 'cancelled' : undefined);
      return { kind: 'error', error: e, aborted };
    }
  }

  /**
   * The progress notification's Cancel. A call that runs as a task may instead go on in the
   * background (VS Code's progress notification has room for one button only, so Cancel asks).
   */
  private async cancelRequested(server: ServerHandle, tool: Tool, call: RunningCall): Promise<void> {
    if (!call.taskId || call.record.outcome !== undefined) return call.controller.abort();
    const choice = await this.ui.cancelOrBackground(server.name, tool);
    if (call.record.outcome !== undefined) return;
    if (choice === 'cancel') call.controller.abort();
    else this.toBackground(server, call);
  }

  private toBackground(server: ServerHandle, call: RunningCall): void {
    if (call.record.background || call.record.outcome !== undefined) return;
    call.sendToBackground();
    if (call.taskId) this.tasks.backgrounded(server.name, call.taskId);
  }

  private renderResult(server: ServerHandle, tool: Tool, args: Record<string, unknown>, outcome: ToolCallOutcome): vscode.Uri {
    const rendered = renderToolResult(
      `${server.name} › ${tool.name}`,
      args,
      outcome.result,
      outcome.structuredContentCheck,
      (uri, name, mime) => toResourceUri(server.name, uri, name, mime).toString(),
    );
    return this.docs.put('results', `${tool.name}.md`, maskedForPerson(rendered.markdown), rendered.attachments);
  }

  /** Opens the result, or offers it when the call ended in the background; a tool error or a failed task says so. */
  private async reportResult(tool: Tool, call: RunningCall, outcome: ToolCallOutcome, doc: vscode.Uri): Promise<void> {
    const shown = (text: string) => this.host.shown(text);
    const open = (pick: string | undefined, action: string) => {
      if (pick === action) void showDocument(doc, { preview: false });
    };
    if (outcome.task?.status === 'failed' && !outcome.result.isError) {
      void this.ui.announceCall(
        'error',
        fromTemplate(vscode.l10n.t('MCP Host: the task of {0} failed: {1}'), shown(tool.name), taskProgressMessage(outcome.task, shown)),
      );
    }
    if (outcome.result.isError) {
      const first = outcome.result.content.find((c) => c.type === 'text');
      const details = vscode.l10n.t('Show Details');
      void this.ui
        .announceCall(
          'error',
          fromTemplate(
            vscode.l10n.t('{0} failed: {1}'),
            shown(tool.name),
            first && first.type === 'text' ? shown(first.text) : fromTemplate(vscode.l10n.t('the tool reported an error')),
          ),
          details,
        )
        .then((pick) => open(pick, details));
    } else if (call.record.background) {
      // The person moved on: the result waits for them rather than taking the editor.
      const action = vscode.l10n.t('Open Result');
      void this.ui
        .announceCall('info', fromTemplate(vscode.l10n.t('MCP Host: {0} finished in the background.'), shown(tool.name)), action)
        .then((pick) => open(pick, action));
    } else {
      await showDocument(doc, { preview: false });
    }
  }

  /** A call that ended without a result: lost or cancelled task, cancelled here, or a failure. */
  private reportFailure(tool: Tool, e: McpError, aborted: boolean): void {
    // A -32042 was handled by the host's urlElicitationRequired (consent, wait, retry); it ends here only when the person stopped.
    const shown = (text: string) => this.host.shown(text);
    const taskEnding = aborted ? undefined : taskFailureMessage(tool.name, e, shown);
    if (taskEnding) void this.ui.announceCall('error', taskEnding);
    else if (aborted)
      void this.ui.announceCall(
        'info',
        fromTemplate(
          vscode.l10n.t('MCP Host: {0} was cancelled; the server was told to stop. The call is in the tool call history.'),
          shown(tool.name),
        ),
      );
    else
      void this.ui.announceCall('error', fromTemplate(vscode.l10n.t('MCP Host: {0} failed: {1}'), shown(tool.name), shown(e.toString())));
  }

  /**
   * Opens the arguments as JSON, starting from the required keys and defaults; the person calls
   * when done. Arguments that are not JSON or fail the schema keep the editor open, the problems
   * marked on the text, until they are fixed or the person cancels.
   */
  private async argsFromJsonEditor(server: ServerHandle, tool: Tool): Promise<Record<string, unknown> | undefined> {
    const doc = await vscode.workspace.openTextDocument({
      language: 'json',
      content: `${JSON.stringify(templateArguments(tool.inputSchema), null, 2)}\n`,
    });
    await showDocument(doc, { preview: false });
    const what = `${server.name} › ${tool.name}`;
    let question = fromTemplate(vscode.l10n.t('Edit the arguments of {0}, then call it.'), this.host.shown(what));
    try {
      for (;;) {
        const send = fromTemplate(vscode.l10n.t('Call Tool'));
        const pick = await this.documentActions.ask(doc, question, [send, fromTemplate(vscode.l10n.t('Cancel'))]);
        if (pick !== send) return undefined;
        const checked = checkJsonArguments(doc.getText(), (value) => server.client?.checkToolArguments(tool, value) ?? { ok: true });
        if ('value' in checked) return checked.value;
        this.argumentProblems.set(
          doc.uri,
          checked.problems.map((p) => {
            const d = new vscode.Diagnostic(
              new vscode.Range(doc.positionAt(p.offset), doc.positionAt(p.offset + p.length)),
              p.message,
              vscode.DiagnosticSeverity.Error,
            );
            d.source = 'MCP Host';
            return d;
          }),
        );
        question = fromTemplate(
          vscode.l10n.t('The arguments of {0} have problems (marked in the editor): {1}. Fix them, then call it.'),
          this.host.shown(what),
          this.host.shown(checked.problems.map((p) => p.message).join('; ')),
        );
      }
    } finally {
      this.argumentProblems.delete(doc.uri);
      await this.documentActions.discard(doc);
    }
  }

  /** The problems of argument documents the person is fixing; also what tests read. */
  readonly argumentProblems = vscode.languages.createDiagnosticCollection('mcpHost.arguments');

  dispose(): void {
    this.argumentProblems.dispose();
  }
}

/** The Call Tool picker's items: every offered tool of every running server, with its icon where the server gives one. */
export async function toolPickItems(
  host: McpHost,
  servers: readonly ServerHandle[],
): Promise<Array<ShownPickItem & { server: ServerHandle; tool: Tool }>> {
  const offered = servers.flatMap((server) =>
    server.client ? server.tools.filter((t) => isToolOfferedToPerson(server.definition, t)).map((tool) => ({ server, tool })) : [],
  );
  await warmIcons(offered.map(({ tool }) => tool.icons));
  return offered.map(({ server, tool }) => ({
    label: host.shown(`${server.name} › ${titleAndName(tool).label}`),
    iconPath: knownIcon(tool.icons),
    // The name too, so typing "get-sum" finds "Get Sum Tool".
    description: joinShown(
      [
        host.shown(titleAndName(tool).name ?? ''),
        tool.annotations?.readOnlyHint ? fromTemplate(vscode.l10n.t('read-only')) : undefined,
        tool.annotations?.destructiveHint ? fromTemplate(vscode.l10n.t('destructive')) : undefined,
      ],
      ' · ',
    ),
    detail: tool.description === undefined ? undefined : host.shown(tool.description.split('\n')[0]),
    server,
    tool,
  }));
}

/**
 * The tool confirmation as the modal shows it. The arguments are shown whole (the person's own, or
 * an app's), with the host's secrets redacted: an app that passes a token along shows `***`.
 */
export function toolConfirmationQuestion(
  server: string,
  tool: Tool,
  args: Record<string, unknown>,
  annotationsTrusted: boolean,
  asker: ToolAsker,
  redact: Redact,
): { question: ShownText; detail: ShownText } {
  const why = toolConfirmationText(tool, annotationsTrusted);
  const parts = [forDisplay(tool.name, redact), forDisplay(server, redact)] as const;
  return {
    question:
      asker === 'app'
        ? fromTemplate(vscode.l10n.t('The app of the MCP server "{1}" asks to run the tool "{0}". Run it?'), ...parts)
        : fromTemplate(vscode.l10n.t('Run the tool "{0}" of the MCP server "{1}"?'), ...parts),
    detail: forDisplay(`${why}\n\n${vscode.l10n.t('Arguments:')}\n${JSON.stringify(args, null, 2)}`, redact, Number.POSITIVE_INFINITY),
  };
}

/** The default `HostUi.confirmTool`. */
export async function confirmWithModal(
  server: string,
  tool: Tool,
  args: Record<string, unknown>,
  annotationsTrusted: boolean,
  asker: ToolAsker,
  redact: Redact,
): Promise<'once' | 'always' | 'cancel'> {
  const once = vscode.l10n.t('Allow Once');
  const always = vscode.l10n.t('Always Allow This Tool');
  const { question, detail } = toolConfirmationQuestion(server, tool, args, annotationsTrusted, asker, redact);
  const pick = await askModal('warning', question, detail, once, always);
  return pick === once ? 'once' : pick === always ? 'always' : 'cancel';
}

/** The default `HostUi.cancelOrBackground`. */
export async function askCancelOrBackground(server: string, tool: Tool, redact: Redact): Promise<'cancel' | 'background'> {
  const cancel = vscode.l10n.t('Cancel Task');
  const background = vscode.l10n.t('Run in Background');
  const pick = await askModal(
    'warning',
    fromTemplate(vscode.l10n.t('Cancel the task of {0} on "{1}"?'), forDisplay(tool.name, redact), forDisplay(server, redact)),
    fromTemplate(
      vscode.l10n.t(
        'It runs on the server as a task. In the background it goes on, stays in the Tasks group of the MCP Servers view (with Cancel), and a notification offers its result when it ends.',
      ),
    ),
    cancel,
    background,
  );
  // Closing the question keeps the task: the tree still offers Cancel.
  return pick === cancel ? 'cancel' : 'background';
}
