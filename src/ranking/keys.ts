import type { Board } from '../model/board.js';
import type { Bucket } from '../model/buckets.js';

/** One ranked list: a bucket of a board, globally or for one of its regions. */
export interface BoardBucket {
  board: Board;
  bucket: Bucket;
  /** null for the global list. */
  region: string | null;
}

/**
 * The sorted set of a board bucket, e.g. `lb:{race}:WEEKLY:2026-W48:eu`. The braces are a Redis
 * Cluster hash tag. Board ids and regions are validated to hold neither braces nor colons, so a
 * key names exactly one board bucket.
 */
export function bucketKey({ board, bucket, region }: BoardBucket): string {
  const base = `lb:{${board.id}}:${bucket.period}:${bucket.label}`;
  return region === null ? base : `${base}:${region}`;
}

/**
 * The channel a bucket's top changes are announced on, before the client's key prefix: the key
 * plus `#top`, e.g. `lb:{race}:WEEKLY:2026-W48:eu#top`. It keeps the key's hash tag; no board id,
 * label or region holds a '#', so it is never another bucket's. apply-score.ts builds the same
 * name in Lua from the (prefixed) key.
 */
export function topChannel(at: BoardBucket): string {
  return `${bucketKey(at)}#top`;
}
