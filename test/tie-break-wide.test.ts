import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Board, BoardScore, BoardScoreRow } from '../src/model/board.js';
import { bucketAt } from '../src/model/buckets.js';
import { type RedisClient, createRedisCluster } from '../src/redis.js';
import { type BoardBucket, type Place, createRankingIndex } from '../src/ranking/index.js';
import { denseKeys, memberHashKey, shardKeys, shardOf } from '../src/ranking/keys.js';
import { packingFor } from '../src/ranking/packing.js';
import { rebuildKey, rebuildTombstoneKey } from '../src/ranking/rebuild.js';
import { indexTestBoard } from './helpers/board-views.js';
import { seeded } from './helpers/random.js';
import { type RedisClusterFixture, startRedisCluster } from './helpers/redis-cluster.js';
import { scratchRedis } from './helpers/redis-keys.js';
import { type TestApp, startTestApp } from './helpers/test-app.js';
import { until } from './helpers/wait.js';

/**
 * Issue 59: a board whose score and tie-break columns take 40..53 bits of the double leaves no room
 * for the time, so its index keeps the time in the member (ranking/members.ts): ranks stay exact
 * all the same. Every read of the index, on 1 and 8 shards, a DENSE board and a Redis Cluster,
 * against an oracle that sorts the results itself: by score, then each column in its own
 * direction, then the earlier time (to the millisecond), then the player id's bytes descending.
 * A better result replaces the player's member (one member a player, the hash naming it), a flag,
 * an erasure and an inactive player's removal take it out, a rebuild brings back exactly the
 * oracle, and every key of the bucket is accounted for (no orphan hash field, no leftover key).
 */

const NOW = new Date('2037-11-29T12:00:00.000Z');
/** The bucket's start (the board's epoch, ALL_TIME): the times below are a few ms after a moment well inside it. */
const BASE_MS = Date.parse('2030-01-01T00:00:00.000Z');

/** Score 31 bits, laps 12, ms 9: 52 bits, too many to leave the 14 bits of time a double would need. */
function wideBoard(id: string, shards: number, order: Board['order'] = 'HIGH_FIRST', rankStyle: Board['rankStyle'] = 'ORDINAL'): Board {
  return {
    ...indexTestBoard(id, shards, order, 'BEST', 5, NOW),
    rankStyle,
    maxScore: 2 ** 30,
    tieBreaks: [
      { name: 'laps', order: 'HIGH_FIRST', max: 2 ** 12 - 1 },
      { name: 'ms', order: 'LOW_FIRST', max: 2 ** 9 - 1 },
    ],
  };
}

const bucketOf = (board: Board): BoardBucket => ({ board, bucket: bucketAt(board, 'ALL_TIME', NOW), region: null });

interface Result {
  playerId: string;
  score: number;
  values: number[];
  reachedMs: number;
}

// ---- the oracle: no code of the service ----

/** -1 when x is better than y in `order`, 1 when worse, 0 when equal. */
const better = (order: string, x: number, y: number) => (x === y ? 0 : (order === 'HIGH_FIRST') === x > y ? -1 : 1);

function compareTuples(board: Board, a: Result, b: Result): number {
  const byScore = better(board.order, a.score, b.score);
  if (byScore !== 0) return byScore;
  for (const [i, column] of (board.tieBreaks ?? []).entries()) {
    const byColumn = better(column.order, a.values[i]!, b.values[i]!);
    if (byColumn !== 0) return byColumn;
  }
  return 0;
}

/** The standings the oracle expects: each player's best, in rank order. */
function oracle(board: Board, results: readonly Result[], hidden: ReadonlySet<string> = new Set()): Place[] {
  const best = new Map<string, Result>();
  for (const r of results) {
    if (hidden.has(r.playerId)) continue;
    const held = best.get(r.playerId);
    const c = held ? compareTuples(board, r, held) : -1;
    if (!held || c < 0 || (c === 0 && r.reachedMs < held.reachedMs)) best.set(r.playerId, r);
  }
  return [...best.values()]
    .sort((a, b) => compareTuples(board, a, b) || a.reachedMs - b.reachedMs || Buffer.compare(Buffer.from(b.playerId), Buffer.from(a.playerId)))
    .map((r, i) => ({ playerId: r.playerId, rank: i + 1, score: r.score, reachedAt: new Date(r.reachedMs), tieBreakValues: r.values }));
}

