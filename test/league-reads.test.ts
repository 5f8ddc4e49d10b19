import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { closeBuckets } from './helpers/closed-days.js';
import { movableClock } from './helpers/clock.js';
import { type OracleEntry, type OracleResult, bucketId, foldResults, rankEntries } from './helpers/oracle.js';
import { seeded } from './helpers/random.js';
import { type RedisClusterFixture, startRedisCluster } from './helpers/redis-cluster.js';
import { type TestApp, codeOf, startTestApp } from './helpers/test-app.js';

/**
 * The league reads (issue 57): Query.league, Query.cohort and Query.leagueTiers rank each cohort
 * within itself, against an oracle written here from what the test sent: who is in which cohort
 * (first come first served, cohorts of five, in arrival order), each cohort's visible players
 * (flagged ones hidden, erased ones gone) ranked by the board's order (score, then the earlier
 * time, then the player id, as helpers/oracle.ts ranks a board), their ranks in the board's style
 * (ORDINAL, COMPETITION, DENSE) and percentiles counted within the cohort, the zones over the
 * visible players, and each player's outcome; while the round is open where a close now would take
 * them, once closed (the closer's own freeze: helpers/closed-days.ts) what its close recorded.
 * Then a second round, placed by the tiers the first one's close left. On 1 and 8 shards, and on
 * a Redis Cluster.
 */

const TIERS = ['Gold', 'Silver', 'Bronze'];
const LEAGUE = { tiers: TIERS, cohortSize: 5, promote: 2, demote: 1, period: 'DAILY' };
// A date to come (2037 has 2026's calendar): the app sets Redis expiries from its clock.
const ROUND_1 = '2037-05-31';
const ROUND_2 = '2037-06-01';
const START = new Date('2037-05-31T13:00:00.000Z');
const AFTER_CLOSE = new Date('2037-06-01T00:10:00.000Z');
const HOUR_MS = 3_600_000;

type Style = 'ORDINAL' | 'COMPETITION' | 'DENSE';
type Outcome = 'PROMOTED' | 'STAYED' | 'DEMOTED';

interface Spec {
  id: string;
  order: 'HIGH_FIRST' | 'LOW_FIRST';
  aggregate: 'BEST' | 'SUM';
  rankStyle: Style;
  shards: number;
}

/** The players, as studios name them: mixed case, a region-like id, unicode; most without profiles. */
const PLAYERS = [...Array.from({ length: 18 }, (_, i) => `Pl${String(i).padStart(2, '0')}`), 'EU', 'Zoë', '選手', '🎲dice', 'x'];
const NAMED: Record<string, string> = { Pl03: 'Ace', 選手: '選手さん' };
const FLAGGED = 'Pl04';
const ERASED = 'Pl07';

interface Sent extends OracleResult {
  board: string;
  matchId: string;
}

/** A score as the board takes it: BEST boards tie on multiples of 10, SUM boards on small parts. */
const scoreOf = (spec: Spec, next: ReturnType<typeof seeded>) => (spec.aggregate === 'SUM' ? next.int(0, 3) : 10 * next.int(0, 5));

// ---- the oracle ----------------------------------------------------------------------------

interface Row {
  rank: number;
  score: number;
  percentile: number;
  achievedAt: string;
  player: { id: string; displayName: string | null };
}

interface CohortAnswer {
  bucket: string;
  tier: string;
  number: number;
  entries: Row[];
  promotedThrough: number;
  demotedFrom: number | null;
  closed: boolean;
  endsAt: string | null;
}

interface Expected {
  cohorts: CohortAnswer[];
  /** Each placed player's cohort (tier, number) and outcome. */
  placed: Map<string, { tier: string; number: number; outcome: Outcome }>;
}

/** Ranks of ordered entries in a style, counted among them only. */
function ranksOf(ordered: readonly { score: number }[], style: Style): number[] {
  let distinct = 0;
  return ordered.map((entry, i) => {
    const first = ordered.findIndex((other) => other.score === entry.score);
    if (first === i) distinct++;
    return style === 'ORDINAL' ? i + 1 : style === 'COMPETITION' ? first + 1 : distinct;
  });
}

