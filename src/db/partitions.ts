import type { Sql } from 'postgres';

/**
 * The score log's monthly partitions (see drizzle/0006_results_by_month.sql): `results_YYYY_MM`
 * holds the results achieved in that UTC month, `results_default` any result whose month has no
 * partition. Months are named by their label, `YYYY-MM`.
 */

/** A month's label, `YYYY-MM` (UTC). */
export type MonthLabel = string;

const MONTH = /^(\d{4})-(0[1-9]|1[0-2])$/;

/** The label of the UTC month `at` falls in. */
export function monthOf(at: Date): MonthLabel {
  return `${at.getUTCFullYear()}-${String(at.getUTCMonth() + 1).padStart(2, '0')}`;
}

/** The month `n` months after `month` (before it when `n` is negative). */
export function addMonths(month: MonthLabel, n: number): MonthLabel {
  const { start } = monthRange(month);
  return monthOf(new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + n, 1)));
}

/** Whether `text` is a month label. */
export const isMonthLabel = (text: string) => MONTH.test(text);

/** The month's partition table: results_2026_11 for 2026-11. */
export const partitionName = (month: MonthLabel) => `results_${month.replace('-', '_')}`;

/** The partition of results whose month has no partition of its own. */
export const DEFAULT_PARTITION = 'results_default';

/** [start, end) of a month, in UTC. */
export function monthRange(month: MonthLabel): { start: Date; end: Date } {
  const match = MONTH.exec(month);
  if (!match) throw new PartitionError(`"${month}" is not a month (YYYY-MM)`);
  const year = Number(match[1]);
  const index = Number(match[2]) - 1;
  return { start: new Date(Date.UTC(year, index, 1)), end: new Date(Date.UTC(year, index + 1, 1)) };
}

/** A partition operation that cannot be done as asked (a bad month, the current month, one not attached). */
export class PartitionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PartitionError';
  }
}

export interface ResultPartition {
  /** The table's name. */
  name: string;
  /** The month it holds; null for the default partition. */
  month: MonthLabel | null;
  /** Rows, as PostgreSQL last estimated them (exact for the default partition); null when never estimated. */
  rows: number | null;
}

/**
 * The partitions attached to results, months in order, the default partition last. The default's
 * rows are counted exactly (it is meant to stay nearly empty). O(partitions) catalogue reads.
 */
export async function listResultPartitions(sql: Sql): Promise<ResultPartition[]> {
  const rows = await sql<{ name: string; is_default: boolean; estimate: number }[]>`
    select c.relname as name, pg_get_expr(c.relpartbound, c.oid) = 'DEFAULT' as is_default, c.reltuples::float8 as estimate
    from pg_inherits i join pg_class c on c.oid = i.inhrelid
    where i.inhparent = 'results'::regclass
    order by c.relname`;
  const months = rows.filter((row) => !row.is_default);
  const partitions: ResultPartition[] = months.map((row) => ({
    name: row.name,
    month: row.name.replace(/^results_(\d{4})_(\d{2})$/, '$1-$2'),
    rows: row.estimate < 0 ? null : row.estimate,
  }));
  if (rows.some((row) => row.is_default)) {
    const [counted] = await sql<{ n: number }[]>`select count(*)::float8 as n from results_default`;
    partitions.push({ name: DEFAULT_PARTITION, month: null, rows: counted?.n ?? 0 });
  }
  return partitions;
}

/** How long partition DDL waits for a lock before giving up (and leaving the writes behind it alone). */
const LOCK_TIMEOUT = '10s';

/**
 * Creates and attaches the partition of `month`, moving into it any of its rows the default
 * partition caught meanwhile. Answers 'created'; 'attached' when it exists already; 'archived'
 * when the month was detached for archiving (remembered in archived_result_months, whether its
 * table is still there or was dumped and dropped) or a table of that name exists but is not
 * attached: it is left alone, and its late results stay in the default partition.
 *
 * Writes are not held up: the table is created apart and ATTACHed, which takes only a SHARE UPDATE
 * EXCLUSIVE lock on results (several processes doing this take turns; inserts go on). Only results
 * routed to the default partition wait, while its rows of that month are moved and it is checked
 * (it holds next to nothing). O(rows of the default partition).
 */
