import { crc32 } from 'node:zlib';
import type { Board } from '../model/board.js';
import type { Bucket } from '../model/buckets.js';
import { packingFor } from './packing.js';

/** One ranked list: a bucket of a board, globally or for one of its regions. */
export interface BoardBucket {
  board: Board;
  bucket: Bucket;
  /** null for the global list. */
  region: string | null;
}

/** `race:WEEKLY:2026-W48:eu`: the bucket's whole name, which is its keys' Redis Cluster hash tag. */
function bucketTag({ board, bucket, region }: BoardBucket): string {
  const base = `${board.id}:${bucket.period}:${bucket.label}`;
  return region === null ? base : `${base}:${region}`;
}

/**
 * The bucket's name, e.g. `lb:{race:WEEKLY:2026-W48:eu}` (the global list: `lb:{race:WEEKLY:2026-W48}`):
 * the sorted set itself when the board has one shard, and the bucket's identity either way (the
 * recovery's pending set, page cursors, the top cache and logs name buckets by it). The braces
 * are a Redis Cluster hash tag holding the whole bucket, so different buckets spread over the
 * cluster. Board ids, labels and regions are validated to hold neither braces, colons nor '#', so
 * a key names exactly one bucket (and shard).
 */
export function bucketKey(at: BoardBucket): string {
  return `lb:{${bucketTag(at)}}`;
}

/**
 * The sorted set of shard `shard` (0-based) of a bucket: the bucket key itself on a one-shard
 * board, else `lb:{race:WEEKLY:2026-W48:eu#3}`, a hash tag of its own so the shards of one bucket
 * spread over the cluster too. O(1).
 */
export function shardKey(at: BoardBucket, shard: number): string {
  return at.board.shards === 1 ? bucketKey(at) : `lb:{${bucketTag(at)}#${shard}}`;
}

/** Every shard's sorted set of a bucket, shard 0 first. O(shards). */
export function shardKeys(at: BoardBucket): string[] {
  return Array.from({ length: at.board.shards }, (_, shard) => shardKey(at, shard));
}

/**
 * The shard a player's board scores live in, on a board of `shards` shards: CRC32 of the id's
 * UTF-8 bytes modulo the shard count. The same in every process and every release, which a
 * runtime's own string hash is not promised to be. O(length of the id).
 */
export function shardOf(playerId: string, shards: number): number {
  return shards === 1 ? 0 : crc32(playerId) % shards;
}

/** The sorted set holding a player in a bucket: the key of {@link shardOf}'s shard. O(length of the id). */
export function playerShardKey(at: BoardBucket, playerId: string): string {
  return shardKey(at, shardOf(playerId, at.board.shards));
}

/**
 * The channel a shard's top changes are announced on, before the client's key prefix: the shard's
 * key plus `#top`, e.g. `lb:{race:WEEKLY:2026-W48:eu#3}#top`. It follows the closing brace, so it
 * keeps the key's hash tag (and Cluster slot); apply-scores.ts builds the same name in Lua from the
 * (prefixed) key. O(1).
 */
export function shardTopChannel(key: string): string {
  return `${key}#top`;
}

/** Every shard's top channel of a bucket (see {@link shardTopChannel}), shard 0 first. O(shards). */
export function topChannels(at: BoardBucket): string[] {
  return shardKeys(at).map(shardTopChannel);
}

/**
 * The channel a league board's cohort changes are announced on (issue 57, cohortChanged), before
 * the client's key prefix: `lb:{race#league}#changes`. One per board, whatever its rounds, so a
 * round's close reaches the watchers of the next round too (its waiting players are placed by it).
 * The hash tag is the board's own: a board id holds no '#', so it names no bucket. O(1).
 */
export function leagueChannel(boardId: string): string {
  return `lb:{${boardId}#league}#changes`;
}

/**
 * A bucket's TOP_CHANGED webhook window (issue 58; writes/top-webhooks.ts): held for a second by
 * the process that will send the bucket's next event. Beside the bucket's key, so in its slot.
 */
export function topWebhookWindowKey(at: BoardBucket): string {
  return `${bucketKey(at)}#top-webhook`;
}

