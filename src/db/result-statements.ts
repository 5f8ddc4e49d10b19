import type { TransactionSql } from 'postgres';
import { type Board, type EntryMetadata, type Period, keepsBoardScores } from '../model/board.js';
import { type RecordOutcome, type ResultEntry, type ScoreRowKey, type StoredBoardScore, resultId, rowId } from './result-entries.js';

/**
 * The statements of a group's transaction (see group-transaction.ts): the players' locks, the log
 * statement and the board-score upsert. Every one is set-based (unnest) and has a fixed text, so
 * postgres.js prepares each once per connection.
 */

/**
 * Serialises groups that share a player: each transaction takes a transaction-scoped advisory lock
 * per (board, player), all in one statement and in ascending key order, so two groups (of this
 * process or another) can never wait on each other in a cycle, and groups of different players run
 * in parallel. Every row the group writes (its idempotency keys, its board scores) belongs to a
 * locked pair, so no row lock is ever waited for in another order either. Each lock takes an entry
 * of PostgreSQL's shared lock table (64 × max_connections by default): the group commit's bound on
 * a group's size (GroupCommitOptions.maxGroupWeight) bounds them too.
 */
export async function lockPlayers(tx: TransactionSql, entries: ResultEntry[]): Promise<void> {
  await lockBoardPlayers(
    tx,
    entries.map((e) => ({ boardId: e.board.id, playerId: e.playerId })),
  );
}

/**
 * The locks of {@link lockPlayers}, by (board, player): what a removal of one player's entry on a
 * board (db/entry-removals.ts) takes too, so that it and the groups of that player on that board
 * take turns.
 */
export async function lockBoardPlayers(tx: TransactionSql, pairs: readonly { boardId: string; playerId: string }[]): Promise<void> {
  // Board ids hold no colon, so board:player names one player of one board.
  const players = [...new Set(pairs.map((p) => `${p.boardId}:${p.playerId}`))];
  await tx`
    select pg_advisory_xact_lock(k)
    from (select distinct hashtextextended(p, 0) as k from unnest(${tx.array(players)}::text[]) as p order by k) as keys`;
}

export interface Logged {
  /** The ids (resultId) of the results that were new. */
  inserted: Set<string>;
  /** For the replays: what their key recorded first. */
  originals: Map<string, RecordOutcome['recorded']>;
  /** The stored board scores of every row the new results touch, before this group. */
  before: Map<string, StoredBoardScore>;
  backlogIds: number[];
  flagged: Set<string>;
  /** The entries' (board, round, player) already in a cohort of the round or waiting in it ({@link placingId}): nobody to place. */
  settled: Set<string>;
  /** How many results each (board, player, span) of the entries' attempts spans held before this group ({@link attemptsId}). */
  attemptsBefore: Map<string, number>;
  /** The transaction's id; null when nothing was new, so nothing was written. */
  xid: string | null;
}

/**
 * The log statement: claims each result's idempotency key (result_keys, see schema.ts), logs the
 * results whose key was new into their month's partition of the score log, queues one
 * index_backlog row naming every (board, player) with a new result (the outbox costs no round trip
 * of its own, and one row per group, not per result), and in the same statement reads what the
 * fold needs: the originals of the replays, the current board scores of the rows kept as rows that
 * the entries touch (keepsBoardScores), and which of the players are flagged.
 * O(k log N) for k entries.
 *
 * The board scores are read for every entry, replays too (the fold reads only new results' rows):
 * narrowing them to the keys claimed here made PostgreSQL check each row against the claimed keys
 * one by one, as it cannot size an insert's returned rows, k² comparisons; at the ~500 entries of a
 * group under load, about a tenth of the statement (EXPLAIN ANALYZE on the bench board).
 * A replay's read is one index probe, answered but unused.
 */
