/**
 * What one result costs the stores, over a closed loop's measured window (see WindowOptions.window):
 * - the PostgreSQL rows written (inserted, updated and deleted, per table, from
 *   pg_stat_user_tables of the bench database; the score log's monthly partitions count as
 *   `results`). PostgreSQL flushes a busy backend's counts at most once a second, so both readings
 *   are taken while the load runs, and lag alike;
 * - the statements sent: the service's own count (`leaderboard_postgres_statements_total` on its
 *   /metrics, BEGIN and COMMIT included), or a raw baseline's statements per call;
 * - the CPU of each process, per result, from the measurement's cpu column, and of it the time the
 *   service's garbage collector took (`nodejs_gc_duration_seconds`, prom-client's default metric);
 * - the bytes the service's heap allocated (the allocation meter, allocation-meter.js): steadier
 *   than its CPU on a shared machine, so the figure to compare builds of the write path by.
 */
import postgres from 'postgres';
import type { Measurement } from './load.js';
import { readAllocated } from './store-calls.js';

export interface WriteCosts {
  /** Rows PostgreSQL wrote (inserted + updated + deleted) per result, over every table. */
  rows: number;
  /** The same, per table. */
  rowsByTable: Record<string, number>;
  /** Statements sent to PostgreSQL per result, when known. */
  statements?: number;
  /** CPU per result, in microseconds, per process (postgres: every backend together). */
  cpuMicros: Record<string, number>;
  /** Of the service's CPU per result, the microseconds its garbage collector took, when known. */
  gcMicros?: number;
  /** KB the service's heap allocated per result, when its allocation meter answers. */
  allocatedKb?: number;
}

export interface WriteCostProbe {
  /** Hand to the closed loop: reads the counters as its window opens and closes. */
  window: { opened(): void; closed(): void };
  /** The costs of the window just measured; `resultsPerRequest` results in each request. */
  costs(measurement: Measurement, resultsPerRequest: number): Promise<WriteCosts>;
  close(): Promise<void>;
}

interface Reading {
  tables: Map<string, number>;
  service: ServiceCounters;
}

const tableOf = (name: string) => (/^results_(\d{4}_\d{2}|default)$/.test(name) ? 'results' : name);

/**
 * A probe on `databaseUrl`. `statements` says how statements are counted: the service's metrics
 * URL (read at both ends of the window), or a number of statements per request (a raw baseline).
 */
export function writeCostProbe(databaseUrl: string, statements: { metricsUrl: string } | { perRequest: number }): WriteCostProbe {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  let opened: Promise<Reading> | undefined;
  let closed: Promise<Reading> | undefined;

  async function read(): Promise<Reading> {
    const [rows, service] = await Promise.all([
      sql<{ name: string; written: string }[]>`select relname as name, (n_tup_ins + n_tup_upd + n_tup_del)::text as written from pg_stat_user_tables`,
      'metricsUrl' in statements ? serviceCounters(statements.metricsUrl) : Promise.resolve({}),
    ]);
    const tables = new Map<string, number>();
    for (const { name, written } of rows) tables.set(tableOf(name), (tables.get(tableOf(name)) ?? 0) + Number(written));
    return { tables, service };
  }

  return {
    window: {
      opened: () => void (opened = read()),
      closed: () => void (closed = read()),
    },
    async costs(measurement, resultsPerRequest) {
      const results = measurement.requests * resultsPerRequest;
      const perSecond = measurement.throughput * resultsPerRequest;
      const cpuMicros = Object.fromEntries(
        Object.entries(measurement.cpu ?? {})
          .filter(([name]) => name !== 'machine' && name !== 'other')
          .map(([name, cores]) => [name, perSecond > 0 ? Math.round((cores * 1e6) / perSecond) : NaN]),
      );
      if (!opened || !closed || results === 0) return { rows: NaN, rowsByTable: {}, cpuMicros };
      const [start, end] = await Promise.all([opened, closed]);
      const rowsByTable: Record<string, number> = {};
      for (const [name, written] of end.tables) {
        const delta = written - (start.tables.get(name) ?? 0);
        if (delta > 0) rowsByTable[name] = round(delta / results);
      }
      const rows = round(Object.values(rowsByTable).reduce((a, b) => a + b, 0));
      const statementsPerResult =
        'perRequest' in statements
          ? statements.perRequest / resultsPerRequest
          : start.service.statements !== undefined && end.service.statements !== undefined
            ? (end.service.statements - start.service.statements) / results
            : undefined;
      const gc = start.service.gcSeconds !== undefined && end.service.gcSeconds !== undefined ? end.service.gcSeconds - start.service.gcSeconds : undefined;
      const allocated =
        start.service.allocatedBytes !== undefined && end.service.allocatedBytes !== undefined
          ? end.service.allocatedBytes - start.service.allocatedBytes
          : undefined;
      return {
        rows,
        rowsByTable,
        ...(statementsPerResult === undefined ? {} : { statements: round(statementsPerResult) }),
        cpuMicros,
        ...(gc === undefined ? {} : { gcMicros: Math.round((gc * 1e6) / results) }),
        ...(allocated === undefined ? {} : { allocatedKb: Math.round(allocated / results / 100) / 10 }),
      };
    },
    close: () => sql.end(),
  };
}

