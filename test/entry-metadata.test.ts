import { createClient } from 'graphql-ws';
import { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { createModelBoards } from './helpers/board-views.js';
import { seeded } from './helpers/random.js';
import { type OracleBoard, type OracleResult, bucketId, foldResults, labelsAt, rankEntries } from './helpers/oracle.js';
import { type RedisClusterFixture, startRedisCluster } from './helpers/redis-cluster.js';
import { type TestApp, startTestApp } from './helpers/test-app.js';

/**
 * Entry metadata against the plain oracle (test/helpers/oracle.ts folds the results it was sent
 * with: BEST, the best result's; SUM, the latest non-zero one's): through every read that serves a
 * Standing, the submit payloads (each result as of its own moment), topChanged and a closed
 * season's frozen results; a replay keeps the first; refused metadata records nothing; erasure
 * erases it; the index never holds it. On one node and on an 8-shard board on a Redis Cluster.
 */

const MARK = 'meta-mark';
const STANDING = `rank score metadata player { id }`;
const SUBMIT = `mutation($inputs: [SubmitScoreInput!]!) { submitScores(inputs: $inputs) { duplicate standings { period region standing { ${STANDING} } } } }`;

interface Served {
  rank: number;
  score: number;
  metadata: unknown;
  player: { id: string };
}
interface Submitted {
  duplicate: boolean;
  standings: { period: string; region: string | null; standing: Served }[];
}
interface Sent extends OracleResult {
  board: string;
  matchId: string;
}

/** A metadata object of exactly `bytes` bytes as JSON (UTF-8), with a two-byte character in it. */
function metadataOfSize(bytes: number): Record<string, string> {
  const base = JSON.stringify({ note: 'é' });
  return { note: 'é' + 'x'.repeat(bytes - Buffer.byteLength(base)) };
}

describe.each([
  { shards: 1, cluster: false },
  { shards: 8, cluster: true },
])('entry metadata ($shards shard(s), on a Redis Cluster: $cluster)', ({ shards, cluster }) => {
  const BEST: OracleBoard = { id: `Rally-${shards}`, order: 'HIGH_FIRST', aggregate: 'BEST', periods: ['ALL_TIME', 'DAILY', 'SEASON'] };
  const SUM: OracleBoard = { id: `Points-${shards}`, order: 'HIGH_FIRST', aggregate: 'SUM', periods: ['ALL_TIME', 'WEEKLY'] };
  let t: TestApp;
  let redisCluster: RedisClusterFixture | undefined;
  const sent: Sent[] = [];
  const answers: Submitted[] = [];

  /** The oracle's ranked list of one bucket (ALL_TIME unless said), with each entry's metadata. */
  const oracle = (board: OracleBoard, period = 'ALL_TIME', region: string | null = null) => {
    const results = sent.filter((r) => r.board === board.id);
    const label = period === 'SEASON' ? 's1' : labelsAt(new Date())[period]!;
    // The oracle's labels know no seasons: a season holds the same results as ALL_TIME here.
    const bucket = foldResults(board, results).get(bucketId(period === 'SEASON' ? 'ALL_TIME' : period, period === 'SEASON' ? 'all' : label, region));
    return rankEntries(board, bucket?.values() ?? []).map((entry, i) => ({
      rank: i + 1,
      score: entry.score,
      metadata: entry.metadata,
      player: { id: entry.playerId },
    }));
  };
  const read = async <T>(query: string, variables: Record<string, unknown> = {}) => {
    const answer = await t.gql<T>(query, variables);
    expect(answer.errors).toBeUndefined();
    return answer.data!;
  };
  const submit = async (results: Sent[]) => {
    const answer = await t.server<{ submitScores: Submitted[] }>(SUBMIT, {
      inputs: results.map(({ board, playerId, matchId, score, region, achievedAt, metadata }) => ({
        board,
        playerId,
        matchId,
        score,
        region,
        achievedAt: achievedAt.toISOString(),
        ...(metadata === undefined ? {} : { metadata }),
      })),
    });
    expect(answer.errors).toBeUndefined();
    return answer.data!.submitScores;
  };

  beforeAll(async () => {
    if (cluster) redisCluster = await startRedisCluster({ masters: 3, replicasPerMaster: 0 });
    t = await startTestApp(redisCluster ? { redisCluster } : {});
    await createModelBoards(
      t,
      [BEST, SUM].map((board) => ({ ...board, maxScore: 1_000, regions: ['EU'], shards })),
    );
    expect((await t.admin(`mutation($b: ID!) { startSeason(board: $b, name: "Metadata") { id } }`, { b: BEST.id })).errors).toBeUndefined();
    // 30 players, 6 results each on each board, a millisecond apart: scores from a few values, so
    // BEST scores are often equalled later (the first stays) and SUM parts are sometimes zero.
    const next = seeded(shards * 31 + 7);
    // After the season's start, so that the season holds every result (as ALL_TIME does).
    const started = Date.now();
    let n = 0;
    for (let round = 0; round < 6; round++) {
      for (let p = 0; p < 30; p++) {
        for (const board of [BEST, SUM]) {
          const draw = next();
          n += 1;
          sent.push({
            board: board.id,
            playerId: `pilote-${p % 2 === 0 ? 'ü' : 'ß'}-${p}`,
            matchId: `Match-${round}-${p}`,
            score: board.aggregate === 'SUM' ? [0, 5, 10][Math.floor(draw * 3)]! : 100 * (1 + Math.floor(draw * 5)),
            region: p % 3 === 0 ? 'EU' : null,
            achievedAt: new Date(started + n),
            // One result in four sends none; the others an object naming the result.
            metadata: (round + p) % 4 === 0 ? undefined : { car: `R${n}`, mark: MARK, laps: [round, p], 'pilote ü': { ok: true } },
          });
        }
      }
    }
    // Out of order, as game servers send late results: shuffled, so that a result often arrives
    // after a later one (a SUM part that is not the latest, a BEST score reached earlier).
    for (let i = sent.length - 1; i > 0; i--) {
      const j = Math.floor(next() * (i + 1));
      [sent[i], sent[j]] = [sent[j]!, sent[i]!];
    }
    // 40 results a call, each answered as of its own moment.
    for (let i = 0; i < sent.length; i += 40) answers.push(...(await submit(sent.slice(i, i + 40))));
  }, 120_000);
  afterAll(async () => {
    await t?.close();
    await redisCluster?.stop();
  });

  it('the submit payloads: each result with the metadata its board score held right after it', () => {
    sent.forEach((result, i) => {
      const board = result.board === BEST.id ? BEST : SUM;
      const upTo = sent.slice(0, i + 1).filter((r) => r.board === result.board && r.playerId === result.playerId);
      const want = foldResults(board, upTo)
        .get(bucketId('ALL_TIME', 'all', null))!
        .get(result.playerId)!.metadata;
      const allTime = answers[i]!.standings.find((s) => s.period === 'ALL_TIME' && s.region === null)!;
      expect(allTime.standing.metadata, `${result.board} result ${i}`).toEqual(want);
    });
  });

  it('top, standing, around, friends and standings pages, on every period and the region', async () => {
    for (const [board, period, region] of [
      [BEST, 'ALL_TIME', null],
      [BEST, 'DAILY', 'EU'],
      [BEST, 'SEASON', null],
      [SUM, 'ALL_TIME', null],
      [SUM, 'WEEKLY', 'EU'],
    ] as const) {
      const want = oracle(board, period, region);
      const where = `${board.id} ${period} ${region ?? ''}`;
      expect(want.some((row) => row.metadata === null) && want.some((row) => row.metadata !== null), where).toBe(true);
      const vars = { b: board.id, p: period, r: region };
      const top = await read<{ top: { entries: Served[] } }>(
        `query($b: ID!, $p: Period!, $r: String) { top(board: $b, period: $p, region: $r, limit: 100) { entries { ${STANDING} } } }`,
        vars,
      );
      expect(top.top.entries, `top ${where}`).toEqual(want);
      for (const [i, row] of want.entries()) {
        if (i % 4 !== 0) continue;
        const one = await read<{ standing: Served; around: Served[] }>(
          `query($b: ID!, $p: Period!, $r: String, $id: ID!) {
            standing(board: $b, period: $p, region: $r, playerId: $id) { ${STANDING} }
            around(board: $b, period: $p, region: $r, playerId: $id, radius: 2) { ${STANDING} } }`,
          { ...vars, id: row.player.id },
        );
        expect(one.standing, `standing ${where} ${row.player.id}`).toEqual(row);
        expect(one.around, `around ${where} ${row.player.id}`).toEqual(want.slice(Math.max(0, i - 2), i + 3));
      }
      // Small pages, and one page of every row (long enough that its rows are looked up ahead).
      for (const first of [7, 1_000]) {
        const rows: Served[] = [];
        let after: string | null = null;
        for (;;) {
          const page: { standings: { edges: { node: Served }[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } } } = await read(
            `query($b: ID!, $p: Period!, $r: String, $f: Int!, $a: String) { standings(board: $b, period: $p, region: $r, first: $f, after: $a) { edges { node { ${STANDING} } } pageInfo { hasNextPage endCursor } } }`,
            { ...vars, f: first, a: after },
          );
          rows.push(...page.standings.edges.map((edge) => edge.node));
          if (!page.standings.pageInfo.hasNextPage) break;
          after = page.standings.pageInfo.endCursor;
        }
        expect(rows, `standings ${where}, ${first} a page`).toEqual(want);
      }
    }
    const want = oracle(BEST);
    const me = want[10]!.player.id;
    const friends = [want[0]!, want[5]!, want[29]!].map((row) => row.player.id);
    expect((await t.server(`mutation($p: ID!, $f: [ID!]!) { setFriends(playerId: $p, friendIds: $f) }`, { p: me, f: friends })).errors).toBeUndefined();
    const data = await read<{ friends: Served[] }>(`query($b: ID!, $p: ID!) { friends(board: $b, playerId: $p) { ${STANDING} } }`, { b: BEST.id, p: me });
    expect(data.friends).toEqual(want.filter((row) => [me, ...friends].includes(row.player.id)));
  });

  it('a replay keeps the first metadata: duplicate, nothing changed', async () => {
    const first = sent.find((r) => r.board === BEST.id && r.metadata !== undefined)!;
    const [again] = await submit([{ ...first, metadata: { car: 'other', mark: MARK } }]);
    expect(again!.duplicate).toBe(true);
    const [logged] = await t.database.sql<{ metadata: string }[]>`
      select metadata::text from results where board_id = ${first.board} and player_id = ${first.playerId} and match_id = ${first.matchId}`;
    expect(JSON.parse(logged!.metadata)).toEqual(first.metadata);
    expect(
      (await read<{ top: { entries: Served[] } }>(`query($b: ID!) { top(board: $b, limit: 100) { entries { ${STANDING} } } }`, { b: BEST.id })).top.entries,
    ).toEqual(oracle(BEST));
  });

  it('refused metadata (not an object, or over 1,024 bytes) names the size and records nothing; 1,024 bytes is taken', async () => {
    const counts = async () =>
      (await t.database.sql<{ n: number }[]>`select (select count(*) from results)::int + (select count(*) from board_scores)::int as n`)[0]!.n;
    const before = await counts();
    const base = { board: BEST.id, playerId: 'pilote-neu', score: 900, achievedAt: new Date(), region: null };
    for (const [metadata, message] of [
      [['a', 'b'], /inputs\.1\.metadata: metadata must be a JSON object.*an array/],
      ['R8', /inputs\.1\.metadata: metadata must be a JSON object.*a string/],
      [42, /inputs\.1\.metadata: metadata must be a JSON object.*a number/],
      [metadataOfSize(1_025), /inputs\.1\.metadata: metadata is 1,025 bytes as JSON \(UTF-8\); at most 1,024/],
    ] as const) {
      const answer = await t.server(SUBMIT, {
        inputs: [
          { ...base, matchId: 'Refused-0', achievedAt: base.achievedAt.toISOString() },
          { ...base, matchId: 'Refused-1', achievedAt: base.achievedAt.toISOString(), metadata },
        ],
      });
      expect(answer.errors?.[0]?.extensions?.code, JSON.stringify(metadata).slice(0, 40)).toBe('BAD_USER_INPUT');
      expect(answer.errors?.[0]?.message).toMatch(message);
    }
    // The same as a literal in the document, as a hand-written query would send it.
    const literal = await t.server(
      `mutation { submitScore(input: { board: "${BEST.id}", playerId: "pilote-neu", score: 1, matchId: "L", metadata: [1] }) { duplicate } }`,
    );
    expect(literal.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(await counts()).toBe(before);
    const exact = metadataOfSize(1_024);
    const [taken] = await submit([{ ...base, matchId: 'Exact', metadata: exact }]);
    expect(taken!.standings.find((s) => s.period === 'ALL_TIME')!.standing.metadata).toEqual(exact);
    sent.push({ ...base, matchId: 'Exact', metadata: exact });
  });

  it('topChanged serves each view with its metadata, and a new result with its own', async () => {
    const client = createClient({ url: `${t.url.replace('http', 'ws')}/graphql`, webSocketImpl: WebSocket, retryAttempts: 0 });
    try {
      const views = client.iterate<{ topChanged: { entries: Served[] } }>({
        query: `subscription($b: ID!) { topChanged(board: $b, limit: 5) { entries { ${STANDING} } } }`,
        variables: { b: BEST.id },
      });
      const first = await views.next();
      expect((first.value as { data: { topChanged: { entries: Served[] } } }).data.topChanged.entries).toEqual(oracle(BEST).slice(0, 5));
      const winner: Sent = {
        board: BEST.id,
        playerId: 'pilote-ü-0',
        matchId: 'Winner',
        score: 999,
        region: null,
        achievedAt: new Date(),
        metadata: { car: 'Winner', mark: MARK, ghost: 'replay-🏁' },
      };
      await submit([winner]);
      sent.push(winner);
      for (;;) {
        const view = await views.next();
        const entries = (view.value as { data: { topChanged: { entries: Served[] } } }).data.topChanged.entries;
        if (entries[0]?.score !== winner.score) continue;
        expect(entries).toEqual(oracle(BEST).slice(0, 5));
        break;
      }
      await views.return?.();
    } finally {
      await client.dispose();
    }
  });

  it("a closed season's frozen results keep each standing's metadata; erasure erases the player's everywhere", async () => {
    const want = oracle(BEST, 'SEASON');
    expect((await t.admin(`mutation($b: ID!) { closeSeason(board: $b) { id } }`, { b: BEST.id })).errors).toBeUndefined();
    const frozen = async () => {
      const rows: Served[] = [];
      let after: string | null = null;
      for (;;) {
        const page: { seasonResults: { edges: { node: Served }[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } } } = await read(
          `query($b: ID!, $a: String) { seasonResults(board: $b, season: "s1", first: 9, after: $a) { edges { node { ${STANDING} } } pageInfo { hasNextPage endCursor } } }`,
          { b: BEST.id, a: after },
        );
        rows.push(...page.seasonResults.edges.map((edge) => edge.node));
        if (!page.seasonResults.pageInfo.hasNextPage) return rows;
        after = page.seasonResults.pageInfo.endCursor;
      }
    };
    expect(await frozen()).toEqual(want);

    const erased = want.find((row) => row.metadata !== null)!.player.id;
    expect((await t.admin(`mutation($p: ID!) { deletePlayer(playerId: $p) }`, { p: erased })).errors).toBeUndefined();
    expect(await frozen()).toEqual(want.filter((row) => row.player.id !== erased));
    const [left] = await t.database.sql<{ n: number }[]>`
      select (select count(*) from results where player_id = ${erased})::int
           + (select count(*) from board_scores where player_id = ${erased})::int
           + (select count(*) from frozen_standings where player_id is null and metadata is not null)::int as n`;
    expect(left!.n).toBe(0);
  });

  it('the index holds no metadata, and reads that do not select it never read the column', async () => {
    // Every value under the app's prefix, on every node: nothing of it names the metadata's mark.
    const nodes = t.redis instanceof Cluster ? t.redis.nodes('master') : [t.redis];
    let values = 0;
    for (const node of nodes) {
      let cursor = '0';
      do {
        // SCAN patterns are not prefixed by ioredis; the keys it answers are full names.
        const [next, keys] = await node.scan(cursor, 'MATCH', `${t.keyPrefix}*`, 'COUNT', 1000);
        for (const full of keys) {
          const key = full.slice(t.keyPrefix.length);
          const type = await node.type(key);
          const held =
            type === 'zset'
              ? await node.zrange(key, 0, -1)
              : type === 'hash'
                ? await node.hgetall(key)
                : type === 'string'
                  ? await node.get(key)
                  : type === 'set'
                    ? await node.smembers(key)
                    : type === 'list'
                      ? await node.lrange(key, 0, -1)
                      : null;
          values += 1;
          expect(JSON.stringify(held ?? ''), key).not.toContain(MARK);
        }
        cursor = next;
      } while (cursor !== '0');
    }
    expect(values).toBeGreaterThan(0);

    const statements: string[] = [];
    const watcher = await startTestApp({
      shareStoresOf: { databaseUrl: t.databaseUrl, keyPrefix: t.keyPrefix },
      onQuery: (statement) => statements.push(statement),
      ...(redisCluster ? { redisCluster } : {}),
    });
    try {
      const answer = await watcher.gql(`query($b: ID!) { top(board: $b, limit: 10) { entries { rank achievedAt } } }`, { b: SUM.id });
      expect(answer.errors).toBeUndefined();
      // achievedAt alone: the index holds it to the millisecond on these boards (maxScore 1,000), so
      // nothing is looked up (test/achieved-at.test.ts checks that a coarse board's look-up leaves the column out).
      const lookups = statements.filter((statement) => /as reached_ms/.test(statement) && /player_id = any\(/.test(statement));
      expect(lookups).toEqual([]);
      const withMetadata = await watcher.gql(`query($b: ID!) { top(board: $b, limit: 10) { entries { rank metadata } } }`, { b: SUM.id });
      expect(withMetadata.errors).toBeUndefined();
      expect(
        statements.filter((statement) => /from board_scores s/.test(statement) && /player_id = any\(/.test(statement) && /s\.metadata/.test(statement)),
      ).toHaveLength(1);
    } finally {
      await watcher.close();
    }
  });
});
