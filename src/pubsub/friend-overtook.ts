import type { Logger } from 'pino';
import type { Period } from '../model/board.js';
import type { FriendOvertakenData, StandingData } from '../model/webhooks.js';
import type { RankingIndex } from '../ranking/index.js';
import type { RedisClient } from '../redis.js';
import type { Standing } from '../reads/views.js';
import { type BucketDeps, requireBoard } from '../services/buckets.js';
import { unavailable } from '../errors.js';
import { LatestValue } from './latest.js';
import { followSubscriber } from './top-feed.js';

/**
 * friendOvertook (issue 58): a player's friends passing them, live. The write side's detection
 * (writes/overtaking.ts) publishes each board's overtakings, "as they stand now", on the board's
 * sharded channel (ranking/keys.ts overtakenChannel), so a Cluster routes them like the other
 * feeds'. Each process subscribes to a board's channel while it has a local watcher of it, and
 * hands each overtaking to the watchers of each player passed (each `you`); the last watcher of a board
 * to leave unsubscribes. The subscription itself is what the detection counts (PUBSUB SHARDNUMSUB)
 * to know anyone listens.
 */

/** The GraphQL Overtaken: the by and you standings as the schema serves them. */
export interface OvertakenView {
  boardId: string;
  period: Period;
  bucket: string;
  by: Standing;
  you: Standing;
  at: Date;
}

/** About how many players passed one message names: a move names at most 100, so a message holds a few moves. */
const PER_MESSAGE = 100;

/** The messages for one list's moves (each with the players it passed): JSON of the list's size (for percentiles) and the moves. O(players passed). */
export function encodeOvertakings(events: readonly FriendOvertakenData[], size: number): string[] {
  const messages: string[] = [];
  let batch: FriendOvertakenData[] = [];
  let named = 0;
  for (const event of events) {
    if (batch.length > 0 && named + event.passed.length > PER_MESSAGE) {
      messages.push(JSON.stringify({ size, events: batch }));
      batch = [];
      named = 0;
    }
    batch.push(event);
    named += event.passed.length;
  }
  if (batch.length > 0) messages.push(JSON.stringify({ size, events: batch }));
  return messages;
}

/** A message read back; a malformed one (none is sent) holds nothing. */
function decodeOvertakings(message: string): { size: number; events: FriendOvertakenData[] } {
  try {
    const parsed = JSON.parse(message) as { size?: unknown; events?: unknown };
    return { size: Number(parsed.size) || 0, events: Array.isArray(parsed.events) ? (parsed.events as FriendOvertakenData[]) : [] };
  } catch {
    return { size: 0, events: [] };
  }
}

/** An event's standing as a Standing: its achievedAt as sent, its name as held; no metadata. */
function standingOf(data: StandingData, size: number): Standing {
  return {
    playerId: data.playerId,
    rank: data.rank,
    score: data.score,
    tieBreakValues: data.tieBreakValues,
    percentile: size === 0 ? 0 : Math.max(0, (100 * (size - data.rank)) / size),
    source: { recorded: { reachedAt: new Date(data.achievedAt), metadata: null } },
    player: { id: data.playerId, displayName: data.displayName, avatarUrl: null },
  };
}

/** What the feed takes. */
export interface OvertakenFeedOptions {
  /** A Redis connection of the feed's own (top-feed.ts subscriberFor), connected on the first watch; the caller closes it after close(). */
  subscriber: RedisClient;
  index: Pick<RankingIndex, 'overtakenChannel'>;
  log: Logger;
  /** Counts open watches up and down (leaderboard_friend_overtook_subscribers). Default: none. */
  watchers?: { inc(): void; dec(): void } | undefined;
}

/** One board watched by this process: its channel and its watchers by player. */
interface BoardWatch {
  channel: string;
  byPlayer: Map<string, Set<LatestValue<OvertakenView>>>;
  ready: Promise<void>;
}

/** The feed was closed (the process is stopping). */
export class OvertakenFeedClosedError extends Error {
  constructor() {
    super('the overtaken feed is closed: the process is stopping');
    this.name = 'OvertakenFeedClosedError';
  }
}

