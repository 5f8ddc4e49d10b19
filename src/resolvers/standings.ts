import type { Player } from '../db/players.js';
import type { Period } from '../model/board.js';
import type { Place } from '../ranking/index.js';

/** A Standing as the schema serves it: a place and the size it is a place in. */
export interface Standing {
  playerId: string;
  rank: number;
  score: number;
  percentile: number;
  achievedAt: Date;
  /**
   * The player's profile when the read has it already (topChanged loads each view's profiles once
   * for all its viewers); otherwise the request's player loader fetches it.
   */
  player?: Player | undefined;
}

export function toStanding(place: Place, size: number): Standing {
  return {
    playerId: place.playerId,
    rank: place.rank,
    score: place.score,
    percentile: size === 0 ? 0 : (100 * (size - place.rank)) / size,
    achievedAt: place.reachedAt,
  };
}

export interface PeriodStanding {
  period: Period;
  bucket: string;
  region: string | null;
  standing: Standing;
}

export interface TopBoard {
  boardId: string;
  period: Period;
  bucket: string;
  region: string | null;
  entries: Standing[];
  size: number;
  asOf: Date;
}
