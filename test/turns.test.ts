import { describe, expect, it } from 'vitest';
import { ROWS_PER_TURN, inTurns } from '../src/schema/turns.js';

describe('a long list is completed in turns of the event loop', () => {
  it('short lists are untouched; a long one keeps its order, the first chunk ready and each later one a turn after the one before', async () => {
    const short = Array.from({ length: ROWS_PER_TURN }, (_, i) => i);
    expect(inTurns(short)).toBe(short);

    const long = Array.from({ length: 2 * ROWS_PER_TURN + 10 }, (_, i) => i);
    const turned = inTurns(long);
    expect(turned.slice(0, ROWS_PER_TURN)).toEqual(long.slice(0, ROWS_PER_TURN));
    expect(turned.slice(ROWS_PER_TURN).every((item) => item instanceof Promise)).toBe(true);

    // What else the process has to do (another request's I/O callback) runs between the chunks.
    // The event loop turns between the chunks (what else the process has to do, another request's
    // I/O, runs there): a tick counted on every turn has moved on from one chunk to the next.
    let ticks = 0;
    let counting = true;
    const tick = () => {
      ticks += 1;
      if (counting) setImmediate(tick);
    };
    setImmediate(tick);
    const at = await Promise.all([ROWS_PER_TURN, 2 * ROWS_PER_TURN].map((i) => Promise.resolve(turned[i]).then(() => ticks)));
    counting = false;
    expect(at[1]!).toBeGreaterThan(at[0]!);
    expect(await Promise.all(turned.map((item) => Promise.resolve(item)))).toEqual(long);
  });
});
