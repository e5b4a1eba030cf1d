import * as vscode from 'vscode';
import {
  fromTemplate,
  joinShown,
  McpError,
  isTaskLost,
  type ProgressNotificationParams,
  type ShownText,
  type Task,
  type TaskStatus,
} from '../../core';

/** Server text as the host shows it (`McpHost.shown`: redacted, links broken). */
type Shown = (text: string) => ShownText;

/** What a task's status says in the progress notification and the tree. */
export function taskStatusLabel(status: TaskStatus): ShownText {
  switch (status) {
    case 'working':
      return fromTemplate(vscode.l10n.t('working'));
    case 'input_required':
      return fromTemplate(vscode.l10n.t('waiting for your input'));
    case 'completed':
      return fromTemplate(vscode.l10n.t('completed'));
    case 'failed':
      return fromTemplate(vscode.l10n.t('failed'));
    case 'cancelled':
      return fromTemplate(vscode.l10n.t('cancelled'));
  }
}

/** The status line of a running task: its status, and the server's message. */
export function taskProgressMessage(task: Task, shown: Shown): ShownText {
  const label = taskStatusLabel(task.status);
  return task.statusMessage ? joinShown([label, shown(task.statusMessage)], ': ') : label;
}

/** A task-specific ending of a failed call, or undefined when the error is not about the task. */
export function taskFailureMessage(tool: string, error: McpError, shown: Shown): ShownText | undefined {
  if (isTaskLost(error)) return fromTemplate(vscode.l10n.t('MCP Host: the task of {0} was lost: {1}'), shown(tool), shown(error.message));
  const task = error.kind?.type === 'taskCancelled' ? error.kind.task : undefined;
  if (task) {
    return task.statusMessage
      ? fromTemplate(vscode.l10n.t('MCP Host: the task of {0} was cancelled: {1}'), shown(tool), shown(task.statusMessage))
      : fromTemplate(vscode.l10n.t('MCP Host: the task of {0} was cancelled.'), shown(tool));
  }
  return undefined;
}

/** A progress notification as one line: "2 of 3: its message". */
export function progressText(p: Pick<ProgressNotificationParams, 'progress' | 'total' | 'message'>, shown: Shown): ShownText {
  const count = p.total ? fromTemplate(vscode.l10n.t('{0} of {1}'), p.progress, p.total) : joinShown([p.progress], ' ');
  return p.message ? joinShown([count, shown(p.message)], ': ') : count;
}
