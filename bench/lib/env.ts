/**
 * What every part of the bench agrees on: where the stores are, the bench's database and key
 * prefix, its API keys, its board and how its players are named.
 *
 * BENCH_POSTGRES_URL (default postgres://postgres@127.0.0.1:5432/postgres) names the PostgreSQL
 * server, on which the bench keeps its own database `lb_bench`; REDIS_URL (default
 * redis://127.0.0.1:6379) the Redis, where the bench's keys start with `bench:`.
 */
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

export function benchDatabaseUrl(): string {
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${BENCH_DATABASE}`;
  return url.toString();
}

/** Player number i (1-based) is `p{i}`. */
export const playerId = (i: number) => `p${i}`;

/** A player picked uniformly at random among `players`. */
export const randomPlayer = (players = PLAYERS) => playerId(1 + Math.floor(Math.random() * players));
