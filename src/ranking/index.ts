import { type RedisClient, isCluster } from '../redis.js';
import type { BoardScore, BoardScoreRow } from '../model/board.js';
import {
  type BoardBucket,
  bucketKey,
  denseKeys,
  indexKeys,
  playerShardKey,
  recountPositionKey,
  shardKey,
  shardKeys,
  shardOf,
  shardTopChannel,
  topChannels,
  leagueChannel,
  memberHashKey,
  overtakenChannel,
} from './keys.js';
import { playerOfMember, reachedAtOfMember, timeInMember, timedMember } from './members.js';
import { type MemberChange, applyDenseDeltas, countDistinctBetter, denseDeltas, recountDense } from './dense.js';
import { lowestPackedAbove, pack, packedDirection, packingFor, unpack } from './packing.js';
import { type RebuildOptions, rebuildKey, rebuildSortedSet, rebuildTombstoneKey } from './rebuild.js';
import { defineRankingScripts } from './scripts/index.js';
import { defineScoreSpreadScripts } from './scripts/score-spread.js';
import { type ScoreBin, binEdges, binsOf, countsFromAtLeast, innerThresholds } from '../model/score-bins.js';
import { type ReadOptions, type Reads, fromMasters } from './replicas.js';
import type { AroundAsk } from './shards.js';
import {
  type Member,
  type RankedMember,
  aheadElsewhere,
  rankOrder,
  memberAt,
  shardedArounds,
  shardedPage,
  shardedPageBefore,
  shardedSize,
  shardedStandings,
  shardedTop,
} from './shards.js';

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
  /** The values of the result that set the score, one per tie-break column; empty on a board without them. */
  tieBreakValues?: readonly number[] | undefined;
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

/** A page starts strictly after a member (its packed score and player id) in rank order; a page cursor carries it. */
export type { Member } from './shards.js';

/** One around read asked of a bucket: its player, radius, and whether the window fills at the edges. */
export type { AroundAsk } from './shards.js';

/** A place with the packed value it is stored under, so the next page can start after it. */
export interface PagePlace extends Place {
  packed: number;
  /**
   * The sorted set's member at this place: the player id, or on a board whose time is in the
   * member (see members.ts), the time then the player id. A page after {packed, playerId: member}
   * starts right after this place: what a cursor names it by.
   */
  member: string;
}

/** One page of places, with whether another page follows, and whether one comes before it. */
export interface PageView extends BucketView<PagePlace> {
  /** Places follow the page's last (or its position, when it is empty). */
  hasMore: boolean;
  /** Places come before the page's first (or its position, when it is empty). */
  hasBefore: boolean;
}

export type RankingIndex = ReturnType<typeof createRankingIndex>;

/**
 * A write's place after it (null where the index placed none), with its bucket's size, and its
 * member's packed value right after and right before it (null: not in the set; before, a player
 * not ranked there yet). Packed values compare in the index's order whatever the board's: higher
 * is ahead, equal values by player id (see shards.ts rankOrder).
 */
export interface WrittenPlace {
  size: number;
  place: Place | null;
  packed: number | null;
  packedBefore: number | null;
  /**
   * The member right after and before, where packed and packedBefore are set: the player id, or on
   * a board whose time is in the member (members.ts) the time then the player id; with the packed
   * value, the position in the index's order (rankOrder).
   */
  member: string | null;
  memberBefore: string | null;
  /**
   * The 1-based rank (ORDINAL: the index's own order) the member held in the whole bucket just
   * before this write, as of the write's own moment as `place` is; null when it was not ranked
   * there. What the submit answer's previousRank is made of (issue 60), at no extra call on one
   * shard, and in the same countAhead calls as the place on a sharded bucket.
   */
  rankBefore: number | null;
}

/**
 * Where a page starts: a cursor's member, or a place of an earlier page, which names its position
 * by its member (the player id but on a board whose time is in the member).
 */
function positionOf(start: Member | PagePlace | null): Member | null {
  return start && 'member' in start ? { playerId: start.member, packed: start.packed } : start;
}

/** The place of `member` (the player id; on a board whose time is in the member, the time then the player id: see members.ts). */
function placeOf(at: BoardBucket, member: string, rank: number, packed: string | number): Place {
  const packing = packingFor(at.board, at.bucket.period);
  const unpacked = unpack(at.board, packing, Number(packed), at.bucket.start);
  const { score, tieBreakValues } = unpacked;
  const [playerId, reachedAt] = packing.timeInMember ? [playerOfMember(member), reachedAtOfMember(member, at.bucket.start)] : [member, unpacked.reachedAt];
  return tieBreakValues.length > 0 ? { playerId, rank: rank + 1, score, reachedAt, tieBreakValues } : { playerId, rank: rank + 1, score, reachedAt };
}

const placeOfMember = (at: BoardBucket, { playerId, rank, packed }: RankedMember): Place => placeOf(at, playerId, rank, packed);

const sharded = (at: BoardBucket) => at.board.shards > 1;

/** Whether a bucket's board counts its distinct scores (see dense.ts). */
const dense = (at: BoardBucket) => at.board.rankStyle === 'DENSE';

/** A write's expiry as the scripts take it: unix seconds, 0 for a key kept until dropped. */
const expireAtOf = (expiresAt: Date | null) => (expiresAt ? Math.ceil(expiresAt.getTime() / 1000) : 0);

/** What apply-scores.ts answers for each write: [rank, packed, size, changed, packedBefore, rankBefore]. */
type ApplyReply = [number | null, string | null, number, 0 | 1, string | null, number | null];

/** How many values apply-scores.ts answers per write. */
const REPLY_LENGTH = 6;

/** How many its DENSE variant answers per write: two more, whether a running recount had counted the member before and after. */
const DENSE_REPLY_LENGTH = 8;

/** How many applyWideScores answers per write (wide.ts): applyScores's six, then the member after and before; its DENSE variant two more. */
const WIDE_REPLY_LENGTH = 8;

/** What a DENSE shard's script says beside a change: what a running recount had counted of it, and which recount. */
interface RecountReply {
  countedBefore: boolean;
  countedAfter: boolean;
  epoch: string;
}

/**
 * The most writes one applyScores call carries (two ARGV strings each), so that a huge batch is
 * neither one huge command for the client to build nor one long script blocking Redis.
 */
const WRITES_PER_CALL = 1_000;

/** On a set whose members carry the time (members.ts): a write's member after it and before it (null: none). */
interface WideMembers {
  after: string | null;
  before: string | null;
}

