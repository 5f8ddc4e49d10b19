import type { Result } from 'ioredis';
import { type RedisClient, isCluster, sendAtOnce } from '../../redis.js';
import type { DenseKeyList } from '../keys.js';
import { applyDenseScoresLua, applyScoresLua } from './apply-scores.js';
import { readAroundLua, readAroundNamedLua } from './read-around.js';
import { readStandingsLua, readStandingsNamedLua } from './read-standings.js';
import { readTopLua } from './read-top.js';
import { removeDenseMemberLua, removeMemberLua } from './remove-member.js';
import { beginRebuildLua } from './rebuild-begin.js';
import { checkGenerationLua } from './check-generation.js';
import { planRecoveryLua } from './plan-recovery.js';
import { removeFromRebuildLua } from './rebuild-remove.js';
import { dropRebuildLua } from './rebuild-drop.js';
import { swapRebuiltLua } from './rebuild-swap.js';
import { countAheadLua } from './count-ahead.js';
import { readAfterLua } from './read-after.js';
import { readBeforeLua } from './read-before.js';
import { readFromLua } from './read-from.js';
import { readNearLua } from './read-near.js';
import { applyDenseLua } from './dense-apply.js';
import { swapDenseLua } from './dense-swap.js';
import { beginDenseRecountLua } from './dense-begin.js';
import { recountChunkLua } from './recount-chunk.js';
import { removeInactiveDenseLua, removeInactiveLua } from './remove-inactive.js';
import { readWideAroundLua, readWideAroundNamedLua } from './read-around.js';
import { readWideStandingsLua, readWideStandingsNamedLua } from './read-standings.js';
import {
  applyWideDenseScoresLua,
  applyWideScoresLua,
  beginWideRebuildLua,
  dropWideRebuildLua,
  removeFromWideRebuildLua,
  removeWideDenseMemberLua,
  removeWideInactiveDenseLua,
  removeWideInactiveLua,
  removeWideMemberLua,
  swapWideRebuiltLua,
  writeWideRebuildLua,
} from './wide.js';

/** A member's place as a script reports it: 0-based rank and packed score as Redis prints it, or nulls. */
export type RawPlace = [rank: number | null, packed: string | null];

