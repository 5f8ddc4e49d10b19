import type { TransactionSql } from 'postgres';
import type { Board, RecordedBoardScore } from '../model/board.js';
import type { ResultEntry } from './result-entries.js';

/**
 * The board guards judged inside a group's transaction (issue 59), under the players' locks
 * (result-statements.ts lockPlayers), so that they hold across every API process:
 * - resultRate: how many results a player had recorded on a board in the window, read from the
 *   score log's recorded_at (no counter to keep: a replay adds no log row, so it counts nothing,
 *   and a refused submission rolls back with its rows);
 * - suspectAbove / suspectJump: a new result that trips one flags its player in the same
 *   transaction, so a result is never committed without the flag it earned.
 * Both cost nothing to a group whose boards set neither.
 */

/** An entry of a group with the submission it came in and its index there (as group-transaction.ts keeps them). */
interface GroupEntry {
  entry: ResultEntry;
  submission: number;
  index: number;
}

/**
 * Results past their board's resultRate; nothing of the submission was recorded. `inputs` names
 * each refused entry of the submission and how long until its player may have one more recorded.
 */
export class ResultRateError extends Error {
  constructor(
    readonly inputs: { index: number; playerId: string; boardId: string; results: number; perSeconds: number; retryAfterMs: number }[],
    /** Which submission of the group it belongs to. */
    readonly submission = 0,
  ) {
    super(inputs.map(({ playerId, boardId, retryAfterMs }) => `player ${playerId} is past board ${boardId}'s resultRate for ${retryAfterMs} ms`).join('; '));
    this.name = 'ResultRateError';
  }
}

/** A (board, player) as a map key. */
const pairId = (entry: ResultEntry) => `${entry.board.id}\u0000${entry.playerId}`;
/** When the entry is recorded, by the write path's clock (what recorded_at will hold). */
const recordedMs = (entry: ResultEntry) => (entry.recordedAt ?? new Date()).getTime();

/**
 * For every (board, player) of the entries whose board has a resultRate: the recorded_at (epoch
 * ms, latest first) of the player's results on the board within the window before the pair's
 * earliest entry, at most `results` of them (the older ones cannot decide). Run after the players'
 * locks and before the log statement, so that it sees every result committed before the group
 * and none of its own. No statement (and an empty map) when no board of the group has a rate.
 * O(pairs × results log N): one probe of the log's key per partition and pair.
 */
export async function recentResults(tx: TransactionSql, entries: readonly ResultEntry[]): Promise<Map<string, number[]>> {
  const earliest = new Map<string, ResultEntry>();
  for (const entry of entries) {
    if (!entry.board.resultRate) continue;
    const seen = earliest.get(pairId(entry));
    if (!seen || recordedMs(entry) < recordedMs(seen)) earliest.set(pairId(entry), entry);
  }
  if (earliest.size === 0) return new Map();
  const asked = [...earliest.values()];
  const rows = await tx<{ board_id: string; player_id: string; times: number[] }[]>`
    select q.board_id, q.player_id,
      array(select round(extract(epoch from r.recorded_at) * 1000)::float8 from results r
            where r.board_id = q.board_id and r.player_id = q.player_id and r.recorded_at > q.since
            order by r.recorded_at desc limit q.keep) as times
    from unnest(
      ${tx.array(asked.map((e) => e.board.id))}::text[],
      ${tx.array(asked.map((e) => e.playerId))}::text[],
      ${tx.array(asked.map((e) => new Date(recordedMs(e) - e.board.resultRate!.perSeconds * 1000).toISOString()))}::text[]::timestamptz[],
      ${tx.array(asked.map((e) => String(e.board.resultRate!.results)))}::text[]::int[])
      as q(board_id, player_id, since, keep)`;
  const recent = new Map<string, number[]>(asked.map((e) => [pairId(e), []]));
  for (const row of rows) recent.set(`${row.board_id}\u0000${row.player_id}`, row.times.map(Number));
  return recent;
}

/**
 * Throws a {@link ResultRateError} for the first submission with a new result past its board's
 * resultRate, naming each of its refused entries. Each new result is judged on its own, in the
 * group's order, against the results recorded before it (`recent`) and the group's new ones
 * accepted before it: it passes when fewer than `results` were recorded in the `perSeconds` before
 * its own recording. A refused one then waits until the `results`-th latest of those leaves the
 * window: retryAfterMs, exact to the millisecond. A replay is never refused and counts nothing.
 * O(entries × results).
 */
