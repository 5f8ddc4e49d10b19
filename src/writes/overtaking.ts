import type { Logger } from 'pino';
import type { OutboxEvent } from '../db/webhook-outbox.js';
import type { FollowerRow } from '../db/followers.js';
import { type Period, PERIODS } from '../model/board.js';
import type { FriendOvertakenData, StandingData, WebhookInterest } from '../model/webhooks.js';
import type { BoardBucket, BoardScoreWrite, Place, RankingIndex, WrittenPlace } from '../ranking/index.js';
import type { Member } from '../ranking/shards.js';
import { bucketKey } from '../ranking/keys.js';
import { pack, packingFor } from '../ranking/packing.js';
import { timeInMember, timedMember } from '../ranking/members.js';
import { styledPlaces } from '../reads/rank-styles.js';
import type { ProfileCache } from '../services/profile-cache.js';
import { encodeOvertakings } from '../pubsub/friend-overtook.js';

/**
 * "A friend just passed you" (issue 58): after a group's index write, each result that raised a
 * player A past a player B who lists A as a friend becomes a FRIEND_OVERTAKEN event (the webhook
 * outbox) and a friendOvertook view (B's subscribers, in every process: pubsub/friend-overtook.ts),
 * in ALL_TIME and the board's shortest period, global lists only.
 *
 * Off the submission's path: the write path hands over what its index write answered (each
 * write's packed value before and after, which the write script reads anyway) and goes on; the
 * detection runs later, one group at a time. Nothing is read at all for a board nobody listens
 * to: no webhook wants FRIEND_OVERTAKEN of it and no connection in the deployment is subscribed to
 * its channel (asked at most once a second per board). Flagged players are not in the index, so
 * they neither pass (their writes never reach the index) nor are passed (no place); a mover
 * flagged since is checked once more when their standing is read at the end.
 *
 * Groups written while a detection runs are merged into the next (each player's move from before
 * the first to after the last; the 100 told are then per player and pass): under load the
 * detection batches itself, and it is never more than one pass behind.
 *
 * Cost per detection: a keyset page of the index from each mover's new place (the players now just
 * behind them) and one probe of the friend lists for all of them; for a mover who passed more than
 * that page holds (a first result, a leap), one PostgreSQL page of followers per
 * {@link OvertakingOptions.followersPerPage} rows (for all such movers together) and one standings
 * read of the page's followers per bucket; then one standings read of the movers, one profile load
 * and at most one outbox statement and one SPUBLISH per board. Memory: a page and the {@link OvertakingOptions.maxTold} closest passed per mover and bucket.
 */

/** What detection takes (7 members). */
export interface OvertakingDeps {
  index: Pick<RankingIndex, 'standings' | 'page' | 'countBetter' | 'countDistinctBetter' | 'announceOvertaken' | 'overtakenListeners'>;
  /** One page of the players listing any of some players as a friend (db/followers.ts followersPage). */
  followers(playerIds: readonly string[], after: FollowerRow | null, limit: number): Promise<FollowerRow[]>;
  /** Which of some (follower, player) pairs are friend-list rows (db/followers.ts listedPairs). */
  listed(pairs: readonly FollowerRow[]): Promise<FollowerRow[]>;
  /** Which boards' FRIEND_OVERTAKEN some webhook wants; undefined: none ever does. */
  webhooks?: WebhookInterest | undefined;
  /** Writes events to the webhook outbox (db/webhook-outbox.ts enqueueWebhookEvents, after the commit). */
  enqueue(events: OutboxEvent[]): Promise<unknown>;
  profiles: Pick<ProfileCache, 'load'>;
  now(): Date;
  log: Logger;
  /** Counts each (passer, passed) pair told (leaderboard_friend_overtaken_events_total). Default: none. */
  told?: { inc(n?: number): void } | undefined;
}

