import type { CohortMember } from '../db/league-reads.js';
import type { Storage } from '../db/storage.js';
import type { Board } from '../model/board.js';
import { type League, type LeagueOutcome, cohortZones, firstTierIndexOf, outcomeAt } from '../model/league.js';
import type { Place, RankingIndex } from '../ranking/index.js';
import { type ReadBucket, type ReadBucketDeps, requireBoard, resolveReadBucket } from '../services/buckets.js';
import { badInput } from '../errors.js';
import { type ClosedBucket, frozenPlaces } from './frozen.js';
import type { NameStandings } from './history.js';
import type { Want } from './plain.js';
import { sharedRun } from './rank-styles.js';
import { type Standing, toStanding } from './views.js';

/**
 * The league reads (issue 57): a player's placement in a round (Query.league), one cohort
 * (Query.cohort), a round's tiers (Query.leagueTiers). A round is the league period's bucket of
 * the board's global list; who is in which cohort is PostgreSQL's (db/league-reads.ts, one indexed
 * query), and their scores are the round's: the index's places of the cohort's members in the
 * round bucket while it is open (one read of k players, as `friends` reads a list: exact on a
 * sharded bucket and a cluster), its frozen standings once it is closed. The members are ordered
 * as the board ranks them (the global rank, which breaks ties the board's way), then ranked within
 * the cohort: rank, percentile and the three rank styles count its visible players only. A flagged
 * player has no place (flags take players out of the index and out of a freeze), so is hidden, and
 * the zones count the others; an erased player is no member any more.
 */

/** A round of a league board: the league period's global bucket, and whether it is closed (frozen). */
export type LeagueRound = ReadBucket & { league: League };

/** A cohort as Query.cohort and LeaguePlacement.cohort serve it. */
export interface CohortView {
  boardId: string;
  /** The round's label. */
  bucket: string;
  tier: string;
  /** The tier's index, 0 the first. */
  tierIndex: number;
  number: number;
  /** Its visible players in rank order, ranked within the cohort in the board's rank style. */
  entries: Standing[];
  promotedThrough: number;
  demotedFrom: number | null;
  closed: boolean;
  endsAt: Date | null;
}

/** A player's placement in a round, as Query.league serves it, with the round it reads (what a live view watches). */
export interface LeaguePlacementView {
  tier: string;
  cohort: CohortView | null;
  standing: Standing | null;
  outcome: LeagueOutcome | null;
  round: LeagueRound;
}

/** One tier of a round, as Query.leagueTiers serves it. */
export interface LeagueTierView {
  tier: string;
  cohorts: number;
  players: number;
}

/** What the league reads take. */
export interface LeagueReadDeps {
  /** What resolving the round's bucket takes, closed buckets told apart. */
  buckets: ReadBucketDeps;
  index: Pick<RankingIndex, 'standings'>;
  storage: Pick<Storage, 'leagueReads' | 'frozenStandings'>;
}

/** Which round of a board's league: the open one when `bucket` is null. */
export interface RoundArgs {
  /** The board's id, or the board itself when the caller holds it. */
  board: string | Board;
  bucket?: string | null | undefined;
}

/**
 * The round a read names: BAD_USER_INPUT for a board without a league or a malformed label,
 * NOT_FOUND for an unknown board or a round past the board's retention (as every bucket read), or
 * for SEASON rounds with no open season. O(1) for the open round; one remembered lookup for a
 * closed one (resolveReadBucket).
 */
export async function leagueRoundOf(deps: Pick<LeagueReadDeps, 'buckets'>, args: RoundArgs): Promise<LeagueRound> {
  const board = typeof args.board === 'string' ? (deps.buckets.boards.known(args.board) ?? (await requireBoard(deps.buckets, args.board))) : args.board;
  const league = board.league;
  if (!league) throw badInput(`Board "${board.id}" has no league; league reads need a board created with one (createBoard's league).`);
  const at = await resolveReadBucket(deps.buckets, { board: board.id, period: league.period, bucket: args.bucket, region: null });
  return { ...at, league };
}

