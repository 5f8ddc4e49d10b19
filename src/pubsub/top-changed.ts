import type { Logger } from 'pino';
import type { TopEvent, TopFeed } from './top-feed.js';
import type { TopView } from '../ranking/top-cache.js';
import { type BucketArgs, type ReadBucketDeps, requireBoard, resolveReadBucket } from '../services/buckets.js';
import type { Metrics } from '../services/metrics.js';
import type { ProfileCache } from '../services/profile-cache.js';
import type { Profile } from '../profiles/store.js';
import { badInput, notFound, unavailable } from '../errors.js';
import { type TopBoard, bucketOfAnswer, toStanding } from '../reads/views.js';
import { styleOf, styledTop } from '../reads/rank-styles.js';
import { type ClosedBucket, type FrozenParts, frozenTop, styledFrozen } from '../reads/frozen.js';
import { LatestValue } from './latest.js';
import type { RankStyle } from '../model/board.js';
import { isStoreUnavailable } from '../store-errors.js';

export type { TopEvent } from './top-feed.js';

/** What topChanged takes: the bucket's resolution, this process's top feed, and the players' profiles. */
export interface TopChangedDeps extends ReadBucketDeps {
  /** A closed bucket's frozen standings: its one view. */
  storage: FrozenParts['storage'];
  /** topChanged's fan-out; null where nothing is served (the CLI). */
  topFeed: TopFeed | null;
  /** The profiles the views name, through the profile cache every read names players through. */
  profiles: Pick<ProfileCache, 'load'>;
  log: Logger;
  metrics: Pick<Metrics, 'topChangedEvents'>;
}

/**
 * topChanged: the views of one bucket's top `limit` places, the current one at once and then one
 * each time those places change (who, their order, or a score), through this process's top feed
 * (src/pubsub/top-feed.ts). Checked like `top`: NOT_FOUND / BAD_USER_INPUT for the bucket, and
 * BAD_USER_INPUT for a limit above the board's topSize and for DENSE asked of a board that is not
 * DENSE. UNAVAILABLE when Redis does not answer or the process is stopping. O(limit) per view.
 *
 * A closed bucket's top never changes: its one view is its frozen standings' top (read from
 * PostgreSQL, not the feed), and the watch ends after it. A watched bucket that closes sends no
 * more views either (top-feed.ts `closed`): its watchers hold its final view already.
 */
export async function watchTopChanged(
  services: TopChangedDeps,
  args: BucketArgs & { limit: number; rankStyle?: RankStyle | null | undefined },
  /** Aborted when the subscriber goes away. */
  signal?: AbortSignal,
): Promise<AsyncIterable<TopEvent>> {
  const board = await requireBoard(services, args.board);
  styleOf(board, args.rankStyle);
  if (args.limit > board.topSize) throw badInput(`limit must be at most board "${board.id}"'s topSize of ${board.topSize}.`);
  const at = await resolveReadBucket(services, args);
  if (at.frozen) return closedTopView(services, { ...at, frozen: at.frozen }, args);
  const feed = services.topFeed;
  if (!feed) throw unavailable('This process serves no subscriptions.');
  try {
    return await feed.watch(at, args.limit, signal);
  } catch (error) {
    if (error instanceof Error && error.name === 'TopFeedClosedError') throw unavailable('The server is stopping; subscribe again.');
    throw error;
  }
}

/** A closed bucket's one view: the top `limit` of its frozen standings, in the style asked. O(log N + limit). */
async function closedTopView(
  services: TopChangedDeps,
  at: ClosedBucket,
  args: { limit: number; rankStyle?: RankStyle | null | undefined },
): Promise<AsyncIterable<TopEvent>> {
  const style = styleOf(at.board, args.rankStyle);
  const places = await styledFrozen(services, at, await frozenTop(services, at, args.limit, true), style);
  const view: TopView = { size: at.frozen.size, places, asOf: services.now(), read: 0 };
  const views = new LatestValue<TopEvent>(() => undefined);
  views.offer({ at, view, source: view, styled: true });
  views.finish();
  return views;
}

