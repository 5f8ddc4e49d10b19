import { type RecordOutcome, type RecordedGroup, type ResultEntry, type ScoreRowKey, type StoredBoardScore } from '../db/results.js';
import { rowId } from '../db/result-entries.js';
import type { Season } from '../db/seasons.js';
import { compareResults, keepsBoardScores } from '../model/board.js';
import { settleBy } from '../deadline.js';
import type { BoardBucket, BoardScoreWrite, Place, WrittenPlace } from '../ranking/index.js';
import { bucketKey } from '../ranking/keys.js';
import { packingFor, scoreOrderOfPacked, unpack } from '../ranking/packing.js';
import type { ResultBucket } from '../services/buckets.js';
import type { Logger } from 'pino';
import type { Storage } from '../db/storage.js';
import type { RankingIndex } from '../ranking/index.js';
import type { TopCache } from '../ranking/top-cache.js';
import type { BacklogConfirmer } from '../services/backlog-confirmer.js';
import type { FlagChanges } from '../services/flag-changes.js';
import type { Metrics } from '../services/metrics.js';
import type { SubmissionHealth } from '../services/submission-health.js';
import { type FlagSpan, takeOutFlaggedMeanwhile } from './flag-recheck.js';
import { type GroupCommit, type GroupCommitOptions, type ItemOutcome, createGroupCommit } from '../services/group-commit.js';
import { type RecordedScore, heldRecorded } from '../reads/recorded-scores.js';
import { restoreReturningBest } from './returning-players.js';
import { announceLeagueChanges } from '../pubsub/league-signal.js';
import type { Overtaking } from './overtaking.js';
import { type FlagDeps, takeOutSuspect } from './flags.js';

/**
 * The write path's shared half (submit.ts is the other): the process's group commit of checked
 * submissions, each group recorded in PostgreSQL, written to the index, and checked once more for
 * players flagged while it was written.
 */

export interface PreparedEntry extends ResultEntry {
  buckets: ResultBucket[];
  /** The board's live seasons as this request saw them. */
  seasons: readonly Season[];
}

/** The board-score row of a result's bucket. */
export const rowKey = (at: ResultBucket): ScoreRowKey => ({ period: at.bucket.period, bucket: at.bucket.label, region: at.region ?? '' });

/** One submitScore or submitScores call, checked, as it waits for its group. */
export type Submission = PreparedEntry[];

/** What a group answers each of its submissions once committed and written to the index. */
export interface SubmissionRecorded {
  outcomes: RecordOutcome[];
  /** Flagged players: recorded, kept out of the index, answered with no standings. */
  hidden: Set<string>;
  /**
   * Where each recorded entry's board score stood right after it was written, one per bucket of the
   * entry (null where the index placed none); empty when the index did not answer.
   */
  places: Map<PreparedEntry, (PlaceWithSize | null)[]>;
}

/** The process's group commit of submissions (see group-commit.ts); one per process. */
export type SubmissionGroups = GroupCommit<Submission, SubmissionRecorded>;

/** What committing a group takes (9 members). */
export interface SubmissionGroupDeps {
  storage: Pick<Storage, 'results' | 'players' | 'boardScores'>;
  /**
   * The index on the masters: the group's writes, the places read back with them, and the flag
   * check's removals (a group answers its own writes, never a replica's view of them).
   */
  index: RankingIndex;
  backlog: Pick<BacklogConfirmer, 'confirm'>;
  flagChanges: Pick<FlagChanges, 'lastRead' | 'read'>;
  topCache: Pick<TopCache, 'invalidate'>;
  submissionHealth: Pick<SubmissionHealth, 'committed' | 'failed'>;
  metrics: Pick<Metrics, 'indexBehind'>;
  log: Logger;
  /** Friends passed (writes/overtaking.ts), told off the submission's path. Default: none. */
  overtaking?: Pick<Overtaking, 'written'> | undefined;
  /**
   * What taking a player flagged by their own result out of every view takes (writes/flags.ts
   * takeOutSuspect). Default: none, so a suspect's earlier board scores stay in the index until the
   * catch-up job or a rebuild takes them out (their new ones are never written).
   */
  suspects?: FlagDeps | undefined;
}

