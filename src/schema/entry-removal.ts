import * as players from '../resolvers/players.js';
import type { EntryRemoval } from '../resolvers/players.js';
import { builder } from './builder.js';
import { idSchema, intRange } from './validation.js';

export const EntryRemovalRef = builder.objectRef<EntryRemoval>('EntryRemoval');

EntryRemovalRef.implement({
  description: 'Added (issue 25): one removeEntry, as recorded.',
  fields: (t) => ({
    board: t.exposeID('boardId'),
    playerId: t.exposeID('playerId'),
    reason: t.exposeString('reason'),
    removedBy: t.exposeString('removedBy', { description: 'The id of the API key that asked (its digest prefix).' }),
    removedAt: t.expose('removedAt', { type: 'DateTime' }),
    results: t.exposeInt('results', { description: "How many of the player's results on the board were removed." }),
  }),
});

builder.queryFields((t) => ({
  entryRemovals: t.field({
    type: [EntryRemovalRef],
    description:
      'Added (issue 25): admin. The removeEntry calls that removed something, newest first, of one board, one player, both or every one (first: 1 to 200). Kept when the board is deleted.',
    authScopes: { admin: true },
    args: {
      board: t.arg.id({ validate: idSchema.nullish() }),
      playerId: t.arg.id({ validate: idSchema.nullish() }),
      first: t.arg.int({ required: true, defaultValue: 50, validate: intRange(1, 200, 'first') }),
    },
    resolve: (_root, args, ctx) => players.entryRemovals(args, ctx),
  }),
}));
