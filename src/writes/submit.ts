import { BoardGoneError, type LeagueRound, NoAttemptsLeftError, TotalAboveMaxScoreError } from '../db/results.js';
import { bucketAt } from '../model/buckets.js';
import { shortestPeriod } from '../model/league.js';
import type { Season } from '../db/seasons.js';
import { memberId } from '../db/members.js';
import type { Storage } from '../db/storage.js';
import { type Board, type EntryMetadata, MAX_METADATA_BYTES } from '../model/board.js';
import type { Place } from '../ranking/index.js';
import { CLOCK_SKEW_MS, type ResultBucket, bucketsOfResult, liveSeasonsOf, regionProblem, requireBoard } from '../services/buckets.js';
import type { Logger } from 'pino';
import type { RankingIndex } from '../ranking/index.js';
import type { BoardDirectory } from '../services/board-directory.js';
import type { RateLimits } from '../services/rate-limits.js';
import type { SeasonDirectory } from '../services/season-directory.js';
import type { ClosedLists } from '../services/closed-lists.js';
import { GraphQLError } from 'graphql';
import { type ErrorCode, type RefusalReason, badInput, clientError, notFound, refused } from '../errors.js';
import { MAX_BATCH } from '../model/contract.js';
import { requireResultValues, resultRateRefusal } from './result-checks.js';
import { ResultRateError } from '../db/result-guards.js';
import { type BoardScope, requireInScope } from '../auth/board-scope.js';
import { type PeriodStanding, bucketOfAnswer, toStanding } from '../reads/views.js';
import { countBetter, styledPlaces } from '../reads/rank-styles.js';
import { type PlaceWithSize, type PreparedEntry, type ResultChange, type SubmissionGroups, type SubmissionRecorded, rowKey } from './submission-groups.js';
import { scoreOrder } from '../ranking/packing.js';

/**
 * The write path's own half (submission-groups.ts is the shared one): each call's inputs checked
 * against their boards before anything is written, and each result answered, as of its own moment,
 * once its group is committed and written to the index.
 */

/** How long before the request's deadline the write path gives up, leaving time to answer. */
const ANSWER_MARGIN_MS = 250;

/** What a submission takes (10 members). */
export interface SubmitDeps {
  /** The process's group commit every submission goes through. */
  submissions: SubmissionGroups;
  boards: BoardDirectory;
  seasons: SeasonDirectory;
  /**
   * The index on the masters: what a submission answers from (a replay's standings, a place's
   * rank style), which must hold its own write.
   */
  masterIndex: RankingIndex;
  limits: Pick<RateLimits, 'submissions'>;
  /** Who joined a joinRequired board (db/members.ts): asked once a call, only for such boards' inputs. */
  members: Pick<Storage['members'], 'notJoined'>;
  /** The lists frozen already, left out of a result's buckets even when a raised grace would take it (see closed-lists.ts). Default: none known. */
  closedLists?: Pick<ClosedLists, 'has'> | undefined;
  /** Every request is answered within this many milliseconds (REQUEST_TIMEOUT_MS). */
  requestTimeoutMs: number;
  now(): Date;
  log: Logger;
}

export interface SubmitScoreInput {
  board: string;
  playerId: string;
  score: number;
  matchId: string;
  region?: string | null | undefined;
  achievedAt?: Date | null | undefined;
  /** Any JSON value as parsed; only an object of at most MAX_METADATA_BYTES is taken (see metadataText). */
  metadata?: unknown;
  /** One value per tie-break column of the board, in order (checked in prepare); left out on a board without columns. */
  tieBreakValues?: readonly number[] | null | undefined;
}

/** Who submits, and when the request came in. */
export interface SubmitOptions {
  /** Whether the call is a submitScores (its errors name each input in error: `inputs.2.score: ...`). Default true. */
  batch?: boolean;
  /** The API key whose submission budget the call spends; null spends none (a caller of the service's own). */
  keyId: string | null;
  /** performance.now() when the request came in: the call answers before startedAt + requestTimeoutMs. */
  startedAt: number;
  /** The caller's key's boards (auth/board-scope.ts): an input naming any other refuses the whole call. Default: every board. */
  boards?: BoardScope;
}

export interface SubmitScorePayload {
  duplicate: boolean;
  improved: boolean;
  standings: PeriodStanding[];
}

/**
 * The JSON text an entry's metadata is kept as, or null when none was sent; refused unless it is an
 * object of at most MAX_METADATA_BYTES as UTF-8 (JSON.stringify's compact form is what is measured and kept).
 */
