import { type NewBoard } from '../db/boards.js';
import {
  type Board,
  type League,
  MAX_CLOSE_GRACE_SECONDS,
  MAX_INACTIVE_AFTER_DAYS,
  PERIODS,
  type Period,
  type RankStyle,
  type RegionTimeZone,
  type ResultRate,
  MAX_TIE_BREAKS,
  type TieBreak,
} from '../model/board.js';
import { leagueProblem } from '../model/league.js';
import { type RewardBandInput, rewardBandsOf, rewardsProblem } from '../model/rewards.js';
import { canonicalTimeZone } from '../model/buckets.js';
import type { Storage } from '../db/storage.js';
import type { BoardDirectory } from '../services/board-directory.js';
import { badInput, notFound } from '../errors.js';
import { MAX_REGIONS } from '../model/contract.js';
import { packingProblem } from '../ranking/packing.js';

/** A board as createBoard receives it: everything but what the service sets (its epoch, its creation time). */
/** What creating and changing a board take: the record, and this process's directory to serve it at once. */
export interface BoardDeps {
  storage: Pick<Storage, 'boards'>;
  boards: Pick<BoardDirectory, 'remember'>;
}

/** A league as createBoard takes it: any period, checked (ALL_TIME is refused, saying why). */
export type LeagueInput = Omit<League, 'period'> & { period: Period };

export type CreateBoardInput = Omit<NewBoard, 'league' | 'rewards' | 'tieBreaks' | 'resultRate'> & {
  league?: LeagueInput | null | undefined;
  rewards?: readonly RewardBandInput[] | null | undefined;
  tieBreaks?: readonly TieBreak[] | null | undefined;
  resultRate?: ResultRate | null | undefined;
};

/** Creates a board; the input type has already checked each field. ALL_TIME is always kept. */
export async function createBoard(deps: BoardDeps, input: CreateBoardInput): Promise<Board> {
  // Kept in the contract's order (ALL_TIME, SEASON, MONTHLY, WEEKLY, DAILY), whatever the input's.
  const periods = PERIODS.filter((period) => period === 'ALL_TIME' || input.periods.includes(period));
  const regions = [...new Set(input.regions)];
  const board = await deps.storage.boards.insert({
    ...input,
    periods,
    regions,
    timeZone: requireTimeZone(input.timeZone ?? 'UTC', 'timeZone'),
    regionTimeZones: requireRegionTimeZones(input.regionTimeZones ?? [], regions),
    inactiveAfterDays: requireInactiveAfterDays(input.inactiveAfterDays),
    closeGraceSeconds: requireCloseGraceSeconds(input.closeGraceSeconds),
    league: requireLeague(input.league ?? null, periods),
    maxPlayers: requireAtLeastOne(input.maxPlayers, 'maxPlayers', 'players'),
    maxAttempts: requireAtLeastOne(input.maxAttempts, 'maxAttempts', 'results a player per bucket'),
    rewards: requireRewards(input.rewards) ?? [],
    tieBreaks: requireTieBreaks(input),
    minScore: requireMinScore(input.minScore ?? 0, input.maxScore),
    suspectAbove: requireSuspectAbove(input.suspectAbove) ?? null,
    suspectJump: requireSuspectJump(input.suspectJump) ?? null,
    resultRate: requireResultRate(input.resultRate) ?? null,
  });
  if (!board) throw badInput(`A board "${input.id}" exists already.`);
  return deps.boards.remember(board);
}

/**
 * inactiveAfterDays as given: null (never) or a whole number of days from 1 to
 * MAX_INACTIVE_AFTER_DAYS; BAD_USER_INPUT naming the field otherwise. undefined stays undefined
 * (left out). The input type checks the same; this is the operation's own guard. O(1).
 */
export function requireInactiveAfterDays<T extends number | null | undefined>(days: T): T {
  if (days === null || days === undefined) return days;
  if (!Number.isInteger(days) || days < 1 || days > MAX_INACTIVE_AFTER_DAYS)
    throw badInput(`inactiveAfterDays: ${days} is not a whole number of days from 1 to ${MAX_INACTIVE_AFTER_DAYS}; null keeps every player ranked.`);
  return days;
}