/** What the test expects of a round: its cohorts (tier index → arrival order of its players), each ranked within itself. */
function expectRound(
  spec: Spec,
  round: string,
  members: Map<number, string[]>,
  sent: readonly Sent[],
  closed: boolean,
  endsAt: string,
  flagged: ReadonlySet<string>,
): Expected {
  const board = { id: spec.id, order: spec.order, aggregate: spec.aggregate, periods: ['DAILY'] };
  const folded = foldResults(
    board,
    sent.filter((r) => r.board === spec.id),
  );
  const scores = folded.get(bucketId('DAILY', round, null)) ?? new Map<string, OracleEntry>();
  const cohorts: CohortAnswer[] = [];
  const placed = new Map<string, { tier: string; number: number; outcome: Outcome }>();
  for (const [tier, arrivals] of [...members].sort((a, b) => a[0] - b[0])) {
    for (let start = 0, number = 1; start < arrivals.length; start += LEAGUE.cohortSize, number++) {
      const cohort = arrivals.slice(start, start + LEAGUE.cohortSize).filter((id) => id !== ERASED);
      const visible = rankEntries(
        board,
        cohort.filter((id) => !flagged.has(id)).map((id) => scores.get(id)!),
      );
      const n = visible.length;
      const ranks = ranksOf(visible, spec.rankStyle);
      const promotedThrough = tier === 0 ? 0 : Math.min(LEAGUE.promote, n);
      const demotedFrom = tier === TIERS.length - 1 || n <= LEAGUE.promote + LEAGUE.demote ? null : n - LEAGUE.demote + 1;
      visible.forEach((entry, i) => {
        const outcome: Outcome = i + 1 <= promotedThrough ? 'PROMOTED' : demotedFrom !== null && i + 1 >= demotedFrom ? 'DEMOTED' : 'STAYED';
        placed.set(entry.playerId, { tier: TIERS[tier]!, number, outcome });
      });
      for (const id of cohort.filter((member) => flagged.has(member))) placed.set(id, { tier: TIERS[tier]!, number, outcome: 'STAYED' });
      cohorts.push({
        bucket: round,
        tier: TIERS[tier]!,
        number,
        entries: visible.map((entry, i) => ({
          rank: ranks[i]!,
          score: entry.score,
          percentile: (100 * (n - ranks[i]!)) / n,
          achievedAt: new Date(entry.reachedAt).toISOString(),
          player: { id: entry.playerId, displayName: NAMED[entry.playerId] ?? null },
        })),
        promotedThrough,
        demotedFrom,
        closed,
        endsAt,
      });
    }
  }
  return { cohorts, placed };
}

// ---- the API -------------------------------------------------------------------------------

const COHORT = `bucket tier number promotedThrough demotedFrom closed endsAt entries { rank score percentile achievedAt player { id displayName } }`;

async function submitInOrder(t: TestApp, results: readonly Sent[]): Promise<void> {
  // One call at a time: their arrival order is the order sent.
  for (const r of results) {
    const answer = await t.server(`mutation($inputs: [SubmitScoreInput!]!) { submitScores(inputs: $inputs) { duplicate } }`, {
      inputs: [{ board: r.board, playerId: r.playerId, matchId: r.matchId, score: r.score, achievedAt: r.achievedAt.toISOString() }],
    });
    expect(answer.errors, `${r.board} ${r.playerId} ${r.matchId}`).toBeUndefined();
  }
}

async function submitBatch(t: TestApp, results: readonly Sent[]): Promise<void> {
  for (let i = 0; i < results.length; i += 100) {
    const inputs = results
      .slice(i, i + 100)
      .map((r) => ({ board: r.board, playerId: r.playerId, matchId: r.matchId, score: r.score, achievedAt: r.achievedAt.toISOString() }));
    const answer = await t.server(`mutation($inputs: [SubmitScoreInput!]!) { submitScores(inputs: $inputs) { duplicate } }`, { inputs });
    expect(answer.errors).toBeUndefined();
  }
}

