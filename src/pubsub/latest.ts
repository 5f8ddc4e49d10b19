/**
 * An async iterator that holds only the latest value offered to it: a consumer that pulls slowly
 * gets the newest value when it comes back, the ones in between are dropped, and the producer
 * never waits. A value offered with `keep` is not dropped by later ones (cohortChanged's closed
 * view of a round, followed at once by the next round's). return() ends it at once, even while a
 * next() is pending, and calls `onClose` once.
 *
 * Why not a Repeater with a SlidingBuffer(1) (@repeaterjs, which Yoga uses): its executor only
 * starts on the first next(), so a value cannot be offered before the consumer pulls, and a
 * return() before the first next() never runs its cleanup, which would leak a viewer here.
 */
export class LatestValue<T> implements AsyncIterableIterator<T> {
  /** The values not yet pulled: kept ones, then at most one that a later offer replaces. */
  private queue: { value: T; kept: boolean }[] = [];
  private waiting: ((result: IteratorResult<T, undefined>) => void) | undefined;
  private done = false;
  /** finish() was called: the value not yet pulled is the last. */
  private finishing = false;

  constructor(private readonly onClose: () => void) {}

  /** Whether return() (or close()) has ended it. */
  get closed(): boolean {
    return this.done;
  }

  /**
   * Hands a value to a pending next(), or keeps it in place of the one not yet pulled (beside it,
   * when that one was offered with `keep`). O(1).
   */
  offer(value: T, options?: { keep?: boolean }): void {
    if (this.done || this.finishing) return;
    const waiting = this.waiting;
    if (waiting) {
      this.waiting = undefined;
      waiting({ value, done: false });
      return;
    }
    const kept = options?.keep ?? false;
    const last = this.queue.at(-1);
    if (last && !last.kept) this.queue[this.queue.length - 1] = { value, kept };
    else this.queue.push({ value, kept });
  }

  next(): Promise<IteratorResult<T, undefined>> {
    const first = this.queue.shift();
    if (first) {
      if (this.finishing && this.queue.length === 0) this.close();
      return Promise.resolve({ value: first.value, done: false });
    }
    if (this.done) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => {
      this.waiting = resolve;
    });
  }

  return(): Promise<IteratorResult<T, undefined>> {
    this.close();
    return Promise.resolve({ value: undefined, done: true });
  }

  /**
   * Ends the iteration once the value not yet pulled, if any, has been (nothing more is offered):
   * for a watch whose values are final. O(1).
   */
  finish(): void {
    if (this.done) return;
    if (this.queue.length === 0) return this.close();
    this.finishing = true;
  }

  /** Ends the iteration: a pending next() resolves done, the value not yet pulled is dropped. */
  close(): void {
    if (this.done) return;
    this.done = true;
    this.queue = [];
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.({ value: undefined, done: true });
    this.onClose();
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}
