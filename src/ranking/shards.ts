import type { RedisClient } from '../redis.js';
import { type BoardBucket, memberHashKey, shardKey, shardKeys, shardOf } from './keys.js';
import { playerOfMember, timeInMember } from './members.js';
import { aroundSides } from '../model/around-window.js';

/**
 * Scatter-gather reads of a bucket split into several shards (a board with `shards` > 1). Each
 * shard is read by its own one-key script, every shard at once (ioredis sends them together, and
 * batches those bound for one Cluster node), and the answers are merged so that each equals,
 * exactly, what one sorted set of every member would answer: members are ordered as ZREVRANGE
 * orders them (packed score descending, then member bytes descending), and a rank is the number of
 * members ahead in that order, summed over the shards. Unlike a one-key read, the shards are read
 * at nearly but not exactly the same moment: a write landing between two shards' reads shows in
 * one and not yet in the other, as it would in a one-key read a moment later or earlier.
 */

/**
 * A member of a bucket's sorted set: a player and the packed score it is stored under. Also what
 * names a place in rank order (where a page starts, what a cursor carries).
 */
export interface Member {
  /** The set's member: the player id, or on a board whose time is in the member the time then the player id (members.ts). */
  playerId: string;
  packed: number;
}

/** A member with its 0-based rank in the whole bucket. */
export interface RankedMember extends Member {
  rank: number;
}

/** Members of a bucket with its size (the sum of its shards' sizes). */
export interface ShardedView<M = RankedMember> {
  size: number;
  members: M[];
}

/** Negative when `a` ranks ahead of `b`: a higher packed score, or an equal one and a member later in byte order. */
export function rankOrder(a: Member, b: Member): number {
  if (a.packed !== b.packed) return b.packed > a.packed ? 1 : -1;
  return Buffer.compare(Buffer.from(b.playerId), Buffer.from(a.playerId));
}

/** A flat [id, packed, id, packed, ...] run of rows from `from` on (up to `to`, exclusive). */
function membersOf(rows: (number | string)[], from = 0, to = rows.length): Member[] {
  const members: Member[] = [];
  for (let i = from; i + 1 < to; i += 2) members.push({ playerId: String(rows[i]), packed: Number(rows[i + 1]) });
  return members;
}

/** The first `limit` members of the union of several rank-ordered runs, ranked from `firstRank`. */
function merge(runs: Member[][], limit: number, firstRank: number): RankedMember[] {
  return runs
    .flat()
    .sort(rankOrder)
    .slice(0, limit)
    .map((member, i) => ({ ...member, rank: firstRank + i }));
}

const sum = (values: number[]) => values.reduce((total, value) => total + value, 0);

/** A member found in its own shard: where it stands there. */
export interface ShardPlace extends Member {
  shard: number;
  /** 0-based, within its shard. */
  shardRank: number;
}

/**
 * For each member found in its own shard, how many members of every other shard rank ahead of it,
 * with the sizes of the shards read: one countAhead call per shard for all the members, on the
 * shards holding some other member's position and on those `wantSize` asks for. O(S · k log N)
 * for k members over S shards.
 */
export async function aheadElsewhere(
  redis: RedisClient,
  at: BoardBucket,
  found: ShardPlace[],
  wantSize: (shard: number) => boolean,
): Promise<{ sizes: Map<number, number>; ahead: number[] }> {
  const ahead = found.map(() => 0);
  const sizes = new Map<number, number>();
  await Promise.all(
    shardKeys(at).map(async (key, shard) => {
      const others = found.flatMap((place, i) => (place.shard === shard ? [] : [i]));
      if (others.length === 0 && !wantSize(shard)) return;
      const [size, ...counts] = await redis.countAhead(key, ...others.flatMap((i) => [String(found[i]!.packed), found[i]!.playerId]));
      sizes.set(shard, Number(size));
      others.forEach((i, k) => (ahead[i]! += Number(counts[k])));
    }),
  );
  return { sizes, ahead };
}

