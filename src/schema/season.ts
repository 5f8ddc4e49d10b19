import { z } from 'zod';
import * as seasons from '../resolvers/seasons.js';
import type { Season } from '../resolvers/seasons.js';
import * as reads from '../resolvers/reads.js';
import { BoardRef } from './board.js';
import { builder } from './builder.js';
import { RANK_STYLE_ARG } from './enums.js';
import { StandingConnectionRef, pageArgs, pageArgsRule, pageArgsShape } from './standing-connection.js';
import { idSchema, textSchema } from './validation.js';

export const SeasonRef = builder.objectRef<Season>('Season');

SeasonRef.implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    startsAt: t.expose('startsAt', { type: 'DateTime' }),
    endsAt: t.expose('endsAt', { type: 'DateTime', nullable: true }),
    closedAt: t.expose('closedAt', {
      type: 'DateTime',
      nullable: true,
      description: 'Set once the season is closed and its final standings are frozen.',
    }),
  }),
});

builder.objectFields(BoardRef, (t) => ({
  currentSeason: t.field({ type: SeasonRef, nullable: true, resolve: (board, _args, ctx) => seasons.currentSeason(board, ctx) }),
  seasons: t.field({ type: [SeasonRef], resolve: (board, _args, ctx) => seasons.seasons(board, ctx) }),
}));

builder.queryFields((t) => ({
  seasonResults: t.field({
    type: StandingConnectionRef,
    description: 'The frozen final standings of a closed season.',
    args: {
      board: t.arg.id({ required: true }),
      season: t.arg.id({ required: true }),
      first: t.arg.int({ required: true, defaultValue: 100 }),
      after: t.arg.string(),
      ...pageArgs(t.arg),
      rankStyle: t.arg(RANK_STYLE_ARG),
    },
    validate: z.looseObject({ board: idSchema, season: idSchema, ...pageArgsShape }).superRefine(pageArgsRule),
    resolve: (_root, args, ctx, info) => reads.seasonResults(args, ctx, info),
  }),
}));

builder.mutationFields((t) => ({
  startSeason: t.field({
    type: SeasonRef,
    description:
      "Admin. Starts the board's next season; the current one, if any, must be closed first, or end by `startsAt`. It counts every result achieved at or after the `startsAt` it answers, from the moment it answers.",
    authScopes: { admin: true },
    args: {
      board: t.arg.id({ required: true, validate: idSchema }),
      name: t.arg.string({ required: true, validate: textSchema(200) }),
      endsAt: t.arg({ type: 'DateTime' }),
      startsAt: t.arg({
        type: 'DateTime',
        description:
          'When the season starts: now when left out, or later, to schedule the next season ahead (it then starts by the clock, and the season closer closes the one before at its endsAt). Refused in the past, or overlapping a season not closed yet.',
      }),
    },
    resolve: (_root, args, ctx) => seasons.startSeason(args, ctx),
  }),
  closeSeason: t.field({
    type: SeasonRef,
    description: 'Admin. Closes the current season and freezes its final standings; seasonResults serves them from then on.',
    authScopes: { admin: true },
    args: { board: t.arg.id({ required: true, validate: idSchema }) },
    resolve: (_root, args, ctx) => seasons.closeSeason(args, ctx),
  }),
}));
