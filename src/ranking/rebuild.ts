import { randomUUID } from 'node:crypto';
import type { ChainableCommander } from 'ioredis';
import type { RedisClient } from '../redis.js';
import type { BoardScore } from '../model/board.js';
import { type BoardBucket, bucketKey } from './keys.js';
import { pack, packedDirection, packingFor } from './packing.js';

/**
 * The key a bucket is rebuilt in before it is swapped in, e.g. `lb:{race}:WEEKLY:2026-W48:eu#rebuild`.
 * It keeps the bucket's hash tag, so the swap stays in one Cluster slot; no board id, label or
 * region holds a '#', so it is never another bucket's key. Fixed rather than random so that the
 * write path can find a running rebuild (see write-into-rebuild.ts).
 */
export function rebuildKey(at: BoardBucket): string {
  return `${bucketKey(at)}#rebuild`;
}

/**
 * The members flagged or erased while a rebuild of the bucket runs (see rebuild-remove.ts), taken
 * out again at the swap; e.g. `lb:{race}:WEEKLY:2026-W48:eu#rebuild:removed`. Same hash tag.
 */
export function rebuildTombstoneKey(at: BoardBucket): string {
  return `${rebuildKey(at)}:removed`;
}

/** Player ids are printable, so a member starting with a control character is never a player. */
const MARKER_PREFIX = '\u0000rebuild:';

/** How long a rebuild key outlives its last chunk: a rebuild that dies leaves nothing behind for long. */
const REBUILD_KEY_TTL_MS = 5 * 60_000;

export interface RebuildOptions {
  /** When the rebuilt key expires, or null for a key kept until it is dropped. */
  expiresAt: Date | null;
  /** Members per ZADD. Default 5,000. */
  membersPerZadd?: number;
  /** Chunks being written at once (each one pipeline of ZADDs) while the next chunk is read. Default 4. */
  chunksInFlight?: number;
}

/** Another rebuild of the same bucket holds its rebuild key; nothing was written. */
export class RebuildRunningError extends Error {
  constructor(readonly key: string) {
    super(`a rebuild of ${key} is running already`);
    this.name = 'RebuildRunningError';
  }
}

async function execPipeline(pipeline: ChainableCommander): Promise<void> {
  for (const [error] of (await pipeline.exec()) ?? []) {
    if (error) throw error;
  }
}

/**
 * Replaces a bucket's sorted set with the board scores in `chunks`, and answers how many players
 * are ranked in it afterwards. The members are written into the bucket's rebuild key with large
 * pipelined ZADDs, several chunks in flight while the next chunk is read, and the key is then
 * swapped in with one RENAME, so readers see the old board until the whole new one replaces it.
 * On any failure the live key is left as it was and the rebuild key is deleted.
 *
 * `chunks` must not start reading its snapshot before it is iterated: the rebuild key exists from
 * before the first chunk is asked for, so a write committed after the snapshot is copied into it
 * by the write path (writeBoardScores) and survives the swap. ZADDs here use the board's direction
 * (GT or LT) so a snapshot value never overwrites such a newer one. Likewise a player flagged or
 * erased after the snapshot is tombstoned by removePlayer and taken out at the swap, even when a
 * chunk read before the removal wrote them back in.
 *
 * O(N log N) for N members, in N / membersPerZadd commands.
 */
export async function rebuildSortedSet(redis: RedisClient, at: BoardBucket, chunks: AsyncIterable<BoardScore[]>, options: RebuildOptions): Promise<number> {
  const perZadd = options.membersPerZadd ?? 5_000;
  const maxInFlight = options.chunksInFlight ?? 4;
  const live = bucketKey(at);
  const temp = rebuildKey(at);
  const tombstones = rebuildTombstoneKey(at);
  const marker = `${MARKER_PREFIX}${randomUUID()}`;
  if ((await redis.beginRebuild(temp, tombstones, marker, REBUILD_KEY_TTL_MS)) !== 1) throw new RebuildRunningError(live);

  const packing = packingFor(at.board, at.bucket.period);
  const direction = packedDirection(at.board);
  const inFlight: Promise<void>[] = [];
  try {
    for await (const chunk of chunks) {
      if (chunk.length === 0) continue;
      const pipeline = redis.pipeline();
      for (let from = 0; from < chunk.length; from += perZadd) {
        const args: (string | number)[] = [];
        for (const row of chunk.slice(from, from + perZadd)) {
          args.push(pack(at.board, packing, row.score, row.reachedAt, at.bucket.start), row.playerId);
        }
        pipeline.zadd(temp, direction, ...args);
      }
      pipeline.pexpire(temp, REBUILD_KEY_TTL_MS);
      pipeline.pexpire(tombstones, REBUILD_KEY_TTL_MS);
      const written = execPipeline(pipeline);
      // Awaited below; until then a failure must not count as an unhandled rejection.
      written.catch(() => undefined);
      inFlight.push(written);
      if (inFlight.length >= maxInFlight) await inFlight.shift();
    }
    await Promise.all(inFlight);
    const expireAt = options.expiresAt ? Math.ceil(options.expiresAt.getTime() / 1000) : 0;
    const size = await redis.swapRebuilt(temp, live, tombstones, marker, expireAt);
    if (size < 0) throw new Error(`the rebuild key of ${live} expired while the rebuild stalled; the live key is unchanged`);
    return size;
  } catch (error) {
    await Promise.allSettled(inFlight);
    await redis.dropRebuild(temp, tombstones, marker).catch(() => undefined);
    throw error;
  }
}
