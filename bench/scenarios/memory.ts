/**
 * The memory scenario: bytes per member the index uses in Redis for the 1,000,000-player board
 * (MEMORY USAGE key SAMPLES 0, every element counted), beside a bare sorted set of the same ids
 * under the same packed doubles, copied member by member (ZRANGE … WITHSCORES, then ZADD) into a
 * fresh key. Every key of the board's bucket counts towards the index, so anything it kept per
 * member beyond the bare set would show.
 *
 * Then the shared player profiles (src/profiles/store.ts) the seed keeps in Redis: every profile
 * hash counted (MEMORY USAGE of each, SAMPLES 0), divided by the profiles they hold.
 */
import type { Redis } from 'ioredis';
import { BENCH_KEY_PREFIX, REDIS_URL } from '../lib/env.js';
import type { Report, Row } from '../lib/report.js';
import { openBenchStores } from '../seed.js';
import { bucketKey } from '../../src/ranking/keys.js';
import { createRedis } from '../../src/redis.js';

const bytesOf = async (redis: Redis, key: string) => Number(await redis.call('MEMORY', 'USAGE', key, 'SAMPLES', '0'));

/** Every key of a bucket, as Redis names them (with the prefix): the sorted set and anything beside it. */
async function keysOfBucket(liveKey: string): Promise<string[]> {
  const plain = createRedis(REDIS_URL, { commandTimeoutMs: 60_000 });
  await plain.connect();
  const keys: string[] = [];
  // Escape the glob characters in the key; the braces of the hash tag are not special to MATCH.
  const pattern = `${BENCH_KEY_PREFIX}${liveKey}`.replace(/[*?[\]\\]/g, '\\$&');
  let cursor = '0';
  do {
    const [next, found] = await plain.scan(cursor, 'MATCH', `${pattern}*`, 'COUNT', 1000);
    keys.push(...found);
    cursor = next;
  } while (cursor !== '0');
  await plain.quit();
  return keys.filter((key) => !key.endsWith('#benchcopy'));
}

/** Bytes and profiles of every profile hash under the bench's prefix (each hash's epoch field is not a profile). */
async function profileBytes(plain: Redis): Promise<{ bytes: number; profiles: number; hashes: number }> {
  let bytes = 0;
  let profiles = 0;
  let hashes = 0;
  let cursor = '0';
  do {
    const [next, found] = await plain.scan(cursor, 'MATCH', `${BENCH_KEY_PREFIX}lb:{profiles}:*`, 'COUNT', 1000);
    const hashKeys = found.filter((key) => /:\d+$/.test(key));
    const pipeline = plain.pipeline();
    for (const key of hashKeys) pipeline.call('MEMORY', 'USAGE', key, 'SAMPLES', '0').hlen(key);
    const replies = (await pipeline.exec()) ?? [];
    for (let i = 0; i < replies.length; i += 2) {
      bytes += Number(replies[i]![1]);
      profiles += Math.max(0, Number(replies[i + 1]![1]) - 1);
    }
    hashes += hashKeys.length;
    cursor = next;
  } while (cursor !== '0');
  return { bytes, profiles, hashes };
}

export async function runMemory(): Promise<Report> {
  const stores = await openBenchStores();
  const rows: Row[] = [];
  const notes: string[] = [];
  let ratioAllTime = NaN;
  const plain = createRedis(REDIS_URL, { commandTimeoutMs: 120_000 });
  await plain.connect();
  try {
    for (const at of stores.buckets) {
      const live = bucketKey(at);
      const members = await stores.redis.zcard(live);
      const keys = await keysOfBucket(live);
      let indexBytes = 0;
      for (const key of keys) indexBytes += await bytesOf(plain, key);
      rows.push({
        name: `index ${at.bucket.period} (${keys.length} key${keys.length === 1 ? '' : 's'})`,
        role: 'service',
        value: indexBytes / members,
        unit: 'bytes/member',
        extra: { members, bytes: indexBytes, keys },
      });
      if (at.bucket.period !== 'ALL_TIME') continue;

      // The bare set: the same members and doubles, written in chunks into a fresh key.
      const bare = `bare:${live}`;
      await stores.redis.unlink(bare);
      const chunk = 10_000;
      for (let from = 0; from < members; from += chunk) {
        const pairs = await stores.redis.zrange(live, from, from + chunk - 1, 'WITHSCORES');
        const args: string[] = [];
        for (let i = 0; i < pairs.length; i += 2) args.push(pairs[i + 1]!, pairs[i]!);
        if (args.length > 0) await stores.redis.zadd(bare, ...args);
      }
      // MEMORY USAGE is sent with call(), which ioredis does not prefix: the plain client gets the full name.
      const bareBytes = await bytesOf(plain, `${BENCH_KEY_PREFIX}${bare}`);
      const bareMembers = await stores.redis.zcard(bare);
      await stores.redis.unlink(bare);
      rows.push({
        name: 'bare sorted set, same ids and packed doubles',
        role: 'baseline',
        value: bareBytes / bareMembers,
        unit: 'bytes/member',
        extra: { members: bareMembers, bytes: bareBytes },
      });
      ratioAllTime = indexBytes / bareBytes;
      notes.push(`ALL_TIME: ${indexBytes.toLocaleString('en-US')} bytes in the index, ${bareBytes.toLocaleString('en-US')} in the bare set`);
    }
    const profiles = await profileBytes(plain);
    if (profiles.profiles > 0) {
      rows.push({
        name: `player profiles (${profiles.hashes.toLocaleString('en-US')} hashes)`,
        role: 'service',
        value: profiles.bytes / profiles.profiles,
        unit: 'bytes/profile',
        extra: profiles,
      });
      notes.push(
        `profiles: ${profiles.bytes.toLocaleString('en-US')} bytes for ${profiles.profiles.toLocaleString('en-US')} profiles ("Player 123456", no avatar) in Redis`,
      );
    }
  } finally {
    await plain.quit();
    await stores.close();
  }
  const round = Math.round(ratioAllTime * 1000) / 1000;
  return {
    scenario: 'memory',
    params: { members: rows[0]?.extra?.members },
    rows,
    ratios: { 'index / bare set (ALL_TIME)': round },
    targets: [{ description: 'index memory within 5% of the bare sorted set', measured: `${((round - 1) * 100).toFixed(2)}%`, met: ratioAllTime <= 1.05 }],
    notes: [...notes, 'MEMORY USAGE key SAMPLES 0; each period of the board is one such sorted set'],
  };
}
