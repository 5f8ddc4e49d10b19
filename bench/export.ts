/**
 * How fast `GET /export` streams a bucket of a million players, and how much memory it takes the
 * service (issue 21, item 4: 1,000,000 rows with under 64 MB of extra resident memory, and a client
 * that reads slowly holds nothing more). Run by hand, never by npm test:
 *
 *     npx tsx bench/export.ts [--rows 1000000] [--rounds 3] [--runtime tsx|dist] [--slow-seconds 10]
 *
 * Seeds one board of its own in bulk (generate_series) into a database of its own: `rows` ALL_TIME
 * board scores (many ties, half with entry metadata), nine players in ten with a profile, one in a
 * thousand flagged. Starts the service as a real process on it (bench/lib/service.ts; `--runtime
 * dist` runs the build, as `npm start` does: `npm run build` first), then, `rounds` times in turn:
 *
 * - the export as CSV and as NDJSON, read as fast as the bench can: rows a second, and the service's
 *   peak resident memory (VmRSS, sampled every 10 ms from /proc) above what it held just before;
 * - the baseline: the same rows read by the bench process itself through the same cursor
 *   (db/export.ts streamStandings, no formatting, no HTTP), rows a second: what PostgreSQL and the
 *   driver cost, so that the export's own share shows;
 * - a slow reader: CSV read at 1 MB a second for `slow-seconds`, then dropped: the service's peak
 *   extra memory meanwhile, which should be that of a fast reader or less.
 *
 * Each figure is reported by its median over the rounds and appended to bench/results/export.jsonl
 * (bench/lib/report.ts). BENCH_POSTGRES_URL and REDIS_URL name the stores (bench/lib/env.ts);
 * everything the bench made is removed at the end.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import postgres from 'postgres';
import { insertBoard } from '../src/db/boards.js';
import { createDatabase, ensureDatabase, migrateDatabase } from '../src/db/client.js';
import { streamStandings } from '../src/db/export.js';
import { insertSeason } from '../src/db/seasons.js';
import { DEFAULT_RETENTION, PERIODS } from '../src/model/board.js';
import { prepareExport } from '../src/reads/export.js';
import type { BucketDeps } from '../src/services/buckets.js';
import { deleteKeysUnder } from '../src/redis.js';
import { BENCH_ADMIN_KEY, type BenchTarget, POSTGRES_URL, REDIS_URL } from './lib/env.js';
import { median } from './lib/median.js';
import { publish } from './lib/report.js';
import { startService } from './lib/service.js';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '1000000' },
    rounds: { type: 'string', default: '3' },
    runtime: { type: 'string', default: 'tsx' },
    'slow-seconds': { type: 'string', default: '10' },
  },
});
const ROWS = Number(values.rows);
const ROUNDS = Number(values.rounds);
const SLOW_SECONDS = Number(values['slow-seconds']);
const RUNTIME = values.runtime === 'dist' ? 'dist' : 'tsx';
const BOARD = 'export';
/** The service's memory target for a 1,000,000-row export. */
const TARGET_MB = 64;

