import * as vscode from 'vscode';
import { checkJsonArguments, isToolOffered, McpError, neutraliseLinks, templateArguments, titleAndName, renderToolResult, type ServerHandle, type Tool } from '../../core';
import { knownIcon } from '../icons';
import type { DocumentActions } from '../documentActions';
import type { McpHost } from '../host';
import type { OutputDocuments } from '../outputDocuments';
import { toResourceUri } from '../resources/uri';
import { askArguments } from './askArguments';
import { isTaskLost, REQUEST_CANCELLED } from '../../core';
import { taskFailureMessage, taskProgressMessage } from './taskProgress';
import { ToolTasks } from '../tasks/toolTasks';

export interface CallRecord {
  server: string;
  tool: string;
  args: Record<string, unknown>;
  at: number;
  outcome?: 'ok' | 'isError' | 'failed' | 'cancelled';
}

const ALWAYS_KEY = 'mcpHost.alwaysAllowedTools';
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
  /** Replaceable so tests can answer the confirmation without a modal. */
  confirm: (server: string, tool: Tool, args: Record<string, unknown>, annotationsTrusted: boolean) => Promise<'once' | 'always' | 'cancel'> = confirmWithModal;

  constructor(
    private readonly host: McpHost,
    private readonly docs: OutputDocuments,
    private readonly memento: vscode.Memento,
    private readonly documentActions: DocumentActions,
  ) {}

  /** Quick pick of every offered tool of every running server, unless the tree chose one. */
  async pickTool(preset?: { server: ServerHandle; tool: Tool }): Promise<{ server: ServerHandle; tool: Tool } | undefined> {
    if (preset) return preset;
    const items = this.host.servers.flatMap((server) =>
      server.client
        ? server.tools
            .filter((t) => isToolOffered(server.definition, t.name))
            .map((tool) => ({
              label: `${server.name} › ${titleAndName(tool).label}`,
              iconPath: knownIcon(tool.icons),
              // The name too, so typing "get-sum" finds "Get Sum Tool".
              description: [titleAndName(tool).name, tool.annotations?.readOnlyHint ? vscode.l10n.t('read-only') : '', tool.annotations?.destructiveHint ? vscode.l10n.t('destructive') : '']
                .filter(Boolean)
                .join(' · '),
              detail: tool.description?.split('\n')[0],
              server,
              tool,
            }))
        : [],
    );
    if (items.length === 0) {
      void vscode.window.showInformationMessage(vscode.l10n.t('MCP Host: no running server offers tools.'));
      return undefined;
    }
    return vscode.window.showQuickPick(items, { title: vscode.l10n.t('MCP Host: Call Tool'), placeHolder: vscode.l10n.t('Which tool?'), matchOnDescription: true, matchOnDetail: true });
  }

  /** The whole flow for one tool; `args` skips asking (rerun). */
  async run(server: ServerHandle, tool: Tool, args?: Record<string, unknown>): Promise<void> {
    if (!args) {
      const how = Object.keys(tool.inputSchema?.properties ?? {}).length
        ? await vscode.window.showQuickPick(
            [
              { label: `$(list-ordered) ${vscode.l10n.t('Step by step')}`, description: vscode.l10n.t('one input per argument'), json: false },
              { label: `$(json) ${vscode.l10n.t('Edit as JSON')}`, description: vscode.l10n.t('the whole argument object in an editor'), json: true },
            ],
            { title: `${server.name} › ${tool.name}`, placeHolder: vscode.l10n.t('How do you want to give the arguments?') },
          )
        : { json: false };
      if (!how) return;
      args = how.json ? await this.argsFromJsonEditor(server, tool) : await askArguments(`${server.name} › ${tool.name}`, tool.inputSchema);
      if (!args) return;
    }
    await this.call(server, tool, args);
  }

  /** Validates, confirms, calls with progress and shows the result. Nothing is sent if a check fails. */
  async call(server: ServerHandle, tool: Tool, args: Record<string, unknown>): Promise<CallRecord | undefined> {
    const client = server.client;
    if (!client) {
      void vscode.window.showErrorMessage(vscode.l10n.t('MCP Host: "{0}" is not running.', server.name));
      return undefined;
    }
    const check = client.checkToolArguments(tool, args);
    if (!check.ok && check.kind !== 'unusableSchema') {
      void vscode.window.showErrorMessage(vscode.l10n.t('MCP Host: invalid arguments for {0} (-32602): {1}. Nothing was sent.', tool.name, check.message));
      return undefined;
    }
    if (!(await this.mayRun(server, tool, args))) return undefined;
    return this.send(server, tool, args);
  }

  private async send(server: ServerHandle, tool: Tool, args: Record<string, unknown>): Promise<CallRecord | undefined> {
    const client = server.client;
    if (!client) return undefined;
    const record: CallRecord = { server: server.name, tool: tool.name, args, at: Date.now() };
    this.history.unshift(record);
    this.history.splice(HISTORY_SIZE);
    await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `${server.name} › ${tool.title ?? tool.name}`, cancellable: true }, async (progress, token) => {
      const controller = new AbortController();
      token.onCancellationRequested(() => controller.abort());
      let last = 0;
      let taskId: string | undefined;
      try {
        const outcome = await client.callTool(tool.name, args, {
          signal: controller.signal,
          timeoutMs: INTERACTIVE_IDLE_MS,
          resetTimeoutOnProgress: true,
          maxTotalTimeoutMs: MAX_CALL_MS,
          onProgress: (p) => {
            const pct = p.total ? (p.progress / p.total) * 100 : undefined;
            progress.report({ message: p.message ?? (p.total ? vscode.l10n.t('{0} of {1}', p.progress, p.total) : String(p.progress)), increment: pct !== undefined ? Math.max(0, pct - last) : undefined });
            if (pct !== undefined) last = pct;
          },
          // A task-augmented call: its status is the progress; Cancel sends tasks/cancel.
          onTaskStatus: (task) => {
            taskId = task.taskId;
            progress.report({ message: taskProgressMessage(task) });
            this.tasks.update(server.name, tool.name, task, record.at, () => controller.abort());
          },
        });
        record.outcome = outcome.result.isError ? 'isError' : 'ok';
        if (taskId) this.tasks.end(server.name, taskId);
        const rendered = renderToolResult(`${server.name} › ${tool.name}`, args, outcome.result, outcome.structuredContentCheck, (uri, name, mime) => toResourceUri(server.name, uri, name, mime).toString());
        const doc = this.docs.put('results', `${tool.name}.md`, rendered.markdown, rendered.attachments);
        if (outcome.task?.status === 'failed' && !outcome.result.isError) {
          void vscode.window.showErrorMessage(vscode.l10n.t('MCP Host: the task of {0} failed: {1}', tool.name, taskProgressMessage(outcome.task)));
        }
        if (outcome.result.isError) {
          const first = outcome.result.content.find((c) => c.type === 'text');
          const details = vscode.l10n.t('Show Details');
          void vscode.window
            .showErrorMessage(vscode.l10n.t('{0} failed: {1}', tool.name, first && first.type === 'text' ? neutraliseLinks(first.text) : vscode.l10n.t('the tool reported an error')), details)
            .then((pick) => {
              if (pick === details) void vscode.window.showTextDocument(doc, { preview: false });
            });
        } else {
          await vscode.window.showTextDocument(doc, { preview: false });
        }
      } catch (error) {
        const e = McpError.from(error);
        const taskEnding = controller.signal.aborted ? undefined : taskFailureMessage(tool.name, e);
        record.outcome = controller.signal.aborted || e.code === REQUEST_CANCELLED ? 'cancelled' : 'failed';
        if (taskId) this.tasks.end(server.name, taskId, isTaskLost(e) ? 'lost' : record.outcome === 'cancelled' ? 'cancelled' : undefined);
        // A -32042 was handled by the host's urlElicitationRequired (consent, wait, retry); it ends here only when the person stopped.
        if (taskEnding) void vscode.window.showErrorMessage(this.host.redact(taskEnding));
        else if (controller.signal.aborted)
          void vscode.window.showInformationMessage(vscode.l10n.t('MCP Host: {0} was cancelled; the server was told to stop. The call is in the tool call history.', tool.name));
        else void vscode.window.showErrorMessage(vscode.l10n.t('MCP Host: {0} failed: {1}', tool.name, neutraliseLinks(this.host.redact(e.toString()))));
      }
    });
    return record;
  }

  private async mayRun(server: ServerHandle, tool: Tool, args: Record<string, unknown>): Promise<boolean> {
    // readOnlyHint is the server's claim: it counts only for a server the person trusts (README, "Tool confirmation").
    if (tool.annotations?.readOnlyHint === true && server.definition.trustAnnotations) return true;
    if (server.definition.autoApprove.includes(tool.name)) return true;
    const key = `${server.name}\u0000${tool.name}`;
    const always = this.memento.get<string[]>(ALWAYS_KEY, []);
    if (always.includes(key)) return true;
    const answer = await this.confirm(server.name, tool, args, server.definition.trustAnnotations);
    if (answer === 'always') await this.memento.update(ALWAYS_KEY, [...always, key]);
    return answer !== 'cancel';
  }

  /**
   * Opens the arguments as JSON, starting from the required keys and defaults; the person calls
   * when done. Arguments that are not JSON or fail the schema keep the editor open, the problems
   * marked on the text, until they are fixed or the person cancels.
   */
  private async argsFromJsonEditor(server: ServerHandle, tool: Tool): Promise<Record<string, unknown> | undefined> {
    const doc = await vscode.workspace.openTextDocument({ language: 'json', content: `${JSON.stringify(templateArguments(tool.inputSchema), null, 2)}\n` });
    await vscode.window.showTextDocument(doc, { preview: false });
    const what = `${server.name} › ${tool.name}`;
    let question = vscode.l10n.t('Edit the arguments of {0}, then call it.', what);
    try {
      for (;;) {
        const send = vscode.l10n.t('Call Tool');
        const pick = await this.documentActions.ask(doc, question, [send, vscode.l10n.t('Cancel')]);
        if (pick !== send) return undefined;
        const checked = checkJsonArguments(doc.getText(), (value) => server.client?.checkToolArguments(tool, value) ?? { ok: true });
        if ('value' in checked) return checked.value;
        this.argumentProblems.set(
          doc.uri,
          checked.problems.map((p) => {
            const d = new vscode.Diagnostic(new vscode.Range(doc.positionAt(p.offset), doc.positionAt(p.offset + p.length)), p.message, vscode.DiagnosticSeverity.Error);
            d.source = 'MCP Host';
            return d;
          }),
        );
        question = vscode.l10n.t('The arguments of {0} have problems (marked in the editor): {1}. Fix them, then call it.', what, checked.problems.map((p) => p.message).join('; '));
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

async function confirmWithModal(server: string, tool: Tool, args: Record<string, unknown>, annotationsTrusted: boolean): Promise<'once' | 'always' | 'cancel'> {
  const once = vscode.l10n.t('Allow Once');
  const always = vscode.l10n.t('Always Allow This Tool');
  const claimsReadOnly = tool.annotations?.readOnlyHint === true && !annotationsTrusted;
  const hint = tool.annotations?.destructiveHint === false ? '' : ` ${tool.annotations?.destructiveHint ? vscode.l10n.t('It is marked destructive.') : vscode.l10n.t('It may change things.')}`;
  const why = claimsReadOnly
    ? vscode.l10n.t("The server says the tool is read-only, but this server's annotations are not trusted (setting trustAnnotations).")
    : `${vscode.l10n.t('The tool is not marked read-only.')}${hint}`;
  const pick = await vscode.window.showWarningMessage(
    vscode.l10n.t('Run the tool "{0}" of the MCP server "{1}"?', tool.name, server),
    { modal: true, detail: `${why}\n\n${vscode.l10n.t('Arguments:')}\n${JSON.stringify(args, null, 2)}` },
    once,
    always,
  );
  return pick === once ? 'once' : pick === always ? 'always' : 'cancel';
}
