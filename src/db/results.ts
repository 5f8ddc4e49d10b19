import type { Sql, TransactionSql } from 'postgres';
import { settleBy, throwIfPast } from '../deadline.js';
import { type Board, type EntryMetadata, type Period, type RecordedBoardScore, combine } from '../model/board.js';

/** One board-score row a result falls in. `region` is '' for the global list. */
export interface ScoreRowKey {
  period: Period;
  bucket: string;
  region: string;
}

export interface ResultEntry {
  board: Board;
  matchId: string;
  playerId: string;
  score: number;
  region: string | null;
  achievedAt: Date;
  /** The result's entry metadata (JSON text, checked by the caller); null when none was sent. */
  metadata: EntryMetadata | null;
  /** Every bucket the result is written to; improvement is judged on (ALL_TIME, '') */
  rows: ScoreRowKey[];
}

export interface RecordOutcome {
  /** True when (board, matchId, playerId) had been recorded before: nothing changed. */
  duplicate: boolean;
  /** True when the player's ALL_TIME board score changed. */
  improved: boolean;
  /** What was recorded under this idempotency key: this entry, or for a duplicate the original. */
  recorded: { achievedAt: Date; region: string | null };
  /**
   * The player's board score in each of the entry's rows right after this result, in the order of
   * `rows`: what the result itself is answered with, however many results of the same player its
   * group holds after it. Empty for a duplicate.
   */
  after: StoredBoardScore[];
}

export interface StoredBoardScore extends ScoreRowKey, RecordedBoardScore {
  boardId: string;
}

/** One submission's part of a recorded group: an outcome per entry, in order. */
export interface RecordedBatch {
  outcomes: RecordOutcome[];
}

/** What recordGroup did with a group of submissions. */
export interface RecordedGroup {
  /**
   * One per submission, in order: its outcomes, or the error that kept it out (nothing of it was
   * written; a {@link TotalAboveMaxScoreError}, or a data error PostgreSQL raised for it alone).
   */
  submissions: ({ ok: RecordedBatch } | { error: unknown })[];
  /** The board scores after the commit, one per row the group's new results touched. */
  boardScores: StoredBoardScore[];
  /**
   * The index_backlog rows the group committed (see index-backlog.ts): delete them once the index
   * holds `boardScores`; until then the catch-up job re-applies them.
   */
  backlogIds: number[];
  /** The group's players that were flagged when it was recorded. */
  flagged: Set<string>;
}

/** How long recordGroup waits, at most, to learn whether a COMMIT whose answer was lost took effect. */
export const COMMIT_DOUBT_TIMEOUT_MS = 20_000;

/**
 * The connection broke after COMMIT was sent, and PostgreSQL could not be asked within the time
 * allowed whether the batch was committed. It may have been: retrying with the same matchIds is
 * safe (a recorded result answers duplicate: true).
 */
export class CommitInDoubtError extends Error {
  constructor(cause: unknown) {
    super('the connection to PostgreSQL broke during COMMIT and whether the batch was recorded is not known yet; retry with the same matchIds', {
      cause,
    });
    this.name = 'CommitInDoubtError';
  }
}

/** A SUM total would pass the board's maxScore; nothing of the submission was recorded. */
export class TotalAboveMaxScoreError extends Error {
  constructor(
    readonly playerId: string,
    readonly total: number,
    readonly maxScore: number,
    /** Which submission of the group it belongs to. */
    readonly submission = 0,
  ) {
    super(`player ${playerId} would reach a total of ${total}, above the board's maxScore of ${maxScore}`);
    this.name = 'TotalAboveMaxScoreError';
  }
}

export interface RecordGroupOptions {
  /**
   * How long a COMMIT whose answer was lost is asked about, at the most (never past `signal`).
   * Default {@link COMMIT_DOUBT_TIMEOUT_MS}.
   */
  commitDoubtMs?: number;
  /** Times a group is tried again after a deadlock or a serialization failure. Default 3. */
  retries?: number;
  /**
   * The group's deadline. Once it aborts, recordGroup settles at once: with a
   * DeadlineExceededError while COMMIT has not been sent (and then it never is: the transaction
   * rolls back, or PostgreSQL ends it, so nothing is recorded), or, once COMMIT was sent, with the
   * outcome asked of PostgreSQL in the time left, else a CommitInDoubtError. Default: none.
   */
  signal?: AbortSignal;
}

