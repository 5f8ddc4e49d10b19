import type { TransactionSql } from 'postgres';
import { throwIfPast } from '../deadline.js';
import { type RecordedBoardScore, combine, compareResults, keepsBoardScores } from '../model/board.js';
import { firstTierIndexOf } from '../model/league.js';
import { lockBoardsShared } from './locks.js';
import { BoardGoneError, goneBoards } from './board-deletion.js';
import { type Placement, type PlacementCandidate, lockRounds, placeInOrder } from './leagues.js';
import {
  type GroupOnce,
  NoAttemptsLeftError,
  type RecordOutcome,
  type ResultEntry,
  type StoredBoardScore,
  TotalAboveMaxScoreError,
  entryId,
  rowId,
} from './result-entries.js';
import { createSuspicions, flagSuspects, recentResults, refusePastResultRate } from './result-guards.js';
import { type Logged, attemptsId, lockPlayers, logAndRead, placingId, upsertBoardScores } from './result-statements.js';

/**
 * The body of a group's transaction (recordOnce in commit-doubt.ts runs it): the statements of
 * result-statements.ts, and between them the fold of the group's new results, in order, into every
 * board score kept as a row that they touch (a BEST board's ALL_TIME, every bucket of a SUM board:
 * see keepsBoardScores); the buckets derived from the log need nothing beyond the log row.
 * Issue 57 adds two things, each free for a group that needs neither: a tournament's maxAttempts,
 * counted under the player locks from what the log statement read (a submission past it is refused
 * whole), and the league placement of players new to a round (db/leagues.ts), sent with the upsert.
 */

/** An entry of the group with the submission it came in. */
interface GroupEntry {
  entry: ResultEntry;
  submission: number;
  /** Its index in its submission. */
  index: number;
}