export async function logAndRead(tx: TransactionSql, entries: ResultEntry[]): Promise<Logged> {
  const wanted = new Map<string, { boardId: string; row: ScoreRowKey; playerId: string }>();
  for (const entry of entries) {
    for (const row of entry.rows) {
      if (keepsBoardScores(entry.board, row.period))
        wanted.set(rowId(entry.board.id, row, entry.playerId), { boardId: entry.board.id, row, playerId: entry.playerId });
    }
  }
  const rows = [...wanted.values()];
  // League entries: who of them is placed (or waiting) already, so that a group with nobody to
  // place pays no statement for placement; tournament entries: the attempts used before.
  const placing = new Map<string, ResultEntry>();
  const counting = new Map<string, ResultEntry>();
  for (const entry of entries) {
    if (entry.round) placing.set(placingId(entry.board.id, entry.round.label, entry.playerId), entry);
    if (entry.attempts) counting.set(attemptsId(entry), entry);
  }
  const asked = [...placing.values()];
  // Every array below is sent as text (::text[]::...): an empty one, or one of nulls, has no type of
  // its own, and postgres.js has no serializer for the array types PostgreSQL would describe.
  const counted = [...counting.values()];
  const [found] = await tx<
    { inserted: string; originals: string; before: string; backlog_ids: string[]; flagged: string[]; settled: string; attempts: string; xid: string | null }[]
  >`
    with input as (
      select * from unnest(
        ${tx.array(entries.map((e) => e.board.id))}::text[],
        ${tx.array(entries.map((e) => e.playerId))}::text[],
        ${tx.array(entries.map((e) => e.matchId))}::text[],
        ${tx.array(entries.map((e) => String(e.score)))}::int8[],
        ${tx.array(entries.map((e) => e.region))}::text[],
        ${tx.array(entries.map((e) => e.achievedAt.toISOString()))}::timestamptz[],
        ${tx.array(entries.map((e) => e.metadata))}::json[],
        ${tx.array(entries.map((e) => e.recordedAt?.toISOString() ?? null))}::timestamptz[],
        ${tx.array(entries.map((e) => valuesText(e.tieBreakValues)))}::text[])
        as i(board_id, player_id, match_id, score, region, achieved_at, metadata, recorded_at, tie_break_values)),
    keyed as (
      insert into result_keys (board_id, player_id, match_id, achieved_at, region)
      select board_id, player_id, match_id, achieved_at, region from input
      on conflict do nothing
      returning board_id, player_id, match_id),
    logged as (
      insert into results (board_id, player_id, match_id, score, region, achieved_at, metadata, recorded_at, tie_break_values)
      select i.board_id, i.player_id, i.match_id, i.score, i.region, i.achieved_at, i.metadata, coalesce(i.recorded_at, now()), i.tie_break_values::int8[]
      from input i join keyed k using (board_id, player_id, match_id)),
    queued as (
      insert into index_backlog (board_ids, player_ids)
      select array_agg(board_id), array_agg(player_id) from (select distinct board_id, player_id from keyed) as touched
      having count(*) > 0
      returning id)
    select
      (select coalesce(json_agg(json_build_array(board_id, match_id, player_id)), '[]') from keyed)::text as inserted,
      (select coalesce(json_agg(json_build_array(r.board_id, r.match_id, r.player_id, round(extract(epoch from r.achieved_at) * 1000), r.region)), '[]')
       from result_keys r join input i using (board_id, player_id, match_id)
       -- Only the replays are looked up: a key this statement claimed is not in its snapshot.
       where not exists (select 1 from keyed k where (k.board_id, k.player_id, k.match_id) = (i.board_id, i.player_id, i.match_id)))::text as originals,
      (select coalesce(json_agg(json_build_array(s.board_id, s.period, s.bucket, s.region, s.player_id, s.score, round(extract(epoch from s.reached_at) * 1000), s.metadata::text, s.tie_break_values)), '[]')
       from board_scores s
       join unnest(
         ${tx.array(rows.map((k) => k.boardId))}::text[],
         ${tx.array(rows.map((k) => k.row.period))}::text[],
         ${tx.array(rows.map((k) => k.row.bucket))}::text[],
         ${tx.array(rows.map((k) => k.row.region))}::text[],
         ${tx.array(rows.map((k) => k.playerId))}::text[])
         as w(board_id, period, bucket, region, player_id)
         on s.board_id = w.board_id and s.period = w.period and s.bucket = w.bucket and s.region = w.region and s.player_id = w.player_id)::text as before,
      array(select id from queued) as backlog_ids,
      array(select p.id from players p where p.id in (select player_id from input) and p.flagged_at is not null) as flagged,
      (select coalesce(json_agg(json_build_array(q.board_id, q.round, q.player_id)), '[]')
       from unnest(${tx.array(asked.map((e) => e.board.id))}::text[], ${tx.array(asked.map((e) => e.round!.label))}::text[], ${tx.array(asked.map((e) => e.playerId))}::text[])
         as q(board_id, round, player_id)
       where exists (select 1 from cohort_members m where m.board_id = q.board_id and m.round = q.round and m.player_id = q.player_id)
          or exists (select 1 from league_waiting w where w.board_id = q.board_id and w.round = q.round and w.player_id = q.player_id))::text as settled,
      -- The log rows of this statement are not in its snapshot: these are the attempts before the group.
      (select coalesce(json_agg(json_build_array(a.board_id, a.player_id, round(extract(epoch from a.starts_at) * 1000),
         (select count(*) from results r where r.board_id = a.board_id and r.player_id = a.player_id
            and r.achieved_at >= a.starts_at and (a.ends_at is null or r.achieved_at < a.ends_at)))), '[]')
       from unnest(${tx.array(counted.map((e) => e.board.id))}::text[], ${tx.array(counted.map((e) => e.playerId))}::text[],
         ${tx.array(counted.map((e) => e.attempts!.startsAt.toISOString()))}::text[]::timestamptz[],
         ${tx.array(counted.map((e) => e.attempts!.endsAt?.toISOString() ?? null))}::text[]::timestamptz[])
         as a(board_id, player_id, starts_at, ends_at))::text as attempts,
      case when exists (select 1 from keyed) then pg_current_xact_id()::text end as xid`;
  const inserted = JSON.parse(found!.inserted) as [string, string, string][];
  // The statement's snapshot shows the keys committed before it, not those this statement added.
  const originals = JSON.parse(found!.originals) as [string, string, string, number, string | null][];
  // Metadata comes as its text (::text above), so it is served as it was sent.
  const before = JSON.parse(found!.before) as [string, Period, string, string, string, number, number, EntryMetadata | null, number[] | null][];
  return {
    inserted: new Set(inserted.map(([board, match, player]) => resultId(board, match, player))),
    originals: new Map(originals.map(([board, match, player, ms, region]) => [resultId(board, match, player), { achievedAt: new Date(ms), region }])),
    before: new Map(
      before.map(([boardId, period, bucket, region, playerId, score, ms, metadata, tieBreakValues]) => [
        rowId(boardId, { period, bucket, region }, playerId),
        { boardId, period, bucket, region, playerId, score, reachedAt: new Date(ms), metadata, ...(tieBreakValues && { tieBreakValues }) },
      ]),
    ),
    backlogIds: found!.backlog_ids.map(Number),
    flagged: new Set(found!.flagged),
    settled: new Set((JSON.parse(found!.settled) as [string, string, string][]).map(([board, round, player]) => placingId(board, round, player))),
    attemptsBefore: new Map(
      (JSON.parse(found!.attempts) as [string, string, number, number][]).map(([board, player, ms, used]) => [
        `${board}\u0000${player}\u0000${ms}`,
        Number(used),
      ]),
    ),
    xid: found!.xid,
  };
}