/**
 * Builds the process's group commit of submissions: concurrent calls that arrive while groups are
 * being committed share the next group, recorded by one PostgreSQL transaction (recordGroup) and
 * written to the index in one script call per sorted set it touches.
 */
export function createSubmissionGroups(deps: SubmissionGroupDeps, options: GroupCommitOptions = {}): SubmissionGroups {
  return createGroupCommit((submissions, committed, signal) => commitGroup(deps, submissions, committed, signal), options);
}

/**
 * One group: records it (one transaction; a submission that fails alone is answered its error and
 * the others are recorded without it), writes the new board scores of players not flagged into the
 * index (one script call per sorted set), then checks the flags once more (see keepFlaggedOut). Throws only when
 * nothing was recorded for anyone (PostgreSQL away).
 */
async function commitGroup(
  deps: SubmissionGroupDeps,
  submissions: Submission[],
  committed: () => void,
  signal: AbortSignal,
): Promise<ItemOutcome<SubmissionRecorded>[]> {
  // A flag token read before the group's transaction reads the flags (the last one this process
  // read: no wait, no call): the same token after the index write spares the flag check its query
  // (see takeOutFlaggedMeanwhile).
  const flagsBefore = deps.flagChanges.lastRead();
  let recorded: RecordedGroup;
  try {
    recorded = await deps.storage.results.record(submissions, { signal });
  } catch (error) {
    deps.submissionHealth.failed(error);
    throw error;
  }
  deps.submissionHealth.committed();
  // The next group may start its transaction while this one writes the index.
  committed();
  const written = submissions.flatMap((entries, i) => {
    const done = recorded.submissions[i]!;
    return 'ok' in done ? entries.map((entry, k) => ({ entry, outcome: done.ok.outcomes[k]! })) : [];
  });
  // A flagged player's results are recorded, but their board scores stay out of the index; a
  // player the group flagged itself leaves every view before any call of the group is answered.
  const hidden = recorded.flagged;
  await takeOutSuspects(deps, recorded.suspected);
  const shown = written.filter(({ entry }) => !hidden.has(entry.playerId));
  const stored = recorded.boardScores.filter((score) => !hidden.has(score.playerId));
  const places = await writeIndex(deps, shown, stored, recorded.backlogIds);
  // Recorded already: past the deadline the answer goes out without waiting for the check (which
  // goes on, and logs what it could not do).
  if (places)
    await settleBy(
      keepFlaggedOut(
        deps,
        shown.map(({ entry }) => entry),
        hidden,
        // The token after the write is read by the check itself, once every index write of the
        // group was answered: Redis then reads it after them on one node or a Cluster alike, with
        // no reliance on the order one connection's commands run in. A round trip, not a command more.
        { before: flagsBefore },
      ),
      signal,
    ).catch(() => {});
  return recorded.submissions.map((done) => ('ok' in done ? { ok: { outcomes: done.ok.outcomes, hidden, places: places ?? new Map() } } : done));
}

/**
 * Takes the group's suspects out of every bucket they hold, as flagPlayer would, before the group
 * writes the index (and so before its backlog rows are confirmed: should this process stop first,
 * the catch-up job finds them flagged, see jobs/index-catch-up.ts). A failure is logged: the flag
 * is committed, and the catch-up, a rebuild or flagging the player again corrects the index.
 */
async function takeOutSuspects(deps: SubmissionGroupDeps, suspected: ReadonlySet<string>): Promise<void> {
  if (suspected.size === 0 || !deps.suspects) return;
  for (const playerId of suspected) {
    try {
      await takeOutSuspect(deps.suspects, playerId);
    } catch (error) {
      deps.log.error({ err: error, playerId }, 'could not take a suspect out of the index; their flag is committed');
    }
  }
}

/**
 * A board score's place in its bucket after the write, with the bucket's size, and the recorded
 * board score it holds when the write knew it (undefined: looked up when a selection asks).
 * `before`: where the player stood in the bucket just before this result (null: not ranked there),
 * the answer's previousRank. `moves`: on a COMPETITION or DENSE board, what the group's writes did
 * to the bucket, to count its ranks as of this result's own moment (see GroupMoves).
 */
