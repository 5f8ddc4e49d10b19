import type { Storage } from '../db/storage.js';
import { awardId } from '../model/awards.js';
import type { Period } from '../model/board.js';
import { bucketKey } from '../ranking/keys.js';
import { type ReadBucketDeps, resolveReadBucket } from '../services/buckets.js';
import { type CursorCodec, forwardPageInfo } from '../services/cursor.js';
import { frozenKeyOf } from '../services/frozen-directory.js';
import { badInput } from '../errors.js';
import { type ClosedBucket, styledFrozen } from './frozen.js';
import type { NameStandings } from './history.js';
import type { Want } from './plain.js';
import { type FrozenPlace, type PageInfo, type Standing, toStanding } from './views.js';

/**
 * Query.awards (issue 58): a closed list's awards, computed once at its close (db/awards.ts), band
 * by band in rank order, each with its frozen standing ranked in the board's rank style, as the
 * other reads of the closed list rank it.
 */

/** One award: the contract's Award. */
export interface Award {
  id: string;
  band: string;
  standing: Standing;
}

export interface AwardEdge {
  cursor: string;
  node: Award;
}

export interface AwardConnection {
  edges: AwardEdge[];
  pageInfo: PageInfo;
}

/** What reading awards takes. */
export interface AwardReadDeps {
  buckets: ReadBucketDeps;
  storage: Pick<Storage, 'awards' | 'frozenStandings'>;
  cursors: CursorCodec;
}

export interface AwardArgs {
  board: string;
  period: Period;
  bucket: string;
  region?: string | null | undefined;
  first: number;
  after?: string | null | undefined;
}

/** A cursor's position: the band's place (under 20) above the frozen rank's 32 bits, one safe integer. */
const RANK_SPAN = 2 ** 32;

/**
 * One keyset page of a closed list's awards. NOT_FOUND for an unknown board, region-less season or
 * bucket past retention, as the other reads of a bucket answer; BAD_USER_INPUT for a bucket still
 * open (or closed but not frozen yet: its awards come with its freeze). Cursors name an award by
 * its band's place and frozen rank, bound to the list, and signed. One query for the page, one
 * for the styled ranks (none for ORDINAL), and one load of the players' names when asked.
 */
export async function awardsOf(deps: AwardReadDeps, names: NameStandings, args: AwardArgs, want: Want): Promise<AwardConnection> {
  const at = await resolveReadBucket(deps.buckets, args);
  if (!at.frozen) {
    throw badInput(
      `Bucket ${at.bucket.period} ${at.bucket.label} of board "${at.board.id}" has not closed: its awards are computed when it closes and is frozen.`,
    );
  }
  const closed = at as ClosedBucket;
  const scope = `awards:${bucketKey(at)}`;
  const after = args.after === null || args.after === undefined ? null : deps.cursors.decode(scope, args.after);
  const rows = await deps.storage.awards.page({
    ...frozenKeyOf(at),
    after: after ? { bandIndex: Math.floor(after.packed / RANK_SPAN), rank: after.packed % RANK_SPAN } : null,
    limit: args.first + 1,
    metadata: want.metadata,
  });
  const page = rows.slice(0, args.first);
  const places = page.map((row): FrozenPlace => ({
    playerId: row.playerId,
    rank: row.rank,
    score: row.score,
    reachedAt: row.reachedAt,
    tieBreakValues: row.tieBreakValues,
    recorded: { reachedAt: row.reachedAt, metadata: row.metadata },
  }));
  const styled = await styledFrozen(deps, closed, places, at.board.rankStyle);
  const edges = page.map((row, i) => ({
    cursor: deps.cursors.encode(scope, { packed: row.bandIndex * RANK_SPAN + row.rank, playerId: row.playerId }),
    node: {
      id: awardId({ boardId: at.board.id, period: at.bucket.period, bucket: at.bucket.label, region: at.region, band: row.band, playerId: row.playerId }),
      band: row.band,
      standing: toStanding(at, styled[i]!, closed.frozen.size),
    },
  }));
  await names(
    edges.map((edge) => edge.node.standing),
    want.player,
  );
  return {
    edges,
    pageInfo: forwardPageInfo(edges, rows.length > args.first, args.after),
  };
}
