import type { Sql, TransactionSql } from 'postgres';
import type { Board, League } from '../model/board.js';
import { type BucketCalendar, bucketAt, parseBucketLabel } from '../model/buckets.js';
import { type LeagueOutcome, firstTierIndexOf } from '../model/league.js';
import { EVENT_PAGE_SIZE, type LeagueRoundClosedData } from '../model/webhooks.js';
import { type OutboxEvent, enqueueWebhookEvents } from './webhook-outbox.js';
import { webhookWants } from './webhook-probe.js';
import { resultsBestFirst } from './result-order.js';
import { type LeagueRound, type PlacementCandidate, lockRounds, placeInOrder } from './leagues.js';

/**
 * A league round's close (issue 57): once the round's global list is frozen (db/frozen.ts), each
 * cohort's visible members are ranked as the frozen standings rank them, their outcomes written,
 * their tiers moved, and the players who waited for it placed in the next rounds. The rules are
 * model/league.ts's (cohortZones, outcomeAt; PROMOTED moves a tier up, DEMOTED one down); the SQL here says them again, so that for
 * a million members the rows never leave the server.
 */

/** A league board, as its round's close needs it: its league, its calendar, and how it ranks (LEAGUE_ROUND_CLOSED's ranks). */
export type LeagueBoard = BucketCalendar & Pick<Board, 'id' | 'order' | 'rankStyle' | 'maxScore' | 'tieBreaks'> & { league: League };

/** A league round to close: the bucket label of the league's period on the board's global list. */
export interface ClosingRound {
  board: LeagueBoard;
  /** The bucket label (2026-W49, 2026-12-07, 2026-12, or a season id). */
  round: string;
  /** The round's end (exclusive); for a season closed before it had one, when it closed. */
  endsAt: Date | null;
}

/** What a round's close did. */
export interface ClosedRound {
  round: string;
  /** Its members, every outcome written. */
  members: number;
  /** Members whose tier moved. */
  moved: number;
  /** Waiting players of later rounds it placed. */
  placed: number;
}

/**
 * Closes a round, in one transaction: claims its league_rounds row (ON CONFLICT DO NOTHING, so
 * exactly one caller closes it; a second waits for the first's commit, then finds the row; a crash
 * rolls everything back, the row included, and the next closer pass closes it), writes every
 * member's outcome, moves tiers, then places the players who waited for it (see
 * {@link placeReleasedIn}). Answers null, doing nothing, when the round is closed already or its
 * global list is not frozen yet.
 *
 * Visible members are those with a frozen standing (flagged players were left out of it) not
 * flagged since; their place in the cohort is their frozen rank's order, so ties are broken as the
 * board breaks them. The others stay. Only a member's tier moves: a player with no result in the
 * round is not a member and keeps theirs; a member already placed in a later round (a late result
 * of this one) keeps the tier that later round gave them.
 *
 * O(M log M) in PostgreSQL for M members (a hash join with the frozen standings and one sort),
 * plus one row written per member (its outcome) and one per moved tier; nothing proportional to M
 * in this process. Waiting players cost what their placement costs.
 *
 * When a webhook wants LEAGUE_ROUND_CLOSED of the board (one probe), the outcomes are written to
 * the outbox in this transaction too (see {@link roundClosedEvents}): then M rows are read.
 */