const NEVER = new AbortController().signal;

const rowId = (boardId: string, row: ScoreRowKey, playerId: string) => `${boardId}\u0000${row.period}\u0000${row.bucket}\u0000${row.region}\u0000${playerId}`;
const resultId = (boardId: string, matchId: string, playerId: string) => `${boardId}\u0000${matchId}\u0000${playerId}`;
const entryId = (entry: ResultEntry) => resultId(entry.board.id, entry.matchId, entry.playerId);

/** SQLSTATE classes 22 (data exception) and 23 (integrity violation): the data of some submission, not the connection. */
const isDataError = (error: unknown) => /^2[23]/.test((error as { code?: unknown }).code?.toString() ?? '');
/**
 * Trying the same group again is right: a deadlock, a serialization failure, or a row routed to
 * the default partition of the score log just as its month's partition was attached (PostgreSQL
 * routes before it checks, so the row then fails the default's new constraint; routed again, it
 * lands in the new partition).
 */
const isRetriable = (error: unknown) => {
  const { code, table_name: table } = error as { code?: unknown; table_name?: unknown };
  return code === '40P01' || code === '40001' || (code === '23514' && table === 'results_default');
};

/**
 * The write path's durable half for a group of submissions (concurrent calls gathered by the group
 * commit, see resolvers/group-commit.ts), in one transaction: log each result once under its
 * idempotency key, then fold the new results into every board score they touch. Entries are
 * handled in order, submission after submission, as if submitted one by one; a replay (in the log
 * already, or earlier in the group) changes nothing.
 *
 * A submission is all or nothing, and one bad submission does not fail the others: a SUM total that
 * would pass maxScore rejects the submission that passes it and the group is tried again without
 * it; any other data error PostgreSQL raises splits the group in halves until the submission it
 * belongs to is alone. A deadlock (with an erasure, say) tries the group again. Anything else (the
 * connection) fails the whole group.
 *
 * Four round trips per group, whatever its size: BEGIN; the players' locks and the log statement,
 * pipelined; the board-score upsert of the rows the group changes (none, and no round trip, when
 * every BEST score stands); COMMIT. Every statement is set-based (unnest) and has a fixed text, so
 * postgres.js prepares each once per connection.
 *
 * Throws when nothing was recorded, never when something was: should the connection break while
 * COMMIT is on the wire, the outcome is asked of PostgreSQL again (for up to `commitDoubtMs`)
 * before answering, and a {@link CommitInDoubtError} is thrown only when it still cannot tell.
 */
export async function recordGroup(sql: Sql, submissions: ResultEntry[][], options: RecordGroupOptions = {}): Promise<RecordedGroup> {
  const rejected = new Map<number, unknown>();
  let active = submissions.map((_, i) => i);
  for (let attempt = 0; ; attempt += 1) {
    if (active.length === 0) return assemble(submissions.length, rejected, emptyGroup());
    try {
      const done = await recordOnce(
        sql,
        active.map((i) => submissions[i]!),
        options.commitDoubtMs ?? COMMIT_DOUBT_TIMEOUT_MS,
        options.signal ?? NEVER,
      );
      return assemble(submissions.length, rejected, done, active);
    } catch (error) {
      if (isRetriable(error) && attempt < (options.retries ?? 3)) continue;
      if (error instanceof TotalAboveMaxScoreError) {
        const culprit = active[error.submission]!;
        rejected.set(culprit, new TotalAboveMaxScoreError(error.playerId, error.total, error.maxScore, culprit));
        active = active.filter((i) => i !== culprit);
      } else if (isDataError(error) && active.length === 1) {
        rejected.set(active[0]!, error);
        active = [];
      } else if (isDataError(error)) {
        // Which submission it belongs to is not known: halves, each recorded on its own, find it.
        const half = Math.ceil(active.length / 2);
        const parts = [active.slice(0, half), active.slice(half)];
        const done = [];
        for (const part of parts)
          done.push(
            await recordGroup(
              sql,
              part.map((i) => submissions[i]!),
              options,
            ),
          );
        return merge(submissions.length, rejected, parts, done);
      } else {
        throw error;
      }
    }
  }
}

