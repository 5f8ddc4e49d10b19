import { describe, expect, it } from 'vitest';
import { type BucketCloser, startBucketCloser } from '../src/jobs/bucket-closer.js';
import { submit } from './helpers/bucket-history.js';
import { movableClock } from './helpers/clock.js';
import { seeded } from './helpers/random.js';
import { until } from './helpers/wait.js';
import { type TestApp, startTestApp } from './helpers/test-app.js';

/**
 * A league round's close (issue 57): outcomes, tier moves and the waiting players' placements,
 * each against a plain model of the rules written here (never the service's own output): rounds of
 * a DAILY league in Europe/Berlin across the change to summer time (a 23-hour round), with ties,
 * flagged players, the first and last tiers and small cohorts; the close run twice; a close whose
 * backend is terminated mid-way; a SEASON round closed by closeSeason; a rebuild of the index; and
 * the retention of closed rounds. Results go through the API. The clocks are injected, and the
 * closers are the test's own (no settle margin), run when a test asks.
 */

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const MINUTE = 60_000;
const GRACE_S = 120;

const CREATE = `mutation($input: CreateBoardInput!) { createBoard(input: $input) { id } }`;
const FLAG = `mutation($p: ID!) { flagPlayer(playerId: $p, reason: "test") { id } }`;
const REBUILD = `mutation($board: ID!, $period: Period!, $bucket: String) { rebuildBoard(board: $board, period: $period, bucket: $bucket) }`;

type Outcome = 'PROMOTED' | 'STAYED' | 'DEMOTED';

interface LeagueSpec {
  tiers: string[];
  cohortSize: number;
  promote: number;
  demote: number;
}

interface Played {
  playerId: string;
  score: number;
  at: number;
}

// ---------------------------------------------------------------------------------------------
// The oracle: a league as the issue words it, shared with nothing in src/.
// ---------------------------------------------------------------------------------------------

/** Rank order of a HIGH_FIRST BEST board, ORDINAL: the better score, the earlier time it was reached, then the larger player id in UTF-8 bytes (Redis's REV order of equal values). */
function ranked(results: readonly Played[]): Played[] {
  const best = new Map<string, Played>();
  for (const r of results) {
    const old = best.get(r.playerId);
    if (!old || r.score > old.score || (r.score === old.score && r.at < old.at)) best.set(r.playerId, r);
  }
  return [...best.values()].sort((a, b) => b.score - a.score || a.at - b.at || Buffer.compare(Buffer.from(b.playerId), Buffer.from(a.playerId)));
}

/** One cohort as the oracle has it. */
interface OracleCohort {
  tier: number;
  number: number;
  members: string[];
}

class OracleLeague {
  readonly tierOf = new Map<string, number>();
  /** Per round: its cohorts in the order they opened. */
  readonly rounds = new Map<string, OracleCohort[]>();
  readonly outcomes = new Map<string, Map<string, Outcome>>();
  constructor(readonly spec: LeagueSpec) {}

  private lastTier = () => this.spec.tiers.length - 1;

  /** Places players in arrival order, each with their tier now. */
  place(round: string, players: readonly string[]): void {
    const cohorts = this.rounds.get(round) ?? [];
    this.rounds.set(round, cohorts);
    for (const playerId of players) {
      if (cohorts.some((c) => c.members.includes(playerId))) continue;
      const tier = this.tierOf.get(playerId) ?? this.lastTier();
      this.tierOf.set(playerId, tier);
      const ofTier = cohorts.filter((c) => c.tier === tier);
      let open = ofTier.at(-1);
      if (!open || open.members.length >= this.spec.cohortSize) {
        open = { tier, number: ofTier.length + 1, members: [] };
        cohorts.push(open);
      }
      open.members.push(playerId);
    }
  }

  /** Closes a round: visible members ranked by their results in it, zones over the visible ones. */
  close(round: string, results: readonly Played[], flagged: ReadonlySet<string>): void {
    const outcomes = new Map<string, Outcome>();
    const order = ranked(results).map((r) => r.playerId);
    for (const cohort of this.rounds.get(round) ?? []) {
      const visible = order.filter((p) => cohort.members.includes(p) && !flagged.has(p));
      const v = visible.length;
      const promoted = cohort.tier === 0 ? 0 : Math.min(this.spec.promote, v);
      const demoting = cohort.tier !== this.lastTier() && this.spec.demote > 0 && v > this.spec.promote + this.spec.demote;
      for (const p of cohort.members) outcomes.set(p, 'STAYED');
      visible.forEach((p, i) => {
        const place = i + 1;
        if (place <= promoted) outcomes.set(p, 'PROMOTED');
        else if (demoting && place > v - this.spec.demote) outcomes.set(p, 'DEMOTED');
      });
      for (const p of cohort.members) {
        const o = outcomes.get(p)!;
        this.tierOf.set(p, cohort.tier + (o === 'PROMOTED' ? -1 : o === 'DEMOTED' ? 1 : 0));
      }
    }
    this.outcomes.set(round, outcomes);
  }