/**
 * The profiles of a view's players, loaded once per view read (the feed hands every viewer the
 * same source object), so a thousand viewers of one refresh cost one load of the profile cache
 * (one Redis call, PostgreSQL only for what Redis does not hold), not a thousand, and none of them
 * a loader call per entry. Ids alone when PostgreSQL does not answer, as for any read. `ready` is set once loaded, so later viewers are served synchronously.
 */
interface Profiles {
  loading: Promise<Map<string, Profile>>;
  ready?: Map<string, Profile>;
}
const profilesByView = new WeakMap<TopView, Profiles>();

/** The profiles of `ids`, by id; ids alone when PostgreSQL does not answer. One profile-cache load. O(ids). */
export async function loadProfiles(services: Pick<TopChangedDeps, 'profiles' | 'log'>, ids: string[]): Promise<Map<string, Profile>> {
  let found: readonly Profile[];
  try {
    found = await services.profiles.load(ids);
  } catch (error) {
    if (!isStoreUnavailable(error)) throw error;
    services.log.warn({ err: error }, 'player profiles unavailable; answering ids only');
    found = ids.map((id) => ({ id, displayName: null, avatarUrl: null }));
  }
  return new Map(found.map((profile) => [profile.id, profile]));
}

function profilesOf(services: Pick<TopChangedDeps, 'profiles' | 'log'>, view: TopView): Profiles {
  let profiles = profilesByView.get(view);
  if (!profiles) {
    const entry: Profiles = {
      loading: loadProfiles(
        services,
        view.places.map((place) => place.playerId),
      ),
    };
    entry.loading.then(
      (ready) => (entry.ready = ready),
      () => profilesByView.delete(view),
    );
    profilesByView.set(view, entry);
    profiles = entry;
  }
  return profiles;
}

/**
 * One view as topChanged serves it, each entry with its player's profile attached (so `player`
 * fields resolve without a query or a loader call); counted as sent. Every viewer of one slice
 * (one read, one limit) shares one answer object, built once; synchronous once the view's profiles
 * are loaded. So the per-viewer cost of a view is GraphQL's execution and the send. O(limit) once.
 */
export function topChangedView(services: TopChangedDeps, event: TopEvent, asked?: RankStyle | null): TopBoard | Promise<TopBoard> {
  // The watch's last event once its board is deleted (top-feed.ts boardGone): the subscriber's final error.
  if (event.boardGone) throw notFound(`No board "${event.at.board.id}": it was deleted.`);
  services.metrics.topChangedEvents.inc();
  return topBoardOf(services, event, asked);
}

/**
 * {@link topChangedView} without counting it as sent to a subscriber: the same answer, for what
 * sends the view elsewhere (TOP_CHANGED webhooks, writes/top-webhooks.ts).
 */
export function topBoardOf(
  services: Pick<TopChangedDeps, 'boards' | 'profiles' | 'log'>,
  event: TopEvent,
  asked?: RankStyle | null,
): TopBoard | Promise<TopBoard> {
  // The board as this process holds it now, not as it was when the bucket's first viewer came: a
  // rank style changed by updateBoard is served from the next view on.
  const style = styleOf(services.boards.known(event.at.board.id) ?? event.at.board, asked);
  const built = answers.get(event.view)?.get(style);
  if (built) return built;
  const profiles = profilesOf(services, event.source);
  if (profiles.ready) return present(event, profiles.ready, style);
  return profiles.loading.then((ready) => present(event, ready, style));
}

/** The answers built for each slice the feed handed out (the feed shares one slice among the viewers of one limit), one per rank style. */
const answers = new WeakMap<TopView, Map<RankStyle, TopBoard>>();

function present({ at, view, styled }: TopEvent, profiles: Map<string, Profile>, style: RankStyle): TopBoard {
  const answer: TopBoard = {
    boardId: at.board.id,
    ...bucketOfAnswer(at),
    entries: (styled ? view.places : styledTop(view.places, style)).map((place) => ({
      ...toStanding(at, place, view.size),
      player: profiles.get(place.playerId),
    })),
    size: view.size,
    asOf: view.asOf,
  };
  answers.set(view, (answers.get(view) ?? new Map<RankStyle, TopBoard>()).set(style, answer));
  return answer;
}
