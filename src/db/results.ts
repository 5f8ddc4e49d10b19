import type { Sql } from 'postgres';
import { COMMIT_DOUBT_TIMEOUT_MS, recordOnce } from './commit-doubt.js';
import type { Placement } from './leagues.js';
import { ResultRateError } from './result-guards.js';
import { type GroupOnce, NoAttemptsLeftError, type RecordOutcome, type ResultEntry, type StoredBoardScore, TotalAboveMaxScoreError } from './result-entries.js';
import { BoardGoneError } from './board-deletion.js';

export { COMMIT_DOUBT_TIMEOUT_MS, CommitInDoubtError } from './commit-doubt.js';
export { BoardGoneError } from './board-deletion.js';
export {
  NoAttemptsLeftError,
  type RecordOutcome,
  type ResultEntry,
  type ScoreRowKey,
  type StoredBoardScore,
  TotalAboveMaxScoreError,
} from './result-entries.js';
export type { LeagueRound, Placement } from './leagues.js';

/** One submission's part of a recorded group: an outcome per entry, in order. */
export interface RecordedBatch {
  outcomes: RecordOutcome[];
}

/** What recordGroup did with a group of submissions. */
export interface RecordedGroup {
  /**
   * One per submission, in order: its outcomes, or the error that kept it out (nothing of it was
   * written; a {@link TotalAboveMaxScoreError}, a {@link NoAttemptsLeftError}, or a data error PostgreSQL raised for it alone).
   */
  submissions: ({ ok: RecordedBatch } | { error: unknown })[];
  /** The board scores after the commit, one per row the group's new results touched. */
  boardScores: StoredBoardScore[];
  /**
   * The index_backlog rows the group committed (see index-backlog.ts): delete them once the index
   * holds `boardScores`; until then the catch-up job re-applies them.
   */
  backlogIds: number[];
  /** The group's players that were flagged when it was recorded (`suspected` included). */
  flagged: Set<string>;
  /** The players the group flagged itself, in its transaction (result-guards.ts): the write path takes them out of every view. */
  suspected: Set<string>;
  /** The league placements the group committed, and the players it left waiting (tier and number null). */
  placements: Placement[];
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
 * commit, see services/group-commit.ts), in one transaction: log each result once under its
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
 * pipelined; the board-score upsert of the rows the group changes, pipelined with the league
 * placement of players new to a round (db/leagues.ts: the rounds' locks and one statement; neither,
 * and no round trip, when every BEST score stands and nobody is to be placed); COMMIT. The log
 * statement also reads who of a league board's players is placed already and a tournament's
 * attempts used, so a group with nobody to place and no maxAttempts pays nothing more. Every statement is set-based (unnest) and has a fixed text, so
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
      } else if (error instanceof NoAttemptsLeftError) {
        const culprit = active[error.submission]!;
        rejected.set(culprit, new NoAttemptsLeftError(error.inputs, culprit));
        active = active.filter((i) => i !== culprit);
      } else if (error instanceof BoardGoneError) {
        const culprit = active[error.submission]!;
        rejected.set(culprit, new BoardGoneError(error.boardId, culprit));
        active = active.filter((i) => i !== culprit);
      } else if (error instanceof ResultRateError) {
        const culprit = active[error.submission]!;
        rejected.set(culprit, new ResultRateError(error.inputs, culprit));
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

const emptyGroup = (): GroupOnce => ({ outcomes: [], boardScores: [], backlogIds: [], flagged: new Set(), placements: [] });

/** A RecordedGroup of `size` submissions: `done` holds those of `active` (in order), `rejected` the others. */
function assemble(size: number, rejected: Map<number, unknown>, done: GroupOnce, active: number[] = []): RecordedGroup {
  const submissions: RecordedGroup['submissions'] = Array.from({ length: size }, (_, i) => ({ error: rejected.get(i) }));
  active.forEach((i, k) => {
    submissions[i] = { ok: { outcomes: done.outcomes[k]! } };
  });
  return {
    submissions,
    boardScores: done.boardScores,
    backlogIds: done.backlogIds,
    flagged: done.flagged,
    suspected: done.suspected ?? new Set(),
    placements: done.placements,
  };
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
    suspected: new Set(done.flatMap((group) => [...group.suspected])),
    placements: done.flatMap((group) => group.placements),
  };
}