  /** The round as the service's tables should show it: `tier/number player outcome` lines, sorted. */
  rows(round: string, closed: boolean): string[] {
    return (this.rounds.get(round) ?? [])
      .flatMap((c) => c.members.map((p) => `${c.tier}/${c.number} ${p} ${closed ? this.outcomes.get(round)!.get(p) : '-'}`))
      .sort();
  }
}

// ---------------------------------------------------------------------------------------------
// What the service recorded, read from PostgreSQL.
// ---------------------------------------------------------------------------------------------

async function memberRows(t: TestApp, board: string, round: string): Promise<string[]> {
  const rows = await t.database.sql<{ tier: number; number: number; player_id: string; outcome: string | null }[]>`
    select tier, number, player_id, outcome from cohort_members where board_id = ${board} and round = ${round}`;
  return rows.map((r) => `${r.tier}/${r.number} ${r.player_id} ${r.outcome ?? '-'}`).sort();
}

async function tiersOf(t: TestApp, board: string): Promise<Map<string, number>> {
  const rows = await t.database.sql<{ player_id: string; tier: number }[]>`select player_id, tier from league_players where board_id = ${board}`;
  return new Map(rows.map((r) => [r.player_id, r.tier]));
}

async function closedRounds(t: TestApp, board: string): Promise<string[]> {
  const rows = await t.database.sql<{ round: string }[]>`select round from league_rounds where board_id = ${board} order by round`;
  return rows.map((r) => r.round);
}

/** Everything of a board's league in PostgreSQL, for comparing before and after. */
async function leagueTables(t: TestApp, board: string) {
  const sql = t.database.sql;
  return {
    members: await sql`select round, tier, number, player_id, outcome from cohort_members where board_id = ${board} order by round, player_id`,
    cohorts: await sql`select round, tier, number, size from league_cohorts where board_id = ${board} order by round, tier, number`,
    players: await sql`select player_id, tier, last_round from league_players where board_id = ${board} order by player_id`,
    rounds: await sql<{ round: string; closed_at: Date }[]>`select round, closed_at from league_rounds where board_id = ${board} order by round`,
    waiting: await sql`select round, player_id from league_waiting where board_id = ${board} order by round, player_id`,
  };
}

/** The oracle's tiers of the players it knows. */
const expectTiers = async (t: TestApp, board: string, oracle: OracleLeague) => {
  const tiers = await tiersOf(t, board);
  expect(Object.fromEntries([...oracle.tierOf].map(([p]) => [p, tiers.get(p)]))).toEqual(Object.fromEntries(oracle.tierOf));
};

const closerOf = (t: TestApp): BucketCloser => startBucketCloser(t.app.parts, { intervalMs: null, settleMs: 0 });

async function createLeagueBoard(t: TestApp, id: string, league: LeagueSpec & { period: string }, extra: Record<string, unknown> = {}) {
  const answer = await t.admin(CREATE, {
    input: { id, title: id, maxScore: 1_000_000, periods: ['ALL_TIME', league.period], closeGraceSeconds: GRACE_S, league, ...extra },
  });
  expect(answer.errors).toBeUndefined();
}

/** Moves a movable clock to an instant. */
const setClock = (clock: ReturnType<typeof movableClock>, at: number) => clock.advance(at - clock.now().getTime());

// ---------------------------------------------------------------------------------------------

// Europe/Berlin moves to summer time at 01:00 UTC on Sunday 29 March 2037: that day has 23 hours.
// A date to come: the app sets Redis expiries from its clock.
const SAT = Date.parse('2037-03-27T23:00:00Z'); // 2037-03-28 00:00 CET
const SUN = Date.parse('2037-03-28T23:00:00Z'); // 2037-03-29 00:00 CET
const MON = Date.parse('2037-03-29T22:00:00Z'); // 2037-03-30 00:00 CEST
const TUE = Date.parse('2037-03-30T22:00:00Z'); // 2037-03-31 00:00 CEST
const DAYS = { SAT: '2037-03-28', SUN: '2037-03-29', MON: '2037-03-30', TUE: '2037-03-31' };

