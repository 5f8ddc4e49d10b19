/**
 * How fast a bucket is rebuilt: `npx tsx bench/rebuild.ts [members] [rounds] [period] [region]`
 * (default 1,000,000, 3, ALL_TIME and the global list).
 *
 * Seeds one bucket in bulk (generate_series) in a database of its own, with some flagged players
 * among them: for ALL_TIME, its board-score rows; for MONTHLY or SEASON (buckets a BEST board
 * derives from the score log, see keepsBoardScores), two results a member in this month's
 * partition of the log, the season open since the month began. With a region, every row is in
 * it and the region's bucket is rebuilt.
 * It rebuilds the bucket's sorted set, and prints members per second;
 * beside it, the same rows streamed from PostgreSQL alone, and a raw pipelined ZADD of the same
 * members into another key, so that each side's cost shows; the three interleaved for a few rounds,
 * each reported by its median. Everything it made is removed at the end.
 *
 * BENCH_POSTGRES_URL (default postgres://postgres@127.0.0.1:5432/postgres) names the server the
 * bench database is created on; REDIS_URL (default redis://127.0.0.1:6379) the Redis.
 */
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { findBoard, insertBoard } from '../src/db/boards.js';
import { streamBoardScores } from '../src/db/board-scores.js';
import { type Database, createDatabase, ensureDatabase, migrateDatabase } from '../src/db/client.js';
import { insertSeason } from '../src/db/seasons.js';
import { rebuildBucket } from '../src/writes/rebuild-bucket.js';
import { type Board, type BoardScoreRow, DEFAULT_RETENTION } from '../src/model/board.js';
import { type Bucket, bucketAt } from '../src/model/buckets.js';
import { seasonBucket } from '../src/services/season-directory.js';
import { type BoardBucket, createRankingIndex } from '../src/ranking/index.js';
import { bucketKey } from '../src/ranking/keys.js';
import { packAt, packedDirection, packingFor } from '../src/ranking/packing.js';
import { createRedis, deleteKeysUnder } from '../src/redis.js';
import { createResultPartition, monthOf } from '../src/db/partitions.js';
import { createStorage } from '../src/db/storage.js';
import { cpuSince, sampleCpu, waitForQuiet } from './lib/cpu.js';
import { redisPid } from './scenarios/cluster.js';
import { median } from './lib/median.js';
import { boardScoreList } from '../src/services/buckets.js';

const MEMBERS = Number(process.argv[2] ?? 1_000_000);
const ROUNDS = Number(process.argv[3] ?? 3);
const PERIOD = (process.argv[4] ?? 'ALL_TIME') as 'ALL_TIME' | 'MONTHLY' | 'SEASON';
if (PERIOD !== 'ALL_TIME' && PERIOD !== 'MONTHLY' && PERIOD !== 'SEASON') throw new Error('the period is ALL_TIME, MONTHLY or SEASON');
/** The bucket's region, or null for the global list. Every seeded result and board score is in it. */
const REGION = process.argv[5] ?? null;
const FLAGGED_EVERY = 1_000;
const POSTGRES_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

