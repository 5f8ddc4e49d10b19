import type { Logger } from 'pino';
import type { Sql } from 'postgres';
import { findLiveKey, insertApiKey, listApiKeys, listenForKeyChanges, revokeApiKey } from './api-keys.js';
import { countRankable, findBoardScores, listsWithBoardScores, streamBoardScores } from './board-scores.js';
import { activeAmong, countRankableByActivity } from './activity.js';
import { changeBoard, findBoard, insertBoard, listBoards } from './boards.js';
import { type DeletedBoard, backlogLeft, boardsGoneAmong, deleteBoardRows, forgetBacklogBoard, listenForBoardDeletions } from './board-deletion.js';
import type { Database } from './client.js';
import { erasePlayer } from './erasure.js';
import { listEntryRemovals, removeEntryRows } from './entry-removals.js';
import { followersPage, listedPairs } from './followers.js';
import { enqueueWebhookEvents } from './webhook-outbox.js';
import { attemptsUsed, joinBoard, joinedCounts, notJoined } from './members.js';
import { closeLeagueRound, findPendingRounds, placeReleased, pruneLeagueRounds } from './league-close.js';
import { cohortMembers, playerCohort, roundTiers } from './league-reads.js';
import { streamStandings } from './export.js';
import { dropFrozenBuckets, findFrozenBucket, freezeLists, listFrozenBuckets } from './frozen.js';
import { frozenBinCounts, frozenScoreEnds, playerHistory } from './history.js';
import { pageAwards } from './award-reads.js';
import { aroundFrozen, denseRanksOfFrozenScores, findFrozen, firstRanksOfFrozenScores, pageFrozen } from './frozen-reads.js';
import { clearFlag, findFlag, flaggedAmong, listFlags, playerBoardScores, setFlag } from './flags.js';
import { countBacklog, deleteBacklog, replayBacklog } from './index-backlog.js';
import { whileHoldingSessionLock, withPlayerLock } from './locks.js';
import { createResultPartition, detachResultPartition, ensureResultPartitions, listResultPartitions } from './partitions.js';
import { recentResults } from './player-results.js';
import { findPlayers, friendIds, replaceFriends, searchPlayers, upsertPlayer } from './players.js';
import { recordGroup } from './results.js';
import { findDueSeasons, findLiveSeasons, findSeason, findSeasonsClosedSince, insertSeason, listSeasons } from './seasons.js';
import { sharedSecret } from './service-secrets.js';
import { readSourceMark } from './source-mark.js';
import {
  claimDeliveries,
  countPending,
  deleteWebhook,
  insertWebhook,
  listWebhooks,
  listenForWebhookChanges,
  pageDeliveries,
  pruneDeliveries,
  recordAttempt,
  redeliver,
} from './webhooks.js';

/**
 * What the rest of the service knows of PostgreSQL: one method per question or change, grouped by
 * what it is about, each the query of the module it names (see those for its cost). No caller
 * holds the pool, a connection or a transaction: the transactions and locks a change needs are
 * taken here, inside the call, so that none can be left open by a caller that forgot it.
 */
export type Storage = ReturnType<typeof createStorage>;

/** What may be done of one player while their lock is held (see Storage.players.whileLocked). */
export type LockedPlayer = ReturnType<typeof lockedPlayer>;

/** `fn` with its first argument, the handle it runs on, given. */
const on =
  <H, A extends unknown[], R>(handle: H, fn: (handle: H, ...args: A) => R) =>
  (...args: A): R =>
    fn(handle, ...args);