/** The players: plain ids, mixed case, `EU`, unicode, none with a profile. */
const PLAYERS = ['EU', 'ana', 'Ana', 'Zoë', '選手', '🎲dice', ...Array.from({ length: 32 }, (_, i) => `p${String(i).padStart(2, '0')}`)];

/**
 * A round's results: each player's first result in arrival order (a shuffle), then more results;
 * scores from a few values and times from a few instants, so ties of score and of time are many.
 */
function roundResults(random: ReturnType<typeof seeded>, players: readonly string[], base: number): { arrivals: string[]; results: Played[] } {
  const arrivals = [...players].sort(() => random() - 0.5);
  const instants = [base, base + MINUTE, base + 2 * MINUTE];
  const results: Played[] = arrivals.map((playerId) => ({ playerId, score: random.pick([100, 200, 300, 400]), at: random.pick(instants) }));
  for (let i = 0; i < players.length; i += 1) {
    results.push({ playerId: random.pick(arrivals), score: random.pick([100, 200, 300, 400, 500]), at: random.pick(instants) + HOUR });
  }
  return { arrivals, results };
}

const toSubmit = (board: string, results: readonly Played[]) =>
  results.map((r) => ({ board, playerId: r.playerId, score: r.score, achievedAt: new Date(r.at) }));