/** Results crowded on a few scores and columns and a few milliseconds, so whole tuples tie, and ties are split by time, then id. */
function resultsOf(seed: number, players: number, count: number): Result[] {
  const random = seeded(seed);
  const ids = Array.from({ length: players }, (_, i) => (i % 7 === 3 ? `Ü-${i}` : `p${String(i).padStart(2, '0')}`));
  return Array.from({ length: count }, () => ({
    playerId: random.pick(ids),
    score: random.pick([2 ** 30, 2 ** 30 - 1, 123_456_789, 5, 0]),
    values: [random.pick([2 ** 12 - 1, 4_094, 7, 0]), random.pick([0, 1, 2 ** 9 - 1])],
    reachedMs: BASE_MS + random.int(0, 3),
  }));
}

const scoreOf = (r: Result): BoardScore => ({ playerId: r.playerId, score: r.score, reachedAt: new Date(r.reachedMs), tieBreakValues: r.values });
const rowOf = (place: Place): BoardScoreRow => [place.playerId, place.score, place.reachedAt.getTime(), [...place.tieBreakValues!]];

/** Every read of the index against the oracle's standings. */
async function expectReads(index: ReturnType<typeof createRankingIndex>, at: BoardBucket, want: Place[]) {
  const all = await index.top(at, want.length + 5);
  expect(all.size).toBe(want.length);
  expect(all.places).toEqual(want);
  expect(await index.size(at)).toBe(want.length);
  // Standings: every player, and one who is not ranked.
  const standings = await index.standings(at, [...want.map((p) => p.playerId), 'nobody']);
  expect(standings.places).toEqual([...want, null]);
  // Around at both edges and in the middle, several in one call.
  const asked = [0, 1, Math.floor(want.length / 2), want.length - 2, want.length - 1];
  const arounds = await index.arounds(
    at,
    asked.map((i) => ({ playerId: want[i]!.playerId, radius: 2 })),
  );
  arounds.forEach((view, k) => expect(view.places).toEqual(want.slice(Math.max(0, asked[k]! - 2), asked[k]! + 3)));
  // Pages of 3, each after the last place of the one before (its member: the cursor's position).
  const paged: Place[] = [];
  let page = await index.page(at, null, 3);
  for (;;) {
    paged.push(...page.places.map(({ packed: _packed, member: _member, ...place }) => place));
    if (!page.hasMore) break;
    const last = page.places.at(-1)!;
    page = await index.page(at, { playerId: last.member, packed: last.packed }, 3);
  }
  expect(paged).toEqual(want);
}

/** Every key of the bucket's shards: one member a player, the hash naming exactly the set's members, no rebuild left behind. */
async function expectKeysAccounted(redis: RedisClient, at: BoardBucket) {
  for (const key of shardKeys(at)) {
    const members = await redis.zrange(key, 0, -1);
    const named = await redis.hgetall(memberHashKey(key));
    expect(Object.values(named).sort(), key).toEqual([...members].sort());
    for (const [playerId, member] of Object.entries(named)) expect(member.slice(10), key).toBe(playerId);
    expect(new Set(members.map((m) => m.slice(10))).size).toBe(members.length);
    expect(await redis.exists(rebuildKey(key), rebuildTombstoneKey(key), memberHashKey(rebuildKey(key)))).toBe(0);
  }
}

