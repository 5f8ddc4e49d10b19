import type { Logger } from 'pino';
import type { Storage } from '../db/storage.js';
import type { EntryMetadata, RecordedBoardScore } from '../model/board.js';
import type { BoardBucket, Place } from '../ranking/index.js';
import { bucketKey } from '../ranking/keys.js';
import { pack, packingFor } from '../ranking/packing.js';
import { isStoreUnavailable } from '../store-errors.js';
import { boardScoreList } from '../services/buckets.js';
import { type BatchLoader, createBatchLoader } from '../services/batch-loader.js';

/**
 * What a Standing serves of the board score as PostgreSQL recorded it: Standing.achievedAt, the
 * time the player reached the score, to the millisecond, and Standing.metadata, the entry metadata
 * of the result that set it.
 *
 * The index holds only the packed score, whose time is the start of the packing's tie-break unit
 * (ranking/packing.ts): up to about two minutes early on a board with large scores, and no
 * metadata at all. Both are the board score's in PostgreSQL (board_scores.reached_at and
 * .metadata). Reads that already hold it (submit payloads, frozen season results) serve it as is.
 * Index reads look it up only when a selection asks for metadata, or for achievedAt where the
 * packing's unit is coarser than a millisecond (exactReachedAt), in one query per list for every
 * standing the requests of one pass of the event loop serve (createRecordedLoader; the metadata
 * column is read only when some standing of the batch asks for it), and remember it per place
 * read, so that the views the top cache and topChanged share among their readers are looked up
 * once per view, not once per reader.
 *
 * The recorded part is served only when it is the board score the index ranks (the same packed
 * value): the index is written after the commit, so for a moment PostgreSQL may hold a newer board
 * score than the one read from the index; the unit's start and no metadata are served then, which
 * never contradicts the served rank. When PostgreSQL does not answer, the same is served, as names
 * are left out: a ranking read from Redis is still worth serving.
 */

/** What PostgreSQL recorded of the board score a standing shows. */
export interface RecordedScore {
  reachedAt: Date;
  /** The metadata's JSON text; null when the result that set the score sent none. */
  metadata: EntryMetadata | null;
}

/** What is served for a place whose recorded board score is not known: the start of its time unit, and no metadata. */
const unrecorded = (place: Place): RecordedScore => ({ reachedAt: place.reachedAt, metadata: null });

/** Whether `score` is the board score the index holds as `place` (the same packed value, tie-break values and all). O(columns). */
function isHeldAs(at: BoardBucket, place: Place, score: RecordedBoardScore | null | undefined): score is RecordedBoardScore {
  if (!score || score.score !== place.score) return false;
  const packing = packingFor(at.board, at.bucket.period);
  return (
    pack(at.board, packing, score.score, score.reachedAt, at.bucket.start, score.tieBreakValues) ===
    pack(at.board, packing, place.score, place.reachedAt, at.bucket.start, place.tieBreakValues)
  );
}

/**
 * The recorded time of `place` when the index holds it to the millisecond, so that no look-up can
 * tell more: on a packing whose unit is 1 ms (a DAILY, WEEKLY or MONTHLY bucket of a board with
 * scores up to about 2 million, see ranking/packing.ts) the board score the index ranks was reached
 * at exactly the place's time, and one PostgreSQL holds newer is not served anyway (see above).
 * Undefined when the unit is coarser, or when the time sits at either end of the bucket's span,
 * where the packing clamps. O(1).
 */
export function exactReachedAt(at: BoardBucket, place: Place): Date | undefined {
  const packing = packingFor(at.board, at.bucket.period);
  if (packing.unitMs !== 1) return undefined;
  const t = place.reachedAt.getTime() - at.bucket.start.getTime();
  return t > 0 && t < 2 ** packing.timeBits - 1 ? place.reachedAt : undefined;
}

/** The recorded part of `score` when it is the board score the index holds as `place`; else undefined. O(1). */
export function heldRecorded(at: BoardBucket, place: Place, score: RecordedBoardScore | null | undefined): RecordedScore | undefined {
  return isHeldAs(at, place, score) ? { reachedAt: score.reachedAt, metadata: score.metadata } : undefined;
}

/** The recorded part of `score` when it is the board score the index holds as `place`; else the place's own (see above). */
export function recordedOf(at: BoardBucket, place: Place, score: RecordedBoardScore | null | undefined): RecordedScore {
  return heldRecorded(at, place, score) ?? unrecorded(place);
}

