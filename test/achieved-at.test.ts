import { createClient } from 'graphql-ws';
import { beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { packingFor } from '../src/ranking/packing.js';
import { sentAtOnce } from './helpers/at-once.js';
import { type TestApp, startTestApp } from './helpers/test-app.js';

/**
 * Standing.achievedAt is the recorded time, to the millisecond, wherever a Standing is served, on a
 * board whose packing breaks ties to coarse units (the largest maxScore: 2^26 ms on ALL_TIME, 8 s on
 * DAILY), checked against the times submitted (the oracle), not against the service's own output.
 */

const BOARD = 'coarseTimes';
const MAX_SCORE = 2 ** 39 - 1;
const STANDING = `rank score achievedAt player { id }`;
const SUBMIT = `mutation($inputs: [SubmitScoreInput!]!) { submitScores(inputs: $inputs) { standings { period region standing { ${STANDING} } } } }`;

interface Served {
  rank: number;
  score: number;
  achievedAt: string;
  player: { id: string };
}

/**
 * Results, their times set when the season has started (the season is checked too), milliseconds
 * apart: bob and eve share a score and a time unit; ada improves later.
 */
const results = [
  { playerId: 'ada', score: 500, at: 0 },
  { playerId: 'bob', score: 700, at: 0 },
  { playerId: 'cyd', score: 500, at: 0 },
  { playerId: 'dee', score: 300, at: 0 },
  { playerId: 'eve', score: 700, at: 0 },
  { playerId: 'ada', score: 900, at: 0 },
];

/** What a document asking every read of standings answers. */
interface EveryRead {
  top: { entries: Served[] };
  standing: Served;
  around: Served[];
  friends: Served[];
  standings: { edges: { node: Served }[] };
}

/** Results of `board`, each at its own exact time, in one submitScores call. */
async function submitAt(t: TestApp, board: string, rows: { playerId: string; score: number; at: number }[], matchPrefix: string) {
  const response = await t.server<{ submitScores: { standings: { period: string; region: string | null; standing: Served }[] }[] }>(SUBMIT, {
    inputs: rows.map((r, i) => ({
      board,
      playerId: r.playerId,
      score: r.score,
      matchId: `${matchPrefix}${i}`,
      region: 'EU',
      achievedAt: new Date(r.at).toISOString(),
    })),
  });
  expect(response.errors).toBeUndefined();
  return response.data!.submitScores;
}

/** The look-ups of recorded board scores (findBoardScores, of a kept list or a derived one) among `statements`. */
const recordedTimeLookups = (statements: string[]) => statements.filter((s) => /as reached_ms/.test(s) && /player_id = any\(/.test(s)).length;

/** The oracle: each player's best score and when they first reached it, exact. */
function oracle(): Map<string, { score: number; at: number }> {
  const best = new Map<string, { score: number; at: number }>();
  for (const r of results) {
    const held = best.get(r.playerId);
    if (!held || r.score > held.score || (r.score === held.score && r.at < held.at)) best.set(r.playerId, { score: r.score, at: r.at });
  }
  return best;
}

describe('achievedAt is the recorded time, to the millisecond', () => {
  let t: TestApp;
  const statements: string[] = [];
  const recordedTimeQueries = () => recordedTimeLookups(statements);
  let submitted: { standings: { period: string; region: string | null; standing: Served }[] }[];

  beforeAll(async () => {
    t = await startTestApp({ onQuery: (statement) => statements.push(statement) });
    const created = await t.admin(`mutation($input: CreateBoardInput!) { createBoard(input: $input) { id } }`, {
      input: { id: BOARD, title: 'Coarse', maxScore: MAX_SCORE, periods: ['ALL_TIME', 'DAILY', 'SEASON'], regions: ['EU'] },
    });
    expect(created.errors).toBeUndefined();
    expect((await t.admin(`mutation { startSeason(board: "${BOARD}", name: "S") { id } }`)).errors).toBeUndefined();
    const started = Date.now();
    for (const [i, r] of results.entries()) r.at = started + 1 + i * 7;
    submitted = await submitAt(t, BOARD, results, 'm');
  });

  it('the packing here is coarse, so the unit start would differ from the recorded time', () => {
    expect(packingFor({ maxScore: MAX_SCORE }, 'ALL_TIME').unitMs).toBe(2 ** 26);
    expect(packingFor({ maxScore: MAX_SCORE }, 'DAILY').unitMs).toBe(8_192);
  });

  it('in the submit payloads, every bucket', () => {
    for (const [i, payload] of submitted.entries()) {
      expect(payload.standings.length).toBe(6);
      for (const { standing } of payload.standings) {
        // The exact time of the first result of this player that reached the score served.
        const reached = results.find((r) => r.playerId === results[i]!.playerId && r.score === standing.score)!;
        expect(standing.achievedAt).toBe(new Date(reached.at).toISOString());
      }
    }
  });

  const expectExact = (served: Served[]) => {
    const best = oracle();
    expect(served.length).toBeGreaterThan(0);
    for (const standing of served) {
      expect(standing.score).toBe(best.get(standing.player.id)!.score);
      expect(standing.achievedAt).toBe(new Date(best.get(standing.player.id)!.at).toISOString());
    }
  };

  it('in top, standing, around, friends and standings, on every period and region', async () => {
    await t.server(`mutation { setFriends(playerId: "dee", friendIds: ["ada", "bob", "cyd", "eve"]) }`);
    for (const period of ['ALL_TIME', 'DAILY', 'SEASON']) {
      for (const region of [null, 'EU']) {
        const where = `board: "${BOARD}", period: ${period}${region ? `, region: "${region}"` : ''}`;
        const response = await t.gql<EveryRead>(`{
          top(${where}, limit: 10) { entries { ${STANDING} } }
          standing(${where}, playerId: "cyd") { ${STANDING} }
          around(${where}, playerId: "cyd", radius: 2) { ${STANDING} }
          friends(${where}, playerId: "dee") { ${STANDING} }
          standings(${where}, first: 2) { edges { node { ${STANDING} } } }
        }`);
        expect(response.errors).toBeUndefined();
        const d = response.data!;
        expectExact([...d.top.entries, d.standing, ...d.around, ...d.friends, ...d.standings.edges.map((e) => e.node)]);
        expect(d.top.entries.length).toBe(5);
        expect(d.friends.length).toBe(5);
      }
    }
  });

  it('two players with equal scores in one time unit: ranked by player id, each with their own exact time', async () => {
    const response = await t.gql<{ top: { entries: Served[] } }>(`{ top(board: "${BOARD}", limit: 10) { entries { ${STANDING} } } }`);
    const entries = response.data!.top.entries;
    // bob and eve both have 700 within one 2^26 ms unit: eve (the larger id) ranks first though bob was earlier.
    const tied = entries.filter((e) => e.score === 700);
    expect(tied.map((e) => e.player.id)).toEqual(['eve', 'bob']);
    expect(Date.parse(tied[0]!.achievedAt)).toBeGreaterThan(Date.parse(tied[1]!.achievedAt));
  });

  it('in topChanged, over graphql-ws', async () => {
    const client = createClient({ url: `${t.url.replace('http', 'ws')}/graphql`, webSocketImpl: WebSocket, retryAttempts: 0 });
    try {
      const first = await new Promise<Served[]>((resolve, reject) => {
        const stop = client.subscribe<{ topChanged: { entries: Served[] } }>(
          { query: `subscription { topChanged(board: "${BOARD}", limit: 10) { entries { ${STANDING} } } }` },
          {
            next: (value) => {
              if (value.errors) reject(new Error(JSON.stringify(value.errors)));
              resolve(value.data!.topChanged.entries);
              stop();
            },
            error: reject,
            complete: () => {},
          },
        );
      });
      expectExact(first);
    } finally {
      await client.dispose();
    }
  });

  it('in seasonResults, once the season is closed', async () => {
    expect((await t.admin(`mutation { closeSeason(board: "${BOARD}") { id } }`)).errors).toBeUndefined();
    const response = await t.gql<{ seasonResults: { edges: { node: Served }[] } }>(
      `{ seasonResults(board: "${BOARD}", season: "s1") { edges { node { ${STANDING} } } } }`,
    );
    expectExact(response.data!.seasonResults.edges.map((e) => e.node));
  });

  it('the look-ups of concurrent requests go together: fewer queries than requests, every time exact', async () => {
    const query = `query Mine($board: ID!, $playerId: ID!) { standing(board: $board, playerId: $playerId) { ...Time } }
      fragment Time on Standing { __typename ${STANDING} }`;
    const players = [...oracle().keys()];
    const before = recordedTimeQueries();
    const answers = (
      await sentAtOnce<{ standing: Served }>(
        t.url,
        query,
        Array.from({ length: 20 }, (_, i) => ({ board: BOARD, playerId: players[i % players.length] })),
      )
    ).map((data) => data.standing);
    expectExact(answers);
    expect(recordedTimeQueries() - before).toBeLessThan(answers.length);
  });

  it('reads that do not select achievedAt query nothing for it; one that does, one query, and a shared top view once', async () => {
    const count = async (query: string) => {
      const before = recordedTimeQueries();
      const response = await t.gql(query);
      expect(response.errors).toBeUndefined();
      return recordedTimeQueries() - before;
    };
    expect(await count(`{ top(board: "${BOARD}", limit: 10) { entries { rank score player { id displayName } } } }`)).toBe(0);
    expect(
      await count(`{ standings(board: "${BOARD}", first: 10) { edges { node { rank score } } } around(board: "${BOARD}", playerId: "cyd") { rank } }`),
    ).toBe(0);
    expect(await count(`{ standings(board: "${BOARD}", first: 10) { edges { node { rank achievedAt } } } }`)).toBe(1);
    expect(await count(`{ friends(board: "${BOARD}", playerId: "dee") { rank achievedAt } }`)).toBe(1);
    // Those look-ups asked for the time alone: the metadata column (up to a kilobyte a row) was not read.
    expect(statements.filter((s) => /s\.metadata::text as metadata/.test(s))).toEqual([]);
    // top is served from the shared cache: its view's times were looked up above, and are not again within the view's second.
    const cached = await count(`{ top(board: "${BOARD}", limit: 10) { entries { achievedAt } } }`);
    expect(cached).toBeLessThanOrEqual(1);
    if (cached === 1) expect(await count(`{ top(board: "${BOARD}", limit: 5) { entries { achievedAt } } }`)).toBe(0);
  });
});

/**
 * Where the packing keeps the time to the millisecond (a DAILY, WEEKLY or MONTHLY bucket of a board
 * with scores up to about a million), achievedAt is the index's own time: exact (checked against the
 * times submitted) without a PostgreSQL look-up. ALL_TIME's unit is coarser there, and is looked up.
 */
describe('achievedAt where the index holds the time to the millisecond', () => {
  const NOW = new Date('2037-11-18T12:00:00.000Z');
  const FINE = 'Weekly-Cup';
  const FINE_MAX = 1_000_000;
  // 25 players (more than a long list's prefetch threshold), some sharing a score, each result a few milliseconds apart.
  const players = Array.from({ length: 25 }, (_, i) => ({ playerId: i % 5 === 2 ? `Spieler-Ü${i}` : `p${i}`, score: 1_000 + (i % 8) * 10, at: 0 }));
  let t: TestApp;
  const statements: string[] = [];
  const recordedTimeQueries = () => recordedTimeLookups(statements);

  beforeAll(async () => {
    t = await startTestApp({ now: () => NOW, onQuery: (statement) => statements.push(statement) });
    const created = await t.admin(`mutation($input: CreateBoardInput!) { createBoard(input: $input) { id } }`, {
      input: { id: FINE, title: 'Weekly cup', maxScore: FINE_MAX, periods: ['ALL_TIME', 'DAILY', 'WEEKLY', 'MONTHLY'], regions: ['EU'] },
    });
    expect(created.errors).toBeUndefined();
    for (const [i, p] of players.entries()) p.at = NOW.getTime() - 3_600_000 + 1 + i * 7;
    await submitAt(t, FINE, players, 'w');
  });

  it('the packing keeps milliseconds on DAILY, WEEKLY and MONTHLY here, and not on ALL_TIME', () => {
    for (const period of ['DAILY', 'WEEKLY', 'MONTHLY'] as const) expect(packingFor({ maxScore: FINE_MAX }, period).unitMs).toBe(1);
    expect(packingFor({ maxScore: FINE_MAX }, 'ALL_TIME').unitMs).toBe(128);
  });

  it('serves each exact time from the index on every fine period and region, and looks ALL_TIME up', async () => {
    await t.server(`mutation { setFriends(playerId: "p0", friendIds: ["p1", "Spieler-Ü2", "p3"]) }`);
    const exact = new Map(players.map((p) => [p.playerId, new Date(p.at).toISOString()]));
    for (const period of ['DAILY', 'WEEKLY', 'MONTHLY', 'ALL_TIME']) {
      for (const region of [null, 'EU']) {
        const where = `board: "${FINE}", period: ${period}${region ? `, region: "${region}"` : ''}`;
        const before = recordedTimeQueries();
        const response = await t.gql<EveryRead>(`query Times {
          top(${where}, limit: 3) { entries { ...Time } }
          standing(${where}, playerId: "Spieler-Ü7") { ...Time }
          around(${where}, playerId: "p10", radius: 2) { ...Time }
          friends(${where}, playerId: "p0") { ...Time }
          standings(${where}, first: 50) { edges { node { ...Time } } }
        }
        fragment Time on Standing { ${STANDING} }`);
        expect(response.errors).toBeUndefined();
        const d = response.data!;
        const served = [...d.top.entries, d.standing, ...d.around, ...d.friends, ...d.standings.edges.map((e) => e.node)];
        expect(d.standings.edges.length).toBe(players.length);
        for (const standing of served) expect(standing.achievedAt, `${period} ${standing.player.id}`).toBe(exact.get(standing.player.id));
        const queries = recordedTimeQueries() - before;
        if (period === 'ALL_TIME') expect(queries, period).toBeGreaterThan(0);
        else expect(queries, `${period} ${region}`).toBe(0);
      }
    }
  });
});
