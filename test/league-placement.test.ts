import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { bucketAt } from '../src/model/buckets.js';
import { type TestApp, startTestApp } from './helpers/test-app.js';
import { appWithDatabase } from './helpers/app-with-database.js';
import { startTwoProcesses } from './helpers/two-processes.js';
import { movableClock } from './helpers/clock.js';

/**
 * League placement (issue 57): a player's first result of a round puts them in the first cohort of
 * their tier with room, in arrival order; never more than cohortSize in a cohort, never a player
 * twice, across processes; a replay places no one; a player whose previous round is open waits.
 * Checked against an oracle written here: cohorts filled in arrival order, tier by tier.
 */

const TIERS = ['Gold', 'Silver', 'Bronze'];
const LAST = TIERS.length - 1;

const SUBMIT = 'mutation($inputs: [SubmitScoreInput!]!) { submitScores(inputs: $inputs) { duplicate } }';

async function createLeagueBoard(app: TestApp, id: string, cohortSize: number): Promise<void> {
  const created = await app.admin('mutation($input: CreateBoardInput!) { createBoard(input: $input) { id } }', {
    input: { id, title: id, maxScore: 1e9, periods: ['ALL_TIME', 'WEEKLY'], league: { tiers: TIERS, cohortSize, promote: 1, demote: 1, period: 'WEEKLY' } },
  });
  expect(created.errors).toBeUndefined();
}

/** The round now: this week's bucket on the global calendar (the boards are on UTC). */
const roundNow = () => bucketAt({ epoch: new Date(0) }, 'WEEKLY', new Date());

interface Member {
  player_id: string;
  tier: number;
  number: number;
}

/** The oracle: each tier's players, in arrival order, fill cohorts 1, 2, ... of `size`. */
function oracleCohorts(arrivals: { playerId: string; tier: number }[], size: number): Map<string, { tier: number; number: number }> {
  const perTier = new Map<number, number>();
  const placed = new Map<string, { tier: number; number: number }>();
  for (const { playerId, tier } of arrivals) {
    if (placed.has(playerId)) continue;
    const k = perTier.get(tier) ?? 0;
    perTier.set(tier, k + 1);
    placed.set(playerId, { tier, number: Math.floor(k / size) + 1 });
  }
  return placed;
}

