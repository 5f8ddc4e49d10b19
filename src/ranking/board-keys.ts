import { type RedisClient, isCluster, mastersOf } from '../redis.js';
import type { Redis } from 'ioredis';

/**
 * deleteBoard's Redis half (issue 60): frees every key of one board on every master.
 *
 * Every key of a board's buckets starts `lb:{<board>:` (a bucket's sorted set, its shards
 * `lb:{<board>:...#<n>}`, and what follows the closing brace: `#members`, `#dense...`, `#recount`,
 * `#rebuild...`, `#top-webhook...`) or `lb:{<board>#` (the board's own channels' tags). A board id
 * holds neither ':' nor '#' nor braces (nor a glob character), so `lb:{<board>[:#]*` matches the
 * keys of that board and of no other (`race` never matches `race2`'s). Besides those, the recovery's
 * pending sets (generation.ts) may name the board's buckets as members, and a rebuild job's hash
 * (services/rebuild-jobs.ts) names the board in a field: both are taken out too.
 */

/** What a SCAN pattern needs of the client's key prefix: ioredis does not prefix patterns, and keys come back with it. */
const prefixOf = (redis: RedisClient) => (isCluster(redis) ? redis.options.redisOptions?.keyPrefix : redis.options.keyPrefix) ?? '';

/** Keys per SCAN page. */
const SCAN_COUNT = 1_000;

/** Every key on `node` matching `pattern` (prefix included), without the prefix, a page at a time. O(keys on the node). */
async function* scanNode(node: Redis, pattern: string, prefix: string): AsyncGenerator<string[]> {
  let cursor = '0';
  do {
    const [next, found] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', SCAN_COUNT);
    if (found.length > 0) yield found.map((key) => key.slice(prefix.length));
    cursor = next;
  } while (cursor !== '0');
}

/**
 * Unlinks every key of board `boardId` on every master (the node itself on one node), takes its
 * buckets out of the recovery's pending sets, and deletes the rebuild jobs of the board. Answers
 * how many keys went. O(keys on the masters) (SCAN), plus O(members) per pending set.
 */
export async function dropBoardKeys(redis: RedisClient, boardId: string): Promise<number> {
  const prefix = prefixOf(redis);
  const counts = await Promise.all(mastersOf(redis).map((node) => dropOnNode(node, boardId, prefix)));
  return counts.reduce((sum, n) => sum + n, 0);
}

async function dropOnNode(node: Redis, boardId: string, prefix: string): Promise<number> {
  let dropped = 0;
  for await (const keys of scanNode(node, `${prefix}lb:{${boardId}[:#]*`, prefix)) {
    // One UNLINK per key: on a Cluster the keys of one node span many slots.
    await Promise.all(keys.map((key) => node.unlink(key)));
    dropped += keys.length;
  }
  // A recovery's pending set names buckets by their keys (no prefix): the board's go, so a board
  // made again under the same id is not kept waiting for a rebuild of buckets nothing backs.
  for await (const keys of scanNode(node, `${prefix}lb:{generation:*}:*:pending`, prefix)) {
    for (const key of keys) {
      let cursor = '0';
      do {
        const [next, members] = await node.sscan(key, cursor, 'MATCH', `lb:{${boardId}[:#]*`, 'COUNT', SCAN_COUNT);
        if (members.length > 0) await node.srem(key, ...members);
        cursor = next;
      } while (cursor !== '0');
    }
  }
  for await (const keys of scanNode(node, `${prefix}rebuild-job:*`, prefix)) {
    const owners = await Promise.all(keys.map((key) => node.hget(key, 'boardId')));
    const mine = keys.filter((_, i) => owners[i] === boardId);
    await Promise.all(mine.map((key) => node.unlink(key)));
    dropped += mine.length;
  }
  return dropped;
}