/** One player's changes on the connection that holds their lock (see withPlayerLock). */
function lockedPlayer(locked: Sql, playerId: string) {
  return {
    /** Flags the player (db/flags.ts setFlag). */
    flag: (reason: string, now: Date) => setFlag(locked, playerId, reason, now),
    /** Clears the player's flag; null when they have no profile (db/flags.ts clearFlag). */
    unflag: () => clearFlag(locked, playerId),
    /** Whether the player is flagged, as committed now. */
    isFlagged: async () => (await flaggedAmong(locked, [playerId])).has(playerId),
    /** Every board score the player holds (see db/flags.ts playerBoardScores). */
    boardScores: (keptAt?: Date) => playerBoardScores(locked, playerId, keptAt),
  };
}

/** The storage of `database`: the only place the pool is used. */
export function createStorage(database: Database) {
  const { db, sql } = database;
  return {
    boards: {
      insert: on(db, insertBoard),
      find: on(db, findBoard),
      list: on(db, listBoards),
      change: on(db, changeBoard),
    },
    /** deleteBoard's PostgreSQL half (db/board-deletion.ts). */
    boardDeletion: {
      delete: on(sql, deleteBoardRows),
      backlogLeft: on(sql, backlogLeft),
      forgetBacklog: on(sql, forgetBacklogBoard),
      goneAmong: on(sql, boardsGoneAmong),
      listen: (gone: (board: DeletedBoard) => void, check: () => Promise<void>, log: Logger) => listenForBoardDeletions(database, gone, check, log),
    },
    players: {
      upsert: on(db, upsertPlayer),
      find: on(db, findPlayers),
      search: on(sql, searchPlayers),
      replaceFriends: on(db, replaceFriends),
      friendIds: on(db, friendIds),
      /** A page of the players listing any of some players as a friend (db/followers.ts). */
      followers: on(sql, followersPage),
      /** Which (follower, player) pairs are friend-list rows (db/followers.ts). */
      listedPairs: on(sql, listedPairs),
      recentResults: on(sql, recentResults),
      boardScores: on(sql, playerBoardScores),
      /** The players of `playerIds` flagged now. */
      flaggedAmong: on(sql, flaggedAmong),
      findFlag: on(sql, findFlag),
      listFlags: on(sql, listFlags),
      /**
       * Runs `work` on the player while holding their lock, so that flag, unflag and erasure of
       * one player never interleave (db/locks.ts withPlayerLock).
       */
      whileLocked: <T>(playerId: string, work: (player: LockedPlayer) => Promise<T>) =>
        withPlayerLock(sql, playerId, (locked) => work(lockedPlayer(locked, playerId))),
      erase: on(sql, erasePlayer),
    },
    /** One player's entry on one board removed, and the audit of removals (db/entry-removals.ts). */
    entryRemovals: {
      remove: on(sql, removeEntryRows),
      list: on(sql, listEntryRemovals),
    },
    results: {
      /** Records a group of submissions in one transaction (db/results.ts). */
      record: on(sql, recordGroup),
      partitions: {
        list: on(sql, listResultPartitions),
        create: on(sql, createResultPartition),
        ensure: on(sql, ensureResultPartitions),
        detach: on(sql, detachResultPartition),
      },
    },
    boardScores: {
      stream: on(sql, streamBoardScores),
      lists: on(sql, listsWithBoardScores),
      countRankable: on(sql, countRankable),
      /** countRankable split by the players' activity on the board (db/activity.ts). */
      countRankableByActivity: on(sql, countRankableByActivity),
      /** Which players have a result on the board achieved since a cutoff (db/activity.ts). */
      activeAmong: on(sql, activeAmong),
      find: on(sql, findBoardScores),
    },
    seasons: {
      insert: on(db, insertSeason),
      findLive: on(db, findLiveSeasons),
      find: on(db, findSeason),
      list: on(db, listSeasons),
      findDue: on(db, findDueSeasons),
      findClosedSince: on(db, findSeasonsClosedSince),
    },
    /** Closed buckets and their frozen standings (db/frozen.ts). */
    frozen: {
      freeze: on(sql, freezeLists),
      find: on(sql, findFrozenBucket),
      list: on(sql, listFrozenBuckets),
      drop: on(sql, dropFrozenBuckets),
    },
    /** Reads of closed buckets' frozen standings (db/frozen-reads.ts). */
    frozenStandings: {
      page: on(sql, pageFrozen),
      find: on(sql, findFrozen),
      around: on(sql, aroundFrozen),
      firstRanksOfScores: on(sql, firstRanksOfFrozenScores),
      denseRanksOfScores: on(sql, denseRanksOfFrozenScores),
    },
    /** Reads of closed lists' awards (db/award-reads.ts). */
    awards: {
      page: on(sql, pageAwards),
    },
    /** Reads of league rounds' cohorts (db/league-reads.ts). */
    leagueReads: {
      cohort: on(sql, cohortMembers),
      ofPlayer: on(sql, playerCohort),
      tiers: on(sql, roundTiers),
    },
    /** League rounds' closes (db/league-close.ts): outcomes, tier moves, waiting players placed. */
    leagueRounds: {
      close: on(sql, closeLeagueRound),
      pending: on(sql, findPendingRounds),
      placeReleased: on(sql, placeReleased),
      prune: on(sql, pruneLeagueRounds),
    },
    /** Tournaments (db/members.ts): who joined which board, how many did, attempts used. */
    members: {
      join: on(sql, joinBoard),
      notJoined: on(sql, notJoined),
      joined: on(sql, joinedCounts),
      attemptsUsed: on(sql, attemptsUsed),
    },
    /** A player's history and closed buckets' score distributions, from the frozen standings (db/history.ts). */
    history: {
      ofPlayer: on(sql, playerHistory),
      scoreEnds: on(sql, frozenScoreEnds),
      binCounts: on(sql, frozenBinCounts),
    },
    /** A bucket's whole standings in rank order from one snapshot, for an export (db/export.ts). */
    exports: {
      stream: on(sql, streamStandings),
    },
    /** The index outbox (db/index-backlog.ts). */
    backlog: {
      replay: on(sql, replayBacklog),
      delete: on(sql, deleteBacklog),
      count: on(sql, countBacklog),
    },
    apiKeys: {
      insert: (key: Parameters<typeof insertApiKey>[2]) => insertApiKey(db, sql, key),
      findLive: on(db, findLiveKey),
      list: on(db, listApiKeys),
      revoke: (idOrName: string) => revokeApiKey(db, sql, idOrName),
      listenForChanges: (changed: () => void, log: Logger) => listenForKeyChanges(database, changed, log),
    },
    /** Webhooks and their deliveries (db/webhooks.ts); events get in through db/webhook-outbox.ts. */
    webhooks: {
      insert: on(sql, insertWebhook),
      list: on(sql, listWebhooks),
      delete: on(sql, deleteWebhook),
      deliveries: on(sql, pageDeliveries),
      redeliver: on(sql, redeliver),
      claim: on(sql, claimDeliveries),
      record: on(sql, recordAttempt),
      prune: on(sql, pruneDeliveries),
      countPending: on(sql, countPending),
      /** Writes events after a commit (db/webhook-outbox.ts); a close writes its own in its transaction. */
      enqueue: on(sql, enqueueWebhookEvents),
      listenForChanges: (changed: () => void, log: Logger) => listenForWebhookChanges(database, changed, log),
    },
    /** A secret every process of the deployment shares, made by the first to ask (db/service-secrets.ts). */
    sharedSecret: on(db, sharedSecret),
    /** PostgreSQL's source mark, which tells a database restored from a backup (db/source-mark.ts). */
    readSourceMark: on(sql, readSourceMark),
    /** Runs `work` while this process holds the session lock `key`; false, running nothing, while another holds it. */
    whileHoldingSessionLock: on(sql, whileHoldingSessionLock),
    /** Answers once PostgreSQL has run a transaction (what /readyz asks). */
    ping: async (): Promise<void> => {
      await sql.begin((tx) => tx`select 1`);
    },
  };
}
