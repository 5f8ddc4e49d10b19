import type { ChainableCommander } from 'ioredis';
import type { RedisClient } from '../redis.js';
import type { BoardScore } from '../model/board.js';
import { type BoardBucket, bucketKey, topChannel } from './keys.js';
import { pack, packedDirection, packingFor, unpack } from './packing.js';
import { type RebuildOptions, rebuildKey, rebuildSortedSet, rebuildTombstoneKey } from './rebuild.js';
import { defineRankingScripts } from './scripts/index.js';

export type { BoardBucket } from './keys.js';
export { type RebuildOptions, RebuildRunningError, rebuildKey, rebuildTombstoneKey } from './rebuild.js';

/** A player's place in one board bucket, read from the index. */
export interface Place {
  playerId: string;
  /** 1-based. */
  rank: number;
  score: number;
  /** The start of the tie-break time unit in which the score was reached. */
  reachedAt: Date;
}

/** Places read together with the size of the bucket at the same moment. */
export interface BucketView<P = Place> {
  size: number;
  places: P[];
}

export interface BoardScoreWrite {
  at: BoardBucket;
  score: BoardScore;
  /** When the key expires, or null for a key that is kept until it is dropped. */
  expiresAt: Date | null;
}

/** Where a page starts: strictly after this key in rank order. A page cursor carries it. */
export interface PageKey {
  packed: number;
  playerId: string;
}

/** A place with the packed value it is stored under, so the next page can start after it. */
export interface PagePlace extends Place {
  packed: number;
}

/** One page of places, with whether another page follows. */
export interface PageView extends BucketView<PagePlace> {
  hasMore: boolean;
}

export type RankingIndex = ReturnType<typeof createRankingIndex>;

async function execPipeline(pipeline: ChainableCommander): Promise<unknown[]> {
  const replies = (await pipeline.exec()) ?? [];
  return replies.map(([error, reply]) => {
    if (error) throw error;
    return reply;
  });
}

function placeOf(at: BoardBucket, playerId: string, rank: number, packed: string): Place {
  const { score, reachedAt } = unpack(at.board, packingFor(at.board, at.bucket.period), Number(packed), at.bucket.start);
  return { playerId, rank: rank + 1, score, reachedAt };
}

/** Reads a flat [id, packed, id, packed, ...] run of rows, the first at 0-based rank `firstRank`. */
function placesFromRows(at: BoardBucket, rows: (number | string)[], firstRank: number): Place[] {
  const places: Place[] = [];
  for (let i = 0; i + 1 < rows.length; i += 2) {
    places.push(placeOf(at, String(rows[i]), firstRank + i / 2, String(rows[i + 1])));
  }
  return places;
}

/**
 * The ranking index: one sorted set per board bucket, holding packed board scores. It knows
 * nothing of GraphQL or of the database; it is rebuilt from the database when lost.
 */
