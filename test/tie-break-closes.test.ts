import { afterAll, describe, expect, it } from 'vitest';
import { type BucketCloser, startBucketCloser } from '../src/jobs/bucket-closer.js';
import { movableClock } from './helpers/clock.js';
import { seeded } from './helpers/random.js';
import { type GraphQLResponse, type TestApp, startTestApp } from './helpers/test-app.js';

/**
 * Issue 59: the orders PostgreSQL computes on boards with tie-break columns, against an oracle
 * written here from the results sent (never the service's own output). A closed DAILY bucket
 * (derived from the score log) and a closed season on boards of 2 and 3 columns in mixed
 * directions, a LOW_FIRST board, and a board whose packing keeps the time in the member: the
 * frozen standings page by page, standing, around, history, COMPETITION and DENSE over the whole
 * (score, columns…) tuple, each standing's tieBreakValues, awards bands that share ties only on
 * the whole tuple; and a rebuild of the open DAILY bucket equal to the oracle.
 *
 * The oracle's order: each player's best by the score, then each column in its own direction,
 * then the earlier achievedAt (the first sent within one millisecond); the list by that result,
 * then the index's tie unit (the packing's documented rule: the smallest power-of-two milliseconds
 * for which the bucket's span fits in the 53 bits the score and columns leave; 1 ms, over 2^40 ms,
 * when fewer than 14 are left), then the player id's bytes descending.
 */

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const SPAN = { DAILY: DAY, SEASON: 2 ** 40 } as const;

type Order = 'HIGH_FIRST' | 'LOW_FIRST';
type Style = 'ORDINAL' | 'COMPETITION' | 'DENSE';
interface Column {
  name: string;
  order: Order;
  max: number;
}
interface Spec {
  id: string;
  order: Order;
  maxScore: number;
  tieBreaks: Column[];
  periods: ('DAILY' | 'SEASON')[];
  rankStyle: Style;
  rewards: { name: string; fromRank?: number; toRank?: number; topPercent?: number }[];
  league?: { tiers: string[]; cohortSize: number; promote: number; demote: number; period: 'DAILY' };
}
interface Sent {
  playerId: string;
  score: number;
  values: number[];
  at: number;
  seq: number;
}

const BANDS = [
  { name: 'Podium', fromRank: 1, toRank: 3 },
  { name: 'Next', fromRank: 4, toRank: 6 },
  { name: 'Top 40%', topPercent: 40 },
];

const BOARDS: Spec[] = [
  {
    id: 'tc-two',
    order: 'HIGH_FIRST',
    maxScore: 1_000,
    tieBreaks: [
      { name: 'stars', order: 'HIGH_FIRST', max: 3 },
      { name: 'moves', order: 'LOW_FIRST', max: 500 },
    ],
    periods: ['DAILY', 'SEASON'],
    rankStyle: 'COMPETITION',
    rewards: BANDS,
  },
  {
    id: 'tc-three',
    order: 'HIGH_FIRST',
    maxScore: 1_000,
    tieBreaks: [
      { name: 'a', order: 'LOW_FIRST', max: 7 },
      { name: 'b', order: 'HIGH_FIRST', max: 100 },
      { name: 'c', order: 'LOW_FIRST', max: 1_000 },
    ],
    periods: ['DAILY', 'SEASON'],
    rankStyle: 'DENSE',
    rewards: BANDS,
  },
  {
    id: 'tc-low',
    order: 'LOW_FIRST',
    maxScore: 100_000,
    tieBreaks: [
      { name: 'laps', order: 'HIGH_FIRST', max: 20 },
      { name: 'penalties', order: 'LOW_FIRST', max: 9 },
    ],
    periods: ['DAILY'],
    rankStyle: 'DENSE',
    rewards: BANDS,
  },
  {
    // 31 + 12 + 9 = 52 bits: the time lives in the member, to the millisecond.
    id: 'tc-wide',
    order: 'HIGH_FIRST',
    maxScore: 2 ** 30,
    tieBreaks: [
      { name: 'x', order: 'HIGH_FIRST', max: 2 ** 12 - 1 },
      { name: 'y', order: 'LOW_FIRST', max: 2 ** 9 - 1 },
    ],
    periods: ['DAILY'],
    rankStyle: 'COMPETITION',
    rewards: BANDS,
  },
  {
    // A league round: one cohort of everyone, its top 5 by the tuple promoted.
    id: 'tc-league',
    order: 'HIGH_FIRST',
    maxScore: 1_000,
    tieBreaks: [
      { name: 'stars', order: 'LOW_FIRST', max: 3 },
      { name: 'moves', order: 'HIGH_FIRST', max: 500 },
    ],
    periods: ['DAILY'],
    rankStyle: 'COMPETITION',
    rewards: BANDS,
    league: { tiers: ['Gold', 'Silver'], cohortSize: 1_000, promote: 5, demote: 0, period: 'DAILY' },
  },
];

