import { beforeAll, describe, expect, it } from 'vitest';
import { type GraphQLResponse, SERVER_KEY, type TestApp, startTestApp } from './helpers/test-app.js';
import { sentAtOnce } from './helpers/at-once.js';
import { observations } from './helpers/metrics.js';

/**
 * A season starts when startSeason answers, in every API process, and a next season can be
 * scheduled ahead, flipped by the clock. Two apps on one database and Redis prefix are two API
 * processes of one deployment.
 */

const CREATE = `mutation($input: CreateBoardInput!) { createBoard(input: $input) { id } }`;
const START = `mutation($board: ID!, $name: String!, $startsAt: DateTime, $endsAt: DateTime) {
  startSeason(board: $board, name: $name, startsAt: $startsAt, endsAt: $endsAt) { id startsAt endsAt closedAt } }`;
const CLOSE = `mutation($board: ID!) { closeSeason(board: $board) { id } }`;
const CURRENT = `query($id: ID!) { board(id: $id) { currentSeason { id } seasons { id closedAt } } }`;
const SUBMIT = `mutation($input: SubmitScoreInput!) { submitScore(input: $input) { standings { period bucket region standing { rank score } } } }`;
const SEASON_PAGE = `query($board: ID!, $bucket: String) { standings(board: $board, period: SEASON, bucket: $bucket, first: 100) { edges { node { score player { id } } } } }`;
const FROZEN = `query($board: ID!, $season: ID!) { seasonResults(board: $board, season: $season) { edges { node { rank score player { id } } } } }`;

interface Season {
  id: string;
  startsAt: string;
  endsAt: string | null;
  closedAt: string | null;
}
type Submitted = GraphQLResponse<{ submitScore: { standings: { period: string; bucket: string; region: string | null }[] } }>;

const codeOf = (response: GraphQLResponse) => response.errors?.[0]?.extensions?.code;
const seasonOf = (response: Submitted) => response.data?.submitScore.standings.find((s) => s.period === 'SEASON' && s.region === null)?.bucket ?? null;
const playersIn = async (t: TestApp, board: string, bucket?: string) =>
  (await t.gql<{ standings: { edges: { node: { player: { id: string } } }[] } }>(SEASON_PAGE, { board, bucket })).data?.standings.edges
    .map((e) => e.node.player.id)
    .sort();

describe('a season starts when startSeason answers, in every process', () => {
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    a = await startTestApp({ seasonCloseIntervalMs: 3_600_000 });
    b = await startTestApp({ seasonCloseIntervalMs: 3_600_000, shareStoresOf: a });
  });

  it('a result sent to another process right after the answer is in the season, with achievedAt at startsAt or left out', async () => {
    const board = 'openNow';
    await a.admin(CREATE, { input: { id: board, title: board, maxScore: 1_000, periods: ['ALL_TIME', 'SEASON'] } });
    // Process b looks the board's seasons up first (none), as a busy process would have.
    expect((await b.gql(CURRENT, { id: board })).data).toEqual({ board: { currentSeason: null, seasons: [] } });
    expect(seasonOf(await b.server(SUBMIT, { input: { board, playerId: 'before', score: 1, matchId: 'm0' } }))).toBeNull();

    const started = await a.admin<{ startSeason: Season }>(START, { board, name: 'Now' });
    expect(started.errors).toBeUndefined();
    const season = started.data!.startSeason;
    // The game server opens the season, then lets matches report, at once, to any process.
    const [leftOut, atStart] = await Promise.all([
      b.server(SUBMIT, { input: { board, playerId: 'right-after', score: 5, matchId: 'm1' } }) as Promise<Submitted>,
      b.server(SUBMIT, { input: { board, playerId: 'at-start', score: 7, matchId: 'm2', achievedAt: season.startsAt } }) as Promise<Submitted>,
    ]);
    expect(seasonOf(leftOut)).toBe(season.id);
    expect(seasonOf(atStart)).toBe(season.id);
    expect((await b.gql(CURRENT, { id: board })).data).toMatchObject({ board: { currentSeason: { id: season.id } } });
    for (const t of [a, b]) expect(await playersIn(t, board)).toEqual(['at-start', 'right-after']);
    // One a millisecond before startsAt is not.
    const before = await b.server(SUBMIT, {
      input: { board, playerId: 'just-before', score: 9, matchId: 'm3', achievedAt: new Date(Date.parse(season.startsAt) - 1).toISOString() },
    });
    expect(seasonOf(before as Submitted)).toBeNull();

    // And a close is seen by the other process at once too: the next result there goes in no season.
    expect((await a.admin(CLOSE, { board })).errors).toBeUndefined();
    expect(seasonOf(await b.server(SUBMIT, { input: { board, playerId: 'after-close', score: 3, matchId: 'm4' } }))).toBeNull();
    expect(
      (await b.gql<{ seasonResults: { edges: { node: { player: { id: string } } }[] } }>(FROZEN, { board, season: season.id })).data?.seasonResults.edges.map(
        (e) => e.node.player.id,
      ),
    ).toEqual(['at-start', 'right-after']);
  });
});

