import type { Sql, TransactionSql } from 'postgres';
import { lockPlayerForTransaction } from './locks.js';

/**
 * Tournaments (issue 57): who joined which board (board_members), how many did
 * (board_member_counts), and the results a player used against a board's maxAttempts.
 */

/** What joining answered: newly joined, a member already, or refused (maxPlayers have joined). */
export type JoinOutcome = 'joined' | 'member' | 'full';

/** A (board, player) as a set key. */
export const memberId = (boardId: string, playerId: string) => `${boardId}\u0000${playerId}`;

/**
 * Joins a player to a board, first come first served: the board's count row is locked (created at
 * the first join) before the membership is looked at, so concurrent joins take turns and the count
 * never passes `maxPlayers` (null: no limit). A member already is answered 'member', full or not.
 * The player's admin lock (db/locks.ts) is taken first, as an erasure takes it, so a join and the
 * erasure of one player never wait on each other's rows in a cycle. Two statements after the lock.
 * O(log N).
 */
export async function joinBoard(sql: Sql, boardId: string, playerId: string, maxPlayers: number | null): Promise<JoinOutcome> {
  return sql.begin(async (tx) => {
    await lockPlayerForTransaction(tx, playerId);
    const [count] = await tx<{ joined: number }[]>`
      insert into board_member_counts as c (board_id, joined) values (${boardId}, 0)
      on conflict (board_id) do update set joined = c.joined
      returning joined`;
    // A statement after the lock: its snapshot holds every join committed before this one's turn.
    const [row] = await tx<{ was_member: boolean; added: boolean }[]>`
      with added as (
        insert into board_members (board_id, player_id)
        select ${boardId}, ${playerId} where ${maxPlayers}::int4 is null or ${count!.joined}::int4 < ${maxPlayers}::int4
        on conflict do nothing
        returning 1),
      counted as (
        update board_member_counts set joined = joined + 1 where board_id = ${boardId} and exists (select 1 from added))
      select exists (select 1 from board_members where board_id = ${boardId} and player_id = ${playerId}) as was_member,
             exists (select 1 from added) as added`;
    if (row!.was_member) return 'member';
    return row!.added ? 'joined' : 'full';
  });
}

/** Which of the (board, player) pairs are not members ({@link memberId} keys). One query, O(k log N). */
export async function notJoined(sql: Sql, pairs: { boardId: string; playerId: string }[]): Promise<Set<string>> {
  if (pairs.length === 0) return new Set();
  const rows = await sql<{ board_id: string; player_id: string }[]>`
    select q.board_id, q.player_id
    from unnest(${sql.array(pairs.map((p) => p.boardId))}::text[], ${sql.array(pairs.map((p) => p.playerId))}::text[]) as q(board_id, player_id)
    where not exists (select 1 from board_members m where m.board_id = q.board_id and m.player_id = q.player_id)`;
  return new Set(rows.map((row) => memberId(row.board_id, row.player_id)));
}

/** How many players joined each board (0 for one none joined). One probe a board. */
export async function joinedCounts(sql: Sql, boardIds: readonly string[]): Promise<Map<string, number>> {
  const rows = await sql<{ board_id: string; joined: number }[]>`
    select board_id, joined from board_member_counts where board_id = any(${sql.array([...boardIds])}::text[])`;
  const found = new Map(rows.map((row) => [row.board_id, row.joined]));
  return new Map(boardIds.map((id) => [id, found.get(id) ?? 0]));
}

/**
 * The results of a player on a board achieved in [startsAt, endsAt) (endsAt null: no end): the
 * attempts used in that bucket. One range of the log's (board, player) key per month. O(r).
 */
export async function attemptsUsed(sql: Sql, boardId: string, playerId: string, span: { startsAt: Date; endsAt: Date | null }): Promise<number> {
  const [row] = await sql<{ used: number }[]>`
    select count(*)::int as used from results
    where board_id = ${boardId} and player_id = ${playerId}
      and achieved_at >= ${span.startsAt.toISOString()}::timestamptz
      and (${span.endsAt?.toISOString() ?? null}::timestamptz is null or achieved_at < ${span.endsAt?.toISOString() ?? null}::timestamptz)`;
  return row!.used;
}

/**
 * Removes a player's memberships for an erasure, inside its transaction (which holds the player's
 * admin lock, as joinBoard takes it): every board they joined (each count row lowered by one), their
 * league tiers, cohort places and waits. A cohort's size (league_cohorts.size) is left as it was:
 * a place an erased player leaves is not refilled. Names every board so each delete is a probe of
 * a (board, player) key. Answers how many rows went.
 */
export async function eraseMemberships(tx: TransactionSql, playerId: string): Promise<number> {
  const [row] = await tx<{ gone: number }[]>`
    with members as (
      delete from board_members where board_id = any(array(select id from boards)) and player_id = ${playerId}
      returning board_id),
    counted as (
      update board_member_counts c set joined = c.joined - 1 from members m where c.board_id = m.board_id),
    tiers as (delete from league_players where board_id = any(array(select id from boards)) and player_id = ${playerId} returning 1),
    places as (delete from cohort_members where player_id = ${playerId} returning 1),
    waits as (delete from league_waiting where board_id = any(array(select id from boards)) and player_id = ${playerId} returning 1)
    select ((select count(*) from members) + (select count(*) from tiers) + (select count(*) from places) + (select count(*) from waits))::int as gone`;
  return row!.gone;
}
