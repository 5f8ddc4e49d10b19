import { MAX_TIER_NAME_LENGTH } from '../model/league.js';
import type { CohortView, LeaguePlacementView, LeagueTierView } from '../resolvers/leagues.js';
import * as leagues from '../resolvers/leagues.js';
import * as reads from '../resolvers/reads.js';
import { builder } from './builder.js';
import { bucketArgsSchema } from './bucket-args.js';
import { LeagueOutcomeEnum } from './league.js';
import { StandingRef } from './standing.js';
import { idSchema, intRange, textSchema } from './validation.js';

/** A league's rounds as read (issue 57): a cohort, a player's placement, a round's tiers, and the root fields that read them. */

export const CohortRef = builder.objectRef<CohortView>('Cohort');

CohortRef.implement({
  fields: (t) => ({
    bucket: t.exposeString('bucket', { description: "The round: the bucket label of the league's period." }),
    tier: t.exposeString('tier'),
    number: t.exposeInt('number', { description: "1-based, in the order the tier's cohorts of the round were opened." }),
    entries: t.field({
      type: [StandingRef],
      description: 'Its players in rank order; rank, percentile and the rank styles count within the cohort.',
      resolve: (cohort) => reads.chunked(cohort.entries),
    }),
    promotedThrough: t.exposeInt('promotedThrough', { description: "Ranks 1 to promotedThrough move up at the round's close; 0 in the first tier." }),
    demotedFrom: t.exposeInt('demotedFrom', {
      nullable: true,
      description: 'Ranks demotedFrom and below move down; null in the last tier, or while the cohort has no more than promote + demote players.',
    }),
    closed: t.exposeBoolean('closed'),
    endsAt: t.expose('endsAt', { type: 'DateTime', nullable: true }),
  }),
});

export const LeaguePlacementRef = builder.objectRef<LeaguePlacementView>('LeaguePlacement');

LeaguePlacementRef.implement({
  fields: (t) => ({
    tier: t.exposeString('tier', { description: "The player's tier in this round." }),
    cohort: t.expose('cohort', { type: CohortRef, nullable: true, description: "The player's cohort; null until their first result of the round." }),
    standing: t.expose('standing', { type: StandingRef, nullable: true }),
    outcome: t.expose('outcome', {
      type: LeagueOutcomeEnum,
      nullable: true,
      description: "Where the round's close takes the player (or would, if it closed now); null until placed.",
    }),
  }),
});

export const LeagueTierRef = builder.objectRef<LeagueTierView>('LeagueTier');

LeagueTierRef.implement({
  fields: (t) => ({
    tier: t.exposeString('tier'),
    cohorts: t.exposeInt('cohorts'),
    players: t.exposeInt('players'),
  }),
});

/** The rules of a round's arguments: the board, and the label (checked against the league's period when read). */
const roundSchema = bucketArgsSchema;

builder.queryFields((t) => ({
  league: t.field({
    type: LeaguePlacementRef,
    description: "Added (issue 22): a player's tier, cohort and standing in a league round (the open one when bucket is null).",
    args: { board: t.arg.id({ required: true }), playerId: t.arg.id({ required: true }), bucket: t.arg.string() },
    validate: roundSchema.extend({ playerId: idSchema }),
    resolve: (_root, args, ctx, info) => leagues.league(args, ctx, info),
  }),
  cohort: t.field({
    type: CohortRef,
    nullable: true,
    description: 'Added (issue 22): one cohort of a round.',
    args: {
      board: t.arg.id({ required: true }),
      tier: t.arg.string({ required: true }),
      number: t.arg.int({ required: true }),
      bucket: t.arg.string(),
    },
    validate: roundSchema.extend({ tier: textSchema(MAX_TIER_NAME_LENGTH), number: intRange(1, 2_147_483_647, 'number') }),
    resolve: (_root, args, ctx, info) => leagues.cohort(args, ctx, info),
  }),
  leagueTiers: t.field({
    type: [LeagueTierRef],
    description: "Added (issue 22): each tier's cohorts and players in a round.",
    args: { board: t.arg.id({ required: true }), bucket: t.arg.string() },
    validate: roundSchema,
    resolve: (_root, args, ctx) => leagues.leagueTiers(args, ctx),
  }),
}));