function metadataText(metadata: unknown, where: (field: string) => string): EntryMetadata | null {
  if (metadata === null || metadata === undefined) return null;
  if (typeof metadata !== 'object' || Array.isArray(metadata)) {
    throw badInput(
      `${where('metadata')}metadata must be a JSON object, such as {"car": "R8"}; this is ${Array.isArray(metadata) ? 'an array' : `a ${typeof metadata}`}.`,
    );
  }
  const text = JSON.stringify(metadata);
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > MAX_METADATA_BYTES) {
    throw badInput(
      `${where('metadata')}metadata is ${bytes.toLocaleString('en-US')} bytes as JSON (UTF-8); at most ${MAX_METADATA_BYTES.toLocaleString('en-US')} are kept.`,
    );
  }
  return text;
}

/** The buckets of a result and their board-score rows, its league round and attempts span, as one call's results share them. */
type BucketsOf = (
  board: Board,
  achievedAt: Date,
  region: string | null,
  seasons: readonly Season[],
) => Pick<PreparedEntry, 'buckets' | 'rows' | 'round' | 'attempts'>;

/** The league round of a result: its bucket of the league's period on the global list, when it takes results. */
function roundOf(board: Board, buckets: readonly ResultBucket[]): LeagueRound | undefined {
  const period = board.league?.period;
  if (!period) return undefined;
  const at = buckets.find((b) => b.region === null && b.bucket.period === period);
  return at && { label: at.bucket.label, startsAt: at.bucket.start, endsAt: at.bucket.end };
}

/**
 * The span whose results count against a board's maxAttempts: the result's bucket of the board's
 * shortest period on the global calendar, even when that bucket has closed (a late result counts
 * where it was achieved). A SEASON result outside every live season counts nowhere.
 */
function attemptsSpanOf(board: Board, achievedAt: Date, seasons: readonly Season[]): PreparedEntry['attempts'] {
  if ((board.maxAttempts ?? null) === null) return undefined;
  const period = shortestPeriod(board);
  if (period === 'SEASON') {
    const season = seasons.find((s) => s.startsAt <= achievedAt && (s.endsAt === null || achievedAt < s.endsAt));
    return season && { startsAt: season.startsAt, endsAt: season.endsAt };
  }
  const bucket = bucketAt(board, period, achievedAt);
  return { startsAt: bucket.start, endsAt: bucket.end };
}

/**
 * bucketsOfResult for one call, each distinct (board, achievedAt, region) worked out once: a batch's
 * results are mostly one board's, achieved now, so they share one list of buckets (read only from
 * then on). Why: a list a result was a twentieth of what a batch allocated (bench/RESULTS.md).
 * `seasons` must be the board's for the whole call (submitScores reads them once a board).
 */
function bucketsOnce(now: Date, closed?: Pick<ClosedLists, 'has'>): BucketsOf {
  const known = new Map<string, ReturnType<BucketsOf>>();
  return (board, achievedAt, region, seasons) => {
    const key = `${board.id}\u0000${achievedAt.getTime()}\u0000${region ?? ''}`;
    let found = known.get(key);
    if (!found) {
      const open = bucketsOfResult(board, achievedAt, region, now, seasons);
      // Only a bucket that has ended can be frozen: the current ones (nearly every result's) are not looked up.
      const buckets = closed ? open.filter((at) => !(at.bucket.end && at.bucket.end <= now && closed.has(at))) : open;
      known.set(key, (found = { buckets, rows: buckets.map(rowKey), round: roundOf(board, buckets), attempts: attemptsSpanOf(board, achievedAt, seasons) }));
    }
    return found;
  };
}

/**
 * Checks one input against its board; everything the input type cannot check alone. `where` names
 * the field in error, as the message begins: `inputs.2.score: ` in a batch, nothing for submitScore.
 */
function prepare(
  input: SubmitScoreInput,
  board: Board,
  seasons: readonly Season[],
  now: Date,
  where: (field: string) => string,
  bucketsOf: BucketsOf,
): PreparedEntry {
  if (input.score > board.maxScore) {
    throw badInput(`${where('score')}score ${input.score} is above board "${board.id}"'s maxScore of ${board.maxScore}.`);
  }
  requireResultValues(input, board, where);
  const problem = regionProblem(board, input.region);
  if (problem) throw badInput(`${where('region')}${problem}`);
  const region = input.region ?? null;
  const achievedAt = input.achievedAt ?? now;
  if (achievedAt.getTime() > now.getTime() + CLOCK_SKEW_MS) {
    throw badInput(`${where('achievedAt')}achievedAt ${achievedAt.toISOString()} is more than 5 minutes ahead of the server's clock.`);
  }
  const metadata = metadataText(input.metadata, where);
  const { buckets, rows, round, attempts } = bucketsOf(board, achievedAt, region, seasons);
  // recordedAt: the instant the buckets were chosen at, so PostgreSQL's cut of a closing bucket agrees (see ResultEntry).
  return {
    board,
    seasons,
    matchId: input.matchId,
    playerId: input.playerId,
    score: input.score,
    region,
    achievedAt,
    metadata,
    // Kept only where the board has columns: a plain board's rows carry none (null in the log).
    ...((board.tieBreaks?.length ?? 0) > 0 && input.tieBreakValues && { tieBreakValues: input.tieBreakValues }),
    buckets,
    rows,
    recordedAt: now,
    ...(round && { round }),
    ...(attempts && { attempts }),
  };
}

