import { z } from 'zod';
import * as players from '../resolvers/players.js';
import type { Player } from '../resolvers/players.js';
import { MAX_FRIENDS } from '../model/contract.js';
import { builder } from './builder.js';
import { avatarUrlSchema, displayNameSchema, idSchema, intRange, textSchema } from './validation.js';

export const PlayerRef = builder.objectRef<Player>('Player');

PlayerRef.implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    displayName: t.exposeString('displayName', { nullable: true }),
    avatarUrl: t.exposeString('avatarUrl', { nullable: true }),
  }),
});

builder.queryFields((t) => ({
  player: t.field({
    type: PlayerRef,
    nullable: true,
    args: { id: t.arg.id({ required: true, validate: idSchema }) },
    resolve: (_root, args, ctx) => players.player(args, ctx),
  }),
  searchPlayers: t.field({
    type: [PlayerRef],
    description:
      'Admin. Players whose id starts with `text` or whose display name contains it, case-insensitive: the exact id first, then ids, then names (first: 1 to 100). A player with scores but no profile is found by their id too (exact, or a prefix of it).',
    authScopes: { admin: true },
    args: {
      text: t.arg.string({ required: true, validate: textSchema(128) }),
      first: t.arg.int({ required: true, defaultValue: 20, validate: intRange(1, 100, 'first') }),
    },
    resolve: (_root, args, ctx) => players.searchPlayers(args, ctx),
  }),
}));

const PlayerInput = builder.inputType('PlayerInput', {
  fields: (t) => ({
    id: t.id({ required: true, validate: idSchema }),
    displayName: t.string({ validate: displayNameSchema.nullable() }),
    avatarUrl: t.string({ validate: avatarUrlSchema.nullable() }),
  }),
});

builder.mutationFields((t) => ({
  upsertPlayer: t.field({
    type: PlayerRef,
    description: "Game servers. Creates or updates a player's profile.",
    authScopes: { server: true },
    args: { input: t.arg({ type: PlayerInput, required: true }) },
    resolve: (_root, args, ctx) => players.upsertPlayer(args, ctx),
  }),
  setFriends: t.int({
    description: "Game servers. Replaces the player's friend list (at most 1,000 ids); answers how many friends it now holds.",
    authScopes: { server: true },
    args: {
      playerId: t.arg.id({ required: true, validate: idSchema }),
      friendIds: t.arg.idList({ required: true, validate: z.array(idSchema).max(MAX_FRIENDS, `at most ${MAX_FRIENDS} friends`) }),
    },
    resolve: (_root, args, ctx) => players.setFriends(args, ctx),
  }),
  flagPlayer: t.field({
    type: PlayerRef,
    description: 'Admin. Hides the player from every board; their scores are kept and still recorded.',
    authScopes: { admin: true },
    args: {
      playerId: t.arg.id({ required: true, validate: idSchema }),
      reason: t.arg.string({ required: true, validate: textSchema(500) }),
    },
    resolve: (_root, args, ctx) => players.flagPlayer(args, ctx),
  }),
  unflagPlayer: t.field({
    type: PlayerRef,
    description: 'Admin. Shows the player again, with every score they have.',
    authScopes: { admin: true },
    args: { playerId: t.arg.id({ required: true, validate: idSchema }) },
    resolve: (_root, args, ctx) => players.unflagPlayer(args, ctx),
  }),
  deletePlayer: t.boolean({
    description:
      'Admin. Erases the player everywhere, for a privacy request: profile, friends, results, board scores and index entries. Answers whether anything was erased.',
    authScopes: { admin: true },
    args: { playerId: t.arg.id({ required: true, validate: idSchema }) },
    resolve: (_root, args, ctx) => players.deletePlayer(args, ctx),
  }),
  removeEntry: t.boolean({
    description:
      "Added (issue 25): removes one player's results and scores from one board (every bucket, seasons included, frozen results excepted), leaving the player and their other boards untouched. Answers whether anything was removed.",
    authScopes: { admin: true },
    args: {
      board: t.arg.id({ required: true, validate: idSchema }),
      playerId: t.arg.id({ required: true, validate: idSchema }),
      reason: t.arg.string({ required: true, validate: textSchema(500) }),
    },
    resolve: (_root, args, ctx) => players.removeEntry(args, ctx),
  }),
}));