interface GroupOnce {
  outcomes: RecordOutcome[][];
  boardScores: StoredBoardScore[];
  backlogIds: number[];
  flagged: Set<string>;
}

const emptyGroup = (): GroupOnce => ({ outcomes: [], boardScores: [], backlogIds: [], flagged: new Set() });

/** A RecordedGroup of `size` submissions: `done` holds those of `active` (in order), `rejected` the others. */
function assemble(size: number, rejected: Map<number, unknown>, done: GroupOnce, active: number[] = []): RecordedGroup {
  const submissions: RecordedGroup['submissions'] = Array.from({ length: size }, (_, i) => ({ error: rejected.get(i) }));
  active.forEach((i, k) => {
    submissions[i] = { ok: { outcomes: done.outcomes[k]! } };
  });
  return { submissions, boardScores: done.boardScores, backlogIds: done.backlogIds, flagged: done.flagged };
}

/** Puts the groups recorded for `parts` (index lists into the whole group) back together. */
function merge(size: number, rejected: Map<number, unknown>, parts: number[][], done: RecordedGroup[]): RecordedGroup {
  const submissions: RecordedGroup['submissions'] = Array.from({ length: size }, (_, i) => ({ error: rejected.get(i) }));
  parts.forEach((part, p) => part.forEach((i, k) => (submissions[i] = done[p]!.submissions[k]!)));
  return {
    submissions,
    boardScores: done.flatMap((group) => group.boardScores),
    backlogIds: done.flatMap((group) => group.backlogIds),
    flagged: new Set(done.flatMap((group) => [...group.flagged])),
  };
}

/**
 * One transaction for the whole group; throws (and records nothing) when any submission fails.
 * Past `signal`, the body sends no further statement and never returns, so postgres.js never sends
 * COMMIT; the wait for a statement that hangs is left at once (its connection answers or closes
 * later, and the transaction rolls back then, or at PostgreSQL's idle-in-transaction timeout).
 */
async function recordOnce(sql: Sql, submissions: ResultEntry[][], commitDoubtMs: number, signal: AbortSignal): Promise<GroupOnce> {
  throwIfPast(signal);
  // Set once the body has run: a failure after it can only be the COMMIT's (see settleCommit).
  let committing: { xid: string | null; group: GroupOnce } | undefined;
  try {
    const transaction = sql.begin(async (tx) => {
      const { group, xid } = await recordInTransaction(tx, submissions, signal);
      // The last moment to give up: COMMIT is sent once this returns.
      throwIfPast(signal);
      committing = { xid, group };
      return group;
    });
    return await settleBy(transaction, signal);
  } catch (error) {
    if (!committing) throw error;
    // Nothing was written (a group of replays): nothing can be in doubt.
    if (committing.xid === null) throw error;
    const status = await settleCommit(sql, committing.xid, commitDoubtMs, signal);
    if (status === 'committed') return committing.group;
    if (status === 'aborted') throw error;
    throw new CommitInDoubtError(error);
  }
}

/**
 * Whether transaction `xid` committed, asked again until PostgreSQL answers or `timeoutMs` passes.
 * The contract promises that UNAVAILABLE means "nothing was recorded", and the one moment the
 * client cannot know is a connection that breaks after COMMIT was sent: the transaction may have
 * committed. pg_xact_status answers exactly that (PostgreSQL 13+), on any connection, once the
 * server answers again; 'in progress' (the server has not yet noticed the lost client) is asked
 * again. A rare case: only a group whose COMMIT was on the wire when the connection broke waits.
 */
