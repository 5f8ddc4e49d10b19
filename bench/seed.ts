/**
 * Loads the bench board: `npm run bench -- seed [--force]`, or `npx tsx bench/seed.ts [--force]`.
 *
 * In the bench's own database (lb_bench) it creates board `bench` (HIGH_FIRST, BEST, every period,
 * maxScore 1e9) and its open season, then 1,000,000 players in bulk, not one request per player:
 * profiles, one result each (today's: in the current bucket of every period), and their board
 * scores in the buckets the board keeps as rows (ALL_TIME; the others are derived from the log),
 * each an INSERT … SELECT over generate_series. The index is then built by the rebuild job itself
 * (rebuildBucket, over the parts the app builds), so every rank is the real one. Players p1 … p1000 get
 * 200 friends each for the friends scenario.
 *
 * Idempotent: each part is checked (row counts, the sorted sets' sizes) and loaded only when it is
 * short, so a second run is quick, a new day only loads the new DAILY bucket, and a Redis that lost
 * its keys gets them rebuilt. A Redis without the index's generation marker (new, restarted,
 * flushed: see src/ranking/generation.ts) is recovered by the service's own recovery job first, so
 * the service finds its index whole at start instead of rebuilding it again. --force empties the
 * bench database and keys first.
 *
 * The cluster run (bench/scenarios/cluster.ts) seeds other targets with it: another database, a
 * Redis Cluster, another board id, a board of several shards, fewer players (see BenchTarget).
 */
import { fileURLToPath } from 'node:url';
import { findBoard, insertBoard } from '../src/db/boards.js';
import { type Database, createDatabase, ensureDatabase, migrateDatabase } from '../src/db/client.js';
import { findLiveSeasons, insertSeason } from '../src/db/seasons.js';
import { startIndexRecovery } from '../src/jobs/index-recovery.js';
import { rebuildBucket } from '../src/writes/rebuild-bucket.js';
import { boardScoreList } from '../src/services/buckets.js';
import { createLogger } from '../src/logger.js';
import { type Board, DEFAULT_RETENTION, PERIODS, keepsBoardScores } from '../src/model/board.js';
import { bucketAt } from '../src/model/buckets.js';
import { type BoardBucket, createRankingIndex } from '../src/ranking/index.js';
import { bucketKey } from '../src/ranking/keys.js';
import { type RedisClient, createRedisClient, deleteKeysUnder } from '../src/redis.js';
import { currentOf, createSeasonDirectory, seasonBucket } from '../src/services/season-directory.js';
import { createStorage } from '../src/db/storage.js';
import { createIndexGeneration, guardReads } from '../src/ranking/generation.js';
import { createTopCache } from '../src/ranking/top-cache.js';
import { createBoardDirectory } from '../src/services/board-directory.js';
import { createProfileCache } from '../src/services/profile-cache.js';
import { DEFAULT_PROFILE_HASHES, PROFILE_KEYS_PREFIX, createProfileStore, profileHashKey } from '../src/profiles/store.js';
import { BENCH_TARGET, type BenchTarget, FRIENDS_EACH, FRIEND_READERS, MAX_SCORE, benchDatabaseUrl, namedPlayers, playerId } from './lib/env.js';

export interface SeedOptions {
  /** Empty the target's database and keys first. Default false. */
  force?: boolean;
  /** The database, Redis, board (and its shards) and players to seed. Default {@link BENCH_TARGET}. */
  target?: BenchTarget;
  /** Progress lines. Default: console.log. */
  say?: (line: string) => void;
}

export interface BenchStores {
  database: Database;
  redis: RedisClient;
  board: Board;
  /** The current bucket of every period the board keeps, global lists only. */
  buckets: BoardBucket[];
  close(): Promise<void>;
}

const DAY_MS = 86_400_000;

/** Connections to a target's stores, and its board's current buckets (after {@link seed}). */
export async function openBenchStores(target: BenchTarget = BENCH_TARGET, maxConnections = 4): Promise<BenchStores> {
  const database = createDatabase(benchDatabaseUrl(target.database), { maxConnections, timeouts: null });
  const redis = createRedisClient(target.redis, { keyPrefix: target.keyPrefix, commandTimeoutMs: 120_000 });
  await redis.connect();
  const board = await findBoard(database.db, target.boardId);
  if (!board) throw new Error(`the bench board ${target.boardId} does not exist: run \`npm run bench -- seed\` first`);
  if (board.shards !== target.shards)
    throw new Error(`the bench board ${target.boardId} has ${board.shards} shards, not ${target.shards}: seed it again with --force`);
  const season = currentOf(await findLiveSeasons(database.db, target.boardId), new Date());
  if (!season) throw new Error('the bench board has no open season: run `npm run bench -- seed` first');
  const now = new Date();
  const buckets = PERIODS.map((period): BoardBucket => ({
    board,
    bucket: period === 'SEASON' ? seasonBucket(season) : bucketAt(board, period, now),
    region: null,
  }));
  return {
    database,
    redis,
    board,
    buckets,
    close: async () => {
      await database.close();
      await redis.quit();
    },
  };
}