describe('a DAILY league in Europe/Berlin, across the change to summer time', () => {
  const SPEC: LeagueSpec = { tiers: ['Gold', 'Silver', 'Bronze'], cohortSize: 6, promote: 2, demote: 2 };
  const BOARD = 'Liga-EU';

  it('closes each round at its end in the zone: outcomes, tiers and the next placements as the rules say', async () => {
    const random = seeded(57);
    const clock = movableClock({ startsAt: new Date(SAT + 12 * HOUR) });
    const t = await startTestApp({ now: clock.now, seasonCloseIntervalMs: null });
    await createLeagueBoard(t, BOARD, { ...SPEC, period: 'DAILY' }, { timeZone: 'Europe/Berlin' });
    const closer = closerOf(t);
    const oracle = new OracleLeague(SPEC);
    const flagged = new Set<string>();
    const played = new Map<string, Played[]>();
    const covered = { flaggedInZone: 0, smallCohort: 0, firstTierDemoted: 0, promotedFromSmall: 0 };

    // Round 1 (Saturday): everyone new, in the last tier.
    const sat = roundResults(random, PLAYERS, SAT + 10 * HOUR);
    await submit(t, toSubmit(BOARD, sat.results));
    played.set(DAYS.SAT, sat.results);
    oracle.place(DAYS.SAT, sat.arrivals);
    expect(await memberRows(t, BOARD, DAYS.SAT)).toEqual(oracle.rows(DAYS.SAT, false));
    // Two flagged in the promotion zone of cohort 1: the next visible players take their places.
    const top1 = ranked(sat.results).filter((r) => oracle.rounds.get(DAYS.SAT)![0]!.members.includes(r.playerId));
    for (const p of [top1[0]!.playerId, top1[1]!.playerId]) {
      expect((await t.admin(FLAG, { p })).errors).toBeUndefined();
      flagged.add(p);
    }
    covered.flaggedInZone += 2;

    // Sunday, 30 s after Saturday ended, inside the grace: the first arrivals of Sunday wait.
    setClock(clock, SUN + 30_000);
    const active = () => PLAYERS.filter((p) => !flagged.has(p));
    const sun = roundResults(random, active(), SUN + 10_000);
    const early = sun.arrivals.slice(0, 5);
    const earlyResults = sun.results.filter((r) => early.includes(r.playerId) && r.at < SUN + HOUR);
    await submit(t, toSubmit(BOARD, earlyResults));
    expect(await memberRows(t, BOARD, DAYS.SUN)).toEqual([]);
    expect(await closedRounds(t, BOARD)).not.toContain(DAYS.SAT);

    // Still inside the grace: nothing closes.
    setClock(clock, SUN + GRACE_S * 1000 - 5_000);
    await closer.pass();
    expect(await closedRounds(t, BOARD)).not.toContain(DAYS.SAT);
    // Past it: Saturday closes, and the waiting players go into Sunday's cohorts with their new tiers.
    setClock(clock, SUN + GRACE_S * 1000 + 5_000);
    await closer.pass();
    oracle.close(DAYS.SAT, sat.results, flagged);
    oracle.place(DAYS.SUN, early);
    expect(await memberRows(t, BOARD, DAYS.SAT)).toEqual(oracle.rows(DAYS.SAT, true));
    expect(await closedRounds(t, BOARD)).toContain(DAYS.SAT);
    await expectTiers(t, BOARD, oracle);
    expect(await memberRows(t, BOARD, DAYS.SUN)).toEqual(oracle.rows(DAYS.SUN, false));
    const satCohorts = oracle.rounds.get(DAYS.SAT)!;
    covered.promotedFromSmall += satCohorts.filter((c) => c.members.length <= SPEC.promote + SPEC.demote).length;

    // The rest of Sunday (a 23-hour day in Berlin): placed at once with the tiers Saturday gave them.
    setClock(clock, SUN + 12 * HOUR);
    const rest = sun.arrivals.slice(5);
    await submit(
      t,
      toSubmit(
        BOARD,
        [...sun.results.filter((r) => !earlyResults.includes(r))].sort((a, b) => order(sun.arrivals, a, b)),
      ),
    );
    oracle.place(DAYS.SUN, rest);
    played.set(DAYS.SUN, sun.results);
    expect(await memberRows(t, BOARD, DAYS.SUN)).toEqual(oracle.rows(DAYS.SUN, false));
    // Two Silver players of a full cohort flagged on Sunday: hidden, the zones over the other four,
    // no more than promote + demote, so none of them goes down.
    const silver = oracle.rounds.get(DAYS.SUN)!.find((c) => c.tier === 1 && c.members.length === SPEC.cohortSize)!;
    for (const p of silver.members.slice(1, 3)) {
      expect((await t.admin(FLAG, { p })).errors).toBeUndefined();
      flagged.add(p);
    }

    // Sunday ends at 22:00 UTC (midnight CEST), not at 23:00: a calendar of whole UTC-offset days would miss it.
    setClock(clock, MON + GRACE_S * 1000 - 5_000);
    await closer.pass();
    expect(await closedRounds(t, BOARD)).not.toContain(DAYS.SUN);
    setClock(clock, MON + GRACE_S * 1000 + 5_000);
    await closer.pass();
    oracle.close(DAYS.SUN, sun.results, flagged);
    expect(await memberRows(t, BOARD, DAYS.SUN)).toEqual(oracle.rows(DAYS.SUN, true));
    await expectTiers(t, BOARD, oracle);

    // Monday: Gold has players now (no promotion from the first tier, demotion out of it).
    setClock(clock, MON + 12 * HOUR);
    const mon = roundResults(random, active(), MON + 9 * HOUR);
    await submit(
      t,
      toSubmit(
        BOARD,
        [...mon.results].sort((a, b) => order(mon.arrivals, a, b)),
      ),
    );
    oracle.place(DAYS.MON, mon.arrivals);
    played.set(DAYS.MON, mon.results);
    expect(await memberRows(t, BOARD, DAYS.MON)).toEqual(oracle.rows(DAYS.MON, false));
    setClock(clock, TUE + GRACE_S * 1000 + 5_000);
    await closer.pass();
    oracle.close(DAYS.MON, mon.results, flagged);
    expect(await memberRows(t, BOARD, DAYS.MON)).toEqual(oracle.rows(DAYS.MON, true));
    await expectTiers(t, BOARD, oracle);

    // What the rounds covered: a cohort of the middle tier too small to demote, demotions out of Gold.
    for (const round of [DAYS.SUN, DAYS.MON]) {
      for (const c of oracle.rounds.get(round)!) {
        const visible = c.members.filter((p) => !flagged.has(p)).length;
        if (c.tier === 1 && visible === SPEC.promote + SPEC.demote) covered.smallCohort += 1;
        if (c.tier === 0) covered.firstTierDemoted += c.members.filter((p) => oracle.outcomes.get(round)!.get(p) === 'DEMOTED').length;
      }
    }
    expect(covered.flaggedInZone).toBeGreaterThan(0);
    expect(covered.promotedFromSmall).toBeGreaterThan(0);
    expect(covered.smallCohort).toBeGreaterThan(0);
    expect(covered.firstTierDemoted).toBeGreaterThan(0);

    // The close run twice: another pass and another close of each round change nothing.
    const before = await leagueTables(t, BOARD);
    await closer.pass();
    for (const [label, end] of [
      [DAYS.SAT, SUN],
      [DAYS.SUN, MON],
      [DAYS.MON, TUE],
    ] as const) {
      const board = (await t.app.parts.boards.find(BOARD))!;
      expect(
        await t.app.parts.storage.leagueRounds.close({ board: { ...board, league: board.league! }, round: label, endsAt: new Date(end) }, clock.now()),
      ).toBeNull();
    }
    expect(await leagueTables(t, BOARD)).toEqual(before);

    // Tuesday's open round, then the index lost and rebuilt: every cohort as it was.
    setClock(clock, TUE + 12 * HOUR);
    const tue = roundResults(random, active().slice(0, 9), TUE + 9 * HOUR);
    await submit(
      t,
      toSubmit(
        BOARD,
        [...tue.results].sort((a, b) => order(tue.arrivals, a, b)),
      ),
    );
    oracle.place(DAYS.TUE, tue.arrivals);
    expect(await memberRows(t, BOARD, DAYS.TUE)).toEqual(oracle.rows(DAYS.TUE, false));
    const built = await leagueTables(t, BOARD);
    for (const [period, bucket] of [
      ['ALL_TIME', null],
      ['DAILY', DAYS.TUE],
    ] as const) {
      expect((await t.admin(REBUILD, { board: BOARD, period, bucket })).errors).toBeUndefined();
    }
    await closer.pass();
    expect(await leagueTables(t, BOARD)).toEqual(built);

    // Past the DAILY retention (7 days) of Saturday: its cohorts go, its close stays recorded.
    setClock(clock, SUN + 7 * DAY + HOUR);
    await closer.pass();
    expect(await memberRows(t, BOARD, DAYS.SAT)).toEqual([]);
    expect(await memberRows(t, BOARD, DAYS.MON)).toEqual(oracle.rows(DAYS.MON, true));
    expect(await closedRounds(t, BOARD)).toContain(DAYS.SAT);
    await closer.stop();
  });
});