describe('a burst of submissions to a season board', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ seasonCloseIntervalMs: 3_600_000 });
  });

  it('shares its season look-ups (fewer token reads than submissions), and every result sent after startSeason answered is in the season', async () => {
    const board = 'Burst-EU';
    await t.admin(CREATE, { input: { id: board, title: board, maxScore: 1_000, periods: ['ALL_TIME', 'SEASON'] } });
    const started = await t.admin<{ startSeason: Season }>(START, { board, name: 'Burst' });
    expect(started.errors).toBeUndefined();
    const players = Array.from({ length: 30 }, (_, i) => `Spieler-${i}-ß`);
    const tokenReads = () => observations(t, 'leaderboard_store_seconds', { store: 'redis', call: 'hmget' });
    const before = await tokenReads();
    // All sent at once on one socket (30: within the 32 operations a socket may have running,
    // DEFAULT_REQUEST_LIMITS.operationsPerSocket), as a busy game server's arrive. Sent as HTTP requests of their own, a loaded machine (CI's) could deliver
    // them one by one, with nothing to share.
    const answers = await sentAtOnce<NonNullable<Submitted['data']>>(
      t.url,
      SUBMIT,
      players.map((playerId, i) => ({ input: { board, playerId, score: i + 1, matchId: `burst-${i}` } })),
      SERVER_KEY,
    );
    // Each submission's season look-up read the token once before; the flag check reads it once a group.
    expect((await tokenReads()) - before).toBeLessThan(players.length);
    for (const data of answers) expect(seasonOf({ data })).toBe(started.data!.startSeason.id);
    expect(await playersIn(t, board)).toEqual([...players].sort());
  });
});