/** One applyScores call: a run of a batch's writes to one sorted set that share its arguments. */
interface ApplyCall {
  key: string;
  /** A DENSE board's shard: written by the DENSE variant (see apply-scores.ts). */
  dense: boolean;
  /** A set whose members carry the time (members.ts): written by applyWideScores, (id, packed, member) triples. */
  wide: boolean;
  direction: 'GT' | 'LT';
  expireAt: number;
  topSize: number;
  /** (player id, packed) pairs, in the batch's order; (player id, packed, member) triples on a `wide` set. */
  pairs: string[];
  /** Each pair's write's index in the batch. */
  indexes: number[];
}

/** readStandings's reply after the size: a place per id, null for one not ranked. O(k). */
function standingsFrom(at: BoardBucket, playerIds: readonly string[], pairs: readonly (number | string | null)[]): (Place | null)[] {
  // On a board whose time is in the member, each place is a triple: its member follows (readWideStandings).
  const stride = timeInMember(at) ? 3 : 2;
  return playerIds.map((playerId, i) => {
    const rank = pairs[stride * i];
    const packed = pairs[stride * i + 1];
    const member = stride === 3 ? String(pairs[stride * i + 2]) : playerId;
    return rank === null || rank === undefined || packed === null || packed === undefined ? null : placeOf(at, member, Number(rank), String(packed));
  });
}

/** The around scripts' ARGV triples (player id, radius, fill as 1 or 0) of `asks` (read-around.ts). O(k). */
const aroundTriples = (asks: readonly AroundAsk[]): (string | number)[] => asks.flatMap(({ playerId, radius, fill }) => [playerId, radius, fill ? 1 : 0]);

/** Reads a flat [id, packed, id, packed, ...] run of rows, the first at 0-based rank `firstRank`. */
function placesFromRows(at: BoardBucket, rows: (number | string)[], firstRank: number): Place[] {
  const places: Place[] = [];
  for (let i = 0; i + 1 < rows.length; i += 2) {
    places.push(placeOf(at, String(rows[i]), firstRank + i / 2, String(rows[i + 1])));
  }
  return places;
}

/** A flat [id, packed, ...] run of rows as ranked members, the first at 0-based rank `firstRank`. */
function membersFrom(rows: (number | string)[], firstRank: number): RankedMember[] {
  const members: RankedMember[] = [];
  for (let i = 0; i + 1 < rows.length; i += 2) members.push({ playerId: String(rows[i]), packed: Number(rows[i + 1]), rank: firstRank + i / 2 });
  return members;
}

/** Ranked members of a page as its places, each with the member and packed value a cursor names it by. */
const pagePlaces = (at: BoardBucket, members: readonly RankedMember[]): PagePlace[] =>
  members.map((member) => ({ ...placeOfMember(at, member), packed: member.packed, member: member.playerId }));

export interface RankingIndexOptions {
  /**
   * Where the reads that may be a little stale go (top, standings, around, pages, the counts of
   * the rank styles): replicas that keep up (see replicas.ts), else the masters. Default: the
   * masters. Writes, the places a write reads back, `size` (drift counts) and everything the
   * write path reads stay on the masters whatever this says.
   */
  reads?: Reads | undefined;
  /**
   * Told, once a write was answered, of the players it put into a bucket they were not in: a new
   * player's first result, a player's first of a new day, week, month or season. The profile cache
   * (ProfileCache.remember) then brings their profiles into Redis, or that they have none, so that
   * their first read asks PostgreSQL nothing. Called in the write's own turn; must not throw.
   * Default: nobody.
   */
  placed?: ((playerIds: string[]) => void) | undefined;
  /**
   * Told of the buckets whose top a write changed (the write script's answer, as it announces) or
   * an announcement names (announceTopChanged: a flag, an erasure, a rebuild, a close, inactive
   * players): every change a topChanged watcher hears of, told once, in the process that made it.
   * TOP_CHANGED webhooks follow from it (writes/top-webhooks.ts). Called in the write's own turn;
   * must not throw. Default: nobody.
   */
  topChanged?: ((at: BoardBucket[]) => void) | undefined;
}

export type { ReadOptions } from './replicas.js';

/**
 * What a named read (standingsNamed, aroundsNamed) reads beside the places, in the same step: a
 * token, and a field per player (its id) in one of `hashes` hashes named `hashPrefix` then a
 * number. Its caller names them: the profile cache's (ProfileCache.naming) are the players'
 * profiles and their changes token. The index knows no more of them than where they are.
 */
export interface PlayerFields {
  /** The token's key, read in the same step (never written). */
  changesKey: string;
  /** The hashes' name before their number, without the client's key prefix. */
  hashPrefix: string;
  /** How many hashes the fields are spread over: an id's is FNV-1a of its UTF-16 code units, modulo this. */
  hashes: number;
  /** The key of the hash holding each id's field, in their order: what readStandingsNamed declares. O(k). */
  keysOf(ids: readonly string[]): string[];
}

/**
 * The ranking index: one sorted set per board bucket, or per shard of a bucket on a board with
 * several shards (see keys.ts), holding packed board scores. Every read of a sharded bucket
 * answers exactly as one sorted set of all its members would (see shards.ts). It knows nothing of
 * GraphQL or of the database; it is rebuilt from the database when lost.
 *
 * Commands go out one by one, never in a pipeline or MULTI spanning keys: on a Cluster each key
 * may live on another node, and the client's auto-pipelining batches whatever goes to one node.
 * Commands for one key keep their order, which the write path relies on: a removal goes to the
 * rebuild key first, and a batch's writes to one key split over several calls still apply in order.
 */
