import {
  type RecordOutcome,
  type RecordedGroup,
  type ResultEntry,
  type ScoreRowKey,
  type StoredBoardScore,
  TotalAboveMaxScoreError,
  recordGroup,
} from '../db/results.js';
import type { Season } from '../db/seasons.js';
import { type Board, type EntryMetadata, MAX_METADATA_BYTES } from '../model/board.js';
import type { BoardBucket, BoardScoreWrite, Place } from '../ranking/index.js';
import { type RecordedScore, recordedOf } from './recorded-scores.js';
import { CLOCK_SKEW_MS, type ResultBucket, bucketsOfResult, regionProblem, requireBoard } from './buckets.js';
import type { Services } from './context.js';
import { type GroupCommit, type GroupCommitOptions, type ItemOutcome, createGroupCommit } from './group-commit.js';
import { badInput } from './errors.js';
import { takeOutFlaggedMeanwhile } from './flag-recheck.js';
import { liveSeasonsOf } from './season-directory.js';
import { settleBy } from '../deadline.js';
import { type PeriodStanding, bucketOfAnswer, toStanding } from './standings.js';
import { styledPlaces } from './rank-styles.js';

/** The most results one submitScores call may carry. */
export const MAX_BATCH = 1_000;

/** How long before the request's deadline the write path gives up, leaving time to answer. */
const ANSWER_MARGIN_MS = 250;

export interface SubmitScoreInput {
  board: string;
  playerId: string;
  score: number;
  matchId: string;
  region?: string | null | undefined;
  achievedAt?: Date | null | undefined;
  /** Any JSON value as parsed; only an object of at most MAX_METADATA_BYTES is taken (see metadataText). */
  metadata?: unknown;
}

/** Who submits, and when the request came in. */
export interface SubmitOptions {
  /** Whether the call is a submitScores (its errors name `inputs[i]`). Default true. */
  batch?: boolean;
  /** The API key whose submission budget the call spends; null spends none (a caller of the service's own). */
  keyId: string | null;
  /** performance.now() when the request came in: the call answers before startedAt + requestTimeoutMs. */
  startedAt: number;
}

export interface SubmitScorePayload {
  duplicate: boolean;
  improved: boolean;
  standings: PeriodStanding[];
}

export interface PreparedEntry extends ResultEntry {
  buckets: ResultBucket[];
  /** The board's live seasons as this request saw them. */
  seasons: readonly Season[];
}

const rowKey = (at: ResultBucket): ScoreRowKey => ({ period: at.bucket.period, bucket: at.bucket.label, region: at.region ?? '' });
const placeId = (boardId: string, row: ScoreRowKey, playerId: string) => [boardId, row.period, row.bucket, row.region, playerId].join('\u0000');

/**
 * The JSON text an entry's metadata is kept as, or null when none was sent; refused unless it is an
 * object of at most MAX_METADATA_BYTES as UTF-8 (JSON.stringify's compact form is what is measured and kept).
 */
function metadataText(metadata: unknown, where: string): EntryMetadata | null {
  if (metadata === null || metadata === undefined) return null;
  if (typeof metadata !== 'object' || Array.isArray(metadata)) {
    throw badInput(`${where}metadata must be a JSON object, such as {"car": "R8"}; this is ${Array.isArray(metadata) ? 'an array' : `a ${typeof metadata}`}.`);
  }
  const text = JSON.stringify(metadata);
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > MAX_METADATA_BYTES) {
    throw badInput(
      `${where}metadata is ${bytes.toLocaleString('en-US')} bytes as JSON (UTF-8); at most ${MAX_METADATA_BYTES.toLocaleString('en-US')} are kept.`,
    );
  }
  return text;
}

/** Checks one input against its board; everything the input type cannot check alone. */
function prepare(input: SubmitScoreInput, board: Board, seasons: readonly Season[], now: Date, where: string): PreparedEntry {
  if (input.score > board.maxScore) {
    throw badInput(`${where}score ${input.score} is above board "${board.id}"'s maxScore of ${board.maxScore}.`);
  }
  const problem = regionProblem(board, input.region);
  if (problem) throw badInput(`${where}${problem}`);
  const region = input.region ?? null;
  const achievedAt = input.achievedAt ?? now;
  if (achievedAt.getTime() > now.getTime() + CLOCK_SKEW_MS) {
    throw badInput(`${where}achievedAt ${achievedAt.toISOString()} is more than 5 minutes ahead of the server's clock.`);
  }
  const metadata = metadataText(input.metadata, where);
  const buckets = bucketsOfResult(board, achievedAt, region, now, seasons);
  return {
    board,
    seasons,
    matchId: input.matchId,
    playerId: input.playerId,
    score: input.score,
    region,
    achievedAt,
    metadata,
    buckets,
    rows: buckets.map(rowKey),
  };
}

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

/** The process's group commit of submissions (see group-commit.ts); one per process, in Services. */
export type SubmissionGroups = GroupCommit<Submission, SubmissionRecorded>;