/**
 * Where a standing's achievedAt and metadata come from: the recorded board score, when the read
 * holds it (submit payloads, frozen season results); otherwise the place it was read as, whose
 * recorded board score is looked up only when a selection asks for either.
 */
export type StandingSource = { recorded: RecordedScore } | { at: BoardBucket; place: Place };

/** One look-up of the recorded loader: a place read from the index, and whether its metadata is asked for. */
export interface RecordedRead {
  at: BoardBucket;
  place: Place;
  metadata: boolean;
}

/**
 * The recorded board scores of places read from the index, in their order: one PostgreSQL query per
 * list they come from (a request usually reads one or two); the metadata column only when `metadata`.
 * When PostgreSQL does not answer, each place's own (see above).
 */
/** What looking up recorded board scores takes. */
export interface RecordedDeps {
  storage: Pick<Storage, 'boardScores'>;
  log: Logger;
}

export async function lookUpRecorded(services: RecordedDeps, reads: readonly Omit<RecordedRead, 'metadata'>[], metadata: boolean): Promise<RecordedScore[]> {
  try {
    const lists = new Map<string, { at: BoardBucket; playerIds: string[] }>();
    for (const { at, place } of reads) {
      const key = bucketKey(at);
      let list = lists.get(key);
      if (!list) lists.set(key, (list = { at, playerIds: [] }));
      list.playerIds.push(place.playerId);
    }
    const found = new Map(
      await Promise.all(
        [...lists].map(async ([key, { at, playerIds }]) => {
          return [key, await services.storage.boardScores.find(boardScoreList(at), playerIds, { metadata })] as const;
        }),
      ),
    );
    return reads.map(({ at, place }) => recordedOf(at, place, found.get(bucketKey(at))!.get(place.playerId)));
  } catch (error) {
    if (!isStoreUnavailable(error)) throw error;
    services.log.warn({ err: error }, 'recorded board scores unavailable; answering the tie-break unit and no metadata');
    return reads.map(({ place }) => unrecorded(place));
  }
}

/** The process's look-ups of recorded board scores. */
export type RecordedLoader = BatchLoader<RecordedRead, RecordedScore>;

/**
 * The process's loader of recorded board scores, shared by every request (createBatchLoader): the
 * look-ups of one pass of the event loop are one PostgreSQL query per list. Results are remembered
 * per place object instead (achievedAtOf, metadataOf), which lives as long as its view.
 * O(k log N) for k standings.
 */
export function createRecordedLoader(services: RecordedDeps): RecordedLoader {
  return createBatchLoader<RecordedRead, RecordedScore>((reads) =>
    lookUpRecorded(
      services,
      reads,
      reads.some((read) => read.metadata),
    ),
  );
}

/** The recorded times and (parsed) metadata of places read from the index, remembered per place object (see above). */
const rememberedTimes = new WeakMap<Place, Promise<Date>>();
const rememberedMetadata = new WeakMap<Place, Promise<unknown>>();

/** Looks `place` up once for all of its readers: the first reader's request loads it, and a failure is forgotten. */
function remembered<T>(memory: WeakMap<Place, Promise<T>>, place: Place, load: () => Promise<T>): Promise<T> {
  let value = memory.get(place);
  if (!value) {
    value = load();
    memory.set(place, value);
    value.catch(() => memory.delete(place));
  }
  return value;
}

/** A standing's achievedAt: as held, as the index holds it when to the millisecond, remembered, or looked up through `loader`. */
export function achievedAtOf(loader: RecordedLoader, source: StandingSource): Date | Promise<Date> {
  if ('recorded' in source) return source.recorded.reachedAt;
  const exact = exactReachedAt(source.at, source.place);
  if (exact) return exact;
  return remembered(rememberedTimes, source.place, async () => (await loader.load({ ...source, metadata: false })).reachedAt);
}

/** A standing's metadata, parsed: as held, remembered, or looked up through `loader`; null when none was sent. */
export function metadataOf(loader: RecordedLoader, source: StandingSource): unknown {
  if ('recorded' in source) return parseMetadata(source.recorded.metadata);
  return remembered(rememberedMetadata, source.place, async () => parseMetadata((await loader.load({ ...source, metadata: true })).metadata));
}

const parseMetadata = (text: EntryMetadata | null): unknown => (text === null ? null : JSON.parse(text));
