import type { Sql } from 'postgres';
import type { LeagueOutcome } from '../model/league.js';
import type { Period } from '../model/board.js';

/**
 * Reads of a league's cohorts (issue 57), as placement and the round's close wrote them
 * (cohort_members, league_cohorts, league_players). Each is a probe or a range of one index:
 * - a player's cohort: the primary key of cohort_members (board, round, player);
 * - a cohort's members: cohort_members_cohort_idx (board, round, tier, number);
 * - a round's tiers: the primary keys of league_cohorts and cohort_members (board, round).
 * Scores are not here: a live cohort's are the round bucket's in the index, a closed one's its
 * frozen standings.
 */

/** One member of a cohort: who, and the outcome its round's close recorded (null while the round is open). */
export interface CohortMember {
  playerId: string;
  outcome: LeagueOutcome | null;
}

/** Where a cohort is: a board's round, a tier (its index, 0 the first) and its number. */
export interface CohortKey {
  boardId: string;
  round: string;
  tier: number;
  number: number;
}

/** A player's cohort in a round and its members; or, not placed there, the tier their next placement uses. */
export type PlayerCohort =
  | { placed: true; tier: number; number: number; members: CohortMember[] }
  /** `tier` null: the player has no league row (a newcomer, who starts in the last tier). */
  | { placed: false; tier: number | null };

interface MemberRow {
  player_id: string;
  outcome: LeagueOutcome | null;
  tier: number;
  number: number;
}

/**
 * The members of a cohort (erased players' memberships are gone), in no order; null when the
 * round has no such cohort. One statement: the cohort's row, and its members by
 * cohort_members_cohort_idx. O(log N + cohort).
 */
export async function cohortMembers(sql: Sql, key: CohortKey): Promise<CohortMember[] | null> {
  const rows = await sql<{ player_id: string | null; outcome: LeagueOutcome | null }[]>`
    select m.player_id, m.outcome
    from league_cohorts c
    left join cohort_members m
      on m.board_id = c.board_id and m.round = c.round and m.tier = c.tier and m.number = c.number
    where c.board_id = ${key.boardId} and c.round = ${key.round} and c.tier = ${key.tier} and c.number = ${key.number}`;
  if (rows.length === 0) return null;
  return rows.flatMap((row) => (row.player_id === null ? [] : [{ playerId: row.player_id, outcome: row.outcome }]));
}

/**
 * The player's cohort of a round with its members (the player among them), in one statement; when
 * the player was not placed there, a second probe of league_players for their tier. O(log N + cohort).
 */
export async function playerCohort(sql: Sql, args: { boardId: string; round: string; playerId: string }): Promise<PlayerCohort> {
  const rows = await sql<MemberRow[]>`
    with own as (
      select tier, number from cohort_members where board_id = ${args.boardId} and round = ${args.round} and player_id = ${args.playerId}
    )
    select m.player_id, m.outcome, m.tier, m.number
    from own join cohort_members m
      on m.board_id = ${args.boardId} and m.round = ${args.round} and m.tier = own.tier and m.number = own.number`;
  const first = rows[0];
  if (first) {
    return { placed: true, tier: first.tier, number: first.number, members: rows.map((row) => ({ playerId: row.player_id, outcome: row.outcome })) };
  }
  const [league] = await sql<{ tier: number }[]>`
    select tier from league_players where board_id = ${args.boardId} and player_id = ${args.playerId}`;
  return { placed: false, tier: league?.tier ?? null };
}

/** One tier of a round: how many cohorts it opened, and how many players they hold now (flagged ones not counted). */
export interface TierCount {
  tier: number;
  cohorts: number;
  players: number;
}

/**
 * Each tier of a round that has cohorts, with its cohorts and its players as its cohorts show them
 * (erased players gone): while the round is open, the members not flagged (they are hidden from
 * their cohorts); once closed (`frozenPeriod` given), the members with a frozen standing, as the
 * closed cohorts show them, whatever was flagged since. Two ranges of (board, round), one probe a
 * member. O(cohorts + players of the round).
 */
export async function roundTiers(sql: Sql, args: { boardId: string; round: string; frozenPeriod?: Period | null | undefined }): Promise<TierCount[]> {
  const shown = args.frozenPeriod
    ? sql`exists (select 1 from frozen_standings f where f.board_id = m.board_id and f.period = ${args.frozenPeriod} and f.bucket = m.round and f.region = '' and f.player_id = m.player_id)`
    : sql`not exists (select 1 from players f where f.id = m.player_id and f.flagged_at is not null)`;
  const rows = await sql<{ tier: number; cohorts: number; players: number }[]>`
    select c.tier, c.cohorts::int as cohorts, coalesce(p.players, 0)::int as players
    from (
      select tier, count(*) as cohorts from league_cohorts where board_id = ${args.boardId} and round = ${args.round} group by tier
    ) c
    left join (
      select m.tier, count(*) as players
      from cohort_members m
      where m.board_id = ${args.boardId} and m.round = ${args.round} and ${shown}
      group by m.tier
    ) p on p.tier = c.tier
    order by c.tier`;
  return rows.map((row) => ({ tier: row.tier, cohorts: Number(row.cohorts), players: Number(row.players) }));
}