describe('league placement', () => {
  const started = appWithDatabase();
  const app = () => started.app();
  const sql = () => started.sql();

  const members = async (board: string, round: string) =>
    sql()<Member[]>`select player_id, tier, number from cohort_members where board_id = ${board} and round = ${round} order by player_id`;

  it('places each first result of a round in arrival order, tier by tier, 5 to a cohort', async () => {
    const board = 'League-Order';
    await createLeagueBoard(app(), board, 5);
    const round = roundNow().label;
    // Players with a tier from an earlier, closed round (studios' ids: mixed case, unicode).
    const seeded = new Map<string, number>();
    for (let i = 0; i < 13; i += 1) seeded.set(`Gold-Ü${i}`, 0);
    for (let i = 0; i < 7; i += 1) seeded.set(`silver_EU_${i}`, 1);
    await sql()`insert into league_rounds (board_id, round, closed_at) values (${board}, '2020-W01', now())`;
    for (const [playerId, tier] of seeded)
      await sql()`insert into league_players (board_id, player_id, tier, last_round, last_round_ends_at) values (${board}, ${playerId}, ${tier}, '2020-W01', '2020-01-06T00:00:00Z')`;
    const newcomers = Array.from({ length: 17 }, (_, i) => `new-${String(i).padStart(2, '0')}-玩家`);
    // Arrival: a deterministic shuffle of everyone, some players twice (their second result places no one).
    const everyone = [...seeded.keys(), ...newcomers];
    const arrivals: string[] = [];
    for (let i = 0; i < everyone.length; i += 1) arrivals.push(everyone[(i * 7) % everyone.length]!);
    arrivals.splice(10, 0, arrivals[3]!, arrivals[4]!);
    let match = 0;
    // One call at a time, some carrying several players (a batch is placed in its order).
    for (let i = 0; i < arrivals.length;) {
      const take = i % 3 === 0 ? 3 : 1;
      const inputs = arrivals.slice(i, i + take).map((playerId) => ({ board, playerId, score: 100 + (match % 17), matchId: `m${(match += 1)}` }));
      const answer = await app().server(SUBMIT, { inputs });
      expect(answer.errors).toBeUndefined();
      i += take;
    }
    const expected = oracleCohorts(
      arrivals.map((playerId) => ({ playerId, tier: seeded.get(playerId) ?? LAST })),
      5,
    );
    const found = await members(board, round);
    expect(found).toHaveLength(expected.size);
    for (const member of found)
      expect({ player: member.player_id, tier: member.tier, number: member.number }).toEqual({ player: member.player_id, ...expected.get(member.player_id) });
    // Each cohort's size as kept is its count of members.
    const sizes = await sql()<{ tier: number; number: number; size: number; counted: number }[]>`
      select c.tier, c.number, c.size, (select count(*)::int from cohort_members m where (m.board_id, m.round, m.tier, m.number) = (c.board_id, c.round, c.tier, c.number)) as counted
      from league_cohorts c where c.board_id = ${board} and c.round = ${round}`;
    for (const cohort of sizes) expect(cohort.size).toBe(cohort.counted);
    // A newcomer's tier is now recorded (the last), with this round as their last.
    const [newcomer] = await sql()<
      { tier: number; last_round: string }[]
    >`select tier, last_round from league_players where board_id = ${board} and player_id = ${newcomers[0]!}`;
    expect(newcomer).toEqual({ tier: LAST, last_round: round });
  });

  it('a replayed result places no one', async () => {
    const board = 'League-Replay';
    await createLeagueBoard(app(), board, 5);
    const round = roundNow().label;
    const first = await app().server(SUBMIT, { inputs: [{ board, playerId: 'Replayed', score: 5, matchId: 'once' }] });
    expect(first.errors).toBeUndefined();
    expect((await members(board, round)).map((m) => m.player_id)).toEqual(['Replayed']);
    // Take the place away (as if it had never been made): the replay must not make it.
    await sql()`delete from cohort_members where board_id = ${board}`;
    await sql()`delete from league_waiting where board_id = ${board}`;
    const replay = await app().server<{ submitScores: { duplicate: boolean }[] }>(SUBMIT, {
      inputs: [{ board, playerId: 'Replayed', score: 5, matchId: 'once' }],
    });
    expect(replay.data?.submitScores).toEqual([{ duplicate: true }]);
    expect(await members(board, round)).toEqual([]);
    // A new result does.
    await app().server(SUBMIT, { inputs: [{ board, playerId: 'Replayed', score: 6, matchId: 'twice' }] });
    expect((await members(board, round)).map((m) => m.player_id)).toEqual(['Replayed']);
  });

  it('a player whose previous round is not closed yet waits, and is not placed', async () => {
    const board = 'League-Wait';
    await createLeagueBoard(app(), board, 5);
    const round = roundNow();
    // Their last round ended at this one's start and has no league_rounds row: not closed.
    await sql()`insert into league_players (board_id, player_id, tier, last_round, last_round_ends_at) values (${board}, 'Waiter', 1, 'previous', ${round.start})`;
    // Closed: this one is placed.
    await sql()`insert into league_players (board_id, player_id, tier, last_round, last_round_ends_at) values (${board}, 'Ready', 1, 'earlier', ${round.start})`;
    await sql()`insert into league_rounds (board_id, round, closed_at) values (${board}, 'earlier', now())`;
    const answer = await app().server(SUBMIT, {
      inputs: [
        { board, playerId: 'Waiter', score: 1, matchId: 'w1' },
        { board, playerId: 'Ready', score: 1, matchId: 'r1' },
      ],
    });
    expect(answer.errors).toBeUndefined();
    expect(await members(board, round.label)).toEqual([{ player_id: 'Ready', tier: 1, number: 1 }]);
    expect(await sql()`select player_id from league_waiting where board_id = ${board} and round = ${round.label}`).toEqual([{ player_id: 'Waiter' }]);
    // Another result while waiting: still waiting, still not placed, and their last round unchanged.
    await app().server(SUBMIT, { inputs: [{ board, playerId: 'Waiter', score: 2, matchId: 'w2' }] });
    expect((await members(board, round.label)).map((m) => m.player_id)).toEqual(['Ready']);
    expect(await sql()`select last_round from league_players where board_id = ${board} and player_id = 'Waiter'`).toEqual([{ last_round: 'previous' }]);
  });
});

