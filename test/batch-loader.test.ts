import { setImmediate as nextTurn } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { MAX_BATCH_LOADS, createBatchLoader } from '../src/services/batch-loader.js';

/** A batch loader whose batches are recorded, each key answered as itself doubled. */
function recordingLoader() {
  const batches: number[][] = [];
  const loader = createBatchLoader<number, number>(async (keys) => {
    batches.push([...keys]);
    return keys.map((key) => key * 2);
  });
  return { loader, batches };
}

describe('the batch loader (services/batch-loader.ts)', () => {
  it("answers every load of one turn from one batch, and a later turn's from another", async () => {
    const { loader, batches } = recordingLoader();
    const first = await Promise.all([3, 1, 2].map((key) => loader.load(key)));
    await nextTurn();
    const second = await loader.load(7);
    expect({ first, second }).toEqual({ first: [6, 2, 4], second: 14 });
    expect(batches).toEqual([[3, 1, 2], [7]]);
  });

  it(`splits a burst of one turn into batches of at most ${MAX_BATCH_LOADS}, each load answered its own`, async () => {
    const { loader, batches } = recordingLoader();
    const keys = Array.from({ length: 2 * MAX_BATCH_LOADS + 500 }, (_, i) => i);
    const answers = await Promise.all(keys.map((key) => loader.load(key)));
    expect(answers).toEqual(keys.map((key) => key * 2));
    expect(batches.map((batch) => batch.length)).toEqual([MAX_BATCH_LOADS, MAX_BATCH_LOADS, 500]);
    expect(batches.flat()).toEqual(keys);
  });

  it('sends a batch that reaches sendAt loads once the job that filled it is done, before the turn ends, with every load of that job', async () => {
    const events: string[] = [];
    const loader = createBatchLoader<number, number>(
      async (keys) => {
        events.push(`batch ${keys.join(',')}`);
        return keys.map((key) => key * 2);
      },
      { sendAt: 3 },
    );
    setImmediate(() => events.push('turn ends'));
    // One job past sendAt (as a request's root fields): its four loads go together.
    const filled = [1, 2, 3, 4].map((key) => loader.load(key));
    // A job queued after the batch was filled: its load waits for the turn's end.
    const later = new Promise<number>((resolve) => queueMicrotask(() => resolve(loader.load(5))));
    expect(await Promise.all([...filled, later])).toEqual([2, 4, 6, 8, 10]);
    expect(events).toEqual(['batch 1,2,3,4', 'turn ends', 'batch 5']);
  });

  it("sends a batch below sendAt at the turn's end, as without it", async () => {
    const events: string[] = [];
    const loader = createBatchLoader<number, number>(
      async (keys) => {
        events.push(`batch ${keys.join(',')}`);
        return keys;
      },
      { sendAt: 3 },
    );
    setImmediate(() => events.push('turn ends'));
    await Promise.all([loader.load(1), new Promise((resolve) => queueMicrotask(() => resolve(loader.load(2))))]);
    expect(events).toEqual(['turn ends', 'batch 1,2']);
  });
});