/**
 * closeGraceSeconds as given: a whole number of seconds from 0 to MAX_CLOSE_GRACE_SECONDS;
 * BAD_USER_INPUT naming the field otherwise. null and undefined (left out) stay undefined. The
 * input type checks the same; this is the operation's own guard. O(1).
 */
export function requireCloseGraceSeconds(seconds: number | null | undefined): number | undefined {
  if (seconds === null || seconds === undefined) return undefined;
  if (!Number.isInteger(seconds) || seconds < 0 || seconds > MAX_CLOSE_GRACE_SECONDS)
    throw badInput(`closeGraceSeconds: ${seconds} is not a whole number of seconds from 0 to ${MAX_CLOSE_GRACE_SECONDS} (366 days).`);
  return seconds;
}

/** A league as given, checked against the board's periods (model/league.ts leagueProblem); BAD_USER_INPUT saying what is wrong. O(tiers). */
function requireLeague(league: LeagueInput | null, periods: readonly Period[]): League | null {
  if (league === null) return null;
  const problem = leagueProblem(league, periods);
  if (problem || league.period === 'ALL_TIME') throw badInput(problem ?? 'league.period: ALL_TIME has no rounds.');
  return { tiers: [...league.tiers], cohortSize: league.cohortSize, promote: league.promote, demote: league.demote, period: league.period };
}

/** Prize bands as given, checked (model/rewards.ts rewardsProblem); null or left out: undefined. BAD_USER_INPUT saying what is wrong. O(bands). */
function requireRewards(bands: readonly RewardBandInput[] | null | undefined): Board['rewards'] {
  if (bands === null || bands === undefined) return undefined;
  const problem = rewardsProblem(bands);
  if (problem) throw badInput(problem);
  return rewardBandsOf(bands);
}

/**
 * Tie-break columns as given: 0 to MAX_TIE_BREAKS, on BEST boards only, each a distinct name and a
 * whole max from 1, and all of them with the score within what the index orders exactly (see
 * packingProblem in ranking/packing.ts); BAD_USER_INPUT saying why otherwise. O(columns²).
 */
function requireTieBreaks(input: Pick<CreateBoardInput, 'tieBreaks' | 'aggregate' | 'maxScore'>): TieBreak[] {
  const columns = input.tieBreaks ?? [];
  if (columns.length === 0) return [];
  if (columns.length > MAX_TIE_BREAKS) throw badInput(`tieBreaks: at most ${MAX_TIE_BREAKS} columns; ${columns.length} given.`);
  if (input.aggregate !== 'BEST')
    throw badInput(`tieBreaks: only a BEST board has tie-break columns (a SUM board's total has no one result whose values could break its ties).`);
  const names = new Set<string>();
  const checked = columns.map(({ name, order, max }, i) => {
    if (names.has(name)) throw badInput(`tieBreaks[${i}]: the name "${name}" is given twice.`);
    names.add(name);
    if (!Number.isSafeInteger(max) || max < 1) throw badInput(`tieBreaks[${i}].max: ${max} is not a whole number from 1 to ${Number.MAX_SAFE_INTEGER}.`);
    return { name, order, max };
  });
  const problem = packingProblem({ maxScore: input.maxScore, tieBreaks: checked });
  if (problem) throw badInput(`tieBreaks: ${problem}`);
  return checked;
}

/** minScore as given: a whole number from 0 to maxScore; BAD_USER_INPUT otherwise. O(1). */
function requireMinScore(minScore: number, maxScore: number): number {
  if (!Number.isSafeInteger(minScore) || minScore < 0 || minScore > maxScore)
    throw badInput(`minScore: ${minScore} is not a whole number from 0 to the board's maxScore (${maxScore}).`);
  return minScore;
}

/** suspectAbove as given: null (never), else a number from 0; undefined stays undefined. O(1). */
function requireSuspectAbove<T extends number | null | undefined>(above: T): T {
  if (above === null || above === undefined) return above;
  if (!Number.isFinite(above) || above < 0) throw badInput(`suspectAbove: ${above} is not a number from 0; null: never.`);
  return above;
}