/** Builds the process's friendOvertook fan-out. O(1) memory a watcher beyond the views it has not pulled. */
export function createOvertakenFeed(options: OvertakenFeedOptions) {
  const { subscriber, index, log } = options;
  const boards = new Map<string, BoardWatch>();
  const byChannel = new Map<string, BoardWatch>();
  let closed = false;

  subscriber.on('smessage', (channel: string, message: string) => {
    const board = byChannel.get(channel);
    if (!board) return;
    const { size, events } = decodeOvertakings(message);
    for (const event of events) {
      for (const you of event.passed) {
        const watchers = board.byPlayer.get(you.playerId);
        if (!watchers) continue;
        const view: OvertakenView = {
          boardId: event.boardId,
          period: event.period as Period,
          bucket: event.bucket,
          by: standingOf(event.by, size),
          you: standingOf(you, size),
          at: new Date(event.at),
        };
        // Every overtaking is its own news: none replaces another.
        for (const out of watchers) out.offer(view, { keep: true });
      }
    }
  });
  // An overtaking announced while the connection was down is lost: they are not read back.
  const connect = followSubscriber(subscriber, () => {}, log, 'friendOvertook');

  function forget(boardId: string, board: BoardWatch, playerId: string, out: LatestValue<OvertakenView>): void {
    const watchers = board.byPlayer.get(playerId);
    if (!watchers?.delete(out)) return;
    options.watchers?.dec();
    if (watchers.size === 0) board.byPlayer.delete(playerId);
    if (board.byPlayer.size > 0 || boards.get(boardId) !== board) return;
    boards.delete(boardId);
    byChannel.delete(board.channel);
    subscriber.sunsubscribe(board.channel).catch((error: unknown) => log.warn({ err: error }, 'friendOvertook unsubscribe failed'));
  }

  return {
    /** The overtakings of `playerId` on board `boardId` from now on, until `signal` aborts. Subscribed before it answers. */
    async watch(boardId: string, playerId: string, signal?: AbortSignal): Promise<AsyncIterable<OvertakenView>> {
      if (closed) throw new OvertakenFeedClosedError();
      let board = boards.get(boardId);
      if (!board) {
        const channel = index.overtakenChannel(boardId);
        const fresh: BoardWatch = { channel, byPlayer: new Map(), ready: Promise.resolve() };
        fresh.ready = connect().then(() => subscriber.ssubscribe(channel).then(() => {}));
        // A failed subscription is forgotten, so the next watcher tries again.
        fresh.ready.catch(() => boards.get(boardId) === fresh && boards.delete(boardId) && byChannel.delete(channel));
        boards.set(boardId, (board = fresh));
        byChannel.set(channel, board);
      }
      const watched = board;
      const out: LatestValue<OvertakenView> = new LatestValue(() => forget(boardId, watched, playerId, out));
      let watchers = watched.byPlayer.get(playerId);
      if (!watchers) watched.byPlayer.set(playerId, (watchers = new Set()));
      watchers.add(out);
      options.watchers?.inc();
      signal?.addEventListener('abort', () => out.close(), { once: true });
      try {
        await watched.ready;
      } catch (error) {
        out.close();
        throw error;
      }
      return out;
    },

    /** How many boards and watchers this process holds. O(boards). */
    stats(): { boards: number; viewers: number } {
      let viewers = 0;
      for (const board of boards.values()) for (const set of board.byPlayer.values()) viewers += set.size;
      return { boards: boards.size, viewers };
    },

    /** Ends every watch and stops listening; later watches throw. The subscriber is the caller's to close. */
    close(): void {
      closed = true;
      for (const board of [...boards.values()]) for (const set of [...board.byPlayer.values()]) for (const out of [...set]) out.close();
      boards.clear();
      byChannel.clear();
    },
  };
}

export type OvertakenFeed = ReturnType<typeof createOvertakenFeed>;

/** What friendOvertook takes: the boards (NOT_FOUND for an unknown one) and the feed (null where nothing is served). */
export interface FriendOvertookDeps {
  boards: BucketDeps['boards'];
  overtakenFeed: OvertakenFeed | null;
}

/** Subscription.friendOvertook: each overtaking of the player on the board from now on. NOT_FOUND for an unknown board; UNAVAILABLE while stopping. */
export async function watchFriendOvertook(
  deps: FriendOvertookDeps,
  args: { board: string; playerId: string },
  signal?: AbortSignal,
): Promise<AsyncIterable<OvertakenView>> {
  await requireBoard(deps, args.board);
  const feed = deps.overtakenFeed;
  if (!feed) throw unavailable('This process serves no subscriptions.');
  try {
    return await feed.watch(args.board, args.playerId, signal);
  } catch (error) {
    if (error instanceof OvertakenFeedClosedError) throw unavailable('The server is stopping; subscribe again.');
    throw error;
  }
}
