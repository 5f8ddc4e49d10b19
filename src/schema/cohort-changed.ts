import type { LeaguePlacementView } from '../resolvers/leagues.js';
import * as reads from '../resolvers/reads.js';
import { builder } from './builder.js';
import { bucketArgsSchema } from './bucket-args.js';
import { LeaguePlacementRef } from './cohort.js';
import { idSchema } from './validation.js';

/**
 * Subscription.cohortChanged (issue 57): a player's league placement, live (src/pubsub/cohort-changed.ts).
 *
 * What a studio gets, in order:
 * - at once, the player's placement in the board's open round (as Query.league with no bucket):
 *   their tier, and while they have no result in the round, no cohort;
 * - a new view each time their cohort's entries change (who, their order, a score; a member
 *   flagged or erased leaves it), coalesced into at most one per 100 ms per cohort, and only a
 *   view that differs from the last one sent;
 * - their cohort, standing and outcome once they are placed (their first result of the round, or
 *   the previous round's close when they waited for it);
 * - when the round closes, its closed view (closed true, the outcomes recorded by the close), never
 *   skipped by a slow client, then at once the player's placement in the open round: the tier the
 *   close gave them, their cohort when they are placed in it already, none until their first
 *   result. The subscription follows the player from round to round; a SEASON league's ends after
 *   the closed view when no season is open (subscribe again once the next starts).
 */
builder.subscriptionFields((t) => ({
  cohortChanged: t.field({
    type: LeaguePlacementRef,
    description:
      "Added (issue 22): the player's cohort at once, then a new view each time its entries change (the same coalescing as topChanged); the player's placement when they are placed.",
    args: { board: t.arg.id({ required: true }), playerId: t.arg.id({ required: true }) },
    validate: bucketArgsSchema.extend({ playerId: idSchema }),
    subscribe: (_root, args, ctx) => reads.watchCohort(args, ctx),
    resolve: (view: LeaguePlacementView) => view,
  }),
}));