// ---------------------------------------------------------------------------------------------
// The oracle, shared with nothing in src/.
// ---------------------------------------------------------------------------------------------

/** Negative when result a is better than b: the score in the board's order, then each column in its own. */
function compareTuple(spec: Spec, a: Pick<Sent, 'score' | 'values'>, b: Pick<Sent, 'score' | 'values'>): number {
  if (a.score !== b.score) return (spec.order === 'HIGH_FIRST') === a.score > b.score ? -1 : 1;
  for (const [i, column] of spec.tieBreaks.entries()) {
    if (a.values[i] !== b.values[i]) return (column.order === 'HIGH_FIRST') === a.values[i]! > b.values[i]! ? -1 : 1;
  }
  return 0;
}

const bits = (n: number) => (n === 0 ? 0 : Math.floor(n).toString(2).length);

/** The index's tie unit in ms for a span: 1 when the time is in the member. */
function unitOf(spec: Spec, span: number): { unit: number; slots: number } {
  const timeBits = 53 - bits(spec.maxScore) - spec.tieBreaks.reduce((sum, c) => sum + bits(c.max), 0);
  if (timeBits < 14) return { unit: 1, slots: 2 ** 40 };
  let unit = 1;
  while (unit * 2 ** timeBits < span) unit *= 2;
  return { unit, slots: 2 ** timeBits };
}

/** A list's standings: each player's best result (of those achieved in [from, until)), ranked as the index ranks them. */
function ranked(spec: Spec, sent: readonly Sent[], from: number, until: number, span: number): Sent[] {
  const best = new Map<string, Sent>();
  for (const s of [...sent].sort((a, b) => a.seq - b.seq)) {
    if (s.at < from || s.at >= until) continue;
    const held = best.get(s.playerId);
    if (!held || compareTuple(spec, s, held) < 0 || (compareTuple(spec, s, held) === 0 && s.at < held.at)) best.set(s.playerId, s);
  }
  const { unit, slots } = unitOf(spec, span);
  const tie = (s: Sent) => Math.min(slots - 1, Math.floor((s.at - from) / unit));
  return [...best.values()].sort((a, b) => compareTuple(spec, a, b) || tie(a) - tie(b) || Buffer.compare(Buffer.from(b.playerId), Buffer.from(a.playerId)));
}

/** Each standing's rank in `style`: its place; 1 + the players with a better result; 1 + the distinct better results. */
function styleRanks(spec: Spec, list: readonly Sent[], style: Style): number[] {
  return list.map((s, i) => {
    if (style === 'ORDINAL') return i + 1;
    const better = list.filter((o) => compareTuple(spec, o, s) < 0);
    return 1 + (style === 'COMPETITION' ? better.length : new Set(better.map((o) => `${o.score}:${o.values.join(',')}`)).size);
  });
}

/** The awards of a list: band by band, the players whose style rank is in the band's range, in rank order. */
function expectedAwards(spec: Spec, list: readonly Sent[]): { band: string; playerId: string; rank: number }[] {
  const ranks = styleRanks(spec, list, spec.rankStyle);
  return spec.rewards.flatMap((band) => {
    const [from, to] = band.topPercent !== undefined ? [1, Math.ceil((list.length * band.topPercent) / 100)] : [band.fromRank!, band.toRank!];
    return list.flatMap((s, i) => (ranks[i]! >= from && ranks[i]! <= to ? [{ band: band.name, playerId: s.playerId, rank: ranks[i]! }] : []));
  });
}

// ---------------------------------------------------------------------------------------------
// The results: few scores and few column values (so ties on the score, on some columns, and on
// the whole tuple), a second and third result per player that is better or worse only by a column,
// and equal tuples reached at the same millisecond and a few milliseconds apart.
// ---------------------------------------------------------------------------------------------

