import type { TransactionSql } from 'postgres';

/**
 * League placement (issue 57): a player's first result of a round puts them in a cohort of their
 * tier, in arrival order, never more than the league's cohortSize in a cohort and never a player
 * twice in a round, across every API process. Cohorts live in PostgreSQL only (see schema.ts
 * league_cohorts, cohort_members, league_players, league_waiting).
 *
 * Two things serialize placements: the write path's per-(board, player) locks (result-statements.ts
 * lockPlayers), so one player is placed by one transaction at a time, and a transaction advisory
 * lock per (board, round), taken after the player locks, so two transactions never choose a cohort
 * of the same round from the same sizes. The lock is taken only when someone is to be placed.
 */

/** A league round a result falls in: the bucket of the league's period on the global list. */
export interface LeagueRound {
  /** The bucket's label (2026-W49, 2026-12-07, 2026-12, or a season id). */
  label: string;
  startsAt: Date;
  /** Null for a season with no end yet. */
  endsAt: Date | null;
}

/** A player to place in a round, with what the placement needs of the board's league. */
export interface PlacementCandidate {
  boardId: string;
  round: LeagueRound;
  playerId: string;
  /** The league's cohortSize. */
  cohortSize: number;
  /** The tier a player new to the league starts in: the last (model/league.ts firstTierIndexOf). */
  firstTier: number;
}

/** Where a candidate ended: placed in a cohort, or waiting for their previous round's close. */
export interface Placement {
  boardId: string;
  round: string;
  playerId: string;
  /** Tier index (0: the first, best) and cohort number; both null while the player waits. */
  tier: number | null;
  number: number | null;
}

/** The two-int advisory lock space of league rounds (apart from db/locks.ts's player space and the session keys). */
export const LEAGUE_ROUND_LOCK_SPACE = 7_361_257;

/**
 * Takes the transaction advisory lock of each (board, round), in one statement and in ascending key
 * order, so two placing transactions never wait on each other in a cycle. The write path takes it
 * after its player locks; a round's close takes it for each round whose waiting players it places,
 * before it reads them (so a player who waits while the close runs is either seen by the close, or
 * sees the closed round and is placed at once). Whoever holds it must not then wait for a player
 * lock. O(rounds).
 */
export async function lockRounds(tx: TransactionSql, rounds: { boardId: string; round: string }[]): Promise<void> {
  const keys = [...new Set(rounds.map(({ boardId, round }) => `${boardId}:${round}`))];
  if (keys.length === 0) return;
  await tx`
    select pg_advisory_xact_lock(${LEAGUE_ROUND_LOCK_SPACE}, k)
    from (select distinct hashtext(r) as k from unnest(${tx.array(keys)}::text[]) as r order by k) as keys`;
}

/**
 * Places `candidates`, in the given order (arrival order), inside the transaction `tx`, which must
 * already hold the (board, round) locks of their rounds ({@link lockRounds}) and, in the write path,
 * the players' locks. Each candidate not yet in a cohort of their round:
 * - waits (a league_waiting row, arrived_at in the given order) when their last round
 *   (league_players.last_round, ending at or before this round's start) has no league_rounds row
 *   yet: that round's close may move their tier, and places them after (calling this again);
 * - else goes, with their tier (league_players.tier, or `firstTier` for a player new to the
 *   league), to the tier's last cohort of the round while it has room, else to a new one (number
 *   + 1); their league_players row is written (last_round moves forward only), their
 *   league_waiting row of this round, if any, is deleted.
 * A candidate placed already is left as they are (and answered nowhere), so running it twice
 * places no one twice.
 *
 * One statement per layer of candidates: a (board, player) named in several rounds (a late result
 * of the previous round in the same group, rare) is placed in a later statement, in order, so each
 * sees the other's league_players row. Rounds closed in `tx` before the call (league_rounds rows
 * written in it) count as closed. Answers every placement made and every candidate left waiting.
 * O(c log N) for c candidates.
 */
export async function placeInOrder(tx: TransactionSql, candidates: PlacementCandidate[]): Promise<Placement[]> {
  const layers: PlacementCandidate[][] = [];
  const seen = new Map<string, Set<string>>();
  for (const candidate of candidates) {
    const player = `${candidate.boardId}:${candidate.playerId}`;
    const rounds = seen.get(player) ?? new Set<string>();
    seen.set(player, rounds);
    // The same player in the same round twice: the first is the one that counts.
    if (rounds.has(candidate.round.label)) continue;
    const layer = rounds.size;
    rounds.add(candidate.round.label);
    (layers[layer] ??= []).push(candidate);
  }
  const placements: Placement[] = [];
  for (const layer of layers) placements.push(...(await placeLayer(tx, layer)));
  return placements;
}