/** suspectJump as given: null (never), else a factor above 1; undefined stays undefined. O(1). */
function requireSuspectJump<T extends number | null | undefined>(jump: T): T {
  if (jump === null || jump === undefined) return jump;
  if (!Number.isFinite(jump) || jump <= 1 || jump > 1e9)
    throw badInput(`suspectJump: ${jump} is not a factor above 1 (and at most 1,000,000,000); null: never.`);
  return jump;
}

/** resultRate as given: null (no limit), else whole results from 1 in a window of whole seconds from 1; undefined stays undefined. O(1). */
function requireResultRate<T extends ResultRate | null | undefined>(rate: T): T {
  if (rate === null || rate === undefined) return rate;
  if (!Number.isInteger(rate.results) || rate.results < 1 || rate.results > 10_000)
    throw badInput(`resultRate.results: ${rate.results} is not a whole number from 1 to 10,000.`);
  if (!Number.isInteger(rate.perSeconds) || rate.perSeconds < 1 || rate.perSeconds > 86_400)
    throw badInput(`resultRate.perSeconds: ${rate.perSeconds} is not a whole number of seconds from 1 to 86,400.`);
  return { results: rate.results, perSeconds: rate.perSeconds } as T;
}

/** A limit as given: null or left out (none), else a whole number from 1; BAD_USER_INPUT naming the field. O(1). */
function requireAtLeastOne(limit: number | null | undefined, field: string, what: string): number | null {
  if (limit === null || limit === undefined) return null;
  if (!Number.isInteger(limit) || limit < 1 || limit > 2_147_483_647)
    throw badInput(`${field}: ${limit} is not a whole number of ${what} from 1; null: no limit.`);
  return limit;
}

/** The canonical name of an IANA time zone, or BAD_USER_INPUT naming the field. */
function requireTimeZone(zone: string, field: string): string {
  const canonical = canonicalTimeZone(zone);
  if (!canonical) throw badInput(`${field}: "${zone}" is not an IANA time zone this service knows; write it like Europe/Paris, America/New_York or UTC.`);
  return canonical;
}

/** Each region's zone, checked: a region of the board, named once, with a known zone. */
function requireRegionTimeZones(zones: readonly RegionTimeZone[], regions: readonly string[]): RegionTimeZone[] {
  const seen = new Set<string>();
  return zones.map(({ region, timeZone }, i) => {
    if (!regions.includes(region)) throw badInput(`regionTimeZones[${i}]: "${region}" is not one of the board's regions (${regions.join(', ') || 'none'}).`);
    if (seen.has(region)) throw badInput(`regionTimeZones[${i}]: region "${region}" is named twice.`);
    seen.add(region);
    return { region, timeZone: requireTimeZone(timeZone, `regionTimeZones[${i}].timeZone`) };
  });
}

/** What updateBoard receives: the board's id and the settings to change (a field left out is kept). */
export interface UpdateBoardInput {
  id: string;
  title?: string | null | undefined;
  topSize?: number | null | undefined;
  /** Regions to add; existing ones stay. */
  addRegions?: readonly string[] | null | undefined;
  maxScore?: number | null | undefined;
  rankStyle?: RankStyle | null | undefined;
  /** Days without a result after which a player leaves ALL_TIME and SEASON; null: never; left out: unchanged. */
  inactiveAfterDays?: number | null | undefined;
  /**
   * Seconds of grace for late results; left out (or null): unchanged. Lowered, every bucket whose
   * end plus the new grace has passed closes at once (it takes no more results; the bucket closer
   * freezes it at its next pass after the settle margin); raised, a bucket closed already stays
   * closed (frozen), and the open ones take late results for longer.
   */
  closeGraceSeconds?: number | null | undefined;
  /** The board's prize bands, replaced whole ([] none); left out (or null): unchanged. They apply from the next close on. */
  rewards?: readonly RewardBandInput[] | null | undefined;
  /** Only downwards (a score once accepted stays acceptable); left out (or null): unchanged. */
  minScore?: number | null | undefined;
  /** null: never; left out: unchanged. */
  suspectAbove?: number | null | undefined;
  /** null: never; left out: unchanged. */
  suspectJump?: number | null | undefined;
  /** null: no limit; left out: unchanged. */
  resultRate?: ResultRate | null | undefined;
}

