import type { Standing } from '../resolvers/views.js';
import * as reads from '../resolvers/reads.js';
import { builder } from './builder.js';
import { RANK_STYLE_ARG } from './enums.js';
import { bucketArgs, bucketArgsSchema } from './bucket-args.js';
import { PlayerRef } from './player.js';
import { idSchema, intRange } from './validation.js';

export const StandingRef = builder.objectRef<Standing>('Standing');

StandingRef.implement({
  fields: (t) => ({
    rank: t.exposeInt('rank', {
      description:
        "1-based. Equal scores are ordered by who reached the score first, to the board's tie-break unit (a millisecond on most boards, coarser for very large maxScores); equal scores reached within one unit are ordered by player id.",
    }),
    score: t.exposeFloat('score'),
    percentile: t.exposeFloat('percentile', {
      description: 'The percentage of ranked players this player is ahead of: 100 * (size - rank) / size.',
    }),
    achievedAt: t.field({
      type: 'DateTime',
      description: 'When the player reached this score, as recorded, to the millisecond.',
      resolve: (standing, _args, ctx) => reads.achievedAt(standing, ctx),
    }),
    metadata: t.field({
      type: 'JSON',
      nullable: true,
      description: 'The metadata of the result that set this score (BEST: the best result; SUM: the latest non-zero one); null when none was sent.',
      resolve: (standing, _args, ctx) => reads.metadata(standing, ctx),
    }),
    tieBreakValues: t.field({
      type: ['Float'],
      description: 'The values of the result that set this standing, one per tieBreak column; empty on a board without them.',
      resolve: (standing) => standing.tieBreakValues ?? [],
    }),
    // Served as held: every read that serves standings fills their players when the selection
    // asks for them (the read side's Want.player), so a read's names are one load of one key
    // (its list of ids), where a resolver here would load each row's name on its own: a promise
    // and a loader entry a name, what most of a read's names allocated. The shape's `player` is
    // optional (filled only when asked for), which Pothos would type as a nullable field; the
    // field stays non-null, as the contract has it. (The lint rule misreads expose's overloads:
    // without the assertion, tsc refuses the call.)
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion
    player: t.expose('player', { type: PlayerRef } as { type: typeof PlayerRef; nullable: true }),
  }),
});

/** The rules of a read of one player's place: a bucket's arguments and the player's id. */
const onePlayerSchema = bucketArgsSchema.extend({ playerId: idSchema });

builder.queryFields((t) => ({
  standing: t.field({
    type: StandingRef,
    nullable: true,
    description: "One player's standing, or null when the player has no score there.",
    args: { ...bucketArgs(t.arg), playerId: t.arg.id({ required: true }), rankStyle: t.arg(RANK_STYLE_ARG) },
    validate: onePlayerSchema,
    resolve: (_root, args, ctx, info) => reads.standing(args, ctx, info),
  }),
  around: t.field({
    type: [StandingRef],
    description: 'The player and up to `radius` (0 to 50) players either side, in rank order. Empty when the player has no score there.',
    args: {
      ...bucketArgs(t.arg),
      playerId: t.arg.id({ required: true }),
      radius: t.arg.int({ required: true, defaultValue: 5 }),
      rankStyle: t.arg(RANK_STYLE_ARG),
      fill: t.arg.boolean({
        required: true,
        defaultValue: false,
        description:
          'Added (issue 25): when true, a player near either end still gets 2 × radius + 1 rows (or the whole board when smaller), the window shifted inward.',
      }),
    },
    validate: onePlayerSchema.extend({ radius: intRange(0, 50, 'radius') }),
    resolve: (_root, args, ctx, info) => reads.around(args, ctx, info),
  }),
  friends: t.field({
    type: [StandingRef],
    description: "The player and the player's friends who have a score there, in rank order, each with their rank on the whole board.",
    args: { ...bucketArgs(t.arg), playerId: t.arg.id({ required: true }), rankStyle: t.arg(RANK_STYLE_ARG) },
    validate: onePlayerSchema,
    resolve: (_root, args, ctx, info) => reads.friends(args, ctx, info),
  }),
}));
