/**
 * Redis memory before and after closing (issue 21, item 1: "the index's memory follows open buckets
 * only"), on a board with every period: N players, each with one result a day for the last eight
 * days (so the index holds, as it did before buckets closed, every kept day, week and month),
 * seeded with SQL in a database of the script's own. First the board takes late results for a
 * year (closeGraceSeconds at its most), so nothing closes and every kept bucket is rebuilt into
 * Redis, as the service held them for their whole retention; INFO memory's used_memory and each
 * bucket's MEMORY USAGE are read. Then updateBoard lowers the grace to the default (300 s) and one
 * pass of the bucket closer freezes every ended day, week and month into PostgreSQL and drops their
 * keys; memory is read again. A measurement, not a timed benchmark:
 *
 *     npx tsx bench/closed-memory.ts [players]    # default 200,000
 *
 * Uses the local PostgreSQL and Redis (BENCH_POSTGRES_URL, REDIS_URL) under names of its own,
 * removed afterwards.
 */
import postgres from 'postgres';
import { startBucketCloser } from '../src/jobs/bucket-closer.js';
import { DEFAULT_RETENTION, MAX_CLOSE_GRACE_SECONDS, PERIODS } from '../src/model/board.js';
import { keptBuckets } from '../src/model/buckets.js';
import { indexKeys } from '../src/ranking/keys.js';
import { CLOCK_SKEW_MS, resolveBoardBucket } from '../src/services/buckets.js';
import { createBoard, updateBoard } from '../src/writes/boards.js';
import { rebuildBoard } from '../src/writes/rebuild.js';
import { startSeason } from '../src/writes/seasons.js';
import { scratchApp } from './lib/scratch-app.js';

const players = Number(process.argv[2] ?? 200_000);
const DAYS = 8;
const DAY_MS = 86_400_000;
const BOARD = 'memory';

// Noon today (UTC): the eight days before it, and today, are kept DAILY buckets.
const today = new Date();
const noon = Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate(), 12);
let clock = new Date(noon);

const scratch = await scratchApp('closed-memory', {
  now: () => clock,
  // The app's own closer never passes during the run: the script runs its own, once.
  seasonCloseIntervalMs: 3_600_000,
});
const { app, database, redis, prefix } = scratch;
const mb = (bytes: number) => `${(bytes / 1_048_576).toFixed(1)} MB`;
const usedMemory = async () => Number(/used_memory:(\d+)/.exec(await redis.info('memory'))![1]);