/**
 * Turns places within their shards into places in the whole bucket: each member's rank is its
 * rank in its own shard plus the members ahead of it in every other shard. `sizes` holds shard
 * sizes read already; the bucket's size is the sum of every shard's. O(S · k log N).
 */
export async function bucketRanks(
  redis: RedisClient,
  at: BoardBucket,
  found: ShardPlace[],
  sizes: Map<number, number>,
): Promise<{ size: number; ranks: number[] }> {
  const elsewhere = await aheadElsewhere(redis, at, found, (shard) => !sizes.has(shard));
  for (const [shard, size] of elsewhere.sizes) sizes.set(shard, size);
  return { size: sum([...sizes.values()]), ranks: found.map((place, i) => place.shardRank + elsewhere.ahead[i]!) };
}

/** The first `limit` members: the merge of every shard's first `limit`. O(S (log N + limit)). */
export async function shardedTop(redis: RedisClient, at: BoardBucket, limit: number): Promise<ShardedView> {
  const replies = await Promise.all(shardKeys(at).map((key) => redis.readTop(key, limit)));
  return {
    size: sum(replies.map(([size]) => Number(size))),
    members: merge(
      replies.map((reply) => membersOf(reply, 1)),
      limit,
      0,
    ),
  };
}

/** The indexes of the given players, grouped by the shard of the bucket that holds each. O(k). */
function indexesByShard(at: BoardBucket, playerIds: readonly string[]): Map<number, number[]> {
  const byShard = new Map<number, number[]>();
  playerIds.forEach((playerId, i) => {
    const shard = shardOf(playerId, at.board.shards);
    const indexes = byShard.get(shard) ?? [];
    if (indexes.push(i) === 1) byShard.set(shard, indexes);
  });
  return byShard;
}

/**
 * Where each of the given players of one shard stands in it (null for one not there): readStandings,
 * or on a board whose time is in the member readWideStandings, which finds and answers the members.
 * One call, O(k log N).
 */
async function readShardStandings(
  redis: RedisClient,
  at: BoardBucket,
  shard: number,
  playerIds: string[],
): Promise<{ size: number; places: ((Member & { shardRank: number }) | null)[] }> {
  const key = shardKey(at, shard);
  const wide = timeInMember(at);
  const [size, ...reply] = wide ? await redis.readWideStandings(key, memberHashKey(key), ...playerIds) : await redis.readStandings(key, ...playerIds);
  const stride = wide ? 3 : 2;
  const places = playerIds.map((playerId, k) => {
    const rank = reply[stride * k];
    const packed = reply[stride * k + 1];
    if (rank === null || rank === undefined || packed === null || packed === undefined) return null;
    return { shardRank: Number(rank), playerId: wide ? String(reply[stride * k + 2]) : playerId, packed: Number(packed) };
  });
  return { size: Number(size), places };
}

/**
 * The places of the given players (null for those not ranked): each shard reads the ids it holds
 * (one readStandings per shard), then every shard counts the members ahead of the places found in
 * the others (one countAhead per shard). O(S log N + F · S log N) for F players, in at most 2S calls.
 */
export async function shardedStandings(redis: RedisClient, at: BoardBucket, playerIds: string[]): Promise<ShardedView<RankedMember | null>> {
  const byShard = indexesByShard(at, playerIds);
  const sizes = new Map<number, number>();
  const found: (ShardPlace & { i: number })[] = [];
  await Promise.all(
    [...byShard].map(async ([shard, indexes]) => {
      const { size, places } = await readShardStandings(
        redis,
        at,
        shard,
        indexes.map((i) => playerIds[i]!),
      );
      sizes.set(shard, size);
      indexes.forEach((i, k) => {
        const place = places[k];
        if (place) found.push({ i, shard, ...place });
      });
    }),
  );
  const { size, ranks } = await bucketRanks(redis, at, found, sizes);
  const members: (RankedMember | null)[] = playerIds.map(() => null);
  found.forEach(({ i, playerId, packed }, k) => (members[i] = { playerId, packed, rank: ranks[k]! }));
  return { size, members };
}

