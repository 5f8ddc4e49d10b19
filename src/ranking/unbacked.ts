import { type RedisClient, isCluster, mastersOf } from '../redis.js';
import { PERIODS } from '../model/board.js';
import { type BoardBucket, indexKeys } from './keys.js';

/**
 * A bucket's sorted set (or one shard's): `lb:{board:PERIOD:label[:region][#shard]}`, nothing after
 * the brace; or a DENSE bucket's keys beside them, the same with `#dense...` or `#recount` after;
 * or a set's member hash (`#members`, see memberHashKey).
 */
const SORTED_SET_KEY = new RegExp(`^lb:\\{[^{}:]+:(${PERIODS.join('|')}):[^{}]+\\}(#dense(:counts)?(#recount|#lineage|#recounting)?|#recount|#members)?$`);

/**
 * Unlinks, on the master at `address` (the node itself on one node), every bucket sorted set that is
 * not one of `backed`'s keys: after PostgreSQL went back to a backup, a bucket that only results
 * since the backup had made (a new day, a new season) has no board scores there, so no rebuild
 * would replace it, and its ranks are backed by nothing. Markers, pending sets, rebuild keys and
 * caches are left alone. Answers how many keys went. O(keys on that master) (SCAN).
 */
export async function dropUnbackedBuckets(redis: RedisClient, address: string, backed: BoardBucket[]): Promise<number> {
  const keep = new Set(backed.flatMap(indexKeys));
  const prefix = (isCluster(redis) ? redis.options.redisOptions?.keyPrefix : redis.options.keyPrefix) ?? '';
  const node = isCluster(redis) ? mastersOf(redis).find((master) => `${master.options.host}:${master.options.port}` === address) : redis;
  if (!node) return 0;
  let dropped = 0;
  let cursor = '0';
  do {
    // SCAN patterns are not prefixed by ioredis, and the keys come back with the prefix.
    const [next, found] = await node.scan(cursor, 'MATCH', `${prefix}lb:{*}`, 'COUNT', 1000);
    const unbacked = found.map((key) => key.slice(prefix.length)).filter((key) => SORTED_SET_KEY.test(key) && !keep.has(key));
    // One UNLINK per key: on a Cluster the keys of one node span many slots.
    await Promise.all(unbacked.map((key) => node.unlink(key)));
    dropped += unbacked.length;
    cursor = next;
  } while (cursor !== '0');
  return dropped;
}
