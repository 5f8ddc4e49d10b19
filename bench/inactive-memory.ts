/**
 * Redis memory before and after the inactive-players job (issue 54 part 4) on a board where 90% of
 * the players are inactive: N players' results and ALL_TIME board scores written straight into a
 * database of the script's own (every tenth player achieved a result a day ago, the others 60 days
 * ago), the sorted set loaded by rebuildBoard as the service does it, then one pass of the job
 * (inactiveAfterDays 30). Reports MEMORY USAGE of the sorted set (SAMPLES 0) and INFO memory's
 * used_memory before and after, the pass's time and its removeInactive script calls. Uses the
 * local PostgreSQL and Redis (BENCH_POSTGRES_URL, REDIS_URL) under names of its own, removed
 * afterwards. A measurement, not a timed benchmark:
 *
 *     npx tsx bench/inactive-memory.ts [players]    # default 200,000
 */
import postgres from 'postgres';
import { removeInactiveOnce } from '../src/jobs/inactive-players.js';
import { createBoard } from '../src/writes/boards.js';
import { rebuildBoard } from '../src/writes/rebuild.js';
import { resolveBoardBucket } from '../src/services/buckets.js';
import { DEFAULT_RETENTION } from '../src/model/board.js';
import { bucketKey } from '../src/ranking/keys.js';
import { scratchApp } from './lib/scratch-app.js';

const players = Number(process.argv[2] ?? 200_000);
const BOARD = 'memory';

const scratch = await scratchApp('inactive-memory');
const { app, redis, prefix } = scratch;
const mb = (bytes: number) => `${(bytes / 1_048_576).toFixed(1)} MB`;
const usedMemory = async () => Number(/used_memory:(\d+)/.exec(await redis.info('memory'))![1]);

try {
  await app.start();
  const { parts: services } = app;
  await createBoard(services, {
    id: BOARD,
    title: BOARD,
    order: 'HIGH_FIRST',
    aggregate: 'BEST',
    maxScore: 1_000_000,
    periods: ['ALL_TIME'],
    regions: [],
    topSize: 10,
    retention: DEFAULT_RETENTION,
    inactiveAfterDays: 30,
  });
  const sql = postgres(scratch.databaseUrl, { max: 1, onnotice: () => {} });
  await sql`
    insert into results (board_id, match_id, player_id, score, region, achieved_at)
    select ${BOARD}, 'm' || i, 'p' || i, (i * 7919) % 1000000, null,
           now() - (case when i % 10 = 0 then interval '1 day' else interval '60 days' end) + i * interval '1 millisecond'
    from generate_series(1, ${players}::int) as i`;
  await sql`
    insert into board_scores (board_id, period, bucket, region, player_id, score, reached_at)
    select board_id, 'ALL_TIME', 'all', '', player_id, score, achieved_at from results where board_id = ${BOARD}`;
  await sql`analyze results`;
  await sql.end();

  const members = await rebuildBoard(services, { board: BOARD, period: 'ALL_TIME', bucket: null, region: null });
  const board = (await services.boards.find(BOARD))!;
  const key = bucketKey(await resolveBoardBucket(services, { board: BOARD, period: 'ALL_TIME', bucket: null, region: null }));
  // MEMORY USAGE is not prefixed by the client: the full name.
  const keyBytes = async () => Number(await redis.call('MEMORY', 'USAGE', `${prefix}${key}`, 'SAMPLES', '0'));
  /** evalsha's calls and microseconds so far, by Redis's own count (INFO commandstats): alone on its Redis, the job's scripts. */
  const scriptStats = async () => {
    const line = /cmdstat_evalsha:calls=(\d+),usec=(\d+)/.exec(await redis.info('commandstats'));
    return { calls: Number(line?.[1] ?? 0), usec: Number(line?.[2] ?? 0) };
  };
  const before = { key: await keyBytes(), used: await usedMemory(), size: await redis.zcard(key) };

  const scriptsBefore = await scriptStats();
  const started = performance.now();
  const pass = await removeInactiveOnce(services, { batch: 500, pauseMs: 20 });
  const seconds = (performance.now() - started) / 1000;
  const scriptsAfter = await scriptStats();
  const after = { key: await keyBytes(), used: await usedMemory(), size: await redis.zcard(key) };
  const calls = (await services.metrics.storeSeconds.get()).values.filter(
    (v) => v.labels.call === 'removeInactive' && (v.metricName?.endsWith('_count') || v.metricName?.endsWith('_sum')),
  );
  const count = calls.find((v) => v.metricName?.endsWith('_count'))?.value ?? 0;
  const sum = calls.find((v) => v.metricName?.endsWith('_sum'))?.value ?? 0;

  console.log(`board ${board.id}: ${players} players, ${members} ranked after the rebuild, inactiveAfterDays ${board.inactiveAfterDays}`);
  console.log(
    `before: ${before.size} members, sorted set ${mb(before.key)} (${(before.key / before.size).toFixed(1)} B/member), Redis used_memory ${mb(before.used)}`,
  );
  console.log(
    `after:  ${after.size} members, sorted set ${mb(after.key)} (${(after.key / Math.max(1, after.size)).toFixed(1)} B/member), Redis used_memory ${mb(after.used)}`,
  );
  console.log(`pass: ${pass.removed} removed, ${pass.returned} written back, ${seconds.toFixed(1)} s (20 ms pauses included)`);
  console.log(`removeInactive calls: ${count}, mean ${count ? ((sum / count) * 1000).toFixed(2) : '-'} ms each as the client saw them (500 members a call)`);
  const scripts = scriptsAfter.calls - scriptsBefore.calls;
  console.log(
    `Redis-side (INFO commandstats, every EVALSHA during the pass): ${scripts} calls, ${scripts ? ((scriptsAfter.usec - scriptsBefore.usec) / scripts).toFixed(0) : '-'} µs each`,
  );
} finally {
  await scratch.remove();
}
