import { setTimeout as sleep } from 'node:timers/promises';
import type { Context } from '../resolvers/context.js';
import { readTop } from '../resolvers/reads.js';
import { type BucketArgs, requireBoard } from '../resolvers/buckets.js';
import { badInput } from '../resolvers/errors.js';
import type { TopBoard } from '../resolvers/standings.js';

/** How often a watched top is read again. */
export const TOP_POLL_MS = 1_000;

const fingerprint = (view: TopBoard) => JSON.stringify(view.entries.map((e) => [e.playerId, e.score, e.rank, e.achievedAt.getTime()]));

/**
 * The views of one bucket's top: the current one at once, then each one whose entries differ
 * (who, their order, or a score). This first version reads the top once a second per watcher;
 * write-time detection over Redis pub/sub replaces the polling (DESIGN.md, "Live").
 */
export async function* watchTop(ctx: Context, args: BucketArgs & { limit: number }, signal?: AbortSignal): AsyncGenerator<TopBoard> {
  const board = await requireBoard(ctx, args.board);
  if (args.limit > board.topSize) throw badInput(`limit must be at most board "${board.id}"'s topSize of ${board.topSize}.`);
  let last = await readTop(ctx, args);
  yield last;
  while (!signal?.aborted) {
    await sleep(TOP_POLL_MS, undefined, { signal }).catch(() => undefined);
    if (signal?.aborted) return;
    const next = await readTop(ctx, args);
    if (fingerprint(next) !== fingerprint(last)) yield next;
    last = next;
  }
}
