/**
 * Deadlines: every request is answered within a bound, whatever a store does. A store that hangs
 * (a paused network, a frozen server) answers nothing and refuses nothing, so only a timer of our
 * own can end the wait; these helpers make that timer an AbortSignal that carries why it fired.
 */

/** The bound passed before the work was done. Reaches the client as UNAVAILABLE. */
export class DeadlineExceededError extends Error {
  constructor(readonly what: string, readonly ms: number) {
    super(`${what} did not answer within ${ms} ms`);
    this.name = 'DeadlineExceededError';
  }
}

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
  return controller.signal;
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
