import { Emitter } from 'vscode-jsonrpc/node';
import { requiredUrlElicitations } from '../protocol/errors';
import type { ClientHandlers, ElicitationWait } from './options';

/** A request is sent again after -32042 at most this often, so a server that keeps asking cannot loop. */
const MAX_URL_ELICITATION_RETRIES = 3;
/** Completed elicitation ids remembered: a completion may arrive before the -32042 it belongs to is handled. */
const COMPLETED_ELICITATIONS_KEPT = 256;

/** The elicitation ids the server reported complete (`notifications/elicitation/complete`), and waits on them. */
export class ElicitationCompletions {
  private readonly completed = new Set<string>();
  private readonly emitter = new Emitter<string>();
  readonly onComplete = this.emitter.event;

  complete(id: string): void {
    this.completed.delete(id);
    this.completed.add(id);
    if (this.completed.size > COMPLETED_ELICITATIONS_KEPT) this.completed.delete(this.completed.values().next().value!);
    this.emitter.fire(id);
  }

  wait(ids: string[]): ElicitationWait & { dispose(): void } {
    const isCompleted = (id: string) => this.completed.has(id);
    let resolve!: () => void;
    const allCompleted = new Promise<void>((r) => (resolve = r));
    const check = () => ids.every(isCompleted) && resolve();
    const listener = this.emitter.event(check);
    check();
    return { isCompleted, allCompleted, dispose: () => listener.dispose() };
  }

  dispose(): void {
    this.emitter.dispose();
  }
}

/** Sends, and after a -32042 lets the person finish the pages, then sends the same request again. */
export async function retryAfterUrlElicitations<R>(
  send: () => Promise<R>,
  handler: NonNullable<ClientHandlers['urlElicitationRequired']>,
  request: { method: string; params?: Record<string, unknown> },
  signal: AbortSignal | undefined,
  completions: ElicitationCompletions,
  isClosed: () => boolean,
): Promise<R> {
  for (let retries = 0; ; retries++) {
    try {
      return await send();
    } catch (error) {
      const pages = requiredUrlElicitations(error);
      if (!pages.length || retries >= MAX_URL_ELICITATION_RETRIES || signal?.aborted || isClosed()) throw error;
      const wait = completions.wait(pages.map((p) => p.elicitationId));
      let decision: 'retry' | 'stop';
      try {
        decision = await handler(pages, wait, request, signal ?? new AbortController().signal);
      } finally {
        wait.dispose();
      }
      if (decision !== 'retry' || signal?.aborted || isClosed()) throw error;
    }
  }
}
