/**
 * Runs jobs one at a time, in the order they were given. A job that fails fails only its own
 * promise: the next one runs as usual, so one rejection never poisons the ones after it.
 */
export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();
  private waiting = 0;

  /** No job is running or waiting. */
  get idle(): boolean {
    return this.waiting === 0;
  }

  run<T>(job: () => T | Promise<T>): Promise<T> {
    this.waiting++;
    const result = this.tail.then(job).finally(() => this.waiting--);
    this.tail = result.catch(() => undefined);
    return result;
  }
}
