import type { Board, League, Period } from './board.js';

export type { League, LeaguePeriod } from './board.js';

/**
 * A board's league (issue 57): tiers of small cohorts, re-formed every round (a bucket of the
 * league's period), with promotion and demotion at each round's close. Pure rules, shared by the
 * write path (placement), the round's close and the reads.
 */

export type LeagueOutcome = 'PROMOTED' | 'STAYED' | 'DEMOTED';

export const MIN_TIERS = 2;
export const MAX_TIERS = 20;
export const MIN_COHORT_SIZE = 5;
export const MAX_COHORT_SIZE = 1_000;
/** A tier's name: what the overlay's `cohort=Gold/3` and the console show; no slash, so that split is unambiguous. */
export const MAX_TIER_NAME_LENGTH = 40;

/**
 * What is wrong with a league for a board of these periods, in words a studio can act on; null
 * when nothing is. O(tiers).
 */
export function leagueProblem(league: Omit<League, 'period'> & { period: Period }, periods: readonly Period[]): string | null {
  const { tiers, cohortSize, promote, demote, period } = league;
  if (tiers.length < MIN_TIERS || tiers.length > MAX_TIERS) return `league.tiers: ${tiers.length} tiers; a league has ${MIN_TIERS} to ${MAX_TIERS}.`;
  const seen = new Set<string>();
  for (const [i, tier] of tiers.entries()) {
    if (tier.trim() === '' || tier !== tier.trim()) return `league.tiers[${i}]: a tier's name is not empty and has no leading or trailing space.`;
    if ([...tier].length > MAX_TIER_NAME_LENGTH) return `league.tiers[${i}]: a tier's name has at most ${MAX_TIER_NAME_LENGTH} characters.`;
    if (tier.includes('/') || /\p{Cc}/u.test(tier)) return `league.tiers[${i}]: "${tier}" holds a slash or a control character.`;
    if (seen.has(tier.toLowerCase())) return `league.tiers[${i}]: "${tier}" is named twice (names differing only in case count as one).`;
    seen.add(tier.toLowerCase());
  }
  if (!Number.isInteger(cohortSize) || cohortSize < MIN_COHORT_SIZE || cohortSize > MAX_COHORT_SIZE)
    return `league.cohortSize: ${cohortSize}; a cohort holds ${MIN_COHORT_SIZE} to ${MAX_COHORT_SIZE.toLocaleString('en-US')} players.`;
  if (!Number.isInteger(promote) || promote < 0) return `league.promote: ${promote} is not a whole number of players, 0 or more.`;
  if (!Number.isInteger(demote) || demote < 0) return `league.demote: ${demote} is not a whole number of players, 0 or more.`;
  if (promote + demote > cohortSize) return `league: promote + demote (${promote + demote}) is more than cohortSize (${cohortSize}).`;
  if (period === 'ALL_TIME') return 'league.period: ALL_TIME has no rounds; a league plays DAILY, WEEKLY, MONTHLY or SEASON rounds.';
  if (!periods.includes(period)) return `league.period: ${period} is not one of the board's periods (${periods.join(', ')}).`;
  return null;
}

/** Where a cohort's zones are: ranks 1..promotedThrough move up; demotedFrom and below move down. */
export interface CohortZones {
  /** 0 in the first tier. At most the cohort's visible players. */
  promotedThrough: number;
  /** Null in the last tier, or while the cohort has no more than promote + demote visible players. */
  demotedFrom: number | null;
}

/**
 * The zones of a cohort of `visible` ranked players (flagged and erased players are not counted)
 * in the tier at `tierIndex` (0: the first). O(1).
 */
export function cohortZones(league: Pick<League, 'tiers' | 'promote' | 'demote'>, tierIndex: number, visible: number): CohortZones {
  const promotedThrough = tierIndex === 0 ? 0 : Math.min(league.promote, visible);
  const last = tierIndex === league.tiers.length - 1;
  const demotedFrom = last || league.demote === 0 || visible <= league.promote + league.demote ? null : visible - league.demote + 1;
  return { promotedThrough, demotedFrom };
}

/** Where a round's close takes the player at `rank` (1-based, among visible players) of a cohort with these zones. O(1). */
export function outcomeAt(zones: CohortZones, rank: number): LeagueOutcome {
  if (rank <= zones.promotedThrough) return 'PROMOTED';
  if (zones.demotedFrom !== null && rank >= zones.demotedFrom) return 'DEMOTED';
  return 'STAYED';
}

/** The tier index a player starts in: the last. */
export const firstTierIndexOf = (league: Pick<League, 'tiers'>) => league.tiers.length - 1;

/** The order of periods from the shortest bucket to the longest; ALL_TIME's one bucket is the longest. */
const SHORTEST_FIRST: readonly Period[] = ['DAILY', 'WEEKLY', 'MONTHLY', 'SEASON', 'ALL_TIME'];

/** The board's shortest period: whose open bucket maxAttempts counts in. O(1). */
export function shortestPeriod(board: Pick<Board, 'periods'>): Period {
  return SHORTEST_FIRST.find((period) => board.periods.includes(period)) ?? 'ALL_TIME';
}
