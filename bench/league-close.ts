/**
 * What a league round's close costs (issue 57): a DAILY round of a million players in cohorts of
 * 50 over five tiers, closed through the functions the bucket closer calls: its global list frozen
 * (storage.frozen.freeze, as closeCalendarLists does), then the round closed (writes/close-league-
 * rounds.ts closeLeagueRound: outcomes, tier moves, and the players who waited for it placed in
 * today's round). Run by hand, not in the test suite:
 *
 *     npx tsx bench/league-close.ts [players] [--waiting 10000]
 *
 * Target (issue 57): the close of a round of 1,000,000 players under 120 s.
 *
 * Seeded with SQL, not through the API: one result a player over yesterday (UTC), each player's
 * membership as placement leaves it (arrival order i: tier i mod 5, the tier's cohorts filled to
 * 50 in turn), their league_players rows, and `waiting` of them waiting in today's round.
 *
 * Environment: BENCH_POSTGRES_URL (default postgres://postgres@127.0.0.1:5432/postgres) names the
 * server. The database it makes is removed at the end.
 */
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { insertBoard } from '../src/db/boards.js';
import { createDatabase, ensureDatabase, migrateDatabase, sessionTimeoutsFor } from '../src/db/client.js';
import { createResultPartition, monthOf } from '../src/db/partitions.js';
import { createStorage } from '../src/db/storage.js';
import { createLogger } from '../src/logger.js';
import { type Board, DEFAULT_RETENTION } from '../src/model/board.js';
import { bucketAt } from '../src/model/buckets.js';
import { freezeListOf } from '../src/services/buckets.js';
import { closeLeagueRound } from '../src/writes/close-league-rounds.js';

const { values, positionals } = parseArgs({ allowPositionals: true, options: { waiting: { type: 'string', default: '10000' } } });
const PLAYERS = Number(positionals[0] ?? 1_000_000);
const WAITING = Number(values.waiting);
const SERVER_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const run = randomBytes(3).toString('hex');
const databaseUrl = new URL(SERVER_URL);
databaseUrl.pathname = `/lb_bench_league_${run}`;
const DAY_MS = 86_400_000;
const TIERS = ['Diamond', 'Platinum', 'Gold', 'Silver', 'Bronze'];
const LEAGUE = { tiers: TIERS, cohortSize: 50, promote: 5, demote: 5, period: 'DAILY' as const };

const seconds = (since: number) => (performance.now() - since) / 1000;

