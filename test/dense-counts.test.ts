import { describe, expect, it } from 'vitest';
import { type Board, type BoardScore, boardScoreRow } from '../src/model/board.js';
import { bucketAt } from '../src/model/buckets.js';
import { type BoardBucket, createRankingIndex } from '../src/ranking/index.js';
import { applyDenseDeltas } from '../src/ranking/dense.js';
import { bucketKey, denseKeys } from '../src/ranking/keys.js';
import { indexTestBoard } from './helpers/board-views.js';
import { seeded } from './helpers/random.js';
import { scratchRedis } from './helpers/redis-keys.js';

/**
 * A DENSE bucket's distinct-score counts (ranking/dense.ts), through the index alone: racing
 * writers and removals converge on the counts of what the sorted sets hold, whatever the order in
 * which their changes arrive; a count that goes below zero for a moment never lists its score; and
 * a board of another style gets no such keys. The oracle is a plain count of the members' scores.
 */

const NOW = new Date('2037-11-29T12:00:00.000Z');
const denseBoard = (id: string, shards: number, order: Board['order'], aggregate: Board['aggregate']): Board => ({
  ...indexTestBoard(id, shards, order, aggregate, 5, NOW),
  rankStyle: 'DENSE',
});
const bucketOf = (board: Board): BoardBucket => ({ board, bucket: bucketAt(board, 'ALL_TIME', NOW), region: null });