/** The whole story on one board: writes in any order, replacements, removals, inactive players, a rebuild. */
async function story(redis: RedisClient, board: Board, seed: number) {
  const at = bucketOf(board);
  expect(packingFor(board, 'ALL_TIME').timeInMember).toBe(true);
  const changed: BoardBucket[][] = [];
  const index = createRankingIndex(redis, { topChanged: (buckets) => changed.push(buckets) });
  const results = resultsOf(seed, 24, 90);
  // In batches of 10, in the order drawn: a player's results arrive in any order.
  for (let i = 0; i < results.length; i += 10) {
    const written = await index.writeBoardScores(results.slice(i, i + 10).map((r) => ({ at, score: scoreOf(r), expiresAt: null })));
    for (const w of written) expect(w.place).not.toBeNull();
  }
  expect(changed.length).toBeGreaterThan(0);
  let want = oracle(board, results);
  await expectReads(index, at, want);
  await expectKeysAccounted(redis, at);

  // Equal (score, columns) reached milliseconds apart rank by time, then by id: three newcomers at the top.
  const top = want[0]!;
  const tied = ['zz-late', 'aa-early', 'mm-same'].map((playerId, i): Result => ({
    playerId,
    score: top.score,
    values: [...top.tieBreakValues!],
    reachedMs: top.reachedAt.getTime() + [2, -1, 2][i]!,
  }));
  changed.length = 0;
  const written = await index.writeBoardScores(tied.map((r) => ({ at, score: scoreOf(r), expiresAt: null })));
  // Each write of a batch is placed as of its own moment.
  tied.forEach((r, k) => expect(written[k]!.place).toEqual(oracle(board, [...results, ...tied.slice(0, k + 1)]).find((p) => p.playerId === r.playerId)));
  results.push(...tied);
  want = oracle(board, results);
  expect(changed.flat()).toContain(at);
  await expectReads(index, at, want);

  // A better result replaces the member (same result earlier: better too); a worse or a later equal one changes nothing.
  const mover = want.at(-1)!;
  const moves: Result[] = [
    { playerId: mover.playerId, score: mover.score, values: [...mover.tieBreakValues!], reachedMs: mover.reachedAt.getTime() + 5 },
    { playerId: mover.playerId, score: mover.score, values: [...mover.tieBreakValues!], reachedMs: mover.reachedAt.getTime() - 1 },
    { playerId: 'aa-early', score: top.score, values: [...top.tieBreakValues!], reachedMs: top.reachedAt.getTime() - 1 },
    { playerId: 'zz-late', score: top.score, values: [...top.tieBreakValues!], reachedMs: top.reachedAt.getTime() + 3 },
  ];
  for (const r of moves) await index.writeBoardScores([{ at, score: scoreOf(r), expiresAt: null }]);
  results.push(...moves);
  want = oracle(board, results);
  await expectReads(index, at, want);
  await expectKeysAccounted(redis, at);

  // A flag (or an erasure) takes the player out of every read; an unflag writes their best back.
  const hidden = new Set([want[1]!.playerId, want[5]!.playerId]);
  for (const playerId of hidden) expect(await index.removePlayer([at], playerId)).toEqual([expect.any(Number)]);
  expect(await index.removePlayer([at], 'nobody')).toEqual([null]);
  await expectReads(index, at, oracle(board, results, hidden));
  await expectKeysAccounted(redis, at);
  const back = [...hidden][0]!;
  hidden.delete(back);
  const best = oracle(board, results).find((p) => p.playerId === back)!;
  await index.writeBoardScores([{ at, score: { ...best, tieBreakValues: best.tieBreakValues! }, expiresAt: null }]);
  await expectReads(index, at, oracle(board, results, hidden));

  // Inactive players: read by a scan as player ids, taken out only while they hold what was read.
  const scanned: string[] = [];
  for (let shard = 0; shard < board.shards; shard++) {
    let cursor = '0';
    do {
      const step = await index.scanShard(at, shard, cursor, 100);
      cursor = step.cursor;
      scanned.push(...step.pairs);
    } while (cursor !== '0');
  }
  const ids = scanned.filter((_, i) => i % 2 === 0);
  expect(ids.sort()).toEqual(
    oracle(board, results, hidden)
      .map((p) => p.playerId)
      .sort(),
  );
  const [gone, stays] = [want[2]!.playerId, want[3]!.playerId];
  const pairOf = (id: string) => {
    const i = scanned.indexOf(id);
    return [scanned[i]!, scanned[i + 1]!];
  };
  // `stays` moves on after the scan: its removal must not happen.
  const staysBest = oracle(board, results).find((p) => p.playerId === stays)!;
  const staysNext: Result = { playerId: stays, score: staysBest.score, values: [...staysBest.tieBreakValues!], reachedMs: staysBest.reachedAt.getTime() - 1 };
  const stayPair = pairOf(stays);
  await index.writeBoardScores([{ at, score: scoreOf(staysNext), expiresAt: null }]);
  results.push(staysNext);
  expect((await index.removeInactive(at, shardOfPlayer(at, gone), pairOf(gone))).removed).toEqual([gone]);
  // The same result reached earlier: the same double, another member, so what the scan read no longer stands.
  expect((await index.removeInactive(at, shardOfPlayer(at, stays), stayPair)).removed).toEqual([]);
  hidden.add(gone);
  await expectReads(index, at, oracle(board, results, hidden));
  await expectKeysAccounted(redis, at);

  // A rebuild from the oracle's rows, over a corrupted set: exactly the oracle, every key accounted for.
  const shown = oracle(board, results, hidden);
  await redis.del(shardKeys(at)[0]!);
  const size = await index.rebuild(
    at,
    (async function* () {
      yield shown.slice(0, 10).map(rowOf);
      yield shown.slice(10).map(rowOf);
    })(),
    { expiresAt: null, membersPerZadd: 4 },
  );
  expect(size).toBe(shown.length);
  await expectReads(index, at, shown);
  await expectKeysAccounted(redis, at);
  return index;
}

