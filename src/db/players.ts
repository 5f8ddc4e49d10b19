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
 * exact id first, then ids, then names, at most `limit`. A player with scores but no profile is
 * found by their exact id (a probe of the log's keys per board). For the console: a scan of the
 * profiles, bounded by `limit`. O(P).
 */
export async function searchPlayers(sql: Sql, text: string, limit: number): Promise<Player[]> {
  const escaped = text.replace(/[\\%_]/g, (c) => `\\${c}`);
  const rows = await sql<{ id: string; display_name: string | null; avatar_url: string | null }[]>`
    select id, display_name, avatar_url from (
      select id, display_name, avatar_url, case when id = ${text} then 0 when id ilike ${`${escaped}%`} then 1 else 2 end as match
      from players where id ilike ${`${escaped}%`} or display_name ilike ${`%${escaped}%`}
      union all
      select player_id, null, null, 0 from (
        select player_id from result_keys where board_id = any(array(select id from boards)) and player_id = ${text} limit 1) scored
      where not exists (select 1 from players where id = ${text})
    ) found
    order by match, id limit ${limit}`;
  return rows.map((row) => ({ id: row.id, displayName: row.display_name, avatarUrl: row.avatar_url }));
}
