/**
 * Deadlines: every request is answered within a bound, whatever a store does. A store that hangs
 * (a paused network, a frozen server) answers nothing and refuses nothing, so only a timer of our
 * own can end the wait; these helpers make that timer an AbortSignal that carries why it fired.
 */

/** The bound passed before the work was done. Reaches the client as UNAVAILABLE. */
export class DeadlineExceededError extends Error {
  constructor(
    readonly what: string,
    readonly ms: number,
  ) {
    super(`${what} did not answer within ${ms} ms`);
    this.name = 'DeadlineExceededError';
  }
}

/** When each signal made by deadlineSignal is due, in performance.now() milliseconds. */
const dueAt = new WeakMap<AbortSignal, { at: number; what: string; ms: number }>();

/**
 * A signal that aborts `ms` from now with a {@link DeadlineExceededError} for `what`. The timer does
 * not keep the process alive.
 */
export function deadlineSignal(ms: number, what: string): AbortSignal {
  // Already past: aborted now, so that no work at all is started for it.
  if (ms <= 0) return AbortSignal.abort(new DeadlineExceededError(what, 0));
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new DeadlineExceededError(what, Math.round(ms))), ms);
  timer.unref();
  dueAt.set(controller.signal, { at: performance.now() + ms, what, ms: Math.round(ms) });
  return controller.signal;
}

/**
 * Throws the signal's reason once it has aborted, or a {@link DeadlineExceededError} once the
 * deadline of a deadlineSignal has passed by the clock, though its timer has not run yet.
 *
 * Why the clock: a timer fires only when the event loop gets to it, and a busy loop (a burst of
 * requests, a slow machine) gets to it late, while replies already read keep the work going. A
 * step that must never happen past the deadline (sending COMMIT) asks the clock.
 */
export function throwIfPast(signal: AbortSignal): void {
  signal.throwIfAborted();
  const due = dueAt.get(signal);
  if (due && performance.now() >= due.at) throw new DeadlineExceededError(due.what, due.ms);
}

/**
 * Settles as `work` does, or rejects with the signal's reason once it aborts, whichever comes
 * first. `work` itself is not stopped: it is the caller's to make sure that nothing it does after
 * the deadline matters (see recordGroup, which never sends COMMIT past its deadline).
 */
export function settleBy<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    work.catch(() => {});
    return Promise.reject(signal.reason as Error);
  }
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', abort, { once: true });
    work.then(
      (value) => (signal.removeEventListener('abort', abort), resolve(value)),
      (error: unknown) => (signal.removeEventListener('abort', abort), reject(error as Error)),
    );
  });
}
