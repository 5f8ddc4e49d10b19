/**
 * Deadlines: every request is answered within a bound, whatever a store does. A store that hangs
 * (a paused network, a frozen server) answers nothing and refuses nothing, so only a timer of our
 * own can end the wait; these helpers make that timer an AbortSignal that carries why it fired.
 */
import { setMaxListeners } from 'node:events';

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

/** Deadlines at least this far off share a signal with the others due in the same slot (see deadlineSignal). */
const SHARED_FROM_MS = 1_000;
/** The width of a shared deadline's slot: such a signal fires up to this much early. */
const SLOT_MS = 16;
/** The shared signals not yet fired, by what they bound and their slot. */
const sharedSignals = new Map<string, AbortSignal>();

/** A signal of its own that aborts `ms` from now for `what` (reported as `reportedMs`), calling `fired` first. */
function timedSignal(ms: number, what: string, reportedMs: number, fired?: () => void): AbortSignal {
  const controller = new AbortController();
  const timer = setTimeout(() => {
    fired?.();
    controller.abort(new DeadlineExceededError(what, reportedMs));
  }, ms);
  timer.unref();
  dueAt.set(controller.signal, { at: performance.now() + ms, what, ms: reportedMs });
  return controller.signal;
}

/**
 * A signal that aborts `ms` from now with a {@link DeadlineExceededError} for `what`. The timer does
 * not keep the process alive.
 *
 * A deadline a second or more away (a request's: REQUEST_TIMEOUT_MS is seconds) shares its signal
 * with every other deadline for `what` due in the same 16 ms, and fires at the slot's start: up to
 * 16 ms early, never late. Why: the timer of such a signal is never cleared (a signal has no owner
 * to say the work is done), so each request's kept an AbortController alive for its whole bound and
 * then fired it, making an error with its stack for nobody: at thousands of reads a second, tens of
 * thousands of live controllers that the garbage collector moved to the old generation. Shared,
 * there is at most one a slot (about 600 a store for a 9.5 s bound), each fired once. Its waits
 * (settleBy) cost it one listener; other listeners may come and go, so it allows any number.
 * Shorter deadlines (tests', a store's own) get a signal of their own, exact to the millisecond.
 */
export function deadlineSignal(ms: number, what: string): AbortSignal {
  // Already past: aborted now, so that no work at all is started for it.
  if (ms <= 0) return AbortSignal.abort(new DeadlineExceededError(what, 0));
  if (ms < SHARED_FROM_MS) return timedSignal(ms, what, Math.round(ms));
  const now = performance.now();
  const slotStart = Math.floor((now + ms) / SLOT_MS) * SLOT_MS;
  const key = `${slotStart}\u0000${what}`;
  let signal = sharedSignals.get(key);
  if (!signal) {
    signal = timedSignal(slotStart - now, what, Math.round(ms), () => sharedSignals.delete(key));
    setMaxListeners(0, signal);
    sharedSignals.set(key, signal);
  }
  return signal;
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

/** The waits of settleBy on each signal not yet aborted, all rejected by the signal's one listener. */
const waits = new WeakMap<AbortSignal, Set<(reason: Error) => void>>();

function waitsOn(signal: AbortSignal): Set<(reason: Error) => void> {
  const kept = waits.get(signal);
  if (kept) return kept;
  const rejects = new Set<(reason: Error) => void>();
  const abort = () => {
    waits.delete(signal);
    for (const reject of rejects) reject(signal.reason as Error);
  };
  signal.addEventListener('abort', abort, { once: true });
  waits.set(signal, rejects);
  return rejects;
}

/**
 * Settles as `work` does, or rejects with the signal's reason once it aborts, whichever comes
 * first. `work` itself is not stopped: it is the caller's to make sure that nothing it does after
 * the deadline matters (see recordGroup, which never sends COMMIT past its deadline).
 *
 * Why a set of our own rather than a listener a wait: a shared signal (see deadlineSignal) is
 * waited on by every request due in its slot, hundreds under load, and an AbortSignal's
 * addEventListener and removeEventListener each walk all of its listeners (they look for a
 * duplicate), so each wait cost time in proportion to the others: quadratic work under load. A
 * set adds and removes in constant time, and the signal keeps one listener however many wait on it.
 */
export function settleBy<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    work.catch(() => {});
    return Promise.reject(signal.reason as Error);
  }
  const rejects = waitsOn(signal);
  return new Promise<T>((resolve, reject) => {
    rejects.add(reject);
    work.then(
      (value) => (rejects.delete(reject), resolve(value)),
      (error: unknown) => (rejects.delete(reject), reject(error as Error)),
    );
  });
}