// The day played: two days from now (UTC), so the index's keys are kept by Redis's own clock too.
const D = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate() + 2);
const LABEL = new Date(D).toISOString().slice(0, 10);
let seq = 0;

function play(spec: Spec, n: number, seed: number): Sent[] {
  const random = seeded(seed);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)]!;
  const scores = spec.id === 'tc-wide' ? [2 ** 30 - 1, 2 ** 29, 7] : spec.order === 'LOW_FIRST' ? [61_000, 59_500, 70_000] : [900, 800, 500];
  const valuesOf = () => spec.tieBreaks.map((c) => pick([0, c.max, Math.floor(c.max / 2), 1]));
  const sent: Sent[] = [];
  const base = D + HOUR;
  for (let i = 0; i < n; i += 1) {
    const playerId = `p${i}`;
    const first: Sent = { playerId, score: pick(scores), values: valuesOf(), at: base + i * 1_000 + 7, seq: ++seq };
    sent.push(first);
    if (random() < 0.6) {
      // The same score with another column's value: better or worse only by the tuple's tail.
      const values = [...first.values];
      const k = Math.floor(random() * values.length);
      values[k] = pick([0, spec.tieBreaks[k]!.max, 1]);
      sent.push({ playerId, score: first.score, values, at: base + 40 * 1_000 + i * 997, seq: ++seq });
    }
  }
  // Equal tuples: q0 and q1 at the same millisecond (the larger id first), q2 a millisecond later, q3 three before q0.
  const tuple = { score: scores[1]!, values: spec.tieBreaks.map((c) => c.max) };
  const at = base + 90_000;
  for (const [playerId, offset] of [
    ['q0', 0],
    ['q1', 0],
    ['q2', 1],
    ['q3', -3],
  ] as const) {
    sent.push({ playerId, ...tuple, values: [...tuple.values], at: at + offset, seq: ++seq });
  }
  return sent;
}

// ---------------------------------------------------------------------------------------------
// The API.
// ---------------------------------------------------------------------------------------------

const CREATE = `mutation($input: CreateBoardInput!) { createBoard(input: $input) { id } }`;
const SUBMIT = `mutation($inputs: [SubmitScoreInput!]!) { submitScores(inputs: $inputs) { duplicate } }`;
const START = `mutation($board: ID!) { startSeason(board: $board, name: "S") { id startsAt } }`;
const CLOSE = `mutation($board: ID!) { closeSeason(board: $board) { id closedAt } }`;
const REBUILD = `mutation($board: ID!, $bucket: String) { rebuildBoard(board: $board, period: DAILY, bucket: $bucket) }`;
const NODE = `rank score tieBreakValues player { id }`;
const STANDINGS = `query($board: ID!, $bucket: String, $rankStyle: RankStyle, $after: String) {
  standings(board: $board, period: DAILY, bucket: $bucket, first: 7, after: $after, rankStyle: $rankStyle) {
    edges { node { ${NODE} } } pageInfo { hasNextPage endCursor } } }`;
const SEASON_RESULTS = `query($board: ID!, $season: ID!, $rankStyle: RankStyle, $after: String) {
  seasonResults(board: $board, season: $season, first: 7, after: $after, rankStyle: $rankStyle) {
    edges { node { ${NODE} } } pageInfo { hasNextPage endCursor } } }`;
const STANDING = `query($board: ID!, $period: Period!, $bucket: String, $playerId: ID!, $rankStyle: RankStyle) {
  standing(board: $board, period: $period, bucket: $bucket, playerId: $playerId, rankStyle: $rankStyle) { ${NODE} } }`;
const AROUND = `query($board: ID!, $period: Period!, $bucket: String, $playerId: ID!, $rankStyle: RankStyle) {
  around(board: $board, period: $period, bucket: $bucket, playerId: $playerId, radius: 2, rankStyle: $rankStyle) { ${NODE} } }`;
const HISTORY = `query($board: ID!, $playerId: ID!) {
  history(board: $board, period: DAILY, playerId: $playerId) { edges { node { bucket { bucket } standing { ${NODE} } } } } }`;
