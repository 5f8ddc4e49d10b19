import type { EntryRemoval } from '../db/entry-removals.js';
import type { LoggedResult } from '../db/player-results.js';
import type { PlayerFlag } from '../db/flags.js';
import type { Player } from '../db/players.js';
import type { Board } from '../model/board.js';
import type { PlayerBucketScore } from '../reads/player-standings.js';
import type { Context } from './context.js';

/** What answers the player fields: the arguments in, one call of the records, write or admin side out. */

export type { EntryRemoval, LoggedResult, Player, PlayerBucketScore, PlayerFlag };

/** Query.player. */
export const player = (args: { id: string }, ctx: Context): Promise<Player | null> => ctx.records.player(args.id);

/** Query.searchPlayers (admin). */
export const searchPlayers = (args: { text: string; first: number }, ctx: Context): Promise<Player[]> => ctx.admin.searchPlayers(args.text.trim(), args.first);

/** Mutation.upsertPlayer. */
export const upsertPlayer = (
  args: { input: { id: string; displayName?: string | null | undefined; avatarUrl?: string | null | undefined } },
  ctx: Context,
): Promise<Player> => ctx.writes.upsertPlayer(args.input);

/** Mutation.setFriends. */
export const setFriends = (args: { playerId: string; friendIds: string[] }, ctx: Context): Promise<number> =>
  ctx.writes.setFriends(args.playerId, args.friendIds);

/** Mutation.flagPlayer. */
export const flagPlayer = async (args: { playerId: string; reason: string }, ctx: Context): Promise<Player> =>
  (await ctx.writes.flagPlayer(args.playerId, args.reason.trim())).player;

/** Mutation.unflagPlayer. */
export const unflagPlayer = async (args: { playerId: string }, ctx: Context): Promise<Player> => (await ctx.writes.unflagPlayer(args.playerId)).player;

/** Mutation.deletePlayer: whether anything was erased. */
export const deletePlayer = async (args: { playerId: string }, ctx: Context): Promise<boolean> => (await ctx.writes.deletePlayer(args.playerId)).erased;

/** Mutation.removeEntry: whether anything was removed. Recorded with who asked (the key's id), when and why. */
export const removeEntry = async (args: { board: string; playerId: string; reason: string }, ctx: Context): Promise<boolean> =>
  ctx.writes.removeEntry({ board: args.board, playerId: args.playerId, reason: args.reason.trim(), by: ctx.caller?.keyId ?? 'unknown' });

/** Query.entryRemovals (admin): newest first. */
export const entryRemovals = (
  args: { board?: string | null | undefined; playerId?: string | null | undefined; first: number },
  ctx: Context,
): Promise<EntryRemoval[]> => ctx.admin.entryRemovals({ boardId: args.board, playerId: args.playerId, first: args.first });

/** Player.flag (admin). */
export const flag = (player: Player, ctx: Context): Promise<PlayerFlag | null> => ctx.admin.playerFlag(player.id);

/** Query.flaggedPlayers (admin). */
export const flaggedPlayers = (args: { first: number }, ctx: Context): Promise<PlayerFlag[]> => ctx.admin.flaggedPlayers(args.first);

/** Player.boardScores (admin). */
export async function boardScores(player: Player, ctx: Context): Promise<PlayerBucketScore[]> {
  const scores = await ctx.records.boardScores(player.id);
  // Every standing here is this player's (Standing.player is served as held: see the read side's withPlayers).
  for (const { standing } of scores) if (standing) standing.player = player;
  return scores;
}

/** Player.recentResults. */
export const recentResults = (player: Player, args: { first: number }, ctx: Context): Promise<LoggedResult[]> =>
  ctx.records.recentResults(player.id, args.first);

/** PlayerResult.board. */
export const boardOf = (result: { boardId: string }, ctx: Context): Promise<Board> => ctx.records.requireBoard(result.boardId);
