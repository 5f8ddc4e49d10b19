import type { Sql, TransactionSql } from 'postgres';
import { forgetBacklogPlayer } from './index-backlog.js';
import { advanceSourceMark } from './source-mark.js';
import { type BoardScoreRow, type PlayerBoardScore, boardScoreColumns, toPlayerBoardScore } from './board-score-rows.js';
import { lockPlayerForTransaction } from './locks.js';
import { derivedScoresOfPlayer } from './derived-scores.js';
import { eraseMemberships } from './members.js';

/**
 * Erases a player for a privacy request, in one transaction: the profile, friendships in both
 * directions, every result and board score on every board, their tournament and league
 * memberships (db/members.ts eraseMemberships), their awards; frozen season results keep their rank
 * but no longer name the player. `beforeCommit` is handed the board scores that were deleted (kept
or derived from the results deleted) and
 * runs before the commit (the caller removes the index entries there): if it fails, nothing is
 * erased and the request can simply be retried, whereas removing after the commit would leave
 * entries nothing could find again. Answers whether anything was erased.
 *
 * Every statement follows an index on the player id: O(rows erased · log N).
 */
export async function erasePlayer(sql: Sql, playerId: string, beforeCommit: (scores: PlayerBoardScore[]) => Promise<void>): Promise<boolean> {
  return sql.begin(async (tx) => {
    // Flag, unflag and erasure of one player take turns (see withPlayerLock).
    await lockPlayerForTransaction(tx, playerId);
    await advanceSourceMark(tx);
    // The board scores derived from the log are read before the results they come from go.
    const derived = await derivedScoresOfPlayer(tx, playerId, { withFlagged: true });
    const scores = await deleteBoardScores(tx, playerId, null);
    const profile = await tx`delete from players where id = ${playerId}`;
    const friends = await tx`delete from friendships where player_id = ${playerId} or friend_id = ${playerId}`;
    // The log and its idempotency keys are indexed by (board, player): naming every board keeps
    // this one index probe per board (and per month's partition) rather than a scan of the whole
    // log. The keys go too: they name the player. (Months detached for archiving are outside the
    // database: the operator's archive answers for those.)
    const logged = await tx`
      with keys as (delete from result_keys where board_id = any(array(select id from boards)) and player_id = ${playerId})
      delete from results where board_id = any(array(select id from boards)) and player_id = ${playerId}`;
    const frozen = await tx`update frozen_standings set player_id = null, metadata = null where player_id = ${playerId}`;
    // Their awards name them: they go (the others' stay as computed at the close). awards_player_idx.
    const awards = await tx`delete from awards where player_id = ${playerId}`;
    // Tournaments and leagues: what they joined, their tiers and cohort places (sizes stay: no refilling).
    const memberships = await eraseMemberships(tx, playerId);
    // The index outbox names the player too. Taking them out of its rows waits for a catch-up pass holding
    // them (see jobs/index-catch-up.ts), so that pass's index write lands before the removal below.
    await forgetBacklogPlayer(tx, playerId);
    await beforeCommit([...scores, ...derived]);
    return scores.length + profile.count + friends.count + logged.count + frozen.count + awards.count + memberships > 0;
  });
}

/**
 * Deletes a player's board-score rows, on one board (`boardId`) or on every board (null), and
 * answers them as they were, each with what a SEASON row needs to name its bucket: what the caller
 * takes out of the index before it commits (an erasure, an entry's removal). One statement through
 * board_scores_player_idx: O(rows · log N).
 */
export async function deleteBoardScores(tx: TransactionSql, playerId: string, boardId: string | null): Promise<PlayerBoardScore[]> {
  const rows = await tx<BoardScoreRow[]>`
    with s as (delete from board_scores where player_id = ${playerId} ${boardId === null ? tx`` : tx`and board_id = ${boardId}`} returning *)
    select ${boardScoreColumns(tx)}
    from s left join seasons z on s.period = 'SEASON' and z.board_id = s.board_id and z.id = s.bucket`;
  return rows.map(toPlayerBoardScore);
}