export async function createResultPartition(sql: Sql, month: MonthLabel): Promise<'created' | 'attached' | 'archived'> {
  const { start, end } = monthRange(month);
  const name = partitionName(month);
  return sql.begin(async (tx) => {
    await tx`select set_config('lock_timeout', ${LOCK_TIMEOUT}, true)`;
    // Moving a month's rows out of the default partition may rightly take longer than a request.
    await tx`select set_config('statement_timeout', '0', true)`;
    // The parent first, then the default partition: the order an insert takes them in.
    await tx`lock table results in share update exclusive mode`;
    const [archived] = await tx`select 1 from archived_result_months where month = ${month}`;
    if (archived) return 'archived';
    const [found] = await tx<{ attached: boolean }[]>`
      select exists (select 1 from pg_inherits i where i.inhrelid = c.oid and i.inhparent = 'results'::regclass) as attached
      from pg_class c where c.relname = ${name} and c.relnamespace = current_schema()::regnamespace`;
    if (found) return found.attached ? 'attached' : 'archived';
    await tx`lock table ${tx(DEFAULT_PARTITION)} in access exclusive mode`;
    await tx`create table ${tx(name)} (like results including defaults)`;
    await tx`
      with moved as (
        delete from ${tx(DEFAULT_PARTITION)} where achieved_at >= ${start.toISOString()}::timestamptz and achieved_at < ${end.toISOString()}::timestamptz
        returning *)
      insert into ${tx(name)} select * from moved`;
    // Bounds as literals: DDL takes no parameters. Both come from monthRange, never from input text.
    await tx.unsafe(`alter table results attach partition "${name}" for values from ('${start.toISOString()}') to ('${end.toISOString()}')`);
    return 'created';
  });
}

/**
 * Makes sure the partitions of `now`'s month, the month before and the `monthsAhead` after exist
 * (see createResultPartition); answers the months it created. Reads the catalogue and the archived
 * months once and touches only missing months, so running it daily in every process costs two queries.
 */
export async function ensureResultPartitions(sql: Sql, now: Date, monthsAhead: number): Promise<MonthLabel[]> {
  const current = monthOf(now);
  const attached = new Set((await listResultPartitions(sql)).map((partition) => partition.month));
  for (const { month } of await sql<{ month: string }[]>`select month from archived_result_months`) attached.add(month);
  const created: MonthLabel[] = [];
  for (let n = -1; n <= monthsAhead; n += 1) {
    const month = addMonths(current, n);
    if (attached.has(month)) continue;
    if ((await createResultPartition(sql, month)) === 'created') created.push(month);
  }
  return created;
}

/**
 * Detaches a past month's partition for archiving: the table stays, as a plain table of the same
 * name, outside the score log (dump it, then drop it), and the month is remembered as archived, so
 * it stays detached: no process makes its partition again. Refuses the current month and later ones
 * (their results are still arriving). A late result for a detached month lands in the default
 * partition; a replay of a detached result is still caught (result_keys keeps its key). Buckets
 * derived from the log read it while they are kept: writes/archive.ts detachMonth refuses a
 * month one of them still reads before calling this.
 *
 * Takes an ACCESS EXCLUSIVE lock on results for a moment (waiting at most 10 s for transactions in
 * flight, during which new writes wait too). O(1).
 */
export async function detachResultPartition(sql: Sql, month: MonthLabel, now: Date): Promise<string> {
  monthRange(month);
  if (month >= monthOf(now)) throw new PartitionError(`${month} has not ended yet; only a past month can be detached`);
  const name = partitionName(month);
  return sql.begin(async (tx) => {
    await tx`select set_config('lock_timeout', ${LOCK_TIMEOUT}, true)`;
    const [found] = await tx<{ name: string }[]>`
      select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
      where i.inhparent = 'results'::regclass and c.relname = ${name}`;
    if (!found) throw new PartitionError(`${month} has no attached partition (${name})`);
    await tx`alter table results detach partition ${tx(name)}`;
    // Remembered, so that no process makes the month's partition again once the table is dropped.
    await tx`insert into archived_result_months (month) values (${month}) on conflict do nothing`;
    return name;
  });
}
