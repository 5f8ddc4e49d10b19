import type { Logger } from 'pino';
import type { Storage } from '../db/storage.js';
import type { RankingIndex } from '../ranking/index.js';
import type { TopCache } from '../ranking/top-cache.js';
import type { BucketArgs, ReadBucketDeps } from '../services/buckets.js';
import type { CursorCodec } from '../services/cursor.js';
import type { ProfileCache } from '../services/profile-cache.js';
import { NameLoader } from './name-loader.js';
import { createPlaceLoader } from './place-loader.js';
import {
  type AroundArgs,
  type PageArgs,
  type ReadParts,
  type Styled,
  type Want,
  aroundOf,
  complete,
  friendsOf,
  pageOf,
  seasonResultsOf,
  sizeOf,
  standingOf,
  topOf,
  withPlayers,
} from './plain.js';
import { type RecordedLoader, achievedAtOf, createRecordedLoader, metadataOf } from './recorded-scores.js';
import type { Standing, StandingConnection, TopBoard } from './views.js';

export type { AroundArgs, PageArgs, Want } from './plain.js';

/**
 * The read side, as one request sees it: every read the API serves, each answering a complete
 * view, its standings given what `want` says the caller's selection asks of them (their players;
 * for long lists, the recorded times and metadata too). Plus the two fields a standing resolves on
 * its own (achievedAt, metadata: looked up once per place read for all its readers) and the names
 * of standings other parts answer (a submission's).
 */
export interface ReadSide {
  top(args: BucketArgs & Styled & { limit: number }, want: Want): Promise<TopBoard>;
  standing(args: BucketArgs & Styled & { playerId: string }, want: Want): Promise<Standing | null>;
  around(args: BucketArgs & Styled & AroundArgs, want: Want): Promise<Standing[]>;
  friends(args: BucketArgs & Styled & { playerId: string }, want: Want): Promise<Standing[]>;
  standings(args: BucketArgs & Styled & PageArgs, want: Want): Promise<StandingConnection>;
  seasonResults(args: Styled & PageArgs & { board: string; season: string }, want: Want): Promise<StandingConnection>;
  size(args: BucketArgs): Promise<number>;
  /** Gives standings read elsewhere (a submission's) their players, with the request's other names, when `asked`. */
  name(standings: readonly Standing[], asked: boolean): Promise<void>;
  achievedAt(standing: Standing): Date | Promise<Date>;
  metadata(standing: Standing): unknown;
}

/** The read side of a process: one per process, so that what it batches is every request's. */
export interface ReadSides {
  /** The read side for one request that came in at `startedAt` (performance.now()). O(1). */
  forRequest(startedAt: number): ReadSide;
}

/** What the read side uses. */
export interface ReadSideDeps {
  /** The ranking index (reads guarded while Redis may have lost it; on replicas where there are). */
  index: RankingIndex;
  topCache: TopCache;
  profiles: Pick<ProfileCache, 'load' | 'clock' | 'naming'>;
  storage: Pick<Storage, 'players' | 'seasons' | 'boardScores' | 'frozenStandings'>;
  /** What resolving a read's bucket takes: the boards, their seasons, the closed buckets, the clock. */
  buckets: ReadBucketDeps;
  cursors: CursorCodec;
  log: Logger;
  /** Every request is answered within this many milliseconds (REQUEST_TIMEOUT_MS): names are not waited for past it. */
  requestTimeoutMs: number;
}

/** What every request's read side shares. */
interface Shared {
  parts: ReadParts;
  recorded: RecordedLoader;
  deps: ReadSideDeps;
}

/**
 * The batching over the plain reads (plain.ts), per request:
 * - places: one place loader for the process (place-loader.ts), so single players' places of every
 *   request in one pass of the event loop share index calls, on one node naming their players in
 *   the same step;
 * - names: one name loader for the request (name-loader.ts), whose load waits for the request's
 *   other naming reads when it has some (Want.withOthers), and goes through the profile cache,
 *   itself one look-up per pass for every request;
 * - recorded fields: one loader for the process, remembered per place read.
 * Nothing here depends on how the document is written (its name, its variables' names): only on
 * what it selects.
 */