const shardOfPlayer = (at: BoardBucket, playerId: string) => shardOf(playerId, at.board.shards);

describe('a board whose time is in the member: every read exact, against the oracle', () => {
  const { redis } = scratchRedis('tie-break-wide');

  it('one shard', async () => {
    await story(redis, wideBoard('wide-1', 1), 59);
  });

  it('8 shards, LOW_FIRST', async () => {
    await story(redis, wideBoard('wide-8', 8, 'LOW_FIRST'), 60);
  });

  it('8 shards, DENSE: the distinct results counted by the whole tuple', async () => {
    const board = wideBoard('wide-dense', 8, 'HIGH_FIRST', 'DENSE');
    await story(redis, board, 61);
    const at = bucketOf(board);
    const places = (await createRankingIndex(redis).top(at, 1000)).places;
    const distinct = new Set(places.map((p) => JSON.stringify([p.score, p.tieBreakValues])));
    expect(await redis.zcard(denseKeys(at).scores)).toBe(distinct.size);
  });

  it('a rebuild while results arrive keeps the newer result, and one tombstoned stays out', async () => {
    const board = wideBoard('wide-race', 4);
    const at = bucketOf(board);
    const index = createRankingIndex(redis);
    const results = resultsOf(62, 12, 30);
    await index.writeBoardScores(results.map((r) => ({ at, score: scoreOf(r), expiresAt: null })));
    const snapshot = oracle(board, results);
    const newer: Result = { playerId: snapshot[4]!.playerId, score: 2 ** 30, values: [2 ** 12 - 1, 0], reachedMs: BASE_MS };
    const flagged = snapshot[6]!.playerId;
    await index.rebuild(
      at,
      (async function* () {
        // Between the claim and the snapshot's rows: a newer result, a flag.
        await index.writeBoardScores([{ at, score: scoreOf(newer), expiresAt: null }]);
        await index.removePlayer([at], flagged);
        yield snapshot.map(rowOf);
      })(),
      { expiresAt: null },
    );
    results.push(newer);
    await expectReads(index, at, oracle(board, results, new Set([flagged])));
    await expectKeysAccounted(redis, at);
  });

  it('plain and narrow boards keep their members as player ids, with no member hash', async () => {
    const index = createRankingIndex(redis);
    const narrow: Board = { ...indexTestBoard('narrow', 2, 'HIGH_FIRST', 'BEST', 5, NOW), tieBreaks: [{ name: 'laps', order: 'HIGH_FIRST', max: 255 }] };
    for (const board of [indexTestBoard('plain', 2, 'HIGH_FIRST', 'BEST', 5, NOW), narrow]) {
      const at = bucketOf(board);
      expect(packingFor(board, 'ALL_TIME').timeInMember).toBe(false);
      await index.writeBoardScores([
        { at, score: { playerId: 'ann', score: 9, reachedAt: new Date(BASE_MS), tieBreakValues: board.tieBreaks ? [3] : undefined }, expiresAt: null },
      ]);
      const key = shardKeys(at)[shardOfPlayer(at, 'ann')]!;
      expect(await redis.zrange(key, 0, -1)).toEqual(['ann']);
      expect(await redis.exists(memberHashKey(key))).toBe(0);
    }
  });
});