export async function closeLeagueRound(sql: Sql, round: ClosingRound, closedAt: Date): Promise<ClosedRound | null> {
  const { board } = round;
  const { league } = board;
  const boardId = board.id;
  return sql.begin(async (tx) => {
    // A million members' outcomes are a job, as their freeze was: no statement timeout; the sort in memory.
    await tx`set local statement_timeout = 0`;
    await tx`set local work_mem = '256MB'`;
    const [frozen] = await tx`
      select 1 from frozen_buckets where board_id = ${boardId} and period = ${league.period} and bucket = ${round.round} and region = ''`;
    if (!frozen) return null;
    const [claimed] = await tx`
      insert into league_rounds (board_id, round, closed_at) values (${boardId}, ${round.round}, ${closedAt.toISOString()}::timestamptz)
      on conflict do nothing
      returning 1`;
    if (!claimed) return null;
    const last = firstTierIndexOf(league);
    // cohortZones and outcomeAt: ranks 1..promotedThrough (none in the first tier) move up; ranks
    // from visible - demote + 1 down move down, except in the last tier or while the cohort has no
    // more than promote + demote visible players.
    // Materialized: computed once. Inlined, a planner without statistics on cohort_members (a new
    // deployment before autovacuum's first pass) may join it in a nested loop that computes the
    // window again for every member, O(M²): minutes for a thousand.
    const ranked = await tx`
      with visible as (
        select m.player_id, m.tier, m.number, f.rank
        from cohort_members m
        join frozen_standings f
          on f.board_id = m.board_id and f.period = ${league.period} and f.bucket = m.round and f.region = '' and f.player_id = m.player_id
        where m.board_id = ${boardId} and m.round = ${round.round}
          and not exists (select 1 from players p where p.id = m.player_id and p.flagged_at is not null)
      ), ranked as materialized (
        select player_id, tier,
               row_number() over (partition by tier, number order by rank) as place,
               count(*) over (partition by tier, number) as visible
        from visible
      )
      update cohort_members m
      set outcome = case
        when r.tier > 0 and r.place <= least(${league.promote}::int, r.visible) then 'PROMOTED'
        when r.tier < ${last}::int and ${league.demote}::int > 0 and r.visible > ${league.promote + league.demote}::int
             and r.place >= r.visible - ${league.demote}::int + 1 then 'DEMOTED'
        else 'STAYED' end
      from ranked r
      where m.board_id = ${boardId} and m.round = ${round.round} and m.player_id = r.player_id`;
    // Flagged members (and any without a frozen standing) stay.
    const hidden = await tx`update cohort_members set outcome = 'STAYED' where board_id = ${boardId} and round = ${round.round} and outcome is null`;
    const members = ranked.count + hidden.count;
    // PROMOTED a tier up, DEMOTED a tier down, written only where the tier changes (most members stay).
    const endsAt = round.endsAt?.toISOString() ?? null;
    const moved = await tx`
      update league_players p
      set tier = m.tier + case m.outcome when 'PROMOTED' then -1 when 'DEMOTED' then 1 else 0 end
      from cohort_members m
      where m.board_id = ${boardId} and m.round = ${round.round}
        and p.board_id = ${boardId} and p.player_id = m.player_id
        and p.tier <> m.tier + case m.outcome when 'PROMOTED' then -1 when 'DEMOTED' then 1 else 0 end
        and (${endsAt}::timestamptz is null or p.last_round_ends_at is null or p.last_round_ends_at <= ${endsAt}::timestamptz)`;
    if (await webhookWants(tx, 'LEAGUE_ROUND_CLOSED', boardId)) await enqueueWebhookEvents(tx, await roundClosedEvents(tx, round, closedAt));
    // The round after this one takes its lock too, even with nobody waiting in it yet (see placeReleasedIn).
    const next = league.period === 'SEASON' || !round.endsAt ? [] : [bucketAt(board, league.period, round.endsAt).label];
    const placed = await placeReleasedIn(tx, board, next);
    return { round: round.round, members, moved: moved.count, placed };
  });
}

/**
 * A closed round's LEAGUE_ROUND_CLOSED events: each visible member's outcome (flagged members and
 * any without a frozen standing stay, and are not told), by tier, cohort and rank, in pages of at
 * most EVENT_PAGE_SIZE members an event (one event, with no outcomes, for a round nobody played).
 * A member's rank is within its cohort in the board's rank style, as the cohort reads rank it
 * (reads/league.ts): ORDINAL 1..visible in the frozen order; COMPETITION and DENSE shared by equal
 * results (the score and every tie-break column). One statement, O(M log M), M rows read.
 */