/** The first player a close of `round` promotes, by a copy of the oracle closed ahead. */
function promotedOf(oracle: OracleLeague, round: string, results: readonly Played[]): string {
  const ahead = new OracleLeague(oracle.spec);
  for (const [r, cohorts] of oracle.rounds)
    ahead.rounds.set(
      r,
      cohorts.map((c) => ({ ...c, members: [...c.members] })),
    );
  ahead.close(round, results, new Set());
  return [...ahead.outcomes.get(round)!].find(([, o]) => o === 'PROMOTED')![0];
}

/** Results in arrival order: each player's first result where the player arrives. */
function order(arrivals: readonly string[], a: Played, b: Played): number {
  return arrivals.indexOf(a.playerId) - arrivals.indexOf(b.playerId) || a.at - b.at;
}

describe('a close crashed mid-way', () => {
  it('leaves nothing half-written when its backend is terminated, and the next pass closes the round once', async () => {
    const SPEC: LeagueSpec = { tiers: ['A', 'B'], cohortSize: 5, promote: 1, demote: 1 };
    const D = Date.parse('2037-06-10T00:00:00Z');
    const clock = movableClock({ startsAt: new Date(D + 12 * HOUR) });
    const t = await startTestApp({ now: clock.now, seasonCloseIntervalMs: null });
    await createLeagueBoard(t, 'crash', { ...SPEC, period: 'DAILY' });
    const random = seeded(5);
    const day = roundResults(random, PLAYERS.slice(0, 13), D + 10 * HOUR);
    await submit(
      t,
      toSubmit(
        'crash',
        [...day.results].sort((a, b) => order(day.arrivals, a, b)),
      ),
    );
    const oracle = new OracleLeague(SPEC);
    oracle.place('2037-06-10', day.arrivals);
    setClock(clock, D + DAY + GRACE_S * 1000 + 5_000);
    const closer = closerOf(t);
    const before = await leagueTables(t, 'crash');
    // A row lock the test holds on a player the close promotes stops the close at its tier moves,
    // after its claim and its outcomes (the closes of the empty days before go through).
    const holder = await t.database.sql.reserve();
    await holder`begin`;
    await holder`select 1 from league_players where board_id = 'crash' and player_id = ${promotedOf(oracle, '2037-06-10', day.results)} for update`;
    // The pass closes the round right after its freeze, and again at its end (a round frozen but
    // not closed): each attempt's backend is terminated while it waits, until the pass is over.
    let passed = false;
    const pass = closer.pass().finally(() => (passed = true));
    let terminated = 0;
    await until(
      async () => {
        const [found] = await t.database.sql<{ pid: number }[]>`
          select pid from pg_stat_activity where datname = current_database() and query ilike '%update league_players%' and wait_event_type = 'Lock'`;
        if (found) terminated += (await t.database.sql<{ done: boolean }[]>`select pg_terminate_backend(${found.pid}) as done`)[0]!.done ? 1 : 0;
        return passed;
      },
      30_000,
      'the pass over',
      50,
    );
    await pass;
    await holder`rollback`;
    holder.release();
    expect(terminated).toBeGreaterThan(0);
    // The round's list is frozen, its close is not: no claim, no outcome, no tier moved, no cohort changed.
    expect((await t.database.sql`select count(*)::int as n from frozen_buckets where board_id = 'crash' and bucket = '2037-06-10'`)[0]!.n).toBe(1);
    const { rounds: roundsAfter, ...after } = await leagueTables(t, 'crash');
    const { rounds: _, ...unchanged } = before;
    expect(after).toEqual(unchanged);
    expect(roundsAfter.map((r) => r.round)).not.toContain('2037-06-10');
    await closer.pass();
    oracle.close('2037-06-10', day.results, new Set());
    expect(await memberRows(t, 'crash', '2037-06-10')).toEqual(oracle.rows('2037-06-10', true));
    await expectTiers(t, 'crash', oracle);
    expect(await closedRounds(t, 'crash')).toContain('2037-06-10');
    await closer.stop();
  });
});