describe('a board whose time is in the member, on a Redis Cluster', () => {
  let cluster: RedisClusterFixture | undefined;
  let redis: RedisClient | undefined;
  beforeAll(async () => {
    cluster = await startRedisCluster({ masters: 3, replicasPerMaster: 0 });
    redis = createRedisCluster(cluster.masters, { keyPrefix: 'wide:' });
    await redis.connect();
  }, 60_000);
  afterAll(async () => {
    await redis?.quit();
    await cluster?.stop();
  });

  it('one shard and 8 shards', async () => {
    await story(redis!, wideBoard('cluster-1', 1), 63);
    await story(redis!, wideBoard('cluster-8', 8, 'LOW_FIRST', 'DENSE'), 64);
  });
});

describe('a board whose time is in the member, through the service', () => {
  const board = wideBoard('WideRace', 8, 'HIGH_FIRST', 'DENSE');
  const columns = board.tieBreaks!.map(({ name, order, max }) => ({ name, order, max }));
  let t: TestApp;
  const sent: Result[] = [];
  const hidden = new Set<string>();
  const ROW = 'rank score achievedAt tieBreakValues player { id }';
  interface Row {
    rank: number;
    score: number;
    achievedAt: string;
    tieBreakValues: number[];
    player: { id: string };
  }
  /** The oracle's rows in a style: COMPETITION shares the first rank of an equal tuple, DENSE counts the distinct tuples better. */
  const want = (style: 'ORDINAL' | 'COMPETITION' | 'DENSE' = 'ORDINAL'): Row[] => {
    const places = oracle(board, sent, hidden);
    const key = (p: Place) => JSON.stringify([p.score, p.tieBreakValues]);
    let dense = 0;
    return places.map((p, i) => {
      if (i === 0 || key(places[i - 1]!) !== key(p)) dense++;
      const first = places.findIndex((q) => key(q) === key(p)) + 1;
      const rank = style === 'ORDINAL' ? p.rank : style === 'COMPETITION' ? first : dense;
      return { rank, score: p.score, achievedAt: p.reachedAt.toISOString(), tieBreakValues: p.tieBreakValues as number[], player: { id: p.playerId } };
    });
  };
  const read = async <T>(query: string, variables: Record<string, unknown> = {}) => {
    const answer = await t.gql<T>(query, variables);
    expect(answer.errors, JSON.stringify(answer.errors)).toBeUndefined();
    return answer.data!;
  };
  const top = async (style: string) =>
    (
      await read<{ top: { entries: Row[] } }>(`query($s: RankStyle) { top(board: "WideRace", limit: 1000, rankStyle: $s) { entries { ${ROW} } } }`, {
        s: style,
      })
    ).top.entries;
  const submit = async (results: Result[]) => {
    const answer = await t.server(`mutation($inputs: [SubmitScoreInput!]!) { submitScores(inputs: $inputs) { duplicate } }`, {
      inputs: results.map((r, i) => ({
        board: board.id,
        playerId: r.playerId,
        matchId: `m${sent.length + i}`,
        score: r.score,
        tieBreakValues: r.values,
        achievedAt: new Date(r.reachedMs).toISOString(),
      })),
    });
    expect(answer.errors, JSON.stringify(answer.errors)).toBeUndefined();
    sent.push(...results);
  };
  /** Every read through the service against the oracle: top in three styles, standings, around, friends, pages. */
  const expectEverywhere = async () => {
    await until(async () => JSON.stringify(await top('ORDINAL')) === JSON.stringify(want()), 3_000, 'the top').catch(() => undefined);
    for (const style of ['ORDINAL', 'COMPETITION', 'DENSE'] as const) expect(await top(style), style).toEqual(want(style));
    // A standing in the board's style, DENSE.
    const rows = want('DENSE');
    const standings = await read<Record<string, Row>>(
      `{ ${rows.map((r, i) => `s${i}: standing(board: "WideRace", playerId: ${JSON.stringify(r.player.id)}) { ${ROW} }`).join(' ')} }`,
    );
    expect(rows.map((_, i) => standings[`s${i}`])).toEqual(rows);
    const middle = Math.floor(rows.length / 2);
    const around = await read<{ around: Row[] }>(`query($p: ID!) { around(board: "WideRace", playerId: $p, radius: 2, rankStyle: ORDINAL) { ${ROW} } }`, {
      p: rows[middle]!.player.id,
    });
    expect(around.around).toEqual(want().slice(middle - 2, middle + 3));
    const paged: Row[] = [];
    let after: string | null = null;
    for (;;) {
      const data: { standings: { edges: { node: Row }[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } } } = await read(
        `query($a: String) { standings(board: "WideRace", first: 4, after: $a, rankStyle: ORDINAL) { edges { node { ${ROW} } } pageInfo { hasNextPage endCursor } } }`,
        { a: after },
      );
      paged.push(...data.standings.edges.map((edge) => edge.node));
      if (!data.standings.pageInfo.hasNextPage) break;
      after = data.standings.pageInfo.endCursor;
    }
    expect(paged).toEqual(want());
  };

  beforeAll(async () => {
    t = await startTestApp();
    const created = await t.admin(`mutation($input: CreateBoardInput!) { createBoard(input: $input) { id } }`, {
      input: {
        id: board.id,
        title: board.id,
        order: board.order,
        maxScore: board.maxScore,
        periods: ['ALL_TIME'],
        shards: 8,
        rankStyle: 'DENSE',
        tieBreaks: columns,
      },
    });
    expect(created.errors, JSON.stringify(created.errors)).toBeUndefined();
    // Times near now (the service refuses results from the future), crowded on a few milliseconds.
    const base = Date.now() - 60_000;
    const results = resultsOf(65, 20, 50).map((r) => ({ ...r, reachedMs: base + (r.reachedMs - BASE_MS) }));
    await submit(results.filter((_, i) => i % 2 === 0));
    await submit(results.filter((_, i) => i % 2 === 1));
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  });

  it('every read equals the oracle: ties on the whole tuple split by the millisecond, then the id', async () => {
    await expectEverywhere();
    const me = want()[3]!.player.id;
    const friends = [0, 1, 8].map((i) => want()[i]!.player.id);
    expect((await t.server(`mutation($p: ID!, $f: [ID!]!) { setFriends(playerId: $p, friendIds: $f) }`, { p: me, f: friends })).errors).toBeUndefined();
    const data = await read<{ friends: Row[] }>(`query($p: ID!) { friends(board: "WideRace", playerId: $p, rankStyle: ORDINAL) { ${ROW} } }`, { p: me });
    expect(data.friends).toEqual(want().filter((row) => [me, ...friends].includes(row.player.id)));
  });

  it('flag, unflag and erasure keep every read and every key exact; a rebuild equals the oracle', async () => {
    const [flagged, erased] = [want()[0]!.player.id, want()[4]!.player.id];
    expect((await t.admin(`mutation($p: ID!) { flagPlayer(playerId: $p, reason: "test") { id } }`, { p: flagged })).errors).toBeUndefined();
    hidden.add(flagged);
    await expectEverywhere();
    expect((await t.admin(`mutation($p: ID!) { unflagPlayer(playerId: $p) { id } }`, { p: flagged })).errors).toBeUndefined();
    hidden.delete(flagged);
    await expectEverywhere();
    expect((await t.admin(`mutation($p: ID!) { deletePlayer(playerId: $p) }`, { p: erased })).errors).toBeUndefined();
    hidden.add(erased);
    await expectEverywhere();
    // The shards' keys name the board, period, label and shard only (the epoch is the bucket's start, not in the keys).
    const at = bucketOf(board);
    await expectKeysAccounted(t.redis, at);
    const rebuilt = await t.admin<{ rebuildBoard: number }>(`mutation { rebuildBoard(board: "WideRace") }`);
    expect(rebuilt.errors, JSON.stringify(rebuilt.errors)).toBeUndefined();
    expect(rebuilt.data!.rebuildBoard).toBe(want().length);
    await expectEverywhere();
    await expectKeysAccounted(t.redis, at);
  });
});
