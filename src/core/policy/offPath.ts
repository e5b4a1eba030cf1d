/**
 * Work a call causes that must not sit on its path: the audit record, the history entry, the
 * trace and log lines of a chat call. It is gathered and done once, a short while after the first
 * item, not in the turn after the call's answer: that turn is when the extension host forwards the
 * answer to VS Code (the relay's reply reaches the same thread), and work run then delays the chat's
 * next step. Measured in VS Code 1.139 (bench/chat-vscode.mjs, variants side by side in the same
 * VS Codes): the audit and the history in the next turn cost a chat call 0.01–0.15 × direct more
 * than none at all; batched 25 ms later, 0.00–0.06.
 */

/** How long after its first item a batch is done: short enough that the log and the history look immediate. */
export const OFF_PATH_DELAY_MS = 25;

export class OffPath<T> {
  private items: T[] = [];
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly run: (items: T[]) => void,
    private readonly delayMs = OFF_PATH_DELAY_MS,
  ) {}

  add(item: T): void {
    this.items.push(item);
    this.timer ??= setTimeout(() => this.flush(), this.delayMs);
  }

  /** Does what is gathered now (a flush before reading the log, a close). */
  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const items = this.items.splice(0);
    if (items.length) this.run(items);
  }

  /** Drops what is gathered and stops the timer. */
  dispose(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.items = [];
  }
}