class RequestReads implements ReadSide {
  private readonly names: NameLoader;

  constructor(
    private readonly shared: Shared,
    startedAt: number,
  ) {
    this.names = new NameLoader(shared.deps, startedAt);
  }

  /** `read`, holding the request's names until it is in when other root fields name players too. */
  private held<T>(want: Want, read: Promise<T>): Promise<T> {
    return want.withOthers ? this.names.after(read) : read;
  }

  async top(args: BucketArgs & Styled & { limit: number }, want: Want): Promise<TopBoard> {
    const top = await this.held(want, topOf(this.shared.parts, args, want.metadata));
    // The players only: a view's recorded times are looked up once for all its readers (recorded-scores.ts).
    await withPlayers(this.names, top.entries, want.player);
    return top;
  }

  async standing(args: BucketArgs & Styled & { playerId: string }, want: Want): Promise<Standing | null> {
    const { parts } = this.shared;
    if (want.withOthers || parts.places.named) {
      const standing = await this.held(want, standingOf(parts, args, want.metadata));
      if (standing) await withPlayers(this.names, [standing], want.player);
      return standing;
    }
    // A lone standing on a Redis Cluster (whose place reads bring no profiles) asks for the
    // profile at once, beside the rank, rather than the name a round trip after the rank. (On
    // one node a sharded board's lone standing takes the path above: its name follows its place.)
    // A player without a standing has no name to answer, nor its error.
    const players = want.player ? this.names.load([args.playerId]) : undefined;
    players?.catch(() => undefined);
    const standing = await standingOf(parts, args, want.metadata);
    if (standing && players) standing.player = (await players)[0];
    return standing;
  }

  async around(args: BucketArgs & Styled & AroundArgs, want: Want): Promise<Standing[]> {
    const around = await this.held(want, aroundOf(this.shared.parts, args, want.metadata));
    await withPlayers(this.names, around, want.player);
    return around;
  }

  async friends(args: BucketArgs & Styled & { playerId: string }, want: Want): Promise<Standing[]> {
    const { parts } = this.shared;
    const friends = await this.held(want, friendsOf(parts, args, want.metadata));
    await complete(this.names, parts, friends, want);
    return friends;
  }

  async standings(args: BucketArgs & Styled & PageArgs, want: Want): Promise<StandingConnection> {
    return this.completed(await this.held(want, pageOf(this.shared.parts, args, want.metadata)), want);
  }

  async seasonResults(args: Styled & PageArgs & { board: string; season: string }, want: Want): Promise<StandingConnection> {
    return this.completed(await this.held(want, seasonResultsOf(this.shared.parts, { ...args, withMetadata: want.metadata })), want);
  }

  /** A page whose standings have what `want` asks of them. */
  private async completed(page: StandingConnection, want: Want): Promise<StandingConnection> {
    await complete(
      this.names,
      this.shared.parts,
      page.edges.map((edge) => edge.node),
      want,
    );
    return page;
  }

  size(args: BucketArgs): Promise<number> {
    return sizeOf(this.shared.parts, args);
  }

  name(standings: readonly Standing[], asked: boolean): Promise<void> {
    return withPlayers(this.names, standings, asked);
  }

  achievedAt(standing: Standing): Date | Promise<Date> {
    return achievedAtOf(this.shared.recorded, standing.source);
  }

  metadata(standing: Standing): unknown {
    return metadataOf(this.shared.recorded, standing.source);
  }
}

/**
 * The process's read side over `deps`: the plain reads (plain.ts) with their batching (a place
 * loader and a recorded-fields loader for the process, a name loader per request). Built once per
 * process; each request takes its own view of it (forRequest).
 */
export function createReadSide(deps: ReadSideDeps): ReadSides {
  const { index, topCache, storage, buckets, cursors, log, profiles } = deps;
  const parts: ReadParts = { buckets, index, topCache, places: createPlaceLoader(index, profiles.naming), storage, cursors, log };
  const shared: Shared = { parts, recorded: createRecordedLoader({ storage, log }), deps };
  return {
    forRequest: (startedAt) => new RequestReads(shared, startedAt),
  };
}
