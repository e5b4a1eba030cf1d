import type { McpConnection } from '../jsonrpc/connection';
import { McpError } from '../protocol/errors';
import { ServerRequests, type McpRequestType } from '../protocol/methods';
import type { ClientCapabilities, CreateTaskResult, Task, TaskMetadata } from '../protocol/types';
import type { ClientHandlers } from './options';
import { ReceiverTasks } from './tasks';

type Handler = (params: unknown, signal: AbortSignal) => unknown;

/** The capabilities we declare: exactly the server requests the router answers (beyond ping). */
export function clientCapabilitiesOf(h: ClientHandlers): ClientCapabilities {
  const caps: ClientCapabilities = {};
  if (h.listRoots) caps.roots = { listChanged: true };
  if (h.createMessage) caps.sampling = h.samplingTools ? { tools: {} } : {};
  if (h.elicit) caps.elicitation = Object.fromEntries((h.elicitationModes ?? ['form']).map((m) => [m, {}]));
  if (h.extensions && Object.keys(h.extensions).length) caps.extensions = h.extensions;
  // The server's requests we can run as tasks are exactly the ones we answer at all.
  if (h.createMessage || h.elicit) {
    caps.tasks = {
      list: {},
      cancel: {},
      requests: {
        ...(h.createMessage ? { sampling: { createMessage: {} } } : {}),
        ...(h.elicit ? { elicitation: { create: {} } } : {}),
      },
    };
  }
  return caps;
}

/**
 * The server's requests of the initialize era and who answers each: ping, roots, sampling and
 * elicitation through the host's handlers (the latter two also as tasks, which it then keeps), and
 * the tasks it runs for the server. A method without a handler is not offered and is refused -32601.
 */
export class ServerRequestRouter {
  /** Tasks we run for the server (task-augmented sampling and elicitation). */
  readonly tasks: ReceiverTasks;
  private readonly routes = new Map<string, { type: McpRequestType<string, unknown, unknown>; handle: Handler }>();

  constructor(
    private readonly handlers: ClientHandlers,
    notifyTaskStatus: (task: Task) => void,
  ) {
    const h = handlers;
    const tasks = new ReceiverTasks(notifyTaskStatus);
    this.tasks = tasks;
    /** A request with `task` in its params runs as a task: answered at once with the task, its result fetched later. */
    const maybeAsTask =
      <P extends { task?: TaskMetadata }, R>(run: (params: P, signal: AbortSignal) => Promise<R>) =>
      (params: P, signal: AbortSignal): Promise<R | CreateTaskResult> | CreateTaskResult => {
        const task = params?.task;
        if (!task || typeof task !== 'object') return run(params, signal);
        return tasks.create(task.ttl, (taskSignal) => run(params, taskSignal));
      };
    this.on(ServerRequests.ping, () => ({}));
    const { listRoots, createMessage, elicit } = h;
    if (listRoots) this.on(ServerRequests.listRoots, async (_params, signal) => ({ roots: await listRoots(signal) }));
    if (createMessage)
      this.on(
        ServerRequests.createMessage,
        maybeAsTask((params, signal) => createMessage(params, signal)),
      );
    if (elicit)
      this.on(
        ServerRequests.elicit,
        maybeAsTask((params, signal) => elicit(params, signal)),
      );
    if (createMessage || elicit) {
      this.on(ServerRequests.getTask, (params) => tasks.get(params?.taskId));
      this.on(ServerRequests.taskResult, (params, signal) => tasks.result(params?.taskId, signal));
      this.on(ServerRequests.listTasks, () => ({ tasks: tasks.list() }));
      this.on(ServerRequests.cancelTask, (params) => tasks.cancel(params?.taskId));
    }
  }

  /** The methods answered, for whoever needs to tell an offered request from one we never declared. */
  get methods(): string[] {
    return [...this.routes.keys()];
  }

  /** Answers one server request; -32601 for a method not offered. */
  async handle(method: string, params: unknown, signal: AbortSignal): Promise<unknown> {
    const route = this.routes.get(method);
    if (!route) throw McpError.methodNotFound(method);
    return route.handle(params, signal);
  }

  /** Hands every route to the connection, which answers the server with them. */
  attach(connection: McpConnection): void {
    for (const { type, handle } of this.routes.values()) connection.onRequest(type, handle);
    const unhandled = this.handlers.unhandledRequest;
    if (unhandled) connection.onUnhandledRequest((r) => unhandled(r));
  }

  dispose(): void {
    this.tasks.dispose();
  }

  private on<P, R>(type: McpRequestType<string, P, R>, handle: (params: P, signal: AbortSignal) => R | Promise<R>): void {
    this.routes.set(type.method, { type: type as McpRequestType<string, unknown, unknown>, handle: handle as Handler });
  }
}
