import { liveBuckets, measureBucketDrift } from '../writes/board-buckets.js';
import type { Logger } from 'pino';
import type { Storage } from '../db/storage.js';
import type { RankingIndex } from '../ranking/index.js';
import type { BoardDirectory } from '../services/board-directory.js';
import type { SeasonDirectory } from '../services/season-directory.js';
import type { Metrics } from '../services/metrics.js';
import { keepsBoardScores } from '../model/board.js';
import type { BoardBucket } from '../ranking/index.js';
import type { DriftReport, DriftReports } from '../services/drift-reports.js';

/** What the drift gauge takes (8 members). */
export interface IndexDriftDeps {
  storage: Pick<Storage, 'boardScores'>;
  index: Pick<RankingIndex, 'size'>;
  boards: Pick<BoardDirectory, 'list'>;
  seasons: SeasonDirectory;
  driftReports: DriftReports;
  metrics: Pick<Metrics, 'indexDrift' | 'indexDriftMeasuredAt'>;
  now(): Date;
  log: Logger;
}

/** At most this many buckets are measured, in the order the board directory lists the boards. */
const MAX_BUCKETS = 200;

/** A measurement waits at least this many times the last one's length after it: the counts cost at most a tenth of one connection. */
const SPACING = 10;

/**
 * Whether a live bucket is measured: every bucket kept as rows, and of the buckets derived from
 * the log (keepsBoardScores) the day alone. Counting a derived bucket reads its span of the log, a
 * result a row: a month is thirty days of results where its day is one, and a result that misses
 * the index misses its day as well (the write path writes all of a result's buckets together, the
 * catch-up re-applies them together). The week, month and season are measured when asked for (the
 * console's bucket list, rebuildBoard's progress).
 */
const measured = (at: BoardBucket) => keepsBoardScores(at.board, at.bucket.period) || at.bucket.period === 'DAILY';

/**
 * Measures every live bucket it covers (see `measured`): the board scores PostgreSQL holds for
 * unflagged players minus the members of the sorted set. One count query and one ZCARD per bucket,
 * one bucket at a time, so a measurement takes one PostgreSQL connection whatever the boards.
 * Throws the signal's reason between two buckets once it aborts. O(board scores and day's results
 * of the buckets measured).
 */
async function measureIndexDrift(deps: IndexDriftDeps, signal?: AbortSignal): Promise<DriftReport> {
  const measuredAt = deps.now().getTime();
  const started = performance.now();
  const boards = await deps.boards.list();
  const buckets = (await Promise.all(boards.map((board) => liveBuckets(deps, board)))).flat().filter(measured).slice(0, MAX_BUCKETS);
  const report: DriftReport = { measuredAt, durationMs: 0, buckets: [] };
  for (const at of buckets) {
    signal?.throwIfAborted();
    // In the background, and a count reads the whole list: not under a request's statement timeout.
    const { drift } = await measureBucketDrift(deps, at, { unbounded: true });
    report.buckets.push({ board: at.board.id, period: at.bucket.period, bucket: at.bucket.label, region: at.region ?? '', drift });
  }
  report.durationMs = Math.round(performance.now() - started);
  return report;
}

export interface IndexDriftOptions {
  /**
   * How old the deployment's last measurement may be before a scrape starts the next
   * (INDEX_DRIFT_INTERVAL_MS). A measurement also waits ten times the last one's length. Default
   * 60,000 ms.
   */
  intervalMs?: number;
}

export interface IndexDriftGauge {
  /**
   * Sets the drift gauge from the deployment's last measurement (one Redis GET) and, when that is
   * due for renewal and no process of the deployment is measuring, starts the next one here in
   * the background. Never waits for a count: a scrape answers in the time of a GET, however large
   * the boards.
   */
  refresh(): Promise<void>;
  /** Starts no more measurements; one running stops after the bucket it is counting. */
  stop(): Promise<void>;
}

/**
 * `leaderboard_index_drift` on `/metrics`. Counting a bucket's board scores reads all of them
 * (288 ms for the bench's 1,000,000-player ALL_TIME, 342 ms for its day), so a scrape must never
 * wait for the counts, and a deployment of several processes (or workers) must not count once per
 * process and scrape. The last measurement is kept in Redis (services/drift-reports.ts), every
 * process serves it, and one process at a time renews it, at most once per `intervalMs`.
 */
export function createIndexDriftGauge(deps: IndexDriftDeps, options: IndexDriftOptions = {}): IndexDriftGauge {
  const intervalMs = options.intervalMs ?? 60_000;
  const { indexDrift, indexDriftMeasuredAt } = deps.metrics;
  let measuring: Promise<void> | undefined;
  const stopping = new AbortController();

  const due = (report: DriftReport | null) => report === null || deps.now().getTime() - report.measuredAt >= Math.max(intervalMs, SPACING * report.durationMs);

  async function measure(): Promise<void> {
    if (!(await deps.driftReports.claim())) return;
    try {
      // Another process may have saved one between this process's read and its claim.
      if (!due(await deps.driftReports.latest())) return await deps.driftReports.release();
      await deps.driftReports.save(await measureIndexDrift(deps, stopping.signal));
    } catch (error) {
      await deps.driftReports.release().catch(() => undefined);
      throw error;
    }
  }

  return {
    async refresh() {
      const report = await deps.driftReports.latest();
      indexDrift.reset();
      indexDriftMeasuredAt.reset();
      if (report) {
        for (const { drift, ...labels } of report.buckets) indexDrift.set(labels, drift);
        indexDriftMeasuredAt.set(report.measuredAt / 1000);
      }
      if (measuring || stopping.signal.aborted || !due(report)) return;
      measuring = measure()
        .catch((error: unknown) => {
          if (!stopping.signal.aborted) deps.log.warn({ err: error }, 'measuring the index drift failed; the next scrape tries again');
        })
        .finally(() => (measuring = undefined));
    },
    async stop() {
      stopping.abort(new Error('the process is stopping'));
      await measuring;
    },
  };
}
