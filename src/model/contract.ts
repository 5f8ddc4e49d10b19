/**
 * The limits the GraphQL contract states, in one module below every layer: the schema states them
 * to clients (as argument checks and descriptions), the transports price documents by them, and
 * the read and write sides and the index hold to them. Each is said once here so that the schema
 * and the transports need not reach into the layers that enforce them.
 */

/** The most results one submitScores call may carry. */
export const MAX_BATCH = 1_000;

/** The most standings one page holds. */
export const MAX_PAGE = 1_000;

/** The most friends a list holds, and so the most a friends read ranks. */
export const MAX_FRIENDS = 1_000;

/** The most regions a board keeps (createBoard's limit too). */
export const MAX_REGIONS = 32;

/** The most shards a bucket may be split into. */
export const MAX_SHARDS = 64;

/**
 * The largest maxScore a board may have: 549,755,813,887 (2^39 - 1). The index packs a score and
 * its tie-break time into one double's 53 bits and keeps at least 14 of them for the time.
 */
export const MAX_BOARD_SCORE = 2 ** 39 - 1;

/** The most bins a score distribution is cut into (Query.scoreDistribution's `bins`). */
export const MAX_BINS = 100;

/** The most buckets one page of Board.periodBuckets or Query.history holds (their `first`). */
export const MAX_BUCKET_PAGE = 100;

/** The most boards a game-server key may be scoped to (createApiKey's `boards`; as a webhook's). */
export const MAX_KEY_BOARDS = 100;
