import { randomUUID } from 'node:crypto';
import type { ChainableCommander } from 'ioredis';
import type { RedisClient } from '../redis.js';
import type { BoardScoreRow } from '../model/board.js';
import { type BoardBucket, bucketKey, memberHashKey, shardKeys, shardOf } from './keys.js';
import { timedMember } from './members.js';
import { roughlyDescending } from './insert-order.js';
import { packAt, packedDirection, packingFor } from './packing.js';

/**
 * The key a shard (the sorted set of a one-shard bucket, or one shard of a sharded one) is rebuilt
 * in before it is swapped in, e.g. `lb:{race:WEEKLY:2026-W48:eu}#rebuild`. It follows the closing
 * brace, so it keeps the shard's hash tag and the swap stays in one Cluster slot; no board id,
 * label or region holds a '#', so it is never another bucket's key. Fixed rather than random so
 * that the write path can find a running rebuild (see apply-scores.ts). O(1).
 */
export function rebuildKey(key: string): string {
  return `${key}#rebuild`;
}

/**
 * The members flagged or erased while a rebuild of the shard runs (see rebuild-remove.ts), taken
 * out again at the swap; e.g. `lb:{race:WEEKLY:2026-W48:eu}#rebuild:removed`. Same hash tag. O(1).
 */
