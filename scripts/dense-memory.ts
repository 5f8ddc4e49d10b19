/**
 * What a DENSE board's distinct-score keys cost (see src/ranking/dense.ts), by Redis's own count:
 * MEMORY USAGE of a bucket's sorted set and of its two distinct-score keys, for buckets of N
 * members over D distinct scores, written through the index as the service writes them. Prints
 * bytes per member for each; a measurement, not a timed benchmark. Uses REDIS_URL (default the
 * local Redis) under a key prefix of its own, deleted afterwards.
 *
 *     npx tsx scripts/dense-memory.ts
 */
import { randomBytes } from 'node:crypto';
import { DEFAULT_RETENTION, type Board } from '../src/model/board.js';
import { bucketAt } from '../src/model/buckets.js';
import { type BoardBucket, createRankingIndex } from '../src/ranking/index.js';
import { bucketKey, denseKeys } from '../src/ranking/keys.js';
import { createRedis, deleteKeysUnder } from '../src/redis.js';

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `dense-memory-${randomBytes(4).toString('hex')}:`;
const redis = createRedis(url, { keyPrefix: prefix });
await redis.connect();
const index = createRankingIndex(redis);
const now = new Date();

const board = (id: string, maxScore: number): Board => ({
  id,
  title: id,
  order: 'HIGH_FIRST',
  aggregate: 'BEST',
  maxScore,
  periods: ['ALL_TIME'],
  regions: [],
  topSize: 10,
  retention: DEFAULT_RETENTION,
  shards: 1,
  timeZone: 'UTC',
  regionTimeZones: [],
  rankStyle: 'DENSE',
  epoch: new Date('2026-01-01T00:00:00.000Z'),
  createdAt: now,
});

const memory = async (key: string) => Number((await redis.call('MEMORY', 'USAGE', `${prefix}${key}`, 'SAMPLES', '0')) ?? 0);

try {
  console.log('members  distinct  sorted set B/member  dense keys B/member  dense / sorted set');
  for (const [members, distinct] of [
    [100_000, 10],
    [100_000, 1_000],
    [100_000, 10_000],
    [100_000, 100_000],
  ] as const) {
    const at: BoardBucket = { board: board(`m${members}-d${distinct}`, 1_000_000), bucket: bucketAt(board('x', 1_000_000), 'ALL_TIME', now), region: null };
    for (let from = 0; from < members; from += 1_000) {
      const writes = Array.from({ length: Math.min(1_000, members - from) }, (_, k) => {
        const i = from + k;
        // Scores spread over `distinct` values, each held by members / distinct players.
        return { at, score: { playerId: `player-${i}`, score: (i * 7919) % distinct, reachedAt: new Date(now.getTime() - (i % 3_600_000)) }, expiresAt: null };
      });
      await index.writeBoardScores(writes);
    }
    const { scores, counts } = denseKeys(at);
    const sortedSet = await memory(bucketKey(at));
    const dense = (await memory(scores)) + (await memory(counts));
    console.log(
      `${String(members).padStart(7)}  ${String(distinct).padStart(8)}  ${(sortedSet / members).toFixed(1).padStart(19)}  ${(dense / members).toFixed(1).padStart(19)}  ${(dense / sortedSet).toFixed(3).padStart(18)}`,
    );
    await index.drop([at]);
  }
} finally {
  await deleteKeysUnder(url, prefix);
  await redis.quit();
}