async function roundClosedEvents(tx: TransactionSql, round: ClosingRound, closedAt: Date): Promise<Extract<OutboxEvent, { type: 'LEAGUE_ROUND_CLOSED' }>[]> {
  const { board } = round;
  const { league } = board;
  const cohort = tx`partition by m.tier, m.number`;
  const byScore = resultsBestFirst(tx, board, 'f');
  const rank =
    board.rankStyle === 'ORDINAL'
      ? tx`row_number() over (${cohort} order by f.rank)`
      : board.rankStyle === 'DENSE'
        ? tx`dense_rank() over (${cohort} order by ${byScore})`
        : tx`rank() over (${cohort} order by ${byScore})`;
  const rows = await tx<{ player_id: string; tier: number; number: number; outcome: LeagueOutcome; rank: string | number }[]>`
    select m.player_id, m.tier, m.number, m.outcome, ${rank} as rank
    from cohort_members m
    join frozen_standings f
      on f.board_id = m.board_id and f.period = ${league.period} and f.bucket = m.round and f.region = '' and f.player_id = m.player_id
    where m.board_id = ${board.id} and m.round = ${round.round}
      and not exists (select 1 from players p where p.id = m.player_id and p.flagged_at is not null)
    order by m.tier, m.number, f.rank`;
  const step: Record<LeagueOutcome, number> = { PROMOTED: -1, STAYED: 0, DEMOTED: 1 };
  const outcomes: LeagueRoundClosedData['outcomes'] = rows.map((row) => ({
    playerId: row.player_id,
    tier: league.tiers[row.tier]!,
    cohort: row.number,
    rank: Number(row.rank),
    outcome: row.outcome,
    nextTier: league.tiers[row.tier + step[row.outcome]]!,
  }));
  const pages = Math.max(1, Math.ceil(outcomes.length / EVENT_PAGE_SIZE));
  return Array.from({ length: pages }, (_, i) => ({
    type: 'LEAGUE_ROUND_CLOSED',
    boardId: board.id,
    at: closedAt,
    data: {
      boardId: board.id,
      round: round.round,
      closedAt: closedAt.toISOString(),
      page: i + 1,
      pages,
      outcomes: outcomes.slice(i * EVENT_PAGE_SIZE, (i + 1) * EVENT_PAGE_SIZE),
    },
  }));
}

/**
 * Places a board's waiting players whose last round is closed, in one transaction: what a round's
 * close does last, and what the closer does again at each pass for a player who began to wait in
 * a round the close did not lock (none waited there yet, and it is not the next round: a season's,
 * or one after a gap). Answers how many it placed. O(W log W) for W waiting players of the board,
 * plus their placement.
 */
export async function placeReleased(sql: Sql, board: LeagueBoard): Promise<number> {
  return sql.begin((tx) => placeReleasedIn(tx, board, []));
}

/**
 * Places the waiting players whose last round is closed (this transaction's close counts), in
 * arrival order, with their tiers now, through the write path's placement (db/leagues.ts
 * placeInOrder), so the close and submissions fill cohorts by one rule. The rounds' locks are
 * taken first, late in the close so that submissions are held for the placement only: a
 * submission deciding to wait in one of them either committed before (and is read here) or decides
 * after this transaction commits (and sees the round closed: it is placed at once).
 */
async function placeReleasedIn(tx: TransactionSql, board: LeagueBoard, alsoLock: readonly string[]): Promise<number> {
  const boardId = board.id;
  const waitingIn = await tx<{ round: string }[]>`select distinct round from league_waiting where board_id = ${boardId}`;
  const rounds = [...new Set([...alsoLock, ...waitingIn.map((row) => row.round)])];
  if (rounds.length === 0) return 0;
  await lockRounds(
    tx,
    rounds.map((round) => ({ boardId, round })),
  );
  // Arrival order: when they arrived (placeInOrder writes it strictly increasing), then the player.
  const released = await tx<{ round: string; player_id: string }[]>`
    select w.round, w.player_id
    from league_waiting w
    join league_players p on p.board_id = w.board_id and p.player_id = w.player_id
    join league_rounds r on r.board_id = p.board_id and r.round = p.last_round
    where w.board_id = ${boardId}
    order by w.arrived_at, w.player_id collate "C"`;
  if (released.length === 0) return 0;
  const spans = new Map<string, LeagueRound | null>();
  for (const { round } of released) if (!spans.has(round)) spans.set(round, await roundSpan(tx, board, round));
  const candidates: PlacementCandidate[] = [];
  for (const row of released) {
    const span = spans.get(row.round);
    if (span)
      candidates.push({ boardId, round: span, playerId: row.player_id, cohortSize: board.league.cohortSize, firstTier: firstTierIndexOf(board.league) });
  }
  const placements = await placeInOrder(tx, candidates);
  return placements.filter((placement) => placement.tier !== null).length;
}