export function createRankingIndex(redis: RedisClient) {
  defineRankingScripts(redis);
  const channelOf = (at: BoardBucket) => `${redis.options.keyPrefix ?? ''}${topChannel(at)}`;

  return {
    /**
     * Writes board scores (each already combined with what the database held) and reads every
     * member's place after its write; a write that changes its bucket's top announces it (see
     * {@link announceTopChanged}). One pipeline, two script calls per write: O(k log N).
     */
    async writeBoardScores(writes: BoardScoreWrite[]): Promise<{ size: number; place: Place | null }[]> {
      if (writes.length === 0) return [];
      const pipeline = redis.pipeline();
      for (const { at, score, expiresAt } of writes) {
        const packing = packingFor(at.board, at.bucket.period);
        const packed = pack(at.board, packing, score.score, score.reachedAt, at.bucket.start);
        const expireAt = expiresAt ? Math.ceil(expiresAt.getTime() / 1000) : 0;
        // Into a running rebuild first: should the rebuild swap in between, it carries the write.
        pipeline.writeIntoRebuild(rebuildKey(at), rebuildTombstoneKey(at), packedDirection(at.board), String(packed), score.playerId);
        // Announces on the bucket's top channel when the write changed its top (see apply-score.ts).
        pipeline.applyScore(bucketKey(at), score.playerId, String(packed), packedDirection(at.board), expireAt, at.board.topSize);
      }
      const replies = (await execPipeline(pipeline)).filter((_reply, i) => i % 2 === 1) as [number | null, string | null, number, 0 | 1][];
      return replies.map(([rank, packed, size], i) => {
        const { at, score } = writes[i]!;
        const place = rank === null || packed === null ? null : placeOf(at, score.playerId, rank, packed);
        return { size, place };
      });
    },

    /**
     * Takes a player out of the given board buckets (a flag or an erasure). Answers, per bucket,
     * the 1-based rank the player held just before, or null where they were not ranked, so the
     * caller can tell which tops changed. One pipeline: O(k log N).
     */
    async removePlayer(at: BoardBucket[], playerId: string): Promise<(number | null)[]> {
      if (at.length === 0) return [];
      const pipeline = redis.pipeline();
      for (const bucket of at) {
        // Out of a running rebuild first, as writes go into it first: should the rebuild swap in
        // between, the player is not carried back in; and tombstoned there, so that a chunk of the
        // rebuild's snapshot read before this removal cannot bring them back either (see
        // rebuild-remove.ts). Nothing is created when no rebuild runs.
        pipeline.removeFromRebuild(rebuildKey(bucket), rebuildTombstoneKey(bucket), playerId);
        pipeline.removeMember(bucketKey(bucket), playerId);
      }
      const replies = (await execPipeline(pipeline)).filter((_reply, i) => i % 2 === 1) as (number | null)[];
      return replies.map((rank) => (rank === null ? null : rank + 1));
    },

    /** The first `limit` places. O(log N + limit). */
    async top(at: BoardBucket, limit: number): Promise<BucketView> {
      const [size, ...rows] = await redis.readTop(bucketKey(at), limit);
      return { size: Number(size), places: placesFromRows(at, rows, 0) };
    },

    /** The places of the given players, null for those not ranked. O(k log N). */
    async standings(at: BoardBucket, playerIds: string[]): Promise<BucketView<Place | null>> {
      const [size, ...pairs] = await redis.readStandings(bucketKey(at), ...playerIds);
      const places = playerIds.map((playerId, i) => {
        const rank = pairs[2 * i];
        const packed = pairs[2 * i + 1];
        return rank === null || rank === undefined || packed === null || packed === undefined
          ? null
          : placeOf(at, playerId, Number(rank), String(packed));
      });
      return { size: Number(size), places };
    },

    /** The player and up to `radius` places either side; no places when the player is not ranked. O(log N + radius). */
    async around(at: BoardBucket, playerId: string, radius: number): Promise<BucketView> {
      const [size, firstRank, ...rows] = await redis.readAround(bucketKey(at), playerId, radius);
      if (firstRank === undefined) return { size: Number(size), places: [] };
      return { size: Number(size), places: placesFromRows(at, rows, Number(firstRank)) };
    },

    /**
     * Up to `first` places strictly after `after` (from the top when null), found by key rather
     * than by offset, so a place whose score does not change is never skipped nor repeated between
     * pages. O(log N + first); see read-page.ts for the case where the cursor's own player moved.
     */
    async page(at: BoardBucket, after: PageKey | null, first: number): Promise<PageView> {
      const [size, firstRank, ...rows] = await redis.readPage(bucketKey(at), first, after ? String(after.packed) : '', after?.playerId ?? '');
      const places: PagePlace[] = [];
      for (let i = 0; i + 1 < rows.length; i += 2) {
        const packed = String(rows[i + 1]);
        places.push({ ...placeOf(at, String(rows[i]), Number(firstRank) + i / 2, packed), packed: Number(packed) });
      }
      return { size: Number(size), places: places.slice(0, first), hasMore: places.length > first };
    },

    /** How many players are ranked. O(1). */
    async size(at: BoardBucket): Promise<number> {
      return redis.zcard(bucketKey(at));
    },

    /**
     * Drops the sorted sets of the given board buckets (a closed season's); answers how many
     * existed. UNLINK frees the members in the background, so a large set does not block Redis.
     * O(k) here. The keys of one board share its hash tag, so one command serves a Cluster too.
     */
    async drop(at: BoardBucket[]): Promise<number> {
      if (at.length === 0) return 0;
      return redis.unlink(...at.map(bucketKey));
    },

    /**
     * The full name of the channel a bucket's top changes are announced on: {@link topChannel}
     * under this client's key prefix, since ioredis prefixes keys but never channels. Subscribe to
     * exactly this name. O(1).
     */
    topChannel(at: BoardBucket): string {
      return channelOf(at);
    },

    /**
     * Tells every API process that these buckets' tops changed, for a change the write script
     * does not see: a flag, an unflag, an erasure, a rebuild, a season closed. Each process
     * watching one of them reads its top again. One pipelined PUBLISH per distinct bucket: O(k).
     */
    async announceTopChanged(at: BoardBucket[]): Promise<void> {
      const channels = new Set(at.map(channelOf));
      if (channels.size === 0) return;
      const pipeline = redis.pipeline();
      for (const channel of channels) pipeline.publish(channel, '');
      await execPipeline(pipeline);
    },

    /**
     * Replaces a bucket's sorted set with `chunks` of board scores in one atomic swap; answers the
     * number of players ranked after it. See rebuild.ts. O(N log N) for N members.
     */
    async rebuild(at: BoardBucket, chunks: AsyncIterable<BoardScore[]>, options: RebuildOptions): Promise<number> {
      return rebuildSortedSet(redis, at, chunks, options);
    },
  };
}