const round = (value: number) => Math.round(value * 1000) / 1000;

/** What the service's /metrics counts (statements sent, seconds its garbage collector took), and its allocation meter's total. */
interface ServiceCounters {
  statements?: number;
  gcSeconds?: number;
  allocatedBytes?: number;
}

/** The service's `leaderboard_postgres_statements_total`, and `nodejs_gc_duration_seconds_sum` over every kind of collection. */
async function serviceCounters(metricsUrl: string): Promise<ServiceCounters> {
  try {
    const [text, allocatedBytes] = await Promise.all([fetch(metricsUrl).then((response) => response.text()), readAllocated(Number(new URL(metricsUrl).port))]);
    const statements = /^leaderboard_postgres_statements_total (\S+)$/m.exec(text);
    const gc = [...text.matchAll(/^nodejs_gc_duration_seconds_sum\{[^}]*\} (\S+)$/gm)];
    return {
      ...(statements ? { statements: Number(statements[1]) } : {}),
      ...(gc.length > 0 ? { gcSeconds: gc.reduce((sum, line) => sum + Number(line[1]), 0) } : {}),
      ...(allocatedBytes === undefined ? {} : { allocatedBytes }),
    };
  } catch {
    return {};
  }
}

/** One line for the report's notes: "<name>: per result, PostgreSQL rows written 9.0 (…), statements 0.05, CPU µs postgres 310 server 150 redis 60". */
export function costsNote(name: string, costs: WriteCosts): string {
  const tables = Object.entries(costs.rowsByTable)
    .sort(([, a], [, b]) => b - a)
    .map(([table, rows]) => `${table} ${rows.toFixed(2)}`)
    .join(', ');
  const cpu = Object.entries(costs.cpuMicros)
    .map(([process, micros]) => `${process} ${micros}`)
    .join(' ');
  const gc = costs.gcMicros === undefined ? '' : ` (of the service's, garbage collection ${costs.gcMicros})`;
  const allocated = costs.allocatedKb === undefined ? '' : `; the service allocated ${costs.allocatedKb.toFixed(1)} KB`;
  return `${name}: per result, PostgreSQL rows written ${costs.rows.toFixed(2)}${tables ? ` (${tables})` : ''}${costs.statements === undefined ? '' : `, statements ${costs.statements.toFixed(3)}`}, CPU µs ${cpu}${gc}${allocated}`;
}

/** How much the bench board's log and board scores hold: what a write's PostgreSQL cost depends on besides the code. */
export interface DatabaseState {
  /** Results of the board achieved this month (UTC): the partition every write of the run goes to. */
  monthResults: number;
  /** Board-score rows of the board (every bucket kept as rows). */
  boardScores: number;
}

/**
 * The bench board's log month and board scores, counted exactly before a write scenario: the same
 * code wrote about half as fast into a month of 8,164,600 results as into a freshly seeded one of
 * 1,030,306 (bench/RESULTS.md, 2026-12-03), so a figure without them cannot be compared. Two counts.
 */
export async function databaseState(databaseUrl: string, boardId: string): Promise<DatabaseState> {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  try {
    const [row] = await sql<{ month_results: number; board_scores: number }[]>`
      select (select count(*) from results
               where board_id = ${boardId} and achieved_at >= date_trunc('month', now() at time zone 'UTC') at time zone 'UTC')::float8 as month_results,
             (select count(*) from board_scores where board_id = ${boardId})::float8 as board_scores`;
    return { monthResults: row!.month_results, boardScores: row!.board_scores };
  } finally {
    await sql.end();
  }
}

/** The report's line for a DatabaseState. */
export const databaseNote = (state: DatabaseState) =>
  `the bench database before the run: ${state.monthResults.toLocaleString('en-US')} results of the board this month, ${state.boardScores.toLocaleString('en-US')} board-score rows`;