async function settleCommit(sql: Sql, xid: string, timeoutMs: number, signal: AbortSignal): Promise<'committed' | 'aborted' | 'unknown'> {
  const deadline = performance.now() + timeoutMs;
  while (!signal.aborted) {
    try {
      const [row] = await settleBy(sql<{ status: string | null }[]>`select pg_xact_status(${xid}::xid8) as status`, signal);
      if (row?.status === 'committed') return 'committed';
      if (row?.status === 'aborted') return 'aborted';
    } catch {
      // Still away (or out of time); ask again while there is time.
    }
    if (performance.now() >= deadline) return 'unknown';
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return 'unknown';
}

/** An entry of the group with the submission it came in. */
interface GroupEntry {
  entry: ResultEntry;
  submission: number;
}

/** The body of the group's transaction; answers the group and the transaction's id (null when nothing was written). */
async function recordInTransaction(tx: TransactionSql, submissions: ResultEntry[][], signal: AbortSignal): Promise<{ group: GroupOnce; xid: string | null }> {
  const entries: GroupEntry[] = submissions.flatMap((entries, submission) => entries.map((entry) => ({ entry, submission })));
  const firstSeen = new Map<string, number>();
  entries.forEach(({ entry }, i) => {
    if (!firstSeen.has(entryId(entry))) firstSeen.set(entryId(entry), i);
  });
  const candidates = [...firstSeen.values()].map((i) => entries[i]!.entry);
  // Pipelined: the log statement is sent at once and runs once the locks are held, so its snapshot
  // (taken when it starts) sees every earlier result and board score of these players.
  const [, logged] = await Promise.all([lockPlayers(tx, candidates), logAndRead(tx, candidates)]);
  throwIfPast(signal);
  const isNew = (entry: ResultEntry, i: number) => firstSeen.get(entryId(entry)) === i && logged.inserted.has(entryId(entry));

  // Fold the new results in order: `running` starts from what the database held and tells whether
  // each result improved the ALL_TIME score; `contribution` is this group's own part, merged in SQL
  // (the player locks make a concurrent change impossible; the merge keeps even that case right).
  const running = new Map(logged.before);
  const contribution = new Map<string, StoredBoardScore>();
  const improved = new Set<number>();
  const after = new Map<number, StoredBoardScore[]>();
  entries.forEach(({ entry, submission }, i) => {
    if (!isNew(entry, i)) return;
    const result: RecordedBoardScore = { playerId: entry.playerId, score: entry.score, reachedAt: entry.achievedAt, metadata: entry.metadata };
    const own: StoredBoardScore[] = [];
    after.set(i, own);
    for (const row of entry.rows) {
      const id = rowId(entry.board.id, row, entry.playerId);
      const old = running.get(id);
      const next = { boardId: entry.board.id, ...row, ...combine(entry.board, old, result) };
      if (next.score > entry.board.maxScore) throw new TotalAboveMaxScoreError(entry.playerId, next.score, entry.board.maxScore, submission);
      running.set(id, next);
      own.push(next);
      contribution.set(id, { boardId: entry.board.id, ...row, ...combine(entry.board, contribution.get(id), result) });
      if (row.period === 'ALL_TIME' && row.region === '' && old?.score !== next.score) improved.add(i);
    }
  });

  const boards = new Map(entries.map(({ entry }) => [entry.board.id, entry.board]));
  // A row the group leaves as it was (a BEST score that stands, the common case) is not written at
  // all: under the players' locks its stored value is the fold's, so the merge would change nothing.
  const unchanged: StoredBoardScore[] = [];
  const changed: StoredBoardScore[] = [];
  for (const [id, part] of contribution) {
    const stored = logged.before.get(id);
    const final = running.get(id)!;
    if (stored && stored.score === final.score && stored.reachedAt.getTime() === final.reachedAt.getTime()) unchanged.push(stored);
    else changed.push(part);
  }
  const upserted = await upsertBoardScores(tx, boards, changed);
  const boardScores = [...upserted, ...unchanged];
  for (const stored of upserted) {
    // The twin of the check above, in case the stored score moved under us after all.
    const board = boards.get(stored.boardId)!;
    if (stored.score <= board.maxScore) continue;
    const first = entries.findIndex(({ entry }, i) => entry.board.id === stored.boardId && entry.playerId === stored.playerId && isNew(entry, i));
    throw new TotalAboveMaxScoreError(stored.playerId, stored.score, board.maxScore, entries[first]?.submission ?? 0);
  }

  const outcomes: RecordOutcome[][] = submissions.map(() => []);
  entries.forEach(({ entry, submission }, i) => {
    if (isNew(entry, i)) {
      outcomes[submission]!.push({
        duplicate: false,
        improved: improved.has(i),
        recorded: { achievedAt: entry.achievedAt, region: entry.region },
        after: after.get(i)!,
      });
      return;
    }
    const first = entries[firstSeen.get(entryId(entry))!]!.entry;
    const recorded = logged.originals.get(entryId(entry)) ?? { achievedAt: first.achievedAt, region: first.region };
    outcomes[submission]!.push({ duplicate: true, improved: false, recorded, after: [] });
  });
  return { group: { outcomes, boardScores, backlogIds: logged.backlogIds, flagged: logged.flagged }, xid: logged.xid };
}

/**
 * Serialises groups that share a player: each transaction takes a transaction-scoped advisory lock
 * per (board, player), all in one statement and in ascending key order, so two groups (of this
 * process or another) can never wait on each other in a cycle, and groups of different players run
 * in parallel. Every row the group writes (its idempotency keys, its board scores) belongs to a
 * locked pair, so no row lock is ever waited for in another order either. Each lock takes an entry
 * of PostgreSQL's shared lock table (64 × max_connections by default): the group commit's bound on
 * a group's size (GroupCommitOptions.maxGroupWeight) bounds them too.
 */
async function lockPlayers(tx: TransactionSql, entries: ResultEntry[]): Promise<void> {
  // Board ids hold no colon, so board:player names one player of one board.
  const players = [...new Set(entries.map((e) => `${e.board.id}:${e.playerId}`))];
  await tx`
    select pg_advisory_xact_lock(k)
    from (select distinct hashtextextended(p, 0) as k from unnest(${tx.array(players)}::text[]) as p order by k) as keys`;
}

interface Logged {
  /** The ids (resultId) of the results that were new. */
  inserted: Set<string>;
  /** For the replays: what their key recorded first. */
  originals: Map<string, RecordOutcome['recorded']>;
  /** The stored board scores of every row the new results touch, before this group. */
  before: Map<string, StoredBoardScore>;
  backlogIds: number[];
  flagged: Set<string>;
  /** The transaction's id; null when nothing was new, so nothing was written. */
  xid: string | null;
}

/**
 * The log statement: claims each result's idempotency key (result_keys, see schema.ts), logs the
 * results whose key was new into their month's partition of the score log, queues one
 * index_backlog row naming every (board, player) with a new result (the outbox costs no round trip
 * of its own, and one row per group, not per result), and in the same statement reads what the fold needs: the originals of the replays, the
 * current board scores of the rows the new results touch, and which of the players are flagged.
 * O(k log N) for k entries.
 */
async function logAndRead(tx: TransactionSql, entries: ResultEntry[]): Promise<Logged> {
  const wanted = new Map<string, { boardId: string; row: ScoreRowKey; playerId: string }>();
  for (const entry of entries) {
    for (const row of entry.rows) wanted.set(rowId(entry.board.id, row, entry.playerId), { boardId: entry.board.id, row, playerId: entry.playerId });
  }
  const rows = [...wanted.values()];
  const [found] = await tx<{ inserted: string; originals: string; before: string; backlog_ids: string[]; flagged: string[]; xid: string | null }[]>`
    with input as (
      select * from unnest(
        ${tx.array(entries.map((e) => e.board.id))}::text[],
        ${tx.array(entries.map((e) => e.playerId))}::text[],
        ${tx.array(entries.map((e) => e.matchId))}::text[],
        ${tx.array(entries.map((e) => String(e.score)))}::int8[],
        ${tx.array(entries.map((e) => e.region))}::text[],
        ${tx.array(entries.map((e) => e.achievedAt.toISOString()))}::timestamptz[],
        ${tx.array(entries.map((e) => e.metadata))}::json[])
        as i(board_id, player_id, match_id, score, region, achieved_at, metadata)),
    keyed as (
      insert into result_keys (board_id, player_id, match_id, achieved_at, region)
      select board_id, player_id, match_id, achieved_at, region from input
      on conflict do nothing
      returning board_id, player_id, match_id),
    logged as (
      insert into results (board_id, player_id, match_id, score, region, achieved_at, metadata)
      select i.board_id, i.player_id, i.match_id, i.score, i.region, i.achieved_at, i.metadata
      from input i join keyed k using (board_id, player_id, match_id)),
    queued as (
      insert into index_backlog (board_ids, player_ids)
      select array_agg(board_id), array_agg(player_id) from (select distinct board_id, player_id from keyed) as touched
      having count(*) > 0
      returning id)
    select
      (select coalesce(json_agg(json_build_array(board_id, match_id, player_id)), '[]') from keyed)::text as inserted,
      (select coalesce(json_agg(json_build_array(r.board_id, r.match_id, r.player_id, round(extract(epoch from r.achieved_at) * 1000), r.region)), '[]')
       from result_keys r join input i using (board_id, player_id, match_id))::text as originals,
      (select coalesce(json_agg(json_build_array(s.board_id, s.period, s.bucket, s.region, s.player_id, s.score, round(extract(epoch from s.reached_at) * 1000), s.metadata::text)), '[]')
       from board_scores s
       join unnest(
         ${tx.array(rows.map((k) => k.boardId))}::text[],
         ${tx.array(rows.map((k) => k.row.period))}::text[],
         ${tx.array(rows.map((k) => k.row.bucket))}::text[],
         ${tx.array(rows.map((k) => k.row.region))}::text[],
         ${tx.array(rows.map((k) => k.playerId))}::text[])
         as w(board_id, period, bucket, region, player_id)
         on s.board_id = w.board_id and s.period = w.period and s.bucket = w.bucket and s.region = w.region and s.player_id = w.player_id
       where exists (select 1 from keyed k where k.board_id = w.board_id and k.player_id = w.player_id))::text as before,
      array(select id from queued) as backlog_ids,
      array(select p.id from players p where p.id in (select player_id from input) and p.flagged_at is not null) as flagged,
      case when exists (select 1 from keyed) then pg_current_xact_id()::text end as xid`;
  const inserted = JSON.parse(found!.inserted) as [string, string, string][];
  // The statement's snapshot shows the keys committed before it, not those this statement added.
  const originals = JSON.parse(found!.originals) as [string, string, string, number, string | null][];
  // Metadata comes as its text (::text above), so it is served as it was sent.
  const before = JSON.parse(found!.before) as [string, Period, string, string, string, number, number, EntryMetadata | null][];
  return {
    inserted: new Set(inserted.map(([board, match, player]) => resultId(board, match, player))),
    originals: new Map(originals.map(([board, match, player, ms, region]) => [resultId(board, match, player), { achievedAt: new Date(ms), region }])),
    before: new Map(
      before.map(([boardId, period, bucket, region, playerId, score, ms, metadata]) => [
        rowId(boardId, { period, bucket, region }, playerId),
        { boardId, period, bucket, region, playerId, score, reachedAt: new Date(ms), metadata },
      ]),
    ),
    backlogIds: found!.backlog_ids.map(Number),
    flagged: new Set(found!.flagged),
    xid: found!.xid,
  };
}

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
};

