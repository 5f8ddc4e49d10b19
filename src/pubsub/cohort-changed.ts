import type { Logger } from 'pino';
import type { RedisClient } from '../redis.js';
import type { RankingIndex } from '../ranking/index.js';
import { closesAt } from '../model/board.js';
import { outcomeAt } from '../model/league.js';
import type { CohortView, LeaguePlacementView, LeagueReadSides, LeagueRound } from '../reads/league.js';
import type { Want } from '../reads/plain.js';
import type { Standing } from '../reads/views.js';
import type { ProfileCache } from '../services/profile-cache.js';
import { unavailable } from '../errors.js';
import { LatestValue } from './latest.js';
import { decodeLeagueSignal, type LeagueSignal } from './league-signal.js';
import { loadProfiles } from './top-changed.js';
import { followSubscriber } from './top-feed.js';

/**
 * cohortChanged (issue 57): a player's league placement, live. One feed per process, built like
 * topChanged's (top-feed.ts): the first local watcher of a league board subscribes to the board's
 * channel of league changes (league-signal.ts; announced by the write path after each group's
 * index write, by flags, erasures, rebuilds and the rounds' closes); each watched cohort is read
 * at most once per `coalesceMs` however many changes arrive (the first at once, the rest at the
 * end of the window), that one read (the cohort ranked, its players' names loaded once) goes to
 * every local watcher placed in it, each given only a view that differs from the last it was
 * given, and the last watcher of a board to leave unsubscribes. A second process's write reaches
 * this one's watchers through Redis's sharded pub/sub, as topChanged's do.
 */

/** What the feed takes (10 members). */
export interface CohortFeedOptions {
  /**
   * A Redis connection of the feed's own (top-feed.ts subscriberFor): once it subscribes it runs
   * nothing else. Connected on the first watch. The caller closes it after {@link CohortFeed.close}.
   */
  subscriber: RedisClient;
  /** Names each league board's channel, as the announcements publish on it. */
  index: Pick<RankingIndex, 'leagueChannel'>;
  /** The league reads: a player's placement, and a cohort (read once for all its watchers). */
  leagues: Pick<LeagueReadSides, 'placement' | 'forRequest'>;
  /** The names of a view's players, loaded once per view for every watcher. */
  profiles: Pick<ProfileCache, 'load'>;
  log: Logger;
  now(): Date;
  /** At most one read per cohort per this many milliseconds, however many changes arrive. Default 100. */
  coalesceMs?: number;
  /** How long after a failed read it is tried again. Default 1,000 ms. */
  retryMs?: number;
  /**
   * How often a watched cohort is read again once its round's close time (its end plus the
   * board's grace) has passed, until it reads closed: the closers announce the close, this only
   * covers a close finished by another pass (after a crash). Default 5,000 ms.
   */
  closePollMs?: number;
  /** Counts open watches up and down (the cohortChangedSubscribers gauge). Default: none. */
  watchers?: { inc(): void; dec(): void };
  /** Counts each view handed to a watcher (cohortChangedEvents). Default: none. */
  sent?: { inc(): void };
}

/** The feed was closed (the process is stopping): nothing more can be watched. */
export class CohortFeedClosedError extends Error {
  constructor() {
    super('the cohort feed is closed: the process is stopping');
    this.name = 'CohortFeedClosedError';
  }
}

/** A read's place in time (performance.now() when it started): a view read earlier never replaces one read later. */
type Started = number;

/** One subscription: a player of a board. */
interface Viewer {
  board: BoardWatch;
  playerId: string;
  out: LatestValue<LeaguePlacementView>;
  /** What it was last given, so an unchanged view is not sent again. */
  seen?: string;
  /** When the read of the view it was last given started. */
  seenStarted: Started;
  /** The cohort it is placed in and watched through; undefined while not placed (then it is in board.unplaced). */
  cohort?: CohortWatch | undefined;
  /** Its own reads (not placed, hidden in its cohort), coalesced like a cohort's. */
  reads: Coalesced;
  /** A round whose placement the next own read looks at first: where its first result of a round was just written. */
  hint?: string | undefined;
}

