/**
 * The league reads (issue 57) beside `standing`, in one run: a player's placement (`league`: their
 * cohort of 50 ranked within itself, their standing and outcome), one cohort (`cohort`), and the
 * board's own `standing` of a random player (and its `top` 50: as many named standings, from the
 * top cache), on a board of 100,000 players in cohorts of 50. The reads are measured in interleaved rounds against one service process (each round's reads
 * seconds apart, their order alternating, so a shared machine's drift moves them alike), each with
 * what one read cost: the service's CPU, Redis commands and PostgreSQL calls (its /metrics). Run by
 * hand, never by npm test:
 *
 *     npx tsx bench/league-reads.ts [--players 100000] [--rounds 3] [--seconds 4] [--warmup 1] [--connections 16]
 *                                   [--runtime dist|tsx] [--no-quiet-wait]
 *
 * Its stores are its own: the database lb_bench_league and the key prefix `bench-league:`, board
 * `bench` seeded by bench/seed.ts (idempotent), then given a WEEKLY league of three tiers and
 * cohorts of 50, and every player placed in this week's round (by SQL, as the write path would
 * have placed them in arrival order: player i in tier i mod 3, cohorts filled in player order).
 */
import { parseArgs } from 'node:util';
import { createDatabase } from '../src/db/client.js';
import { bucketAt } from '../src/model/buckets.js';
import { graphqlBody } from './lib/clients.js';
import { BENCH_TARGET, type BenchTarget, benchDatabaseUrl, randomPlayer } from './lib/env.js';
import { type Measurement, quietGate } from './lib/load.js';
import { median } from './lib/median.js';
import { type Report, publish, row } from './lib/report.js';
import { closedHttp, targetReadRun, withService } from './scenarios/common.js';
import { openBenchStores, seed } from './seed.js';

const TIERS = ['Gold', 'Silver', 'Bronze'];
const COHORT_SIZE = 50;

const { values } = parseArgs({
  options: {
    players: { type: 'string', default: '100000' },
    rounds: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '4' },
    warmup: { type: 'string', default: '1' },
    connections: { type: 'string', default: '16' },
    runtime: { type: 'string', default: 'dist' },
    'no-quiet-wait': { type: 'boolean', default: false },
  },
});

const target: BenchTarget = {
  ...BENCH_TARGET,
  label: 'single node, league board',
  database: 'lb_bench_league',
  keyPrefix: 'bench-league:',
  players: Number(values.players),
};

/** What each read asks, as a game's league screen would: ranks, scores and names. */
const READS = {
  standing: 'query($b:ID!,$p:ID!){ standing(board:$b, period:WEEKLY, playerId:$p){ rank score percentile player { displayName } } }',
  league:
    'query($b:ID!,$p:ID!){ league(board:$b, playerId:$p){ tier outcome standing { rank score percentile } cohort { number promotedThrough demotedFrom entries { rank score percentile player { displayName } } } } }',
  top: 'query($b:ID!){ top(board:$b, period:WEEKLY, limit:50){ entries { rank score percentile player { displayName } } } }',
  cohort:
    'query($b:ID!,$t:String!,$n:Int!){ cohort(board:$b, tier:$t, number:$n){ number promotedThrough demotedFrom entries { rank score percentile player { displayName } } } }',
} as const;

type ReadName = keyof typeof READS;

/**
 * Gives the bench board its league and places every player in this week's round, unless done: the
 * tiers of player i is i mod 3, each tier's cohorts filled with 50 in player order. O(players).
 */