export type PlaceWithSize = {
  place: Place;
  size: number;
  at: BoardBucket;
  recorded: RecordedScore | undefined;
  before: PlaceBefore | null;
  moves?: GroupMoves | undefined;
};

/** Where a player stood in a bucket just before a result was written. */
interface PlaceBefore {
  /** 1-based, in the index's own order (the ORDINAL rank), as of the write's own moment. */
  rank: number;
  /** The result held then: what its COMPETITION or DENSE rank is counted from. */
  result: Pick<Place, 'score' | 'tieBreakValues'>;
}

/**
 * A result's change of one member in a bucket: the order values (scoreOrder in packing.ts: larger
 * is better, whenever reached) it held before and after the write, null where it held none.
 */
export interface ResultChange {
  before: number | null;
  after: number | null;
}

/**
 * A group's writes into one bucket, in the order they were applied, and which of them are this
 * result's: the COMPETITION and DENSE counts are read once the whole group is written, so what the
 * writes from a result's own on did is taken back out of them to rank it as of its moment (and its
 * previous rank as of just before it). Writes of other groups landing meanwhile are not: those are
 * concurrent either way.
 */
export interface GroupMoves {
  changes: readonly ResultChange[];
  /** The index in `changes` of this result's write. */
  written: number;
  /** The index of the write whose place is answered: this result's, or a later fix of it (restoreReturningBest). */
  answered: number;
}

/**
 * Takes out of the index the players of the group flagged while it was written (see
 * takeOutFlaggedMeanwhile); those join `hidden`. (When the index write failed there is nothing to
 * take out: the catch-up job, which leaves flagged players out, writes those board scores later.)
 */
async function keepFlaggedOut(deps: SubmissionGroupDeps, entries: PreparedEntry[], hidden: Set<string>, flags: FlagSpan): Promise<void> {
  const written = new Map<string, BoardBucket[]>();
  for (const entry of entries) if (entry.buckets.length > 0) written.set(entry.playerId, [...(written.get(entry.playerId) ?? []), ...entry.buckets]);
  if (written.size === 0) return;
  try {
    for (const playerId of await takeOutFlaggedMeanwhile(deps, written, flags)) hidden.add(playerId);
  } catch (error) {
    deps.log.error({ err: error }, 'could not check for players flagged during the write; a rebuild or a new flag corrects the index');
  }
}

/**
 * Writes the group's results into the index, in one call per key for the whole group: each
 * result's board score as it stood right after that result, in order, so that each is placed (and
 * answered) as of its own moment, the last write of each board score being its stored value.
 * Answers every entry's places; null when Redis does not answer. Once the index holds them, the
 * group's index_backlog rows are confirmed (deleted in the background, with other groups' in one
 * statement); when it does not, they stay, and the catch-up job (jobs/index-catch-up.ts)
 * re-applies them as soon as Redis answers again.
 */