const run = `${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
const database = `lb_bench_export_${run}`;
const databaseUrl = new URL(POSTGRES_URL);
databaseUrl.pathname = `/${database}`;
const keyPrefix = `lbbench-export:${run}:`;

const mb = (bytes: number) => bytes / 1_048_576;

/** A process's resident memory now, in bytes (VmRSS of /proc/<pid>/status). */
function residentBytes(pid: number): number {
  const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kb) * 1024;
}

/** Samples `pid`'s resident memory every 10 ms while `work` runs: answers its result and the peak above the memory before. */
async function peakDuring<T>(pid: number, work: () => Promise<T>): Promise<{ result: T; extraBytes: number }> {
  const before = residentBytes(pid);
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, residentBytes(pid))), 10);
  try {
    const result = await work();
    peak = Math.max(peak, residentBytes(pid));
    return { result, extraBytes: peak - before };
  } finally {
    clearInterval(sampler);
  }
}

/** Reads an export, at most `bytesPerSecond` when given (else as fast as it comes), for at most `forMs`; answers rows (lines) and seconds. */
async function readExport(base: string, format: 'csv' | 'ndjson', pace: { bytesPerSecond?: number; forMs?: number } = {}) {
  const started = performance.now();
  const abort = new AbortController();
  const response = await fetch(`${base}/export?board=${BOARD}&format=${format}`, {
    headers: { authorization: `Bearer ${BENCH_ADMIN_KEY}` },
    signal: abort.signal,
  });
  if (response.status !== 200) throw new Error(`export answered ${response.status}: ${await response.text()}`);
  let lines = 0;
  let bytes = 0;
  const reader = response.body!.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      bytes += value.length;
      for (let i = value.indexOf(10); i !== -1; i = value.indexOf(10, i + 1)) lines += 1;
      const elapsedMs = performance.now() - started;
      if (pace.forMs !== undefined && elapsedMs > pace.forMs) break;
      if (pace.bytesPerSecond) {
        const aheadMs = (bytes / pace.bytesPerSecond) * 1000 - elapsedMs;
        if (aheadMs > 0) await new Promise((resolve) => setTimeout(resolve, aheadMs));
      }
    }
  } finally {
    abort.abort();
    await reader.cancel().catch(() => undefined);
  }
  return { rows: format === 'csv' ? lines - 1 : lines, bytes, seconds: (performance.now() - started) / 1000 };
}

async function seed(sql: postgres.Sql): Promise<number> {
  const startsAt = new Date(Date.now() - 86_400_000);
  // Player i scores (i * 7919) mod 100,003 (about ten players a score), reached i ms after a day ago.
  await sql`
    insert into board_scores (board_id, period, bucket, region, player_id, score, reached_at, metadata)
    select ${BOARD}, 'ALL_TIME', 'all', '', 'p' || g, (g::int8 * 7919) % 100003, ${startsAt.toISOString()}::timestamptz + g * interval '1 ms',
           case when g % 2 = 0 then json_build_object('match', 'm' || g, 'kills', g % 17, 'map', 'dust, "2"') end
    from generate_series(1, ${ROWS}) as g`;
  // Nine in ten have a profile (a few with names a spreadsheet would take for formulas); one in a thousand is flagged.
  await sql`
    insert into players (id, display_name, flagged_at)
    select 'p' || g, case when g % 100 = 0 then '=cmd|' || g else 'Player ' || g end, case when g % 1000 = 7 then now() end
    from generate_series(1, ${ROWS}) as g where g % 10 <> 0`;
  await sql`analyze board_scores`;
  await sql`analyze players`;
  const [{ ranked }] = await sql<[{ ranked: number }]>`
    select count(*)::int as ranked from board_scores s
    where s.board_id = ${BOARD} and s.period = 'ALL_TIME' and not exists (select 1 from players p where p.id = s.player_id and p.flagged_at is not null)`;
  return ranked;
}

async function main(): Promise<void> {
  await ensureDatabase(databaseUrl.toString());
  await migrateDatabase(databaseUrl.toString());
  const db = createDatabase(databaseUrl.toString(), { timeouts: null });
  let service: Awaited<ReturnType<typeof startService>> | undefined;
  try {
    // Every period, and a season open, as the harness waits for a read of each before measuring.
    const board = await insertBoard(db.db, {
      id: BOARD,
      title: 'export',
      order: 'HIGH_FIRST',
      aggregate: 'BEST',
      maxScore: 1_000_000_000,
      periods: [...PERIODS],
      regions: [],
      topSize: 10,
      retention: DEFAULT_RETENTION,
    });
    if (!board) throw new Error('could not create the board');
    await insertSeason(db.db, { boardId: BOARD, name: 'bench', startsAt: new Date(Date.now() - 3_600_000), endsAt: null });
    let started = performance.now();
    const ranked = await seed(db.sql);
    console.log(`seeded ${ROWS} board scores (${ranked} ranked) in ${((performance.now() - started) / 1000).toFixed(1)} s`);

    const target: BenchTarget = { label: 'export', database, redis: REDIS_URL, keyPrefix, boardId: BOARD, shards: 1, players: ROWS };
    started = performance.now();
    service = await startService({ target, runtime: RUNTIME });
    console.log(`service ready (its index rebuilt) in ${((performance.now() - started) / 1000).toFixed(1)} s; pid ${service.pid}`);
    const base = service.url.replace(/\/graphql$/, '');

    // The rows alone, through the same cursor in this process: what PostgreSQL and the driver cost.
    const directory = { known: () => board, find: async () => board } as unknown as BucketDeps['boards'];
    const { list } = await prepareExport({ boards: directory, seasons: undefined as never, now: () => new Date() }, { board: BOARD });
    const figures: Record<string, number[]> = { csv: [], ndjson: [], cursor: [], csvMb: [], ndjsonMb: [], slowMb: [] };
    for (let round = 1; round <= ROUNDS; round++) {
      for (const format of ['csv', 'ndjson'] as const) {
        const { result, extraBytes } = await peakDuring(service.pid, () => readExport(base, format));
        if (result.rows !== ranked) throw new Error(`the ${format} export held ${result.rows} rows, not ${ranked}`);
        figures[format]!.push(result.rows / result.seconds);
        figures[`${format}Mb`]!.push(mb(extraBytes));
        console.log(
          `round ${round} ${format}: ${Math.round(result.rows / result.seconds)} rows/s (${result.seconds.toFixed(2)} s, ${mb(result.bytes).toFixed(0)} MB), service +${mb(extraBytes).toFixed(1)} MB`,
        );
      }
      const cursorStarted = performance.now();
      let read = 0;
      await streamStandings(db.sql, list, { opened: () => undefined, rows: (batch) => void (read += batch.length) });
      figures.cursor!.push(read / ((performance.now() - cursorStarted) / 1000));
      const slow = await peakDuring(service.pid, () => readExport(base, 'csv', { bytesPerSecond: 1_048_576, forMs: SLOW_SECONDS * 1000 }));
      figures.slowMb!.push(mb(slow.extraBytes));
      console.log(
        `round ${round} cursor alone: ${Math.round(figures.cursor!.at(-1)!)} rows/s; slow reader (${slow.result.rows} rows in ${SLOW_SECONDS} s): service +${mb(slow.extraBytes).toFixed(1)} MB`,
      );
    }

    const worstMb = Math.max(...figures.csvMb!, ...figures.ndjsonMb!, ...figures.slowMb!);
    publish({
      scenario: 'export',
      params: { rows: ROWS, ranked, rounds: ROUNDS, runtime: RUNTIME, slowSeconds: SLOW_SECONDS },
      rows: [
        { name: 'GET /export CSV', role: 'service', unit: 'rows/s', value: median(figures.csv!), extra: { peakExtraMb: median(figures.csvMb!) } },
        { name: 'GET /export NDJSON', role: 'service', unit: 'rows/s', value: median(figures.ndjson!), extra: { peakExtraMb: median(figures.ndjsonMb!) } },
        { name: 'the same cursor alone (no HTTP, no formatting)', role: 'baseline', unit: 'rows/s', value: median(figures.cursor!) },
        { name: 'service peak extra memory, CSV', role: 'service', unit: 'MB', value: median(figures.csvMb!) },
        { name: 'service peak extra memory, NDJSON', role: 'service', unit: 'MB', value: median(figures.ndjsonMb!) },
        { name: `service peak extra memory, a reader at 1 MB/s for ${SLOW_SECONDS} s`, role: 'service', unit: 'MB', value: median(figures.slowMb!) },
      ],
      ratios: { 'export CSV / cursor alone': median(figures.csv!) / median(figures.cursor!) },
      targets: [
        {
          description: `${ROWS.toLocaleString('en-US')} rows with under ${TARGET_MB} MB of extra resident memory (the worst of every round and reader)`,
          measured: `${worstMb.toFixed(1)} MB`,
          met: worstMb < TARGET_MB,
        },
      ],
      notes: [
        'memory: VmRSS of the service process sampled every 10 ms during each export, minus VmRSS just before it',
        'the slow reader: the service holds one batch (1,000 rows) ahead of what its socket took, so its memory stays that of a fast reader',
      ],
    });
  } finally {
    await service?.stop();
    await db.close();
    await deleteKeysUnder(REDIS_URL, keyPrefix);
    const admin = postgres(POSTGRES_URL, { max: 1, onnotice: () => {} });
    await admin`drop database if exists ${admin(database)} with (force)`;
    await admin.end();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