export function rebuildTombstoneKey(key: string): string {
  return `${rebuildKey(key)}:removed`;
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
  /**
   * Chunks being written at once (each one pipeline of ZADDs) while the next chunk is read. Default
   * 2: with the stream's 50,000-row chunks, enough to keep Redis busy, and what is held stays at
   * three chunks.
   */
  chunksInFlight?: number;
  /** Members read per call while a DENSE board's distinct scores are recounted after the swap (see ranking/dense.ts). Default 5,000. */
  membersPerRecount?: number;
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

/** One shard's keys during a rebuild; on a board whose time is in the member, the member hashes of the live and rebuild keys too. */
interface ShardRebuild {
  live: string;
  temp: string;
  tombstones: string;
  liveMembers: string;
  tempMembers: string;
}

/** One shard's members of a chunk: their packed scores and player ids, index for index; their reached times where the time is in the member (else empty). */
interface ShardPart {
  packed: Float64Array;
  playerIds: string[];
  reachedMs: Float64Array;
}

/**
 * A chunk's rows packed and split by shard, each shard's in the order read. The packed scores go
 * into typed arrays: a rebuild handles millions, and a number boxed in a mixed array for each was a
 * large part of what the process's garbage collector did. O(n) for n rows.
 */
function splitByShard(
  chunk: readonly BoardScoreRow[],
  shardCount: number,
  pack: (score: number, reachedMs: number, tieBreakValues: BoardScoreRow[3]) => number,
  keepTimes = false,
): ShardPart[] {
  const shardOfRow = new Uint32Array(chunk.length);
  const sizes = new Uint32Array(shardCount);
  for (let i = 0; i < chunk.length; i++) sizes[(shardOfRow[i] = shardOf(chunk[i]![0], shardCount))]!++;
  const parts = Array.from(sizes, (size): ShardPart => ({
    packed: new Float64Array(size),
    playerIds: new Array<string>(size),
    reachedMs: new Float64Array(keepTimes ? size : 0),
  }));
  const filled = new Uint32Array(shardCount);
  for (let i = 0; i < chunk.length; i++) {
    const [playerId, score, reachedMs, tieBreakValues] = chunk[i]!;
    const shard = shardOfRow[i]!;
    const part = parts[shard]!;
    const at = filled[shard]!++;
    part.packed[at] = pack(score, reachedMs, tieBreakValues);
    part.playerIds[at] = playerId;
    if (keepTimes) part.reachedMs[at] = reachedMs;
  }
  return parts;
}

/**
 * ZADD's arguments for the members `order[from]` to `order[to - 1]` of a part: packed score, then
 * player id, as strings (what ioredis would make of the numbers, made here without boxing each).
 */
function scoreMembers(part: ShardPart, order: Uint32Array, from: number, to: number): string[] {
  const end = Math.min(to, order.length);
  const args = new Array<string>(2 * (end - from));
  for (let i = from, a = 0; i < end; i++, a += 2) {
    const member = order[i]!;
    args[a] = String(part.packed[member]);
    args[a + 1] = part.playerIds[member]!;
  }
  return args;
}

/** writeWideRebuild's triples for the members `order[from]` to `order[to - 1]` of a part: player id, packed score, member. */
function idScoreMembers(part: ShardPart, order: Uint32Array, from: number, to: number, bucketStartMs: number): string[] {
  const end = Math.min(to, order.length);
  const args = new Array<string>(3 * (end - from));
  for (let i = from, a = 0; i < end; i++, a += 3) {
    const member = order[i]!;
    const playerId = part.playerIds[member]!;
    args[a] = playerId;
    args[a + 1] = String(part.packed[member]);
    args[a + 2] = timedMember(playerId, part.reachedMs[member]!, bucketStartMs);
  }
  return args;
}

/**
 * Replaces a bucket's sorted sets (one per shard) with the board scores in `chunks`, and answers
 * how many players are ranked in the bucket afterwards. Each shard is written into its own rebuild
 * key with large pipelined ZADDs (the chunks are read once and split by shard), several chunks in
 * flight while the next chunk is read, and each is then swapped in with one RENAME, so readers see
 * a shard's old members until the whole new set replaces them. On any failure the live keys not
 * swapped yet are left as they were and the rebuild keys are deleted.
 *
 * `chunks` must not start reading its snapshot before it is iterated: the rebuild keys exist from
 * before the first chunk is asked for, so a write committed after the snapshot is copied into its
 * shard's rebuild key by the write path (writeBoardScores) and survives the swap. ZADDs here use
 * the board's direction (GT or LT) so a snapshot value never overwrites such a newer one. Likewise
 * a player flagged or erased after the snapshot is tombstoned by removePlayer and taken out at the
 * swap, even when a chunk read before the removal wrote them back in.
 *
 * A sharded bucket's shards are swapped one command each, at nearly the same moment; a read
 * between two swaps merges rebuilt shards with shards not swapped yet, each whole.
 *
 * O(N log N) for N members, in N / membersPerZadd + S commands for S shards.
 */
export async function rebuildSortedSet(
  redis: RedisClient,
  at: BoardBucket,
  chunks: AsyncIterable<readonly BoardScoreRow[]>,
  options: RebuildOptions,
): Promise<number> {
  const perZadd = options.membersPerZadd ?? 5_000;
  const maxInFlight = options.chunksInFlight ?? 2;
  const shards: ShardRebuild[] = shardKeys(at).map((live) => ({
    live,
    temp: rebuildKey(live),
    tombstones: rebuildTombstoneKey(live),
    liveMembers: memberHashKey(live),
    tempMembers: memberHashKey(rebuildKey(live)),
  }));
  const marker = `${MARKER_PREFIX}${randomUUID()}`;
  const packing = packingFor(at.board, at.bucket.period);
  // A board whose time is in the member (members.ts) rebuilds each set with its member hash, by its own scripts (wide.ts).
  const wide = packing.timeInMember;
  const dropAll = () =>
    Promise.allSettled(
      shards.map(({ temp, tombstones, tempMembers }) =>
        wide ? redis.dropWideRebuild(temp, tombstones, tempMembers, marker) : redis.dropRebuild(temp, tombstones, marker),
      ),
    );
  const claimed = await Promise.all(
    shards.map(({ temp, tombstones, tempMembers }) =>
      wide
        ? redis.beginWideRebuild(temp, tombstones, tempMembers, marker, REBUILD_KEY_TTL_MS)
        : redis.beginRebuild(temp, tombstones, marker, REBUILD_KEY_TTL_MS),
    ),
  );
  if (claimed.some((won) => won !== 1)) {
    // Only the keys holding this rebuild's marker are dropped: another rebuild's are left alone.
    await dropAll();
    throw new RebuildRunningError(bucketKey(at));
  }

  const direction = packedDirection(at.board);
  const bucketStartMs = at.bucket.start.getTime();
  const inFlight: Promise<unknown>[] = [];
  try {
    for await (const chunk of chunks) {
      if (chunk.length === 0) continue;
      const parts = splitByShard(
        chunk,
        shards.length,
        (score, reachedMs, tieBreakValues) => packAt(at.board, packing, score, reachedMs, bucketStartMs, tieBreakValues),
        wide,
      );
      // One pipeline per shard: its keys share one hash tag, so each stays on one Cluster node.
      const written = Promise.all(
        shards.map(({ temp, tombstones, tempMembers }, shard) => {
          const part = parts[shard]!;
          // In score order, roughly: Redis builds the set faster that way (see insert-order.ts).
          const order = roughlyDescending(part.packed);
          const pipeline = redis.pipeline();
          for (let from = 0; from < order.length; from += perZadd) {
            if (wide) pipeline.writeWideRebuild(temp, tempMembers, REBUILD_KEY_TTL_MS, ...idScoreMembers(part, order, from, from + perZadd, bucketStartMs));
            else pipeline.zadd(temp, direction, ...scoreMembers(part, order, from, from + perZadd));
          }
          if (wide) pipeline.pexpire(tempMembers, REBUILD_KEY_TTL_MS);
          // Every shard's keys are renewed with every chunk, whether or not it got members in it.
          pipeline.pexpire(temp, REBUILD_KEY_TTL_MS);
          pipeline.pexpire(tombstones, REBUILD_KEY_TTL_MS);
          return execPipeline(pipeline);
        }),
      );
      // Awaited below; until then a failure must not count as an unhandled rejection.
      written.catch(() => undefined);
      inFlight.push(written);
      if (inFlight.length >= maxInFlight) await inFlight.shift();
    }
    await Promise.all(inFlight);
    const expireAt = options.expiresAt ? Math.ceil(options.expiresAt.getTime() / 1000) : 0;
    const sizes = await Promise.all(
      shards.map(({ temp, live, tombstones, tempMembers, liveMembers }) =>
        wide
          ? redis.swapWideRebuilt(temp, live, tombstones, tempMembers, liveMembers, marker, expireAt)
          : redis.swapRebuilt(temp, live, tombstones, marker, expireAt),
      ),
    );
    const stalled = shards.filter((_shard, i) => sizes[i]! < 0).map(({ live }) => live);
    if (stalled.length > 0) throw new Error(`the rebuild keys of ${stalled.join(', ')} expired while the rebuild stalled; those live keys are unchanged`);
    return sizes.reduce((total, size) => total + size, 0);
  } catch (error) {
    await Promise.allSettled(inFlight);
    await dropAll();
    throw error;
  }
}