describe('a SEASON league', () => {
  it('closes its round when closeSeason closes the season, and the next season places players with their new tiers', async () => {
    const SPEC: LeagueSpec = { tiers: ['Diamond', 'Gold', 'Silver', 'Bronze'], cohortSize: 5, promote: 1, demote: 1 };
    const clock = movableClock({ startsAt: new Date('2037-09-01T10:00:00Z') });
    const t = await startTestApp({ now: clock.now, seasonCloseIntervalMs: null });
    await createLeagueBoard(t, 'Saison', { ...SPEC, period: 'SEASON' });
    const start = await t.admin<{ startSeason: { id: string } }>(`mutation { startSeason(board: "Saison", name: "S1") { id } }`);
    expect(start.errors).toBeUndefined();
    const s1 = start.data!.startSeason.id;
    const random = seeded(9);
    clock.advance(MINUTE);
    const one = roundResults(random, PLAYERS.slice(0, 12), clock.now().getTime() - 30_000);
    one.results.forEach((r) => (r.at = Math.min(r.at, clock.now().getTime() - 1_000)));
    await submit(
      t,
      toSubmit(
        'Saison',
        [...one.results].sort((a, b) => order(one.arrivals, a, b)),
      ),
    );
    const oracle = new OracleLeague(SPEC);
    oracle.place(s1, one.arrivals);
    expect(await memberRows(t, 'Saison', s1)).toEqual(oracle.rows(s1, false));
    clock.advance(MINUTE);
    expect((await t.admin(`mutation { closeSeason(board: "Saison") { id } }`)).errors).toBeUndefined();
    // At once, with no closer pass.
    oracle.close(s1, one.results, new Set());
    expect(await memberRows(t, 'Saison', s1)).toEqual(oracle.rows(s1, true));
    await expectTiers(t, 'Saison', oracle);
    const start2 = await t.admin<{ startSeason: { id: string } }>(`mutation { startSeason(board: "Saison", name: "S2") { id } }`);
    expect(start2.errors).toBeUndefined();
    const s2 = start2.data!.startSeason.id;
    clock.advance(MINUTE);
    const two = roundResults(random, PLAYERS.slice(0, 12), clock.now().getTime() - 30_000);
    two.results.forEach((r) => (r.at = Math.min(r.at, clock.now().getTime() - 1_000)));
    await submit(
      t,
      toSubmit(
        'Saison',
        [...two.results].sort((a, b) => order(two.arrivals, a, b)),
      ),
    );
    oracle.place(s2, two.arrivals);
    expect(await memberRows(t, 'Saison', s2)).toEqual(oracle.rows(s2, false));
    expect(new Set(oracle.rounds.get(s2)!.map((c) => c.tier)).size).toBeGreaterThan(1);
  });
});