/** A read coalesced to one per window: the timer of the read due, and when the last one started. */
interface Coalesced {
  timer?: NodeJS.Timeout | undefined;
  lastReadAt: number;
}

/** One watched cohort: read once per change for all its local watchers. */
interface CohortWatch {
  key: string;
  board: BoardWatch;
  round: LeagueRound;
  tier: string;
  number: number;
  viewers: Set<Viewer>;
  /** Its visible members as last read: a change naming one of them moves it. */
  members: Set<string>;
  /** Whether it may still take a newcomer (fewer visible members than cohortSize): a change naming a player it does not know may then be one. */
  hasRoom: boolean;
  /** Its last view, names loaded, and when the read of it started: a watcher joining later starts from it. */
  last?: { view: CohortView; started: Started } | undefined;
  reads: Coalesced;
  /** Reads it again once its round's close time has passed (see CohortFeedOptions.closePollMs). */
  closePoll?: NodeJS.Timeout | undefined;
}

/** One watched league board: one Redis subscription, shared by its watched cohorts and watchers. */
interface BoardWatch {
  boardId: string;
  channel: string;
  cohorts: Map<string, CohortWatch>;
  /** Watchers not placed in the round they watch: a change naming them (or a close) reads them again. */
  unplaced: Set<Viewer>;
  viewers: number;
  /** Subscribed: every watcher's first read waits for it, so no change falls between the two. */
  ready: Promise<void>;
  /** Counts the changes heard: a first read that heard one while it ran is read again. */
  heard: number;
}

/** Asks nothing of the standings but their metadata (read with a closed round's frozen rows): names are loaded once per view here. */
const LIVE_WANT: Want = { player: false, achievedAt: false, metadata: true, withOthers: false };

/** A view's names are this feed's, loaded once per view: the read side is asked for none. */
const noNames = async (): Promise<void> => {};

/** Each cohort view's part of the fingerprint, made once per view for all its watchers. */
const cohortPrints = new WeakMap<CohortView, string>();

/** A cohort's players, order, scores and zones, as watchers compare them. O(cohort) once per view. */
function cohortPrint(cohort: CohortView): string {
  let print = cohortPrints.get(cohort);
  if (print === undefined) {
    const { bucket, tier, number, closed, promotedThrough, demotedFrom, entries } = cohort;
    print = JSON.stringify([bucket, tier, number, closed, promotedThrough, demotedFrom, entries.map((entry) => [entry.playerId, entry.rank, entry.score])]);
    cohortPrints.set(cohort, print);
  }
  return print;
}

/** What a watcher compares: its tier, outcome and standing, and its cohort's print. O(1) per watcher once the view's print is made. */
function fingerprint(view: LeaguePlacementView): string {
  const { cohort, standing } = view;
  return JSON.stringify([view.tier, view.outcome, standing && [standing.playerId, standing.rank, standing.score], cohort && cohortPrint(cohort)]);
}

/**
 * A watcher's placement as its cohort's view has it, without a read: its standing is its entry,
 * its outcome where a close now would take it (outcomeAt of its place in the board's order, as the
 * read side ranks it); null when the view does not show it (hidden, or no longer a member): its
 * own read tells then. Only for an open round: a closed one's outcomes are the recorded ones. O(cohort).
 */
function placementIn(view: CohortView, round: LeagueRound, playerId: string): LeaguePlacementView | null {
  const at = view.entries.findIndex((entry) => entry.playerId === playerId);
  if (at < 0) return null;
  const outcome = outcomeAt({ promotedThrough: view.promotedThrough, demotedFrom: view.demotedFrom }, at + 1);
  return { tier: view.tier, cohort: view, standing: view.entries[at]!, outcome, round };
}

const cohortKey = (round: string, tier: string, number: number) => JSON.stringify([round, tier, number]);

/** The longest setTimeout Node keeps (about 24.8 days); a later close is waited for in steps. */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * Builds the process's cohort feed. Each watcher costs O(1) memory beyond the views it holds; each
 * change costs, per watched cohort it may move, one cohort read (O(cohort · log N), names one
 * profile-cache load) per coalescing window, shared by every local watcher of that cohort.
 */
