import * as vscode from 'vscode';
import { isTerminalTaskStatus, type ProgressNotificationParams, type Task } from '../../core';

/** One tool call that runs as a task, as the tree shows it. */
export interface ToolTask {
  server: string;
  tool: string;
  task: Task;
  /** Date.now() when the call started; the tree shows the time since. */
  startedAt: number;
  /** Date.now() when it ended (completed, failed, cancelled or lost). */
  endedAt?: number;
  /** Set when it ended without a status of its own from the server (lost, or cancelled here). */
  ending?: 'lost' | 'cancelled';
  /** The last `notifications/progress` of the task, if the server sends any. */
  progress?: Pick<ProgressNotificationParams, 'progress' | 'total' | 'message'>;
  /** Whether the call was sent to the background: no progress notification, a notification when it ends. */
  background?: boolean;
  /** Aborting cancels the call, which sends tasks/cancel. */
  cancel(): void;
  /** Sends a call that still shows its progress notification to the background; absent once it is there. */
  toBackground?(): void;
}

/** Ended tasks stay listed (with how they ended) up to this many per server. */
const KEEP_ENDED = 5;
/** While a task runs, its elapsed time is redrawn this often. */
const TICK_MS = 1_000;

/** The tool calls running as tasks, per server, for the tree's "Tasks" group. */
export class ToolTasks implements vscode.Disposable {
  private readonly entries = new Map<string, ToolTask>();
  private readonly changeEmitter = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changeEmitter.event;
  private ticker: NodeJS.Timeout | undefined;

  of(server: string): ToolTask[] {
    return [...this.entries.values()].filter((e) => e.server === server).sort((a, b) => b.startedAt - a.startedAt);
  }

  /** Every status of a call's task; the first one adds it to the list. */
  update(server: string, tool: string, task: Task, startedAt: number, cancel: () => void, toBackground?: () => void): void {
    const entry = this.entries.get(key(server, task.taskId));
    if (entry) entry.task = task;
    else this.entries.set(key(server, task.taskId), { server, tool, task, startedAt, cancel, toBackground });
    if (isTerminalTaskStatus(task.status)) this.end(server, task.taskId);
    this.changed();
  }

  /** A progress notification of the task's call. */
  progress(server: string, taskId: string, progress: ProgressNotificationParams): void {
    const entry = this.entries.get(key(server, taskId));
    if (!entry || entry.endedAt !== undefined) return;
    entry.progress = { progress: progress.progress, total: progress.total, message: progress.message };
    this.changed();
  }

  /** The call no longer shows a progress notification. */
  backgrounded(server: string, taskId: string): void {
    const entry = this.entries.get(key(server, taskId));
    if (!entry) return;
    entry.background = true;
    entry.toBackground = undefined;
    this.changed();
  }

  /** The call is over; `ending` when the server did not say how (lost, or cancelled from here). */
  end(server: string, taskId: string, ending?: ToolTask['ending']): void {
    const entry = this.entries.get(key(server, taskId));
    if (!entry) return;
    entry.endedAt ??= Date.now();
    entry.toBackground = undefined;
    if (ending && !isTerminalTaskStatus(entry.task.status)) entry.ending = ending;
    const ended = this.of(server).filter((e) => e.endedAt !== undefined);
    for (const old of ended.slice(KEEP_ENDED)) this.entries.delete(key(old.server, old.task.taskId));
    this.changed();
  }

  dispose(): void {
    clearInterval(this.ticker);
    this.changeEmitter.dispose();
  }

  private changed(): void {
    const running = [...this.entries.values()].some((e) => e.endedAt === undefined);
    if (running && !this.ticker) this.ticker = setInterval(() => this.changeEmitter.fire(), TICK_MS);
    if (!running && this.ticker) {
      clearInterval(this.ticker);
      this.ticker = undefined;
    }
    this.changeEmitter.fire();
  }
}

const key = (server: string, taskId: string) => `${server}\u0000${taskId}`;

/** "12 s", "3 min 4 s": how long a task has run, or ran. */
export function elapsedText(entry: ToolTask, now = Date.now()): string {
  const seconds = Math.max(0, Math.round(((entry.endedAt ?? now) - entry.startedAt) / 1000));
  return seconds < 60 ? vscode.l10n.t('{0} s', seconds) : vscode.l10n.t('{0} min {1} s', Math.floor(seconds / 60), seconds % 60);
}
