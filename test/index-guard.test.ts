import { describe, expect, it } from 'vitest';
import { type Board, DEFAULT_RETENTION } from '../src/model/board.js';
import { INDEX_METHOD_ROLES, IndexRecoveringError, createIndexGeneration, guardReads } from '../src/ranking/generation.js';
import { type BoardBucket, createRankingIndex } from '../src/ranking/index.js';
import { DEFAULT_PROFILE_HASHES, PROFILE_CHANGES_KEY, PROFILE_KEYS_PREFIX, profileHashKey } from '../src/profiles/store.js';
import { defineRankingScripts } from '../src/ranking/scripts/index.js';
import { scratchRedis } from './helpers/redis-keys.js';

/**
 * The guard against an emptied or failed-over Redis holds for every read of the index by
 * construction: every method is given a role, and every read refuses a bucket still to be rebuilt.
 */

const board: Board = {
  id: 'Guarded-EU',
  title: 'guarded',
  order: 'HIGH_FIRST',
  aggregate: 'BEST',
  maxScore: 1_000_000,
  periods: ['ALL_TIME'],
  regions: [],
  topSize: 100,
  retention: DEFAULT_RETENTION,
  shards: 1,
  timeZone: 'UTC',
  regionTimeZones: [],
  rankStyle: 'ORDINAL',
  epoch: new Date('2026-01-01T00:00:00Z'),
  createdAt: new Date('2026-01-01T00:00:00Z'),
};
const at: BoardBucket = { board, bucket: { period: 'ALL_TIME', label: 'all', start: board.epoch, end: null }, region: null };

describe('the index guard', () => {
  const { redis } = scratchRedis('index-guard');
  defineRankingScripts(redis);

  it('names a role for every method the index has', () => {
    expect(Object.keys(INDEX_METHOD_ROLES).sort()).toEqual(Object.keys(createRankingIndex(redis)).sort());
  });

  it('refuses every read of a bucket still to be rebuilt, and drops the places a write reads back', async () => {
    const generation = createIndexGeneration(redis);
    // A node that holds no marker yet: a new generation, every bucket pending until rebuilt.
    expect((await generation.check())[0]!.claimed).toBe('empty');
    const index = guardReads(createRankingIndex(redis), generation);
    const reads = Object.entries(INDEX_METHOD_ROLES)
      .filter(([, role]) => role === 'read')
      .map(([method]) => method);
    expect(reads.sort()).toEqual([
      'around',
      'arounds',
      'aroundsNamed',
      'countBetter',
      'countDistinctBetter',
      'distinctHolders',
      'page',
      'pageBefore',
      'pageFrom',
      'scanShard',
      'scoreBins',
      'size',
      'standings',
      'standingsNamed',
      'top',
    ]);
    // Where the named reads find the profiles, as the profile cache names them (ProfileStore.naming).
    const fields = {
      changesKey: PROFILE_CHANGES_KEY,
      hashPrefix: PROFILE_KEYS_PREFIX,
      hashes: DEFAULT_PROFILE_HASHES,
      keysOf: (ids: readonly string[]) => ids.map((id) => profileHashKey(id, DEFAULT_PROFILE_HASHES)),
    };
    const calls: Record<string, () => Promise<unknown>> = {
      top: () => index.top(at, 10),
      standings: () => index.standings(at, ['ada']),
      standingsNamed: () => index.standingsNamed(at, ['ada'], fields),
      around: () => index.around(at, 'ada', 2),
      arounds: () => index.arounds(at, [{ playerId: 'ada', radius: 2 }]),
      aroundsNamed: () => index.aroundsNamed(at, [{ playerId: 'ada', radius: 2 }], fields),
      page: () => index.page(at, null, 10),
      pageBefore: () => index.pageBefore(at, null, 10),
      pageFrom: () => index.pageFrom(at, 5, 10),
      scanShard: () => index.scanShard(at, 0, '0', 10),
      scoreBins: () => index.scoreBins(at, 3),
      size: () => index.size(at),
      countBetter: () => index.countBetter(at, [10]),
      countDistinctBetter: () => index.countDistinctBetter({ ...at, board: { ...board, rankStyle: 'DENSE' } }, [10]),
      distinctHolders: () => index.distinctHolders({ ...at, board: { ...board, rankStyle: 'DENSE' } }, [10]),
    };
    for (const method of reads) await expect(calls[method]!(), method).rejects.toBeInstanceOf(IndexRecoveringError);
    const written = await index.writeBoardScores([{ at, score: { playerId: 'ada', score: 10, reachedAt: new Date('2026-02-01T00:00:00Z') }, expiresAt: null }]);
    expect(written.map((result) => result.place)).toEqual([null]);
  });
});