const AWARDS = `query($board: ID!, $period: Period!, $bucket: String!, $after: String) {
  awards(board: $board, period: $period, bucket: $bucket, first: 5, after: $after) {
    edges { node { band standing { rank player { id } } } } pageInfo { hasNextPage endCursor } } }`;

interface Node {
  rank: number;
  score: number;
  tieBreakValues: number[];
  player: { id: string };
}
type Page = { edges: { node: Node }[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } };

const asNode = (s: Sent, rank: number) => ({ rank, score: s.score, tieBreakValues: s.values, player: { id: s.playerId } });

/** Every node of a paged read, page by page (cursors through runs of equal tuples). */
async function readAll(t: TestApp, query: string, field: string, variables: Record<string, unknown>): Promise<Node[]> {
  const nodes: Node[] = [];
  let after: string | null = null;
  for (let pages = 0; pages < 100; pages += 1) {
    const answer: GraphQLResponse<Record<string, Page>> = await t.gql<Record<string, Page>>(query, { ...variables, after });
    expect(answer.errors, JSON.stringify(answer.errors)).toBeUndefined();
    const page: Page = answer.data![field]!;
    nodes.push(...page.edges.map((edge) => edge.node));
    if (!page.pageInfo.hasNextPage) return nodes;
    after = page.pageInfo.endCursor;
  }
  throw new Error('endless pages');
}

type AwardPage = { awards: { edges: { node: { band: string; standing: { rank: number; player: { id: string } } } }[]; pageInfo: Page['pageInfo'] } };

async function readAwards(t: TestApp, board: string, period: string, bucket: string) {
  const all: { band: string; playerId: string; rank: number }[] = [];
  let after: string | null = null;
  for (let pages = 0; pages < 100; pages += 1) {
    const answer: GraphQLResponse<AwardPage> = await t.gql<AwardPage>(AWARDS, { board, period, bucket, after });
    expect(answer.errors, JSON.stringify(answer.errors)).toBeUndefined();
    const { edges, pageInfo } = answer.data!.awards;
    all.push(...edges.map(({ node }) => ({ band: node.band, playerId: node.standing.player.id, rank: node.standing.rank })));
    if (!pageInfo.hasNextPage) return all;
    after = pageInfo.endCursor;
  }
  throw new Error('endless pages');
}

/** The styles a board may be read in: DENSE only on a board created DENSE. */
const stylesOf = (spec: Spec): Style[] => (spec.rankStyle === 'DENSE' ? ['ORDINAL', 'COMPETITION', 'DENSE'] : ['ORDINAL', 'COMPETITION']);

