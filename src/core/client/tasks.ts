import type { Disposable, Event } from 'vscode-jsonrpc/node';
import { REQUEST_CANCELLED, type McpConnection, type RequestOptions } from '../jsonrpc/connection';
import { ErrorCode, McpError, errorCodeName } from '../protocol/errors';
import {
  RELATED_TASK_META_KEY,
  TERMINAL_TASK_STATUSES,
  type CreateTaskResult,
  type ProgressNotificationParams,
  type Task,
  type TaskStatus,
} from '../protocol/types';

/** Polling follows the receiver's `pollInterval`, kept inside these bounds so a server can neither flood nor stall us. */
export const MIN_TASK_POLL_MS = 200;
export const MAX_TASK_POLL_MS = 30_000;
export const DEFAULT_TASK_POLL_MS = 1_000;
/** `tasks/result` blocks until the task ends; it is asked again after this long so a lost answer cannot hang the call. */
const TASK_RESULT_WAIT_MS = 10 * 60_000;

export function isTerminalTaskStatus(status: TaskStatus): boolean {
  return TERMINAL_TASK_STATUSES.includes(status);
}

/** Whether a value is a `CreateTaskResult` (a receiver's answer to a task-augmented request). */
export function isCreateTaskResult(value: unknown): value is CreateTaskResult {
  const task = (value as { task?: unknown } | null)?.task;
  return !!task && typeof task === 'object' && typeof (task as Task).taskId === 'string' && typeof (task as Task).status === 'string';
}

/** The task is gone: the server closed, restarted or forgot it, or its ttl ran out. The `taskLost` kind marks it. */
export function taskLostError(task: Task, why: string, code: number = ErrorCode.ConnectionClosed): McpError {
  return new McpError(
    code,
    `Task ${task.taskId} lost: ${why} (last status: ${task.status})`,
    { taskId: task.taskId, taskLost: true, task },
    { type: 'taskLost', taskId: task.taskId },
  );
}
export function isTaskLost(error: unknown): boolean {
  return error instanceof McpError && error.kind?.type === 'taskLost';
}
/** The server reports the task cancelled (by us from elsewhere, or by itself). */
export function taskCancelledError(task: Task): McpError {
  const detail = task.statusMessage ? `: ${task.statusMessage}` : '';
  return new McpError(
    REQUEST_CANCELLED,
    `Task ${task.taskId} was cancelled${detail}`,
    { taskId: task.taskId, task },
    { type: 'taskCancelled', task },
  );
}

/** What following a task needs from the client. */
export interface TaskPeer {
  getTask(taskId: string, options: RequestOptions): Promise<Task>;
  taskResult(taskId: string, options: RequestOptions): Promise<unknown>;
  cancelTask(taskId: string): Promise<Task>;
  readonly onTaskStatus: Event<Task>;
  readonly onDidClose: Event<string>;
  readonly isClosed: boolean;
}

export interface FollowTaskOptions {
  /** Aborting sends `tasks/cancel` and rejects at once. */
  signal?: AbortSignal;
  /** Every status the task passes through, first the one it was created with. */
  onStatus?(task: Task): void;
  /** Give up (the task is left running on the server) after this long in total. */
  maxTotalTimeoutMs?: number;
  /** Injected for tests; Date.now otherwise. */
  now?(): number;
}

/**
 * Follows a task the server created for one of our requests until it ends: polls `tasks/get` at
 * the server's `pollInterval` (bounded), takes `notifications/tasks/status` as they come, asks for
 * `tasks/result` as soon as the task needs input (the server's requests of the task arrive on
 * that call and go through the usual handlers) or has ended, and cancels it if the caller aborts.
 * A closed connection, a task the server no longer knows or an expired ttl rejects as "task lost".
 */
