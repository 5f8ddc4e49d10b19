import type { Sql } from 'postgres';

/** One friend-list row seen from the friend's side: `followerId` lists `playerId` as a friend. */
export interface FollowerRow {
  playerId: string;
  followerId: string;
}

/**
 * Up to `limit` players listing any of `playerIds` as a friend (setFriends), strictly after the
 * (playerId, followerId) pair `after` in that order: one page of a keyset walk, so a player with a
 * hundred thousand followers is read a page at a time, never whole. One statement over
 * friendships_friend_idx (friend_id); O(F log limit) for the F rows of those players.
 */
export async function followersPage(sql: Sql, playerIds: readonly string[], after: FollowerRow | null, limit: number): Promise<FollowerRow[]> {
  if (playerIds.length === 0) return [];
  const rows = await sql<{ friend_id: string; player_id: string }[]>`
    select friend_id, player_id from friendships
    where friend_id = any(${playerIds as string[]})
      ${after ? sql`and (friend_id, player_id) > (${after.playerId}, ${after.followerId})` : sql``}
    order by friend_id, player_id
    limit ${limit}`;
  return rows.map((row) => ({ playerId: row.friend_id, followerId: row.player_id }));
}

/**
 * Which of `pairs` are friend-list rows: those whose `followerId` lists `playerId` as a friend. One
 * statement over the primary key (player_id, friend_id): both sides as arrays, so PostgreSQL walks
 * the key for each follower and mover (a join with the pairs unnested may be planned as a scan of
 * the whole table, whose row count it knows while it cannot know the pairs'); the rows of other
 * pairs among them are dropped here. O(P log F) for P pairs of a few movers.
 */
export async function listedPairs(sql: Sql, pairs: readonly FollowerRow[]): Promise<FollowerRow[]> {
  if (pairs.length === 0) return [];
  const rows = await sql<{ friend_id: string; player_id: string }[]>`
    select friend_id, player_id from friendships
    where player_id = any(${[...new Set(pairs.map((pair) => pair.followerId))]}::text[])
      and friend_id = any(${[...new Set(pairs.map((pair) => pair.playerId))]}::text[])`;
  const asked = new Set(pairs.map((pair) => `${pair.playerId}\u0000${pair.followerId}`));
  return rows.map((row) => ({ playerId: row.friend_id, followerId: row.player_id })).filter((row) => asked.has(`${row.playerId}\u0000${row.followerId}`));
}