/** One statement of placeInOrder: candidates with no (board, player) twice. */
async function placeLayer(tx: TransactionSql, candidates: PlacementCandidate[]): Promise<Placement[]> {
  const column = (of: (candidate: PlacementCandidate) => string | number | null) =>
    tx.array(
      candidates.map((c) => {
        const value = of(c);
        return value === null ? null : String(value);
      }),
    );
  const [found] = await tx<{ placed: string; waiting: string }[]>`
    with input as (
      select * from unnest(
        ${column((c) => c.boardId)}::text[], ${column((c) => c.round.label)}::text[],
        ${column((c) => c.round.startsAt.toISOString())}::text[]::timestamptz[], ${column((c) => c.round.endsAt?.toISOString() ?? null)}::text[]::timestamptz[],
        ${column((c) => c.playerId)}::text[], ${column((c) => c.cohortSize)}::text[]::int4[], ${column((c) => c.firstTier)}::text[]::int4[])
        with ordinality as i(board_id, round, starts_at, ends_at, player_id, cohort_size, first_tier, arrival)),
    fresh as (
      select i.* from input i
      where not exists (select 1 from cohort_members m where m.board_id = i.board_id and m.round = i.round and m.player_id = i.player_id)),
    judged as (
      select f.*, coalesce(p.tier, f.first_tier) as tier,
        coalesce(p.last_round is not null and p.last_round <> f.round
          and (p.last_round_ends_at is null or p.last_round_ends_at <= f.starts_at)
          and not exists (select 1 from league_rounds r where r.board_id = f.board_id and r.round = p.last_round), false) as waits
      from fresh f left join league_players p on p.board_id = f.board_id and p.player_id = f.player_id),
    to_place as (
      select j.*, row_number() over (partition by j.board_id, j.round, j.tier order by j.arrival) - 1 as k
      from judged j where not j.waits),
    last_cohort as (
      select distinct on (c.board_id, c.round, c.tier) c.board_id, c.round, c.tier, c.number, c.size
      from league_cohorts c join (select distinct board_id, round, tier from to_place) t using (board_id, round, tier)
      order by c.board_id, c.round, c.tier, c.number desc),
    chosen as (
      -- The tier's last cohort takes the first arrivals while it has room; each cohortSize after
      -- them opens the next number.
      select p.board_id, p.round, p.player_id, p.tier, p.ends_at,
        case when p.k < r.room then r.n else r.n + 1 + (p.k - r.room) / p.cohort_size end as number
      from to_place p
      left join last_cohort l using (board_id, round, tier)
      cross join lateral (select coalesce(l.number, 0) as n, greatest(0, p.cohort_size - coalesce(l.size, p.cohort_size)) as room) as r),
    members as (
      insert into cohort_members (board_id, round, tier, number, player_id)
      select board_id, round, tier, number, player_id from chosen
      on conflict do nothing
      returning board_id, round, tier, number, player_id),
    cohorts as (
      -- Sized from what was inserted, so the count is right even were a row already there.
      insert into league_cohorts as c (board_id, round, tier, number, size)
      select board_id, round, tier, number, count(*) from members group by board_id, round, tier, number
      on conflict (board_id, round, tier, number) do update set size = c.size + excluded.size),
    players as (
      insert into league_players as p (board_id, player_id, tier, last_round, last_round_ends_at)
      select c.board_id, c.player_id, c.tier, c.round, c.ends_at from chosen c join members m using (board_id, round, player_id)
      on conflict (board_id, player_id) do update set last_round = excluded.last_round, last_round_ends_at = excluded.last_round_ends_at
      -- A late result of an earlier round leaves the later round as the player's last.
      where p.last_round is null
         or (p.last_round_ends_at is not null and (excluded.last_round_ends_at is null or excluded.last_round_ends_at > p.last_round_ends_at))),
    unwaited as (
      delete from league_waiting w using members m where w.board_id = m.board_id and w.round = m.round and w.player_id = m.player_id),
    waited as (
      -- Arrival order for the close: the clock once the round lock is held, then the given order.
      insert into league_waiting (board_id, round, player_id, arrived_at)
      select board_id, round, player_id, (select clock_timestamp()) + arrival * interval '1 microsecond' from judged where waits
      on conflict do nothing
      returning board_id, round, player_id)
    select
      (select coalesce(json_agg(json_build_array(board_id, round, player_id, tier, number)), '[]') from members)::text as placed,
      (select coalesce(json_agg(json_build_array(board_id, round, player_id)), '[]') from judged where waits)::text as waiting`;
  const placed = JSON.parse(found!.placed) as [string, string, string, number, number][];
  const waiting = JSON.parse(found!.waiting) as [string, string, string][];
  return [
    ...placed.map(([boardId, round, playerId, tier, number]) => ({ boardId, round, playerId, tier, number })),
    ...waiting.map(([boardId, round, playerId]) => ({ boardId, round, playerId, tier: null, number: null })),
  ];
}