describe('a DENSE bucket counts its distinct scores', () => {
  const { redis } = scratchRedis('dense-counts');
  const index = createRankingIndex(redis);

  /** The counts Redis holds, and what they should be: each score's number of members, over every shard. */
  async function countsOf(at: BoardBucket) {
    const { scores, counts } = denseKeys(at);
    const held = new Map<string, number>();
    for (const member of (await index.top(at, 100_000)).places) {
      const value = String(at.board.order === 'HIGH_FIRST' ? member.score : at.board.maxScore - member.score);
      held.set(value, (held.get(value) ?? 0) + 1);
    }
    return {
      counts: await redis.hgetall(counts),
      listed: (await redis.zrange(scores, 0, -1)).sort(),
      want: Object.fromEntries([...held].map(([value, n]) => [value, String(n)])),
      wantListed: [...held.keys()].sort(),
    };
  }

  describe.each([
    [1, 'HIGH_FIRST', 'SUM'],
    [8, 'LOW_FIRST', 'BEST'],
    [8, 'HIGH_FIRST', 'SUM'],
  ] as const)('%i shard(s), %s %s', (shards, order, aggregate) => {
    const at = bucketOf(denseBoard(`dense-${shards}-${order}-${aggregate}`, shards, order, aggregate));

    it('racing writers and removals converge; DENSE ranks are 1 + the distinct better scores', async () => {
      const next = seeded(shards * 31 + order.length);
      const players = Array.from({ length: 60 }, (_, i) => `spieler-${i}`);
      // 16 writers at once, each a batch of 40 writes of random players (a player's value only moves one way, as the board's do).
      const totals = new Map<string, number>();
      const batches = Array.from({ length: 16 }, () =>
        Array.from({ length: 40 }, (): BoardScore => {
          const playerId = players[Math.floor(next() * players.length)]!;
          const score = aggregate === 'SUM' ? Math.min(50, (totals.get(playerId) ?? 0) + Math.floor(next() * 3)) : Math.floor(next() * 12);
          totals.set(playerId, score);
          return { playerId, score, reachedAt: new Date(NOW.getTime() - Math.floor(next() * 5) * 60_000) };
        }),
      );
      await Promise.all(batches.map((batch) => index.writeBoardScores(batch.map((score) => ({ at, score, expiresAt: null })))));
      // Removals racing more writes.
      await Promise.all([
        ...players.slice(0, 10).map((playerId) => index.removePlayer([at], playerId)),
        index.writeBoardScores(players.slice(5, 15).map((playerId) => ({ at, score: { playerId, score: 50, reachedAt: NOW }, expiresAt: null }))),
      ]);
      const { counts, listed, want, wantListed } = await countsOf(at);
      expect(counts).toEqual(want);
      expect(listed).toEqual(wantListed);

      const { places } = await index.top(at, 1_000);
      const better = (score: number) => new Set(places.filter((p) => (order === 'HIGH_FIRST' ? p.score > score : p.score < score)).map((p) => p.score)).size;
      const scores = [...new Set(places.map((place) => place.score)), 51, -1].filter((score) => score >= 0 && score <= 50);
      expect(await index.countDistinctBetter(at, scores)).toEqual(scores.map(better));
    });

    it('a rebuild recounts from the sorted sets; a drop takes the counts with them', async () => {
      const { scores, counts } = denseKeys(at);
      await redis.hset(counts, '49', '7');
      await redis.zadd(scores, 49, '49');
      const members = (await index.top(at, 1_000)).places.map(({ playerId, score, reachedAt }) => ({ playerId, score, reachedAt }));
      async function* chunks() {
        yield members.map(boardScoreRow);
      }
      expect(await index.rebuild(at, chunks(), { expiresAt: null })).toBe(members.length);
      const recounted = await countsOf(at);
      expect(recounted.counts).toEqual(recounted.want);
      expect(recounted.listed).toEqual(recounted.wantListed);
      await index.drop([at]);
      expect(await redis.exists(scores, counts)).toBe(0);
    });
  });

  it("the counts expire with their bucket's sorted set, and a removal keeps that expiry", async () => {
    const at = bucketOf(denseBoard('expiring', 1, 'HIGH_FIRST', 'BEST'));
    const expiresAt = new Date(Date.now() + 3_600_000);
    await index.writeBoardScores(['a', 'b'].map((playerId, i) => ({ at, score: { playerId, score: i, reachedAt: NOW }, expiresAt })));
    await index.removePlayer([at], 'a');
    const { scores, counts } = denseKeys(at);
    const expiry = async (key: string) => Number(await redis.call('EXPIRETIME', key));
    const want = Math.ceil(expiresAt.getTime() / 1000);
    expect([await expiry(bucketKey(at)), await expiry(scores), await expiry(counts)]).toEqual([want, want, want]);
  });

  describe.each([
    [1, 'LOW_FIRST', 'BEST'],
    [8, 'HIGH_FIRST', 'SUM'],
  ] as const)('a recount with writes and removals racing it (%i shard(s), %s %s)', (shards, order, aggregate) => {
    it('ends on the counts of what the sorted sets hold, rebuild after rebuild', async () => {
      const at = bucketOf(denseBoard(`racing-${shards}-${order}`, shards, order, aggregate));
      const next = seeded(shards * 97);
      const players = Array.from({ length: 300 }, (_, i) => `läufer-${i}`);
      const held = new Map<string, number>();
      const write = (playerIds: string[]) =>
        index.writeBoardScores(
          playerIds.map((playerId) => {
            // A player's score only moves the board's way (a BEST improves, a SUM grows), as the service writes them.
            const step = Math.floor(next() * 4);
            const score = aggregate === 'SUM' ? Math.min(50, (held.get(playerId) ?? 0) + step) : Math.max(0, (held.get(playerId) ?? 50) - step);
            held.set(playerId, score);
            return { at, score: { playerId, score, reachedAt: NOW }, expiresAt: null };
          }),
        );
      await write(players);
      for (let round = 0; round < 3; round++) {
        let rebuilding = true;
        const members = (await index.top(at, 1_000)).places.map(({ playerId, score, reachedAt }) => ({ playerId, score, reachedAt }));
        async function* chunks() {
          yield members.map(boardScoreRow);
        }
        const rebuilt = index.rebuild(at, chunks(), { expiresAt: null, membersPerRecount: 4 }).finally(() => (rebuilding = false));
        let raced = 0;
        while (rebuilding) {
          const some = Array.from({ length: 3 }, () => players[Math.floor(next() * players.length)]!);
          await Promise.all([write(some), next() < 0.3 ? index.removePlayer([at], some[0]!) : null]);
          raced++;
        }
        await rebuilt;
        expect(raced, 'writes raced the recount').toBeGreaterThan(3);
        const { counts, listed, want, wantListed } = await countsOf(at);
        expect(counts, `round ${round}`).toEqual(want);
        expect(listed, `round ${round}`).toEqual(wantListed);
      }
    });
  });

  it('a change that arrives before the one it follows leaves a negative count and its score unlisted, until both are in', async () => {
    const at = bucketOf(denseBoard('early', 1, 'HIGH_FIRST', 'BEST'));
    const { scores, counts } = denseKeys(at);
    const apply = (deltas: [number, number][]) =>
      applyDenseDeltas(redis, at, '', new Map(deltas.map(([value, delta]) => [value, { live: delta, counted: delta }])), 0);
    // A member's move 7 → 9 arrives before the write that put it at 7.
    await apply([
      [7, -1],
      [9, 1],
    ]);
    expect(await redis.hgetall(counts)).toEqual({ '7': '-1', '9': '1' });
    expect(await redis.zrange(scores, 0, -1)).toEqual(['9']);
    await apply([[7, 1]]);
    expect(await redis.hgetall(counts)).toEqual({ '9': '1' });
    expect(await redis.zrange(scores, 0, -1)).toEqual(['9']);
  });

  it('a board of another style keeps no distinct-score keys', async () => {
    const at = bucketOf(indexTestBoard('plain', 8, 'HIGH_FIRST', 'BEST', 5, NOW));
    await index.writeBoardScores([{ at, score: { playerId: 'p', score: 3, reachedAt: NOW }, expiresAt: null }]);
    await index.removePlayer([at], 'p');
    const { scores, counts } = denseKeys(at);
    expect(await redis.exists(scores, counts)).toBe(0);
    await expect(index.countDistinctBetter(at, [1])).rejects.toThrow(/not DENSE/);
  });
});
