import type { Sql } from 'postgres';
import type { Player } from './players.js';
import { advanceSourceMark } from './source-mark.js';
import { type BoardScoreRow, type PlayerBoardScore, boardScoreColumns, toPlayerBoardScore } from './board-score-rows.js';
import { derivedScoresOfPlayer } from './derived-scores.js';
import type { FlagResult } from './result-guards.js';

/**
 * The flag, read and written with postgres.js rather than drizzle, so that the same functions run
 * on the pool and on the one connection that holds a player's lock (see withPlayerLock). As in
 * result-statements.ts, times are read as epoch milliseconds (drizzle takes over timestamp parsing).
 */

type ProfileRow = { id: string; display_name: string | null; avatar_url: string | null };
const toPlayer = (row: ProfileRow): Player => ({ id: row.id, displayName: row.display_name, avatarUrl: row.avatar_url });

/**
 * Flags a player: hidden from every board from now on. A player may have scores without a profile,
 * so the row is created (id only) when missing. Flagging again keeps the first flaggedAt and
 * replaces the reason. O(1).
 */
export async function setFlag(sql: Sql, playerId: string, reason: string, now: Date): Promise<Player> {
  await advanceSourceMark(sql);
  const [row] = await sql<ProfileRow[]>`
    insert into players (id, flagged_at, flag_reason) values (${playerId}, ${now.toISOString()}::timestamptz, ${reason})
    on conflict (id) do update set
      flagged_at = coalesce(players.flagged_at, excluded.flagged_at), flag_reason = excluded.flag_reason, flag_result = null, updated_at = now()
    returning id, display_name, avatar_url`;
  return toPlayer(row!);
}

/** Clears a player's flag; answers the profile, or null when the player has none (and so was never flagged). O(1). */
export async function clearFlag(sql: Sql, playerId: string): Promise<Player | null> {
  await advanceSourceMark(sql);
  const [row] = await sql<ProfileRow[]>`
    update players set flagged_at = null, flag_reason = null, flag_result = null, updated_at = now() where id = ${playerId}
    returning id, display_name, avatar_url`;
  return row ? toPlayer(row) : null;
}

/** Which of the given players are flagged, in one query. O(k log N). */
export async function flaggedAmong(sql: Sql, playerIds: readonly string[]): Promise<Set<string>> {
  const ids = [...new Set(playerIds)];
  if (ids.length === 0) return new Set();
  const rows = await sql<{ id: string }[]>`select id from players where id = any(${sql.array(ids)}::text[]) and flagged_at is not null`;
  return new Set(rows.map((row) => row.id));
}

/**
 * Every board score a player holds, on every board: the rows kept (board_scores_player_idx) and
 * those derived from their results (derived-scores.ts; with `keptAt`, only those results that may
 * still be in a bucket kept then), flagged or not. Three queries. O(rows + results).
 */
export async function playerBoardScores(sql: Sql, playerId: string, keptAt?: Date): Promise<PlayerBoardScore[]> {
  const [rows, derived] = await Promise.all([
    sql<BoardScoreRow[]>`
      select ${boardScoreColumns(sql)}
      from board_scores s
      left join seasons z on s.period = 'SEASON' and z.board_id = s.board_id and z.id = s.bucket
      where s.player_id = ${playerId}`,
    derivedScoresOfPlayer(sql, playerId, keptAt ? { withFlagged: true, keptAt } : { withFlagged: true }),
  ]);
  return [...rows.map(toPlayerBoardScore), ...derived];
}

/** Why and since when a player is hidden. */
export interface PlayerFlag {
  player: Player;
  reason: string;
  flaggedAt: Date;
  /** The result that flagged the player automatically (a board's suspectAbove or suspectJump); null when flagged by hand. */
  result: FlagResult | null;
}

type FlagRow = ProfileRow & { flag_reason: string; flagged_ms: number; flag_result: string | null };
const toFlag = (row: FlagRow): PlayerFlag => ({
  player: toPlayer(row),
  reason: row.flag_reason,
  flaggedAt: new Date(row.flagged_ms),
  result: row.flag_result === null ? null : (JSON.parse(row.flag_result) as FlagResult),
});

/** The player's flag, or null when they are not flagged. O(1). */
export async function findFlag(sql: Sql, playerId: string): Promise<PlayerFlag | null> {
  const [row] = await sql<FlagRow[]>`
    select id, display_name, avatar_url, flag_reason, round(extract(epoch from flagged_at) * 1000)::float8 as flagged_ms, flag_result::text as flag_result
    from players where id = ${playerId} and flagged_at is not null`;
  return row ? toFlag(row) : null;
}

/** Flagged players, most recently flagged first, at most `limit`. A scan of players (flags are few). O(P). */
export async function listFlags(sql: Sql, limit: number): Promise<PlayerFlag[]> {
  const rows = await sql<FlagRow[]>`
    select id, display_name, avatar_url, flag_reason, round(extract(epoch from flagged_at) * 1000)::float8 as flagged_ms, flag_result::text as flag_result
    from players where flagged_at is not null
    order by flagged_at desc, id limit ${limit}`;
  return rows.map(toFlag);
}
