import type { Logger } from 'pino';
import type { BoardBucket, RankingIndex } from '../ranking/index.js';
import { announceLeagueChanges } from './league-signal.js';

/**
 * Tells every API process that these buckets' tops changed (a flag, an unflag, an erasure, a
 * rebuild, a season closed), so their topChanged watchers get the new view. A league round among
 * them is announced to cohortChanged's watchers too, as changed throughout (a rebuild, or its
 * close: the closers announce after the league's close is committed). A failure is logged, not
 * thrown: the change itself is made, and a missed announcement only delays a view until the
 * bucket's next change. O(k) SPUBLISHes.
 */
export async function announceTops(
  services: { index: Pick<RankingIndex, 'announceTopChanged' | 'announceLeague'>; log?: Pick<Logger, 'warn'> | undefined },
  buckets: BoardBucket[],
): Promise<void> {
  await announceLeagueChanges(
    services,
    buckets.map((at) => ({ at, playerId: null })),
  );
  try {
    await services.index.announceTopChanged(buckets);
  } catch (error) {
    services.log?.warn({ err: error, buckets: buckets.length }, 'could not announce top changes; watchers see them at the next change');
  }
}