/** A cohort ranked: its view, and each member's outcome (recorded, or where a close now would take them). */
interface RankedCohort {
  view: CohortView;
  outcomes: Map<string, LeagueOutcome>;
}

/**
 * The members' places in the round, in the board's rank order (hidden members left out): the
 * index's places while it is open (one read: O(k log N), sharded O(S · k log N)), its frozen
 * standings once closed (one probe each: O(k log N)).
 */
async function placesOf(deps: LeagueReadDeps, round: LeagueRound, ids: string[], metadata: boolean): Promise<Place[]> {
  if (ids.length === 0) return [];
  const places = round.frozen ? await frozenPlaces(deps, round as ClosedBucket, ids, metadata) : (await deps.index.standings(round, ids)).places;
  return places.filter((place) => place !== null).sort((a, b) => a.rank - b.rank);
}

/**
 * A cohort of the round, ranked within itself: ORDINAL 1..visible in the board's order;
 * COMPETITION and DENSE shared by equal scores (sharedRun from rank 1); each percentile over the
 * visible players. Outcomes: the recorded one when the round's close wrote it; else the zone of
 * the player's place in the board's order (outcomeAt, as the close ranks them), and STAYED for a
 * hidden member (the close leaves a flagged player where they are). O(k log N).
 */
async function rankCohort(
  deps: LeagueReadDeps,
  round: LeagueRound,
  cohort: { tier: number; number: number; members: readonly CohortMember[] },
  metadata: boolean,
): Promise<RankedCohort> {
  const { league, board } = round;
  const places = await placesOf(
    deps,
    round,
    cohort.members.map((member) => member.playerId),
    metadata,
  );
  const ordinal = places.map((place, i) => ({ ...place, rank: i + 1 }));
  const style = board.rankStyle;
  const styled = style === 'ORDINAL' ? ordinal : sharedRun(ordinal, style, 1);
  const visible = places.length;
  const zones = cohortZones(league, cohort.tier, visible);
  const recorded = new Map(cohort.members.map((member) => [member.playerId, member.outcome]));
  const outcomes = new Map<string, LeagueOutcome>(cohort.members.map((member) => [member.playerId, member.outcome ?? 'STAYED']));
  ordinal.forEach((place) => outcomes.set(place.playerId, recorded.get(place.playerId) ?? outcomeAt(zones, place.rank)));
  return {
    view: {
      boardId: board.id,
      bucket: round.bucket.label,
      tier: tierName(league, cohort.tier),
      tierIndex: cohort.tier,
      number: cohort.number,
      entries: styled.map((place) => toStanding(round, place, visible)),
      promotedThrough: zones.promotedThrough,
      demotedFrom: zones.demotedFrom,
      closed: round.frozen !== null,
      endsAt: round.bucket.end,
    },
    outcomes,
  };
}

const tierName = (league: League, tier: number): string => league.tiers[tier] ?? String(tier);

/** What `want` asks of standings' names, for a read whose standings go through `names`. */
async function named(names: NameStandings | null, standings: readonly Standing[], want: Want): Promise<void> {
  if (names) await names(standings, want.player);
}

/** Asks nothing of the standings: a live view names its own (topChanged's way), once for all its viewers. */
const NOTHING: Want = { player: false, achievedAt: false, metadata: false, withOthers: false };

/**
 * A player's placement in a round: their tier (the cohort's; not placed, the tier their next
 * placement uses: league_players', the last for a newcomer), their cohort ranked, their standing
 * in it (null while hidden) and their outcome (recorded at the close; while open, where a close
 * now would take them; null until placed). One query (two when not placed), one index read.
 * O(log N + cohort · log N).
 */
export async function placementOf(
  deps: LeagueReadDeps,
  names: NameStandings | null,
  args: RoundArgs & { playerId: string },
  want: Want = NOTHING,
): Promise<LeaguePlacementView> {
  const round = await leagueRoundOf(deps, args);
  const own = await deps.storage.leagueReads.ofPlayer({ boardId: round.board.id, round: round.bucket.label, playerId: args.playerId });
  if (!own.placed) {
    return { tier: tierName(round.league, own.tier ?? firstTierIndexOf(round.league)), cohort: null, standing: null, outcome: null, round };
  }
  const { view, outcomes } = await rankCohort(deps, round, own, want.metadata);
  await named(names, view.entries, want);
  return {
    tier: view.tier,
    cohort: view,
    standing: view.entries.find((entry) => entry.playerId === args.playerId) ?? null,
    outcome: outcomes.get(args.playerId) ?? null,
    round,
  };
}