export interface OvertakingOptions {
  /** @default 100 players told per result and list, the closest first. */
  maxTold?: number;
  /** @default 1,000 friend-list rows a page (and so players a standings read). */
  followersPerPage?: number;
  /**
   * @default 200: how many of the players just behind a mover's new place are read at once. A
   * mover who passed no more than this many (most results move a player a little) costs that one
   * page of the index and one probe of those players' friend lists, not a read of every follower.
   */
  behindPerRead?: number;
  /**
   * @default 5: how many such pages a mover's players passed are read, until maxTold of them list
   * the mover, before their followers are walked instead (a first result, a leap over thousands).
   */
  maxPagesBehind?: number;
  /** @default 1,000 ms: how long a board's count of subscribed connections is trusted. */
  listenersMs?: number;
  /** @default 10,000 moves (a player in a list) waiting for detection; past it a group's overtakings are dropped (and logged). */
  maxPending?: number;
}

/**
 * One player's move in one list during a group: its position (packed value and member) before the
 * group's first write and after its last. The member is the player id, or on a board whose time is
 * in the member (ranking/members.ts) the time then the player id: what orders equal packed values.
 */
interface Move {
  before: number | null;
  beforeMember: string;
  after: number;
  afterMember: string;
}

/** A list the group moved players up in, and who. */
interface MovedList {
  at: BoardBucket;
  moves: Map<string, Move>;
}

/** A passed player, as found, with its position. */
interface Passed {
  place: Place;
  packed: number;
  member: string;
}

/** The periods an overtaking is told in: ALL_TIME and the board's shortest (PERIODS runs longest to shortest). */
export function overtakingPeriods(periods: readonly Period[]): Set<Period> {
  const shortest = [...PERIODS].reverse().find((period) => periods.includes(period));
  return new Set<Period>(['ALL_TIME', ...(shortest ? [shortest] : [])]);
}

/** Whether member (packed a, member x) ranks ahead of (packed b, member y): the index's order (shards.ts rankOrder). */
const ahead = (a: number, x: string, b: number, y: string) => a > b || (a === b && Buffer.compare(Buffer.from(x), Buffer.from(y)) > 0);

/** An event's standing: the GraphQL Standing's fields, the player flattened (model/webhooks.ts). */
function standingData(place: Place, names: Map<string, string | null>): StandingData {
  return {
    rank: place.rank,
    playerId: place.playerId,
    displayName: names.get(place.playerId) ?? null,
    score: place.score,
    achievedAt: place.reachedAt.toISOString(),
    ...(place.tieBreakValues?.length && { tieBreakValues: [...place.tieBreakValues] }),
  };
}