/** The body of the group's transaction; answers the group and the transaction's id (null when nothing was written). */
export async function recordInTransaction(
  tx: TransactionSql,
  submissions: ResultEntry[][],
  signal: AbortSignal,
): Promise<{ group: GroupOnce; xid: string | null }> {
  const entries: GroupEntry[] = submissions.flatMap((entries, submission) => entries.map((entry, index) => ({ entry, submission, index })));
  // Each entry's id, made once: the fold asks for it several times per entry.
  const ids = entries.map(({ entry }) => entryId(entry));
  const firstSeen = new Map<string, number>();
  ids.forEach((id, i) => {
    if (!firstSeen.has(id)) firstSeen.set(id, i);
  });
  const candidates = [...firstSeen.values()].map((i) => entries[i]!.entry);
  // Pipelined: the log statement is sent at once and runs once the locks are held, so its snapshot
  // (taken when it starts) sees every earlier result and board score of these players.
  // The rate's read runs between the two (result-guards.ts): after the locks, before the group's own rows.
  // First the boards' locks, shared, then whether each board still exists, in a statement of its
  // own so that its snapshot is taken once the locks are held: a deleteBoard committed before then
  // is seen, and one after waits for this transaction (see db/board-deletion.ts).
  const boardIds = [...new Set(candidates.map((entry) => entry.board.id))];
  const [, gone, , recent, logged] = await Promise.all([
    lockBoardsShared(tx, boardIds),
    goneBoards(tx, boardIds),
    lockPlayers(tx, candidates),
    recentResults(tx, candidates),
    logAndRead(tx, candidates),
  ]);
  throwIfPast(signal);
  refuseGoneBoards(entries, gone);
  const isNew = (i: number) => firstSeen.get(ids[i]!) === i && logged.inserted.has(ids[i]!);
  refusePastMaxAttempts(entries, isNew, logged);
  refusePastResultRate(entries, isNew, recent);
  const suspicions = createSuspicions(logged.flagged);

  // Fold the new results in order: `running` starts from what the database held and tells whether
  // each result improved the ALL_TIME score; `contribution` is this group's own part, merged in SQL
  // (the player locks make a concurrent change impossible; the merge keeps even that case right).
  const running = new Map(logged.before);
  const contribution = new Map<string, StoredBoardScore>();
  const improved = new Set<number>();
  const after = new Map<number, StoredBoardScore[]>();
  entries.forEach(({ entry, submission }, i) => {
    if (!isNew(i)) return;
    const result: RecordedBoardScore = {
      playerId: entry.playerId,
      score: entry.score,
      reachedAt: entry.achievedAt,
      metadata: entry.metadata,
      ...(entry.tieBreakValues && { tieBreakValues: entry.tieBreakValues }),
    };
    const own: StoredBoardScore[] = [];
    after.set(i, own);
    for (const row of entry.rows) {
      if (!keepsBoardScores(entry.board, row.period)) {
        // Derived from the log this result was just written to: the result is its own part, and
        // the index (which only ever moves a member forward) keeps the better of it and what it held.
        own.push({ boardId: entry.board.id, ...row, ...result });
        continue;
      }
      const id = rowId(entry.board.id, row, entry.playerId);
      const old = running.get(id);
      // Suspicion is judged against the player's previous best on the board, as of this result.
      if (row.period === 'ALL_TIME' && row.region === '') suspicions.judge(entry, old);
      const next = { boardId: entry.board.id, ...row, ...combine(entry.board, old, result) };
      if (next.score > entry.board.maxScore) throw new TotalAboveMaxScoreError(entry.playerId, next.score, entry.board.maxScore, submission);
      running.set(id, next);
      own.push(next);
      contribution.set(id, { boardId: entry.board.id, ...row, ...combine(entry.board, contribution.get(id), result) });
      // Improved: the score, or on a board with tie-break columns one of them, changed (the whole result is better).
      if (row.period === 'ALL_TIME' && row.region === '' && (!old || compareResults(entry.board, old, next) !== 0)) improved.add(i);
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
    const board = boards.get(final.boardId)!;
    if (stored && compareResults(board, stored, final) === 0 && stored.reachedAt.getTime() === final.reachedAt.getTime()) unchanged.push(stored);
    else changed.push(part);
  }
  // Pipelined with the upsert: the rounds' locks, then the placement, whose snapshot (taken when it
  // starts) sees every cohort placed before the lock was granted. No statement when nobody is to be placed.
  const toPlace = placementCandidates(entries, isNew, logged);
  const [upserted, placements] = await Promise.all([
    upsertBoardScores(tx, boards, changed),
    toPlace.length === 0 ? ([] as Placement[]) : placeAfterLocks(tx, toPlace),
    // The group's suspects flagged with their results (result-guards.ts): no statement without any.
    flagSuspects(tx, suspicions.found),
  ]);
  const boardScores = [...upserted, ...unchanged];
  for (const stored of upserted) {
    // The twin of the check above, in case the stored score moved under us after all.
    const board = boards.get(stored.boardId)!;
    if (stored.score <= board.maxScore) continue;
    const first = entries.findIndex(({ entry }, i) => entry.board.id === stored.boardId && entry.playerId === stored.playerId && isNew(i));
    throw new TotalAboveMaxScoreError(stored.playerId, stored.score, board.maxScore, entries[first]?.submission ?? 0);
  }

  const outcomes: RecordOutcome[][] = submissions.map(() => []);
  entries.forEach(({ entry, submission }, i) => {
    if (isNew(i)) {
      outcomes[submission]!.push({
        duplicate: false,
        improved: improved.has(i),
        recorded: { achievedAt: entry.achievedAt, region: entry.region },
        after: after.get(i)!,
      });
      return;
    }
    const first = entries[firstSeen.get(ids[i]!)!]!.entry;
    const recorded = logged.originals.get(ids[i]!) ?? { achievedAt: first.achievedAt, region: first.region };
    outcomes[submission]!.push({ duplicate: true, improved: false, recorded, after: [] });
  });
  const suspected = new Set(suspicions.found.keys());
  const flagged = suspected.size === 0 ? logged.flagged : new Set([...logged.flagged, ...suspected]);
  return { group: { outcomes, boardScores, backlogIds: logged.backlogIds, flagged, suspected, placements }, xid: logged.xid };
}

/** Throws a {@link BoardGoneError} for the first submission naming a board that is gone: the transaction rolls back, and the group is tried again without it. O(entries). */
function refuseGoneBoards(entries: GroupEntry[], gone: string[]): void {
  if (gone.length === 0) return;
  const first = entries.find(({ entry }) => gone.includes(entry.board.id))!;
  throw new BoardGoneError(first.entry.board.id, first.submission);
}

/**
 * Throws a {@link NoAttemptsLeftError} for the first submission with a new result past its board's
 * maxAttempts, naming each of its refused entries: the results already logged in the entry's span
 * (`logged.attemptsBefore`), then the group's new ones in order. A replay is never refused and
 * counts nothing (it is in the log already, counted once). O(entries).
 */
function refusePastMaxAttempts(entries: GroupEntry[], isNew: (i: number) => boolean, logged: Logged): void {
  if (logged.attemptsBefore.size === 0) return;
  const used = new Map(logged.attemptsBefore);
  let refused: { submission: number; inputs: NoAttemptsLeftError['inputs'] } | null = null;
  for (const [i, { entry, submission, index }] of entries.entries()) {
    const max = entry.board.maxAttempts ?? null;
    if (!entry.attempts || max === null || !isNew(i)) continue;
    if (refused && refused.submission !== submission) break;
    const key = attemptsId(entry);
    const count = (used.get(key) ?? 0) + 1;
    used.set(key, count);
    if (count <= max) continue;
    refused ??= { submission, inputs: [] };
    refused.inputs.push({ index, playerId: entry.playerId, boardId: entry.board.id, maxAttempts: max });
  }
  if (refused) throw new NoAttemptsLeftError(refused.inputs, refused.submission);
}

/** The group's new results that place a player: in a round, not yet placed or waiting in it; in arrival order. */
function placementCandidates(entries: GroupEntry[], isNew: (i: number) => boolean, logged: Logged): PlacementCandidate[] {
  const candidates: PlacementCandidate[] = [];
  entries.forEach(({ entry }, i) => {
    const league = entry.board.league;
    if (!entry.round || !league || !isNew(i) || logged.settled.has(placingId(entry.board.id, entry.round.label, entry.playerId))) return;
    candidates.push({
      boardId: entry.board.id,
      round: entry.round,
      playerId: entry.playerId,
      cohortSize: league.cohortSize,
      firstTier: firstTierIndexOf(league),
    });
  });
  return candidates;
}

/** The rounds' locks and the placement, sent together (see recordInTransaction). */
async function placeAfterLocks(tx: TransactionSql, candidates: PlacementCandidate[]): Promise<Placement[]> {
  const [, placements] = await Promise.all([
    lockRounds(
      tx,
      candidates.map((c) => ({ boardId: c.boardId, round: c.round.label })),
    ),
    placeInOrder(tx, candidates),
  ]);
  return placements;
}