/**
 * One cohort of a round, ranked; null when the round has no such cohort. A tier the league does
 * not name is BAD_USER_INPUT (matched exactly, else ignoring case: names differing only in case are
 * refused at creation). One query, one index read. O(log N + cohort · log N).
 */
export async function cohortOf(
  deps: LeagueReadDeps,
  names: NameStandings | null,
  args: RoundArgs & { tier: string; number: number },
  want: Want = NOTHING,
): Promise<CohortView | null> {
  const round = await leagueRoundOf(deps, args);
  const tier = tierIndexOf(round.league, round.board.id, args.tier);
  const members = await deps.storage.leagueReads.cohort({ boardId: round.board.id, round: round.bucket.label, tier, number: args.number });
  if (!members) return null;
  const { view } = await rankCohort(deps, round, { tier, number: args.number, members }, want.metadata);
  await named(names, view.entries, want);
  return view;
}

/** The index of a tier named `name`; BAD_USER_INPUT naming the league's tiers when none is. O(tiers). */
function tierIndexOf(league: League, boardId: string, name: string): number {
  const exact = league.tiers.indexOf(name);
  if (exact >= 0) return exact;
  const folded = league.tiers.findIndex((tier) => tier.toLowerCase() === name.toLowerCase());
  if (folded >= 0) return folded;
  throw badInput(`Board "${boardId}"'s league has no tier "${name}"; its tiers are ${league.tiers.join(', ')}.`);
}

/** Every tier of the league, best first, with the round's cohorts and players in it as its cohorts show them (0 and 0 for a tier without any). One query. O(tiers + round's players). */
export async function tiersOf(deps: LeagueReadDeps, args: RoundArgs): Promise<LeagueTierView[]> {
  const round = await leagueRoundOf(deps, args);
  const asked = { boardId: round.board.id, round: round.bucket.label, frozenPeriod: round.frozen ? round.league.period : null };
  const counts = new Map((await deps.storage.leagueReads.tiers(asked)).map((count) => [count.tier, count]));
  return round.league.tiers.map((tier, i) => ({ tier, cohorts: counts.get(i)?.cohorts ?? 0, players: counts.get(i)?.players ?? 0 }));
}

/** The league reads as one request sees them: its names are the request's (its read side's ReadSide.name). */
export interface LeagueReads {
  placement(args: RoundArgs & { playerId: string }, want: Want): Promise<LeaguePlacementView>;
  cohort(args: RoundArgs & { tier: string; number: number }, want: Want): Promise<CohortView | null>;
  tiers(args: RoundArgs): Promise<LeagueTierView[]>;
}

/**
 * The process's league reads: each request takes its own (forRequest); a live view (cohortChanged)
 * reads placements and rounds without names (it names each view once for all its viewers).
 */
export interface LeagueReadSides {
  /** The league reads of one request, whose names go through `names`. O(1). */
  forRequest(names: NameStandings): LeagueReads;
  /** A player's placement, unnamed (its standings' `player` left unset); its `round` is the bucket a live view watches. */
  placement(args: RoundArgs & { playerId: string }, want?: Want): Promise<LeaguePlacementView>;
  /** The round a read names (leagueRoundOf): the bucket whose changes move a cohort of it. */
  round(args: RoundArgs): Promise<LeagueRound>;
}

export function createLeagueReads(deps: LeagueReadDeps): LeagueReadSides {
  return {
    forRequest: (names) => ({
      placement: (args, want) => placementOf(deps, names, args, want),
      cohort: (args, want) => cohortOf(deps, names, args, want),
      tiers: (args) => tiersOf(deps, args),
    }),
    placement: (args, want) => placementOf(deps, null, args, want),
    round: (args) => leagueRoundOf(deps, args),
  };
}
