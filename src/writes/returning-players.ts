import { compareResults, ranksAhead } from '../model/board.js';
import type { BoardScoreWrite, Place } from '../ranking/index.js';
import { bucketKey } from '../ranking/keys.js';
import { boardScoreList } from '../services/buckets.js';
import type { Storage } from '../db/storage.js';
import type { RankingIndex } from '../ranking/index.js';

/**
 * A player back from inactivity (jobs/inactive-players.ts) must come back with their best. The
 * write path writes each result's board score as it stands after it: for ALL_TIME (and every
 * bucket of a SUM board) that is the stored board score, so the player returns with it; but a BEST
 * board's SEASON is derived from the log, and its write is the result itself with ZADD GT, which
 * is the season's best only while every earlier result of the season is in the sorted set. A
 * player taken out of it would come back with a worse new result.
 *
 * So, on boards with inactiveAfterDays only: each SEASON write of a BEST board that the index now
 * holds as written (a new best, or a return) is checked against the season's best in the log, and
 * where that ranks ahead it is written instead, the place answered being the one after. One query
 * per bucket for those writes; nothing at all on other boards. O(k log N).
 */
export async function restoreReturningBest(
  deps: { storage: Pick<Storage, 'boardScores'>; masterIndex: Pick<RankingIndex, 'writeBoardScores'> },
  writes: readonly BoardScoreWrite[],
  placed: { size: number; place: Place | null }[],
): Promise<void> {
  // Most boards: one look at each write's board, nothing made.
  if (!writes.some(({ at }) => at.board.inactiveAfterDays)) return;
  const byBucket = new Map<string, number[]>();
  writes.forEach(({ at, score }, i) => {
    if (!at.board.inactiveAfterDays || at.board.aggregate !== 'BEST' || at.bucket.period !== 'SEASON') return;
    const place = placed[i]?.place;
    // Held as written: the same result (score and tie-break values), whenever reached.
    if (!place || compareResults(at.board, place, score) !== 0) return;
    const key = bucketKey(at);
    const indexes = byBucket.get(key) ?? [];
    if (indexes.push(i) === 1) byBucket.set(key, indexes);
  });
  await Promise.all(
    [...byBucket.values()].map(async (indexes) => {
      const { at, expiresAt } = writes[indexes[0]!]!;
      const best = await deps.storage.boardScores.find(
        boardScoreList(at),
        indexes.map((i) => writes[i]!.score.playerId),
      );
      const fixes = indexes.filter((i) => {
        const found = best.get(writes[i]!.score.playerId);
        return found !== undefined && ranksAhead(at.board, found, writes[i]!.score);
      });
      if (fixes.length === 0) return;
      const rewritten = await deps.masterIndex.writeBoardScores(fixes.map((i) => ({ at, score: best.get(writes[i]!.score.playerId)!, expiresAt })));
      fixes.forEach((i, k) => (placed[i] = rewritten[k]!));
    }),
  );
}
