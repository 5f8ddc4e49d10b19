import { getEventListeners } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DeadlineExceededError, deadlineSignal, settleBy, throwIfPast } from '../src/deadline.js';

/**
 * deadlineSignal's shared slots, on a frozen clock (fake timers and performance.now): a request's
 * deadline, seconds away, shares its signal with the others due in the same 16 ms and never fires
 * late; a short one is its own and exact.
 */
describe('deadline signals', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  const fakeClock = () => vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });

  it('deadlines a second or more away share a signal per slot, which fires at the slot start: never late, at most 16 ms early', () => {
    fakeClock();
    const first = deadlineSignal(5_000, 'PostgreSQL');
    expect(deadlineSignal(5_000, 'PostgreSQL')).toBe(first);
    expect(deadlineSignal(5_000, 'Redis')).not.toBe(first);
    const later = deadlineSignal(5_020, 'PostgreSQL');
    expect(later).not.toBe(first);

    vi.advanceTimersByTime(5_000 - 16);
    expect(first.aborted).toBe(false);
    vi.advanceTimersByTime(16);
    expect(first.aborted).toBe(true);
    expect(first.reason).toBeInstanceOf(DeadlineExceededError);
    expect((first.reason as Error).message).toBe('PostgreSQL did not answer within 5000 ms');
    expect(later.aborted).toBe(false);
    vi.advanceTimersByTime(20);
    expect(later.aborted).toBe(true);

    // A fired slot is not handed out again.
    const next = deadlineSignal(5_000, 'PostgreSQL');
    expect(next).not.toBe(first);
    expect(next.aborted).toBe(false);
  });

  it('a shorter deadline is its own and exact to the millisecond, and throwIfPast asks the clock', () => {
    fakeClock();
    const a = deadlineSignal(50, 'Redis');
    expect(deadlineSignal(50, 'Redis')).not.toBe(a);
    vi.advanceTimersByTime(49);
    expect(a.aborted).toBe(false);
    expect(() => throwIfPast(a)).not.toThrow();
    vi.advanceTimersByTime(1);
    expect(a.aborted).toBe(true);
    expect(() => throwIfPast(a)).toThrow(/Redis did not answer within 50 ms/);
    expect(deadlineSignal(0, 'Redis').aborted).toBe(true);
  });

  it('a shared signal takes the listeners of every request waiting on it, and lets them go, without a leak warning', async () => {
    fakeClock();
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const signal = deadlineSignal(10_000, 'PostgreSQL');
      const works = Array.from({ length: 100 }, (_, i) => settleBy(Promise.resolve(i), deadlineSignal(10_000, 'PostgreSQL')));
      expect(await Promise.all(works)).toEqual(Array.from({ length: 100 }, (_, i) => i));
      const hanging = Array.from({ length: 50 }, () => settleBy(new Promise<never>(() => undefined), signal));
      vi.advanceTimersByTime(10_000);
      for (const outcome of await Promise.allSettled(hanging)) {
        expect(outcome.status).toBe('rejected');
        expect((outcome as PromiseRejectedResult).reason).toBeInstanceOf(DeadlineExceededError);
      }
      await vi.runAllTimersAsync();
      expect(warnings.filter((warning) => warning.name === 'MaxListenersExceededWarning')).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('a thousand waits on one signal cost it one listener: each settles once, by its work or else by the signal', async () => {
    fakeClock();
    const signal = deadlineSignal(10_000, 'PostgreSQL');
    const releases: (() => void)[] = [];
    const works = Array.from({ length: 1_000 }, (_, i) =>
      settleBy(new Promise<number>((resolve) => (i % 2 === 0 ? releases.push(() => resolve(i)) : undefined)), signal),
    );
    // Why it matters: an AbortSignal walks all its listeners to add or remove one (see settleBy).
    expect(getEventListeners(signal, 'abort').length).toBe(1);
    for (const release of releases) release();
    await Promise.all(works.filter((_, i) => i % 2 === 0));
    vi.advanceTimersByTime(10_000);
    const outcomes = await Promise.allSettled(works);
    // The oracle: even-numbered works answered before the deadline, the odd ones never.
    outcomes.forEach((outcome, i) => {
      if (i % 2 === 0) expect(outcome).toEqual({ status: 'fulfilled', value: i });
      else expect((outcome as PromiseRejectedResult).reason).toBeInstanceOf(DeadlineExceededError);
    });
    // A wait on a signal already aborted is refused at once, and the signal keeps no listener.
    await expect(settleBy(Promise.resolve(1), signal)).rejects.toBeInstanceOf(DeadlineExceededError);
    expect(getEventListeners(signal, 'abort').length).toBe(0);
  });
});