describe('tie-break columns: the orders of closed buckets, seasons, awards and a rebuild', () => {
  const clock = movableClock({ startsAt: new Date(D + 30 * 60_000) });
  let t: TestApp;
  let closer: BucketCloser;
  const sent = new Map<string, Sent[]>();
  const seasons = new Map<string, { id: string; startsAt: number; closedAt: number }>();

  afterAll(async () => {
    await closer?.stop();
  });

  it('takes a day of results, and a season, on boards of 2 and 3 columns, a LOW_FIRST one and a wide one', async () => {
    t = await startTestApp({ now: clock.now, seasonCloseIntervalMs: null });
    closer = startBucketCloser(t.app.parts, { intervalMs: null, settleMs: 0 });
    for (const [i, spec] of BOARDS.entries()) {
      const { id, order, maxScore, tieBreaks, periods, rankStyle, rewards, league } = spec;
      const input = { id, title: id, order, maxScore, tieBreaks, periods, rankStyle, rewards, closeGraceSeconds: 0, ...(league ? { league } : {}) };
      const created = await t.admin(CREATE, { input });
      expect(created.errors, JSON.stringify(created.errors)).toBeUndefined();
      if (periods.includes('SEASON')) {
        const started = await t.admin<{ startSeason: { id: string; startsAt: string } }>(START, { board: id });
        expect(started.errors).toBeUndefined();
        seasons.set(id, { id: started.data!.startSeason.id, startsAt: Date.parse(started.data!.startSeason.startsAt), closedAt: Infinity });
      }
      sent.set(id, play(spec, 24, 11 + i));
    }
    await t.database.sql`
      insert into webhooks (id, url, events, boards, secret)
      values ('wh_tc', 'https://receiver.invalid/hook', ${['LEAGUE_ROUND_CLOSED']}, ${['tc-league']}, 'whsec_dGVzdHRlc3R0ZXN0dGVzdA==')`;
    clock.advance(D + 2 * HOUR - clock.now().getTime());
    for (const spec of BOARDS) {
      // In the order sent (seq), a batch recording its results in order.
      const inputs = sent.get(spec.id)!.map((s) => ({
        board: spec.id,
        playerId: s.playerId,
        score: s.score,
        tieBreakValues: s.values,
        matchId: `${spec.id}-${s.seq}`,
        achievedAt: new Date(s.at).toISOString(),
      }));
      for (let i = 0; i < inputs.length; i += 100) {
        const answer = await t.server(SUBMIT, { inputs: inputs.slice(i, i + 100) });
        expect(answer.errors, JSON.stringify(answer.errors)).toBeUndefined();
      }
    }
  }, 60_000);

  it('a rebuild of the open DAILY bucket (derived from the log) ranks as the oracle does', async () => {
    for (const spec of BOARDS) {
      const list = ranked(spec, sent.get(spec.id)!, D, D + DAY, SPAN.DAILY);
      const rebuilt = await t.admin<{ rebuildBoard: number }>(REBUILD, { board: spec.id, bucket: LABEL });
      expect(rebuilt.errors, JSON.stringify(rebuilt.errors)).toBeUndefined();
      expect(rebuilt.data!.rebuildBoard).toBe(list.length);
      const read = await readAll(t, STANDINGS, 'standings', { board: spec.id, bucket: LABEL, rankStyle: 'ORDINAL' });
      expect(read, spec.id).toEqual(list.map((s, i) => asNode(s, i + 1)));
    }
  });

  it('closes the seasons: seasonResults in every rank style by the whole tuple, standing and around, awards', async () => {
    clock.advance(60_000);
    for (const spec of BOARDS.filter((b) => b.periods.includes('SEASON'))) {
      const closed = await t.admin<{ closeSeason: { id: string; closedAt: string } }>(CLOSE, { board: spec.id });
      expect(closed.errors, JSON.stringify(closed.errors)).toBeUndefined();
      const season = seasons.get(spec.id)!;
      const list = ranked(spec, sent.get(spec.id)!, season.startsAt, Infinity, SPAN.SEASON);
      for (const rankStyle of stylesOf(spec)) {
        const ranks = styleRanks(spec, list, rankStyle);
        const read = await readAll(t, SEASON_RESULTS, 'seasonResults', { board: spec.id, season: season.id, rankStyle });
        expect(read, `${spec.id} ${rankStyle}`).toEqual(list.map((s, i) => asNode(s, ranks[i]!)));
        if (rankStyle !== 'ORDINAL') await expectPlaces(t, spec, list, ranks, { period: 'SEASON', bucket: season.id, rankStyle });
      }
      expect(await readAwards(t, spec.id, 'SEASON', season.id), spec.id).toEqual(expectedAwards(spec, list));
    }
  });

  it('closes the day: frozen standings in every rank style by the whole tuple, standing, around, history, awards', async () => {
    clock.advance(D + DAY + 1_000 - clock.now().getTime());
    await closer.pass();
    for (const spec of BOARDS) {
      const list = ranked(spec, sent.get(spec.id)!, D, D + DAY, SPAN.DAILY);
      // Ties on the score that the columns break, and ties on the whole tuple that the time (then the id) breaks.
      expect(new Set(list.map((s) => s.score)).size).toBeLessThan(list.length);
      for (const rankStyle of stylesOf(spec)) {
        const ranks = styleRanks(spec, list, rankStyle);
        const read = await readAll(t, STANDINGS, 'standings', { board: spec.id, bucket: LABEL, rankStyle });
        expect(read, `${spec.id} ${rankStyle}`).toEqual(list.map((s, i) => asNode(s, ranks[i]!)));
        if (rankStyle !== 'ORDINAL') await expectPlaces(t, spec, list, ranks, { period: 'DAILY', bucket: LABEL, rankStyle });
      }
      const ranks = styleRanks(spec, list, spec.rankStyle);
      for (const playerId of ['q0', 'p3']) {
        const history = await t.gql<{ history: { edges: { node: { bucket: { bucket: string }; standing: Node } }[] } }>(HISTORY, { board: spec.id, playerId });
        expect(history.errors).toBeUndefined();
        const i = list.findIndex((s) => s.playerId === playerId);
        expect(history.data!.history.edges.map((edge) => edge.node.standing)).toEqual([asNode(list[i]!, ranks[i]!)]);
      }
      const awards = expectedAwards(spec, list);
      // Bands shared on equal tuples only: the equal q0..q3 all in one band or none.
      expect(awards.length).toBeGreaterThan(0);
      expect(await readAwards(t, spec.id, 'DAILY', LABEL), spec.id).toEqual(awards);
    }
  });

  it('the league round: the top of the cohort by the whole tuple promoted; LEAGUE_ROUND_CLOSED ranks by it', async () => {
    const spec = BOARDS.find((b) => b.league)!;
    const list = ranked(spec, sent.get(spec.id)!, D, D + DAY, SPAN.DAILY);
    const outcomes = await t.database.sql<{ player_id: string; outcome: string }[]>`
      select player_id, outcome from cohort_members where board_id = ${spec.id} and round = ${LABEL}`;
    const promoted = outcomes.filter((row) => row.outcome === 'PROMOTED').map((row) => row.player_id);
    expect(promoted.sort()).toEqual(
      list
        .slice(0, 5)
        .map((s) => s.playerId)
        .sort(),
    );
    expect(outcomes).toHaveLength(list.length);
    const [event] = await t.database.sql<{ data: { outcomes: { playerId: string; rank: number }[] } }[]>`
      select data from webhook_events where board_id = ${spec.id} and type = 'LEAGUE_ROUND_CLOSED'`;
    const ranks = styleRanks(spec, list, 'COMPETITION');
    expect(event!.data.outcomes.map((o) => [o.playerId, o.rank])).toEqual(list.map((s, i) => [s.playerId, ranks[i]]));
    // The closed cohort as read (its frozen places): COMPETITION within the cohort by the tuple, with the values.
    const cohort = await t.gql<{ cohort: { closed: boolean; entries: Node[] } }>(
      `query($b: ID!, $k: String) { cohort(board: $b, tier: "Silver", number: 1, bucket: $k) { closed entries { ${NODE} } } }`,
      { b: spec.id, k: LABEL },
    );
    expect(cohort.errors, JSON.stringify(cohort.errors)).toBeUndefined();
    expect(cohort.data!.cohort).toEqual({ closed: true, entries: list.map((s, i) => asNode(s, ranks[i]!)) });
  });

  it('the equal tuples, frozen: the earlier first, then the larger player id at one millisecond (to the ms where the time is in the member)', async () => {
    for (const spec of BOARDS.filter((b) => unitOf(b, SPAN.DAILY).unit === 1)) {
      const read = await readAll(t, STANDINGS, 'standings', { board: spec.id, bucket: LABEL, rankStyle: 'ORDINAL' });
      expect(
        read.map((node) => node.player.id).filter((id) => id.startsWith('q')),
        spec.id,
      ).toEqual(['q3', 'q1', 'q0', 'q2']);
    }
  });
});

/** standing and around for every player of a closed list, against the oracle's ranks. */
async function expectPlaces(
  t: TestApp,
  spec: Spec,
  list: readonly Sent[],
  ranks: readonly number[],
  at: { period: 'DAILY' | 'SEASON'; bucket: string; rankStyle: Style },
): Promise<void> {
  for (const [i, s] of list.entries()) {
    if (i % 4 !== 0 && !s.playerId.startsWith('q')) continue;
    const one = await t.gql<{ standing: Node }>(STANDING, { board: spec.id, ...at, playerId: s.playerId });
    expect(one.errors, JSON.stringify(one.errors)).toBeUndefined();
    expect(one.data!.standing, `${spec.id} ${at.period} ${at.rankStyle} ${s.playerId}`).toEqual(asNode(s, ranks[i]!));
    const around = await t.gql<{ around: Node[] }>(AROUND, { board: spec.id, ...at, playerId: s.playerId });
    expect(around.errors).toBeUndefined();
    const from = Math.max(0, i - 2);
    expect(around.data!.around, `${spec.id} around ${s.playerId}`).toEqual(list.slice(from, i + 3).map((o, k) => asNode(o, ranks[from + k]!)));
  }
}
