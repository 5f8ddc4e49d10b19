import { describe, expect, it } from 'vitest';
import { type Board, type BoardScore, boardScoreRow } from '../src/model/board.js';
import { bucketAt } from '../src/model/buckets.js';
import { type BoardBucket, type Place, type RankingIndex, createRankingIndex } from '../src/ranking/index.js';
import { shardKeys, shardOf } from '../src/ranking/keys.js';
import { createRedis } from '../src/redis.js';
import { type OracleBoard, type OracleEntry, rankEntries } from './helpers/oracle.js';
import { indexTestBoard } from './helpers/board-views.js';
import { seeded } from './helpers/random.js';

/** What the oracle knows of a write's answer: its place and its set's size (the packed values are the overtaking's, compared there). */
const placeAndSize = ({ size, place }: { size: number; place: unknown }) => ({ size, place });
import { TEST_REDIS_URL, scratchRedis } from './helpers/redis-keys.js';

/**
 * The index's write path sends a batch's writes to one sorted set (a shard) as one script call,
 * however many there are. Each write must still answer and store exactly what applying the
 * writes one by one does, which a plain model here works out: per bucket a map of players, where
 * a write keeps whichever of the old and the new board score the board's direction keeps (a BEST
 * board only moves a player to the front; a LOW_FIRST SUM board's growing total only to the back),
 * and each write's place and size are read off a plain sort right after it. Batches write the same
 * player several times (also against the board's direction), spread over shards, during a running
 * rebuild in which one player is tombstoned and another tombstoned and then written again, and
 * batches beyond one call's 1,000 writes to a key.
 */

// A date to come (2037 has 2026's calendar): the index sets Redis expiries from this clock.
const NOW = new Date('2037-11-29T12:00:00.000Z');

const boardOf = (id: string, shards: number, order: Board['order'], aggregate: Board['aggregate']) => indexTestBoard(id, shards, order, aggregate, 3, NOW);

type Answer = { size: number; place: Place | null };

/** The plain model of one bucket. */
function model(board: OracleBoard) {
  const players = new Map<string, OracleEntry>();
  const ranked = () => rankEntries(board, players.values());
  // GT keeps the score ranking ahead; LT (a total growing on a LOW_FIRST board) the one ranking behind.
  const keepsAhead = !(board.aggregate === 'SUM' && board.order === 'LOW_FIRST');
  return {
    players,
    /** Applies one write and answers what it should: the player's place and the bucket's size right after it. */
    write({ playerId, score, reachedAt }: BoardScore): Answer {
      const next: OracleEntry = { playerId, score, reachedAt: reachedAt.getTime(), metadata: null };
      const old = players.get(playerId);
      if (!old || (rankEntries(board, [old, next])[0] === next) === keepsAhead) players.set(playerId, next);
      const order = ranked();
      const rank = order.findIndex((entry) => entry.playerId === playerId);
      const entry = order[rank]!;
      return { size: order.length, place: { playerId, rank: rank + 1, score: entry.score, reachedAt: new Date(entry.reachedAt) } };
    },
    /** The whole bucket as the index's top(at, limit) answers it. */
    top(): { size: number; places: Place[] } {
      const order = ranked();
      return { size: order.length, places: order.map((e, i) => ({ playerId: e.playerId, rank: i + 1, score: e.score, reachedAt: new Date(e.reachedAt) })) };
    },
  };
}

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, opened };
}

