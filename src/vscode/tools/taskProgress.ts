import * as vscode from 'vscode';
import { McpError, isTaskLost, neutraliseLinks, type ProgressNotificationParams, type Task, type TaskStatus } from '../../core';

/** What a task's status says in the progress notification and the tree. */
export function taskStatusLabel(status: TaskStatus): string {
  switch (status) {
    case 'working':
      return vscode.l10n.t('working');
    case 'input_required':
      return vscode.l10n.t('waiting for your input');
    case 'completed':
      return vscode.l10n.t('completed');
    case 'failed':
      return vscode.l10n.t('failed');
    case 'cancelled':
      return vscode.l10n.t('cancelled');
  }
}

/** The status line of a running task: its status, and the server's message (server text: links neutralised). */
export function taskProgressMessage(task: Task): string {
  const label = taskStatusLabel(task.status);
  return task.statusMessage ? `${label}: ${neutraliseLinks(task.statusMessage)}` : label;
}

/** A task-specific ending of a failed call, or undefined when the error is not about the task. */
export function taskFailureMessage(tool: string, error: McpError): string | undefined {
  if (isTaskLost(error)) return vscode.l10n.t('MCP Host: the task of {0} was lost: {1}', tool, neutraliseLinks(error.message));
  const task = error.kind?.type === 'taskCancelled' ? error.kind.task : undefined;
  if (task) {
    return task.statusMessage ? vscode.l10n.t('MCP Host: the task of {0} was cancelled: {1}', tool, neutraliseLinks(task.statusMessage)) : vscode.l10n.t('MCP Host: the task of {0} was cancelled.', tool);
  }
  return undefined;
}

/** A progress notification as one line: "2 of 3: its message" (server text: links neutralised). */
export function progressText(p: Pick<ProgressNotificationParams, 'progress' | 'total' | 'message'>): string {
  const count = p.total ? vscode.l10n.t('{0} of {1}', p.progress, p.total) : String(p.progress);
  return p.message ? `${count}: ${neutraliseLinks(p.message)}` : count;
}