/** A round's span: a season's from its row, a calendar bucket's from its label. */
async function roundSpan(tx: TransactionSql, board: LeagueBoard, label: string): Promise<LeagueRound | null> {
  if (board.league.period === 'SEASON') {
    const [season] = await tx<{ starts_ms: number; ends_ms: number | null }[]>`
      select round(extract(epoch from starts_at) * 1000)::float8 as starts_ms, round(extract(epoch from ends_at) * 1000)::float8 as ends_ms
      from seasons where board_id = ${board.id} and id = ${label}`;
    return season ? { label, startsAt: new Date(season.starts_ms), endsAt: season.ends_ms === null ? null : new Date(season.ends_ms) } : null;
  }
  const bucket = parseBucketLabel(board, board.league.period, label);
  return bucket ? { label, startsAt: bucket.start, endsAt: bucket.end } : null;
}

/** A league round frozen but not closed yet (a crash between the freeze and the close). */
export interface PendingRound {
  boardId: string;
  round: string;
  endsAt: Date | null;
}

/**
 * Every league board's rounds whose global list is frozen but whose close is not recorded, oldest
 * first; and the boards with waiting players whose last round is closed. One query each over
 * frozen_buckets and league_waiting (both small: a row per list, a row per waiting player).
 */
export async function findPendingRounds(sql: Sql): Promise<{ rounds: PendingRound[]; released: string[] }> {
  const rounds = await sql<{ board_id: string; bucket: string; ends_ms: number | null }[]>`
    select f.board_id, f.bucket, round(extract(epoch from f.ends_at) * 1000)::float8 as ends_ms
    from boards b
    join frozen_buckets f on f.board_id = b.id and f.period = b.league ->> 'period' and f.region = ''
    where b.league is not null
      and not exists (select 1 from league_rounds r where r.board_id = f.board_id and r.round = f.bucket)
    order by f.board_id, f.starts_at`;
  const released = await sql<{ board_id: string }[]>`
    select distinct w.board_id
    from league_waiting w
    join league_players p on p.board_id = w.board_id and p.player_id = w.player_id
    join league_rounds r on r.board_id = p.board_id and r.round = p.last_round`;
  return {
    rounds: rounds.map((row) => ({ boardId: row.board_id, round: row.bucket, endsAt: row.ends_ms === null ? null : new Date(row.ends_ms) })),
    released: released.map((row) => row.board_id),
  };
}

/**
 * Deletes closed rounds' cohorts and memberships (their outcomes with them), past the board's
 * retention of the league's period, as their frozen standings go. The league_rounds rows stay (a
 * row a round): a player whose last round was one of them must still find it closed. Answers how
 * many memberships went. O(members) of those rounds.
 */
export async function pruneLeagueRounds(sql: Sql, boardId: string, rounds: readonly string[]): Promise<number> {
  if (rounds.length === 0) return 0;
  return sql.begin(async (tx) => {
    await tx`set local statement_timeout = 0`;
    // Only closed rounds: an open round's cohorts are still being filled and read.
    const closed = tx`select round from league_rounds where board_id = ${boardId} and round in ${tx(rounds as string[])}`;
    await tx`delete from league_cohorts where board_id = ${boardId} and round in (${closed})`;
    return (await tx`delete from cohort_members where board_id = ${boardId} and round in (${closed})`).count;
  });
}