/** One around read asked of a bucket: the player, how many rows either side, and whether the window fills at the edges (model/around-window.ts). */
export interface AroundAsk {
  playerId: string;
  radius: number;
  /** 2 × radius + 1 rows near either edge too, the window shifted inward. Default false: cut at the edges. */
  fill?: boolean | undefined;
}

/**
 * For each (player, radius) asked, the player and up to `radius` members either side, cut at the
 * edges (with `fill`, shifted inward: see model/around-window.ts); no members when the player is
 * not ranked. The players' packed scores are read from their shards (one ZMSCORE per shard), then
 * every shard answers, for each player found, its members closest ahead of and after that position
 * (readNear, one call per shard for them all): `radius` a side, or with `fill` 2 × radius, as many
 * as a window shifted to an edge takes on its long side. The closest of each side over all shards
 * are a player's answer (how many a side follows from the members ahead and the size, summed over
 * the shards), and their rank is the sum of the members ahead. O(k · S (log N + radius)), in at
 * most 2S calls.
 */
export async function shardedArounds(redis: RedisClient, at: BoardBucket, asks: readonly AroundAsk[]): Promise<ShardedView[]> {
  const byShard = indexesByShard(
    at,
    asks.map(({ playerId }) => playerId),
  );
  const packed: (string | null)[] = asks.map(() => null);
  // Each player's member: the player id, or on a board whose time is in the member the one its hash names.
  const wide = timeInMember(at);
  const memberOf = asks.map(({ playerId }) => playerId);
  await Promise.all(
    [...byShard].map(async ([shard, indexes]) => {
      if (wide) {
        const { places } = await readShardStandings(
          redis,
          at,
          shard,
          indexes.map((i) => asks[i]!.playerId),
        );
        indexes.forEach((i, k) => {
          const place = places[k];
          if (place) [packed[i], memberOf[i]] = [String(place.packed), place.playerId];
        });
        return;
      }
      const scores = await redis.zmscore(shardKey(at, shard), ...indexes.map((i) => asks[i]!.playerId));
      indexes.forEach((i, k) => (packed[i] = scores[k] ?? null));
    }),
  );
  const found = asks.flatMap((ask, i) => (packed[i] === null ? [] : [{ ...ask, member: memberOf[i]!, packed: packed[i]! }]));
  const replies = await Promise.all(
    shardKeys(at).map((key) => redis.readNear(key, ...found.flatMap(({ packed, member, radius, fill }) => [packed, member, fill ? 2 * radius : radius]))),
  );
  const size = sum(replies.map((reply) => Number(reply[0])));
  // Each shard's reply read window by window: [ahead, countBefore, ...before, countAfter, ...after] per player found.
  const next = replies.map(() => 1);
  const windows = found.map(() =>
    replies.map((reply, s) => {
      const ahead = Number(reply[next[s]!]);
      const beforeAt = next[s]! + 2;
      const afterCountAt = beforeAt + 2 * Number(reply[next[s]! + 1]);
      const end = afterCountAt + 1 + 2 * Number(reply[afterCountAt]);
      next[s] = end;
      return { ahead, before: membersOf(reply, beforeAt, afterCountAt), after: membersOf(reply, afterCountAt + 1, end) };
    }),
  );
  const idOf = wide ? playerOfMember : (member: string) => member;
  const views = found.map(({ playerId, member: own, radius, fill, packed }, f) => {
    const shards = windows[f]!;
    const ahead = sum(shards.map((window) => window.ahead));
    // Without fill, each side's closest `radius` as read (the merge cuts them at the edges).
    const sides = fill ? aroundSides(ahead, size, radius, true) : { before: radius, after: radius };
    // The player itself is in no window; leaving it out by id too covers a write that moved it
    // between the two reads.
    const others = (members: Member[]) => members.filter((member) => idOf(member.playerId) !== playerId);
    const ranksAhead = shards.flatMap((window) => others(window.before)).sort(rankOrder);
    const shown = ranksAhead.slice(Math.max(0, ranksAhead.length - sides.before));
    return [
      ...shown.map((member, i) => ({ ...member, rank: ahead - shown.length + i })),
      { playerId: own, packed: Number(packed), rank: ahead },
      ...merge(
        shards.map((window) => others(window.after)),
        sides.after,
        ahead + 1,
      ),
    ];
  });
  let f = 0;
  return asks.map((_, i) => ({ size, members: packed[i] === null ? [] : views[f++]! }));
}

