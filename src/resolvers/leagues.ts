import type { FieldNode, GraphQLResolveInfo } from 'graphql';
import type { CohortView, LeaguePlacementView, LeagueTierView } from '../reads/league.js';
import type { Want } from '../reads/plain.js';
import type { Context } from './context.js';
import { selectsField, wantOf } from './want.js';

export type { CohortView, LeaguePlacementView, LeagueTierView };

/**
 * What answers the league root fields (issue 57): the arguments in, one call of the request's
 * league reads out (src/reads/league.ts), with what the selection wants of the cohort's standings.
 */

/** Wants of Query.league worked out before, per field node: they depend on the document alone. */
const placementWants = new WeakMap<FieldNode, Want>();

/**
 * What a placement's selection wants of its standings: its standing and its cohort's entries are
 * the same objects, so what either selects (selectsField: `standing { player }` or
 * `cohort { entries { player } }`) is given to all. Not wantOf twice: it remembers one want per
 * field node, whatever path it was asked with. O(1) for a field met before.
 */
function placementWant(info: GraphQLResolveInfo): Want {
  const [node] = info.fieldNodes;
  const known = node && info.fieldNodes.length === 1 ? placementWants.get(node) : undefined;
  if (known) return known;
  const asks = (name: string) => selectsField(info, 'standing', name) || selectsField(info, 'cohort', 'entries', name);
  const want: Want = { player: asks('player'), achievedAt: asks('achievedAt'), metadata: asks('metadata'), withOthers: false };
  if (node && info.fieldNodes.length === 1) placementWants.set(node, want);
  return want;
}

/** Query.league. */
export const league = (
  args: { board: string; playerId: string; bucket?: string | null | undefined },
  ctx: Context,
  info: GraphQLResolveInfo,
): Promise<LeaguePlacementView> => ctx.leagues.placement(args, placementWant(info));

/** Query.cohort. */
export const cohort = (
  args: { board: string; tier: string; number: number; bucket?: string | null | undefined },
  ctx: Context,
  info: GraphQLResolveInfo,
): Promise<CohortView | null> => ctx.leagues.cohort(args, wantOf(info, 'entries'));

/** Query.leagueTiers. */
export const leagueTiers = (args: { board: string; bucket?: string | null | undefined }, ctx: Context): Promise<LeagueTierView[]> => ctx.leagues.tiers(args);