/** The contract code of an input's refusal (a bad value, an unknown board), or undefined for any other error. */
function inputRefusal(error: unknown): ErrorCode | undefined {
  const code = error instanceof GraphQLError ? error.extensions['code'] : undefined;
  return code === 'BAD_USER_INPUT' || code === 'NOT_FOUND' ? code : undefined;
}

/**
 * The write path. Every input is checked before anything is written; then the call joins a group
 * (see createSubmissionGroups): one PostgreSQL transaction records the group and commits before any
 * of its calls is answered, then the index is written (one script call per sorted set the group
 * touches, sent at once) and each place read back. If the index cannot be written the results are still recorded and
 * answered, with no standings. A call is all or nothing, whatever the others of its group do.
 */
export async function submitScores(
  deps: SubmitDeps,
  inputs: SubmitScoreInput[],
  { batch = true, keyId, startedAt, boards: scope }: SubmitOptions,
): Promise<SubmitScorePayload[]> {
  if (inputs.length > MAX_BATCH) throw badInput(`submitScores takes at most ${MAX_BATCH} inputs; this call has ${inputs.length}.`);
  // Before the key's budget is spent or any board looked up: a foreign board refuses the whole call.
  requireInScope(
    scope,
    inputs.map((input, i) => ({ board: input.board, field: batch ? `inputs.${i}.board` : '' })),
  );
  if (keyId !== null) await deps.limits.submissions(keyId, inputs.length);
  const now = deps.now();
  const entries: PreparedEntry[] = [];
  /** Which input each entry is. */
  const inputOf: number[] = [];
  // Each board a call names, and its live seasons, looked up once, however many of its results the
  // call carries.
  const boards = new Map<string, Promise<{ board: Board; seasons: Season[] }>>();
  const boardOf = (id: string) => {
    let found = boards.get(id);
    if (!found) boards.set(id, (found = requireBoard(deps, id).then(async (board) => ({ board, seasons: await liveSeasonsOf(deps, board) }))));
    return found;
  };
  const bucketsOf = bucketsOnce(now, deps.closedLists);
  // Every input in error is named in one answer, by its path as the argument's own checks name it
  // (`inputs.2.score: ...`), so a game server fixes a batch in one go; the code is the first one's.
  const problems: { at: number; code: ErrorCode; message: string; reason?: RefusalReason }[] = [];
  for (const [i, input] of inputs.entries()) {
    const where = (field: string) => (batch ? `inputs.${i}.${field}: ` : '');
    try {
      const { board, seasons } = await boardOf(input.board).catch((error: unknown) => {
        throw inputRefusal(error) === 'NOT_FOUND' ? notFound(`${where('board')}${(error as GraphQLError).message}`) : error;
      });
      entries.push(prepare(input, board, seasons, now, where, bucketsOf));
      inputOf.push(i);
    } catch (error) {
      const code = inputRefusal(error);
      if (!batch || code === undefined) throw error;
      problems.push({ at: i, code, message: (error as GraphQLError).message });
    }
  }
  problems.push(...(await notJoinedProblems(deps, entries, inputOf, batch)));
  if (problems.length > 0) {
    problems.sort((a, b) => a.at - b.at);
    throw clientError(problems[0]!.code, problems.map((problem) => problem.message).join('; '), problems.find((problem) => problem.reason)?.reason);
  }
  if (entries.length === 0) return [];

  let recorded: SubmissionRecorded;
  try {
    // Answered within the request's bound, a little ahead of the request's own deadline so that
    // this answer (nothing recorded, or in doubt) is the one the client gets.
    recorded = await deps.submissions.submit(entries, entries.length, startedAt + deps.requestTimeoutMs - ANSWER_MARGIN_MS);
  } catch (error) {
    if (error instanceof TotalAboveMaxScoreError) {
      throw badInput(`A SUM total would pass the board's maxScore: ${error.message}. Nothing was recorded.`);
    }
    if (error instanceof ResultRateError) throw resultRateRefusal(error, batch);
    // deleteBoard committed between the request's lookup of the board and its group's transaction.
    if (error instanceof BoardGoneError) throw notFound(`No board "${error.boardId}". Nothing was recorded.`);
    if (error instanceof NoAttemptsLeftError) {
      const where = (index: number) => (batch ? `inputs.${index}.playerId: ` : '');
      throw refused(
        'NO_ATTEMPTS_LEFT',
        error.inputs
          .map(
            ({ index, playerId, boardId, maxAttempts }) =>
              `${where(index)}player "${playerId}" has used all ${maxAttempts} attempts of board "${boardId}" in this bucket of its shortest period. Nothing was recorded.`,
          )
          .join('; '),
      );
    }
    throw error;
  }

  const { outcomes, hidden, places } = recorded;
  const payloads = entries.map((entry, i): SubmitScorePayload | Promise<SubmitScorePayload> => {
    const { duplicate, improved, recorded: original } = outcomes[i]!;
    if (hidden.has(entry.playerId)) return { duplicate, improved, standings: [] };
    const standings = duplicate
      ? readStandings(deps, bucketsOf(entry.board, original.achievedAt, original.region, entry.seasons).buckets, entry.playerId)
      : standingsOf(deps, entry, places);
    return standings instanceof Promise ? standings.then((held) => ({ duplicate, improved, standings: held })) : { duplicate, improved, standings };
  });
  // Why not Promise.all alone: it takes a promise for every payload, and a batch's new results on an
  // ORDINAL board (the common case) are all answered already.
  return payloads.some((payload) => payload instanceof Promise) ? Promise.all(payloads.map(async (payload) => payload)) : (payloads as SubmitScorePayload[]);
}

