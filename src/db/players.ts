import { eq, inArray, sql } from 'drizzle-orm';
import type { Sql } from 'postgres';
import type { Db } from './client.js';
import { friendships, players } from './schema.js';

export type Player = Pick<typeof players.$inferSelect, 'id' | 'displayName' | 'avatarUrl'>;

/** Creates or updates a profile. A field left out (undefined) keeps its value; null clears it. */
export async function upsertPlayer(
  db: Db,
  player: { id: string; displayName?: string | null | undefined; avatarUrl?: string | null | undefined },
): Promise<Player> {
  const changes = {
    ...(player.displayName !== undefined ? { displayName: player.displayName } : {}),
    ...(player.avatarUrl !== undefined ? { avatarUrl: player.avatarUrl } : {}),
  };
  const [row] = await db
    .insert(players)
    .values({ id: player.id, ...changes })
    .onConflictDoUpdate({ target: players.id, set: { ...changes, updatedAt: sql`now()` } })
    .returning({ id: players.id, displayName: players.displayName, avatarUrl: players.avatarUrl });
  return row!;
}

/** The profiles of the given ids that exist, in one query. */
export async function findPlayers(db: Db, ids: readonly string[]): Promise<Player[]> {
  if (ids.length === 0) return [];
  return db
    .select({ id: players.id, displayName: players.displayName, avatarUrl: players.avatarUrl })
    .from(players)
    .where(inArray(players.id, [...ids]));
}

/** Replaces a player's friend list in one transaction; answers how many friends it now holds. */
export async function replaceFriends(db: Db, playerId: string, friendIds: readonly string[]): Promise<number> {
  const unique = [...new Set(friendIds)].filter((id) => id !== playerId);
  await db.transaction(async (tx) => {
    await tx.delete(friendships).where(eq(friendships.playerId, playerId));
    if (unique.length > 0) await tx.insert(friendships).values(unique.map((friendId) => ({ playerId, friendId })));
  });
  return unique.length;
}

/** The ids on a player's friend list. */
export async function friendIds(db: Db, playerId: string): Promise<string[]> {
  const rows = await db.select({ id: friendships.friendId }).from(friendships).where(eq(friendships.playerId, playerId));
  return rows.map((row) => row.id);
}

/**
 * Players whose id starts with `text` or whose display name contains it (case-insensitive): the
 * exact id first, then ids, then names, at most `limit`. For the console: a scan of the profiles.
 *
 * A player with results but no profile is found by a prefix of their id too: every result leaves
 * the player an ALL_TIME board-score row, and board_scores_player_search_idx holds those by
 * lower-cased id in byte order, where a prefix is one range. The walk takes one player at a time
 * (the next id past the last, one index probe each, however many boards and regions each is on),
 * at most `limit` of them, so it costs O(limit log N) whatever the board's size. Those with a
 * profile are left to the first branch. Ordered by lower-cased id in byte order, as the walk, so
 * that its first `limit` players hold every one the answer can take.
 */
export async function searchPlayers(sql: Sql, text: string, limit: number): Promise<Player[]> {
  const escaped = text.replace(/[\\%_]/g, (c) => `\\${c}`);
  const rows = await sql<{ id: string; display_name: string | null; avatar_url: string | null }[]>`
    with recursive scored(lowered, id) as (
      (select lower(player_id) collate "C", player_id collate "C" from board_scores
        where period = 'ALL_TIME' and lower(player_id) collate "C" >= lower(${text}::text) collate "C"
          and lower(player_id) collate "C" < (lower(${text}::text) || chr(1114111)) collate "C"
        order by 1, 2 limit 1)
      union all
      select next.lowered, next.id from scored, lateral (
        select lower(player_id) collate "C" as lowered, player_id collate "C" as id from board_scores
        where period = 'ALL_TIME' and (lower(player_id) collate "C", player_id collate "C") > (scored.lowered, scored.id)
          and lower(player_id) collate "C" < (lower(${text}::text) || chr(1114111)) collate "C"
        order by 1, 2 limit 1) next
    )
    select id, display_name, avatar_url from (
      select id, display_name, avatar_url, case when id = ${text} then 0 when id ilike ${`${escaped}%`} then 1 else 2 end as match
      from players where id ilike ${`${escaped}%`} or display_name ilike ${`%${escaped}%`}
      union all
      select found.id, null, null, case when found.id = ${text} then 0 else 1 end
      from (select id from scored limit ${limit}) found
      where not exists (select 1 from players where players.id = found.id)
    ) found
    order by match, lower(id) collate "C", id collate "C" limit ${limit}`;
  return rows.map((row) => ({ id: row.id, displayName: row.display_name, avatarUrl: row.avatar_url }));
}
