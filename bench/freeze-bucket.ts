/**
 * What closing a calendar bucket costs (docs/closing.md): how long freezing a closed day of a
 * million players takes, through the same function the bucket closer calls (closeCalendarLists),
 * and the p99 of submissions to the board's open day while a freeze runs beside their p99 without
 * one, in interleaved rounds (a round without, then one with, and so on), so that a machine whose
 * speed drifts over minutes weighs on both alike. Run by hand, not in the test suite:
 *
 *     npx tsx bench/freeze-bucket.ts [players] [--rounds 3] [--seconds 10] [--writers 16]
 *
 * Targets (issue 21): a freeze of 1,000,000 players under 60 s; submissions' p99 while it runs
 * within 20 % of their p99 without it.
 *
 * The bucket is yesterday (UTC) of a BEST board, derived from the score log as every BEST board's
 * day is: N players, two results each, seeded with SQL. Submissions go through the service's write
 * path in this process (parts.writes.submitScores: the group commit, PostgreSQL and the index), one
 * result a call from `writers` loops at once, into today's bucket. Each round's freeze is of the same
 * day, its frozen rows deleted before (storage.frozen.drop).
 *
 * Environment: BENCH_POSTGRES_URL (default postgres://postgres@127.0.0.1:5432/postgres) names the
 * server, BENCH_REDIS_URL (default redis://127.0.0.1:6379) the Redis. The database and the keys it
 * makes are removed at the end.
 */
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { buildApp } from '../src/app.js';
import { insertBoard } from '../src/db/boards.js';
import { createDatabase, ensureDatabase, migrateDatabase, sessionTimeoutsFor } from '../src/db/client.js';
import { createResultPartition, monthOf } from '../src/db/partitions.js';
import { createLogger } from '../src/logger.js';
import { DEFAULT_RETENTION } from '../src/model/board.js';
import { bucketAt } from '../src/model/buckets.js';
import { createRedis, deleteKeysUnder } from '../src/redis.js';
import { closeCalendarLists } from '../src/writes/close-buckets.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { rounds: { type: 'string', default: '3' }, seconds: { type: 'string', default: '10' }, writers: { type: 'string', default: '16' } },
});
const PLAYERS = Number(positionals[0] ?? 1_000_000);
const ROUNDS = Number(values.rounds);
const SECONDS = Number(values.seconds);
const WRITERS = Number(values.writers);
const SERVER_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379';
const run = randomBytes(3).toString('hex');
const databaseUrl = new URL(SERVER_URL);
databaseUrl.pathname = `/lb_bench_freeze_${run}`;
const keyPrefix = `lbbench:${run}:`;
const DAY_MS = 86_400_000;