/**
 * The inputs for a joinRequired board whose player has not joined it, each named (NOT_JOINED),
 * checked before the call joins a group: one query for the call, none without such a board.
 */
async function notJoinedProblems(
  deps: Pick<SubmitDeps, 'members'>,
  entries: readonly PreparedEntry[],
  inputOf: readonly number[],
  batch: boolean,
): Promise<{ at: number; code: ErrorCode; message: string; reason: RefusalReason }[]> {
  const asked = entries.filter((entry) => entry.board.joinRequired === true);
  if (asked.length === 0) return [];
  const missing = await deps.members.notJoined(asked.map((entry) => ({ boardId: entry.board.id, playerId: entry.playerId })));
  if (missing.size === 0) return [];
  const problems: { at: number; code: ErrorCode; message: string; reason: RefusalReason }[] = [];
  entries.forEach((entry, k) => {
    if (entry.board.joinRequired !== true || !missing.has(memberId(entry.board.id, entry.playerId))) return;
    const at = inputOf[k]!;
    const where = batch ? `inputs.${at}.playerId: ` : '';
    problems.push({
      at,
      code: 'BAD_USER_INPUT',
      reason: 'NOT_JOINED',
      message: `${where}player "${entry.playerId}" has not joined board "${entry.board.id}", which takes results only from players who joined it (joinBoard). Nothing was recorded.`,
    });
  });
  return problems;
}

function standingsOf(deps: SubmitDeps, entry: PreparedEntry, places: SubmissionRecorded['places']): PeriodStanding[] | Promise<PeriodStanding[]> {
  const own = places.get(entry) ?? [];
  const found: { at: ResultBucket; placed: PlaceWithSize }[] = [];
  entry.buckets.forEach((at, b) => {
    if (own[b]) found.push({ at, placed: own[b] });
  });
  const answer = (at: ResultBucket, placed: PlaceWithSize, { place, previousRank }: StyledPlace) => ({
    ...bucketOfAnswer(at),
    standing: toStanding(placed.at, place, placed.size, placed.recorded),
    previousRank,
  });
  // An ORDINAL board's places, and the ranks held before them, are answered as placed, with nothing more to wait for.
  if (entry.board.rankStyle === 'ORDINAL')
    return found.map(({ at, placed }) => answer(at, placed, { place: placed.place, previousRank: placed.before?.rank ?? null }));
  return Promise.all(
    found.map(async ({ at, placed }) => {
      const styled = await inBoardStyle(deps, placed);
      return styled ? [answer(at, placed, styled)] : [];
    }),
  ).then((standings) => standings.flat());
}

/** A place with the rank of its board's rankStyle, and the rank (in that style) the player held just before it. */
interface StyledPlace {
  place: Place;
  previousRank: number | null;
}