/**
 * Builds the process's group commit of submissions: concurrent calls that arrive while groups are
 * being committed share the next group, recorded by one PostgreSQL transaction (recordGroup) and
 * written to the index by one Redis pipeline. `services` is read when the first group runs (the
 * services hold the groups, and the groups use the services).
 */
export function createSubmissionGroups(services: () => Services, options: GroupCommitOptions = {}): SubmissionGroups {
  return createGroupCommit((submissions, committed, signal) => commitGroup(services(), submissions, committed, signal), options);
}

/**
 * The write path. Every input is checked before anything is written; then the call joins a group
 * (see createSubmissionGroups): one PostgreSQL transaction records the group and commits before any
 * of its calls is answered, then one Redis pipeline writes every touched board score into the index
 * and reads each place back. If the index cannot be written the results are still recorded and
 * answered, with no standings. A call is all or nothing, whatever the others of its group do.
 */
export async function submitScores(
  services: Services,
  inputs: SubmitScoreInput[],
  { batch = true, keyId, startedAt }: SubmitOptions,
): Promise<SubmitScorePayload[]> {
  if (inputs.length > MAX_BATCH) throw badInput(`submitScores takes at most ${MAX_BATCH} inputs; this call has ${inputs.length}.`);
  if (keyId !== null) await services.limits.submissions(keyId, inputs.length);
  const now = services.now();
  const entries: PreparedEntry[] = [];
  // One season lookup per board per call, however many of its results the call carries.
  const seasonsByBoard = new Map<string, Promise<Season[]>>();
  for (const [i, input] of inputs.entries()) {
    const where = batch ? `inputs[${i}]: ` : '';
    const board = await requireBoard(services, input.board);
    if (!seasonsByBoard.has(board.id)) seasonsByBoard.set(board.id, liveSeasonsOf(services, board));
    entries.push(prepare(input, board, await seasonsByBoard.get(board.id)!, now, where));
  }
  if (entries.length === 0) return [];

  let recorded: SubmissionRecorded;
  try {
    // Answered within the request's bound, a little ahead of the request's own deadline so that
    // this answer (nothing recorded, or in doubt) is the one the client gets.
    recorded = await services.submissions.submit(entries, entries.length, startedAt + services.requestTimeoutMs - ANSWER_MARGIN_MS);
  } catch (error) {
    if (error instanceof TotalAboveMaxScoreError) {
      throw badInput(`A SUM total would pass the board's maxScore: ${error.message}. Nothing was recorded.`);
    }
    throw error;
  }

  const { outcomes, hidden, places } = recorded;
  return Promise.all(
    entries.map(async (entry, i) => {
      const outcome = outcomes[i]!;
      const standings = hidden.has(entry.playerId)
        ? []
        : outcome.duplicate
          ? await readStandings(
              services,
              bucketsOfResult(entry.board, outcome.recorded.achievedAt, outcome.recorded.region, now, entry.seasons),
              entry.playerId,
            )
          : await standingsOf(services, entry, places);
      return { duplicate: outcome.duplicate, improved: outcome.improved, standings };
    }),
  );
}

/**
 * One group: records it (one transaction; a submission that fails alone is answered its error and
 * the others are recorded without it), writes the new board scores of players not flagged into the
 * index in one pipeline, then checks the flags once more (see keepFlaggedOut). Throws only when
 * nothing was recorded for anyone (PostgreSQL away).
 */
async function commitGroup(
  services: Services,
  submissions: Submission[],
  committed: () => void,
  signal: AbortSignal,
): Promise<ItemOutcome<SubmissionRecorded>[]> {
  let recorded: RecordedGroup;
  try {
    recorded = await recordGroup(services.database.sql, submissions, { signal });
  } catch (error) {
    services.submissionHealth.failed(error);
    throw error;
  }
  services.submissionHealth.committed();
  // The next group may start its transaction while this one writes the index.
  committed();
  const written = submissions.flatMap((entries, i) => {
    const done = recorded.submissions[i]!;
    return 'ok' in done ? entries.map((entry, k) => ({ entry, outcome: done.ok.outcomes[k]! })) : [];
  });
  // A flagged player's results are recorded, but their board scores stay out of the index.
  const hidden = recorded.flagged;
  const shown = written.filter(({ entry }) => !hidden.has(entry.playerId));
  const stored = recorded.boardScores.filter((score) => !hidden.has(score.playerId));
  const places = await writeIndex(services, shown, stored, recorded.backlogIds);
  // Recorded already: past the deadline the answer goes out without waiting for the check (which
  // goes on, and logs what it could not do).
  if (places)
    await settleBy(
      keepFlaggedOut(
        services,
        shown.map(({ entry }) => entry),
        hidden,
      ),
      signal,
    ).catch(() => {});
  return recorded.submissions.map((done) => ('ok' in done ? { ok: { outcomes: done.ok.outcomes, hidden, places: places ?? new Map() } } : done));
}

/** A board score's place in its bucket after the write, with the bucket's size. */
export type PlaceWithSize = { place: Place; size: number; at: BoardBucket; recorded: RecordedScore };

/**
 * Takes out of the index the players of the group flagged while it was written (see
 * takeOutFlaggedMeanwhile); those join `hidden`. (When the index write failed there is nothing to
 * take out: the catch-up job, which leaves flagged players out, writes those board scores later.)
 */