export async function followTask(peer: TaskPeer, created: Task, options: FollowTaskOptions = {}): Promise<{ result: unknown; task: Task }> {
  const now = options.now ?? Date.now;
  const started = now();
  const { signal } = options;
  let task = created;
  const taskId = created.taskId;
  const local = new AbortController();
  let wake: () => void = () => {};
  let lost: string | undefined;
  let aborted = false;
  let result: { value: unknown } | { error: unknown } | undefined;
  let resultInFlight = false;

  const update = (next: Task) => {
    if (next.taskId !== taskId) return;
    if (isTerminalTaskStatus(task.status) && !isTerminalTaskStatus(next.status)) return;
    const changed = next.status !== task.status || next.statusMessage !== task.statusMessage;
    task = { ...task, ...next };
    if (changed) options.onStatus?.(task);
    wake();
  };
  const fetchResult = () => {
    if (resultInFlight || result) return;
    resultInFlight = true;
    const timeoutMs = Math.min(TASK_RESULT_WAIT_MS, remainingMs() ?? TASK_RESULT_WAIT_MS);
    peer
      .taskResult(taskId, { signal: local.signal, timeoutMs: Math.max(timeoutMs, 1) })
      .then(
        (value) => (result = { value }),
        (error) => {
          // A timed-out wait is asked again while the task runs; anything else is the answer.
          if (!(error instanceof McpError && error.code === ErrorCode.RequestTimeout)) result = { error };
        },
      )
      .finally(() => {
        resultInFlight = false;
        wake();
      });
  };
  /** Time left before the ttl or the caller's limit ends the wait; undefined: no limit. */
  const remainingMs = (): number | undefined => {
    const limits = [task.ttl ?? undefined, options.maxTotalTimeoutMs].filter((x): x is number => typeof x === 'number' && x >= 0);
    return limits.length ? Math.min(...limits) - (now() - started) : undefined;
  };
  const onAbort = () => {
    aborted = true;
    if (!isTerminalTaskStatus(task.status) && !peer.isClosed) peer.cancelTask(taskId).catch(() => undefined);
    local.abort();
    wake();
  };

  const subscriptions: Disposable[] = [
    peer.onTaskStatus(update),
    peer.onDidClose((reason) => {
      lost = reason;
      wake();
    }),
  ];
  signal?.addEventListener('abort', onAbort, { once: true });
  options.onStatus?.(task);
  try {
    if (signal?.aborted) onAbort();
    for (;;) {
      if (aborted) throw cancelled(signal, task);
      if (result && 'value' in result) return { result: result.value, task: await finalStatus() };
      if (result) {
        // The result call failed: an ended task answers that way (failed), a running one was lost.
        if (!isTerminalTaskStatus(task.status)) await finalStatus();
        throw lostOrSame(result.error);
      }
      if (lost !== undefined || peer.isClosed) throw taskLostError(task, `the server connection closed${lost ? ` (${lost})` : ''}`);
      if (task.status === 'cancelled') throw taskCancelledError(task);
      if (task.status === 'input_required' || isTerminalTaskStatus(task.status)) fetchResult();
      const left = remainingMs();
      if (left !== undefined && left <= 0) {
        throw options.maxTotalTimeoutMs !== undefined && (task.ttl === null || options.maxTotalTimeoutMs < task.ttl)
          ? McpError.totalTimeout(`task ${taskId}`, options.maxTotalTimeoutMs)
          : taskLostError(task, `its ttl of ${task.ttl} ms ran out before it ended`, ErrorCode.RequestTimeout);
      }
      const interval = Math.min(
        MAX_TASK_POLL_MS,
        Math.max(MIN_TASK_POLL_MS, task.pollInterval ?? DEFAULT_TASK_POLL_MS),
        left ?? MAX_TASK_POLL_MS,
      );
      const woken = await sleepOrWake(interval, (w) => (wake = w));
      if (woken || isTerminalTaskStatus(task.status)) continue;
      try {
        update(await peer.getTask(taskId, { signal: local.signal }));
      } catch (error) {
        if (aborted || result) continue;
        throw lostOrSame(error);
      }
    }
  } finally {
    signal?.removeEventListener('abort', onAbort);
    for (const s of subscriptions) s.dispose();
    local.abort();
  }

  async function finalStatus(): Promise<Task> {
    if (isTerminalTaskStatus(task.status) || peer.isClosed) return task;
    try {
      update(await peer.getTask(taskId, { signal: local.signal }));
    } catch {
      // The result is in hand; the status is only for display.
    }
    return task;
  }
  /**
   * An error while the task still runs means we lost track of it (closed, unreachable, restarted
   * without it: -32602, or a new session); once it has ended, the error is its answer (a failed task).
   */
  function lostOrSame(error: unknown): unknown {
    if (task.status === 'cancelled') return taskCancelledError(task);
    if (isTerminalTaskStatus(task.status)) return error;
    const e = McpError.from(error);
    if (e.code === ErrorCode.InvalidParams) return taskLostError(task, `the server no longer knows it (${e.message})`, e.code);
    return taskLostError(task, e.code === ErrorCode.ConnectionClosed ? e.message : `${errorCodeName(e.code)}: ${e.message}`, e.code);
  }
}