declare module 'ioredis' {
  interface RedisCommander<Context> {
    /**
     * See apply-scores.ts: `numberOfKeys` (3 a set), then (key, rebuildKey, tombstoneKey) a set,
     * then the number of sets and, a set, direction, expireAt, topSize, n and n (id, packed) pairs.
     * Returns [rank, packed, size, changed, packedBefore, rankBefore] per pair, flat, set after set; publishes
     * on a set's top channel once when any of its changed is 1.
     */
    applyScores(numberOfKeys: number, ...keysThenArgs: (string | number)[]): Result<(number | string | null)[], Context>;
    /**
     * applyScores for one set, its three keys first (what a Redis Cluster client routes, and
     * auto-pipelines, by the first key): the number of sets (1), then as applyScores.
     */
    applyScoresToSet(
      key: string,
      rebuildKey: string,
      tombstoneKey: string,
      sets: 1,
      direction: 'GT' | 'LT',
      expireAt: number,
      topSize: number,
      writes: number,
      ...idPackedPairs: string[]
    ): Result<(number | string | null)[], Context>;
    /** See read-standings.ts. Returns [size, rank1, packed1, rank2, packed2, ...]. */
    readStandings(key: string, ...playerIds: string[]): Result<(number | string | null)[], Context>;
    /**
     * See read-standings.ts (readStandingsNamed): `keyCount` (2 + ids), the bucket's key, the
     * token's key, a hash key per id, then the ids. Returns readStandings's reply, then the token,
     * then a field per id (each null when none).
     */
    readStandingsNamed(keyCount: number, ...keysThenIds: string[]): Result<(number | string | null)[], Context>;
    /** See read-top.ts. Returns [size, id1, packed1, id2, packed2, ...]. */
    readTop(key: string, limit: number): Result<(number | string)[], Context>;
    /** See read-around.ts. Returns [size, then per (player, radius, fill) triple: count, firstRank, id1, packed1, ...; or 0 when the player is not ranked]. */
    readAround(key: string, ...triples: (string | number)[]): Result<(number | string)[], Context>;
    /** See read-around.ts (readAroundNamed). Returns readAround's reply, then the token, then a field per place read (each null when none). */
    readAroundNamed(
      key: string,
      tokenKey: string,
      hashPrefix: string,
      hashes: number,
      ...triples: (string | number)[]
    ): Result<(number | string | null)[], Context>;
    /** See remove-member.ts. Returns the 0-based rank the member held, or null when it was not there. */
    removeMember(key: string, playerId: string): Result<number | null, Context>;
    /**
     * See apply-scores.ts (applyDenseScores). Returns applyScores's replies with [countedBefore,
     * countedAfter] after each write's six, then the recount's id.
     */
    applyDenseScores(
      key: string,
      rebuildKey: string,
      tombstoneKey: string,
      recountPositionKey: string,
      direction: 'GT' | 'LT',
      expireAt: number,
      topSize: number,
      ...idPackedPairs: string[]
    ): Result<(number | string | null)[], Context>;
    /** See remove-member.ts (removeDenseMember). Returns [rank, packed, counted, recount id]. */
    removeDenseMember(key: string, recountPositionKey: string, playerId: string): Result<[number | null, string | null, 0 | 1, string], Context>;
    /** See dense-apply.ts. Returns the number of distinct scores listed live. */
    applyDense(...args: [...keys: DenseKeyList, expireAt: number, epoch: string, ...valueLiveCountedTriples: string[]]): Result<number, Context>;
    /** See dense-swap.ts. Returns the number of distinct scores now live, or -1 when the recount is no longer the running one. */
    swapDense(...args: [...keys: DenseKeyList, expireAt: number, recountId: string]): Result<number, Context>;
    /** See dense-begin.ts. Returns 1. */
    beginDenseRecount(scoresKey: string, countsKey: string, runningKey: string, id: string, leaseMs: number): Result<number, Context>;
    /** See recount-chunk.ts. Returns [id1, packed1, ...], or null when another recount took over. */
    recountChunk(key: string, recountPositionKey: string, id: string, count: number): Result<string[] | null, Context>;
    /** See count-ahead.ts. Returns [size, ahead1, ahead2, ...] for the (packed, id) pairs given. */
    countAhead(key: string, ...packedIdPairs: string[]): Result<number[], Context>;
    /** See read-after.ts. Returns [size, before, id1, packed1, ...]. */
    readAfter(key: string, count: number, packed: string, playerId: string): Result<(number | string)[], Context>;
    /** See read-before.ts. Returns [size, ahead, id1, packed1, ...]; packed and playerId '' for the end of the set. */
    readBefore(key: string, count: number, packed: string, playerId: string): Result<(number | string)[], Context>;
    /** See read-from.ts. Returns [size, id1, packed1, ...] from the 0-based position `from` on. */
    readFrom(key: string, from: number, count: number): Result<(number | string)[], Context>;
    /** See read-near.ts. Returns [size, then per (packed, player id, radius) triple: ahead, countBefore, idB1, packedB1, ..., countAfter, idA1, packedA1, ...]. */
    readNear(key: string, ...triples: (string | number)[]): Result<(number | string)[], Context>;
    /** See rebuild-begin.ts. Returns 1 when claimed, 0 when another rebuild holds the key. */
    beginRebuild(rebuildKey: string, tombstoneKey: string, marker: string, ttlMs: number): Result<number, Context>;
    /** See rebuild-swap.ts. Returns the live size, or -1 when the marker is gone. */
    swapRebuilt(rebuildKey: string, liveKey: string, tombstoneKey: string, marker: string, expireAt: number): Result<number, Context>;
    /** See rebuild-drop.ts. Returns 1 when deleted. */
    dropRebuild(rebuildKey: string, tombstoneKey: string, marker: string): Result<number, Context>;
    /** See rebuild-remove.ts. Returns 1 when a running rebuild lost (and tombstoned) the member. */
    removeFromRebuild(rebuildKey: string, tombstoneKey: string, playerId: string): Result<number, Context>;
    /** See check-generation.ts. Returns [generation, recovering, claimed]; recovering -1 when the marker holds another generation than expected (nothing changed). */
    checkGeneration(
      markerKey: string,
      expectedPendingKey: string,
      freshPendingKey: string,
      freshGeneration: string,
      expectedGeneration: string,
      ...sourceMark: string[]
    ): Result<[string | null, -1 | 0 | 1, 0 | 1 | 2 | 3], Context>;
    /** See remove-inactive.ts. Returns the 0-based rank each (id, packed) pair's member held, or null when it was not removed. */
    removeInactive(key: string, ...idPackedPairs: string[]): Result<(number | null)[], Context>;
    /** See remove-inactive.ts (removeInactiveDense). Returns [rank1, counted1, ...] per pair, then the recount's id. */
    removeInactiveDense(key: string, recountPositionKey: string, ...idPackedPairs: string[]): Result<(number | string | null)[], Context>;
    /** See plan-recovery.ts. Returns the bucket keys still pending. */
    planRecovery(pendingKey: string, ...bucketKeys: string[]): Result<string[], Context>;
    // The scripts of a board whose time is in the member (see wide.ts and ranking/members.ts).
    /** See wide.ts. Returns, per (id, packed, member) triple, [rank, packed, size, changed, packedBefore, rankBefore, member, memberBefore]. */
    applyWideScores(
      key: string,
      rebuildKey: string,
      tombstoneKey: string,
      memberHash: string,
      rebuildMemberHash: string,
      expireAt: number,
      topSize: number,
      ...idPackedMemberTriples: string[]
    ): Result<(number | string | null)[], Context>;
    /** See wide.ts (applyWideDenseScores). Returns applyWideScores's eight replies plus [countedBefore, countedAfter] per write, then the recount's id. */
    applyWideDenseScores(
      key: string,
      rebuildKey: string,
      tombstoneKey: string,
      memberHash: string,
      rebuildMemberHash: string,
      recountPositionKey: string,
      expireAt: number,
      topSize: number,
      ...idPackedMemberTriples: string[]
    ): Result<(number | string | null)[], Context>;
    /** See read-standings.ts (readWideStandings). Returns [size, rank1, packed1, member1, ...]. */
    readWideStandings(key: string, memberHash: string, ...playerIds: string[]): Result<(number | string | null)[], Context>;
    /** See read-standings.ts (readWideStandingsNamed): `keyCount` (3 + ids), the set, the token, the member hash, a hash per id, then the ids. */
    readWideStandingsNamed(keyCount: number, ...keysThenIds: string[]): Result<(number | string | null)[], Context>;
    /** See read-around.ts (readWideAround). Returns readAround's reply, its rows' ids being members. */
    readWideAround(key: string, memberHash: string, ...triples: (string | number)[]): Result<(number | string)[], Context>;
    /** See read-around.ts (readWideAroundNamed). Returns readAroundNamed's reply, its rows' ids being members. */
    readWideAroundNamed(
      key: string,
      tokenKey: string,
      memberHash: string,
      hashPrefix: string,
      hashes: number,
      ...triples: (string | number)[]
    ): Result<(number | string | null)[], Context>;
    /** See wide.ts. Returns the 0-based rank the player's member held, or null. */
    removeWideMember(key: string, memberHash: string, playerId: string): Result<number | null, Context>;
    /** See wide.ts. Returns [rank, packed, counted, recount id] as removeDenseMember. */
    removeWideDenseMember(
      key: string,
      recountPositionKey: string,
      memberHash: string,
      playerId: string,
    ): Result<[number | null, string | null, 0 | 1, string], Context>;
    /** See wide.ts. Returns per (id, packed) pair the rank its member held, or null when not removed. */
    removeWideInactive(key: string, memberHash: string, ...idPackedPairs: string[]): Result<(number | null)[], Context>;
    /** See wide.ts. Returns [rank1, counted1, ...], then the recount's id. */
    removeWideInactiveDense(
      key: string,
      recountPositionKey: string,
      memberHash: string,
      ...idPackedPairs: string[]
    ): Result<(number | string | null)[], Context>;
    /** See wide.ts. Returns 1 when claimed, 0 when another rebuild holds the key. */
    beginWideRebuild(rebuildKey: string, tombstoneKey: string, memberHash: string, marker: string, ttlMs: number): Result<number, Context>;
    /** See wide.ts. Returns how many players were written or moved. */
    writeWideRebuild(rebuildKey: string, memberHash: string, ttlMs: number, ...idPackedMemberTriples: string[]): Result<number, Context>;
    /** See wide.ts. Returns 1 when a rebuild is running (the player is out of it and tombstoned), else 0. */
    removeFromWideRebuild(rebuildKey: string, tombstoneKey: string, memberHash: string, playerId: string): Result<number, Context>;
    /** See wide.ts. Returns the live size, or -1 when the marker is gone. */
    swapWideRebuilt(
      rebuildKey: string,
      liveKey: string,
      tombstoneKey: string,
      rebuildMemberHash: string,
      liveMemberHash: string,
      marker: string,
      expireAt: number,
    ): Result<number, Context>;
    /** See wide.ts. Returns 1 when deleted. */
    dropWideRebuild(rebuildKey: string, tombstoneKey: string, memberHash: string, marker: string): Result<number, Context>;
  }
}

