import { describe, expect, it } from 'vitest';
import { ROWS_PER_CHUNK, inChunks } from '../src/resolvers/list-chunks.js';

describe('a long list is completed in chunks, a pass of the event loop each (resolvers/list-chunks.ts)', () => {
  it('short lists are untouched; a long one keeps its order, the first chunk ready and each later one a turn after the one before', async () => {
    const short = Array.from({ length: ROWS_PER_CHUNK }, (_, i) => i);
    expect(inChunks(short)).toBe(short);

    const long = Array.from({ length: 2 * ROWS_PER_CHUNK + 10 }, (_, i) => i);
    const turned = inChunks(long);
    expect(turned.slice(0, ROWS_PER_CHUNK)).toEqual(long.slice(0, ROWS_PER_CHUNK));
    expect(turned.slice(ROWS_PER_CHUNK).every((item) => item instanceof Promise)).toBe(true);

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
    const at = await Promise.all([ROWS_PER_CHUNK, 2 * ROWS_PER_CHUNK].map((i) => Promise.resolve(turned[i]).then(() => ticks)));
    counting = false;
    expect(at[1]!).toBeGreaterThan(at[0]!);
    expect(await Promise.all(turned.map((item) => Promise.resolve(item)))).toEqual(long);
  });
});
