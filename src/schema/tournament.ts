import * as tournaments from '../resolvers/tournaments.js';
import { builder } from './builder.js';
import { BoardRef } from './board.js';
import { idSchema } from './validation.js';

/** Tournaments (issue 57): joining a board, how many joined, the attempts a player used. */

builder.objectField(BoardRef, 'joined', (t) =>
  t.int({
    description: 'Added (issue 22): how many players have joined.',
    resolve: (board, _args, ctx) => tournaments.joined(board, ctx),
  }),
);

builder.queryFields((t) => ({
  attemptsUsed: t.int({
    description: "Added (issue 22): the results a player has used in the open bucket of the board's shortest period, when the board has maxAttempts.",
    args: { board: t.arg.id({ required: true, validate: idSchema }), playerId: t.arg.id({ required: true, validate: idSchema }) },
    resolve: (_root, args, ctx) => tournaments.attemptsUsed(args, ctx),
  }),
}));

builder.mutationFields((t) => ({
  joinBoard: t.boolean({
    description:
      'Added (issue 22): Game servers. Joins a player to a board; answers true when newly joined, false when already in. Refused with BAD_USER_INPUT, extensions.reason BOARD_FULL, once maxPlayers have joined.',
    authScopes: { server: true },
    args: { board: t.arg.id({ required: true, validate: idSchema }), playerId: t.arg.id({ required: true, validate: idSchema }) },
    resolve: (_root, args, ctx) => tournaments.joinBoard(args, ctx),
  }),
}));