/** Builds the process's overtaking detection; `written` is what the write path calls after each index write. */
export function createOvertaking(deps: OvertakingDeps, options: OvertakingOptions = {}) {
  const maxTold = options.maxTold ?? 100;
  const perPage = options.followersPerPage ?? 1_000;
  const behindPerRead = options.behindPerRead ?? 200;
  const maxPagesBehind = options.maxPagesBehind ?? 5;
  const listenersMs = options.listenersMs ?? 1_000;
  const maxPending = options.maxPending ?? 10_000;
  const listeners = new Map<string, { until: number; count: Promise<number> }>();
  // The groups written while a detection runs wait here, merged: the next detection takes them all
  // at once (one followers query and one standings read a page for all), so under load the cost
  // is per detection, not per group, and the detection never falls further behind than one pass.
  let pending = new Map<string, MovedList>();
  let pendingMoves = 0;
  let running: Promise<void> | null = null;

  /** Whether anyone would hear an overtaking on this board: a webhook wanting it, or a subscribed connection anywhere. */
  async function interested(boardId: string): Promise<boolean> {
    if (deps.webhooks?.wants(boardId, 'FRIEND_OVERTAKEN')) return true;
    const now = performance.now();
    let known = listeners.get(boardId);
    if (!known || known.until <= now) {
      known = { until: now + listenersMs, count: deps.index.overtakenListeners(boardId).catch(() => 0) };
      listeners.set(boardId, known);
      // The cache holds only boards written lately.
      if (listeners.size > 10_000) for (const [id, entry] of listeners) if (entry.until <= now) listeners.delete(id);
    }
    return (await known.count) > 0;
  }

  /** The lists a group moved players up in, each player's first before and last after. O(writes). */
  function movedLists(writes: readonly BoardScoreWrite[], placed: readonly WrittenPlace[]): MovedList[] {
    const lists = new Map<string, MovedList>();
    const periodsOf = new Map<string, Set<Period>>();
    writes.forEach(({ at, score }, i) => {
      const written = placed[i];
      if (!written || at.region !== null || written.place === null || written.packed === null) return;
      let periods = periodsOf.get(at.board.id);
      if (!periods) periodsOf.set(at.board.id, (periods = overtakingPeriods(at.board.periods)));
      if (!periods.has(at.bucket.period)) return;
      const key = bucketKey(at);
      let list = lists.get(key);
      if (!list) lists.set(key, (list = { at, moves: new Map() }));
      const member = written.member ?? score.playerId;
      const move = list.moves.get(score.playerId);
      if (move) Object.assign(move, { after: written.packed, afterMember: member });
      else
        list.moves.set(score.playerId, {
          before: written.packedBefore,
          beforeMember: written.memberBefore ?? score.playerId,
          after: written.packed,
          afterMember: member,
        });
    });
    for (const list of lists.values())
      for (const [playerId, { before, beforeMember, after, afterMember }] of list.moves)
        if (before !== null && !ahead(after, afterMember, before, beforeMember)) list.moves.delete(playerId);
    return [...lists.values()].filter((list) => list.moves.size > 0);
  }

  /** Keeps a mover's passed players closest first (the best ranked of those behind them), at most maxTold. O(maxTold) an insert. */
  function keep(closest: Passed[], passed: Passed): void {
    if (closest.length >= maxTold && passed.place.rank >= closest.at(-1)!.place.rank) return;
    let i = closest.length;
    while (i > 0 && closest[i - 1]!.place.rank > passed.place.rank) i--;
    closest.splice(i, 0, passed);
    if (closest.length > maxTold) closest.pop();
  }

  /** Detects and tells one group's overtakings. */
  async function detect(lists: MovedList[]): Promise<void> {
    const wanted: MovedList[] = [];
    for (const list of lists) if (await interested(list.at.board.id)) wanted.push(list);
    if (wanted.length === 0) return;
    // Per list, per mover: the closest players passed so far.
    const found = wanted.map(() => new Map<string, Passed[]>());
    // First the players just behind each mover; only a mover who passed more than a read's worth is
    // looked for among their followers, page by page.
    const far = await Promise.all(wanted.map((list, l) => passedJustBehind(list, found[l]!)));
    const movers = [...new Set(far.flatMap((list) => [...list.moves.keys()]))];
    let after: FollowerRow | null = null;
    while (movers.length > 0) {
      const page = await deps.followers(movers, after, perPage);
      if (page.length === 0) break;
      after = page.at(-1)!;
      await Promise.all(far.map((list, l) => passedIn(list, page, found[l]!)));
      if (page.length < perPage) break;
    }
    const events: OutboxEvent[] = [];
    await Promise.all(wanted.map(async (list, l) => events.push(...(await tell(list, found[l]!)))));
    if (events.length > 0 && deps.webhooks) await deps.enqueue(events.filter((event) => deps.webhooks!.wants(event.boardId, 'FRIEND_OVERTAKEN')));
  }

  /**
   * For each mover of a list, the players now just behind them that they passed, page by page
   * (keyset pages of the index from the mover's new place, closest first), those listing the mover
   * (one probe of the friend lists a page, for every mover at once) kept, until maxTold are found or
   * no one further was passed. Answers the list with only the movers still passing players after
   * maxPagesBehind pages, left to the followers walk.
   */
  async function passedJustBehind(list: MovedList, found: Map<string, Passed[]>): Promise<MovedList> {
    const far: MovedList = { at: list.at, moves: new Map() };
    // Where each mover's next page starts: their new place, then the last player of their last page.
    let walking = new Map([...list.moves].map(([mover, move]): [string, Member] => [mover, { playerId: move.afterMember, packed: move.after }]));
    for (let pages = 0; walking.size > 0; pages++) {
      if (pages === maxPagesBehind) {
        // Still passing players after that many pages: the followers walk finds every follower
        // passed (so what the pages found is dropped).
        for (const mover of walking.keys()) {
          found.delete(mover);
          far.moves.set(mover, list.moves.get(mover)!);
        }
        break;
      }
      const from = [...walking];
      const behind = await Promise.all(from.map(([, after]) => deps.index.page(list.at, after, behindPerRead)));
      const next = new Map<string, Member>();
      const candidates: { mover: string; passed: Passed }[] = [];
      from.forEach(([mover], m) => {
        const { before, beforeMember } = list.moves.get(mover)!;
        const { places, hasMore } = behind[m]!;
        const passed = places.filter((place) => before === null || ahead(place.packed, place.member, before, beforeMember));
        for (const place of passed) candidates.push({ mover, passed: { place, packed: place.packed, member: place.member } });
        // A page of players all passed, with more after it: the next page may hold more.
        if (hasMore && passed.length === places.length) next.set(mover, { playerId: places.at(-1)!.member, packed: places.at(-1)!.packed });
      });
      if (candidates.length > 0) {
        const listed = await deps.listed(candidates.map(({ mover, passed }) => ({ playerId: mover, followerId: passed.place.playerId })));
        const pairs = new Set(listed.map((row) => `${row.playerId}\u0000${row.followerId}`));
        for (const { mover, passed } of candidates) {
          if (!pairs.has(`${mover}\u0000${passed.place.playerId}`)) continue;
          let closest = found.get(mover);
          if (!closest) found.set(mover, (closest = []));
          keep(closest, passed);
        }
      }
      // A mover with maxTold followers found has its closest: the pages come in order.
      walking = new Map([...next].filter(([mover]) => (found.get(mover)?.length ?? 0) < maxTold));
    }
    return far;
  }

  /** Which of a page's followers each mover of a list passed: one standings read of the page's followers in the list. */
  async function passedIn(list: MovedList, page: FollowerRow[], found: Map<string, Passed[]>): Promise<void> {
    const rows = page.filter((row) => list.moves.has(row.playerId) && row.followerId !== row.playerId);
    if (rows.length === 0) return;
    const ids = [...new Set(rows.map((row) => row.followerId))];
    const { places } = await deps.index.standings(list.at, ids);
    const { at } = list;
    const packing = packingFor(at.board, at.bucket.period);
    // On a board whose time is in the member, a place's reachedAt is its member's time, to the millisecond.
    const wide = timeInMember(at);
    const byId = new Map<string, Passed>();
    ids.forEach((id, i) => {
      const place = places[i];
      if (!place) return;
      const packed = pack(at.board, packing, place.score, place.reachedAt, at.bucket.start, place.tieBreakValues);
      byId.set(id, { place, packed, member: wide ? timedMember(id, place.reachedAt.getTime(), at.bucket.start.getTime()) : id });
    });
    for (const { playerId, followerId } of rows) {
      const passed = byId.get(followerId);
      if (!passed) continue;
      const { before, beforeMember, after, afterMember } = list.moves.get(playerId)!;
      // Behind the mover after, and ahead of them before (or the mover was not ranked).
      if (!ahead(after, afterMember, passed.packed, passed.member)) continue;
      if (before !== null && !ahead(passed.packed, passed.member, before, beforeMember)) continue;
      let closest = found.get(playerId);
      if (!closest) found.set(playerId, (closest = []));
      keep(closest, passed);
    }
  }

  /** The standings "as they stand now", under the board's rank style: the events of one list, published at once; answers them for the outbox. */
  async function tell(list: MovedList, found: Map<string, Passed[]>): Promise<OutboxEvent[]> {
    if (found.size === 0) return [];
    const { at } = list;
    const movers = [...found.keys()];
    // Read again: a mover flagged since the write has no place, and tells nothing.
    const { size, places: moverPlaces } = await deps.index.standings(at, movers);
    // One per mover still ranked, with the players still behind them, the closest first.
    const moves: { by: Place; passed: Place[] }[] = [];
    movers.forEach((mover, i) => {
      const by = moverPlaces[i];
      const passed = by ? found.get(mover)!.flatMap(({ place }) => (place.rank > by.rank ? [place] : [])) : [];
      if (by && passed.length > 0) moves.push({ by, passed });
    });
    if (moves.length === 0) return [];
    const distinct = [...new Set(moves.flatMap(({ by, passed }) => [by, ...passed]))];
    const [styled, profiles] = await Promise.all([
      styledPlaces(deps, at, distinct, at.board.rankStyle),
      deps.profiles.load([...new Set(distinct.map((place) => place.playerId))]).catch(() => []),
    ]);
    const styledOf = new Map(distinct.map((place, i) => [place, styled[i]!]));
    const names = new Map(profiles.map((profile) => [profile.id, profile.displayName]));
    const when = deps.now();
    const data: FriendOvertakenData[] = moves.map(({ by, passed }) => ({
      boardId: at.board.id,
      period: at.bucket.period,
      bucket: at.bucket.label,
      by: standingData(styledOf.get(by)!, names),
      passed: passed.map((you) => standingData(styledOf.get(you)!, names)),
      at: when.toISOString(),
    }));
    deps.told?.inc(data.reduce((told, move) => told + move.passed.length, 0));
    try {
      await Promise.all(encodeOvertakings(data, size).map((message) => deps.index.announceOvertaken(at.board.id, message)));
    } catch (error) {
      deps.log.warn({ err: error, board: at.board.id }, 'could not announce overtakings; their subscribers miss them');
    }
    return data.map((event) => ({ type: 'FRIEND_OVERTAKEN', boardId: at.board.id, data: event, at: when }));
  }

  /** Detects what is pending, then what came meanwhile, until nothing is. A failure is logged. */
  async function run(): Promise<void> {
    try {
      while (pending.size > 0) {
        const lists = [...pending.values()];
        pending = new Map();
        pendingMoves = 0;
        try {
          await detect(lists);
        } catch (error) {
          deps.log.warn({ err: error }, 'could not detect overtakings; these results tell none');
        }
      }
    } finally {
      running = null;
    }
  }

  return {
    /**
     * Queues the detection of a group's overtakings from its index write's answers (writes and
     * places in the same order) and returns at once: the submission's answer never waits for it.
     * A failure is logged. O(writes) here.
     */
    written(writes: readonly BoardScoreWrite[], placed: readonly WrittenPlace[]): void {
      const lists = movedLists(writes, placed);
      if (lists.length === 0) return;
      const moves = lists.reduce((total, list) => total + list.moves.size, 0);
      if (pendingMoves + moves > maxPending) {
        deps.log.warn({ moves }, 'overtaking detection is behind; this group tells no overtakings');
        return;
      }
      for (const list of lists) {
        const key = bucketKey(list.at);
        const waiting = pending.get(key);
        if (!waiting) {
          pending.set(key, list);
          pendingMoves += list.moves.size;
          continue;
        }
        // The player's move from before the first group to after the last.
        for (const [playerId, move] of list.moves) {
          const was = waiting.moves.get(playerId);
          if (was) was.after = move.after;
          else {
            waiting.moves.set(playerId, move);
            pendingMoves++;
          }
        }
      }
      // Started in a later turn: nothing of the detection runs in the write path's own.
      running ??= Promise.resolve().then(run);
    },

    /** Resolves once every queued detection has run (tests, and a clean stop). */
    async idle(): Promise<void> {
      while (running) await running;
    },
  };
}

export type Overtaking = ReturnType<typeof createOvertaking>;
