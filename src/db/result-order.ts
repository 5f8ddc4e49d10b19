import type { PendingQuery, Sql, TransactionSql } from 'postgres';
import type { Board, TieBreak } from '../model/board.js';

/**
 * The SQL twin of ranking/packing.ts scoreOrder: a result's place in the board's order of results,
 * the time it was reached left out, as one int8 expression over a row's `score` and
 * `tie_break_values` columns (of the table aliased `alias`): the score, or its mirror on a LOW_FIRST
 * board, with each tie-break column's value (or its mirror on a LOW_FIRST column) below it, each in
 * as many bits as the column's max takes. A larger one is a better result, and two results are
 * equal on every column exactly when their keys are equal. Exact: createBoard refuses a board whose
 * key would not fit in 53 bits. The board's numbers are written into the text, which is the same
 * for every statement of one board.
 *
 * `order by ${resultOrder(sql, board, 'r')} desc` lists results best first, as the index does before
 * it compares times. O(columns) to build.
 */
export function resultOrder(sql: Sql | TransactionSql, board: Pick<Board, 'order' | 'maxScore' | 'tieBreaks'>, alias: string): PendingQuery<[]> {
  let key = board.order === 'HIGH_FIRST' ? `${alias}.score::int8` : `(${Math.floor(board.maxScore)}::int8 - ${alias}.score)`;
  (board.tieBreaks ?? []).forEach((column, i) => {
    const size = 2 ** Math.floor(column.max).toString(2).length;
    const value = `coalesce(${alias}.tie_break_values[${i + 1}], 0)`;
    key = `(${key} * ${size}::int8 + ${column.order === 'HIGH_FIRST' ? value : `(${Math.floor(column.max)}::int8 - ${value})`})`;
  });
  // Only numbers the service wrote (whole, from the board's settings) and the caller's alias are in the text.
  return sql.unsafe(key) as unknown as PendingQuery<[]>;
}

/**
 * `order by` text listing results best first over `alias`'s score and tie_break_values: the key of
 * {@link resultOrder} descending on a board with columns, the bare score (descending on HIGH_FIRST,
 * ascending on LOW_FIRST) on one without, as a plain board's statements always sorted. O(columns).
 */
export function resultsBestFirst(
  sql: Sql | TransactionSql,
  board: { order: Board['order']; maxScore: number; tieBreaks?: readonly TieBreak[] | undefined },
  alias: string,
): PendingQuery<[]> {
  if (board.tieBreaks && board.tieBreaks.length > 0) return sql`${resultOrder(sql, { ...board, tieBreaks: [...board.tieBreaks] }, alias)} desc`;
  return board.order === 'HIGH_FIRST' ? sql`${sql(alias)}.score desc` : sql`${sql(alias)}.score asc`;
}
