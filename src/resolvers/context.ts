import { type Caller, type Keyring, bearerKey } from '../auth/keys.js';
import type { RankStyle } from '../model/board.js';
import type { TopEvent } from '../pubsub/top-feed.js';
import type { OvertakenView } from '../pubsub/friend-overtook.js';
import type { ReadSide, ReadSides } from '../reads/read-side.js';
import type { BucketReadSides, BucketReads } from '../reads/bucket-reads.js';
import type { LeaguePlacementView, LeagueReadSides, LeagueReads } from '../reads/league.js';
import type { BucketArgs } from '../services/buckets.js';
import type { RateLimits } from '../services/rate-limits.js';
import type { AdminSide } from '../writes/admin.js';
import type { WriteSide } from '../writes/index.js';
import type { WebhookAdmin } from '../writes/webhooks.js';
import type { Records } from '../writes/records.js';
import type { TopBoard, TopRead } from '../reads/views.js';
import { NAMES_MARGIN_MS } from '../reads/name-loader.js';
import { deadlineSignal, settleBy } from '../deadline.js';

/** topChanged and cohortChanged, bound to this process's feeds (src/pubsub/top-changed.ts, cohort-changed.ts). */
export interface LiveTops {
  /** The bucket's current view, then one each time it changes, until `signal` aborts. */
  watch(args: BucketArgs & { limit: number; rankStyle?: RankStyle | null | undefined }, signal?: AbortSignal): Promise<AsyncIterable<TopEvent>>;
  /** One event's view, in the rank style asked for. */
  view(event: TopEvent, rankStyle?: RankStyle | null): TopBoard | Promise<TopBoard>;
  /** A player's league placement (its names loaded), then one each time it changes, until `signal` aborts. */
  cohort(args: { board: string; playerId: string }, signal?: AbortSignal): Promise<AsyncIterable<LeaguePlacementView>>;
  /** A player's friends passing them on the board, from now on (src/pubsub/friend-overtook.ts). */
  overtaken(args: { board: string; playerId: string }, signal?: AbortSignal): Promise<AsyncIterable<OvertakenView>>;
}

/** Per request: who asks, and the sides that answer (the resolvers call them, nothing else). */
export interface Context {
  /** Null for anonymous callers and for keys nobody issued. */
  caller: Caller | null;
  /** Submissions, boards, seasons, profiles, flags, erasure (src/writes/). */
  writes: WriteSide;
  /** What operators run: keys, rebuilds, buckets, store health, moderation lists (src/writes/admin.ts). */
  admin: AdminSide;
  /** Boards, seasons and players as recorded (src/writes/records.ts). */
  records: Records;
  /** Webhooks and their deliveries, for the admin (src/writes/webhooks.ts). */
  webhooks: WebhookAdmin;
  live: LiveTops;
  /** The read side, as this request sees it (its names are one load: see reads/read-side.ts). */
  reads: ReadSide;
  /** A board's buckets as a whole: which a period has, its next reset, a player's history, a score distribution (src/reads/bucket-reads.ts). */
  buckets: BucketReads;
  /** A league's rounds: a player's placement, a cohort, the tiers (src/reads/league.ts). */
  leagues: LeagueReads;
  /** Aborted when the client goes away. */
  signal?: AbortSignal | undefined;
  /** The client's address, for per-client limits. */
  client: string;
  /** performance.now() when the request came in; its deadline is this plus REQUEST_TIMEOUT_MS. */
  startedAt: number;
  /**
   * Set by a request whose answer may be shared (http/response-cache.ts): each `top` read appends
   * what it was built from (the top cache's read, the board's definition). Default: unset.
   */
  topReads?: TopRead[];
}

/**
 * A signal that aborts `marginMs` before the deadline of a request that came in at `startedAt`,
 * for the waits on PostgreSQL a request can do without (names, a key lookup): leaving the margin
 * to answer without them.
 */
const beforeDeadline = (deps: Pick<ContextDeps, 'requestTimeoutMs'>, startedAt: number, marginMs: number): AbortSignal =>
  deadlineSignal(startedAt + deps.requestTimeoutMs - marginMs - performance.now(), 'PostgreSQL');

/** What a request context is made of (11 members): who the key is, and the process's sides. */
export interface ContextDeps {
  keyring: Pick<Keyring, 'identify'>;
  limits: Pick<RateLimits, 'authFailureAllowed' | 'authFailed'>;
  /** Every request is answered within this many milliseconds (REQUEST_TIMEOUT_MS). */
  requestTimeoutMs: number;
  reads: ReadSides;
  buckets: BucketReadSides;
  leagues: LeagueReadSides;
  writes: WriteSide;
  admin: AdminSide;
  records: Records;
  webhooks: WebhookAdmin;
  live: LiveTops;
}

export interface RequestFacts {
  authorization: string | null | undefined;
  /** The peer's address. */
  client: string | undefined;
  signal?: AbortSignal | undefined;
}

export async function createContext(deps: ContextDeps, { authorization, client, signal }: RequestFacts): Promise<Context> {
  const startedAt = performance.now();
  const key = bearerKey(authorization);
  const address = client ?? 'unknown';
  // Made before the key lookup, so that its names may take what Redis answered since the request came in.
  const reads = deps.reads.forRequest(startedAt);
  return {
    signal,
    client: address,
    startedAt,
    // A stored key is looked up in PostgreSQL: not past the request's bound (UNAVAILABLE then).
    caller: key ? await settleBy(identify(deps, key, address), beforeDeadline(deps, startedAt, NAMES_MARGIN_MS)) : null,
    reads,
    buckets: deps.buckets.forRequest((standings, asked) => reads.name(standings, asked)),
    leagues: deps.leagues.forRequest((standings, asked) => reads.name(standings, asked)),
    writes: deps.writes,
    admin: deps.admin,
    records: deps.records,
    webhooks: deps.webhooks,
    live: deps.live,
  };
}

/**
 * The key's caller. Unknown keys are budgeted per client (rate-limits.ts): past the budget, a key
 * that would need a PostgreSQL lookup is refused RATE_LIMITED before it, so guessing keys costs
 * the database nothing; keys of the environment and cached lookups are answered as always.
 */
async function identify(deps: Pick<ContextDeps, 'keyring' | 'limits'>, key: string, client: string): Promise<Caller | null> {
  const caller = await deps.keyring.identify(key, { beforeLookup: () => deps.limits.authFailureAllowed(client) });
  if (!caller) await deps.limits.authFailed(client);
  return caller;
}