/** Every read of a round against what the oracle expects: each cohort, each player's placement, the tiers. */
async function checkRound(t: TestApp, spec: Spec, bucket: string | null, expected: Expected, everyone: readonly string[], tierOf: (id: string) => string) {
  const what = `${spec.id} ${bucket ?? 'open'}`;
  for (const cohort of expected.cohorts) {
    const answer = await t.gql<{ cohort: CohortAnswer }>(
      `query($b: ID!, $t: String!, $n: Int!, $k: String) { cohort(board: $b, tier: $t, number: $n, bucket: $k) { ${COHORT} } }`,
      {
        b: spec.id,
        t: cohort.tier,
        n: cohort.number,
        k: bucket,
      },
    );
    expect(answer.errors, what).toBeUndefined();
    expect(answer.data!.cohort, `${what} ${cohort.tier}/${cohort.number}`).toEqual(cohort);
  }
  const byKey = new Map(expected.cohorts.map((cohort) => [`${cohort.tier}/${cohort.number}`, cohort]));
  for (const id of everyone) {
    const answer = await t.gql<{
      league: { tier: string; outcome: Outcome | null; standing: Row | null; cohort: CohortAnswer | null };
    }>(
      `query($b: ID!, $p: ID!, $k: String) { league(board: $b, playerId: $p, bucket: $k) { tier outcome standing { rank score percentile achievedAt } cohort { ${COHORT} } } }`,
      {
        b: spec.id,
        p: id,
        k: bucket,
      },
    );
    expect(answer.errors, `${what} ${id}`).toBeUndefined();
    const place = expected.placed.get(id);
    const cohort = place ? byKey.get(`${place.tier}/${place.number}`)! : null;
    expect(answer.data!.league, `${what} league ${id}`).toEqual({
      tier: place?.tier ?? tierOf(id),
      outcome: place?.outcome ?? null,
      // The standing without its player (the cohort's entries ask for theirs): each part names what it selects.
      standing: ((row) => (row ? { rank: row.rank, score: row.score, percentile: row.percentile, achievedAt: row.achievedAt } : null))(
        cohort?.entries.find((row) => row.player.id === id),
      ),
      cohort,
    });
  }
  const tiers = await t.gql<{ leagueTiers: { tier: string; cohorts: number; players: number }[] }>(
    `query($b: ID!, $k: String) { leagueTiers(board: $b, bucket: $k) { tier cohorts players } }`,
    { b: spec.id, k: bucket },
  );
  expect(tiers.errors, what).toBeUndefined();
  expect(tiers.data!.leagueTiers, `${what} tiers`).toEqual(
    TIERS.map((tier) => {
      const mine = expected.cohorts.filter((cohort) => cohort.tier === tier);
      return { tier, cohorts: mine.length, players: mine.reduce((sum, cohort) => sum + cohort.entries.length, 0) };
    }),
  );
}

/** Creates the league boards and the players' profiles. */
async function seedBoards(t: TestApp, specs: readonly Spec[]): Promise<void> {
  for (const spec of specs) {
    const created = await t.admin(`mutation($input: CreateBoardInput!) { createBoard(input: $input) { id } }`, {
      input: {
        id: spec.id,
        title: spec.id,
        order: spec.order,
        aggregate: spec.aggregate,
        rankStyle: spec.rankStyle,
        shards: spec.shards,
        maxScore: 1_000,
        periods: ['ALL_TIME', 'DAILY'],
        league: LEAGUE,
      },
    });
    expect(created.errors, spec.id).toBeUndefined();
  }
  for (const [id, displayName] of Object.entries(NAMED)) {
    expect((await t.server(`mutation($input: PlayerInput!) { upsertPlayer(input: $input) { id } }`, { input: { id, displayName } })).errors).toBeUndefined();
  }
}

/**
 * The scenario on one deployment: a first round (arrivals, then more results with ties, a flag
 * and an erasure) read open, then closed; then a second round placed by the moved tiers, read open.
 */