async function main(): Promise<void> {
  await ensureDatabase(databaseUrl.toString());
  await migrateDatabase(databaseUrl.toString());
  const database = createDatabase(databaseUrl.toString(), { timeouts: sessionTimeoutsFor(10_000) });
  const log = createLogger(process.env.BENCH_LOG_LEVEL ?? 'warn');
  try {
    const storage = createStorage(database);
    const today = new Date(Math.floor(Date.now() / DAY_MS) * DAY_MS);
    const yesterday = new Date(today.getTime() - DAY_MS);
    for (const month of new Set([monthOf(yesterday), monthOf(today)])) await createResultPartition(database.sql, month);
    const inserted = await insertBoard(database.db, {
      id: 'bench',
      title: 'bench',
      order: 'HIGH_FIRST',
      aggregate: 'BEST',
      maxScore: 1_000_000,
      periods: ['ALL_TIME', 'DAILY'],
      regions: [],
      topSize: 10,
      retention: DEFAULT_RETENTION,
      league: LEAGUE,
    });
    if (!inserted) throw new Error('could not create the board');
    const board: Board = inserted;
    const round = bucketAt(board, 'DAILY', yesterday);
    const next = bucketAt(board, 'DAILY', today);

    let started = performance.now();
    await database.sql.begin(async (tx) => {
      await tx`set local statement_timeout = 0`;
      const id = tx`'p' || lpad(i::text, 8, '0')`;
      await tx`
        insert into results (board_id, match_id, player_id, region, score, achieved_at, recorded_at)
        select 'bench', 'm' || i, ${id}, null, (i::bigint * 7919) % 100003, at, at
        from generate_series(0, ${PLAYERS - 1}) as i,
             lateral (select ${yesterday.toISOString()}::timestamptz + (((i::bigint * 2654435761) % 4294967291)::float8 / 4294967291) * interval '1 day' as at) as t
        order by at`;
      // Arrival i: tier i mod 5, the (i / 5)th of its tier, so cohort (i / 5) / 50 + 1 of it.
      await tx`
        insert into cohort_members (board_id, round, tier, number, player_id)
        select 'bench', ${round.label}, i % 5, (i / 5) / 50 + 1, ${id} from generate_series(0, ${PLAYERS - 1}) as i`;
      await tx`
        insert into league_cohorts (board_id, round, tier, number, size)
        select board_id, round, tier, number, count(*) from cohort_members where board_id = 'bench' group by board_id, round, tier, number`;
      await tx`
        insert into league_players (board_id, player_id, tier, last_round, last_round_ends_at)
        select 'bench', ${id}, i % 5, ${round.label}, ${round.end!.toISOString()}::timestamptz from generate_series(0, ${PLAYERS - 1}) as i`;
      // The first WAITING players to play today arrived before yesterday closed: they wait for it.
      await tx`
        insert into league_waiting (board_id, round, player_id, arrived_at)
        select 'bench', ${next.label}, ${id}, ${today.toISOString()}::timestamptz + i * interval '1 millisecond'
        from generate_series(0, ${Math.min(WAITING, PLAYERS) - 1}) as i`;
    });
    await database.sql`analyze`;
    console.log(
      `seeded ${PLAYERS.toLocaleString('en-US')} players of a round, ${WAITING.toLocaleString('en-US')} waiting, in ${seconds(started).toFixed(1)} s`,
    );

    started = performance.now();
    const frozen = await storage.frozen.freeze({ lists: [freezeListOf({ board, bucket: round, region: null })], closedAt: new Date() });
    const freezeS = seconds(started);
    started = performance.now();
    const closed = await closeLeagueRound({ storage, now: () => new Date(), log }, board, round);
    const closeS = seconds(started);
    if (!closed) throw new Error('the round did not close');

    // What the rules give for cohorts of 50 (the last of each tier may be smaller): 5 up from every
    // tier but the first, 5 down from every tier but the last, while a cohort has more than 10.
    const [counts] = await database.sql<{ promoted: number; demoted: number; placed: number }[]>`
      select count(*) filter (where outcome = 'PROMOTED')::int as promoted, count(*) filter (where outcome = 'DEMOTED')::int as demoted,
             (select count(*)::int from cohort_members where board_id = 'bench' and round = ${next.label}) as placed
      from cohort_members where board_id = 'bench' and round = ${round.label}`;
    const [expected] = await database.sql<{ promoted: number; demoted: number }[]>`
      select coalesce(sum(case when tier > 0 then least(5, size) else 0 end), 0)::int as promoted,
             coalesce(sum(case when tier < 4 and size > 10 then 5 else 0 end), 0)::int as demoted
      from league_cohorts where board_id = 'bench' and round = ${round.label}`;
    console.log(
      `froze ${(frozen?.lists[0]?.size ?? 0).toLocaleString('en-US')} standings in ${freezeS.toFixed(1)} s; ` +
        `closed the round (${closed.members.toLocaleString('en-US')} members, ${closed.moved.toLocaleString('en-US')} tiers moved, ` +
        `${closed.placed.toLocaleString('en-US')} waiting placed) in ${closeS.toFixed(1)} s; freeze and close ${(freezeS + closeS).toFixed(1)} s (target < 120 s)`,
    );
    console.log(
      `outcomes: ${counts!.promoted.toLocaleString('en-US')} promoted (rules: ${expected!.promoted.toLocaleString('en-US')}), ` +
        `${counts!.demoted.toLocaleString('en-US')} demoted (rules: ${expected!.demoted.toLocaleString('en-US')}); ${counts!.placed.toLocaleString('en-US')} placed today`,
    );
    if (counts!.promoted !== expected!.promoted || counts!.demoted !== expected!.demoted || counts!.placed !== Math.min(WAITING, PLAYERS)) {
      throw new Error('the close does not agree with the rules');
    }
  } finally {
    await database.close();
    const admin = postgres(SERVER_URL, { max: 1, onnotice: () => {} });
    await admin`drop database if exists ${admin(databaseUrl.pathname.slice(1))} with (force)`;
    await admin.end();
  }
}

await main();
