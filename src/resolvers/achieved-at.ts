import DataLoader from 'dataloader';
import { findBoardScores } from '../db/board-scores.js';
import type { BoardScore } from '../model/board.js';
import type { BoardBucket, Place } from '../ranking/index.js';
import { pack, packingFor } from '../ranking/packing.js';
import type { Context, Services } from './context.js';
import type { Standing } from './standings.js';
import { isStoreUnavailable } from './store-errors.js';

/**
 * Standing.achievedAt: the time the player reached the score, as recorded, to the millisecond.
 *
 * The index holds only the packed score, whose time is the start of the packing's tie-break unit
 * (ranking/packing.ts): up to about two minutes early on a board with large scores. The recorded
 * time is the board score's in PostgreSQL (board_scores.reached_at). Reads that already hold it
 * (submit payloads, frozen season results) serve it as is. Index reads look it up only when a
 * selection asks for achievedAt, in one query per request for every standing it serves (the
 * request's loader), and remember it per place read, so that the views the top cache and
 * topChanged share among their readers are looked up once per view, not once per reader.
 *
 * The recorded time is served only when it is the one the index ranks (the same packed value):
 * the index is written after the commit, so for a moment PostgreSQL may hold a newer board score
 * than the one read from the index; the unit's start is served then, which never contradicts the
 * served rank. When PostgreSQL does not answer, the unit's start is served too, as names are left
 * out: a ranking read from Redis is still worth serving.
 */

/** The recorded time of `score` when it is the board score the index holds as `place`; else the start of the place's time unit. */
export function recordedTimeOf(at: BoardBucket, place: Place, score: BoardScore | null | undefined): Date {
  if (!score || score.score !== place.score) return place.reachedAt;
  const packing = packingFor(at.board, at.bucket.period);
  const same =
    pack(at.board, packing, score.score, score.reachedAt, at.bucket.start) === pack(at.board, packing, place.score, place.reachedAt, at.bucket.start);
  return same ? score.reachedAt : place.reachedAt;
}

/** The recorded times of places read from the index, remembered per place object (see above). */
const rememberedTimes = new WeakMap<Place, Promise<Date>>();

/** The request's loader of recorded times: one PostgreSQL query for every standing a request serves. */
export function achievedAtLoader(services: Services) {
  return new DataLoader<{ at: BoardBucket; place: Place }, Date>(
    async (reads) => {
      try {
        const scores = await findBoardScores(
          services.database.sql,
          reads.map(({ at, place }) => ({
            boardId: at.board.id,
            period: at.bucket.period,
            bucket: at.bucket.label,
            region: at.region ?? '',
            playerId: place.playerId,
          })),
        );
        return reads.map(({ at, place }, i) => recordedTimeOf(at, place, scores[i]));
      } catch (error) {
        if (!isStoreUnavailable(error)) throw error;
        services.log.warn({ err: error }, 'recorded times unavailable; answering the tie-break unit');
        return reads.map(({ place }) => place.reachedAt);
      }
    },
    // Remembered per place object instead (rememberedTimes), which lives as long as its view.
    { cache: false },
  );
}

/** A standing's achievedAt: as held, remembered, or looked up with the request's loader. */
export function achievedAtOf(ctx: Context, standing: Standing): Date | Promise<Date> {
  const { achieved } = standing;
  if ('recorded' in achieved) return achieved.recorded;
  let time = rememberedTimes.get(achieved.place);
  if (!time) {
    time = ctx.loaders.achievedAt.load(achieved);
    rememberedTimes.set(achieved.place, time);
    time.catch(() => rememberedTimes.delete(achieved.place));
  }
  return time;
}
