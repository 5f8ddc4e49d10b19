import type { Board, Period } from '../model/board.js';
import { requireBoard } from '../services/buckets.js';
import { type BucketReadDeps, type ListedBucket, checkedList } from './bucket-list.js';
import type { Want } from './plain.js';
import type { PageInfo, Standing } from './views.js';
import { forwardPageInfo } from '../services/cursor.js';

/**
 * A player's history (Query.history): their final standing in each closed bucket of a period
 * where they had one, newest first, within the board's retention, from the frozen standings
 * (db/history.ts). A calendar bucket whose retention has passed is left out, as reads leave it
 * out; seasons are kept for ever.
 */

/** One closed bucket and where the player finished in it (the contract's BucketStanding). */
export interface BucketStanding {
  bucket: ListedBucket;
  standing: Standing;
}

export interface BucketStandingEdge {
  cursor: string;
  node: BucketStanding;
}

export interface BucketStandingConnection {
  edges: BucketStandingEdge[];
  pageInfo: PageInfo;
}

/** Gives standings their players when asked (the request's read side: ReadSide.name). */
export type NameStandings = (standings: readonly Standing[], asked: boolean) => Promise<void>;

const DAY_MS = 86_400_000;

/** The instant a calendar bucket must have ended after to be still kept at `now`; null for periods kept for ever. */
function keptEndAfter(board: Board, period: Period, now: Date): Date | null {
  if (period === 'ALL_TIME' || period === 'SEASON') return null;
  // keptUntil (model/buckets.ts) is the end plus the retention's days: kept while that is later than now.
  return new Date(now.getTime() - board.retention[period] * DAY_MS);
}

/**
 * One keyset page of the player's history. NOT_FOUND for an unknown board; BAD_USER_INPUT for a
 * period the board does not keep or a region it does not have (as Board.periodBuckets). Each
 * standing's rank is in the board's rank style over the frozen bucket (COMPETITION: the first
 * frozen rank of the score; DENSE: one more than the distinct better scores), its percentile from
 * the frozen size; achievedAt and metadata are the frozen ones. Cursors name a bucket by its start
 * and label, bound to the board, player, period and region, and signed. One query (see
 * playerHistory), and one load of the player's name when asked.
 */
export async function historyOf(
  deps: BucketReadDeps,
  names: NameStandings,
  args: { board: string; playerId: string; period: Period; region?: string | null | undefined; first: number; after?: string | null | undefined },
  want: Want,
): Promise<BucketStandingConnection> {
  const board = deps.buckets.boards.known(args.board) ?? (await requireBoard(deps.buckets, args.board));
  const region = checkedList(board, args.period, args.region);
  const scope = `history:${board.id}:${args.period}:${region ?? ''}:${args.playerId}`;
  const after = args.after === null || args.after === undefined ? null : deps.cursors.decode(scope, args.after);
  const rows = await deps.storage.history.ofPlayer({
    boardId: board.id,
    playerId: args.playerId,
    period: args.period,
    region: region ?? '',
    endedAfter: keptEndAfter(board, args.period, deps.buckets.now()),
    after: after ? { startsAt: new Date(after.packed), bucket: after.playerId } : null,
    limit: args.first + 1,
    style: board.rankStyle,
    order: board.order,
    metadata: want.metadata,
  });
  const page = rows.slice(0, args.first);
  const edges = page.map((row) => ({
    cursor: deps.cursors.encode(scope, { packed: row.startsAt.getTime(), playerId: row.bucket }),
    node: {
      bucket: { period: args.period, bucket: row.bucket, region, startsAt: row.startsAt, endsAt: row.endsAt, closed: true, size: row.size },
      standing: {
        playerId: args.playerId,
        rank: row.rank,
        score: row.score,
        tieBreakValues: row.tieBreakValues,
        percentile: row.size === 0 ? 0 : (100 * (row.size - row.rank)) / row.size,
        source: { recorded: { reachedAt: row.reachedAt, metadata: row.metadata } },
      },
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
