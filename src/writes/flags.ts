import type { PlayerBoardScore } from '../db/board-score-rows.js';
import type { PlayerFlag } from '../db/flags.js';
import type { Player } from '../db/players.js';
import type { BoardBucket } from '../ranking/index.js';
import type { Storage } from '../db/storage.js';
import type { FlagChanges } from '../services/flag-changes.js';
import type { PlayerIndexDeps } from '../services/player-buckets.js';
import { announceTops } from '../pubsub/announce.js';
import { announceLeagueChanges, announceLeaguePlayer } from '../pubsub/league-signal.js';
import { forgetTops, heldBuckets, inTop, warmBoards } from '../services/player-buckets.js';
import { hasClosed } from '../model/buckets.js';

/** What a flag or an unflag did. */
export interface FlagOutcome {
  player: Player;
  /** The buckets whose watched top the change touched: each is a top change for topChanged to publish. */
  changedTops: BoardBucket[];
}

/** What flagging and unflagging take (7 members). */
export interface FlagDeps extends PlayerIndexDeps {
  flagChanges: Pick<FlagChanges, 'raised'>;
}

/**
 * Hides a player from every board: the flag is committed in PostgreSQL first, then the player is
 * taken out of every index bucket their board scores name. A closed bucket's frozen standings are
 * not touched: a flag after the freeze leaves them as they were (docs/closing.md). That order is what lets a submission
 * racing with the flag converge (see keepFlaggedOut in submission-groups.ts). Their results are still
 * recorded while flagged. Idempotent, so a call that failed at the index can be repeated.
 * O(B log N) for B board scores.
 */
export async function flagPlayer(deps: FlagDeps, playerId: string, reason: string): Promise<FlagOutcome> {
  const { storage } = deps;
  await warmBoards(deps);
  const outcome = await storage.players.whileLocked(playerId, async (locked) => {
    const player = await locked.flag(reason, deps.now());
    // After the commit, before the removal: a write path that reads the same token on both sides
    // of its index write knows that no flag landed meanwhile (see flag-recheck.ts).
    await deps.flagChanges.raised();
    return { player, ...(await takeOutOfIndex(deps, playerId, await locked.boardScores(deps.now()))) };
  });
  await announceTakenOut(deps, playerId, outcome);
  return { player: outcome.player, changedTops: outcome.changedTops };
}

/** Where a player was taken out of the index: every bucket, and those whose watched top they were in. */
export interface TakenOut {
  held: BoardBucket[];
  changedTops: BoardBucket[];
}

/**
 * Takes a player out of every index bucket that these board scores of theirs name (heldBuckets:
 * the buckets still kept), as a flag, an erasure and an entry's removal do. O(B log N).
 */
export async function takeOutOfIndex(deps: PlayerIndexDeps, playerId: string, scores: PlayerBoardScore[]): Promise<TakenOut> {
  const held = await heldBuckets(deps, playerId, scores);
  const ranks = await deps.index.removePlayer(held, playerId);
  return { held, changedTops: held.filter((at, i) => inTop(at, ranks[i])) };
}

/** After a player was taken out of `held`: this process's cached tops dropped, the tops and cohorts they left announced. */
export async function announceTakenOut(deps: PlayerIndexDeps, playerId: string, { held, changedTops }: TakenOut): Promise<void> {
  forgetTops(deps, held);
  await announceTops(deps, changedTops);
  // Hidden from their cohorts too, wherever they stood (cohortChanged).
  await announceLeaguePlayer(
    deps,
    held.filter((at) => at.board.league).map((at) => at.board.id),
    playerId,
  );
}

/**
 * Takes out of every view a player whom a group of submissions flagged in its own transaction (a
 * board's suspectAbove or suspectJump, see db/result-guards.ts): what flagPlayer does once its flag
 * is committed, in the same order (the token raised, then the board scores read and removed), so a
 * submission racing with it converges the same way. Under the player's lock, and only while they
 * are still flagged: an unflag that came first has shown them again already. O(B log N).
 */
export async function takeOutSuspect(deps: FlagDeps, playerId: string): Promise<void> {
  await warmBoards(deps);
  const held = await deps.storage.players.whileLocked(playerId, async (locked) => {
    if (!(await locked.isFlagged())) return null;
    await deps.flagChanges.raised();
    return takeOutOfIndex(deps, playerId, await locked.boardScores(deps.now()));
  });
  if (held) await announceTakenOut(deps, playerId, held);
}

/**
 * Shows a player again: the flag is cleared first, then every board score they hold (results
 * recorded while flagged included) is written back into the index, except in buckets no longer
 * kept or closed (a frozen bucket stays as it was frozen, without them). A submission that saw the flag before it was cleared left the index alone, but its board
 * scores were committed before that and so are among those written back here. O(B log N).
 */
export async function unflagPlayer(deps: FlagDeps, playerId: string): Promise<FlagOutcome> {
  const { storage, index } = deps;
  await warmBoards(deps);
  const outcome = await storage.players.whileLocked(playerId, async (locked) => {
    const player = (await locked.unflag()) ?? { id: playerId, displayName: null, avatarUrl: null };
    const now = deps.now();
    // Not into a closed bucket: its standings are frozen as they were at its close, the flag's
    // absence included, and its keys are let go (docs/closing.md).
    const held = (await heldBuckets(deps, playerId, await locked.boardScores(now))).filter((at) => !hasClosed(at.board, at.bucket, now));
    const written = await index.writeBoardScores(
      held.map(({ board, bucket, region, expiresAt, score }) => ({ at: { board, bucket, region }, score, expiresAt })),
    );
    return { player, held, changedTops: held.filter((at, i) => inTop(at, written[i]?.place?.rank)) };
  });
  forgetTops(deps, outcome.held);
  // The write script announced these already; announcing again is harmless (watchers coalesce).
  await announceTops(deps, outcome.changedTops);
  // Back in their cohorts: a watcher does not know a hidden member, so each round written is announced whole.
  await announceLeagueChanges(
    deps,
    outcome.held.map((at) => ({ at, playerId: null })),
  );
  return { player: outcome.player, changedTops: outcome.changedTops };
}

/** The flagged players, most recently flagged first, at most `first`. */
export async function listFlaggedPlayers(deps: { storage: Pick<Storage, 'players'> }, first: number): Promise<PlayerFlag[]> {
  return deps.storage.players.listFlags(first);
}

/** Why and since when the player is hidden, or null when they are not. O(1). */
export async function playerFlag(deps: { storage: Pick<Storage, 'players'> }, playerId: string): Promise<PlayerFlag | null> {
  return deps.storage.players.findFlag(playerId);
}