/** A page of members, with how many members of the bucket rank ahead of its first (or of its position, when it is empty). */
export interface ShardedPage extends ShardedView {
  ahead: number;
}

/**
 * Up to `count` members strictly after `after` (from the top when null): the merge of every
 * shard's `count` members after that position (readAfter; a bucket of one sorted set is read the
 * same way, as one shard), so a member whose score does not
 * change is never skipped nor repeated between pages, wherever the cursor's own player went. The
 * first member's rank is the number of members at or ahead of the position over all shards
 * (`ahead`). O(S (log N + count)).
 */
export async function shardedPage(redis: RedisClient, at: BoardBucket, after: Member | null, count: number): Promise<ShardedPage> {
  if (after === null) return { ...(await shardedTop(redis, at, count)), ahead: 0 };
  const replies = await Promise.all(shardKeys(at).map((key) => redis.readAfter(key, count, String(after.packed), after.playerId)));
  const ahead = sum(replies.map((reply) => Number(reply[1])));
  return {
    size: sum(replies.map(([size]) => Number(size))),
    members: merge(
      replies.map((reply) => membersOf(reply, 2)),
      count,
      ahead,
    ),
    ahead,
  };
}

/**
 * Up to `count` members strictly ahead of `before` (the bucket's last members when null), in rank
 * order: the mirror of {@link shardedPage}. The closest `count` ahead of a position over every
 * shard are among the union of each shard's closest `count` (readBefore), so the last `count` of
 * their merge are the page, and a member whose score does not change is never skipped nor repeated
 * walking backwards either. `ahead` is the number of members ahead of the page's first: the
 * members ahead of the position over all shards, less the page. O(S (log N + count)).
 */
export async function shardedPageBefore(redis: RedisClient, at: BoardBucket, before: Member | null, count: number): Promise<ShardedPage> {
  const [packed, member] = before === null ? ['', ''] : [String(before.packed), before.playerId];
  const replies = await Promise.all(shardKeys(at).map((key) => redis.readBefore(key, count, packed, member)));
  const aheadOfPosition = sum(replies.map((reply) => Number(reply[1])));
  const closest = replies
    .flatMap((reply) => membersOf(reply, 2))
    .sort(rankOrder)
    .slice(-count);
  const ahead = aheadOfPosition - closest.length;
  return {
    size: sum(replies.map(([size]) => Number(size))),
    members: closest.map((one, i) => ({ ...one, rank: ahead + i })),
    ahead,
  };
}

/**
 * The most rounds {@link memberAt} takes: each halves every shard's range of candidates, so a shard
 * of up to 2^52 members is done well within it; more only when writes keep moving members between
 * rounds, and then the closest member found so far is answered.
 */
const MAX_SELECTION_ROUNDS = 64;

