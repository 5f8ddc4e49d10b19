import { type Player, findPlayers, replaceFriends, searchPlayers as searchPlayerRows, upsertPlayer as upsertPlayerRow } from '../db/players.js';
import type { Context } from './context.js';

export async function upsertPlayer(
  ctx: Context,
  input: { id: string; displayName?: string | null | undefined; avatarUrl?: string | null | undefined },
): Promise<Player> {
  // Every process shows the new profile once this answers (see profile-cache.ts).
  const player = await ctx.services.profiles.change(
    [input.id],
    () => upsertPlayerRow(ctx.services.database.db, input),
    (row) => [row],
  );
  ctx.loaders.player.clear(player.id).prime(player.id, player);
  return player;
}

/** Replaces the friend list; answers how many friends it now holds (the player and repeats are dropped). */
export async function setFriends(ctx: Context, playerId: string, friendIds: string[]): Promise<number> {
  return replaceFriends(ctx.services.database.db, playerId, friendIds);
}

/** A player's profile, or null when the game server never created one. */
export async function findPlayer(ctx: Context, id: string): Promise<Player | null> {
  const [player] = await findPlayers(ctx.services.database.db, [id]);
  return player ?? null;
}

/** Players whose id starts with `text` or whose name holds it (see db searchPlayers), at most `first`. */
export async function searchPlayers(ctx: Context, text: string, first: number): Promise<Player[]> {
  return searchPlayerRows(ctx.services.database.sql, text, first);
}
