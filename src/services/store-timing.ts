import { drizzle } from 'drizzle-orm/postgres-js';
import type { Sql } from 'postgres';
import type { Database } from '../db/client.js';
import * as schema from '../db/schema.js';
import type { RedisClient } from '../redis.js';
import type { Metrics } from './metrics.js';

/**
 * `leaderboard_store_seconds` for every call the service makes to its stores, by store and
 * operation, measured at the clients every module is handed (see buildApp in src/app.ts), so no call site
 * times itself:
 * - Redis: every command and script of the client (ioredis's own commands and those registered with
 *   defineCommand), labelled with its name (`zadd`, `readTop`, ...), from the call to its reply;
 *   auto-pipelined commands included, each timed on its own.
 * - PostgreSQL: every statement of the postgres.js client and of drizzle over it, labelled with its
 *   first keyword (`select`, `insert`, `update`, `delete`, `with`, ...), and each transaction
 *   (`begin`) as one call from BEGIN to COMMIT. Statements inside a transaction are part of it.
 * A thin Proxy each: the clients' types and behaviour are unchanged, and db/client.ts (pool and
 * deadlines) is not touched. O(1) a call.
 */
export function timeStoreCalls<T extends { database: Database; redis: RedisClient }>(clients: T, metrics: Metrics): T {
  return { ...clients, database: timeDatabase(clients.database, metrics), redis: timeRedis(clients.redis, metrics) };
}

type Observe = (call: string, work: PromiseLike<unknown>) => void;

function observer(metrics: Metrics, store: 'postgres' | 'redis'): Observe {
  return (call, work) => {
    const end = metrics.storeSeconds.startTimer({ store, call });
    work.then(
      () => end({ outcome: 'ok' }),
      () => end({ outcome: 'error' }),
    );
  };
}

const timedRedis = new WeakMap<object, RedisClient>();

function timeRedis(redis: RedisClient, metrics: Metrics): RedisClient {
  const known = timedRedis.get(redis);
  if (known) return known;
  const observe = observer(metrics, 'redis');
  const builtin = new Set(redis.getBuiltinCommands());
  const isCommand = (name: string) => builtin.has(name) || Object.hasOwn(redis.scriptsSet, name);
  const proxy = new Proxy(redis, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function' || typeof property !== 'string') return value;
      if (!isCommand(property)) return value.bind(target) as unknown;
      return (...args: unknown[]) => {
        const reply = (value as (...a: unknown[]) => unknown).apply(target, args);
        if (reply instanceof Promise) observe(property, reply);
        return reply;
      };
    },
  });
  timedRedis.set(redis, proxy);
  return proxy;
}

/** The first keyword of a statement, lower case: select, insert, update, delete, with, ... (at most 16 letters). */
function statementKind(text: string): string {
  return /^\s*([A-Za-z]{1,16})/.exec(text)?.[1]?.toLowerCase() ?? 'other';
}

function timeDatabase(database: Database, metrics: Metrics): Database {
  const observe = observer(metrics, 'postgres');
  const sql = timeSql(database.sql, observe, () => metrics.postgresStatements.inc());
  return { ...database, sql, db: drizzle({ client: sql, schema, casing: 'snake_case' }) };
}

/**
 * Calls `first` once, when `query` is first awaited (postgres.js queries are lazy, and a fragment
 * is never awaited), with a way to follow the query: `work()` makes a promise of it, which the
 * caller must handle.
 */
function onFirstThen<Q extends PromiseLike<unknown>>(query: Q, first: (work: () => PromiseLike<unknown>) => void): Q {
  const then = query.then.bind(query);
  let started = false;
  (query as { then: unknown }).then = (onFulfilled?: (value: unknown) => unknown, onRejected?: (reason: unknown) => unknown) => {
    const result = then(onFulfilled, onRejected);
    if (!started) {
      started = true;
      first(() => then());
    }
    return result;
  };
  return query;
}

/**
 * postgres.js queries are lazy (they run when awaited), so each is timed from the first then() on
 * it to its end: the wait for a pooled connection counts, as it does for the caller.
 */
function timeQuery<Q extends PromiseLike<unknown>>(query: Q, call: string, observe: Observe, count: () => void): Q {
  return onFirstThen(query, (work) => {
    count();
    observe(call, work());
  });
}

const isTemplate = (strings: unknown): strings is TemplateStringsArray => Array.isArray(strings) && 'raw' in strings;

/**
 * A transaction's (or savepoint's) `tx` whose statements are counted but not timed: the
 * transaction is timed as one call. SAVEPOINT and RELEASE count one each.
 */
function countSql<S extends Sql>(tx: S, count: () => void): S {
  return new Proxy(tx, {
    apply(target, thisArg, args: unknown[]) {
      const made: unknown = Reflect.apply(target, thisArg, args);
      return isTemplate(args[0]) ? onFirstThen(made as PromiseLike<unknown>, () => count()) : made;
    },
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      if (property === 'unsafe')
        return (...args: unknown[]) => onFirstThen((value as (...a: unknown[]) => PromiseLike<unknown>).apply(target, args), () => count());
      if (property === 'savepoint') return (...args: unknown[]) => withCountedBody(value as (...a: unknown[]) => Promise<unknown>, target, args, count);
      return (value as (...a: unknown[]) => unknown).bind(target);
    },
  });
}

/** Calls begin or savepoint with its body handed a counting `tx`; counts the two statements around it. */
function withCountedBody(method: (...a: unknown[]) => Promise<unknown>, target: unknown, args: unknown[], count: () => void): Promise<unknown> {
  count();
  count();
  const wrapped = args.map((arg) => (typeof arg === 'function' ? (tx: Sql) => (arg as (tx: Sql) => unknown)(countSql(tx, count)) : arg));
  return method.apply(target, wrapped);
}

function timeSql(sql: Sql, observe: Observe, count: () => void): Sql {
  return new Proxy(sql, {
    // sql`...`: a statement; sql(value) and sql(identifier): a fragment, not timed.
    apply(target, thisArg, args: unknown[]) {
      const made: unknown = Reflect.apply(target, thisArg, args);
      const strings = args[0];
      if (!isTemplate(strings)) return made;
      return timeQuery(made as PromiseLike<unknown>, statementKind(strings[0] ?? ''), observe, count);
    },
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (property === 'unsafe')
        return (text: string, ...rest: unknown[]) =>
          timeQuery((value as (...a: unknown[]) => PromiseLike<unknown>).call(target, text, ...rest), statementKind(text), observe, count);
      if (property === 'begin') {
        return (...args: unknown[]) => {
          const transaction = withCountedBody(value as (...a: unknown[]) => Promise<unknown>, target, args, count);
          observe('begin', transaction);
          return transaction;
        };
      }
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}