const run = `${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
const databaseUrl = new URL(POSTGRES_URL);
databaseUrl.pathname = `/lb_bench_${run}`;
const keyPrefix = `lbbench:${run}:`;

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const seconds = (since: number) => (performance.now() - since) / 1000;

async function seed(sql: postgres.Sql): Promise<number> {
  if (PERIOD === 'ALL_TIME') {
    // Player i scores (i * 7919) mod 1,000,003 (many ties), reached i seconds before now.
    await sql`
      insert into board_scores (board_id, period, bucket, region, player_id, score, reached_at)
      select 'bench', 'ALL_TIME', 'all', ${REGION ?? ''}, 'p' || lpad(i::text, 8, '0'), (i::bigint * 7919) % 1000003, now() - make_interval(secs => i)
      from generate_series(1, ${MEMBERS}) as i`;
  } else {
    // Two results a player this month, at times spread over the month as players come and go
    // (a multiplicative hash of the result's number), written in the order they would arrive (by
    // time): the log's heap is in time order, its primary key in player order, as a live month's
    // are. The better one is the board score, found by the rebuild in the log.
    await createResultPartition(sql, monthOf(new Date()));
    const monthStart = sql`date_trunc('month', now() at time zone 'UTC') at time zone 'UTC'`;
    await sql`
      insert into results (board_id, match_id, player_id, region, score, achieved_at)
      select 'bench', 'm' || n, 'p' || lpad(i::text, 8, '0'), ${REGION}::text, (i::bigint * (case n when 1 then 7919 else 104729 end)) % 1000003,
             ${monthStart} + (now() - ${monthStart}) * ((((i::bigint * 2 + n) * 2654435761) % 4294967291)::float8 / 4294967291)
      from generate_series(1, ${MEMBERS}) as i, generate_series(1, 2) as n
      order by 6`;
  }
  // A profile for one player in ten, and a flag for one in a thousand: the rebuild joins them.
  await sql`
    insert into players (id, display_name, flagged_at, flag_reason)
    select 'p' || lpad(i::text, 8, '0'), 'player ' || i,
           case when i % ${FLAGGED_EVERY} = 0 then now() end, case when i % ${FLAGGED_EVERY} = 0 then 'bench' end
    from generate_series(10, ${MEMBERS}, 10) as i`;
  return MEMBERS - Math.floor(MEMBERS / FLAGGED_EVERY);
}

/** The same members as plain ZADDs of 10,000, two a pipeline and four pipelines in flight, into another key. */
async function rawZadd(redis: ReturnType<typeof createRedis>, key: string, at: BoardBucket, rows: readonly BoardScoreRow[]) {
  const packing = packingFor(at.board, at.bucket.period);
  const start = at.bucket.start.getTime();
  const args = rows.flatMap(([playerId, score, reachedMs]) => [packAt(at.board, packing, score, reachedMs, start), playerId]);
  const started = performance.now();
  const inFlight: Promise<unknown>[] = [];
  for (let from = 0; from < args.length; from += 20_000) {
    const pipeline = redis.pipeline();
    for (let i = from; i < Math.min(from + 20_000, args.length); i += 10_000) {
      pipeline.zadd(key, packedDirection(at.board), ...args.slice(i, i + 10_000));
    }
    inFlight.push(pipeline.exec());
    if (inFlight.length >= 4) await inFlight.shift();
  }
  await Promise.all(inFlight);
  return seconds(started);
}

/** The bucket rebuilt: this month's or ALL_TIME, or a season open since the month began (derived from the same results as the month). */
async function benchBucket(database: Database, board: Board): Promise<Bucket> {
  if (PERIOD !== 'SEASON') return bucketAt(board, PERIOD, new Date());
  const month = bucketAt(board, 'MONTHLY', new Date());
  const inserted = await insertSeason(database.db, { boardId: board.id, name: 'bench', startsAt: month.start, endsAt: null });
  if (!('season' in inserted)) throw new Error('the bench board has a season already');
  return seasonBucket(inserted.season);
}

/**
 * Leaves the seeded tables as a live board's are: vacuumed, analysed and checkpointed, so that
 * neither autovacuum (which a million fresh rows start) nor the checkpoint writing them out takes
 * the cores while a round is measured; then waits for the machine to be quiet.
 */
async function settle(sql: postgres.Sql) {
  await sql`vacuum (analyze) board_scores`;
  await sql`vacuum (analyze) results`;
  await sql`vacuum (analyze) players`;
  await sql`checkpoint`;
  await waitForQuiet({ maxWaitMs: 60_000 });
}

async function main() {
  await ensureDatabase(databaseUrl.toString());
  await migrateDatabase(databaseUrl.toString());
  const database = createDatabase(databaseUrl.toString(), { timeouts: null });
  const redis = createRedis(REDIS_URL, { keyPrefix, commandTimeoutMs: 30_000 });
  await redis.connect();
  try {
    await insertBoard(database.db, {
      id: 'bench',
      title: 'bench',
      order: 'HIGH_FIRST',
      aggregate: 'BEST',
      maxScore: 1_000_002,
      periods: ['ALL_TIME', 'MONTHLY', 'SEASON'],
      regions: REGION ? [REGION] : [],
      topSize: 10,
      retention: DEFAULT_RETENTION,
    });
    let started = performance.now();
    const expected = await seed(database.sql);
    console.log(
      `seeded ${fmt(MEMBERS)} members of ${PERIOD}${REGION ? ` in ${REGION}` : ''} (${fmt(MEMBERS - expected)} flagged) in ${seconds(started).toFixed(1)} s`,
    );
    await settle(database.sql);

    const board = (await findBoard(database.db, 'bench'))!;
    const at: BoardBucket = { board, bucket: await benchBucket(database, board), region: REGION };
    const services = { storage: createStorage(database), index: createRankingIndex(redis) };
    const list = boardScoreList(at);

    // The three are interleaved, round after round, and each is reported by its median: on two
    // shared cores one run of any of them can be a third slower than the next.
    const figures = { rebuild: [] as number[], stream: [] as number[], raw: [] as number[] };
    const watch = { redis: await redisPid(REDIS_URL) };
    const cores = (since: ReturnType<typeof sampleCpu>) => {
      const used = cpuSince(since);
      return `node ${used.loadgen ?? '?'}, PostgreSQL ${used.postgres ?? '?'}, Redis ${used.redis ?? '?'} cores`;
    };
    for (let round = 1; round <= ROUNDS; round++) {
      let cpu = sampleCpu(watch);
      started = performance.now();
      const size = await rebuildBucket(services, at);
      const rebuildSeconds = seconds(started);
      const rebuildCores = cores(cpu);
      if (size !== expected || (await redis.zcard(bucketKey(at))) !== expected) throw new Error(`rebuilt ${size} members, expected ${expected}`);

      cpu = sampleCpu(watch);
      started = performance.now();
      const rows: BoardScoreRow[] = [];
      for await (const chunk of streamBoardScores(database.sql, list)) rows.push(...chunk);
      const streamSeconds = seconds(started);
      const streamCores = cores(cpu);

      // Into a fresh key while the last round's set is still held, then that one freed: as the
      // rebuild writes its key while the live one is held, so Redis grows its memory in both.
      const rawKey = `${bucketKey(at)}#raw${round}`;
      cpu = sampleCpu(watch);
      const rawSeconds = await rawZadd(redis, rawKey, at, rows);
      const rawCores = cores(cpu);
      if ((await redis.zcard(rawKey)) !== expected) throw new Error('the raw ZADD lost members');
      await redis.unlink(`${bucketKey(at)}#raw${round - 1}`);

      figures.rebuild.push(rebuildSeconds);
      figures.stream.push(streamSeconds);
      figures.raw.push(rawSeconds);
      console.log(`round ${round}: rebuild  ${fmt(size / rebuildSeconds)} members/s (${rebuildCores})`);
      console.log(`         stream   ${fmt(rows.length / streamSeconds)} rows/s (${streamCores})`);
      console.log(`         raw ZADD ${fmt(rows.length / rawSeconds)} members/s (${rawCores}; packing not timed)`);
    }
    const of = (all: number[]) => `${median(all).toFixed(2)} s = ${fmt(expected / median(all))}`;
    console.log(`rebuild:  ${fmt(expected)} members in ${of(figures.rebuild)} members/s (median of ${ROUNDS})`);
    console.log(`stream:   ${fmt(expected)} rows read from PostgreSQL alone in ${of(figures.stream)} rows/s`);
    console.log(`raw ZADD: ${fmt(expected)} members in ${of(figures.raw)} members/s (pipelined, no PostgreSQL)`);
  } finally {
    await database.close();
    await cleanUp(redis);
  }
}

async function cleanUp(redis: ReturnType<typeof createRedis>) {
  await deleteKeysUnder(REDIS_URL, keyPrefix);
  await redis.quit();
  const admin = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
  await admin`drop database if exists ${admin(databaseUrl.pathname.slice(1))} with (force)`;
  await admin.end();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
