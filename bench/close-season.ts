/**
 * How long closing a season of a million players takes: seeds board_scores in bulk with SQL into
 * a database of its own, closes the season through the same job closeSeason uses, and prints the
 * seconds. Run by hand, not in the test suite:
 *
 *     npx tsx bench/close-season.ts [players]
 *
 * Environment: BENCH_POSTGRES_URL (default postgres://postgres@127.0.0.1:5432/postgres) names the
 * server, BENCH_REDIS_URL (default redis://127.0.0.1:6379) the Redis whose season keys are dropped.
 * The database and the keys it makes are removed at the end.
 */
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { buildApp } from '../src/app.js';
import { insertBoard } from '../src/db/boards.js';
import { createDatabase, ensureDatabase, migrateDatabase } from '../src/db/client.js';
import { insertSeason } from '../src/db/seasons.js';
import { closeSeason } from '../src/writes/close-buckets.js';
import { createLogger } from '../src/logger.js';
import { DEFAULT_RETENTION } from '../src/model/board.js';
import { createRedis } from '../src/redis.js';

const PLAYERS = Number(process.argv[2] ?? 1_000_000);
const SERVER_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const run = randomBytes(3).toString('hex');
const databaseUrl = new URL(SERVER_URL);
databaseUrl.pathname = `/lb_bench_close_${run}`;
const keyPrefix = `lbbench:${run}:`;

const seconds = (since: number) => ((performance.now() - since) / 1000).toFixed(2);

async function main(): Promise<void> {
  await ensureDatabase(databaseUrl.toString());
  await migrateDatabase(databaseUrl.toString());
  const database = createDatabase(databaseUrl.toString(), { timeouts: null });
  const redis = createRedis(process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379', { keyPrefix });
  await redis.connect();
  try {
    const { parts: services } = buildApp({ database, redis, log: createLogger('warn') });
    const board = await insertBoard(database.db, {
      id: 'bench',
      title: 'bench',
      order: 'HIGH_FIRST',
      aggregate: 'BEST',
      maxScore: 1_000_000,
      periods: ['ALL_TIME', 'SEASON'],
      regions: ['eu'],
      topSize: 10,
      retention: DEFAULT_RETENTION,
    });
    const startsAt = new Date(Date.now() - 86_400_000);
    const inserted = await insertSeason(database.db, { boardId: 'bench', name: 'bench', startsAt, endsAt: null });
    const season = 'season' in inserted ? inserted.season : null;
    if (!board || !season) throw new Error('could not create the board and its season');

    // A season of PLAYERS players, each also on the ALL_TIME list, so the freeze reads its rows out
    // of a table twice that size; many share a score, and one in a thousand is flagged.
    let started = performance.now();
    await database.sql`
      insert into board_scores (board_id, period, bucket, region, player_id, score, reached_at)
      select 'bench', period, bucket, '', 'p' || g, (g::int8 * 7919) % 100000, ${startsAt.toISOString()}::timestamptz + (g % 86400000) * interval '1 ms'
      from generate_series(1, ${PLAYERS}) as g, (values ('SEASON', ${season.id}), ('ALL_TIME', 'all')) as b(period, bucket)`;
    await database.sql`insert into players (id, flagged_at) select 'p' || g, now() from generate_series(1, ${PLAYERS}, 1000) as g`;
    await database.sql`analyze board_scores`;
    await database.sql`analyze players`;
    console.log(`seeded ${PLAYERS} players in ${seconds(started)} s`);
    await redis.zadd(`lb:{bench:SEASON:${season.id}}`, 1, 'someone');

    // Meanwhile, a write every 50 ms into the season's board scores, as the write path does: the
    // close must not hold it.
    let closing = true;
    let slowestWriteMs = 0;
    const probe = (async () => {
      for (let i = 0; closing; i++) {
        const at = performance.now();
        await database.sql`
          insert into board_scores (board_id, period, bucket, region, player_id, score, reached_at)
          values ('bench', 'SEASON', ${season.id}, '', ${`probe${i}`}, 1, now())
          on conflict do nothing`;
        slowestWriteMs = Math.max(slowestWriteMs, performance.now() - at);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();

    started = performance.now();
    const closed = await closeSeason(services, board, season.id);
    const took = seconds(started);
    closing = false;
    await probe;
    const [{ frozen }] = await database.sql<
      [{ frozen: number }]
    >`select count(*)::int as frozen from frozen_standings where period = 'SEASON' and bucket = ${season.id}`;
    const keys = await redis.exists(`lb:{bench:SEASON:${season.id}}`);
    console.log(`closed ${closed?.id ?? 'nothing'}: froze ${frozen} standings in ${took} s; season keys left: ${keys}`);
    console.log(`slowest board-score write during the close: ${slowestWriteMs.toFixed(0)} ms`);
  } finally {
    await redis.quit();
    await database.close();
    const admin = postgres(SERVER_URL, { max: 1, onnotice: () => {} });
    await admin`drop database if exists ${admin(databaseUrl.pathname.slice(1))} with (force)`;
    await admin.end();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
