import type { Board } from '../model/board.js';
import { badInput, rateLimited } from '../errors.js';
import type { ResultRateError } from '../db/result-guards.js';

/**
 * The board's guards on one result's values (issue 59), checked in prepare() before anything is
 * written: the score's floor (minScore; the ceiling is maxScore's check) and the tie-break values,
 * one whole number from 0 to its column's max per column of the board, in order. A board without
 * columns takes none: an empty list is none, anything more is refused, so that values a game
 * believes count are never dropped silently. BAD_USER_INPUT naming the field; O(columns).
 */
export function requireResultValues(
  input: { score: number; tieBreakValues?: readonly number[] | null | undefined },
  board: Pick<Board, 'id' | 'minScore' | 'tieBreaks'>,
  where: (field: string) => string,
): void {
  const minScore = board.minScore ?? 0;
  if (input.score < minScore) throw badInput(`${where('score')}score ${input.score} is below board "${board.id}"'s minScore of ${minScore}.`);
  const columns = board.tieBreaks ?? [];
  const values = input.tieBreakValues ?? [];
  if (columns.length === 0) {
    if (values.length > 0)
      throw badInput(`${where('tieBreakValues')}board "${board.id}" has no tie-break columns, so it takes no tieBreakValues; ${values.length} given.`);
    return;
  }
  const names = columns.map((column) => column.name).join(', ');
  if (input.tieBreakValues === null || input.tieBreakValues === undefined)
    throw badInput(
      `${where('tieBreakValues')}board "${board.id}" ranks equal scores by ${columns.length} tie-break columns (${names}): tieBreakValues, one value per column in order, is required.`,
    );
  if (values.length !== columns.length)
    throw badInput(
      `${where('tieBreakValues')}board "${board.id}" has ${columns.length} tie-break columns (${names}); tieBreakValues holds ${values.length}, one per column is required.`,
    );
  values.forEach((value, i) => {
    const { name, max } = columns[i]!;
    if (!Number.isSafeInteger(value) || value < 0 || value > max)
      throw badInput(
        `${where(`tieBreakValues.${i}`)}tieBreakValues[${i}] ${value} is not a whole number from 0 to ${max} (column "${name}" of board "${board.id}").`,
      );
  });
}

/**
 * The answer to a call refused by a board's resultRate: RATE_LIMITED naming each refused input,
 * with extensions.retryAfterMs the wait after which every one of them would pass (the longest; a
 * batch carrying more of one player's results than the rate allows never passes whole, and says so).
 */
export function resultRateRefusal(error: ResultRateError, batch: boolean) {
  const where = (index: number) => (batch ? `inputs.${index}.playerId: ` : '');
  const retryAfterMs = Math.max(...error.inputs.map((input) => input.retryAfterMs));
  return rateLimited(
    `${error.inputs
      .map(
        ({ index, playerId, boardId, results, perSeconds, retryAfterMs: wait }) =>
          `${where(index)}player "${playerId}" has reached board "${boardId}"'s resultRate of ${results} results per ${perSeconds} s; one more may be recorded in ${wait} ms`,
      )
      .join('; ')}. Nothing was recorded.`,
    retryAfterMs,
  );
}
