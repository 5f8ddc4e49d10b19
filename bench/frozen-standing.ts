/**
 * One player's standing in a closed bucket (issue 21): `standing` of a random player in a frozen
 * day of 1,000,000 players, served from frozen_standings (one probe of frozen_standings_player_idx),
 * beside the same read on the live index (the board's ALL_TIME list: the same players, the same
 * ranks). Target: p99 under 50 ms. Run by hand, never by npm test:
 *
 *     npx tsx bench/frozen-standing.ts [--players 1000000] [--seconds 20] [--warmup 5] [--connections 50]
 *                                      [--runtime dist|tsx] [--no-quiet-wait]
 *
 * As bench/run.ts's scenarios do: the service runs as a real process (bench/lib/service.ts; `dist`
 * needs `npm run build` first), each read is a closed loop over HTTP for a fixed time with a fixed
 * number of connections after a warm-up, waiting first for a quiet machine, and the report (p50,
 * p95, p99, what one read cost the stores) is printed and appended to
 * bench/results/frozen-standing.jsonl.
 *
 * Its stores are its own: the database lb_bench_frozen and the key prefix `bench-frozen:`, board
 * `bench` seeded by bench/seed.ts (idempotent: a second run only measures). The closed bucket is
 * yesterday's DAILY list, frozen once from the board's ALL_TIME standings with the freeze's own
 * statement (db/frozen.ts rankedBoardScores, in the index's order): the bench board's results are
 * all today's, so yesterday's own list would be empty.
 */
import { parseArgs } from 'node:util';
import { rankedBoardScores } from '../src/db/frozen.js';
import { bucketAt } from '../src/model/buckets.js';
import { freezeListOf } from '../src/services/buckets.js';

import { graphqlBody } from './lib/clients.js';
import { BENCH_TARGET, type BenchTarget, PLAYERS, randomPlayer } from './lib/env.js';
import { type Measurement, quietGate } from './lib/load.js';
import { type Report, publish, row } from './lib/report.js';
import { type RunOptions, closedHttp, targetReadRun, withService } from './scenarios/common.js';
import { openBenchStores, seed } from './seed.js';

/** The read measured: one player's standing, anonymous, as a game asks it. */
const QUERY = 'query($b:ID!,$p:ID!,$period:Period!,$k:String){ standing(board:$b, period:$period, bucket:$k, playerId:$p){ rank score percentile } }';

/** The target p99 of the frozen read, in milliseconds. */
const TARGET_P99_MS = 50;

const DAY_MS = 86_400_000;

const { values } = parseArgs({
  options: {
    players: { type: 'string' },
    seconds: { type: 'string', default: '20' },
    warmup: { type: 'string', default: '5' },
    connections: { type: 'string', default: '50' },
    runtime: { type: 'string', default: 'dist' },
    'no-quiet-wait': { type: 'boolean', default: false },
  },
});

const target: BenchTarget = {
  ...BENCH_TARGET,
  label: 'single node, frozen day',
  database: 'lb_bench_frozen',
  keyPrefix: 'bench-frozen:',
  players: Number(values.players ?? PLAYERS),
};

/**
 * Freezes yesterday's DAILY list of the bench board from its ALL_TIME standings, unless it is frozen
 * already: its marker and its standings in one transaction, as the closer writes them. Answers the
 * day's label and how many standings it holds.
 */
