import type { Role } from '../auth/keys.js';
import type { StoredKey } from '../db/api-keys.js';
import type { Board } from '../model/board.js';
import type { Context } from './context.js';
import type { BucketArgs } from '../services/buckets.js';
import type { RebuildJob } from '../services/rebuild-jobs.js';
import type { IssuedKey } from '../writes/api-keys.js';
import type { StoreStatus } from '../writes/store-status.js';
import type { StoreProbe } from '../services/store-health.js';
import { notFound } from '../errors.js';

/** What answers the operators' fields: keys, rebuilds, store health. The arguments in, one call of the admin side out. */

export type { IssuedKey, RebuildJob, StoredKey, StoreProbe, StoreStatus };

/** Query.apiKeys. */
export const apiKeys = (ctx: Context): Promise<StoredKey[]> => ctx.admin.apiKeys();

/** Mutation.createApiKey. */
export const createApiKey = (args: { name: string; role: Role; boards: readonly string[] }, ctx: Context): Promise<IssuedKey> =>
  ctx.admin.createApiKey({ name: args.name.trim(), role: args.role, boards: args.boards });

/** Mutation.revokeApiKey: NOT_FOUND when no live key has that id or name. */
export async function revokeApiKey(args: { key: string }, ctx: Context): Promise<StoredKey[]> {
  const revoked = await ctx.admin.revokeApiKey(args.key);
  if (revoked.length === 0) throw notFound(`No live API key has the id or name "${args.key}".`);
  return revoked;
}

/** Query.rebuild. */
export const rebuild = (args: { id: string }, ctx: Context): Promise<RebuildJob | null> => ctx.admin.findRebuild(args.id);

/** Mutation.startRebuild. */
export const startRebuild = (args: BucketArgs, ctx: Context): Promise<RebuildJob> => ctx.admin.startRebuild(args);

/** Rebuild.board. */
export const rebuildBoard = (job: RebuildJob, ctx: Context): Promise<Board> => ctx.records.requireBoard(job.boardId);

/** Query.storeHealth. */
export const storeHealth = (ctx: Context): Promise<StoreStatus> => ctx.admin.storeStatus();