export function createCohortFeed(options: CohortFeedOptions) {
  const { subscriber, index, leagues, log } = options;
  const coalesceMs = options.coalesceMs ?? 100;
  const retryMs = options.retryMs ?? 1_000;
  const closePollMs = options.closePollMs ?? 5_000;
  const boards = new Map<string, BoardWatch>();
  const byChannel = new Map<string, BoardWatch>();
  let closed = false;

  subscriber.on('smessage', (channel: string, message: string) => {
    const board = byChannel.get(channel);
    if (board) heard(board, decodeLeagueSignal(message));
  });
  // Changes announced while the connection was down were missed: every watched view is read again once it is back.
  const connect = followSubscriber(
    subscriber,
    () => {
      for (const board of boards.values()) heard(board, { round: null, players: null });
    },
    log,
    'cohortChanged',
  );

  /** What a change moves: the watched cohorts of its round holding one of its players (or, having room, maybe a newcomer), and the watchers it names not yet placed. */
  function heard(board: BoardWatch, { round, players }: LeagueSignal): void {
    board.heard++;
    for (const watch of board.cohorts.values()) {
      if (round !== null && watch.round.bucket.label !== round) continue;
      const moved =
        players === null || players.some((id) => watch.members.has(id)) || (round !== null && watch.hasRoom && players.some((id) => !watch.members.has(id)));
      if (moved) schedule(watch.reads, () => readCohort(watch), 0);
    }
    for (const viewer of board.unplaced) {
      if (players !== null && !players.includes(viewer.playerId)) continue;
      if (round !== null && players !== null) viewer.hint = round;
      scheduleOwn(viewer, 0);
    }
  }

  /** A read at the end of the coalescing window (at least `minDelayMs` away), unless one is due already. */
  function schedule(reads: Coalesced, read: () => Promise<void>, minDelayMs: number): void {
    if (reads.timer || closed) return;
    const wait = Math.max(minDelayMs, reads.lastReadAt + coalesceMs - performance.now());
    reads.timer = setTimeout(() => {
      reads.timer = undefined;
      reads.lastReadAt = performance.now();
      read().catch((error: unknown) => {
        log.warn({ err: error }, 'could not read a watched cohort; retrying');
        schedule(reads, read, retryMs);
      });
    }, wait);
    reads.timer.unref();
  }

  const scheduleOwn = (viewer: Viewer, minDelayMs: number) => schedule(viewer.reads, () => readOwn(viewer), minDelayMs);

  /** Names a cohort's entries (one profile-cache load), as a new view: the read's own objects stay unnamed. */
  async function named(view: CohortView): Promise<CohortView> {
    const profiles = await loadProfiles(
      options,
      view.entries.map((entry) => entry.playerId),
    );
    return { ...view, entries: view.entries.map((entry): Standing => ({ ...entry, player: profiles.get(entry.playerId) })) };
  }

  /** A placement read alone (a watcher's own), its cohort named and its standing that cohort's entry. */
  async function placementNamed(viewer: Viewer, bucket: string | null): Promise<LeaguePlacementView> {
    const view = await leagues.placement({ board: viewer.board.boardId, playerId: viewer.playerId, bucket }, LIVE_WANT);
    if (!view.cohort) return view;
    const cohort = await named(view.cohort);
    return { ...view, cohort, standing: cohort.entries.find((entry) => entry.playerId === viewer.playerId) ?? null };
  }

  /** Hands a view to a watcher, unless it read it before the one it holds or holds it already. `keep`: a round's closed view, never dropped for the next. */
  function deliver(viewer: Viewer, view: LeaguePlacementView, started: Started, keep = false): void {
    if (started < viewer.seenStarted) return;
    viewer.seenStarted = started;
    const seen = fingerprint(view);
    if (seen === viewer.seen) return;
    viewer.seen = seen;
    viewer.out.offer(view, { keep });
    options.sent?.inc();
  }

  /** Reads a watched cohort once and hands the view to each of its watchers; a closed one ends each watcher's round. */
  async function readCohort(watch: CohortWatch): Promise<void> {
    if (watch.viewers.size === 0) return;
    const started = performance.now();
    const read = await leagues
      .forRequest(noNames)
      .cohort({ board: watch.board.boardId, bucket: watch.round.bucket.label, tier: watch.tier, number: watch.number }, LIVE_WANT);
    if (watch.board.cohorts.get(watch.key) !== watch) return;
    if (!read) {
      // The round's cohorts are gone (past its retention): each watcher reads where it stands now.
      for (const viewer of [...watch.viewers]) unplace(viewer);
      return;
    }
    if (read.closed) {
      for (const viewer of [...watch.viewers]) void endRound(viewer, watch);
      return;
    }
    const view = await named(read);
    watch.members = new Set(view.entries.map((entry) => entry.playerId));
    watch.hasRoom = view.entries.length < watch.round.league.cohortSize;
    if (!watch.last || watch.last.started <= started) watch.last = { view, started };
    for (const viewer of watch.viewers) {
      const placement = placementIn(view, watch.round, viewer.playerId);
      if (placement) deliver(viewer, placement, started);
      else scheduleOwn(viewer, 0);
    }
    pollForClose(watch);
  }

  /**
   * A watcher's own read: not placed, where it stands (the round a change named first, then the
   * open round); placed but not shown by its cohort's view (hidden by a flag, or erased), its
   * placement in that cohort's round.
   */
  async function readOwn(viewer: Viewer): Promise<void> {
    if (viewer.out.closed) return;
    const started = performance.now();
    if (viewer.cohort) {
      const watch = viewer.cohort;
      const view = await placementNamed(viewer, watch.round.bucket.label);
      if (viewer.cohort !== watch) return;
      if (view.cohort && !view.cohort.closed) return deliver(viewer, view, started);
      if (view.cohort) return endRound(viewer, watch);
      unplace(viewer);
      return;
    }
    const hint = viewer.hint;
    viewer.hint = undefined;
    if (hint !== undefined) {
      // Their first result of a round was just written there (a late result may place them in the
      // round before the open one, while it takes results): placed in it, they watch it.
      const there = await placementNamed(viewer, hint).catch(() => null);
      if (there?.cohort && !there.cohort.closed && !viewer.cohort) return place(viewer, there, started);
    }
    await readOpenRound(viewer, started);
  }

  /** The watcher's placement in the open round: placed, it watches its cohort; else it waits, unplaced. A SEASON league with no open season has no round to follow: the watch ends. */
  async function readOpenRound(viewer: Viewer, started: Started): Promise<void> {
    let view: LeaguePlacementView;
    try {
      view = await placementNamed(viewer, null);
    } catch (error) {
      if ((error as { extensions?: { code?: unknown } }).extensions?.code !== 'NOT_FOUND') throw error;
      viewer.out.finish();
      return;
    }
    if (viewer.out.closed || viewer.cohort) return;
    if (view.cohort && !view.cohort.closed) return place(viewer, view, started);
    viewer.board.unplaced.add(viewer);
    deliver(viewer, view, started);
  }

  /** Puts a watcher in its cohort's watch (opening it), from a view of its placement read at `started`. */
  function place(viewer: Viewer, view: LeaguePlacementView, started: Started): void {
    const cohort = view.cohort!;
    const board = viewer.board;
    viewer.board.unplaced.delete(viewer);
    const key = cohortKey(cohort.bucket, cohort.tier, cohort.number);
    let watch = board.cohorts.get(key);
    if (!watch) {
      watch = {
        key,
        board,
        round: view.round,
        tier: cohort.tier,
        number: cohort.number,
        viewers: new Set(),
        members: new Set(cohort.entries.map((entry) => entry.playerId)),
        hasRoom: cohort.entries.length < view.round.league.cohortSize,
        last: { view: cohort, started },
        reads: { lastReadAt: -Infinity },
      };
      board.cohorts.set(key, watch);
      pollForClose(watch);
    }
    watch.viewers.add(viewer);
    viewer.cohort = watch;
    // The cohort's view read later than this one is the newer: the watcher starts from it.
    const later = watch.last && watch.last.started > started ? placementIn(watch.last.view, watch.round, viewer.playerId) : null;
    if (later) deliver(viewer, later, watch.last!.started);
    else deliver(viewer, view, started);
  }

  /** Takes a watcher out of its cohort's watch (closing the watch with its last watcher). */
  function leaveCohort(viewer: Viewer): void {
    const watch = viewer.cohort;
    if (!watch) return;
    viewer.cohort = undefined;
    watch.viewers.delete(viewer);
    if (watch.viewers.size === 0) forgetCohort(watch);
  }

  /** A watcher no longer in the cohort it watched: it reads where it stands now. */
  function unplace(viewer: Viewer): void {
    leaveCohort(viewer);
    if (viewer.out.closed) return;
    viewer.board.unplaced.add(viewer);
    scheduleOwn(viewer, 0);
  }

  /**
   * The watcher's round closed: its closed view (the recorded outcomes), kept for it whatever
   * follows, then its placement in the open round (the tier the close gave it; its cohort once
   * placed, at once when it was waiting and the close placed it).
   */
  async function endRound(viewer: Viewer, watch: CohortWatch): Promise<void> {
    if (viewer.cohort !== watch) return;
    leaveCohort(viewer);
    const started = performance.now();
    try {
      const final = await placementNamed(viewer, watch.round.bucket.label);
      if (viewer.out.closed) return;
      deliver(viewer, final, started, true);
      await readOpenRound(viewer, performance.now());
    } catch (error) {
      log.warn({ err: error }, 'could not read a watcher past its round; retrying');
      if (!viewer.out.closed && !viewer.cohort) {
        viewer.board.unplaced.add(viewer);
        scheduleOwn(viewer, retryMs);
      }
    }
  }

  /** Past its round's close time (end plus grace), a cohort is read again every closePollMs until it reads closed. */
  function pollForClose(watch: CohortWatch): void {
    clearTimeout(watch.closePoll);
    watch.closePoll = undefined;
    const closes = closesAt(watch.round.board, watch.round.bucket.end);
    if (closes === null || closed) return;
    const wait = Math.min(MAX_TIMER_MS, Math.max(closePollMs, closes.getTime() - options.now().getTime()));
    watch.closePoll = setTimeout(() => {
      watch.closePoll = undefined;
      if (options.now().getTime() >= closes.getTime()) schedule(watch.reads, () => readCohort(watch), 0);
      else pollForClose(watch);
    }, wait);
    watch.closePoll.unref();
  }

  function forgetCohort(watch: CohortWatch): void {
    if (watch.board.cohorts.get(watch.key) === watch) watch.board.cohorts.delete(watch.key);
    clearTimeout(watch.reads.timer);
    clearTimeout(watch.closePoll);
  }

  function openBoard(boardId: string): BoardWatch {
    const channel = index.leagueChannel(boardId);
    const board: BoardWatch = { boardId, channel, cohorts: new Map(), unplaced: new Set(), viewers: 0, heard: 0, ready: Promise.resolve() };
    boards.set(boardId, board);
    byChannel.set(channel, board);
    board.ready = connect().then(() => subscriber.ssubscribe(channel).then(() => undefined));
    board.ready.catch(() => forgetBoard(board));
    return board;
  }

  /** Drops a board nobody watches any more (or whose subscription failed) and unsubscribes. */
  function forgetBoard(board: BoardWatch): void {
    if (boards.get(board.boardId) !== board) return;
    boards.delete(board.boardId);
    byChannel.delete(board.channel);
    for (const watch of board.cohorts.values()) forgetCohort(watch);
    if (closed) return;
    subscriber.sunsubscribe(board.channel).catch((error: unknown) => log.warn({ err: error, channel: board.channel }, 'could not unsubscribe'));
  }

  return {
    /**
     * A player's placements on a league board: the current one at once (this resolves once it is
     * read), then one each time it changes. End it with return() or `signal`. Throws what the first
     * read throws (the board's league and the round checked by the read side), UNAVAILABLE when
     * the channel cannot be subscribed, {@link CohortFeedClosedError} once closed. One SSUBSCRIBE
     * for the first local watcher of a board; O(cohort) per view.
     */
    async watch(args: { board: string; playerId: string }, signal?: AbortSignal): Promise<AsyncIterableIterator<LeaguePlacementView>> {
      if (closed) throw new CohortFeedClosedError();
      const board = boards.get(args.board) ?? openBoard(args.board);
      const onAbort = () => viewer.out.close();
      const viewer: Viewer = {
        board,
        playerId: args.playerId,
        seenStarted: -Infinity,
        reads: { lastReadAt: -Infinity },
        out: new LatestValue<LeaguePlacementView>(() => {
          signal?.removeEventListener('abort', onAbort);
          leaveCohort(viewer);
          board.unplaced.delete(viewer);
          clearTimeout(viewer.reads.timer);
          board.viewers--;
          options.watchers?.dec();
          if (board.viewers === 0) forgetBoard(board);
        }),
      };
      board.viewers++;
      options.watchers?.inc();
      signal?.addEventListener('abort', onAbort, { once: true });
      if (signal?.aborted) viewer.out.close();
      try {
        await board.ready.catch((error: unknown) => {
          log.warn({ err: error }, 'could not subscribe to a league board');
          throw unavailable('The live league views are not available; subscribe again.');
        });
        const heardBefore = board.heard;
        await readOpenRound(viewer, performance.now());
        // A change heard while the first view was read may be missing from it: read once more.
        if (board.heard !== heardBefore) {
          if (viewer.cohort) schedule(viewer.cohort.reads, () => readCohort(viewer.cohort!), 0);
          else scheduleOwn(viewer, 0);
        }
      } catch (error) {
        viewer.out.close();
        throw error;
      }
      return viewer.out;
    },

    /** How many league boards and cohorts this process watches, and how many watchers in all. O(boards). */
    stats(): { boards: number; cohorts: number; viewers: number } {
      let cohorts = 0;
      let viewers = 0;
      for (const board of boards.values()) {
        cohorts += board.cohorts.size;
        viewers += board.viewers;
      }
      return { boards: boards.size, cohorts, viewers };
    },

    /** Ends every watch (event streams end cleanly) and stops reading; later watches throw. The subscriber is the caller's to close. O(watchers). */
    close(): void {
      closed = true;
      const all = [...boards.values()];
      for (const board of all) {
        for (const watch of [...board.cohorts.values()]) {
          forgetCohort(watch);
          for (const viewer of [...watch.viewers]) viewer.out.close();
        }
        for (const viewer of [...board.unplaced]) viewer.out.close();
      }
      boards.clear();
      byChannel.clear();
    },
  };
}