async function placeEveryone(say: (line: string) => void): Promise<{ round: string; cohorts: Map<number, number> }> {
  const stores = await openBenchStores(target);
  const round = bucketAt(stores.board, 'WEEKLY', new Date()).label;
  await stores.close();
  const database = createDatabase(benchDatabaseUrl(target.database), { maxConnections: 2, timeouts: null });
  const { sql } = database;
  try {
    const league = { tiers: TIERS, cohortSize: COHORT_SIZE, promote: 5, demote: 5, period: 'WEEKLY' };
    await sql`update boards set league = ${JSON.stringify(league)}::jsonb where id = ${target.boardId}`;
    const [{ placed }] = await sql<[{ placed: number }]>`
      select count(*)::int as placed from cohort_members where board_id = ${target.boardId} and round = ${round}`;
    if (placed !== target.players) {
      const started = performance.now();
      await sql.begin(async (tx) => {
        await tx`delete from cohort_members where board_id = ${target.boardId} and round = ${round}`;
        await tx`delete from league_cohorts where board_id = ${target.boardId} and round = ${round}`;
        await tx`
          insert into cohort_members (board_id, round, tier, number, player_id)
          select ${target.boardId}, ${round}, tier, (row_number() over (partition by tier order by i) - 1) / ${COHORT_SIZE} + 1, 'p' || i
          from (select i, i % ${TIERS.length} as tier from generate_series(1, ${target.players}) as i) as p`;
        await tx`
          insert into league_cohorts (board_id, round, tier, number, size)
          select board_id, round, tier, number, count(*) from cohort_members
          where board_id = ${target.boardId} and round = ${round} group by board_id, round, tier, number`;
      });
      await sql`analyze cohort_members`;
      say(`placed ${target.players.toLocaleString('en-US')} players in round ${round} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    }
    const rows = await sql<{ tier: number; cohorts: number }[]>`
      select tier, count(*)::int as cohorts from league_cohorts where board_id = ${target.boardId} and round = ${round} group by tier`;
    return { round, cohorts: new Map(rows.map((r) => [r.tier, r.cohorts])) };
  } finally {
    await database.close();
  }
}

async function main(): Promise<void> {
  quietGate.enabled = !values['no-quiet-wait'];
  const run = targetReadRun(target, values);
  const say = (line: string) => console.log(`seed: ${line}`);
  await seed({ target, say });
  const { round, cohorts } = await placeEveryone(say);
  const randomCohort = () => {
    const tier = Math.floor(Math.random() * TIERS.length);
    return { t: TIERS[tier]!, n: 1 + Math.floor(Math.random() * (cohorts.get(tier) ?? 1)) };
  };
  const body = { standing: graphqlBody(READS.standing), league: graphqlBody(READS.league), cohort: graphqlBody(READS.cohort), top: graphqlBody(READS.top) };
  const bodies: Record<ReadName, () => string> = {
    standing: () => body.standing({ b: target.boardId, p: randomPlayer(target.players) }),
    league: () => body.league({ b: target.boardId, p: randomPlayer(target.players) }),
    top: () => body.top({ b: target.boardId }),
    cohort: () => body.cohort({ b: target.boardId, ...randomCohort() }),
  };
  const names = Object.keys(READS) as ReadName[];
  const measured: Record<ReadName, Measurement[]> = { standing: [], league: [], cohort: [], top: [] };
  await withService({ target, runtime: run.runtime }, async (service) => {
    for (let r = 0; r < run.rounds; r++) {
      // ABBA: the order alternates round by round, so a steady drift moves every read alike.
      for (const name of r % 2 === 0 ? names : [...names].reverse()) {
        console.log(`>> league-reads: round ${r + 1}, ${name}`);
        measured[name].push(await closedHttp(service.url, run, bodies[name], service.pid, {}, { costOf: service.url }));
      }
    }
  });

  /** The round whose throughput is the median of a read's rounds: its row and its costs stand for the read. */
  const middle = (name: ReadName): Measurement => {
    const sorted = [...measured[name]].sort((a, b) => a.throughput - b.throughput);
    return sorted[Math.floor((sorted.length - 1) / 2)]!;
  };
  const costs = (name: ReadName) => {
    const all = measured[name].flatMap((m) => (m.cost ? [m.cost] : []));
    if (all.length === 0) return `${name}: no cost read`;
    const med = (pick: (c: (typeof all)[number]) => number) => median(all.map(pick));
    return `${name}: ${med((c) => c.serviceCpuUs)} µs CPU, ${med((c) => c.redisCommands)} Redis commands, ${med((c) => c.postgresTransactions)} PostgreSQL calls a read (median of ${all.length} rounds; CPU by round ${all.map((c) => c.serviceCpuUs).join(', ')} µs)`;
  };
  const report: Report = {
    scenario: 'league-reads',
    params: { ...values, players: target.players, cohortSize: COHORT_SIZE, tiers: TIERS.length, round, queries: READS },
    rows: [
      row(
        `service league (placement and its cohort of ${COHORT_SIZE}, named), ${target.players.toLocaleString('en-US')} players (HTTP)`,
        'service',
        middle('league'),
      ),
      row(`service cohort (${COHORT_SIZE} standings, named) (HTTP)`, 'service', middle('cohort')),
      row(`service standing (one standing, named), the same board and week (HTTP)`, 'baseline', middle('standing')),
      row(`service top 50 (named, through the top cache), the same board and week (HTTP)`, 'baseline', middle('top')),
    ],
    notes: [
      `database ${target.database}, key prefix ${target.keyPrefix}; WEEKLY round ${round}, ${TIERS.length} tiers, cohorts of ${COHORT_SIZE}`,
      `${run.rounds} interleaved rounds of ${run.seconds} s (after ${run.warmup} s of load) each, ${run.connections} connections; rows are each read's median round`,
      ...names.map(costs),
    ],
  };
  publish(report);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
