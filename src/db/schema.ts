import { sql } from 'drizzle-orm';
import { bigint, boolean, check, doublePrecision, index, integer, json, jsonb, pgTable, primaryKey, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';

const timestamptz = (name?: string) => (name ? timestamp(name, { withTimezone: true, mode: 'date' }) : timestamp({ withTimezone: true, mode: 'date' }));

/** Board definitions. A board's packing follows from maxScore and epoch, which never change. */
export const boards = pgTable(
  'boards',
  {
    id: text().primaryKey(),
    title: text().notNull(),
    order: text({ enum: ['HIGH_FIRST', 'LOW_FIRST'] }).notNull(),
    aggregate: text({ enum: ['BEST', 'SUM'] }).notNull(),
    maxScore: bigint({ mode: 'number' }).notNull(),
    periods: text().array().notNull(),
    regions: text().array().notNull(),
    topSize: integer().notNull(),
    dailyRetentionDays: integer().notNull().default(7),
    weeklyRetentionDays: integer().notNull().default(35),
    monthlyRetentionDays: integer().notNull().default(396),
    /** How many sorted sets each bucket is split into (by CRC32 of the player id); fixed at creation. */
    shards: integer().notNull().default(1),
    /** The IANA zone whose calendar cuts the calendar buckets (canonical name, checked by the service). */
    timeZone: text().notNull().default('UTC'),
    /** How ranks are served when a read does not say: ORDINAL, COMPETITION or DENSE (DENSE fixed at creation). */
    rankStyle: text({ enum: ['ORDINAL', 'COMPETITION', 'DENSE'] })
      .notNull()
      .default('ORDINAL'),
    /** Regions whose calendar buckets follow a zone of their own: [{ region, timeZone }]. */
    regionTimeZones: jsonb().$type<{ region: string; timeZone: string }[]>().notNull().default([]),
    /**
     * Days without a result after which a player leaves the board's ALL_TIME and SEASON sorted sets
     * (jobs/inactive-players.ts); null: never (the default).
     */
    inactiveAfterDays: integer(),
    /** Seconds after a calendar bucket (or a season) ends during which results achieved in it still count; then it closes and is frozen. */
    closeGraceSeconds: integer().notNull().default(300),
    /** The board's league ({ tiers, cohortSize, promote, demote, period }, model/league.ts); null: none. Fixed at creation. */
    league: jsonb().$type<{ tiers: string[]; cohortSize: number; promote: number; demote: number; period: 'SEASON' | 'MONTHLY' | 'WEEKLY' | 'DAILY' }>(),
    /** Tournaments: only players in board_members may have results. Fixed at creation. */
    joinRequired: boolean().notNull().default(false),
    /** At most this many players may join (board_member_counts); null: no limit. */
    maxPlayers: integer(),
    /** At most this many results per player per bucket of the board's shortest period; null: no limit. */
    maxAttempts: integer(),
    /** Prize bands ({ name, fromRank, toRank, topPercent }[], model/rewards.ts), computed at every close; [] none. */
    rewards: jsonb().$type<{ name: string; fromRank: number | null; toRank: number | null; topPercent: number | null }[]>().notNull().default([]),
    /** Tie-break columns ({ name, order, max }[], model/board.ts), in order; [] none. Fixed at creation (the index packs them). */
    tieBreaks: jsonb().$type<{ name: string; order: 'HIGH_FIRST' | 'LOW_FIRST'; max: number }[]>().notNull().default([]),
    /** The smallest score accepted. */
    minScore: bigint({ mode: 'number' }).notNull().default(0),
    /** A result above this flags its player ('suspect: …'); null: never. */
    suspectAbove: doublePrecision(),
    /** A result more than this many times the player's previous best (fewer on LOW_FIRST) flags its player; null: never. */
    suspectJump: doublePrecision(),
    /** At most { results } results per player in any { perSeconds } seconds; null: no limit. */
    resultRate: jsonb().$type<{ results: number; perSeconds: number }>(),
    epoch: timestamptz().notNull(),
    createdAt: timestamptz().notNull().defaultNow(),
  },
  (table) => [
    check('boards_max_score_positive', sql`${table.maxScore} > 0`),
    check('boards_top_size_range', sql`${table.topSize} between 1 and 100`),
    check('boards_shards_range', sql`${table.shards} between 1 and 64`),
    check('boards_rank_style_known', sql`${table.rankStyle} in ('ORDINAL', 'COMPETITION', 'DENSE')`),
    check('boards_inactive_after_days_range', sql`${table.inactiveAfterDays} is null or ${table.inactiveAfterDays} between 1 and 36500`),
    check('boards_close_grace_seconds_range', sql`${table.closeGraceSeconds} between 0 and 31622400`),
    check('boards_max_players_positive', sql`${table.maxPlayers} is null or ${table.maxPlayers} > 0`),
    check('boards_max_attempts_positive', sql`${table.maxAttempts} is null or ${table.maxAttempts} > 0`),
    check('boards_min_score_range', sql`${table.minScore} between 0 and ${table.maxScore}`),
  ],
);

/**
 * Player profiles. A player may have scores without a profile. The write path asks which of a
 * group's players are flagged twice a group (in its transaction, and again after its index write):
 * players_flagged_idx holds only the flagged few, so each asking is a probe of a small index that
 * stays in memory rather than one random page of the whole table per player.
 */
export const players = pgTable(
  'players',
  {
    id: text().primaryKey(),
    displayName: text(),
    avatarUrl: text(),
    /** Set while the player is hidden from every board; their results are still recorded. */
    flaggedAt: timestamptz(),
    flagReason: text(),
    /**
     * The result that flagged the player automatically ({ boardId, matchId, score, tieBreakValues,
     * achievedAt }: a board's suspectAbove or suspectJump tripped); null when flagged by hand.
     */
    flagResult: jsonb().$type<{ boardId: string; matchId: string; score: number; tieBreakValues: number[]; achievedAt: string }>(),
    createdAt: timestamptz().notNull().defaultNow(),
    updatedAt: timestamptz().notNull().defaultNow(),
  },
  (table) => [
    index('players_flagged_idx')
      .on(table.id)
      .where(sql`${table.flaggedAt} is not null`),
  ],
);

/** Each player's friend list, as the game server last set it (one direction per row). */
export const friendships = pgTable(
  'friendships',
  {
    playerId: text().notNull(),
    friendId: text().notNull(),
  },
  (table) => [primaryKey({ columns: [table.playerId, table.friendId] }), index('friendships_friend_idx').on(table.friendId)],
);

/**
 * The score log: every accepted result, once, partitioned by the month of achievedAt (declarative
 * range partitioning; drizzle-kit cannot declare it, so drizzle/0006_results_by_month.sql does, and
 * the service creates each month's partition ahead of time, see db/partitions.ts). A partitioned
 * table's unique keys must include the partition key, so the idempotency key (board, matchId,
 * playerId) is enforced by result_keys below; this table's key adds achievedAt. (board, player)
 * leads the key so that an erasure finds a player's results with one probe per board and partition.
 */
export const results = pgTable(
  'results',
  {
    // No foreign key to boards, as result_keys has none: every write finds its board first
    // (requireBoard), and a group takes its boards' advisory lock shared and looks for their rows
    // once it holds it, so no result is logged for a board deleteBoard removed (db/board-deletion.ts).
    // The key cost PostgreSQL a trigger a row and a KEY SHARE lock on the board's row for every
    // concurrent transaction (about 10% of its CPU a result under submit-batch; bench/RESULTS.md,
    // 2026-12-04 05:10); the advisory lock is one a board a group.
    boardId: text().notNull(),
    matchId: text().notNull(),
    playerId: text().notNull(),
    score: bigint({ mode: 'number' }).notNull(),
    region: text(),
    achievedAt: timestamptz().notNull(),
    recordedAt: timestamptz().notNull().defaultNow(),
    /** The entry metadata the game sent (a JSON object of at most 1,024 bytes), as sent; null when none was. */
    metadata: json(),
    /** One value per tie-break column of the board, in order; null on a board without them. */
    tieBreakValues: bigint({ mode: 'number' }).array(),
  },
  (table) => [
    primaryKey({ columns: [table.boardId, table.playerId, table.matchId, table.achievedAt] }),
    // A BEST board's day, week, month and season are derived from the log (see keepsBoardScores):
    // rebuilding or counting one reads a span of achievedAt. Results arrive in about that order,
    // so a block-range index finds a day's blocks for the cost of a few pages, where a B-tree on
    // the column would be one more random insert per result.
    index('results_achieved_at_brin').using('brin', table.achievedAt),
  ],
);

/**
 * The idempotency key of the score log, unpartitioned so that (board, matchId, playerId) is unique
 * across every month: a replay is caught whatever achievedAt it carries (a retry that leaves
 * achievedAt out gets the server's clock again, possibly in the next month). Each key keeps what a
 * replay is answered with (when and where the first result was achieved). Written in the statement
 * that logs the result; kept when the result's partition is detached for archiving, so a replay of
 * an archived result is still a replay.
 */
export const resultKeys = pgTable(
  'result_keys',
  {
    boardId: text().notNull(),
    playerId: text().notNull(),
    matchId: text().notNull(),
    achievedAt: timestamptz().notNull(),
    region: text(),
  },
  (table) => [primaryKey({ columns: [table.boardId, table.playerId, table.matchId] })],
);

/**
 * Each player's board score per bucket, where the board keeps it as a row (keepsBoardScores in
 * model/board.ts: a BEST board's ALL_TIME, every bucket of a SUM board); the other buckets are
 * derived from the score log (db/derived-scores.ts). What the ranking index is rebuilt from.
 * `region` is '' for the global list so that it can be part of the key.
 */
export const boardScores = pgTable(
  'board_scores',
  {
    // No foreign key to boards, for the reason the score log has none.
    boardId: text().notNull(),
    period: text({ enum: ['ALL_TIME', 'SEASON', 'MONTHLY', 'WEEKLY', 'DAILY'] }).notNull(),
    bucket: text().notNull(),
    region: text().notNull().default(''),
    playerId: text().notNull(),
    score: bigint({ mode: 'number' }).notNull(),
    reachedAt: timestamptz().notNull(),
    /** The metadata of the result that set this score (BEST: the best; SUM: the latest non-zero part; see combine()). */
    metadata: json(),
    /** The tie-break values of the result that set this score; null on a board without columns. */
    tieBreakValues: bigint({ mode: 'number' }).array(),
  },
  (table) => [
    primaryKey({ columns: [table.boardId, table.period, table.bucket, table.region, table.playerId] }),
    index('board_scores_player_idx').on(table.playerId),
    // The console's player search finds a player with results but no profile by a prefix of their
    // id, case-insensitive (db/players.ts searchPlayers): every result leaves an ALL_TIME row, and
    // in byte order ("C") a prefix is a range of this index, walked one player at a time.
    index('board_scores_player_search_idx')
      .on(sql`(lower(${table.playerId}) collate "C")`, sql`(${table.playerId} collate "C")`)
      .where(sql`${table.period} = 'ALL_TIME'`),
  ],
);

/**
 * A board's seasons, numbered s1, s2, ... per board. Several may be not closed yet (closedAt null):
 * the current one and those scheduled ahead, whose spans never overlap (see db/seasons.ts insertSeason).
 */
export const seasons = pgTable(
  'seasons',
  {
    boardId: text()
      .notNull()
      .references(() => boards.id),
    id: text().notNull(),
    name: text().notNull(),
    startsAt: timestamptz().notNull(),
    endsAt: timestamptz(),
    closedAt: timestamptz(),
  },
  (table) => [
    primaryKey({ columns: [table.boardId, table.id] }),
    index('seasons_live_idx')
      .on(table.boardId, table.startsAt)
      .where(sql`${table.closedAt} is null`),
  ],
);

/**
 * The closed buckets: one row per list (a bucket of a board, `region` '' for the global list) whose
 * final standings are frozen in frozen_standings. Written in the transaction that freezes the list,
 * so a list is either open or closed with all its standings (see db/frozen.ts freezeLists). A
 * calendar bucket closes at its end plus the board's closeGraceSeconds, a season when it is closed.
 */
export const frozenBuckets = pgTable(
  'frozen_buckets',
  {
    boardId: text().notNull(),
    period: text({ enum: ['ALL_TIME', 'SEASON', 'MONTHLY', 'WEEKLY', 'DAILY'] }).notNull(),
    bucket: text().notNull(),
    region: text().notNull().default(''),
    startsAt: timestamptz().notNull(),
    endsAt: timestamptz(),
    closedAt: timestamptz().notNull(),
    /** How many players the list ranked when frozen: its last rank (erased players' rows keep theirs). */
    size: integer().notNull(),
  },
  (table) => [primaryKey({ columns: [table.boardId, table.period, table.bucket, table.region] })],
);

/**
 * A closed bucket's final standings, in rank order (1..size, no gaps), as the index ranked them at
 * the close. playerId (and metadata) are cleared when the player is erased; the row keeps its rank.
 */
export const frozenStandings = pgTable(
  'frozen_standings',
  {
    boardId: text().notNull(),
    period: text({ enum: ['ALL_TIME', 'SEASON', 'MONTHLY', 'WEEKLY', 'DAILY'] }).notNull(),
    bucket: text().notNull(),
    region: text().notNull().default(''),
    rank: integer().notNull(),
    playerId: text(),
    score: bigint({ mode: 'number' }).notNull(),
    reachedAt: timestamptz().notNull(),
    /** The frozen board score's metadata; null once the player is erased. */
    metadata: json(),
    /** The frozen board score's tie-break values; null on a board without columns. */
    tieBreakValues: bigint({ mode: 'number' }).array(),
  },
  (table) => [
    primaryKey({ columns: [table.boardId, table.period, table.bucket, table.region, table.rank] }),
    // One player's standing in a bucket is one probe; their history (every bucket of a period) one
    // range; an erasure finds every row of theirs by the leading column.
    index('frozen_standings_player_idx').on(table.playerId, table.boardId, table.period, table.region, table.bucket),
    // A score's first rank (its COMPETITION rank), the next distinct score (DENSE) and a score
    // range's count (a distribution's bin) are probes of this index: ranks follow scores.
    index('frozen_standings_score_idx').on(table.boardId, table.period, table.bucket, table.region, table.score, table.rank),
  ],
);

/**
 * A tournament's players (issue 57): who joined which board, first come first served. A board with
 * joinRequired takes results only from its members.
 */
export const boardMembers = pgTable(
  'board_members',
  {
    boardId: text().notNull(),
    playerId: text().notNull(),
    joinedAt: timestamptz().notNull().defaultNow(),
  },
  (table) => [primaryKey({ columns: [table.boardId, table.playerId] })],
);

/**
 * How many players joined each board: one row a board, updated in the joining transaction under its
 * row lock, so that maxPlayers is never passed and Board.joined is one probe, not a count.
 */
export const boardMemberCounts = pgTable('board_member_counts', {
  boardId: text().primaryKey(),
  joined: integer().notNull().default(0),
});

/**
 * Each league player's tier: the one their next placement uses (model/league.ts). `lastRound` is
 * the latest round they were placed in, and `lastRoundEndsAt` its end: a first result in a later
 * round waits (league_waiting) while that round is not closed, since its close may move them.
 */
export const leaguePlayers = pgTable(
  'league_players',
  {
    boardId: text().notNull(),
    playerId: text().notNull(),
    /** Index into the league's tiers, 0 the first (best). */
    tier: integer().notNull(),
    lastRound: text(),
    lastRoundEndsAt: timestamptz(),
  },
  (table) => [primaryKey({ columns: [table.boardId, table.playerId] })],
);

/**
 * The cohorts of each league round: one row per cohort, its size kept in the placing transaction
 * under the round's lock (db/leagues.ts), so a placement finds the open cohort of a tier in one probe.
 */
export const leagueCohorts = pgTable(
  'league_cohorts',
  {
    boardId: text().notNull(),
    round: text().notNull(),
    tier: integer().notNull(),
    /** 1-based, in the order the tier's cohorts of the round were opened. */
    number: integer().notNull(),
    size: integer().notNull(),
  },
  (table) => [primaryKey({ columns: [table.boardId, table.round, table.tier, table.number] })],
);

/**
 * Who is in which cohort of a round: a player is placed once a round, by their first result in it.
 * `outcome` is written by the round's close (PROMOTED, STAYED, DEMOTED); null while it is open.
 */
export const cohortMembers = pgTable(
  'cohort_members',
  {
    boardId: text().notNull(),
    round: text().notNull(),
    tier: integer().notNull(),
    number: integer().notNull(),
    playerId: text().notNull(),
    placedAt: timestamptz().notNull().defaultNow(),
    outcome: text({ enum: ['PROMOTED', 'STAYED', 'DEMOTED'] }),
  },
  (table) => [
    primaryKey({ columns: [table.boardId, table.round, table.playerId] }),
    index('cohort_members_cohort_idx').on(table.boardId, table.round, table.tier, table.number),
    // An erasure finds a player's memberships by the leading column.
    index('cohort_members_player_idx').on(table.playerId),
  ],
);

/**
 * The league rounds closed: one row per round, claimed first in the transaction that writes its
 * outcomes and moves its players' tiers, so a round closes exactly once and a crash leaves it open.
 */
export const leagueRounds = pgTable(
  'league_rounds',
  {
    boardId: text().notNull(),
    round: text().notNull(),
    closedAt: timestamptz().notNull(),
  },
  (table) => [primaryKey({ columns: [table.boardId, table.round] })],
);

/**
 * First results of a round whose player waits for their previous round to close (its close may
 * move their tier); that close places them, in arrival order.
 */
export const leagueWaiting = pgTable(
  'league_waiting',
  {
    boardId: text().notNull(),
    round: text().notNull(),
    playerId: text().notNull(),
    arrivedAt: timestamptz().notNull().defaultNow(),
  },
  (table) => [primaryKey({ columns: [table.boardId, table.round, table.playerId] })],
);

/**
 * Each closed list's awards (issue 58): the players each reward band covered in its final
 * standings, computed once in the freeze's transaction (db/awards.ts), kept as long as the frozen
 * standings are (dropped with them). `rank` is the player's frozen rank (frozen_standings.rank),
 * so a page of awards is band by band in rank order and each award's standing is one probe.
 */
export const awards = pgTable(
  'awards',
  {
    boardId: text().notNull(),
    period: text({ enum: ['ALL_TIME', 'SEASON', 'MONTHLY', 'WEEKLY', 'DAILY'] }).notNull(),
    bucket: text().notNull(),
    region: text().notNull().default(''),
    /** The band's place in the board's rewards at the close. */
    bandIndex: integer().notNull(),
    /** The band's name at the close. */
    band: text().notNull(),
    rank: integer().notNull(),
    playerId: text().notNull(),
  },
  (table) => [
    primaryKey({ columns: [table.boardId, table.period, table.bucket, table.region, table.bandIndex, table.rank] }),
    // An erasure finds a player's awards by the leading column.
    index('awards_player_idx').on(table.playerId),
  ],
);

/**
 * Webhooks (issue 58): where the service sends which events, signed with the webhook's secret
 * (whsec_…, Standard Webhooks). `failing` counts deliveries that failed in a row.
 */
export const webhooks = pgTable('webhooks', {
  id: text().primaryKey(),
  url: text().notNull(),
  events: text().array().notNull(),
  /** Empty: every board. */
  boards: text()
    .array()
    .notNull()
    .default(sql`'{}'::text[]`),
  secret: text().notNull(),
  createdAt: timestamptz().notNull().defaultNow(),
  failing: integer().notNull().default(0),
  lastDeliveredAt: timestamptz(),
  lastError: text(),
});

/**
 * The webhook outbox's events: written in the transaction of what caused them (a close, a round's
 * close) or right after it (an overtaking, a top's change), only when some webhook wants them
 * (db/webhook-outbox.ts); one row an event, whatever the number of webhooks it goes to.
 */
export const webhookEvents = pgTable('webhook_events', {
  id: bigint({ mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
  type: text({ enum: ['BUCKET_CLOSED', 'LEAGUE_ROUND_CLOSED', 'FRIEND_OVERTAKEN', 'TOP_CHANGED'] }).notNull(),
  boardId: text().notNull(),
  data: jsonb().notNull(),
  occurredAt: timestamptz().notNull(),
});

/**
 * One event's delivery to one webhook: its id is the webhook-id header, the same on every attempt.
 * A PENDING delivery is attempted once nextAttemptAt has passed, by the one process that claims it
 * (jobs/webhook-delivery.ts).
 */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: text()
      .primaryKey()
      .default(sql`'msg_' || replace(gen_random_uuid()::text, '-', '')`),
    webhookId: text()
      .notNull()
      .references(() => webhooks.id, { onDelete: 'cascade' }),
    eventId: bigint({ mode: 'number' })
      .notNull()
      .references(() => webhookEvents.id, { onDelete: 'cascade' }),
    status: text({ enum: ['PENDING', 'DELIVERED', 'FAILED'] })
      .notNull()
      .default('PENDING'),
    attempts: integer().notNull().default(0),
    nextAttemptAt: timestamptz(),
    lastAttemptAt: timestamptz(),
    lastError: text(),
    createdAt: timestamptz().notNull().defaultNow(),
  },
  (table) => [
    // What is due: a range of the pending ones by time.
    index('webhook_deliveries_due_idx')
      .on(table.nextAttemptAt)
      .where(sql`${table.status} = 'PENDING'`),
    // A webhook's deliveries, newest first, a keyset page.
    index('webhook_deliveries_webhook_idx').on(table.webhookId, table.createdAt, table.id),
    index('webhook_deliveries_event_idx').on(table.eventId),
    check('webhook_deliveries_status_known', sql`${table.status} in ('PENDING', 'DELIVERED', 'FAILED')`),
  ],
);

/** API keys made with the CLI. Only a SHA-256 digest of each key is kept; the key is printed once. */
export const apiKeys = pgTable(
  'api_keys',
  {
    id: text().primaryKey(),
    name: text().notNull(),
    role: text({ enum: ['admin', 'server'] }).notNull(),
    digest: text().notNull(),
    /** Game-server keys: the boards the key may write to; empty, every board. */
    boards: text()
      .array()
      .notNull()
      .default(sql`'{}'::text[]`),
    createdAt: timestamptz().notNull().defaultNow(),
    revokedAt: timestamptz(),
  },
  (table) => [uniqueIndex('api_keys_digest_idx').on(table.digest)],
);

/**
 * The index outbox: one row per committed group (see db/results.ts recordGroup), naming the
 * (board, player) pairs it touched in two arrays of the same length, written in the group's own
 * transaction and deleted once the ranking index holds the group's board scores: a row per group,
 * not per result. A row that stays (Redis was away, or the process died between the commit and
 * the index write) is re-applied by the catch-up job (src/jobs/index-catch-up.ts) from the
 * players' current board scores, so the index never silently stays behind. Usually nearly empty:
 * rows live for the fraction of a second between a commit and its index write. A row of the shape
 * before 0010 (one pair in boardId and playerId, the arrays null) is still read.
 */
export const indexBacklog = pgTable('index_backlog', {
  id: bigint({ mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
  boardId: text(),
  playerId: text(),
  boardIds: text().array(),
  playerIds: text().array(),
  enqueuedAt: timestamptz().notNull().defaultNow(),
});

/**
 * The score-log months detached for archiving (`partitions detach`): remembered so that no process
 * makes that month's partition again once the detached table is dumped and dropped, and its late
 * results keep going to the default partition, as the README's archive recipe says.
 */
export const archivedResultMonths = pgTable('archived_result_months', {
  /** `YYYY-MM` (UTC). */
  month: text().primaryKey(),
  detachedAt: timestamptz().notNull().defaultNow(),
});

/**
 * Secrets the service makes for itself and every process of a deployment shares (the page-cursor
 * signing key): random, made by the first process that needs one, never derived from an API key.
 */
export const serviceSecrets = pgTable('service_secrets', {
  name: text().primaryKey(),
  value: text().notNull(),
  createdAt: timestamptz().notNull().defaultNow(),
});

/**
 * The audit of removeEntry (issue 60): one row per removal that took something, naming who asked
 * (the API key's id), when, why, and how many of the player's results on the board went. No
 * foreign key to boards: the record outlives the board (deleteBoard keeps it), and outlives the
 * player's later results. Newest first by id, for every board, one board, one player or both.
 */
export const entryRemovals = pgTable(
  'entry_removals',
  {
    id: bigint({ mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    boardId: text().notNull(),
    playerId: text().notNull(),
    reason: text().notNull(),
    /** The id of the API key that asked (its digest prefix). */
    removedBy: text().notNull(),
    removedAt: timestamptz().notNull(),
    /** How many of the player's results on the board were removed. */
    results: integer().notNull(),
  },
  (table) => [index('entry_removals_board_idx').on(table.boardId, table.id), index('entry_removals_player_idx').on(table.playerId, table.id)],
);