try {
  await app.start();
  const { parts } = app;
  await createBoard(parts, {
    id: BOARD,
    title: BOARD,
    order: 'HIGH_FIRST',
    aggregate: 'BEST',
    maxScore: 1_000_000_000,
    periods: [...PERIODS],
    regions: [],
    topSize: 10,
    retention: DEFAULT_RETENTION,
    closeGraceSeconds: MAX_CLOSE_GRACE_SECONDS,
  });
  // The season started before the first day seeded (a season starts at the clock's now or later).
  clock = new Date(noon - (DAYS + 1) * DAY_MS);
  await startSeason(parts, { board: BOARD, name: 'Season 1' });
  clock = new Date(noon);
  const sql = postgres(scratch.databaseUrl, { max: 1, onnotice: () => {} });
  const seeding = performance.now();
  await sql`set statement_timeout = 0`;
  // One result a player a day, for the DAYS days before today and today, each at a time of its own in the day.
  await sql`
    insert into results (board_id, match_id, player_id, score, region, achieved_at, recorded_at)
    select ${BOARD}, 'd' || d || '-' || i, 'p' || i, (i::bigint * 7919 + d * 104729) % 1000000000, null, at, at
    from generate_series(0, ${DAYS}::int) as d, generate_series(1, ${players}::int) as i,
         lateral (select ${new Date(noon).toISOString()}::timestamptz - d * interval '1 day' - (i % 43200) * interval '1 second' as at) as t`;
  await sql`
    insert into board_scores (board_id, period, bucket, region, player_id, score, reached_at)
    select distinct on (player_id) board_id, 'ALL_TIME', 'all', '', player_id, score, achieved_at
    from results where board_id = ${BOARD} order by player_id, score desc, achieved_at`;
  await sql`analyze results`;
  await sql.end();
  console.log(`seeded ${players} players × ${DAYS + 1} days in ${((performance.now() - seeding) / 1000).toFixed(1)} s`);

  // Every bucket the board keeps now, as the index held them before buckets closed: each rebuilt from PostgreSQL.
  const board = (await parts.boards.find(BOARD))!;
  const labels: { period: (typeof PERIODS)[number]; bucket: string | null }[] = [
    { period: 'ALL_TIME', bucket: null },
    { period: 'SEASON', bucket: null },
  ];
  for (const period of ['MONTHLY', 'WEEKLY', 'DAILY'] as const) {
    for (const bucket of keptBuckets(board, period, clock, null, CLOCK_SKEW_MS)) {
      if (bucket.end!.getTime() > noon - (DAYS + 1) * DAY_MS) labels.push({ period, bucket: bucket.label });
    }
  }
  const rebuilding = performance.now();
  for (const { period, bucket } of labels) await rebuildBoard(parts, { board: BOARD, period, bucket, region: null });
  console.log(`rebuilt ${labels.length} buckets in ${((performance.now() - rebuilding) / 1000).toFixed(1)} s`);

  /** Every key of a bucket (its shards and what rides with them), summed: MEMORY USAGE is not prefixed by the client. */
  const bucketBytes = async (period: (typeof PERIODS)[number], bucket: string | null) => {
    const at = await resolveBoardBucket(parts, { board: BOARD, period, bucket, region: null }).catch(() => null);
    if (!at) return 0;
    let bytes = 0;
    for (const key of indexKeys(at)) bytes += Number((await redis.call('MEMORY', 'USAGE', `${prefix}${key}`, 'SAMPLES', '0')) ?? 0);
    return bytes;
  };
  const snapshot = async () => {
    const bytes = await Promise.all(labels.map(({ period, bucket }) => bucketBytes(period, bucket)));
    const sizes = labels.map(({ period, bucket }, i) => `${period} ${bucket ?? '(open)'}: ${mb(bytes[i]!)}`);
    return { used: await usedMemory(), total: bytes.reduce((a, b) => a + b, 0), sizes };
  };
  const before = await snapshot();

  // The default grace: every ended day, week and month closes; one pass of the closer freezes them and drops their keys.
  await updateBoard(parts, { id: BOARD, closeGraceSeconds: 300 });
  const closer = startBucketCloser(parts, { intervalMs: null, settleMs: 0 });
  const freezing = performance.now();
  await closer.pass();
  await closer.stop();
  const freezeSeconds = (performance.now() - freezing) / 1000;
  const after = await snapshot();
  const frozen = await database.sql<{ lists: number; rows: number }[]>`
    select count(*)::int as lists, coalesce(sum(size), 0)::int as rows from frozen_buckets where board_id = ${BOARD}`;

  console.log(`board ${BOARD}: every period, ${players} players, a result each a day for ${DAYS + 1} days (today included)`);
  console.log(`before (nothing closed: every kept bucket in Redis): the board's keys ${mb(before.total)}, used_memory ${mb(before.used)}`);
  for (const line of before.sizes) console.log(`  ${line}`);
  console.log(`after (ended buckets frozen and dropped): the board's keys ${mb(after.total)}, used_memory ${mb(after.used)}`);
  for (const line of after.sizes) console.log(`  ${line}`);
  console.log(`closer pass: ${frozen[0]!.lists} lists frozen, ${frozen[0]!.rows} rows, in ${freezeSeconds.toFixed(1)} s`);
} finally {
  await scratch.remove();
}