async function scenario(t: TestApp, clock: ReturnType<typeof movableClock>, specs: readonly Spec[], seed: number): Promise<void> {
  await seedBoards(t, specs);
  const next = seeded(seed);
  const arrival = [...PLAYERS].sort(() => next.int(0, 2) - 1);
  const sent: Sent[] = [];
  let match = 0;
  const dayStart = new Date(`${ROUND_1}T00:00:00.000Z`);
  /** A result of `playerId` on every board, achieved within `spanMs` of `from`. */
  const resultsOf = (playerId: string, from: Date, spanMs: number): Sent[] =>
    specs.map((spec) => ({
      board: spec.id,
      playerId,
      matchId: `m${match++}`,
      score: scoreOf(spec, next),
      region: null,
      achievedAt: new Date(from.getTime() + next.int(0, spanMs)),
    }));
  // First results, one at a time in arrival order on every board: each places its player.
  const firsts = arrival.flatMap((playerId) => resultsOf(playerId, dayStart, 12 * HOUR_MS));
  await submitInOrder(t, firsts);
  const more = Array.from({ length: 60 }, () => resultsOf(next.pick(PLAYERS), dayStart, 12 * HOUR_MS)).flat();
  await submitBatch(t, more);
  sent.push(...firsts, ...more);
  expect((await t.admin(`mutation { flagPlayer(playerId: "${FLAGGED}", reason: "test") { id } }`)).errors).toBeUndefined();
  expect((await t.admin(`mutation { deletePlayer(playerId: "${ERASED}") }`)).errors).toBeUndefined();
  const kept = sent.filter((r) => r.playerId !== ERASED);

  const round1 = new Map([[TIERS.length - 1, arrival]]);
  const everyone = [...PLAYERS, 'nobody'];
  const newcomer = () => TIERS.at(-1)!;
  for (const spec of specs) {
    const open = expectRound(spec, ROUND_1, round1, kept, false, `${ROUND_2}T00:00:00.000Z`, new Set([FLAGGED]));
    await checkRound(t, spec, null, open, everyone, newcomer);
  }

  // The round closes: its end plus the grace has passed, and the closer freezes it (and closes the league round).
  clock.advance(AFTER_CLOSE.getTime() - clock.now().getTime());
  const tierAfter = new Map<string, Map<string, number>>();
  const closedRound1 = new Map<string, ReturnType<typeof expectRound>>();
  for (const spec of specs) {
    await closeBuckets(t, spec.id, 'DAILY', [ROUND_1]);
    const closed = expectRound(spec, ROUND_1, round1, kept, true, `${ROUND_2}T00:00:00.000Z`, new Set([FLAGGED]));
    closedRound1.set(spec.id, closed);
    await checkRound(t, spec, ROUND_1, closed, everyone, newcomer);
    const moved = new Map<string, number>();
    for (const [id, place] of closed.placed) {
      const from = TIERS.indexOf(place.tier);
      moved.set(id, place.outcome === 'PROMOTED' ? from - 1 : place.outcome === 'DEMOTED' ? from + 1 : from);
    }
    tierAfter.set(spec.id, moved);
  }

  // A second round: everyone still playing comes back, in a new order; each is placed in the tier the close left them in.
  const returning = PLAYERS.filter((id) => id !== ERASED && id !== FLAGGED).sort(() => next.int(0, 2) - 1);
  const round2Start = new Date(`${ROUND_2}T00:00:00.000Z`);
  const seconds = returning.flatMap((playerId) => resultsOf(playerId, round2Start, 9 * 60_000));
  await submitInOrder(t, seconds);
  const all = [...kept, ...seconds];
  // A player promoted on the first board is flagged in the second round: hidden there, and the zones count the others.
  const promoted = returning.find((id) => tierAfter.get(specs[0]!.id)!.get(id) === 1)!;
  expect((await t.admin(`mutation($p: ID!) { flagPlayer(playerId: $p, reason: "test") { id } }`, { p: promoted })).errors).toBeUndefined();
  const flagged2 = new Set([FLAGGED, promoted]);
  // A flag set after a round closed leaves that round as it was: its cohorts and its tiers' counts still show the player.
  for (const spec of specs) await checkRound(t, spec, ROUND_1, closedRound1.get(spec.id)!, [promoted, 'nobody'], newcomer);
  for (const spec of specs) {
    const moved = tierAfter.get(spec.id)!;
    const byTier = new Map<number, string[]>();
    for (const id of returning) byTier.set(moved.get(id)!, [...(byTier.get(moved.get(id)!) ?? []), id]);
    expect(byTier.size, `${spec.id}: the close moved someone up`).toBeGreaterThan(1);
    const open = expectRound(spec, ROUND_2, byTier, all, false, '2037-06-02T00:00:00.000Z', flagged2);
    // Not placed this round: the tier their next placement uses (the flagged player kept theirs).
    const tierOf = (id: string) => TIERS[moved.get(id) ?? TIERS.length - 1]!;
    await checkRound(t, spec, null, open, everyone, tierOf);
    await checkRound(t, spec, ROUND_2, open, ['nobody', returning[0]!], tierOf);
  }

  // A closed round's outcome is the one its close recorded, not worked out again.
  const [spec] = specs;
  const someone = returning.find((id) => id !== promoted);
  await t.database.sql`update cohort_members set outcome = 'DEMOTED' where board_id = ${spec!.id} and round = ${ROUND_1} and player_id = ${someone!}`;
  const recorded = await t.gql<{ league: { outcome: Outcome } }>(
    `query($b: ID!, $p: ID!) { league(board: $b, playerId: $p, bucket: "${ROUND_1}") { outcome } }`,
    {
      b: spec!.id,
      p: someone,
    },
  );
  expect(recorded.data?.league.outcome).toBe('DEMOTED');
}