async function writeIndex(
  deps: SubmissionGroupDeps,
  shown: { entry: PreparedEntry; outcome: RecordOutcome }[],
  stored: StoredBoardScore[],
  backlogIds: number[],
): Promise<SubmissionRecorded['places'] | null> {
  const writes: BoardScoreWrite[] = [];
  const lastWrite = new Map<string, BoardScoreWrite>();
  for (const { entry, outcome } of shown) {
    outcome.after.forEach((score, b) => {
      const at = entry.buckets[b]!;
      const write = { at, score, expiresAt: at.expiresAt };
      writes.push(write);
      // Only a row kept in board_scores is stored (below): a bucket derived from the log has none.
      if (keepsBoardScores(at.board, at.bucket.period)) lastWrite.set(rowId(entry.board.id, entry.rows[b]!, entry.playerId), write);
    });
  }
  // The stored board score is the truth: should it differ from the fold's last value (the player
  // locks make that impossible, but the index must end where PostgreSQL is), it is written last.
  for (const score of stored) {
    const last = lastWrite.get(rowId(score.boardId, score, score.playerId));
    if (last && (compareResults(last.at.board, last.score, score) !== 0 || last.score.reachedAt.getTime() !== score.reachedAt.getTime())) {
      writes.push({ at: last.at, score, expiresAt: last.expiresAt });
    }
  }
  const places: SubmissionRecorded['places'] = new Map();
  try {
    const placed = await deps.index.writeBoardScores(writes);
    // The writes' own replies, kept: a fix below answers its place, but the rank before is this write's.
    const own = [...placed];
    // A player back from inactivity returns to a BEST board's SEASON with their best, not this result (returning-players.ts).
    await restoreReturningBest({ storage: deps.storage, masterIndex: deps.index }, writes, placed);
    const moves = groupMoves(writes, own, placed);
    deps.backlog.confirm(backlogIds);
    // Queued, not awaited: the answer never waits for who was passed.
    deps.overtaking?.written(writes, placed);
    // cohortChanged's watchers of the league rounds written (none on a board without a league): not
    // awaited, the answer does not wait for watchers, and a failure is logged by the call.
    void announceLeagueChanges(
      deps,
      writes.map(({ at, score }) => ({ at, playerId: score.playerId })),
    );
    // The writes are the shown entries' board scores in order, as made above.
    let i = 0;
    for (const { entry, outcome } of shown) {
      places.set(
        entry,
        outcome.after.map((score) => {
          const { place, size } = placed[i]!;
          const { at } = writes[i]!;
          const before = placeBefore(at, own[i]!);
          const movesOf = moves[i++];
          // The board score written, as recorded, where it is the one the index now holds; where the
          // index holds a better one (a derived bucket's earlier best), that one is looked up if asked for.
          return place ? { place, size, at, recorded: heldRecorded(at, place, score), before, ...(movesOf && { moves: movesOf }) } : null;
        }),
      );
    }
    return places;
  } catch (error) {
    deps.metrics.indexBehind.inc();
    deps.log.error({ err: error, writes: writes.length }, 'index write failed after commit; results are recorded');
    return null;
  }
}

/** Where a write's member stood just before it, as the index answered (null: not ranked there). O(columns). */
function placeBefore(at: BoardBucket, written: WrittenPlace): PlaceBefore | null {
  if (written.rankBefore === null || written.packedBefore === null) return null;
  const { score, tieBreakValues } = unpack(at.board, packingFor(at.board, at.bucket.period), written.packedBefore, at.bucket.start);
  return { rank: written.rankBefore, result: tieBreakValues.length > 0 ? { score, tieBreakValues } : { score } };
}

/**
 * Each write's {@link GroupMoves} on a COMPETITION or DENSE board (undefined on an ORDINAL one, whose
 * ranks the write read as of their moment): the group's changes of each bucket, in the order they
 * were applied, a fix of restoreReturningBest (`placed` where it differs from `own`) after them all,
 * as it was written. O(k).
 */
function groupMoves(writes: readonly BoardScoreWrite[], own: readonly WrittenPlace[], placed: readonly WrittenPlace[]): (GroupMoves | undefined)[] {
  const byBucket = new Map<string, ResultChange[]>();
  const changesOf = (at: BoardBucket) => {
    const key = bucketKey(at);
    let changes = byBucket.get(key);
    if (!changes) byBucket.set(key, (changes = []));
    return changes;
  };
  const changeOf = (at: BoardBucket, written: WrittenPlace): ResultChange => {
    const packing = packingFor(at.board, at.bucket.period);
    const order = (packed: number | null) => (packed === null ? null : scoreOrderOfPacked(packing, packed));
    return { before: order(written.packedBefore), after: order(written.packed) };
  };
  const moves = writes.map(({ at }, i): GroupMoves | undefined => {
    if (at.board.rankStyle === 'ORDINAL') return undefined;
    const changes = changesOf(at);
    changes.push(changeOf(at, own[i]!));
    return { changes, written: changes.length - 1, answered: changes.length - 1 };
  });
  writes.forEach(({ at }, i) => {
    const move = moves[i];
    if (!move || placed[i] === own[i]) return;
    const changes = changesOf(at);
    changes.push(changeOf(at, placed[i]!));
    move.answered = changes.length - 1;
  });
  return moves;
}