function cancelled(signal: AbortSignal | undefined, task: Task): McpError {
  const reason = signal?.reason;
  if (reason instanceof McpError) return reason;
  return new McpError(REQUEST_CANCELLED, `Task ${task.taskId} cancelled`, { taskId: task.taskId, task }, { type: 'taskCancelled', task });
}

/** Resolves false after `ms`, or true as soon as the registered waker is called. */
function sleepOrWake(ms: number, register: (wake: () => void) => void): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    register(() => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

let nextTaskProgressToken = 1;

/**
 * A progress token for a call that may become a task, routed to `onProgress` until disposed: the
 * server may send progress with it after answering with the task, until the task ends. A string,
 * so it can never equal the connection's own numeric tokens.
 */
export function taskProgressRoute(
  connection: Pick<McpConnection, 'routeProgress'>,
  onProgress: (p: ProgressNotificationParams) => void,
): Disposable & { token: string } {
  const token = `task-progress-${nextTaskProgressToken++}`;
  const route = connection.routeProgress(token, (p) => {
    try {
      onProgress(p);
    } catch {
      // A failing progress display must not end the task.
    }
  });
  return { token, dispose: () => route.dispose() };
}

/** Tasks we run for one server at once at most; a further task-augmented request is refused. */
export const MAX_LIVE_RECEIVER_TASKS = 64;
/** Ended tasks whose result we keep for the server to fetch (until their ttl); the oldest ended go first. */
export const MAX_ENDED_RECEIVER_TASKS = 256;
/** The longest ttl we grant a task of ours, whatever the server asks. */
export const MAX_RECEIVER_TASK_TTL_MS = 60 * 60_000;

/**
 * Tasks we run for the server (task-augmented sampling and elicitation): created, polled,
 * fetched, listed, cancelled. A server cannot make us hold more than {@link MAX_LIVE_RECEIVER_TASKS}
 * running and {@link MAX_ENDED_RECEIVER_TASKS} ended ones.
 */
export class ReceiverTasks {
  /** In creation order, so the first ended one found is the oldest. */
  private readonly entries = new Map<string, ReceiverTask>();
  private nextId = 1;

  constructor(
    private readonly notifyStatus: (task: Task) => void,
    private readonly options: { maxTtlMs?: number; defaultTtlMs?: number; pollIntervalMs?: number } = {},
  ) {}

  /** Starts `run` as a task and answers at once with the task; `run`'s signal aborts on tasks/cancel or expiry. */
  create(requestedTtl: unknown, run: (signal: AbortSignal) => Promise<unknown>): CreateTaskResult {
    const live = [...this.entries.values()].filter((e) => !e.outcome).length;
    if (live >= MAX_LIVE_RECEIVER_TASKS) {
      throw McpError.internal(
        `Task refused: ${live} tasks of this server are still running, and MCP Host runs at most ${MAX_LIVE_RECEIVER_TASKS} at once; wait for one to end or cancel one (tasks/cancel)`,
        {
          limit: MAX_LIVE_RECEIVER_TASKS,
        },
      );
    }
    const max = Math.min(this.options.maxTtlMs ?? MAX_RECEIVER_TASK_TTL_MS, MAX_RECEIVER_TASK_TTL_MS);
    const ttl =
      typeof requestedTtl === 'number' && requestedTtl > 0 ? Math.min(requestedTtl, max) : (this.options.defaultTtlMs ?? 10 * 60_000);
    const stamp = new Date().toISOString();
    const taskId = `mcp-host-task-${this.nextId++}-${Math.random().toString(36).slice(2, 10)}`;
    const entry: ReceiverTask = {
      task: {
        taskId,
        status: 'working',
        createdAt: stamp,
        lastUpdatedAt: stamp,
        ttl,
        pollInterval: this.options.pollIntervalMs ?? DEFAULT_TASK_POLL_MS,
      },
      controller: new AbortController(),
      waiters: [],
      expiry: setTimeout(() => this.expire(taskId), ttl),
    };
    entry.expiry.unref?.();
    this.entries.set(taskId, entry);
    run(entry.controller.signal).then(
      (value) => this.finish(entry, 'completed', { value }),
      (error) => this.finish(entry, entry.controller.signal.aborted ? 'cancelled' : 'failed', { error: McpError.from(error) }),
    );
    return { task: { ...entry.task } };
  }

  get(taskId: unknown): Task {
    return { ...this.entry(taskId).task };
  }

  /** Waits for the task to end; its result, or the error it ended with. */
  async result(taskId: unknown, signal: AbortSignal): Promise<unknown> {
    const entry = this.entry(taskId);
    if (!entry.outcome) {
      await new Promise<void>((resolve, reject) => {
        const onAbort = () => reject(McpError.from(signal.reason ?? new McpError(REQUEST_CANCELLED, 'Cancelled by the server')));
        signal.addEventListener('abort', onAbort, { once: true });
        entry.waiters.push(() => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        });
      });
    }
    const outcome = entry.outcome!;
    if ('error' in outcome) throw outcome.error;
    const value = outcome.value as { _meta?: object } | undefined;
    return { ...value, _meta: { ...value?._meta, [RELATED_TASK_META_KEY]: { taskId: entry.task.taskId } } };
  }

  list(): Task[] {
    return [...this.entries.values()].map((e) => ({ ...e.task }));
  }

  cancel(taskId: unknown): Task {
    const entry = this.entry(taskId);
    if (isTerminalTaskStatus(entry.task.status))
      throw McpError.invalidParams(`Task ${entry.task.taskId} has already ended (${entry.task.status})`);
    this.finish(entry, 'cancelled', { error: new McpError(REQUEST_CANCELLED, 'Task cancelled by the server') }, 'Cancelled by the server');
    entry.controller.abort(new McpError(REQUEST_CANCELLED, 'Task cancelled by the server'));
    return { ...entry.task };
  }

  /** The connection is gone: every running task is aborted and forgotten. */
  dispose(): void {
    for (const entry of this.entries.values()) {
      clearTimeout(entry.expiry);
      entry.controller.abort(McpError.connectionClosed());
    }
    this.entries.clear();
  }

  private entry(taskId: unknown): ReceiverTask {
    const entry = typeof taskId === 'string' ? this.entries.get(taskId) : undefined;
    if (!entry) throw McpError.invalidParams(`Unknown task: ${JSON.stringify(taskId)}`);
    return entry;
  }

  private finish(entry: ReceiverTask, status: TaskStatus, outcome: ReceiverTask['outcome'], statusMessage?: string): void {
    if (entry.outcome) return;
    entry.outcome = outcome;
    entry.task = { ...entry.task, status, lastUpdatedAt: new Date().toISOString(), ...(statusMessage ? { statusMessage } : {}) };
    for (const w of entry.waiters.splice(0)) w();
    if (this.entries.has(entry.task.taskId)) this.notifyStatus({ ...entry.task });
    this.forgetOldestEnded();
  }

  /** Past the cap of ended tasks, the oldest ended ones are forgotten (as if their ttl ran out). */
  private forgetOldestEnded(): void {
    let ended = [...this.entries.values()].filter((e) => e.outcome).length;
    for (const [taskId, entry] of this.entries) {
      if (ended <= MAX_ENDED_RECEIVER_TASKS) return;
      if (!entry.outcome) continue;
      clearTimeout(entry.expiry);
      this.entries.delete(taskId);
      ended--;
    }
  }

  private expire(taskId: string): void {
    const entry = this.entries.get(taskId);
    if (!entry) return;
    this.entries.delete(taskId);
    entry.controller.abort(new McpError(REQUEST_CANCELLED, 'Task ttl ran out'));
    this.finish(entry, 'cancelled', { error: McpError.invalidParams(`Task ${taskId} expired`) });
  }
}

interface ReceiverTask {
  task: Task;
  controller: AbortController;
  outcome?: { value: unknown } | { error: McpError };
  waiters: Array<() => void>;
  expiry: NodeJS.Timeout;
}