/**
 * Changes a board's settings. The input type has checked each field's form; this checks them
 * against the board: maxScore only upwards, and only where every packed value stays as it is (see
 * maxScoreProblem). Nothing is written when anything is refused. The process serves the change at
 * once, the others within a second (see board-directory.ts).
 */
export async function updateBoard(deps: BoardDeps, input: UpdateBoardInput): Promise<Board> {
  const { storage, boards } = deps;
  // Checked against the board as stored, under its row lock: concurrent changes take turns.
  const updated = await storage.boards.change(input.id, (board) => {
    const regions = input.addRegions ? [...new Set([...board.regions, ...input.addRegions])] : undefined;
    if (regions && regions.length > MAX_REGIONS)
      throw badInput(`addRegions: a board keeps at most ${MAX_REGIONS} regions; "${board.id}" would have ${regions.length}.`);
    // Only a board created DENSE counts its distinct scores (see ranking/dense.ts): no board becomes or stops being one.
    if (input.rankStyle && input.rankStyle !== board.rankStyle && (input.rankStyle === 'DENSE' || board.rankStyle === 'DENSE'))
      throw badInput(
        `rankStyle: board "${board.id}" is ${board.rankStyle}; a board is DENSE only when created so, and stays DENSE: ORDINAL and COMPETITION may be swapped, to or from DENSE is refused.`,
      );
    const problem = input.maxScore === null || input.maxScore === undefined ? null : maxScoreProblem(board, input.maxScore);
    if (problem) throw badInput(`maxScore: ${problem}`);
    const minScore = input.minScore ?? undefined;
    if (minScore !== undefined && minScore > (board.minScore ?? 0))
      throw badInput(`minScore: ${minScore} is above the board's ${board.minScore ?? 0}; minScore only goes down (results already accepted stay acceptable).`);
    return {
      title: input.title ?? undefined,
      topSize: input.topSize ?? undefined,
      regions,
      maxScore: input.maxScore ?? undefined,
      rankStyle: input.rankStyle ?? undefined,
      // Unlike the others, null is a value here (never): only a field left out is kept.
      inactiveAfterDays: requireInactiveAfterDays(input.inactiveAfterDays),
      closeGraceSeconds: requireCloseGraceSeconds(input.closeGraceSeconds),
      rewards: requireRewards(input.rewards),
      minScore: minScore === undefined ? undefined : requireMinScore(minScore, input.maxScore ?? board.maxScore),
      suspectAbove: requireSuspectAbove(input.suspectAbove),
      suspectJump: requireSuspectJump(input.suspectJump),
      resultRate: requireResultRate(input.resultRate),
    };
  });
  if (!updated) throw notFound(`No board "${input.id}".`);
  return boards.remember(updated);
}

/**
 * Why a board cannot take `maxScore`, or null when it can. Every member of every bucket is stored
 * as one packed value (ranking/packing.ts): the score above as many bits of tie-break time as the
 * largest score leaves. A higher maxScore of the same bit length keeps every packed value as it is;
 * one that needs another bit would take it from the time, and a LOW_FIRST board packs
 * maxScore - score, so any change there moves every member.
 */
export function maxScoreProblem(board: Pick<Board, 'maxScore' | 'order' | 'id'>, maxScore: number): string | null {
  if (maxScore === board.maxScore) return null;
  if (maxScore < board.maxScore) return `${maxScore} is below the board's ${board.maxScore}; maxScore only goes up (scores already recorded may reach it).`;
  if (board.order === 'LOW_FIRST') {
    return `board "${board.id}" ranks LOW_FIRST, whose index stores maxScore - score, so a new maxScore would move every member of every bucket; create a new board for it.`;
  }
  const ceiling = 2 ** Math.floor(board.maxScore).toString(2).length - 1;
  if (maxScore > ceiling) {
    return `${maxScore} needs more bits than ${board.maxScore} does, which would take them from the tie-break time every member is stored with; the most this board can take is ${ceiling}.`;
  }
  return null;
}