describe('a next season scheduled ahead with startsAt', () => {
  let a: TestApp;
  let b: TestApp;
  // Whole seconds, a date to come: Redis expiries are set from this clock.
  const T0 = Math.floor(Date.now() / 1000) * 1000;
  let clock = new Date(T0);
  const at = (minutes: number) => new Date(T0 + minutes * 60_000).toISOString();
  const board = 'scheduled';

  beforeAll(async () => {
    a = await startTestApp({ now: () => clock, seasonCloseIntervalMs: 3_600_000 });
    b = await startTestApp({ now: () => clock, seasonCloseIntervalMs: 3_600_000, shareStoresOf: a });
    await a.admin(CREATE, { input: { id: board, title: board, maxScore: 1_000, periods: ['ALL_TIME', 'SEASON'] } });
  });

  it('is refused in the past, overlapping a season not closed, or ending before it starts', async () => {
    const s1 = await a.admin<{ startSeason: Season }>(START, { board, name: 'One', endsAt: at(10) });
    expect(s1.data?.startSeason).toEqual({ id: 's1', startsAt: at(0), endsAt: at(10), closedAt: null });
    for (const [startsAt, endsAt, says] of [
      [new Date(T0 - 1).toISOString(), null, 'in the past'],
      [at(5), at(15), 'overlaps'],
      [at(-5), at(5), 'in the past'],
      [at(9), null, 'overlaps'],
      [at(12), at(11), 'must be after'],
      [null, null, 'overlaps'],
    ] as const) {
      const answer = await a.admin(START, { board, name: 'Two', startsAt, endsAt });
      expect(codeOf(answer), `${startsAt} to ${endsAt}`).toBe('BAD_USER_INPUT');
      expect(answer.errors?.[0]?.message).toContain(says);
    }
    const s2 = await a.admin<{ startSeason: Season }>(START, { board, name: 'Two', startsAt: at(10), endsAt: at(20) });
    expect(s2.data?.startSeason).toEqual({ id: 's2', startsAt: at(10), endsAt: at(20), closedAt: null });
    // An open-ended third after it; nothing can follow an open-ended season.
    expect((await a.admin(START, { board, name: 'Three', startsAt: at(20) })).errors).toBeUndefined();
    expect(codeOf(await a.admin(START, { board, name: 'Four', startsAt: at(600) }))).toBe('BAD_USER_INPUT');
    expect((await b.gql(CURRENT, { id: board })).data).toEqual({
      board: {
        currentSeason: { id: 's1' },
        seasons: [
          { id: 's1', closedAt: null },
          { id: 's2', closedAt: null },
          { id: 's3', closedAt: null },
        ],
      },
    });
  });

  it('flips at its startsAt by the clock, without an operator, in every process; the season closer then closes the one before', async () => {
    expect(seasonOf(await b.server(SUBMIT, { input: { board, playerId: 'early', score: 10, matchId: 'e1' } }))).toBe('s1');
    clock = new Date(at(10));
    expect(seasonOf(await b.server(SUBMIT, { input: { board, playerId: 'late', score: 20, matchId: 'l1' } }))).toBe('s2');
    expect(
      seasonOf(
        await a.server(SUBMIT, {
          input: { board, playerId: 'last-of-one', score: 30, matchId: 'x1', achievedAt: new Date(T0 + 10 * 60_000 - 1).toISOString() },
        }),
      ),
    ).toBe('s1');
    for (const t of [a, b]) {
      expect((await t.gql(CURRENT, { id: board })).data).toMatchObject({ board: { currentSeason: { id: 's2' } } });
      expect(await playersIn(t, board)).toEqual(['late']);
      expect(await playersIn(t, board, 's1')).toEqual(['early', 'last-of-one']);
    }
    // The closer, which runs in every process, closes s1 once its endsAt plus the board's grace (300 s)
    // plus the settle margin (the test apps' request bound, 30 s, plus 5 s) have passed; s2 and s3 stay.
    clock = new Date(T0 + 10 * 60_000 + 300_000 + 35_000);
    const closer = await startTestApp({ now: () => clock, seasonCloseIntervalMs: 50, shareStoresOf: a });
    try {
      await expect
        .poll(async () => (await a.gql<{ board: { seasons: Season[] } }>(CURRENT, { id: board })).data?.board.seasons.map((s) => s.closedAt !== null), {
          timeout: 10_000,
        })
        .toEqual([true, false, false]);
    } finally {
      await closer.close();
    }
    expect(
      (await b.gql<{ seasonResults: { edges: { node: { player: { id: string } } }[] } }>(FROZEN, { board, season: 's1' })).data?.seasonResults.edges.map(
        (e) => e.node.player.id,
      ),
    ).toEqual(['last-of-one', 'early']);
    // closeSeason closes the current season, never the one scheduled after it.
    expect((await b.admin<{ closeSeason: { id: string } }>(CLOSE, { board })).data?.closeSeason.id).toBe('s2');
    expect((await a.gql(CURRENT, { id: board })).data).toMatchObject({ board: { currentSeason: null } });
    clock = new Date(at(20));
    expect((await a.gql(CURRENT, { id: board })).data).toMatchObject({ board: { currentSeason: { id: 's3' } } });
  });
});