/**
 * A result's tie-break values as the text of an int8[] literal ('{3,17}'), or null when it has none:
 * the statements send each row's values as one text and cast it, since unnest would flatten an
 * array of arrays into one run of numbers. The values are whole numbers checked on the write path.
 */
export const valuesText = (values: readonly number[] | null | undefined): string | null => (values && values.length > 0 ? `{${values.join(',')}}` : null);

/** A (board, round, player) of placement, as a set key. */
export const placingId = (boardId: string, round: string, playerId: string) => `${boardId}\u0000${round}\u0000${playerId}`;
/** A (board, player, attempts span) as a map key; only for entries with `attempts`. */
export const attemptsId = (entry: ResultEntry) => `${entry.board.id}\u0000${entry.playerId}\u0000${entry.attempts!.startsAt.getTime()}`;

/** drizzle takes over the client's timestamp parsing, so the statements here read times as epoch milliseconds. */
type StoredRow = {
  board_id: string;
  period: Period;
  bucket: string;
  region: string;
  player_id: string;
  score: number;
  reached_ms: number;
  metadata: EntryMetadata | null;
  tie_break_values: number[] | null;
};

/**
 * How a board merges a new part into a stored board score: one of the six upserts below (a BEST
 * board with tie-break columns compares them too, in a merge of its own, so a plain board's keeps
 * today's plan).
 */
const mergeKind = (board: Board) => `${board.aggregate} ${board.order}${(board.tieBreaks?.length ?? 0) > 0 ? ' TUPLE' : ''}`;

/**
 * Merges the group's contribution into board_scores, every board in one statement: one upsert per
 * kind of merge (BEST or SUM, HIGH_FIRST or LOW_FIRST), each taking the rows of the boards of its
 * kind, so the text never changes (and is prepared once). The merges are the SQL twins of
 * combine() and ranksAhead(). Answers the stored board scores after the merge. O(r log N).
 */