/** The fingerprint of the top last sent as TOP_CHANGED for a bucket, so an unchanged top is not sent twice. */
export function topWebhookSentKey(at: BoardBucket): string {
  return `${bucketKey(at)}#top-webhook-sent`;
}

/**
 * A board's channel of overtakings (issue 58, friendOvertook): one sharded channel per board, its
 * own hash tag, so on a Cluster a board's messages stay on one node. Without the key prefix, as
 * leagueChannel.
 */
export function overtakenChannel(boardId: string): string {
  return `lb:{${boardId}#overtaken}#changes`;
}

/** A DENSE bucket's keys beside its sorted sets (see ranking/dense.ts). */
export interface DenseKeys {
  /** The distinct scores held: a sorted set of order values. */
  scores: string;
  /** How many members hold each: a hash. */
  counts: string;
  /** A running recount's distinct scores and counts. */
  recountScores: string;
  recountCounts: string;
  /** Which recounts made the live counts: a hash {live, previous}. */
  lineage: string;
  /** The running recount's id, on a lease. */
  running: string;
}

/**
 * A DENSE board's count of distinct scores in one bucket (see ranking/dense.ts): a sorted set of
 * the distinct scores held, e.g. `lb:{race:WEEKLY:2026-W48:eu}#dense`, a hash of how many members
 * hold each, `...#dense:counts`, and while it is recounted the recount's pair (`#recount` after
 * each), the lineage and the running recount's lease. One set per bucket whatever its shards: all
 * follow the bucket's own hash tag (on a one-shard board, its sorted set's slot; on a sharded one,
 * a slot of their own). O(1).
 */
export function denseKeys(at: BoardBucket): DenseKeys {
  const scores = `${bucketKey(at)}#dense`;
  const counts = `${scores}:counts`;
  return {
    scores,
    counts,
    recountScores: `${scores}#recount`,
    recountCounts: `${counts}#recount`,
    lineage: `${scores}#lineage`,
    running: `${scores}#recounting`,
  };
}

/** A DENSE bucket's keys as its scripts take them: live scores, live counts, recount scores, recount counts, lineage, lease. */
export type DenseKeyList = [string, string, string, string, string, string];

/** A DENSE bucket's keys in the order its scripts take them (see dense-apply.ts): live scores and counts, the recount's, the lineage, the lease. */
export function denseKeyList(at: BoardBucket): DenseKeyList {
  const { scores, counts, recountScores, recountCounts, lineage, running } = denseKeys(at);
  return [scores, counts, recountScores, recountCounts, lineage, running];
}

/**
 * How far a recount of a DENSE bucket has read one shard (see recount-position.ts): the shard's
 * key plus `#recount`, e.g. `lb:{race:WEEKLY:2026-W48:eu#3}#recount`, in the shard's slot. O(1).
 */
export function recountPositionKey(shardKey: string): string {
  return `${shardKey}#recount`;
}

/**
 * The hash beside a sorted set of a board whose time is in the member (see members.ts): player id →
 * the member holding the player's result, e.g. `lb:{race:ALL_TIME:all#3}#members`. It follows the
 * closing brace, so it keeps the set's hash tag (and Cluster slot); it expires, is renamed and is
 * dropped with its set. A rebuild key's is `memberHashKey(rebuildKey(key))`. O(1).
 */
export function memberHashKey(setKey: string): string {
  return `${setKey}#members`;
}

/**
 * Every key that holds a bucket's index: its shards' sorted sets, on a board whose time is in the
 * member their member hashes, and on a DENSE board its distinct-score keys and its shards' recount
 * positions. What a lost node may have taken with it (see generation.ts), and what a drop unlinks.
 * O(shards).
 */
export function indexKeys(at: BoardBucket): string[] {
  const shards = shardKeys(at);
  const sets = packingFor(at.board, at.bucket.period).timeInMember ? [...shards, ...shards.map(memberHashKey)] : shards;
  if (at.board.rankStyle !== 'DENSE') return sets;
  return [...sets, ...denseKeyList(at), ...shards.map(recountPositionKey)];
}
