import { eq, inArray, sql } from 'drizzle-orm';
import type { Db } from './client.js';
import { friendships, players } from './schema.js';

export type Player = Pick<typeof players.$inferSelect, 'id' | 'displayName' | 'avatarUrl'>;

/** Creates or updates a profile. A field left out (undefined) keeps its value; null clears it. */
export async function upsertPlayer(db: Db, player: { id: string; displayName?: string | null; avatarUrl?: string | null }): Promise<Player> {
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
