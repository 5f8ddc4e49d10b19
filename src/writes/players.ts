import { type Player } from '../db/players.js';
import type { Storage } from '../db/storage.js';
import type { ProfileCache } from '../services/profile-cache.js';

/** What the profile and friend writes take. */
export interface PlayerDeps {
  storage: Pick<Storage, 'players'>;
  profiles: Pick<ProfileCache, 'change'>;
}

export async function upsertPlayer(
  deps: PlayerDeps,
  input: { id: string; displayName?: string | null | undefined; avatarUrl?: string | null | undefined },
): Promise<Player> {
  // Every process shows the new profile once this answers (see profile-cache.ts).
  const player = await deps.profiles.change(
    [input.id],
    () => deps.storage.players.upsert(input),
    (row) => [row],
  );
  return player;
}

/** Replaces the friend list; answers how many friends it now holds (the player and repeats are dropped). */
export async function setFriends(deps: Pick<PlayerDeps, 'storage'>, playerId: string, friendIds: string[]): Promise<number> {
  return deps.storage.players.replaceFriends(playerId, friendIds);
}

/** A player's profile, or null when the game server never created one. */
export async function findPlayer(deps: Pick<PlayerDeps, 'storage'>, id: string): Promise<Player | null> {
  const [player] = await deps.storage.players.find([id]);
  return player ?? null;
}

/** Players whose id starts with `text` or whose name holds it (see db searchPlayers), at most `first`. */
export async function searchPlayers(deps: Pick<PlayerDeps, 'storage'>, text: string, first: number): Promise<Player[]> {
  return deps.storage.players.search(text, first);
}