/**
 * A place, and the place held just before it, with the ranks of its COMPETITION or DENSE board, as
 * a read that does not say serves it: 1 + how many players (COMPETITION) or distinct results
 * (DENSE) are strictly better, counted once the group is written, in one step for both results
 * (the same one when a BEST score did not improve). Whatever the group's writes did from this
 * result on is taken back out of the counts (see GroupMoves), so each is ranked as of its own
 * moment: a batch's second result of a player sees the first applied, not the ones after it. A
 * DENSE count also reads how many hold the results those writes left or took (distinctHolders),
 * only when some did. Null when the counts cannot be read: the result is recorded, and answered
 * without that standing, as when the index write fails.
 */
async function inBoardStyle(deps: SubmitDeps, placed: PlaceWithSize): Promise<StyledPlace | null> {
  const { at, place, before, moves } = placed;
  const style = at.board.rankStyle === 'DENSE' ? 'DENSE' : 'COMPETITION';
  const orderOf = (result: Pick<Place, 'score' | 'tieBreakValues'>) => scoreOrder(at.board, result.score, result.tieBreakValues);
  // What to count: the result now held from the write answered on, and the one held before from this write on.
  const asks: { result: Pick<Place, 'score' | 'tieBreakValues'>; order: number; from: number }[] = [
    { result: place, order: orderOf(place), from: moves ? moves.answered + 1 : Infinity },
  ];
  if (before) asks.push({ result: before.result, order: orderOf(before.result), from: moves ? moves.written : Infinity });
  const distinct = [...new Map(asks.map((ask) => [ask.order, ask.result])).values()];
  const deltas = asks.map(({ order, from }) => betterDeltas(moves?.changes ?? [], from, order));
  const touched = style === 'DENSE' ? [...new Set(deltas.flatMap((delta) => [...delta.keys()]))] : [];
  try {
    // On the masters, as the place itself was read (read-your-writes; SubmitDeps.masterIndex).
    const [counts, holders] = await Promise.all([
      countBetter({ index: deps.masterIndex }, at, distinct, style),
      touched.length > 0 ? deps.masterIndex.distinctHolders(at, touched) : Promise.resolve([]),
    ]);
    const held = new Map(touched.map((order, i) => [order, holders[i]!]));
    const countOf = new Map(distinct.map((result, i) => [orderOf(result), counts[i]!]));
    const ranks = asks.map(({ order }, k) => {
      let better = countOf.get(order)!;
      for (const [value, delta] of deltas[k]!) {
        if (style === 'COMPETITION') better -= delta;
        // DENSE: a better result counts once while anyone holds it; the writes from then on took it (or left it) only if they made it held (or not).
        else better -= Number(held.get(value)! > 0) - Number(held.get(value)! - delta > 0);
      }
      return better + 1;
    });
    return { place: { ...place, rank: ranks[0]! }, previousRank: before ? ranks[1]! : null };
  } catch (error) {
    deps.log.error({ err: error }, 'index read failed for the rank style of a submitted result');
    return null;
  }
}

/**
 * How many members the changes from index `from` on brought to each result strictly better than
 * `order` (minus those they took from it), the results they left as they were left out. O(changes).
 */
function betterDeltas(changes: readonly ResultChange[], from: number, order: number): Map<number, number> {
  const deltas = new Map<number, number>();
  const move = (value: number | null, by: number) => {
    if (value === null || value <= order) return;
    const delta = (deltas.get(value) ?? 0) + by;
    if (delta === 0) deltas.delete(value);
    else deltas.set(value, delta);
  };
  for (let i = from; i < changes.length; i++) {
    move(changes[i]!.before, -1);
    move(changes[i]!.after, 1);
  }
  return deltas;
}

/** The current standings of a replayed result, so a retried call answers as the first one would now. */
async function readStandings(deps: SubmitDeps, buckets: ResultBucket[], playerId: string): Promise<PeriodStanding[]> {
  try {
    const views = await Promise.all(
      buckets.map(async (at) => {
        // On the masters: the replayed result's own write is there (SubmitDeps.masterIndex), maybe not yet on a replica.
        const view = await deps.masterIndex.standings(at, [playerId]);
        const [place] = await styledPlaces({ index: deps.masterIndex }, at, view.places, at.board.rankStyle);
        // A replay applied nothing: there is no rank before it to tell (previousRank null).
        return place ? [{ ...bucketOfAnswer(at), standing: toStanding(at, place, view.size), previousRank: null }] : [];
      }),
    );
    return views.flat();
  } catch (error) {
    deps.log.error({ err: error }, 'index read failed for a replayed result');
    return [];
  }
}
