import type { GraphQLResolveInfo } from 'graphql';
import type { Context } from './context.js';
import type { SubmitScoreInput, SubmitScorePayload } from '../writes/submit.js';
import { selectsField } from './want.js';

export type { SubmitScorePayload };

/**
 * What answers submitScore and submitScores: the inputs in, one call of the write side out
 * (src/writes/submit.ts), then the names of the standings it answers when the selection asks for
 * them (one load of the read side's for the whole answer).
 */

/** Who submits (auth has run: only callers with a key reach a submission), the boards their key may write to, and when the request came in. */
const submitterOf = (ctx: Context) => ({ keyId: ctx.caller?.keyId ?? null, boards: ctx.caller?.boards, startedAt: ctx.startedAt });

const withStandingPlayers = (ctx: Context, payloads: readonly SubmitScorePayload[], info: GraphQLResolveInfo) =>
  ctx.reads.name(
    payloads.flatMap((payload) => payload.standings.map(({ standing }) => standing)),
    selectsField(info, 'standings', 'standing', 'player'),
  );

/** Mutation.submitScore. */
export async function submitScore(args: { input: SubmitScoreInput }, ctx: Context, info: GraphQLResolveInfo): Promise<SubmitScorePayload> {
  const [payload] = await ctx.writes.submitScores([args.input], { ...submitterOf(ctx), batch: false });
  await withStandingPlayers(ctx, [payload!], info);
  return payload!;
}

/** Mutation.submitScores. */
export async function submitScores(args: { inputs: SubmitScoreInput[] }, ctx: Context, info: GraphQLResolveInfo): Promise<SubmitScorePayload[]> {
  const payloads = await ctx.writes.submitScores(args.inputs, submitterOf(ctx));
  await withStandingPlayers(ctx, payloads, info);
  return payloads;
}