describe.each([
  ['HIGH_FIRST', 'BEST', 1],
  ['HIGH_FIRST', 'BEST', 4],
  ['LOW_FIRST', 'SUM', 1],
  ['LOW_FIRST', 'SUM', 4],
] as const)('a %s %s bucket of %i shard(s): one call per key answers as writes one by one', (order, aggregate, shards) => {
  const { redis } = scratchRedis('apply-scores');
  const index: RankingIndex = createRankingIndex(redis);
  const bucketOf = (id: string): BoardBucket => {
    const board = boardOf(`${id}-${order.toLowerCase()}-${shards}`, shards, order, aggregate);
    return { board, bucket: bucketAt(board, 'ALL_TIME', NOW), region: null };
  };
  const oracleBoard: OracleBoard = { id: 'b', order, aggregate, periods: ['ALL_TIME'] };
  const at = (seconds: number) => new Date(NOW.getTime() - seconds * 1_000);

  it('a batch during a running rebuild, with tombstoned members, answers and swaps in what writes one by one give', async () => {
    const bucket = bucketOf('rebuilding');
    const live = model(oracleBoard);
    const rebuilt = model(oracleBoard);
    // Few scores and times, so players tie on both and are ordered by their bytes.
    const players = ['Zoë', 'zoë', 'e', 'E', '😀', '日本', ...Array.from({ length: 18 }, (_, i) => `p${i}`)];
    const initial: BoardScore[] = players.map((playerId, i) => ({ playerId, score: 3 + (i % 4), reachedAt: at(60 * (i % 3)) }));
    for (const score of initial) live.write(score);
    await index.writeBoardScores(initial.map((score) => ({ at: bucket, score, expiresAt: null })));

    const [flagged, unflagged] = ['p3', 'p14'];
    // The rebuild's snapshot (read before the removals) holds every player; its second chunk is
    // written only after the batch, so the batch's writes must survive it and the tombstone must
    // take `flagged` out again.
    const reached = gate();
    const resume = gate();
    async function* snapshot() {
      yield initial.slice(0, 12).map(boardScoreRow);
      reached.open();
      await resume.opened;
      yield initial.slice(12).map(boardScoreRow);
    }
    const rebuilding = index.rebuild(bucket, snapshot(), { expiresAt: null });
    await reached.opened;
    for (const score of initial) rebuilt.write(score);

    expect(await index.removePlayer([bucket], flagged)).toEqual([expect.any(Number)]);
    expect(await index.removePlayer([bucket], unflagged)).toEqual([expect.any(Number)]);
    live.players.delete(flagged);
    live.players.delete(unflagged);
    rebuilt.players.delete(flagged);

    const batch: BoardScore[] = [
      { playerId: 'p5', score: 9, reachedAt: at(30) },
      { playerId: 'new1', score: 4, reachedAt: at(60) },
      { playerId: 'p5', score: 2, reachedAt: at(20) },
      { playerId: unflagged, score: 8, reachedAt: at(10) },
      { playerId: 'Zoë', score: 9, reachedAt: at(30) },
      { playerId: 'p5', score: 12, reachedAt: at(10) },
      { playerId: 'new2', score: 9, reachedAt: at(30) },
      { playerId: 'zoë', score: 1, reachedAt: at(0) },
      { playerId: 'p5', score: 12, reachedAt: at(10) },
      { playerId: 'new1', score: 7, reachedAt: at(50) },
      { playerId: 'e', score: 15, reachedAt: at(5) },
      { playerId: unflagged, score: 11, reachedAt: at(40) },
      { playerId: '😀', score: 4, reachedAt: at(120) },
      { playerId: 'p9', score: 20, reachedAt: at(1) },
    ];
    if (shards > 1) expect(new Set(batch.map(({ playerId }) => shardOf(playerId, shards))).size).toBeGreaterThan(1);
    const answered = await index.writeBoardScores(batch.map((score) => ({ at: bucket, score, expiresAt: null })));
    expect(answered.map(placeAndSize)).toEqual(batch.map((score) => live.write(score)));
    for (const score of batch) rebuilt.write(score);
    expect(await index.top(bucket, 1_000)).toEqual(live.top());

    resume.open();
    expect(await rebuilding).toBe(rebuilt.players.size);
    const after = await index.top(bucket, 1_000);
    expect(after).toEqual(rebuilt.top());
    expect(after.places.map(({ playerId }) => playerId)).not.toContain(flagged);
    expect(after.places.map(({ playerId }) => playerId)).toContain(unflagged);
  });

  it('a batch of more writes to one key than one call carries answers as writes one by one', async () => {
    const bucket = bucketOf('large');
    const oracle = model(oracleBoard);
    const next = seeded(shards * 31 + (order === 'HIGH_FIRST' ? 1 : 2));
    const batch: BoardScore[] = Array.from({ length: 2_600 }, () => ({
      playerId: `q${Math.floor(next() * 150)}`,
      score: Math.floor(next() * 40),
      reachedAt: at(Math.floor(next() * 4) * 60),
    }));
    const answered = await index.writeBoardScores(batch.map((score) => ({ at: bucket, score, expiresAt: null })));
    expect(answered.map(placeAndSize)).toEqual(batch.map((score) => oracle.write(score)));
    expect(await index.top(bucket, 1_000)).toEqual(oracle.top());
  });

  it('a batch with an expiry sets it on every key it writes; one whose expiry has passed keeps no key and answers no place', async () => {
    const bucket = bucketOf('expiry');
    const oracle = model(oracleBoard);
    const batch: BoardScore[] = Array.from({ length: 24 }, (_, i) => ({ playerId: `x${i}`, score: 1 + (i % 7), reachedAt: at(i) }));
    const expiresAt = new Date(Date.now() + 3_600_000);
    const answered = await index.writeBoardScores(batch.map((score) => ({ at: bucket, score, expiresAt })));
    expect(answered.map(placeAndSize)).toEqual(batch.map((score) => oracle.write(score)));
    const keys = shardKeys(bucket);
    expect(await Promise.all(keys.map((key) => redis.expiretime(key)))).toEqual(keys.map(() => Math.ceil(expiresAt.getTime() / 1_000)));

    // A late batch whose keys' expiry has passed (a result inside the clock skew of its bucket's
    // end): EXPIREAT deletes each key it writes, so nothing of those shards stays and no write is placed.
    const late = batch.slice(0, 5).map((score) => ({ ...score, score: score.score + 10 }));
    const written = new Set(late.map(({ playerId }) => shardOf(playerId, shards)));
    const lateAnswers = await index.writeBoardScores(late.map((score) => ({ at: bucket, score, expiresAt: new Date(Date.now() - 60_000) })));
    expect(lateAnswers.map(({ place }) => place)).toEqual(late.map(() => null));
    if (shards === 1) expect(lateAnswers.map(({ size }) => size)).toEqual(late.map(() => 0));
    expect(await Promise.all(keys.map((key) => redis.exists(key)))).toEqual(keys.map((_, shard) => (written.has(shard) ? 0 : 1)));
    for (const playerId of oracle.players.keys()) if (written.has(shardOf(playerId, shards))) oracle.players.delete(playerId);
    expect(await index.top(bucket, 1_000)).toEqual(oracle.top());
  });

  it('a batch announces once on each shard whose top it changed, however many of its writes changed it', async () => {
    const bucket = bucketOf('announce');
    const channels = index.topChannels(bucket);
    // Plain clients without a prefix: topChannels names the channels in full.
    const listener = createRedis(TEST_REDIS_URL);
    const publisher = createRedis(TEST_REDIS_URL);
    await Promise.all([listener.connect(), publisher.connect()]);
    try {
      const heard: string[] = [];
      let fenced: () => void = () => undefined;
      listener.on('smessage', (channel: string, message: string) => (message === 'fence' ? fenced() : heard.push(channel)));
      for (const channel of channels) await listener.ssubscribe(channel);
      // Every write enters its shard's top (a new leader, or one of an empty shard's first places).
      const batch: BoardScore[] = Array.from({ length: 40 }, (_, i) => ({ playerId: `t${i}`, score: i, reachedAt: at(0) }));
      await index.writeBoardScores(batch.map((score) => ({ at: bucket, score, expiresAt: null })));
      // One connection delivers in order: a fence published after the writes arrives after every message they caused.
      const fence = new Promise<void>((resolve) => (fenced = resolve));
      await publisher.spublish(channels[0]!, 'fence');
      await fence;
      expect(heard.sort()).toEqual([...new Set(batch.map(({ playerId }) => channels[shardOf(playerId, shards)]!))].sort());
    } finally {
      await Promise.all([listener.quit(), publisher.quit()]);
    }
  });
});
