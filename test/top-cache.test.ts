import { beforeAll, describe, expect, it } from 'vitest';
import type { BoardBucket, BucketView } from '../src/ranking/index.js';
import { createTopCache } from '../src/ranking/top-cache.js';
import { movableClock } from './helpers/clock.js';
import { type TestApp, startTestApp } from './helpers/test-app.js';

const at = { board: { id: 'b' }, bucket: { period: 'ALL_TIME', label: 'all' }, region: null } as unknown as BoardBucket;

function counting(size: number) {
  const reads: number[] = [];
  const read = async (_at: BoardBucket, limit: number): Promise<BucketView> => {
    reads.push(limit);
    // Answered a turn later at the soonest (an async read): the asks made meanwhile find it under way.
    const places = Array.from({ length: Math.min(limit, size) }, (_, i) => ({ playerId: `p${i}`, rank: i + 1, score: 100 - i, reachedAt: new Date(0) }));
    return { size, places };
  };
  return { reads, read };
}

describe('the shared top cache', () => {
  it('concurrent misses share one read, and smaller limits are slices of it', async () => {
    const { reads, read } = counting(500);
    let clock = 0;
    const cache = createTopCache(read, { now: () => clock });
    const views = await Promise.all([cache.top(at, 10), cache.top(at, 10), cache.top(at, 5), cache.top(at, 10)]);
    expect(reads).toEqual([10]);
    expect(views.map((v) => v.places.length)).toEqual([10, 10, 5, 10]);
    clock = 500;
    await cache.top(at, 3);
    expect(reads).toEqual([10]);
    clock = 1_001;
    await cache.top(at, 3);
    expect(reads).toEqual([10, 10]);
  });

  it('reads the largest limit asked recently, so a larger ask is one more read and then a hit', async () => {
    const { reads, read } = counting(500);
    let clock = 0;
    const cache = createTopCache(read, { now: () => clock });
    await cache.top(at, 10);
    await cache.top(at, 100);
    clock = 1_500;
    await cache.top(at, 10);
    await cache.top(at, 100);
    expect(reads).toEqual([10, 100, 100]);
    clock = 40_000;
    await cache.top(at, 10);
    expect(reads).toEqual([10, 100, 100, 10]);
  });

  it('a bucket smaller than the limit is served whole from the cache', async () => {
    const { reads, read } = counting(3);
    const cache = createTopCache(read, { now: () => 0 });
    expect((await cache.top(at, 10)).places).toHaveLength(3);
    expect((await cache.top(at, 50)).places).toHaveLength(3);
    expect(reads).toEqual([10]);
  });

  it('a read under way when the bucket is invalidated answers its own callers but is not kept, and later asks read again', async () => {
    // Each read answers when the test says, holding the size the index had when it was asked.
    const pending: { size: number; answer: () => void }[] = [];
    let indexSize = 1;
    const read = (_at: BoardBucket, _limit: number) =>
      new Promise<BucketView>((resolve) => {
        const size = indexSize;
        const places = Array.from({ length: size }, (_, i) => ({ playerId: `p${i}`, rank: i + 1, score: 100 - i, reachedAt: new Date(0) }));
        pending.push({ size, answer: () => resolve({ size, places }) });
      });
    const cache = createTopCache(read, { now: () => 0 });
    const before = cache.top(at, 10);
    // A write lands (a flag, a rebuild) while that read is in flight, and drops the cached top.
    indexSize = 2;
    cache.invalidate(at);
    const after = cache.top(at, 10);
    expect(pending.map((p) => p.size)).toEqual([1, 2]);
    pending[0]!.answer();
    expect((await before).size).toBe(1);
    // With a clock that never moves, a kept stale view would be served for ever.
    const meanwhile = cache.top(at, 10);
    pending[1]!.answer();
    expect([(await after).size, (await meanwhile).size]).toEqual([2, 2]);
    expect((await cache.top(at, 10)).size).toBe(2);
    expect(pending).toHaveLength(2);
  });

  it('a failed read is not cached', async () => {
    let fail = true;
    const cache = createTopCache(async () => {
      if (fail) throw new Error('down');
      return { size: 0, places: [] };
    });
    await expect(cache.top(at, 10)).rejects.toThrow('down');
    fail = false;
    await expect(cache.top(at, 10)).resolves.toMatchObject({ size: 0 });
  });
});

describe('top over HTTP', () => {
  let t: TestApp;
  // Still unless moved, so that the test knows the age of a cached view to the millisecond.
  const clock = movableClock({ runs: false });
  beforeAll(async () => {
    t = await startTestApp({ now: clock.now });
  });

  it('a GET of top is cacheable for a second; anything else is no-store', async () => {
    const get = (query: string) => fetch(`${t.url}/graphql?query=${encodeURIComponent(query)}`);
    expect((await get('{ top(board: "global") { size asOf } }')).headers.get('cache-control')).toBe('public, max-age=1');
    expect((await get('{ boards { id } }')).headers.get('cache-control')).toBe('no-store');
    expect((await get('{ top(board: "global") { size } boards { id } }')).headers.get('cache-control')).toBe('no-store');
    expect((await get('{ top(board: "nope") { size } }')).headers.get('cache-control')).toBe('no-store');
    const post = await fetch(`${t.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ top(board: "global") { size } }' }),
    });
    expect(post.headers.get('cache-control')).toBe('no-store');
  });

  it('asOf is the time of the index read, and a new score shows once the cached view is a second old', async () => {
    const read = async () => (await t.gql<{ top: { size: number; asOf: string } }>('{ top(board: "global") { size asOf } }')).data!.top;
    const first = await read();
    await t.server(`mutation { submitScore(input: { board: "global", playerId: "new", score: 1, matchId: "m" }) { duplicate } }`);
    // Not a change of the top (a score of 1 at the bottom), so the view is not dropped: it is served until it ages out.
    const cached = await read();
    expect(cached).toEqual(first);
    clock.advance(1_000);
    expect(await read()).toEqual(first);
    clock.advance(1);
    const fresh = await read();
    expect(fresh.size).toBe(first.size + 1);
    expect(new Date(fresh.asOf).getTime()).toBeGreaterThan(new Date(first.asOf).getTime());
  });
});