export async function upsertBoardScores(tx: TransactionSql, boards: Map<string, Board>, rows: StoredBoardScore[]): Promise<StoredBoardScore[]> {
  if (rows.length === 0) return [];
  const column = <K extends keyof StoredBoardScore>(key: K, as: (value: StoredBoardScore[K]) => string | null = String) =>
    tx.array(rows.map((r) => as(r[key])));
  // Fresh fragments for each use: the merges are the SQL twins of ranksAhead() and combine().
  const ahead = (order: Board['order']) =>
    order === 'HIGH_FIRST'
      ? tx`(excluded.score > s.score or (excluded.score = s.score and excluded.reached_at < s.reached_at))`
      : tx`(excluded.score < s.score or (excluded.score = s.score and excluded.reached_at < s.reached_at))`;
  // A board with tie-break columns: equal scores are decided by the columns, each in its own
  // direction (the board's tie_breaks, read by the row's board id: the statement's text stays the
  // same for every board), and only equal on all of them by the time. The columns compare as one
  // int8[], each LOW_FIRST column's values negated, so the array's own order is the board's.
  const columnsOf = (row: 'excluded' | 's') => tx`(
    select array_agg(case when t.c ->> 'order' = 'LOW_FIRST' then -u.v else u.v end order by u.n)
    from boards b
    cross join lateral unnest(${tx.unsafe(row)}.tie_break_values) with ordinality as u(v, n)
    join lateral jsonb_array_elements(b.tie_breaks) with ordinality as t(c, n) on t.n = u.n
    where b.id = ${tx.unsafe(row)}.board_id)`;
  const aheadByTuple = (order: Board['order']) => tx`(
    ${order === 'HIGH_FIRST' ? tx`excluded.score > s.score` : tx`excluded.score < s.score`}
    or (excluded.score = s.score and (${columnsOf('excluded')} > ${columnsOf('s')}
      or (${columnsOf('excluded')} is not distinct from ${columnsOf('s')} and excluded.reached_at < s.reached_at))))`;
  // The metadata follows the part that sets the score (combine()): the one kept, or the latest non-zero part.
  const best = (order: Board['order'], tuple = false) => {
    const wins = () => (tuple ? aheadByTuple(order) : ahead(order));
    return tx`
    score = case when ${wins()} then excluded.score else s.score end,
    reached_at = case when ${wins()} then excluded.reached_at else s.reached_at end,
    metadata = case when ${wins()} then excluded.metadata else s.metadata end,
    tie_break_values = case when ${wins()} then excluded.tie_break_values else s.tie_break_values end`;
  };
  const sum = (order: Board['order']) => tx`
    score = s.score + excluded.score,
    reached_at = case when s.score > 0 and excluded.score > 0 then greatest(s.reached_at, excluded.reached_at)
                      when excluded.score > 0 then excluded.reached_at
                      when s.score > 0 then s.reached_at
                      else ${order === 'HIGH_FIRST' ? tx`least` : tx`greatest`}(s.reached_at, excluded.reached_at) end,
    metadata = case when excluded.score > 0 and (s.score = 0 or excluded.reached_at > s.reached_at) then excluded.metadata else s.metadata end`;
  const upsert = (kind: string, merge: ReturnType<typeof best>) => tx`
    insert into board_scores as s (board_id, period, bucket, region, player_id, score, reached_at, metadata, tie_break_values)
    select board_id, period, bucket, region, player_id, score, reached_at, metadata, tie_break_values::int8[] from incoming where kind = ${kind}
    on conflict (board_id, period, bucket, region, player_id) do update set ${merge}
    returning s.board_id, s.period, s.bucket, s.region, s.player_id, s.score, s.reached_at, s.metadata, s.tie_break_values`;
  const stored = await tx<StoredRow[]>`
    with incoming as (
      select * from unnest(
        ${tx.array(rows.map((r) => mergeKind(boards.get(r.boardId)!)))}::text[],
        ${column('boardId')}::text[], ${column('period')}::text[], ${column('bucket')}::text[], ${column('region')}::text[],
        ${column('playerId')}::text[], ${column('score')}::int8[], ${column('reachedAt', (at) => at.toISOString())}::timestamptz[],
        ${column('metadata', (metadata) => metadata)}::json[], ${column('tieBreakValues', valuesText)}::text[])
        as i(kind, board_id, period, bucket, region, player_id, score, reached_at, metadata, tie_break_values)),
    best_high as (${upsert('BEST HIGH_FIRST', best('HIGH_FIRST'))}),
    best_low as (${upsert('BEST LOW_FIRST', best('LOW_FIRST'))}),
    best_high_tuple as (${upsert('BEST HIGH_FIRST TUPLE', best('HIGH_FIRST', true))}),
    best_low_tuple as (${upsert('BEST LOW_FIRST TUPLE', best('LOW_FIRST', true))}),
    sum_high as (${upsert('SUM HIGH_FIRST', sum('HIGH_FIRST'))}),
    sum_low as (${upsert('SUM LOW_FIRST', sum('LOW_FIRST'))})
    select board_id, period, bucket, region, player_id, score, round(extract(epoch from reached_at) * 1000)::float8 as reached_ms, metadata::text as metadata,
      tie_break_values::float8[] as tie_break_values
    from (select * from best_high union all select * from best_low union all select * from best_high_tuple union all select * from best_low_tuple
          union all select * from sum_high union all select * from sum_low) as merged`;
  return stored.map((row) => ({
    boardId: row.board_id,
    period: row.period,
    bucket: row.bucket,
    region: row.region,
    playerId: row.player_id,
    score: row.score,
    reachedAt: new Date(row.reached_ms),
    metadata: row.metadata,
    ...(row.tie_break_values && { tieBreakValues: row.tie_break_values }),
  }));
}