/**
 * The member at 0-based position `target` of a sharded bucket (null past the end), with its size,
 * found from the shards' counts, never by reading the members ahead of it: each shard keeps a
 * range of its own ranks the member may be at (all of it at first). A round reads the middle
 * member of every range (ZRANGE at one rank), and every shard counts the members ahead of each of
 * those middles (countAhead); a middle's rank in the bucket is the sum. A middle ahead of `target`
 * rules out, in every shard, the members at or ahead of it; one after rules out those at or after
 * it; one at `target` is the answer. Every round halves every range, so it takes O(log N) rounds of
 * 2 calls a shard: O(S² log² N) work in Redis, against O(N) for a walk.
 *
 * When writes move members between the rounds, the member found is where `target` was at some
 * moment of the search, or, if the ranges run out first, the closest member found ahead of it
 * (`exact` false: a page then starts after it).
 */
export async function memberAt(redis: RedisClient, at: BoardBucket, target: number): Promise<{ size: number; member: Member | null; exact: boolean }> {
  const keys = shardKeys(at);
  const sizes = await Promise.all(keys.map((key) => redis.zcard(key)));
  const size = sum(sizes);
  if (target >= size) return { size, member: null, exact: false };
  // Each shard's candidates: its ranks from lo (inclusive) to hi (exclusive).
  const lo = keys.map(() => 0);
  const hi = [...sizes];
  let closestAhead: { member: Member; rank: number } | null = null;
  for (let round = 0; round < MAX_SELECTION_ROUNDS; round++) {
    const open = keys.flatMap((_, shard) => (lo[shard]! < hi[shard]! ? [shard] : []));
    if (open.length === 0) break;
    const read = await Promise.all(
      open.map(async (shard) => {
        const rank = Math.floor((lo[shard]! + hi[shard]!) / 2);
        const [playerId, packed] = await redis.zrange(keys[shard]!, rank, rank, 'REV', 'WITHSCORES');
        return playerId === undefined || packed === undefined ? null : { shard, shardRank: rank, playerId, packed: Number(packed) };
      }),
    );
    const middles = read.filter((middle) => middle !== null);
    // A shard that shrank under its range since it was read: its range ends where it now does.
    open.forEach((shard, i) => {
      if (read[i] === null) hi[shard] = Math.min(hi[shard]!, Math.floor((lo[shard]! + hi[shard]!) / 2));
    });
    // counts[shard][m]: how many members of `shard` rank ahead of middle m (its own shard: its rank there).
    const counts = await Promise.all(
      keys.map(async (key, shard) => {
        const others = middles.flatMap((middle, m) => (middle.shard === shard ? [] : [m]));
        const reply = others.length === 0 ? [] : await redis.countAhead(key, ...others.flatMap((m) => [String(middles[m]!.packed), middles[m]!.playerId]));
        const ahead = middles.map((middle) => (middle.shard === shard ? middle.shardRank : 0));
        others.forEach((m, k) => (ahead[m] = Number(reply[k + 1])));
        return ahead;
      }),
    );
    for (const [m, middle] of middles.entries()) {
      const rank = sum(counts.map((ahead) => ahead[m]!));
      const member = { playerId: middle.playerId, packed: middle.packed };
      if (rank === target) return { size, member, exact: true };
      if (rank < target) {
        if (!closestAhead || rank > closestAhead.rank) closestAhead = { member, rank };
        // Ruled out: the middle and every member ahead of it, in every shard.
        counts.forEach((ahead, shard) => (lo[shard] = Math.max(lo[shard]!, ahead[m]! + (shard === middle.shard ? 1 : 0))));
      } else {
        // Ruled out: the middle and every member after it, in every shard.
        counts.forEach((ahead, shard) => (hi[shard] = Math.min(hi[shard]!, ahead[m]!)));
      }
    }
  }
  return { size, member: closestAhead?.member ?? null, exact: false };
}

/** How many players are ranked: the sum of the shards' ZCARDs. O(S). */
export async function shardedSize(redis: RedisClient, at: BoardBucket): Promise<number> {
  return sum(await Promise.all(shardKeys(at).map((key) => redis.zcard(key))));
}