export function refusePastResultRate(entries: readonly GroupEntry[], isNew: (i: number) => boolean, recent: Map<string, number[]>): void {
  if (recent.size === 0) return;
  const held = new Map([...recent].map(([id, times]) => [id, [...times]]));
  let refused: { submission: number; inputs: ResultRateError['inputs'] } | null = null;
  for (const [i, { entry, submission, index }] of entries.entries()) {
    const rate = entry.board.resultRate;
    if (!rate || !isNew(i)) continue;
    if (refused && refused.submission !== submission) break;
    const at = recordedMs(entry);
    const windowMs = rate.perSeconds * 1000;
    const times = held.get(pairId(entry)) ?? [];
    const inWindow = times.filter((t) => t > at - windowMs).sort((a, b) => b - a);
    if (inWindow.length < rate.results) {
      times.push(at);
      held.set(pairId(entry), times);
      continue;
    }
    refused ??= { submission, inputs: [] };
    const retryAfterMs = inWindow[rate.results - 1]! + windowMs - at;
    refused.inputs.push({ index, playerId: entry.playerId, boardId: entry.board.id, results: rate.results, perSeconds: rate.perSeconds, retryAfterMs });
  }
  if (refused) throw new ResultRateError(refused.inputs, refused.submission);
}

/** The result that flagged a player automatically, as players.flag_result keeps it. */
export interface FlagResult {
  boardId: string;
  matchId: string;
  score: number;
  tieBreakValues: number[];
  achievedAt: string;
}

/** A player the group flags: why, and the result that tripped the board's rule. */
export interface Suspicion {
  playerId: string;
  reason: string;
  result: FlagResult;
  flaggedAt: Date;
}

/**
 * Why a new result makes its player a suspect, or null: above the board's suspectAbove, or past
 * suspectJump times the player's previous best on the board (`previous`: their ALL_TIME board
 * score before it; on LOW_FIRST, suspectJump times fewer). A first result, or a previous best of 0
 * on HIGH_FIRST (no factor of it means anything), is judged on suspectAbove alone. O(1).
 */
export function suspicionOf(
  board: Pick<Board, 'id' | 'order' | 'suspectAbove' | 'suspectJump'>,
  score: number,
  previous: Pick<RecordedBoardScore, 'score'> | undefined,
): string | null {
  const above = board.suspectAbove ?? null;
  if (above !== null && score > above) return `suspect: score ${score} on board "${board.id}" is above its suspectAbove of ${above}`;
  const jump = board.suspectJump ?? null;
  if (jump === null || !previous) return null;
  if (board.order === 'HIGH_FIRST' && previous.score > 0 && score > jump * previous.score)
    return `suspect: score ${score} on board "${board.id}" is more than its suspectJump of ${jump} times the player's previous best of ${previous.score}`;
  if (board.order === 'LOW_FIRST' && score * jump < previous.score)
    return `suspect: score ${score} on board "${board.id}" is more than its suspectJump of ${jump} times lower than the player's previous best of ${previous.score}`;
  return null;
}

/** Whether a board judges suspicion at all (either rule set): the fold asks nothing more of other boards. */
export const judgesSuspicion = (board: Pick<Board, 'suspectAbove' | 'suspectJump'>) =>
  (board.suspectAbove ?? null) !== null || (board.suspectJump ?? null) !== null;

/**
 * The group's suspicions, one per player (the first result that tripped a rule): collected by the
 * fold (group-transaction.ts), which knows each result's previous best as of its own moment.
 * Players flagged already keep their flag (and its reason) as it is.
 */
export function createSuspicions(flaggedBefore: ReadonlySet<string>) {
  const found = new Map<string, Suspicion>();
  return {
    /** Judges a new result against the player's ALL_TIME board score before it. */
    judge(entry: ResultEntry, previous: Pick<RecordedBoardScore, 'score'> | undefined): void {
      if (!judgesSuspicion(entry.board) || flaggedBefore.has(entry.playerId) || found.has(entry.playerId)) return;
      const reason = suspicionOf(entry.board, entry.score, previous);
      if (!reason) return;
      found.set(entry.playerId, {
        playerId: entry.playerId,
        reason,
        flaggedAt: new Date(recordedMs(entry)),
        result: {
          boardId: entry.board.id,
          matchId: entry.matchId,
          score: entry.score,
          tieBreakValues: [...(entry.tieBreakValues ?? [])],
          achievedAt: entry.achievedAt.toISOString(),
        },
      });
    },
    found,
  };
}

/**
 * Flags the group's suspects, in its transaction: one statement, none without suspects. A player
 * flagged meanwhile by hand (flagPlayer takes another lock) keeps that flag and its reason.
 * O(k log N).
 */
export async function flagSuspects(tx: TransactionSql, suspects: ReadonlyMap<string, Suspicion>): Promise<void> {
  if (suspects.size === 0) return;
  const all = [...suspects.values()];
  await tx`
    insert into players (id, flagged_at, flag_reason, flag_result)
    select id, flagged_at, reason, result from unnest(
      ${tx.array(all.map((s) => s.playerId))}::text[],
      ${tx.array(all.map((s) => s.flaggedAt.toISOString()))}::text[]::timestamptz[],
      ${tx.array(all.map((s) => s.reason))}::text[],
      ${tx.array(all.map((s) => JSON.stringify(s.result)))}::text[]::jsonb[])
      as s(id, flagged_at, reason, result)
    on conflict (id) do update set
      flagged_at = excluded.flagged_at, flag_reason = excluded.flag_reason, flag_result = excluded.flag_result, updated_at = now()
    where players.flagged_at is null`;
}