/** How a board merges a new part into a stored board score: one of the four upserts below. */
const mergeKind = (board: Board) => `${board.aggregate} ${board.order}`;

/**
 * Merges the group's contribution into board_scores, every board in one statement: one upsert per
 * kind of merge (BEST or SUM, HIGH_FIRST or LOW_FIRST), each taking the rows of the boards of its
 * kind, so the text never changes (and is prepared once). The merges are the SQL twins of
 * combine() and ranksAhead(). Answers the stored board scores after the merge. O(r log N).
 */
async function upsertBoardScores(tx: TransactionSql, boards: Map<string, Board>, rows: StoredBoardScore[]): Promise<StoredBoardScore[]> {
  if (rows.length === 0) return [];
  const column = <K extends keyof StoredBoardScore>(key: K, as: (value: StoredBoardScore[K]) => string | null = String) =>
    tx.array(rows.map((r) => as(r[key])));
  // Fresh fragments for each use: the merges are the SQL twins of ranksAhead() and combine().
  const ahead = (order: Board['order']) =>
    order === 'HIGH_FIRST'
      ? tx`(excluded.score > s.score or (excluded.score = s.score and excluded.reached_at < s.reached_at))`
      : tx`(excluded.score < s.score or (excluded.score = s.score and excluded.reached_at < s.reached_at))`;
  // The metadata follows the part that sets the score (combine()): the one kept, or the latest non-zero part.
  const best = (order: Board['order']) => tx`
    score = case when ${ahead(order)} then excluded.score else s.score end,
    reached_at = case when ${ahead(order)} then excluded.reached_at else s.reached_at end,
    metadata = case when ${ahead(order)} then excluded.metadata else s.metadata end`;
  const sum = (order: Board['order']) => tx`
    score = s.score + excluded.score,
    reached_at = case when s.score > 0 and excluded.score > 0 then greatest(s.reached_at, excluded.reached_at)
                      when excluded.score > 0 then excluded.reached_at
                      when s.score > 0 then s.reached_at
                      else ${order === 'HIGH_FIRST' ? tx`least` : tx`greatest`}(s.reached_at, excluded.reached_at) end,
    metadata = case when excluded.score > 0 and (s.score = 0 or excluded.reached_at > s.reached_at) then excluded.metadata else s.metadata end`;
  const upsert = (kind: string, merge: ReturnType<typeof best>) => tx`
    insert into board_scores as s (board_id, period, bucket, region, player_id, score, reached_at, metadata)
    select board_id, period, bucket, region, player_id, score, reached_at, metadata from incoming where kind = ${kind}
    on conflict (board_id, period, bucket, region, player_id) do update set ${merge}
    returning s.board_id, s.period, s.bucket, s.region, s.player_id, s.score, s.reached_at, s.metadata`;
  const stored = await tx<StoredRow[]>`
    with incoming as (
      select * from unnest(
        ${tx.array(rows.map((r) => mergeKind(boards.get(r.boardId)!)))}::text[],
        ${column('boardId')}::text[], ${column('period')}::text[], ${column('bucket')}::text[], ${column('region')}::text[],
        ${column('playerId')}::text[], ${column('score')}::int8[], ${column('reachedAt', (at) => at.toISOString())}::timestamptz[],
        ${column('metadata', (metadata) => metadata)}::json[])
        as i(kind, board_id, period, bucket, region, player_id, score, reached_at, metadata)),
    best_high as (${upsert('BEST HIGH_FIRST', best('HIGH_FIRST'))}),
    best_low as (${upsert('BEST LOW_FIRST', best('LOW_FIRST'))}),
    sum_high as (${upsert('SUM HIGH_FIRST', sum('HIGH_FIRST'))}),
    sum_low as (${upsert('SUM LOW_FIRST', sum('LOW_FIRST'))})
    select board_id, period, bucket, region, player_id, score, round(extract(epoch from reached_at) * 1000)::float8 as reached_ms, metadata::text as metadata
    from (select * from best_high union all select * from best_low union all select * from sum_high union all select * from sum_low) as merged`;
  return stored.map((row) => ({
    boardId: row.board_id,
    period: row.period,
    bucket: row.bucket,
    region: row.region,
    playerId: row.player_id,
    score: row.score,
    reachedAt: new Date(row.reached_ms),
    metadata: row.metadata,
  }));
}
