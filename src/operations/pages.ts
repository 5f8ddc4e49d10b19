import { bucketKey } from '../ranking/keys.js';
import { type BucketArgs, resolveBoardBucket } from './buckets.js';
import type { Services } from './services.js';
import { type Standing, toStanding } from './standings.js';
import { styleOf, styledRun } from './rank-styles.js';
import type { Styled } from './reads.js';

/** The most standings one page holds. */
export const MAX_PAGE = 1_000;

export interface StandingEdge {
  cursor: string;
  node: Standing;
}

export interface PageInfo {
  hasNextPage: boolean;
  endCursor: string | null;
}

export interface StandingConnection {
  edges: StandingEdge[];
  pageInfo: PageInfo;
}

/**
 * One page of a bucket's standings, strictly after the `after` cursor. The cursor is bound to the
 * bucket's key, so one issued for another board, bucket or region is refused (BAD_USER_INPUT), as
 * is a malformed or edited one. O(log N + first).
 */
export async function readStandingsPage(
  services: Services,
  args: BucketArgs & Styled & { first: number; after?: string | null | undefined },
): Promise<StandingConnection> {
  const at = await resolveBoardBucket(services, args);
  const { cursors, index } = services;
  const scope = bucketKey(at);
  const after = args.after === null || args.after === undefined ? null : cursors.decode(scope, args.after);
  const view = await index.page(at, after, args.first);
  const places = await styledRun(services, at, view.places, styleOf(at.board, args.rankStyle));
  const edges = places.map((place) => ({
    cursor: cursors.encode(scope, { packed: place.packed, playerId: place.playerId }),
    node: toStanding(at, place, view.size),
  }));
  return { edges, pageInfo: { hasNextPage: view.hasMore, endCursor: edges.at(-1)?.cursor ?? null } };
}
