/**
 * What every part of the bench agrees on: where the stores are, the bench's database and key
 * prefix, its API keys, its board and how its players are named.
 *
 * BENCH_POSTGRES_URL (default postgres://postgres@127.0.0.1:5432/postgres) names the PostgreSQL
 * server, on which the bench keeps its own database `lb_bench`; REDIS_URL (default
 * redis://127.0.0.1:6379) the Redis, where the bench's keys start with `bench:`.
 */
import type { RedisTarget } from '../../src/redis.js';

export const POSTGRES_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
export const BENCH_DATABASE = 'lb_bench';
export const BENCH_KEY_PREFIX = 'bench:';

/** Fixed keys: the bench database is the bench's alone and never serves anybody. */
export const BENCH_ADMIN_KEY = 'bench-admin-key-0000000000000000';
export const BENCH_SERVER_KEY = 'bench-server-key-000000000000000';

/** The board every scenario uses: HIGH_FIRST, BEST, every period, maxScore 1e9. */
export const BOARD_ID = 'bench';
export const MAX_SCORE = 1_000_000_000;

/** How many players the seed loads. */
export const PLAYERS = 1_000_000;

/** Players p1 … p{FRIEND_READERS} have FRIENDS_EACH friends: the friends scenario reads them. */
export const FRIEND_READERS = 1_000;
export const FRIENDS_EACH = 200;

/** The URL of a database on the bench's PostgreSQL server. Default: the bench's own, {@link BENCH_DATABASE}. */
export function benchDatabaseUrl(database = BENCH_DATABASE): string {
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${database}`;
  return url.toString();
}

/**
 * Where a scenario runs: which database, which Redis (a node or a cluster) under which key prefix,
 * which board and how many players it has. Every scenario runs on {@link BENCH_TARGET} unless the
 * cluster run says otherwise.
 */
export interface BenchTarget {
  /** How reports name it, e.g. "single node" or "cluster, 8 shards". */
  label: string;
  /** The PostgreSQL database's name. Default {@link BENCH_DATABASE}. */
  database: string;
  /** The index's Redis: a node's URL, or a cluster's seed nodes. Default {@link REDIS_URL}. */
  redis: RedisTarget;
  /** Default {@link BENCH_KEY_PREFIX}. */
  keyPrefix: string;
  /** Default {@link BOARD_ID}. */
  boardId: string;
  /** The board's shards (fixed when it is created). Default 1. */
  shards: number;
  /** Players p1 … p{players}, each ranked on the board. Default {@link PLAYERS}. */
  players: number;
  /**
   * Which players have a profile: every `namedEvery`-th (p{n}, p{2n}, …); the others never had
   * upsertPlayer (no row in players), as in a game where few players name themselves. Default 1:
   * every player.
   */
  namedEvery?: number;
  /** Variables the service is started with beside the target's (REDIS_REPLICA_URLS, say). Default: none. */
  serviceEnv?: Record<string, string>;
}

/** The bench board of every scenario but the cluster run: 1,000,000 players, one shard, the single Redis node. */
export const BENCH_TARGET: BenchTarget = {
  label: 'single node',
  database: BENCH_DATABASE,
  redis: REDIS_URL,
  keyPrefix: BENCH_KEY_PREFIX,
  boardId: BOARD_ID,
  shards: 1,
  players: PLAYERS,
};

/** Player number i (1-based) is `p{i}`. */
export const playerId = (i: number) => `p${i}`;

/** The players of a target with a profile (see BenchTarget.namedEvery), in order. */
export const namedPlayers = (target: Pick<BenchTarget, 'players' | 'namedEvery'>): string[] => {
  const every = target.namedEvery ?? 1;
  return Array.from({ length: Math.floor(target.players / every) }, (_, i) => playerId((i + 1) * every));
};

/** A player picked uniformly at random among `players`. */
export const randomPlayer = (players = PLAYERS) => playerId(1 + Math.floor(Math.random() * players));