/**
 * Brings a target's index in line with its generation marker (see src/ranking/generation.ts) the
 * way the service does at start: where a Redis node has no marker (new, restarted, flushed) the
 * recovery job rebuilds every live bucket of the database with a key there. Waits until every
 * node is ready. O(N log N) over the board scores rebuilt.
 */
/** The service's parts the seeding uses, built as the app builds them (src/app.ts). */
function benchParts(stores: { database: Database; redis: RedisClient }) {
  const log = createLogger('warn');
  const storage = createStorage(stores.database);
  const indexGeneration = createIndexGeneration(stores.redis);
  const index = guardReads(createRankingIndex(stores.redis), indexGeneration);
  return {
    storage,
    index,
    indexGeneration,
    topCache: createTopCache((at, limit, options) => index.top(at, limit, options)),
    boards: createBoardDirectory(storage.boards),
    seasons: createSeasonDirectory(storage.seasons, stores.redis),
    profiles: createProfileCache(stores.redis, storage.players, log),
    now: () => new Date(),
    log,
  };
}

type BenchParts = ReturnType<typeof benchParts>;

async function recoverIndex(services: BenchParts, say: (line: string) => void): Promise<void> {
  const started = performance.now();
  const recovery = startIndexRecovery(services);
  try {
    await recovery.ready;
    if (services.indexGeneration.state() === 'ready') return;
    say('index: Redis holds no index generation here (new, restarted or flushed): the recovery job rebuilds every live bucket of the database');
    const deadline = Date.now() + 60 * 60_000;
    while (services.indexGeneration.state() !== 'ready') {
      if (Date.now() > deadline) throw new Error('the index recovery did not end within an hour');
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    say(`index: recovered in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  } finally {
    await recovery.stop();
  }
}

/** How many profiles one warming load reads. */
const WARM_BATCH = 5_000;

/**
 * How long the profiles must still have to live for a seed to keep them. Their hashes live an hour
 * from when they were made (profiles/store.ts), all within a minute of one warming, so without this
 * a run an hour after the seed found them held, then read every name from PostgreSQL once they
 * expired during its measurement (seen twice: bench/RESULTS.md, 2026-12-05).
 */
const PROFILES_MUST_LIVE_MS = 20 * 60_000;

/**
 * Every named player's profile held in Redis (every player's, unless the target names only some:
 * BenchTarget.namedEvery), as in a deployment whose players have been read or renamed since the
 * profiles' hashes were made: loaded through the service's own profile cache (a miss reads
 * PostgreSQL and keeps what it read), unless a random sample shows them held already with at least
 * PROFILES_MUST_LIVE_MS to live. Hashes about to expire are dropped first, so that the warming makes
 * them anew. Players without a profile are left as upsertPlayer leaves them: nothing in Redis until
 * a read asks.
 */
async function warmProfiles(services: Pick<BenchParts, 'profiles'>, target: BenchTarget, redis: RedisClient, say: (line: string) => void): Promise<void> {
  const named = namedPlayers(target);
  const sample = Array.from({ length: 200 }, (_, i) => named[(i * 7_919 + Date.now()) % named.length]!);
  const held = (await createProfileStore(redis).read(sample)).held.every((entry) => 'profile' in entry);
  const leastLeftMs = Math.min(...(await Promise.all(sample.map((id) => redis.pttl(profileHashKey(id, DEFAULT_PROFILE_HASHES))))));
  if (held && leastLeftMs >= PROFILES_MUST_LIVE_MS) return;
  if (held) {
    say(`profiles: their hashes expire within ${Math.round(leastLeftMs / 60_000)} min; made anew`);
    // The changes token goes too, as in a seed from nothing: the next change writes it.
    await deleteKeysUnder(target.redis, `${target.keyPrefix}${PROFILE_KEYS_PREFIX}`, { commandTimeoutMs: 60_000 });
  }
  await warmNamed(services, named);
  say(`profiles: ${named.length.toLocaleString('en-US')} held in Redis`);
}

/** These players' profiles held in Redis, read through the service's profile cache, WARM_BATCH at a time. */
async function warmNamed(services: Pick<BenchParts, 'profiles'>, ids: readonly string[]): Promise<void> {
  for (let from = 0; from < ids.length; from += WARM_BATCH) await services.profiles.warm(ids.slice(from, from + WARM_BATCH));
}

/**
 * A target's profiles in Redis as its seed leaves them: every one dropped, then the named players'
 * read in again (see warmProfiles), so that no player without a profile is remembered yet. For a
 * scenario that measures the first reads of such players.
 */
export async function resetProfiles(target: BenchTarget): Promise<void> {
  await deleteKeysUnder(target.redis, `${target.keyPrefix}${PROFILE_KEYS_PREFIX}`, { commandTimeoutMs: 60_000 });
  const stores = await openBenchStores(target);
  try {
    await warmNamed(benchParts(stores), namedPlayers(target));
  } finally {
    await stores.close();
  }
}

/**
 * Every player's profile, or that they have none, held in Redis, through the service's profile
 * cache: as each player's first result through the service leaves it (ProfileCache.remember), or
 * their first read. The seed writes the board by SQL, which tells the profile cache nothing.
 */
export async function warmEveryProfile(target: BenchTarget): Promise<void> {
  const stores = await openBenchStores(target);
  try {
    const services = benchParts(stores);
    await warmNamed(
      services,
      Array.from({ length: target.players }, (_, i) => playerId(i + 1)),
    );
  } finally {
    await stores.close();
  }
}

/** Seeds what is missing; see the file's header. Answers in seconds how long it took. */
export async function seed(options: SeedOptions = {}): Promise<number> {
  const target = options.target ?? BENCH_TARGET;
  const { players, boardId } = target;
  const say = options.say ?? ((line: string) => console.log(line));
  const started = performance.now();
  const took = (since: number) => `${((performance.now() - since) / 1000).toFixed(1)} s`;
  const databaseUrl = benchDatabaseUrl(target.database);

  await ensureDatabase(databaseUrl);
  await migrateDatabase(databaseUrl);
  const database = createDatabase(databaseUrl, { maxConnections: 2, timeouts: null });
  const sql = database.sql;
  try {
    if (options.force) {
      say(`--force: emptying ${target.database} and the keys under ${target.keyPrefix}`);
      await sql`truncate board_scores, results, result_keys, friendships, players, seasons, frozen_buckets, frozen_standings`;
      await sql`delete from boards where id = ${boardId}`;
      // Patterns are not prefixed by ioredis, so deleteKeysUnder lists them with a plain client.
      await deleteKeysUnder(target.redis, target.keyPrefix, { commandTimeoutMs: 60_000 });
    }
    const now = new Date();
    const existing = await findBoard(database.db, boardId);
    if (existing && existing.shards !== target.shards) {
      throw new Error(`board ${boardId} in ${target.database} has ${existing.shards} shards, not ${target.shards}: seed again with --force`);
    }
    if (!existing) {
      await insertBoard(database.db, {
        id: boardId,
        title: 'Benchmark',
        order: 'HIGH_FIRST',
        aggregate: 'BEST',
        maxScore: MAX_SCORE,
        periods: [...PERIODS],
        regions: [],
        topSize: 10,
        retention: DEFAULT_RETENTION,
        shards: target.shards,
      });
      say(`created board ${boardId} (${target.shards} shard${target.shards === 1 ? '' : 's'})`);
    }
    if (!currentOf(await findLiveSeasons(database.db, boardId), now)) {
      await insertSeason(database.db, { boardId, name: 'bench season', startsAt: new Date(now.getTime() - 7 * DAY_MS), endsAt: null });
      say('started its season');
    }

    // Player i scores (i * 2654435761) mod (1e9 + 1): spread over the whole range, few ties. Every
    // score was reached today, in player order, so it falls in the current bucket of every period.
    const dayStart = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
    const spanMs = Math.max(1, now.getTime() - dayStart);
    const score = sql`(i::int8 * 2654435761) % ${MAX_SCORE + 1}`;
    const reachedAt = sql`to_timestamp((${dayStart}::float8 + floor(i::float8 * ${spanMs} / ${players + 1})) / 1000.0)`;
    await sql`set synchronous_commit = off`;
    let loaded = false;
    /** Each player's result of today under match `matchId`: the log and its idempotency keys (result_keys, see src/db/schema.ts) together, as the write path writes them. */
    const logResults = (matchId: string) => sql`
      with keyed as (
        insert into result_keys (board_id, player_id, match_id, achieved_at)
        select ${boardId}, 'p' || i, ${matchId}, ${reachedAt} from generate_series(1, ${players}) as i
        on conflict do nothing
        returning board_id, player_id, match_id, achieved_at)
      insert into results (board_id, match_id, player_id, score, achieved_at)
      select board_id, match_id, player_id, (substr(player_id, 2)::int8 * 2654435761) % ${MAX_SCORE + 1}, achieved_at from keyed`;

    const namedEvery = target.namedEvery ?? 1;
    const [{ profiles }] = await sql<[{ profiles: number }]>`select count(*)::int as profiles from players where id like 'p%'`;
    if (profiles < Math.floor(players / namedEvery)) {
      const at = performance.now();
      await sql`
        insert into players (id, display_name)
        select 'p' || i, 'Player ' || i from generate_series(${namedEvery}::int, ${players}::int, ${namedEvery}::int) as i
        on conflict do nothing`;
      say(`players: ${Math.floor(players / namedEvery).toLocaleString('en-US')} profiles in ${took(at)}`);
      loaded = true;
    }

    const [{ results }] = await sql<[{ results: number }]>`
      select count(*)::int as results from results where board_id = ${boardId} and match_id = 'seed'`;
    if (results < players) {
      const at = performance.now();
      await logResults('seed');
      say(`results: ${players.toLocaleString('en-US')} rows in ${took(at)}`);
      loaded = true;
    }

    const [{ friends }] = await sql<[{ friends: number }]>`select count(*)::int as friends from friendships`;
    if (friends < FRIEND_READERS * FRIENDS_EACH) {
      const at = performance.now();
      // Friend j of reader r: distinct for j < 200, since 104,729 is prime to 1,000,000.
      await sql`
        insert into friendships (player_id, friend_id)
        select 'p' || r, 'p' || (1 + (r::int8 * 7919 + j::int8 * 104729) % ${players})
        from generate_series(1, ${FRIEND_READERS}) as r, generate_series(0, ${FRIENDS_EACH - 1}) as j
        on conflict do nothing`;
      say(`friends: ${FRIENDS_EACH} each for p1 … p${FRIEND_READERS} in ${took(at)}`);
      loaded = true;
    }

    const stores = await openBenchStores(target);
    try {
      const services = benchParts(stores);
      await recoverIndex(services, say);
      const index = createRankingIndex(stores.redis);
      for (const at of stores.buckets) {
        const list = { period: at.bucket.period, bucket: at.bucket.label };
        const rows = await services.storage.boardScores.countRankable(boardScoreList(at));
        if (rows !== players && keepsBoardScores(at.board, list.period)) {
          const t = performance.now();
          await sql.begin(async (tx) => {
            await tx`set local synchronous_commit = off`;
            await tx`delete from board_scores where board_id = ${boardId} and period = ${list.period} and bucket = ${list.bucket} and region = ''`;
            await tx`
              insert into board_scores (board_id, period, bucket, region, player_id, score, reached_at)
              select ${boardId}, ${list.period}, ${list.bucket}, '', 'p' || i, ${score}, ${reachedAt}
              from generate_series(1, ${players}) as i`;
          });
          say(`board scores: ${list.period} ${list.bucket}, ${players.toLocaleString('en-US')} rows in ${took(t)}`);
          loaded = true;
          await sql`analyze board_scores`;
        } else if (rows !== players) {
          // A bucket derived from the log (keepsBoardScores) with fewer players than the board (a
          // new day, week or month since the seed): each player's result of today, logged once more.
          const t = performance.now();
          await logResults(`seed-${list.bucket}`);
          say(`results: ${list.period} ${list.bucket}, ${players.toLocaleString('en-US')} more rows in ${took(t)}`);
          loaded = true;
          await sql`analyze results`;
        }
        const size = await index.size(at);
        if (size !== players || rows !== players) {
          const t = performance.now();
          const ranked = await rebuildBucket(services, at);
          const seconds = (performance.now() - t) / 1000;
          say(
            `index: ${bucketKey(at)} rebuilt with ${ranked.toLocaleString('en-US')} members in ${seconds.toFixed(1)} s (${Math.round(ranked / seconds).toLocaleString('en-US')} members/s)`,
          );
        }
      }
      await warmProfiles(services, target, stores.redis, say);
    } finally {
      await stores.close();
    }
    if (loaded) await sql`analyze`;
  } finally {
    await database.close();
  }
  const seconds = (performance.now() - started) / 1000;
  say(`seeded in ${seconds.toFixed(1)} s`);
  return seconds;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  seed({ force: process.argv.includes('--force') }).catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