const seconds = (since: number) => (performance.now() - since) / 1000;
const p99 = (ms: number[]) => {
  const sorted = [...ms].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)] ?? NaN;
};
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  await ensureDatabase(databaseUrl.toString());
  await migrateDatabase(databaseUrl.toString());
  // The service's own session bounds (REQUEST_TIMEOUT_MS 10 s): the freeze lifts them for itself, as it does in the service.
  const database = createDatabase(databaseUrl.toString(), { timeouts: sessionTimeoutsFor(10_000) });
  const redis = createRedis(REDIS_URL, { keyPrefix });
  await redis.connect();
  try {
    const { parts } = buildApp({ database, redis, log: createLogger('warn') });
    const today = new Date(Math.floor(Date.now() / DAY_MS) * DAY_MS);
    const yesterday = new Date(today.getTime() - DAY_MS);
    for (const month of new Set([monthOf(yesterday), monthOf(today)])) await createResultPartition(database.sql, month);
    const board = await insertBoard(database.db, {
      id: 'bench',
      title: 'bench',
      order: 'HIGH_FIRST',
      aggregate: 'BEST',
      maxScore: 1_000_000,
      periods: ['ALL_TIME', 'DAILY'],
      regions: [],
      topSize: 10,
      retention: DEFAULT_RETENTION,
    });
    if (!board) throw new Error('could not create the board');

    // Two results a player over yesterday, recorded as they were achieved (before the day closed),
    // in time order as a live day's log is; many players share a score.
    let started = performance.now();
    // Seeding is no request: the session's statement timeout is lifted for it.
    await database.sql.begin(async (tx) => {
      await tx`set local statement_timeout = 0`;
      await tx`
      insert into results (board_id, match_id, player_id, region, score, achieved_at, recorded_at)
      select 'bench', 'm' || n || '-' || i, 'p' || lpad(i::text, 8, '0'), null, (i::bigint * (case n when 1 then 7919 else 104729 end)) % 100003, at, at
      from generate_series(1, ${PLAYERS}) as i, generate_series(1, 2) as n,
           lateral (select ${yesterday.toISOString()}::timestamptz + ((((i::bigint * 2 + n) * 2654435761) % 4294967291)::float8 / 4294967291) * interval '1 day' as at) as t
      order by at`;
    });
    await database.sql`analyze results`;
    console.log(`seeded ${PLAYERS.toLocaleString('en-US')} players (${(2 * PLAYERS).toLocaleString('en-US')} results) in ${seconds(started).toFixed(1)} s`);

    const day = { board, bucket: bucketAt(board, 'DAILY', yesterday), region: null };
    const key = { boardId: 'bench', period: 'DAILY' as const, bucket: day.bucket.label, region: '' };

    /** Submissions from WRITERS loops, one result a call, into today's bucket, until `done` settles; answers each call's milliseconds. */
    let match = 0;
    async function submissions(done: Promise<unknown>): Promise<number[]> {
      const latencies: number[] = [];
      let stop = false;
      void done.finally(() => (stop = true));
      await Promise.all(
        Array.from({ length: WRITERS }, async (_, w) => {
          while (!stop) {
            const at = performance.now();
            const n = match++;
            await parts.writes.submitScores([{ board: 'bench', playerId: `w${w}-${n % 5_000}`, matchId: `s${n}`, score: n % 100_003 }], {
              keyId: null,
              startedAt: at,
            });
            latencies.push(performance.now() - at);
          }
        }),
      );
      return latencies;
    }
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

    // Warm-up: the write path's statements prepared, the day's log in the cache as after a day of writes.
    await submissions(sleep(2_000));
    const rounds: { freezeS: number; size: number; without: number; during: number }[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const without = p99(await submissions(sleep(SECONDS * 1000)));
      await parts.storage.frozen.drop([key]);
      started = performance.now();
      const freezing = closeCalendarLists(parts, [day]);
      const during = p99(await submissions(freezing));
      const [frozen] = await freezing;
      const freezeS = seconds(started);
      rounds.push({ freezeS, size: frozen?.size ?? 0, without, during });
      console.log(
        `round ${r + 1}: froze ${(frozen?.size ?? 0).toLocaleString('en-US')} players in ${freezeS.toFixed(1)} s; ` +
          `submissions p99 ${without.toFixed(1)} ms without a freeze, ${during.toFixed(1)} ms during it (${((during / without - 1) * 100).toFixed(0)} %)`,
      );
    }
    const ratio = median(rounds.map((r) => r.during / r.without));
    console.log(
      `median of ${ROUNDS} rounds: freeze ${median(rounds.map((r) => r.freezeS)).toFixed(1)} s (target < 60 s at 1,000,000); ` +
        `submissions p99 ${median(rounds.map((r) => r.without)).toFixed(1)} ms without, ${median(rounds.map((r) => r.during)).toFixed(1)} ms during ` +
        `(median ratio ${ratio.toFixed(2)}; target ≤ 1.20)`,
    );
    await parts.backlog.flush();
  } finally {
    await redis.quit();
    await database.close();
    await deleteKeysUnder(REDIS_URL, keyPrefix);
    const admin = postgres(SERVER_URL, { max: 1, onnotice: () => {} });
    await admin`drop database if exists ${admin(databaseUrl.pathname.slice(1))} with (force)`;
    await admin.end();
  }
}

await main();