async function keepFlaggedOut(services: Services, entries: PreparedEntry[], hidden: Set<string>): Promise<void> {
  const written = new Map<string, BoardBucket[]>();
  for (const entry of entries) if (entry.buckets.length > 0) written.set(entry.playerId, [...(written.get(entry.playerId) ?? []), ...entry.buckets]);
  if (written.size === 0) return;
  try {
    for (const playerId of await takeOutFlaggedMeanwhile(services, written)) hidden.add(playerId);
  } catch (error) {
    services.log.error({ err: error }, 'could not check for players flagged during the write; a rebuild or a new flag corrects the index');
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
  services: Services,
  shown: { entry: PreparedEntry; outcome: RecordOutcome }[],
  stored: StoredBoardScore[],
  backlogIds: number[],
): Promise<SubmissionRecorded['places'] | null> {
  const writes: BoardScoreWrite[] = [];
  const owners: { entry: PreparedEntry; bucket: number; score: StoredBoardScore }[] = [];
  const lastWrite = new Map<string, BoardScoreWrite>();
  for (const { entry, outcome } of shown) {
    outcome.after.forEach((score, b) => {
      const at = entry.buckets[b]!;
      const write = { at, score, expiresAt: at.expiresAt };
      writes.push(write);
      owners.push({ entry, bucket: b, score });
      lastWrite.set(placeId(entry.board.id, rowKey(at), entry.playerId), write);
    });
  }
  // The stored board score is the truth: should it differ from the fold's last value (the player
  // locks make that impossible, but the index must end where PostgreSQL is), it is written last.
  for (const score of stored) {
    const last = lastWrite.get(placeId(score.boardId, score, score.playerId));
    if (last && (last.score.score !== score.score || last.score.reachedAt.getTime() !== score.reachedAt.getTime())) {
      writes.push({ at: last.at, score, expiresAt: last.expiresAt });
    }
  }
  const places: SubmissionRecorded['places'] = new Map();
  try {
    const placed = await services.index.writeBoardScores(writes);
    services.backlog.confirm(backlogIds);
    owners.forEach(({ entry, bucket, score }, i) => {
      const { place, size } = placed[i]!;
      const { at } = writes[i]!;
      const own = places.get(entry) ?? [];
      // The board score written, as recorded, where it is the one the index now holds.
      own[bucket] = place ? { place, size, at, recorded: recordedOf(at, place, score) } : null;
      places.set(entry, own);
    });
    return places;
  } catch (error) {
    services.metrics.indexBehind.inc();
    services.log.error({ err: error, writes: writes.length }, 'index write failed after commit; results are recorded');
    return null;
  }
}

function standingsOf(services: Services, entry: PreparedEntry, places: SubmissionRecorded['places']): PeriodStanding[] | Promise<PeriodStanding[]> {
  const own = places.get(entry) ?? [];
  const found = entry.buckets.flatMap((at, b) => (own[b] ? [{ at, placed: own[b] }] : []));
  const answer = (at: ResultBucket, placed: PlaceWithSize, place: Place) => ({
    ...bucketOfAnswer(at),
    standing: toStanding(placed.at, place, placed.size, placed.recorded),
  });
  // An ORDINAL board's places are answered as placed, with nothing more to wait for.
  if (entry.board.rankStyle === 'ORDINAL') return found.map(({ at, placed }) => answer(at, placed, placed.place));
  return Promise.all(
    found.map(async ({ at, placed }) => {
      const place = await inBoardStyle(services, placed.at, placed.place);
      return place ? [answer(at, placed, place)] : [];
    }),
  ).then((standings) => standings.flat());
}

/**
 * A place with the rank of its board's rankStyle, as a read that does not say serves it: as
 * placed on an ORDINAL board (no index call); counted once on a COMPETITION or DENSE one (see
 * styledPlaces). Null when that count cannot be read: the result is recorded, and answered
 * without that standing, as when the index write fails.
 */
async function inBoardStyle(services: Services, at: BoardBucket, place: Place): Promise<Place | null> {
  if (at.board.rankStyle === 'ORDINAL') return place;
  try {
    const [styled] = await styledPlaces(services, at, [place], at.board.rankStyle);
    return styled ?? null;
  } catch (error) {
    services.log.error({ err: error }, 'index read failed for the rank style of a submitted result');
    return null;
  }
}

/** The current standings of a replayed result, so a retried call answers as the first one would now. */
async function readStandings(services: Services, buckets: ResultBucket[], playerId: string): Promise<PeriodStanding[]> {
  try {
    const views = await Promise.all(
      buckets.map(async (at) => {
        const view = await services.index.standings(at, [playerId]);
        const [place] = await styledPlaces(services, at, view.places, at.board.rankStyle);
        return place ? [{ ...bucketOfAnswer(at), standing: toStanding(at, place, view.size) }] : [];
      }),
    );
    return views.flat();
  } catch (error) {
    services.log.error({ err: error }, 'index read failed for a replayed result');
    return [];
  }
}
