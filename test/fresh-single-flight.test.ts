import { describe, expect, it } from 'vitest';
import { freshSingleFlight } from '../src/services/fresh-single-flight.js';

/**
 * freshSingleFlight against what one read per caller would answer: each caller's value comes from a
 * read started after it asked (the store's version counted at the read's start), however many
 * callers share it.
 */
describe('a read shared only by callers who asked before it was sent', () => {
  /** A store whose reads answer when the test says; each answers the version at its start. */
  function store() {
    let version = 0;
    const pending: (() => void)[] = [];
    const read = () =>
      new Promise<number>((resolve, reject) => {
        const at = version;
        pending.push(() => (at < 0 ? reject(new Error('down')) : resolve(at)));
      });
    return {
      read,
      pending,
      write: (to: number) => (version = to),
      answerNext: () => pending.shift()!(),
    };
  }

  it('never answers a caller with a read sent before it asked, and sends at most two reads however many ask', async () => {
    const s = store();
    const shared = freshSingleFlight(s.read);
    const first = shared();
    // Written (and acknowledged) after the first read was sent: every later caller must see it.
    s.write(1);
    const later = Array.from({ length: 100 }, () => shared());
    expect(s.pending).toHaveLength(1);
    s.answerNext();
    expect(await first).toBe(0);
    // The later callers' one read is sent only now, after every one of them asked.
    await expect.poll(() => s.pending.length).toBe(1);
    s.write(2);
    // Asked while that read is out: it waits for one of its own.
    const last = shared();
    s.answerNext();
    expect(new Set(await Promise.all(later))).toEqual(new Set([1]));
    await expect.poll(() => s.pending.length).toBe(1);
    s.answerNext();
    expect(await last).toBe(2);
    expect(s.pending).toHaveLength(0);
  });

  it('a failed read fails those who shared it, and the next ask reads again', async () => {
    const s = store();
    const shared = freshSingleFlight(s.read);
    s.write(-1);
    const failing = [shared(), shared()];
    s.answerNext();
    await expect(failing[0]).rejects.toThrow('down');
    // The second caller asked while the first read was out: its own read fails too.
    await expect.poll(() => s.pending.length).toBe(1);
    s.answerNext();
    await expect(failing[1]).rejects.toThrow('down');
    s.write(5);
    const again = shared();
    s.answerNext();
    expect(await again).toBe(5);
  });
});
