import { beforeAll, describe, expect, it } from 'vitest';
import { type Board, type BoardScore, boardScoreRow } from '../src/model/board.js';
import { bucketAt } from '../src/model/buckets.js';
import { type BoardBucket, type Member, type RankingIndex, createRankingIndex } from '../src/ranking/index.js';
import { indexTestBoard } from './helpers/board-views.js';
import { seeded } from './helpers/random.js';
import { scratchRedis } from './helpers/redis-keys.js';

/**
 * The ranking index itself, without the API: buckets of 3, 8 and 64 shards are written exactly
 * what a one-key bucket is written, in batches that move players already ranked, and every read
 * must equal the one-key bucket's: top, size, standings, around at every radius, pages of every
 * size (also from positions no member holds), the place each write of a batch answers (as of its
 * own moment, as one sorted set answers it), removals and rebuilds. Scores and times are few, so
 * most members tie on their packed value and are ordered by their bytes.
 */

// A date to come (2037 has 2026's calendar): the app sets Redis expiries from this clock, so a
// past date would expire the keys at once.
const NOW = new Date('2037-11-29T12:00:00.000Z');
const IDS = ['Zoë', 'zoë', 'zoe', 'e', 'E', 'Ａ', '😀', '日本', 'p1', 'p10', 'p100', ...Array.from({ length: 300 }, (_, i) => `q${(i * 7919).toString(36)}`)];

const boardOf = (id: string, shards: number, order: Board['order'], aggregate: Board['aggregate']) => indexTestBoard(id, shards, order, aggregate, 5, NOW);

describe.each([
  ['HIGH_FIRST', 'BEST'],
  ['LOW_FIRST', 'SUM'],
] as const)('a %s %s bucket of 3, 8 and 64 shards answers as one key does', (order, aggregate) => {
  const { redis } = scratchRedis('shard-index');
  const index: RankingIndex = createRankingIndex(redis);
  const [single, ...sharded] = [1, 3, 8, 64].map((shards): BoardBucket => {
    const board = boardOf(`${order.toLowerCase()}-${shards}`, shards, order, aggregate);
    return { board, bucket: bucketAt(board, 'ALL_TIME', NOW), region: null };
  }) as [BoardBucket, ...BoardBucket[]];
  const next = seeded(order === 'HIGH_FIRST' ? 11 : 12);
  // The odd ids tie on score and time, so their order (over different shards) is their bytes alone.
  const first: BoardScore[] = IDS.map((playerId, i) =>
    i < 11
      ? { playerId, score: 2, reachedAt: new Date(NOW.getTime() - 60_000) }
      : { playerId, score: Math.floor(next() * 5), reachedAt: new Date(NOW.getTime() - Math.floor(next() * 3) * 60_000) },
  );
  // A second batch: the rest of the players, then some of the first ones again (moving them), some twice.
  const second: BoardScore[] = [
    ...first.slice(200),
    ...first.slice(0, 60).map((score, i) => ({ ...score, score: score.score + (i % 3) })),
    ...first.slice(0, 5),
  ];
  const writePlaces = new Map<BoardBucket, unknown[]>();

  beforeAll(async () => {
    for (const at of [single, ...sharded]) {
      const places = [];
      for (const batch of [first.slice(0, 200), second]) places.push(...(await index.writeBoardScores(batch.map((score) => ({ at, score, expiresAt: null })))));
      writePlaces.set(at, places);
    }
  });
  it('each write of a batch answers the place and size one key answers, as of its own moment', () => {
    for (const at of sharded) expect(writePlaces.get(at)).toEqual(writePlaces.get(single));
  });

  it('top, size, standings and around equal one key', async () => {
    for (const at of sharded) {
      for (const limit of [1, 7, 1_000]) expect(await index.top(at, limit)).toEqual(await index.top(single, limit));
      expect(await index.size(at)).toBe(await index.size(single));
      expect(await index.standings(at, [...IDS, 'nobody'])).toEqual(await index.standings(single, [...IDS, 'nobody']));
      for (const playerId of [...IDS.slice(0, 15), ...IDS.slice(-3), 'nobody']) {
        for (const radius of [0, 1, 3, 50]) expect(await index.around(at, playerId, radius)).toEqual(await index.around(single, playerId, radius));
      }
    }
  });

  it('arounds of many players in one call equal each one read alone on one key, sharded or not', async () => {
    // Every player, each with its own radius, two unknown players among them.
    const asks = [...IDS, 'nobody', 'nobody-else'].map((playerId, i) => ({ playerId, radius: [0, 1, 3, 50][i % 4]! }));
    const alone = await Promise.all(asks.map(({ playerId, radius }) => index.around(single, playerId, radius)));
    expect(await index.arounds(single, asks)).toEqual(alone);
    for (const at of sharded) expect(await index.arounds(at, asks)).toEqual(alone);
  });

  it('pages equal one key, from every cursor and from positions no member holds', async () => {
    const size = await index.size(single);
    for (const at of sharded) {
      for (const first of [1, 7, 1_000]) {
        let after: Member | null = null;
        let seen = 0;
        for (;;) {
          const page = await index.page(at, after, first);
          expect(page).toEqual(await index.page(single, after, first));
          seen += page.places.length;
          if (!page.hasMore) break;
          const last = page.places.at(-1)!;
          after = { packed: last.packed, playerId: last.playerId };
        }
        expect(seen).toBe(size);
      }
      const ranked = (await index.page(single, null, 60)).places;
      for (const [i, place] of ranked.entries()) {
        for (const playerId of [place.playerId, `${place.playerId}~`, '', 'zzzz']) {
          const key = { packed: place.packed - (i % 2), playerId };
          expect(await index.page(at, key, 5)).toEqual(await index.page(single, key, 5));
        }
      }
    }
  });

  it('a removal and a rebuild leave every shard count equal to one key', async () => {
    for (const at of [single, ...sharded]) await index.removePlayer([at], IDS[3]!);
    for (const at of sharded) expect(await index.top(at, 1_000)).toEqual(await index.top(single, 1_000));
    async function* chunks() {
      yield first.slice(0, 100).map(boardScoreRow);
      yield first.slice(100).map(boardScoreRow);
    }
    for (const at of [single, ...sharded]) expect(await index.rebuild(at, chunks(), { expiresAt: null })).toBe(IDS.length);
    for (const at of sharded) {
      expect(await index.top(at, 1_000)).toEqual(await index.top(single, 1_000));
      expect(await index.standings(at, IDS)).toEqual(await index.standings(single, IDS));
    }
  });
});
