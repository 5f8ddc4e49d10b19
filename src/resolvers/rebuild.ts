import { rebuildBucket } from '../jobs/rebuild-bucket.js';
import { RebuildRunningError } from '../ranking/index.js';
import { bucketKey } from '../ranking/keys.js';
import { type BucketArgs, resolveBoardBucket } from './buckets.js';
import type { Context } from './context.js';
import { clientError } from './errors.js';

/**
 * Rebuilds one bucket's ranking index from PostgreSQL and swaps it in atomically; answers the
 * number of ranked players. NOT_FOUND / BAD_USER_INPUT as every read of a bucket; RATE_LIMITED
 * while another rebuild of the same bucket runs. O(N log N) for N board scores.
 */
export async function rebuildBoard(ctx: Context, args: BucketArgs): Promise<number> {
  const at = await resolveBoardBucket(ctx, args);
  const started = performance.now();
  try {
    const size = await rebuildBucket(ctx.services, at);
    ctx.services.log.info({ key: bucketKey(at), size, ms: Math.round(performance.now() - started) }, 'bucket rebuilt');
    return size;
  } catch (error) {
    if (error instanceof RebuildRunningError) {
      throw clientError('RATE_LIMITED', 'A rebuild of this bucket is running already; retry once it has finished.');
    }
    throw error;
  }
}
