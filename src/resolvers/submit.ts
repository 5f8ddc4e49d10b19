import { type ResultEntry, type ScoreRowKey, TotalAboveMaxScoreError, recordResults } from '../db/results.js';
import type { Board } from '../model/board.js';
import type { BoardScoreWrite, Place } from '../ranking/index.js';
import { CLOCK_SKEW_MS, type ResultBucket, bucketsOfResult, regionProblem, requireBoard } from './buckets.js';
import type { Context } from './context.js';
import { badInput } from './errors.js';
import { type PeriodStanding, toStanding } from './standings.js';

/** The most results one submitScores call may carry. */
export const MAX_BATCH = 1_000;

export interface SubmitScoreInput {
  board: string;
  playerId: string;
  score: number;
  matchId: string;
  region?: string | null | undefined;
  achievedAt?: Date | null | undefined;
}

export interface SubmitScorePayload {
  duplicate: boolean;
  improved: boolean;
  standings: PeriodStanding[];
}

interface PreparedEntry extends ResultEntry {
  buckets: ResultBucket[];
}

const rowKey = (at: ResultBucket): ScoreRowKey => ({ period: at.bucket.period, bucket: at.bucket.label, region: at.region ?? '' });
const placeId = (boardId: string, row: ScoreRowKey, playerId: string) =>
  [boardId, row.period, row.bucket, row.region, playerId].join('\u0000');

/** Checks one input against its board; everything the input type cannot check alone. */
function prepare(input: SubmitScoreInput, board: Board, now: Date, where: string): PreparedEntry {
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
  const buckets = bucketsOfResult(board, achievedAt, region, now);
  return {
    board,
    matchId: input.matchId,
    playerId: input.playerId,
    score: input.score,
    region,
    achievedAt,
    buckets,
    rows: buckets.map(rowKey),
  };
}

/**
 * The write path. Every input is checked before anything is written; then one PostgreSQL
 * transaction records the whole batch and commits before the answer; then one Redis pipeline writes
 * every touched board score into the index and reads each place back. If the index cannot be
 * written the results are still recorded and answered, with no standings.
 */
export async function submitScores(ctx: Context, inputs: SubmitScoreInput[], { batch = true } = {}): Promise<SubmitScorePayload[]> {
  if (inputs.length > MAX_BATCH) throw badInput(`submitScores takes at most ${MAX_BATCH} inputs; this call has ${inputs.length}.`);
  const { services } = ctx;
  const now = services.now();
  const entries: PreparedEntry[] = [];
  for (const [i, input] of inputs.entries()) {
    const where = batch ? `inputs[${i}]: ` : '';
    const board = await requireBoard(ctx, input.board);
    entries.push(prepare(input, board, now, where));
  }

  let recorded;
  try {
    recorded = await recordResults(services.database.sql, entries);
  } catch (error) {
    if (error instanceof TotalAboveMaxScoreError) {
      throw badInput(`A SUM total would pass the board's maxScore: ${error.message}. Nothing was recorded.`);
    }
    throw error;
  }

  const places = await writeIndex(ctx, entries, recorded.boardScores);
  return Promise.all(
    entries.map(async (entry, i) => {
      const outcome = recorded.outcomes[i]!;
      const standings = outcome.duplicate
        ? await readStandings(ctx, bucketsOfResult(entry.board, outcome.recorded.achievedAt, outcome.recorded.region, now), entry.playerId)
        : standingsOf(entry, places);
      return { duplicate: outcome.duplicate, improved: outcome.improved, standings };
    }),
  );
}

type PlaceWithSize = { place: Place; size: number };

/** Writes the committed board scores into the index; an empty map when Redis does not answer. */
async function writeIndex(
  ctx: Context,
  entries: PreparedEntry[],
  boardScores: Awaited<ReturnType<typeof recordResults>>['boardScores'],
): Promise<Map<string, PlaceWithSize>> {
  const bucketByRow = new Map<string, ResultBucket>();
  for (const entry of entries) {
    for (const at of entry.buckets) bucketByRow.set(placeId(entry.board.id, rowKey(at), entry.playerId), at);
  }
  const writes: (BoardScoreWrite & { id: string })[] = [];
  for (const stored of boardScores) {
    const id = placeId(stored.boardId, stored, stored.playerId);
    const at = bucketByRow.get(id);
    if (at) writes.push({ id, at, score: stored, expiresAt: at.expiresAt });
  }
  const places = new Map<string, PlaceWithSize>();
  try {
    const written = await ctx.services.index.writeBoardScores(writes);
    written.forEach(({ place, size }, i) => {
      if (place) places.set(writes[i]!.id, { place, size });
    });
  } catch (error) {
    ctx.services.log.error({ err: error, writes: writes.length }, 'index write failed after commit; results are recorded');
  }
  return places;
}

function standingsOf(entry: PreparedEntry, places: Map<string, PlaceWithSize>): PeriodStanding[] {
  const out: PeriodStanding[] = [];
  for (const at of entry.buckets) {
    const found = places.get(placeId(entry.board.id, rowKey(at), entry.playerId));
    if (found) out.push({ period: at.bucket.period, bucket: at.bucket.label, region: at.region, standing: toStanding(found.place, found.size) });
  }
  return out;
}

/** The current standings of a replayed result, so a retried call answers as the first one would now. */
async function readStandings(ctx: Context, buckets: ResultBucket[], playerId: string): Promise<PeriodStanding[]> {
  try {
    const views = await Promise.all(buckets.map((at) => ctx.services.index.standings(at, [playerId])));
    return buckets.flatMap((at, i) => {
      const view = views[i]!;
      const place = view.places[0];
      return place ? [{ period: at.bucket.period, bucket: at.bucket.label, region: at.region, standing: toStanding(place, view.size) }] : [];
    });
  } catch (error) {
    ctx.services.log.error({ err: error }, 'index read failed for a replayed result');
    return [];
  }
}
