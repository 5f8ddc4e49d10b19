import { randomUUID } from 'node:crypto';
import type { Period } from '../model/board.js';
import type { BoardBucket } from '../ranking/index.js';
import type { RedisClient } from '../redis.js';
import type { Logger } from 'pino';

/** Where a rebuild started from the console stands. */
export type RebuildState = 'RUNNING' | 'DONE' | 'FAILED';

/** A rebuild run in the background, as any process of the deployment reads it back. */
export interface RebuildJob {
  id: string;
  boardId: string;
  period: Period;
  bucket: string;
  region: string | null;
  state: RebuildState;
  /** Board scores read from PostgreSQL so far. */
  rowsRead: number;
  /**
   * The bucket's rankable board scores as the rebuild starts: what rowsRead counts towards. 0 until
   * they are counted, beside the rebuild (see start); known once the job is DONE.
   */
  rowsTotal: number;
  /** Players ranked once it is DONE. */
  size: number | null;
  /** Why it FAILED. */
  error: string | null;
  startedAt: Date;
  finishedAt: Date | null;
}

export interface RebuildJobsOptions {
  /** How long a job's record is kept after it starts. Default 86,400 s (a day). */
  keepSeconds?: number;
  /** How often a running job says it is alive. Default 5,000 ms. */
  heartbeatMs?: number;
  /**
   * A RUNNING job not heard from for this long is answered FAILED: the process running it stopped.
   * Default 30,000 ms.
   */
  staleMs?: number;
  /** Where a failed rebuild, or a job record not saved, is logged. Default: nowhere. */
  log?: Logger;
}

/**
 * The rebuild a job runs (writes/rebuild-bucket.ts, bound to its bucket): it reports the rows
 * read so far, 0 once it holds the bucket's rebuild keys, and answers the players ranked.
 */
export type Rebuild = (onProgress: (rowsRead: number) => void) => Promise<number>;

/** Counts the rows a job's rebuild will read (countRankable, without a request's bound). */
export type CountRows = () => Promise<number>;

const jobKey = (id: string) => `rebuild-job:${id}`;

/**
 * Rebuilds started in the background with their progress kept in Redis, one hash per job, so that
 * whichever process a poll reaches answers it (behind a load balancer, not the one running it).
 * The rebuild itself is rebuildBucket, as the CLI's and rebuildBoard's. A job whose process dies
 * stops beating and is answered FAILED after `staleMs`, rather than RUNNING for ever.
 */
export function createRebuildJobs(redis: RedisClient, options: RebuildJobsOptions = {}) {
  const keepSeconds = options.keepSeconds ?? 86_400;
  const heartbeatMs = options.heartbeatMs ?? 5_000;
  const staleMs = options.staleMs ?? 30_000;

  const save = (id: string, fields: Record<string, string | number>) =>
    redis
      .multi()
      .hset(jobKey(id), { ...fields, beatAt: Date.now() })
      .expire(jobKey(id), keepSeconds)
      .exec();

  return {
    /**
     * Starts rebuilding `at` and answers once the rebuild holds the bucket's rebuild keys (so its
     * progress is real): the job as started. Throws RebuildRunningError, having started nothing,
     * when another rebuild of the bucket runs. The rest runs on; failures land in the job.
     *
     * The rows are counted in the job too, beside the rebuild, once it holds its keys, and the job
     * records the total when the count ends (rowsTotal is 0 until then). Why not before answering:
     * a count reads the whole bucket, and a bucket of tens of millions outlasts a request's bound
     * (half of it is PostgreSQL's statement timeout), which left such a bucket with no rebuild from
     * the console. A count that fails leaves the total at 0 and the rebuild going; the job is DONE
     * only once the count has ended, so a finished job carries its total.
     */
    async start(at: BoardBucket, rebuild: Rebuild, countRows: CountRows): Promise<RebuildJob> {
      const job: RebuildJob = {
        id: randomUUID(),
        boardId: at.board.id,
        period: at.bucket.period,
        bucket: at.bucket.label,
        region: at.region,
        state: 'RUNNING',
        rowsRead: 0,
        rowsTotal: 0,
        size: null,
        error: null,
        startedAt: new Date(),
        finishedAt: null,
      };
      let rowsRead = 0;
      let claimed!: () => void;
      const begun = new Promise<void>((resolve) => (claimed = resolve));
      await save(job.id, {
        boardId: job.boardId,
        period: job.period,
        bucket: job.bucket,
        region: job.region ?? '',
        state: job.state,
        rowsRead: 0,
        rowsTotal: 0,
        startedAt: job.startedAt.getTime(),
      });
      const heartbeat = setInterval(() => void save(job.id, { rowsRead }).catch(() => undefined), heartbeatMs);
      heartbeat.unref();
      const finish = (fields: Record<string, string | number>) => {
        clearInterval(heartbeat);
        return save(job.id, { ...fields, rowsRead, finishedAt: Date.now() });
      };
      const run = rebuild((read) => {
        rowsRead = read;
        if (read === 0) claimed();
        else void save(job.id, { rowsRead }).catch(() => undefined);
      });
      // Claimed (or, for a bucket with nothing to read, already done); a refusal to claim leaves no job.
      await Promise.race([begun, run]).catch(async (error: unknown) => {
        clearInterval(heartbeat);
        await redis.del(jobKey(job.id));
        throw error;
      });
      // Counted only once the job holds the keys: a refused job is deleted above, and a late count must not write it back.
      const counted = countRows()
        .then((rowsTotal) => save(job.id, { rowsTotal }))
        .catch((error: unknown) => options.log?.warn({ err: error, job: job.id }, 'rebuild rows not counted; the rebuild goes on'));
      run
        .then(
          async (size) => {
            await counted;
            return finish({ state: 'DONE', size });
          },
          (error: unknown) => {
            options.log?.warn({ err: error, job: job.id }, 'rebuild failed');
            return finish({ state: 'FAILED', error: error instanceof Error ? error.message : String(error) });
          },
        )
        .catch((error: unknown) => options.log?.warn({ err: error, job: job.id }, 'rebuild job record not saved'));
      return job;
    },

    /** The job, or null when there is none by that id (or it is older than keepSeconds). O(1). */
    async find(id: string): Promise<RebuildJob | null> {
      const hash = await redis.hgetall(jobKey(id));
      if (!hash.state) return null;
      const stale = hash.state === 'RUNNING' && Date.now() - Number(hash.beatAt) > staleMs;
      return {
        id,
        boardId: hash.boardId!,
        period: hash.period as Period,
        bucket: hash.bucket!,
        region: hash.region ? hash.region : null,
        state: stale ? 'FAILED' : (hash.state as RebuildState),
        rowsRead: Number(hash.rowsRead ?? 0),
        rowsTotal: Number(hash.rowsTotal ?? 0),
        size: hash.size === undefined ? null : Number(hash.size),
        error: stale ? 'the process running this rebuild stopped before it finished; start it again' : (hash.error ?? null),
        startedAt: new Date(Number(hash.startedAt)),
        finishedAt: hash.finishedAt ? new Date(Number(hash.finishedAt)) : null,
      };
    },
  };
}

export type RebuildJobs = ReturnType<typeof createRebuildJobs>;
