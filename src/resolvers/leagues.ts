import type { GraphQLResolveInfo } from 'graphql';
import type { CohortView, LeaguePlacementView, LeagueTierView } from '../reads/league.js';
import type { Context } from './context.js';
import { wantOf, wantOfAny } from './want.js';

export type { CohortView, LeaguePlacementView, LeagueTierView };

/**
 * What answers the league root fields (issue 57): the arguments in, one call of the request's
 * league reads out (src/reads/league.ts), with what the selection wants of the cohort's standings
 * (a placement's `standing` and its cohort's `entries` are the same objects: what either selects is wanted).
 */

/** Query.league. */
export const league = (
  args: { board: string; playerId: string; bucket?: string | null | undefined },
  ctx: Context,
  info: GraphQLResolveInfo,
): Promise<LeaguePlacementView> => ctx.leagues.placement(args, wantOfAny(info, [['standing'], ['cohort', 'entries']]));

/** Query.cohort. */
export const cohort = (
  args: { board: string; tier: string; number: number; bucket?: string | null | undefined },
  ctx: Context,
  info: GraphQLResolveInfo,
): Promise<CohortView | null> => ctx.leagues.cohort(args, wantOf(info, 'entries'));

/** Query.leagueTiers. */
export const leagueTiers = (args: { board: string; bucket?: string | null | undefined }, ctx: Context): Promise<LeagueTierView[]> => ctx.leagues.tiers(args);