export type CohortFeed = ReturnType<typeof createCohortFeed>;

/** What cohortChanged takes: the league reads that check its arguments, and the feed. */
export interface CohortChangedDeps {
  leagues: Pick<LeagueReadSides, 'round'>;
  /** Null where nothing is served (the CLI). */
  cohortFeed: CohortFeed | null;
}

/**
 * Subscription.cohortChanged: the player's placement in the board's open round at once, then a
 * new view each time it changes: their cohort's entries (who, their order, a score; a flagged
 * member leaves it), their standing and outcome, their placement once placed. When the round
 * closes, its closed view (the outcomes recorded), then their placement in the open round (their
 * tier after the close). Checked as Query.league: NOT_FOUND for an unknown board, BAD_USER_INPUT
 * for a board without a league. UNAVAILABLE when the process is stopping.
 */
export async function watchCohortChanged(
  services: CohortChangedDeps,
  args: { board: string; playerId: string },
  /** Aborted when the subscriber goes away. */
  signal?: AbortSignal,
): Promise<AsyncIterable<LeaguePlacementView>> {
  await services.leagues.round({ board: args.board });
  const feed = services.cohortFeed;
  if (!feed) throw unavailable('This process serves no subscriptions.');
  try {
    return await feed.watch(args, signal);
  } catch (error) {
    if (error instanceof CohortFeedClosedError) throw unavailable('The server is stopping; subscribe again.');
    throw error;
  }
}