describe('two processes racing to place 10,000 players into cohorts of 50', () => {
  it('no cohort over 50, nobody twice, everyone placed in their tier, every cohort but each tier’s last full; replays place no one', async () => {
    const { reader, writer } = await startTwoProcesses(() => {}, 'Plain-Board');
    const sql = postgres(writer.databaseUrl, { max: 2, onnotice: () => {} });
    try {
      const board = 'League-Race';
      await createLeagueBoard(writer, board, 50);
      const round = roundNow().label;
      const players = Array.from({ length: 10_000 }, (_, i) => (i % 7 === 0 ? `Spieler-Ü-${i}` : `player-EU-${i}`));
      // Two players in five start in Silver (a closed earlier round), the rest are new: Bronze.
      const silver = new Set(players.filter((_, i) => i % 5 < 2));
      await sql`insert into league_rounds (board_id, round, closed_at) values (${board}, '2020-W01', now())`;
      await sql`
        insert into league_players (board_id, player_id, tier, last_round, last_round_ends_at)
        select ${board}, p, 1, '2020-W01', '2020-01-06T00:00:00Z' from unnest(${sql.array([...silver])}::text[]) as p`;
      // 200 calls of 50 players (each player once), spread over both processes, 16 at a time.
      const calls = Array.from({ length: 200 }, (_, c) => players.filter((_, i) => i % 200 === c));
      const sendAll = async () => {
        let next = 0;
        const worker = async (w: number) => {
          while (next < calls.length) {
            const c = next++;
            const app = (c + w) % 2 === 0 ? writer : reader;
            const inputs = calls[c]!.map((playerId, k) => ({ board, playerId, score: (c * 31 + k) % 1000, matchId: `match-${c}` }));
            const answer = await app.server(SUBMIT, { inputs });
            expect(answer.errors).toBeUndefined();
          }
        };
        await Promise.all(Array.from({ length: 16 }, (_, w) => worker(w)));
      };
      await sendAll();

      const rows = await sql<{ player_id: string; tier: number; number: number }[]>`
        select player_id, tier, number from cohort_members where board_id = ${board} and round = ${round}`;
      // Everyone placed, nobody twice, each in their tier.
      expect(rows).toHaveLength(players.length);
      expect(new Set(rows.map((r) => r.player_id)).size).toBe(players.length);
      for (const r of rows) expect(r.tier).toBe(silver.has(r.player_id) ? 1 : LAST);
      // No cohort over 50; each tier's cohorts are 1..n, all full but the last (the oracle: ceil(players / 50)).
      const counts = new Map<string, number>();
      for (const r of rows) counts.set(`${r.tier}/${r.number}`, (counts.get(`${r.tier}/${r.number}`) ?? 0) + 1);
      for (const [tier, size] of [
        [1, silver.size],
        [LAST, players.length - silver.size],
      ] as const) {
        const cohorts = Math.ceil(size / 50);
        for (let n = 1; n <= cohorts; n += 1) expect(counts.get(`${tier}/${n}`)).toBe(n < cohorts ? 50 : size - 50 * (cohorts - 1));
        expect(counts.get(`${tier}/${cohorts + 1}`)).toBeUndefined();
      }
      const kept = await sql<{ tier: number; number: number; size: number }[]>`
        select tier, number, size from league_cohorts where board_id = ${board} and round = ${round}`;
      expect(kept).toHaveLength(counts.size);
      for (const c of kept) expect(c.size).toBe(counts.get(`${c.tier}/${c.number}`));

      // Every call again, from the other process: all replays, nothing placed or changed.
      const before = await sql`select * from cohort_members where board_id = ${board} order by player_id`;
      await sendAll();
      expect(await sql`select * from cohort_members where board_id = ${board} order by player_id`).toEqual(before);
      expect(await sql`select tier, number, size from league_cohorts where board_id = ${board} and round = ${round}`).toHaveLength(kept.length);
      expect(await sql`select 1 from league_waiting where board_id = ${board}`).toHaveLength(0);
    } finally {
      await sql.end();
      await writer.close();
      await reader.close();
    }
  }, 240_000);
});

describe('what placement costs the write path', () => {
  it('a group with nobody to place sends no placement statement; one with someone to place sends the lock and one statement', async () => {
    const statements: string[] = [];
    const app = await startTestApp({ onQuery: (statement) => statements.push(statement) });
    await createLeagueBoard(app, 'League-Cost', 5);
    const created = await app.admin('mutation($input: CreateBoardInput!) { createBoard(input: $input) { id } }', {
      input: { id: 'Plain-Cost', title: 'p', maxScore: 1e9 },
    });
    expect(created.errors).toBeUndefined();
    const placing = () => statements.filter((s) => /insert into cohort_members|pg_advisory_xact_lock\(\$1, k\)/.test(s)).length;
    const inGroup = async (inputs: { board: string; playerId: string; matchId: string }[]) => {
      statements.length = 0;
      const answer = await app.server(SUBMIT, { inputs: inputs.map((i) => ({ ...i, score: 7 })) });
      expect(answer.errors).toBeUndefined();
      return placing();
    };
    // Someone to place: the rounds' lock and the placement, pipelined with the board-score upsert.
    expect(await inGroup([{ board: 'League-Cost', playerId: 'New', matchId: 'n1' }])).toBe(2);
    // Placed already, or a board with no league: nothing (the log statement told who is placed).
    expect(await inGroup([{ board: 'League-Cost', playerId: 'New', matchId: 'n2' }])).toBe(0);
    expect(await inGroup([{ board: 'Plain-Cost', playerId: 'New', matchId: 'p2' }])).toBe(0);
  });
});