const SPECS: Spec[] = [
  { id: 'ord-1', order: 'HIGH_FIRST', aggregate: 'BEST', rankStyle: 'ORDINAL', shards: 1 },
  { id: 'Comp-8', order: 'HIGH_FIRST', aggregate: 'BEST', rankStyle: 'COMPETITION', shards: 8 },
  { id: 'dense-1', order: 'LOW_FIRST', aggregate: 'SUM', rankStyle: 'DENSE', shards: 1 },
  { id: 'dense-8', order: 'LOW_FIRST', aggregate: 'SUM', rankStyle: 'DENSE', shards: 8 },
];

describe('league reads on one node', () => {
  let t: TestApp;
  const clock = movableClock({ startsAt: START });
  beforeAll(async () => {
    t = await startTestApp({ now: clock.now, seasonCloseIntervalMs: null });
  });
  afterAll(() => t?.close());

  it('ranks each cohort within itself, open and closed, on 1 and 8 shards', { timeout: 240_000 }, async () => {
    await scenario(t, clock, SPECS, 57);
  });

  it('refuses what names no round, cohort or league', async () => {
    expect(
      (
        await t.admin(
          `mutation { createBoard(input: { id: "plain", title: "plain", order: HIGH_FIRST, aggregate: BEST, maxScore: 100, periods: [ALL_TIME, DAILY] }) { id } }`,
        )
      ).errors,
    ).toBeUndefined();
    const ask = async (query: string) => codeOf(await t.gql(query));
    expect(await ask(`{ league(board: "plain", playerId: "p") { tier } }`)).toBe('BAD_USER_INPUT');
    expect(await ask(`{ leagueTiers(board: "plain") { tier } }`)).toBe('BAD_USER_INPUT');
    expect(await ask(`{ cohort(board: "plain", tier: "Gold", number: 1) { tier } }`)).toBe('BAD_USER_INPUT');
    expect(await ask(`{ league(board: "no-such-board", playerId: "p") { tier } }`)).toBe('NOT_FOUND');
    expect(await ask(`{ league(board: "ord-1", playerId: "p", bucket: "2037-W22") { tier } }`)).toBe('BAD_USER_INPUT');
    expect(await ask(`{ league(board: "ord-1", playerId: "p", bucket: "yesterday") { tier } }`)).toBe('BAD_USER_INPUT');
    expect(await ask(`{ leagueTiers(board: "ord-1", bucket: "2036-01-01") { tier } }`)).toBe('NOT_FOUND');
    expect(await ask(`{ cohort(board: "ord-1", tier: "Platinum", number: 1) { tier } }`)).toBe('BAD_USER_INPUT');
    expect(await ask(`{ cohort(board: "ord-1", tier: "Bronze", number: 0) { tier } }`)).toBe('BAD_USER_INPUT');
    expect(await ask(`{ league(board: "ord-1", playerId: "") { tier } }`)).toBe('BAD_USER_INPUT');
    const none = await t.gql<{ a: unknown; b: unknown }>(
      `{ a: cohort(board: "ord-1", tier: "Bronze", number: 99) { tier } b: cohort(board: "ord-1", tier: "gold", number: 1) { tier } }`,
    );
    expect(none.errors).toBeUndefined();
    expect(none.data).toEqual({ a: null, b: null });
  });
});

describe('league reads on a Redis Cluster', () => {
  let cluster: RedisClusterFixture;
  let t: TestApp;
  const clock = movableClock({ startsAt: START });
  beforeAll(async () => {
    cluster = await startRedisCluster({ masters: 3, replicasPerMaster: 0 });
    t = await startTestApp({ now: clock.now, seasonCloseIntervalMs: null, redisCluster: cluster });
  }, 120_000);
  afterAll(async () => {
    await t?.close();
    await cluster?.stop();
  });

  it('ranks each cohort within itself, open and closed', { timeout: 240_000 }, async () => {
    await scenario(t, clock, [SPECS[1]!, SPECS[2]!], 58);
  });
});