async function freezeYesterday(say: (line: string) => void): Promise<{ label: string; size: number }> {
  const stores = await openBenchStores(target);
  try {
    const { board } = stores;
    const { sql } = stores.database;
    const day = bucketAt(board, 'DAILY', new Date(Date.now() - DAY_MS));
    const [known] = await sql<{ size: number }[]>`
      select size from frozen_buckets where board_id = ${board.id} and period = 'DAILY' and bucket = ${day.label} and region = ''`;
    if (known && known.size === target.players) return { label: day.label, size: known.size };
    const started = performance.now();
    const allTime = { board, bucket: bucketAt(board, 'ALL_TIME', new Date()), region: null };
    const list = freezeListOf(allTime);
    const size = await sql.begin(async (tx) => {
      await tx`set local work_mem = '256MB'`;
      await tx`set local statement_timeout = 0`;
      const where = tx`board_id = ${board.id} and period = 'DAILY' and bucket = ${day.label} and region = ''`;
      await tx`delete from frozen_standings where ${where}`;
      await tx`delete from frozen_buckets where ${where}`;
      const inserted = await tx`
        insert into frozen_standings (board_id, period, bucket, region, rank, player_id, score, reached_at, metadata)
        select ${board.id}, 'DAILY', ${day.label}, '', r.rank, r.player_id, r.score, r.reached_at, r.metadata
        from (${rankedBoardScores(tx, list)}) as r`;
      await tx`
        insert into frozen_buckets (board_id, period, bucket, region, starts_at, ends_at, closed_at, size)
        values (${board.id}, 'DAILY', ${day.label}, '', ${day.start.toISOString()}::timestamptz, ${day.end!.toISOString()}::timestamptz, now(), ${inserted.count})`;
      return inserted.count;
    });
    await sql`analyze frozen_standings`;
    say(`froze ${size.toLocaleString('en-US')} standings as DAILY ${day.label} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    return { label: day.label, size };
  } finally {
    await stores.close();
  }
}

/** The standing read of random players in one list, in a service process of its own. */
function measure(run: RunOptions, period: 'DAILY' | 'ALL_TIME', bucket: string | null): Promise<Measurement> {
  const body = graphqlBody(QUERY);
  return withService({ target, runtime: run.runtime }, (service) =>
    closedHttp(
      service.url,
      run,
      () => body({ b: target.boardId, p: randomPlayer(target.players), period, k: bucket }),
      service.pid,
      {},
      { costOf: service.url },
    ),
  );
}

/** What one read cost, for a note: CPU, Redis commands, PostgreSQL transactions. */
function costWords(name: string, m: Measurement): string {
  const cost = m.cost;
  if (!cost) return `${name}: no cost read`;
  return `${name}: ${cost.serviceCpuUs} µs CPU, ${cost.redisCommands} Redis commands, ${cost.postgresTransactions} PostgreSQL transactions a read`;
}

async function main(): Promise<void> {
  quietGate.enabled = !values['no-quiet-wait'];
  const run = targetReadRun(target, values);
  const say = (line: string) => console.log(`seed: ${line}`);
  await seed({ target, say });
  const day = await freezeYesterday(say);

  console.log(`\n>> frozen-standing: DAILY ${day.label}, closed (${day.size.toLocaleString('en-US')} standings in PostgreSQL)`);
  const frozen = await measure(run, 'DAILY', day.label);
  console.log('>> frozen-standing: ALL_TIME, live (the index)');
  const live = await measure(run, 'ALL_TIME', null);

  const report: Report = {
    scenario: 'frozen-standing',
    params: { seconds: run.seconds, warmup: run.warmup, connections: run.connections, runtime: run.runtime, players: target.players, query: QUERY },
    rows: [
      row(`service standing, a frozen day of ${day.size.toLocaleString('en-US')} players (HTTP)`, 'service', frozen),
      row(`service standing, the live index, ${target.players.toLocaleString('en-US')} players (HTTP)`, 'baseline', live),
    ],
    targets: [
      { description: `frozen standing p99 < ${TARGET_P99_MS} ms`, measured: `${frozen.p99} ms`, met: frozen.p99 < TARGET_P99_MS && frozen.errors === 0 },
    ],
    notes: [
      `database ${target.database}, key prefix ${target.keyPrefix}; the frozen day is the ALL_TIME standings frozen as DAILY ${day.label}`,
      costWords('frozen', frozen),
      costWords('live', live),
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