export function createRankingIndex(redis: RedisClient, options: RankingIndexOptions = {}) {
  defineRankingScripts(redis);
  defineScoreSpreadScripts(redis);
  const reads = options.reads ?? fromMasters(redis);
  const prefixed = (name: string) => `${redis.options.keyPrefix ?? ''}${name}`;
  const onCluster = isCluster(redis);

  /**
   * A batch's writes, grouped by the player's shard: one applyScores call for every sorted set of
   * one node (on a Cluster, one a set; and per {@link WRITES_PER_CALL} writes), each write
   * going into a running rebuild first, then the live set, announcing on the shard's top channel
   * when any write changed that shard's top (see apply-scores.ts); a DENSE board's sets one call
   * each (applyDenseScores). Writes to one key keep the batch's order, inside a call as across the
   * calls (sent in order, and commands for one node keep their order); the replies come back in
   * the batch's order. Why one call per node rather than per key or write: the client's cost per
   * command, not Redis's work, is what dominated the write path's CPU (a single submission wrote
   * five buckets in five calls before). O(k log N) in about one call per node.
   */
  async function applyWrites(
    writes: BoardScoreWrite[],
  ): Promise<{ replies: ApplyReply[]; recounts: (RecountReply | undefined)[]; members: (WideMembers | undefined)[] }> {
    const callsByKey = new Map<string, ApplyCall[]>();
    // A batch's writes fall in a few buckets, each one object shared by its writes (submit.ts
    // shares a call's buckets): each bucket's shard keys are made once, not once a write. A write
    // whose bucket is an object of its own still gets its key, only without the saving.
    const keysOf = new Map<BoardBucket, string[]>();
    writes.forEach(({ at, score, expiresAt }, i) => {
      let keys = keysOf.get(at);
      if (!keys) keysOf.set(at, (keys = shardKeys(at)));
      const key = keys[shardOf(score.playerId, at.board.shards)]!;
      const packed = String(pack(at.board, packingFor(at.board, at.bucket.period), score.score, score.reachedAt, at.bucket.start, score.tieBreakValues));
      const direction = packedDirection(at.board);
      const expireAt = expireAtOf(expiresAt);
      const calls = callsByKey.get(key) ?? [];
      if (calls.length === 0) callsByKey.set(key, calls);
      let call = calls.at(-1);
      // A write whose arguments differ from the run's (another expiry, say) starts a call of its own after it.
      if (!call || call.indexes.length >= WRITES_PER_CALL || call.direction !== direction || call.expireAt !== expireAt || call.topSize !== at.board.topSize) {
        call = { key, dense: dense(at), wide: timeInMember(at), direction, expireAt, topSize: at.board.topSize, pairs: [], indexes: [] };
        calls.push(call);
      }
      call.pairs.push(score.playerId, packed);
      if (call.wide) call.pairs.push(timedMember(score.playerId, score.reachedAt.getTime(), at.bucket.start.getTime()));
      call.indexes.push(i);
    });
    const replies: ApplyReply[] = new Array<ApplyReply>(writes.length);
    const recounts: (RecountReply | undefined)[] = new Array<RecountReply | undefined>(writes.length);
    const members: (WideMembers | undefined)[] = new Array<WideMembers | undefined>(writes.length);
    // Every set of one node in one script call, up to WRITES_PER_CALL writes a call: a single
    // submission's buckets are one command, not one each. A set's runs keep their order, and the
    // calls for one node go down its one connection in the order made here. On a Cluster, one set a
    // call (applyScoresToSet): the client routes and auto-pipelines a command by its first argument,
    // which must be a key there, and every bucket and shard is a hash slot of its own anyway.
    const runs: { calls: ApplyCall[]; writes: number }[] = [];
    const denseCalls: ApplyCall[] = [];
    const wideCalls: ApplyCall[] = [];
    for (const calls of callsByKey.values()) {
      for (const call of calls) {
        if (call.wide) {
          wideCalls.push(call);
          continue;
        }
        if (call.dense) {
          denseCalls.push(call);
          continue;
        }
        let run = runs.at(-1);
        if (!run || onCluster || run.writes + call.indexes.length > WRITES_PER_CALL) runs.push((run = { calls: [], writes: 0 }));
        run.calls.push(call);
        run.writes += call.indexes.length;
      }
    }
    const applied = runs.map(async ({ calls }) => {
      let flat: (number | string | null)[];
      if (onCluster) {
        const [{ key, direction, expireAt, topSize, pairs, indexes }] = calls as [ApplyCall];
        flat = await redis.applyScoresToSet(key, rebuildKey(key), rebuildTombstoneKey(key), 1, direction, expireAt, topSize, indexes.length, ...pairs);
      } else {
        const keys: string[] = [];
        const args: (string | number)[] = [calls.length];
        for (const { key, direction, expireAt, topSize, pairs, indexes } of calls) {
          keys.push(key, rebuildKey(key), rebuildTombstoneKey(key));
          args.push(direction, expireAt, topSize, indexes.length, ...pairs);
        }
        flat = await redis.applyScores(keys.length, ...keys, ...args);
      }
      let k = 0;
      for (const { indexes } of calls) for (const i of indexes) replies[i] = flat.slice(REPLY_LENGTH * k, REPLY_LENGTH * ++k) as ApplyReply;
    });
    await Promise.all([
      ...applied,
      ...denseCalls.map(async ({ key, direction, expireAt, topSize, pairs, indexes }) => {
        const flat = await redis.applyDenseScores(
          key,
          rebuildKey(key),
          rebuildTombstoneKey(key),
          recountPositionKey(key),
          direction,
          expireAt,
          topSize,
          ...pairs,
        );
        const epoch = String(flat.at(-1));
        indexes.forEach((i, k) => {
          const reply = flat.slice(DENSE_REPLY_LENGTH * k, DENSE_REPLY_LENGTH * (k + 1));
          replies[i] = reply.slice(0, REPLY_LENGTH) as ApplyReply;
          recounts[i] = { countedBefore: reply[6] === 1, countedAfter: reply[7] === 1, epoch };
        });
      }),
      ...wideCalls.map(async ({ key, dense, expireAt, topSize, pairs, indexes }) => {
        const keys = [key, rebuildKey(key), rebuildTombstoneKey(key), memberHashKey(key), memberHashKey(rebuildKey(key))] as const;
        const flat = dense
          ? await redis.applyWideDenseScores(...keys, recountPositionKey(key), expireAt, topSize, ...pairs)
          : await redis.applyWideScores(...keys, expireAt, topSize, ...pairs);
        const length = WIDE_REPLY_LENGTH + (dense ? 2 : 0);
        const epoch = String(flat.at(-1));
        indexes.forEach((i, k) => {
          const reply = flat.slice(length * k, length * (k + 1));
          replies[i] = reply.slice(0, REPLY_LENGTH) as ApplyReply;
          members[i] = { after: reply[6] as string | null, before: reply[7] as string | null };
          if (dense) recounts[i] = { countedBefore: reply[8] === 1, countedAfter: reply[9] === 1, epoch };
        });
      }),
    ]);
    return { replies, recounts, members };
  }

  /**
   * The places of a batch's writes into sharded buckets. The write script reads a place within
   * the player's shard at the moment of the write; every other shard of the bucket then counts the
   * members ahead of it (one countAhead per shard for all of the bucket's writes), read once the
   * batch is written. So that each write is placed as of its own moment, as one sorted set would
   * place it, the count is corrected for the batch's later writes into other shards: each one
   * that moved a member from behind the place to ahead of it (or put a new member ahead of it) is
   * taken back out, and so is each new member from the size. Writes of other batches landing
   * meanwhile are not: those are concurrent either way. The rank a member held just before its
   * write is placed the same way, from its position before (the script's rank there within the
   * shard), counted in the same countAhead calls. O(S · k log N + k²) for k writes.
   */
  async function shardedPlaces(
    writes: BoardScoreWrite[],
    replies: ApplyReply[],
    members: (WideMembers | undefined)[],
    indexes: number[],
  ): Promise<{ size: number; place: Place | null; rankBefore: number | null }[]> {
    const at = writes[indexes[0]!]!.at;
    // Positions are the sets' members: on a board whose time is in the member, the script's.
    const member = (i: number, packed: string | null, raw: string | null | undefined): Member | null =>
      packed === null ? null : { playerId: raw ?? writes[i]!.score.playerId, packed: Number(packed) };
    const shards = indexes.map((i) => shardOf(writes[i]!.score.playerId, at.board.shards));
    const found = indexes.flatMap((i, k) => {
      const [rank, packed] = replies[i]!;
      return rank === null || packed === null ? [] : [{ k, shard: shards[k]!, shardRank: rank, ...member(i, packed, members[i]?.after)! }];
    });
    // Each member's position just before its write, where it held one and the write moved it:
    // counted in the same calls. One the write left where it was held the rank it has after.
    const stayed = (i: number) => replies[i]![1] === replies[i]![4] && (members[i]?.after ?? null) === (members[i]?.before ?? null);
    const held = indexes.flatMap((i, k) => {
      const [, , , , packedBefore, rankBefore] = replies[i]!;
      if (packedBefore === null || rankBefore === null || stayed(i)) return [];
      return [{ k, shard: shards[k]!, shardRank: rankBefore, ...member(i, packedBefore, members[i]?.before)! }];
    });
    const { sizes, ahead } = await aheadElsewhere(redis, at, [...found, ...held], () => true);
    const ranks = new Map(found.map((place, f) => [place.k, place.shardRank + ahead[f]!]));
    const ranksBefore = new Map(held.map((place, h) => [place.k, place.shardRank + ahead[found.length + h]!]));
    const aheadOf = (other: Member | null, place: Member) => Number(other !== null && rankOrder(other, place) < 0);
    return indexes.map((i, k) => {
      let size = replies[i]![2];
      for (const [shard, shardSize] of sizes) if (shard !== shards[k]) size += shardSize;
      let rank = ranks.get(k);
      const place = rank === undefined ? null : member(i, replies[i]![1], members[i]?.after);
      let rankBefore = ranksBefore.get(k);
      const placeBefore = rankBefore === undefined ? null : member(i, replies[i]![4], members[i]?.before);
      const unmoved = replies[i]![4] !== null && replies[i]![5] !== null && stayed(i);
      // Take back what the batch's later writes into other shards changed: not there yet at this write's moment.
      indexes.forEach((j, later) => {
        if (later <= k || shards[later] === shards[k]) return;
        const before = member(j, replies[j]![4], members[j]?.before);
        const after = member(j, replies[j]![1], members[j]?.after);
        size -= Number(after !== null) - Number(before !== null);
        if (place && rank !== undefined) rank -= aheadOf(after, place) - aheadOf(before, place);
        if (placeBefore && rankBefore !== undefined) rankBefore -= aheadOf(after, placeBefore) - aheadOf(before, placeBefore);
      });
      return {
        size,
        place: place && rank !== undefined ? placeOf(at, place.playerId, rank, place.packed) : null,
        rankBefore: unmoved ? (rank === undefined ? null : rank + 1) : placeBefore && rankBefore !== undefined ? rankBefore + 1 : null,
      };
    });
  }

  /**
   * Moves the distinct-score counts of the DENSE buckets written by each write's old → new packed
   * value as the write script reported it, with the part a running recount had counted (see
   * dense.ts): one applyDense call per bucket (and expiry, and recount read against). Nothing for
   * other boards. O(k log D).
   */
  async function countDenseWrites(writes: BoardScoreWrite[], replies: ApplyReply[], recounts: (RecountReply | undefined)[]): Promise<void> {
    const byBucket = new Map<string, { at: BoardBucket; expireAt: number; epoch: string; changes: MemberChange[] }>();
    writes.forEach(({ at, expiresAt }, i) => {
      const recount = recounts[i];
      if (!recount) return;
      const expireAt = expireAtOf(expiresAt);
      // Changes read against different recounts (shards a recount reached or not yet) go apart.
      const name = [bucketKey(at), expireAt, recount.epoch].join('\u0000');
      const group = byBucket.get(name) ?? { at, expireAt, epoch: recount.epoch, changes: [] };
      const change = { before: replies[i]![4], after: replies[i]![1], countedBefore: recount.countedBefore, countedAfter: recount.countedAfter };
      if (group.changes.push(change) === 1) byBucket.set(name, group);
    });
    await Promise.all(
      [...byBucket.values()].map(({ at, expireAt, epoch, changes }) =>
        applyDenseDeltas(redis, at, epoch, denseDeltas(packingFor(at.board, at.bucket.period), changes), expireAt),
      ),
    );
  }

  /**
   * The places after the writes, and the 1-based rank each member held just before its write (null:
   * not there): as the write script read them, or placed on the whole bucket when it is sharded.
   */
  async function placesAfter(
    writes: BoardScoreWrite[],
    replies: ApplyReply[],
    members: (WideMembers | undefined)[],
  ): Promise<{ size: number; place: Place | null; rankBefore: number | null }[]> {
    const out = replies.map(([rank, packed, size, , packedBefore, rankBefore], i) => {
      const { at, score } = writes[i]!;
      return {
        size,
        place: rank === null || packed === null ? null : placeOf(at, members[i]?.after ?? score.playerId, rank, packed),
        rankBefore: packedBefore === null || rankBefore === null ? null : rankBefore + 1,
      };
    });
    const byBucket = new Map<string, number[]>();
    writes.forEach(({ at }, i) => {
      if (!sharded(at)) return;
      const key = bucketKey(at);
      const indexes = byBucket.get(key) ?? [];
      if (indexes.push(i) === 1) byBucket.set(key, indexes);
    });
    await Promise.all(
      [...byBucket.values()].map(async (indexes) => {
        const placed = await shardedPlaces(writes, replies, members, indexes);
        indexes.forEach((i, k) => (out[i] = placed[k]!));
      }),
    );
    return out;
  }

  /**
   * For each (player, radius) asked, the player and up to `radius` places either side; no places
   * when the player is not ranked. With `fill`, min(size, 2 × radius + 1) places, the window
   * shifted inward where an edge cuts it (see {@link AroundAsk}). One call for them all,
   * O(k (log N + radius)); sharded: at most 2S calls for them all, O(k · S (log N + radius)), one
   * window per shard merged.
   */
  async function arounds(at: BoardBucket, asks: readonly AroundAsk[]): Promise<BucketView[]> {
    return reads(async (redis) => {
      if (sharded(at)) {
        const views = await shardedArounds(redis, at, asks);
        return views.map(({ size, members }) => ({ size, places: members.map((member) => placeOfMember(at, member)) }));
      }
      const key = bucketKey(at);
      const triples = aroundTriples(asks);
      const [size, ...reply] = timeInMember(at) ? await redis.readWideAround(key, memberHashKey(key), ...triples) : await redis.readAround(key, ...triples);
      return runsFrom(at, asks, Number(size), reply).views;
    });
  }

  /** readAround's reply after the size, as one view per ask; `end` is where the runs end in it. O(places). */
  function runsFrom(at: BoardBucket, asks: readonly unknown[], size: number, reply: readonly (number | string | null)[]): { views: BucketView[]; end: number } {
    let next = 0;
    const views = asks.map(() => {
      const count = Number(reply[next++]);
      if (count === 0) return { size, places: [] };
      const firstRank = Number(reply[next++]);
      const rows = reply.slice(next, (next += 2 * count)) as (number | string)[];
      return { size, places: placesFromRows(at, rows, firstRank) };
    });
    return { views, end: next };
  }

  /**
   * {@link arounds} of a one-shard bucket on one node, with the token and each place's field of
   * `fields` read in the same step: a value per place, in the order of the views and their places
   * (see read-around.ts, readAroundNamed). One call, O(k (log N + radius)).
   */
  async function aroundsNamed(
    at: BoardBucket,
    asks: readonly AroundAsk[],
    fields: PlayerFields,
  ): Promise<{ views: BucketView[]; token: string | null; values: (string | null)[] }> {
    if (sharded(at) || onCluster) throw new Error(`aroundsNamed reads a one-shard bucket on one node, not ${bucketKey(at)}`);
    const triples = aroundTriples(asks);
    const key = bucketKey(at);
    const [size, ...reply] = await reads((redis) =>
      timeInMember(at)
        ? redis.readWideAroundNamed(key, fields.changesKey, memberHashKey(key), prefixed(fields.hashPrefix), fields.hashes, ...triples)
        : redis.readAroundNamed(key, fields.changesKey, prefixed(fields.hashPrefix), fields.hashes, ...triples),
    );
    const { views, end } = runsFrom(at, asks, Number(size), reply);
    return { views, token: (reply[end] as string | null) ?? null, values: reply.slice(end + 1) as (string | null)[] };
  }

  return {
    /**
     * Writes board scores (each already combined with what the database held) and reads every
     * member's place after its write, as of the write's own moment; a batch that changes a shard's
     * top announces it once (see {@link announceTopChanged}). One script call for every sorted set
     * written on one node (one a set on a Cluster, where each is a hash slot of its own, and on a DENSE board) and per 1,000
     * writes: O(k log N); plus, for sharded buckets, one countAhead per other shard and bucket:
     * O(S · k log N).
     */
    async writeBoardScores(writes: BoardScoreWrite[]): Promise<WrittenPlace[]> {
      if (writes.length === 0) return [];
      const { replies, recounts, members } = await applyWrites(writes);
      if (options.topChanged) {
        const changed = new Set<BoardBucket>();
        replies.forEach(([, , , changedTop], i) => changedTop === 1 && changed.add(writes[i]!.at));
        if (changed.size > 0) options.topChanged([...changed]);
      }
      if (options.placed) {
        // packedBefore null, packed set: the player was not in that set before this write.
        const placed = new Set<string>();
        replies.forEach(([, packed, , , packedBefore], i) => packed !== null && packedBefore === null && placed.add(writes[i]!.score.playerId));
        if (placed.size > 0) options.placed([...placed]);
      }
      const [places] = await Promise.all([placesAfter(writes, replies, members), countDenseWrites(writes, replies, recounts)]);
      // The packed values the script answered anyway: what an overtaking compares (writes/overtaking.ts), at no extra call.
      return places.map((written, i) => {
        const [, packed, , , packedBefore] = replies[i]!;
        const { playerId } = writes[i]!.score;
        return {
          ...written,
          packed: packed === null ? null : Number(packed),
          packedBefore: packedBefore === null ? null : Number(packedBefore),
          member: packed === null ? null : (members[i]?.after ?? playerId),
          memberBefore: packedBefore === null ? null : (members[i]?.before ?? playerId),
        };
      });
    },

    /**
     * Takes a player out of the given board buckets (a flag or an erasure), from their shard only.
     * Answers, per bucket, the 1-based rank the player held just before within their shard (the
     * bucket's rank on a one-shard board), or null where they were not ranked. A rank within a
     * shard is never larger than the rank in the whole bucket, so one outside the watched top
     * means that top did not change. Two script calls per bucket (three on a DENSE board, whose
     * counts lose the score removed): O(k log N).
     */
    async removePlayer(at: BoardBucket[], playerId: string): Promise<(number | null)[]> {
      return Promise.all(
        at.map(async (bucket) => {
          const key = playerShardKey(bucket, playerId);
          // Out of a running rebuild first, as writes go into it first: should the rebuild swap in
          // between, the player is not carried back in; and tombstoned there, so that a chunk of the
          // rebuild's snapshot read before this removal cannot bring them back either (see
          // rebuild-remove.ts). Nothing is created when no rebuild runs.
          const wide = timeInMember(bucket);
          const [temp, tombstones] = [rebuildKey(key), rebuildTombstoneKey(key)];
          const outOfRebuild = wide
            ? redis.removeFromWideRebuild(temp, tombstones, memberHashKey(temp), playerId)
            : redis.removeFromRebuild(temp, tombstones, playerId);
          if (!dense(bucket)) {
            const [, rank] = await Promise.all([
              outOfRebuild,
              wide ? redis.removeWideMember(key, memberHashKey(key), playerId) : redis.removeMember(key, playerId),
            ]);
            return rank === null ? null : rank + 1;
          }
          const removal = wide
            ? redis.removeWideDenseMember(key, recountPositionKey(key), memberHashKey(key), playerId)
            : redis.removeDenseMember(key, recountPositionKey(key), playerId);
          const [, [rank, packed, counted, epoch]] = await Promise.all([outOfRebuild, removal]);
          const change = { before: packed, after: null, countedBefore: counted === 1, countedAfter: false };
          // The counts' expiry stays as it is (0): they expire when their bucket's sorted sets do.
          await applyDenseDeltas(redis, bucket, epoch, denseDeltas(packingFor(bucket.board, bucket.bucket.period), [change]), 0);
          return rank === null ? null : rank + 1;
        }),
      );
    },

    /**
     * One step of a scan of a bucket's shard (`shard`, 0-based): ZSCAN from `cursor` with COUNT
     * `count`, answering the next cursor ('0' when the scan is over) and the (player id, packed)
     * pairs read. Every member there from the scan's start to its end is read at least once,
     * whatever is added or removed meanwhile (see jobs/inactive-players.ts). O(count).
     */
    async scanShard(at: BoardBucket, shard: number, cursor: string, count: number): Promise<{ cursor: string; pairs: string[] }> {
      const [next, pairs] = await redis.zscan(shardKey(at, shard), cursor, 'COUNT', count);
      // A member that carries the time is read as its player, and its packed value as the value and
      // the member, a space between: what removeInactive checks the player still holds (wide.ts).
      if (timeInMember(at)) {
        for (let i = 0; i < pairs.length; i += 2) [pairs[i], pairs[i + 1]] = [playerOfMember(pairs[i]!), `${pairs[i + 1]} ${pairs[i]}`];
      }
      return { cursor: next, pairs };
    },

    /**
     * Takes inactive players out of one shard of a bucket (jobs/inactive-players.ts), each only
     * while it still holds the packed value the scan read (see remove-inactive.ts); a DENSE board's
     * distinct-score counts lose their scores. Unlike {@link removePlayer}, a running rebuild is
     * left alone: a rebuild brings inactive players back, and the job's next pass takes them out.
     * Answers the ids removed and whether one of them was in the shard's watched top. One script
     * call (two on a DENSE board): O(k log N).
     */
    async removeInactive(at: BoardBucket, shard: number, pairs: readonly string[]): Promise<{ removed: string[]; topChanged: boolean }> {
      const key = shardKey(at, shard);
      const removed: string[] = [];
      let topChanged = false;
      if (pairs.length === 0) return { removed, topChanged };
      const took = (i: number, rank: number | string | null | undefined) => {
        if (rank === null || rank === undefined) return false;
        removed.push(pairs[2 * i]!);
        if (Number(rank) < at.board.topSize) topChanged = true;
        return true;
      };
      const wide = timeInMember(at);
      if (!dense(at)) {
        const ranks = wide ? await redis.removeWideInactive(key, memberHashKey(key), ...pairs) : await redis.removeInactive(key, ...pairs);
        ranks.forEach((rank, i) => took(i, rank));
        return { removed, topChanged };
      }
      const reply = wide
        ? await redis.removeWideInactiveDense(key, recountPositionKey(key), memberHashKey(key), ...pairs)
        : await redis.removeInactiveDense(key, recountPositionKey(key), ...pairs);
      const epoch = String(reply.at(-1));
      const changes: MemberChange[] = [];
      for (let i = 0; 2 * i < pairs.length; i++) {
        const read = pairs[2 * i + 1]!;
        const before = wide ? read.slice(0, read.indexOf(' ')) : read;
        if (took(i, reply[2 * i])) changes.push({ before, after: null, countedBefore: reply[2 * i + 1] === 1, countedAfter: false });
      }
      // The counts' expiry stays as it is (0): they expire when their bucket's sorted sets do.
      await applyDenseDeltas(redis, at, epoch, denseDeltas(packingFor(at.board, at.bucket.period), changes), 0);
      return { removed, topChanged };
    },

    /** The first `limit` places. O(log N + limit); sharded: O(S (log N + limit)), the merge of every shard's top. */
    async top(at: BoardBucket, limit: number, options?: ReadOptions): Promise<BucketView> {
      return reads(async (redis) => {
        if (sharded(at)) {
          const { size, members } = await shardedTop(redis, at, limit);
          return { size, places: members.map((member) => placeOfMember(at, member)) };
        }
        const [size, ...rows] = await redis.readTop(bucketKey(at), limit);
        return { size: Number(size), places: placesFromRows(at, rows, 0) };
      }, options);
    },

    /**
     * The places of the given players, null for those not ranked. O(k log N); sharded: O(S · k log N)
     * in at most 2S calls (see shardedStandings).
     */
    async standings(at: BoardBucket, playerIds: string[]): Promise<BucketView<Place | null>> {
      return reads(async (redis) => {
        if (sharded(at)) {
          const { size, members } = await shardedStandings(redis, at, playerIds);
          return { size, places: members.map((member) => (member ? placeOfMember(at, member) : null)) };
        }
        const key = bucketKey(at);
        const [size, ...pairs] = timeInMember(at)
          ? await redis.readWideStandings(key, memberHashKey(key), ...playerIds)
          : await redis.readStandings(key, ...playerIds);
        return { size: Number(size), places: standingsFrom(at, playerIds, pairs) };
      });
    },

    /**
     * {@link standings} of a one-shard bucket on one node, with the token and each player's field
     * of `fields` read in the same step, every key declared: a value per player (null for one not
     * ranked there; see read-standings.ts, readStandingsNamed). One call, O(k log N).
     */
    async standingsNamed(
      at: BoardBucket,
      playerIds: string[],
      fields: PlayerFields,
    ): Promise<{ view: BucketView<Place | null>; token: string | null; values: (string | null)[] }> {
      if (sharded(at) || onCluster) throw new Error(`standingsNamed reads a one-shard bucket on one node, not ${bucketKey(at)}`);
      const wide = timeInMember(at);
      const key = bucketKey(at);
      const keys = [key, fields.changesKey, ...(wide ? [memberHashKey(key)] : []), ...fields.keysOf(playerIds)];
      const [size, ...reply] = await reads((redis) =>
        wide ? redis.readWideStandingsNamed(keys.length, ...keys, ...playerIds) : redis.readStandingsNamed(keys.length, ...keys, ...playerIds),
      );
      const end = (wide ? 3 : 2) * playerIds.length;
      return {
        view: { size: Number(size), places: standingsFrom(at, playerIds, reply) },
        token: (reply[end] as string | null) ?? null,
        values: reply.slice(end + 1) as (string | null)[],
      };
    },

    arounds,
    aroundsNamed,

    /** The player and up to `radius` places either side (with `fill`, shifted inward at the edges); no places when the player is not ranked. See {@link arounds}. */
    async around(at: BoardBucket, playerId: string, radius: number, fill = false): Promise<BucketView> {
      const [view] = await arounds(at, [{ playerId, radius, fill }]);
      return view!;
    },

    /**
     * Up to `first` places strictly after `after` (from the top when null), found by key rather
     * than by offset, so a place whose score does not change is never skipped nor repeated between
     * pages, wherever the cursor's own player went: each shard's `first + 1` members after the same
     * key (one sorted set is a bucket of one shard), merged (see shards.ts). O(S (log N + first)),
     * O(S (log T · log N + first)) when T members tie on the cursor's packed value.
     */
    async page(at: BoardBucket, after: Member | PagePlace | null, first: number): Promise<PageView> {
      const position = positionOf(after);
      const { size, members, ahead } = await reads((redis) => shardedPage(redis, at, position, first + 1));
      const places = pagePlaces(at, members);
      return { size, places: places.slice(0, first), hasMore: places.length > first, hasBefore: ahead > 0 };
    },

    /**
     * Up to `last` places strictly ahead of `before` (the bucket's last places when null), in rank
     * order: the mirror of {@link page}, found by key too, so walking backwards never skips nor
     * repeats a place whose score does not change either. O(S (log N + last)), as {@link page}.
     */
    async pageBefore(at: BoardBucket, before: Member | PagePlace | null, last: number): Promise<PageView> {
      const position = positionOf(before);
      const { size, members, ahead } = await reads((redis) => shardedPageBefore(redis, at, position, last));
      // What is not ahead of the page's first nor in it follows it.
      return { size, places: pagePlaces(at, members), hasMore: size - ahead - members.length > 0, hasBefore: ahead > 0 };
    },

    /**
     * Up to `first` places from the 0-based position `from` on (none past the end), without
     * walking to it: one sorted set reads them at that rank (readFrom); a sharded bucket finds the
     * member at the position from its shards' counts (memberAt, never reading the members ahead of
     * it), then reads the page from it as {@link page} does. O(log N + first); sharded,
     * O(S² log² N + S · first) in O(log N) rounds.
     */
    async pageFrom(at: BoardBucket, from: number, first: number): Promise<PageView> {
      return reads(async (redis) => {
        if (!sharded(at)) {
          const [size, ...rows] = await redis.readFrom(bucketKey(at), from, first + 1);
          const members = membersFrom(rows, from);
          const places = pagePlaces(at, members);
          return { size: Number(size), places: places.slice(0, first), hasMore: places.length > first, hasBefore: Math.min(from, Number(size)) > 0 };
        }
        const found = await memberAt(redis, at, from);
        if (found.member === null && from >= found.size) return { size: found.size, places: [], hasMore: false, hasBefore: found.size > 0 };
        // The position just ahead of the member found: its id then a NUL byte sorts right after it in
        // byte order, so in REV order right before it, with no member between (see position.ts).
        const position = found.member && found.exact ? { packed: found.member.packed, playerId: `${found.member.playerId}\u0000` } : found.member;
        const { size, members, ahead } = await shardedPage(redis, at, position, first + 1);
        const places = pagePlaces(at, members);
        return { size, places: places.slice(0, first), hasMore: places.length > first, hasBefore: ahead > 0 };
      });
    },

    /** How many players are ranked, on the masters (the drift counts compare it). O(1); sharded: O(S), the sum of the shards' sizes. */
    async size(at: BoardBucket): Promise<number> {
      return sharded(at) ? shardedSize(redis, at) : redis.zcard(bucketKey(at));
    },

    /**
     * For each score (with, on a board with tie-break columns, its values: `tieBreakValues[i]` is
     * the i-th score's), how many players have a strictly better result (whenever they reached it):
     * its COMPETITION rank is one more. One ZCOUNT per score and shard, summed: O(k S log N).
     */
    async countBetter(at: BoardBucket, scores: number[], tieBreakValues?: readonly (readonly number[] | undefined)[]): Promise<number[]> {
      const packing = packingFor(at.board, at.bucket.period);
      const floors = scores.map((score, i) => lowestPackedAbove(at.board, packing, score, tieBreakValues?.[i]));
      const perShard = await reads((redis) => Promise.all(shardKeys(at).map((key) => Promise.all(floors.map((floor) => redis.zcount(key, floor, '+inf'))))));
      return floors.map((_, i) => perShard.reduce((total, counts) => total + counts[i]!, 0));
    },

    /**
     * How a bucket's scores spread: `bins` equal-width bins from its lowest to its highest score
     * (model/score-bins.ts), each with how many players it holds; none for an empty bucket. Two
     * steps, each one script call per shard: the shards' end members (readScoreEnds), then, for
     * every edge between bins, the players at or above it (ZCOUNT over the packed values of those
     * scores, whenever reached: countScoreRanges), summed over the shards. Each shard counts its
     * edges and its size at one moment, and the first and last bins take whatever lies beyond them
     * (a player who came in between the two steps), so the bins always add up to the size read.
     * O(S · bins · log N).
     */
    async scoreBins(at: BoardBucket, bins: number): Promise<ScoreBin[]> {
      const { board } = at;
      const packing = packingFor(board, at.bucket.period);
      // The packed values one score spans: every time, and on a board with tie-break columns every value of them, below it.
      const slots = 2 ** (packing.timeBits + packing.columnBits.reduce((bits, column) => bits + column, 0));
      return reads(async (redis) => {
        const keys = shardKeys(at);
        const ends = await Promise.all(keys.map((key) => redis.readScoreEnds(key)));
        let lowestPacked = Infinity;
        let highestPacked = -Infinity;
        for (const [size, lowest, highest] of ends) {
          if (Number(size) === 0) continue;
          lowestPacked = Math.min(lowestPacked, Number(lowest));
          highestPacked = Math.max(highestPacked, Number(highest));
        }
        if (lowestPacked === Infinity) return [];
        // On a LOW_FIRST board the packed order is the scores' mirror: the lowest packed value holds the highest score.
        const endScores = [lowestPacked, highestPacked].map((packed) => unpack(board, packing, packed, at.bucket.start).score);
        const edges = binEdges(Math.min(...endScores), Math.max(...endScores), bins);
        // The packed values of the scores at or above a whole score t, whenever reached.
        const atLeast = (t: number): [string, string] =>
          board.order === 'HIGH_FIRST' ? [String(t * slots), '+inf'] : ['-inf', `(${(board.maxScore - t + 1) * slots}`];
        const ranges = innerThresholds(edges).flatMap(atLeast);
        const replies = await Promise.all(keys.map((key) => redis.countScoreRanges(key, ...ranges)));
        const total = (i: number) => replies.reduce((sum, reply) => sum + Number(reply[i]), 0);
        const counts = countsFromAtLeast(
          total(0),
          ranges.filter((_, i) => i % 2 === 0).map((_, i) => total(i + 1)),
        );
        return binsOf(edges, counts);
      });
    },

    /**
     * For each score (with its tie-break values, as {@link countBetter} takes them), how many
     * distinct results held in a DENSE board's bucket are strictly better (whoever holds them): its
     * DENSE rank is one more. One ZCOUNT per score on the bucket's distinct results (see dense.ts),
     * whatever its shards: O(k log D) for D distinct results. A bucket of a board that is not DENSE
     * counts none.
     */
    async countDistinctBetter(at: BoardBucket, scores: number[], tieBreakValues?: readonly (readonly number[] | undefined)[]): Promise<number[]> {
      if (!dense(at)) throw new RangeError(`board "${at.board.id}" is not DENSE: its buckets do not count distinct scores`);
      return reads((redis) => countDistinctBetter(redis, at, scores, tieBreakValues));
    },

    /**
     * How many members of a DENSE board's bucket hold each of the given results, named by their
     * order values (scoreOrder in packing.ts; 0 for one nobody holds): the counts the distinct
     * results are listed by (see dense.ts). What places a batch's DENSE ranks as of each result's
     * own moment (writes/submission-groups.ts): whether a result the batch's later writes left or
     * took was held by anyone else. One HMGET: O(k).
     */
    async distinctHolders(at: BoardBucket, orders: readonly number[]): Promise<number[]> {
      if (!dense(at)) throw new RangeError(`board "${at.board.id}" is not DENSE: its buckets do not count distinct scores`);
      if (orders.length === 0) return [];
      const counts = await reads((redis) => redis.hmget(denseKeys(at).counts, ...orders.map(String)));
      return counts.map((count) => Math.max(0, Number(count ?? 0)));
    },

    /**
     * Drops the sorted sets of the given board buckets (a closed season's), every shard, and a DENSE
     * board's distinct-score keys; answers how many keys existed. UNLINK frees the members in the background, so a large set does not
     * block Redis. One UNLINK per key, since each bucket (and shard) is a hash tag, and so maybe a
     * Cluster node, of its own. O(k · S) here.
     */
    async drop(at: BoardBucket[]): Promise<number> {
      const unlinked = await Promise.all(at.flatMap(indexKeys).map((key) => redis.unlink(key)));
      return unlinked.reduce((total, n) => total + n, 0);
    },

    /**
     * The full names of the channels a bucket's top changes are announced on, one per shard (see
     * topChannels in keys.ts) under this client's key prefix, since ioredis prefixes keys but never
     * channels. Subscribe to exactly these: a message on any of them means the bucket's top may
     * have changed (a shard's top changed), and reading the merged top again tells. O(S).
     */
    topChannels(at: BoardBucket): string[] {
      return topChannels(at).map(prefixed);
    },

    /**
     * Tells every API process that these buckets' tops changed, for a change the write script
     * does not see: a flag, an unflag, an erasure, a rebuild, a season closed. Each process
     * watching one of them reads its top again. One SPUBLISH per distinct bucket, on its first
     * shard's channel (a watcher listens to every shard's): O(k). ioredis counts a shard channel
     * as a key, so it adds the key prefix itself here, routing the command to the channel's node.
     */
    async announceTopChanged(at: BoardBucket[]): Promise<void> {
      options.topChanged?.(at);
      const channels = new Set(at.map((bucket) => shardTopChannel(shardKey(bucket, 0))));
      await Promise.all([...channels].map((channel) => redis.spublish(channel, '')));
    },

    /**
     * The full name of a league board's channel of cohort changes (see leagueChannel in keys.ts),
     * under this client's key prefix, as announceLeague publishes on it. O(1).
     */
    leagueChannel(boardId: string): string {
      return prefixed(leagueChannel(boardId));
    },

    /**
     * Tells every API process watching a cohort of this league board (cohortChanged) what changed:
     * `message` is pubsub/league-signal.ts's. One SPUBLISH. O(1) here, O(message) on the wire.
     */
    async announceLeague(boardId: string, message: string): Promise<void> {
      await redis.spublish(leagueChannel(boardId), message);
    },

    /**
     * The full name of a board's channel of overtakings (friendOvertook; see overtakenChannel in
     * keys.ts), under this client's key prefix, as announceOvertaken publishes on it. O(1).
     */
    overtakenChannel(boardId: string): string {
      return prefixed(overtakenChannel(boardId));
    },

    /** Tells every API process watching friendOvertook on this board of overtakings: `message` is pubsub/friend-overtook.ts's. One SPUBLISH. */
    async announceOvertaken(boardId: string, message: string): Promise<void> {
      await redis.spublish(overtakenChannel(boardId), message);
    },

    /**
     * How many connections, in every process, listen on a board's channel of overtakings
     * (PUBSUB SHARDNUMSUB): whether anyone would hear one. On a Cluster every master is asked
     * (only the one serving the channel's slot counts any). O(1) a node.
     */
    async overtakenListeners(boardId: string): Promise<number> {
      const channel = prefixed(overtakenChannel(boardId));
      const ask = async (node: Pick<RedisClient, 'call'>) => {
        const reply = (await node.call('PUBSUB', 'SHARDNUMSUB', channel)) as (string | number)[];
        return Number(reply[1] ?? 0);
      };
      if (!isCluster(redis)) return ask(redis);
      const counts = await Promise.all(redis.nodes('master').map(ask));
      return counts.reduce((total, n) => total + n, 0);
    },

    /**
     * Replaces a bucket's sorted sets (every shard) with `chunks` of board scores, each shard in
     * one atomic swap; answers the number of players ranked after it. See rebuild.ts. A DENSE
     * board's distinct scores are then recounted from the swapped sets (see recountDense). O(N log N)
     * for N members.
     */
    async rebuild(at: BoardBucket, chunks: AsyncIterable<readonly BoardScoreRow[]>, options: RebuildOptions): Promise<number> {
      const size = await rebuildSortedSet(redis, at, chunks, options);
      if (dense(at)) await recountDense(redis, at, options.expiresAt, options.membersPerRecount);
      return size;
    },
  };
}