describe('erasure and league memberships', () => {
  it('removes the player’s tier, cohort place and wait; the cohort’s size stays (no refilling)', async () => {
    const app = await startTestApp();
    const sql = postgres(app.databaseUrl, { max: 1, onnotice: () => {} });
    try {
      const board = 'League-Erase';
      await createLeagueBoard(app, board, 5);
      const round = roundNow();
      for (const playerId of ['Gone', 'Stays']) await app.server(SUBMIT, { inputs: [{ board, playerId, score: 1, matchId: `m-${playerId}` }] });
      await sql`insert into league_waiting (board_id, round, player_id) values (${board}, 'next', 'Gone')`;
      expect((await app.admin('mutation { deletePlayer(playerId: "Gone") }')).errors).toBeUndefined();
      expect((await sql<{ player_id: string }[]>`select player_id from cohort_members where board_id = ${board}`).map((r) => r.player_id)).toEqual(['Stays']);
      expect((await sql<{ player_id: string }[]>`select player_id from league_players where board_id = ${board}`).map((r) => r.player_id)).toEqual(['Stays']);
      expect(await sql`select 1 from league_waiting where board_id = ${board}`).toHaveLength(0);
      expect(await sql`select size from league_cohorts where board_id = ${board} and round = ${round.label}`).toEqual([{ size: 2 }]);
      // A newcomer after the erasure takes the next place, not the freed one: the cohort holds 2 + 1 players' worth.
      await app.server(SUBMIT, { inputs: [{ board, playerId: 'Later', score: 1, matchId: 'later' }] });
      expect(await sql`select size from league_cohorts where board_id = ${board} and round = ${round.label}`).toEqual([{ size: 3 }]);
    } finally {
      await sql.end();
    }
  });
});

describe('a group with results of two rounds for one player (a late result in the grace)', () => {
  it('places them in arrival order: the earlier round first leaves the later one waiting; the later first places both', async () => {
    const week = roundNow();
    // A minute into this week: last week has ended but still takes results (300 s of grace).
    const clock = movableClock({ startsAt: new Date(week.start.getTime() + 60_000), runs: false });
    const app = await startTestApp({ now: clock.now, seasonCloseIntervalMs: null });
    const sql = postgres(app.databaseUrl, { max: 1, onnotice: () => {} });
    try {
      const board = 'League-Late';
      await createLeagueBoard(app, board, 5);
      const lastWeek = bucketAt({ epoch: new Date(0) }, 'WEEKLY', new Date(week.start.getTime() - 1));
      const late = new Date(week.start.getTime() - 30_000).toISOString();
      const now = new Date(week.start.getTime() + 30_000).toISOString();
      const send = (playerId: string, achieved: string[]) =>
        app.server(SUBMIT, { inputs: achieved.map((achievedAt, i) => ({ board, playerId, score: 10 + i, matchId: `${playerId}-${i}`, achievedAt })) });
      expect((await send('Late-First', [late, now])).errors).toBeUndefined();
      expect((await send('Now-First', [now, late])).errors).toBeUndefined();
      const placed = await sql<{ round: string; player_id: string }[]>`
        select round, player_id from cohort_members where board_id = ${board} order by player_id, round`;
      expect(placed).toEqual([
        { round: lastWeek.label, player_id: 'Late-First' },
        { round: lastWeek.label, player_id: 'Now-First' },
        { round: week.label, player_id: 'Now-First' },
      ]);
      expect(await sql`select round, player_id from league_waiting where board_id = ${board}`).toEqual([{ round: week.label, player_id: 'Late-First' }]);
      expect(await sql`select player_id, last_round from league_players where board_id = ${board} order by player_id`).toEqual([
        { player_id: 'Late-First', last_round: lastWeek.label },
        { player_id: 'Now-First', last_round: week.label },
      ]);
    } finally {
      await sql.end();
    }
  });
});