/**
 * Registers every ranking script on a client once. ioredis then sends each by EVALSHA and falls
 * back to EVAL only when the server does not know the script yet (after a restart, say).
 * The read-only scripts (`#!lua flags=no-writes`) are defined `readOnly`, which a Cluster client
 * that reads from replicas (scaleReads, see ranking/replicas.ts) needs to send them there: it
 * sends any other script to the master. A client that reads from masters only ignores it.
 */
export function defineRankingScripts(redis: RedisClient): void {
  // As many sets as a call carries (three keys each): the caller passes the number of keys first.
  // A Cluster client's auto-pipelining groups a command by its first argument, which must then be
  // a key: there the same script goes one set a call (every bucket and shard is a slot of its own).
  redis.defineCommand('applyScores', { lua: applyScoresLua });
  redis.defineCommand('applyScoresToSet', { numberOfKeys: 3, lua: applyScoresLua });
  redis.defineCommand('readStandings', { numberOfKeys: 1, lua: readStandingsLua, readOnly: true });
  redis.defineCommand('readTop', { numberOfKeys: 1, lua: readTopLua, readOnly: true });
  redis.defineCommand('readAround', { numberOfKeys: 1, lua: readAroundLua, readOnly: true });
  redis.defineCommand('removeMember', { numberOfKeys: 1, lua: removeMemberLua });
  redis.defineCommand('countAhead', { numberOfKeys: 1, lua: countAheadLua, readOnly: true });
  redis.defineCommand('readAfter', { numberOfKeys: 1, lua: readAfterLua, readOnly: true });
  redis.defineCommand('readBefore', { numberOfKeys: 1, lua: readBeforeLua, readOnly: true });
  redis.defineCommand('readFrom', { numberOfKeys: 1, lua: readFromLua, readOnly: true });
  redis.defineCommand('readNear', { numberOfKeys: 1, lua: readNearLua, readOnly: true });
  redis.defineCommand('beginRebuild', { numberOfKeys: 2, lua: beginRebuildLua });
  redis.defineCommand('swapRebuilt', { numberOfKeys: 3, lua: swapRebuiltLua });
  redis.defineCommand('dropRebuild', { numberOfKeys: 2, lua: dropRebuildLua });
  redis.defineCommand('removeFromRebuild', { numberOfKeys: 2, lua: removeFromRebuildLua });
  redis.defineCommand('checkGeneration', { numberOfKeys: 3, lua: checkGenerationLua });
  redis.defineCommand('planRecovery', { numberOfKeys: 1, lua: planRecoveryLua });
  redis.defineCommand('applyDenseScores', { numberOfKeys: 4, lua: applyDenseScoresLua });
  redis.defineCommand('removeDenseMember', { numberOfKeys: 2, lua: removeDenseMemberLua });
  redis.defineCommand('applyDense', { numberOfKeys: 6, lua: applyDenseLua });
  redis.defineCommand('swapDense', { numberOfKeys: 6, lua: swapDenseLua });
  redis.defineCommand('beginDenseRecount', { numberOfKeys: 3, lua: beginDenseRecountLua });
  redis.defineCommand('recountChunk', { numberOfKeys: 2, lua: recountChunkLua });
  redis.defineCommand('removeInactive', { numberOfKeys: 1, lua: removeInactiveLua });
  redis.defineCommand('removeInactiveDense', { numberOfKeys: 2, lua: removeInactiveDenseLua });
  // A board whose time is in the member (wide.ts): its own scripts, beside the others, unchanged.
  redis.defineCommand('applyWideScores', { numberOfKeys: 5, lua: applyWideScoresLua });
  redis.defineCommand('applyWideDenseScores', { numberOfKeys: 6, lua: applyWideDenseScoresLua });
  redis.defineCommand('readWideStandings', { numberOfKeys: 2, lua: readWideStandingsLua, readOnly: true });
  redis.defineCommand('readWideAround', { numberOfKeys: 2, lua: readWideAroundLua, readOnly: true });
  redis.defineCommand('removeWideMember', { numberOfKeys: 2, lua: removeWideMemberLua });
  redis.defineCommand('removeWideDenseMember', { numberOfKeys: 3, lua: removeWideDenseMemberLua });
  redis.defineCommand('removeWideInactive', { numberOfKeys: 2, lua: removeWideInactiveLua });
  redis.defineCommand('removeWideInactiveDense', { numberOfKeys: 3, lua: removeWideInactiveDenseLua });
  redis.defineCommand('beginWideRebuild', { numberOfKeys: 3, lua: beginWideRebuildLua });
  redis.defineCommand('writeWideRebuild', { numberOfKeys: 2, lua: writeWideRebuildLua });
  redis.defineCommand('removeFromWideRebuild', { numberOfKeys: 3, lua: removeFromWideRebuildLua });
  redis.defineCommand('swapWideRebuilt', { numberOfKeys: 5, lua: swapWideRebuiltLua });
  redis.defineCommand('dropWideRebuild', { numberOfKeys: 3, lua: dropWideRebuildLua });
  // The named reads, for one node only: the bucket and the profile hashes they read beside it are
  // slots apart on a Cluster, and readAroundNamed reads hashes it cannot declare (`no-cluster`).
  // Never registered on a Cluster client, so no call can reach one (profile naming is off there).
  if (!isCluster(redis)) {
    redis.defineCommand('readStandingsNamed', { lua: readStandingsNamedLua, readOnly: true });
    redis.defineCommand('readAroundNamed', { numberOfKeys: 2, lua: readAroundNamedLua, readOnly: true });
    redis.defineCommand('readWideStandingsNamed', { lua: readWideStandingsNamedLua, readOnly: true });
    redis.defineCommand('readWideAroundNamed', { numberOfKeys: 3, lua: readWideAroundNamedLua, readOnly: true });
  }
  // Each already one call for many requests: a turn's reads of places (reads/place-loader.ts),
  // a bucket's shared top (top-cache.ts). The few read by one request alone (a friends list, a
  // player's standings, a replay's answer) go at once too: a write each, where a tick's would share one.
  sendAtOnce(redis, [
    'readStandings',
    'readStandingsNamed',
    'readAround',
    'readAroundNamed',
    'readTop',
    'readWideStandings',
    'readWideStandingsNamed',
    'readWideAround',
    'readWideAroundNamed',
  ]);
}
