/**
 * Webhooks (issue 58): what the service tells a studio's backend, signed per Standard Webhooks and
 * delivered at least once from a PostgreSQL outbox (db/webhook-outbox.ts). The vocabulary and the
 * shape of each event's `data`, shared by what writes events and what delivers them.
 */

export const WEBHOOK_EVENTS = ['BUCKET_CLOSED', 'LEAGUE_ROUND_CLOSED', 'FRIEND_OVERTAKEN', 'TOP_CHANGED'] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

export const DELIVERY_STATUSES = ['PENDING', 'DELIVERED', 'FAILED'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

/** The `type` of a delivery's body: the event's name in the receivers' usual dotted lower case. */
export const EVENT_TYPES: Record<WebhookEvent, string> = {
  BUCKET_CLOSED: 'bucket.closed',
  LEAGUE_ROUND_CLOSED: 'league.round_closed',
  FRIEND_OVERTAKEN: 'friend.overtaken',
  TOP_CHANGED: 'top.changed',
};

/** @default 2,048 characters a webhook's url. */
export const MAX_WEBHOOK_URL_LENGTH = 2_048;
/** @default 100 boards a webhook names. */
export const MAX_WEBHOOK_BOARDS = 100;
/** @default 100 webhooks a deployment. */
export const MAX_WEBHOOKS = 100;
/** A delivery whose receiver answered no 2xx within this is retried. */
export const DELIVERY_TIMEOUT_MS = 5_000;
/** A delivery still failing this long after its event is given up (FAILED). */
export const DELIVERY_GIVE_UP_MS = 24 * 60 * 60_000;
/** How many awards, and how many league outcomes, one event carries at most; the rest through `awards` (and the next pages). */
export const EVENT_PAGE_SIZE = 1_000;

/** A standing as events carry it: the fields of the GraphQL Standing, the player flattened. */
export interface StandingData {
  rank: number;
  playerId: string;
  displayName: string | null;
  score: number;
  achievedAt: string;
  /** The values of the result that set the standing, one per tie-break column; left out on a board without them. */
  tieBreakValues?: number[];
}

/** BUCKET_CLOSED's data: one closed list (a bucket's global list or one region's). */
export interface BucketClosedData {
  boardId: string;
  period: string;
  bucket: string;
  /** null: the global list. */
  region: string | null;
  closedAt: string;
  /** How many players the list ranked. */
  size: number;
  /** Its final top: the board's topSize first standings. */
  top: StandingData[];
  /** The first {@link EVENT_PAGE_SIZE} awards, band by band in rank order; the rest through `awards`. */
  awards: { id: string; band: string; standing: StandingData }[];
  /** How many awards the list has in all. */
  awardCount: number;
}

/** LEAGUE_ROUND_CLOSED's data: one page of a closed round's outcomes. */
export interface LeagueRoundClosedData {
  boardId: string;
  /** The round's bucket label. */
  round: string;
  closedAt: string;
  /** 1-based, of `pages`. */
  page: number;
  pages: number;
  outcomes: { playerId: string; tier: string; cohort: number; rank: number; outcome: 'PROMOTED' | 'STAYED' | 'DEMOTED'; nextTier: string }[];
}

/**
 * FRIEND_OVERTAKEN's data: one result's move in one list and everyone it passed who lists the
 * mover as a friend (the GraphQL Overtaken's `you`, one per player passed), so a receiver sends a
 * notification per player from one delivery, and a result passing fifty friends costs one delivery,
 * not fifty.
 */
export interface FriendOvertakenData {
  boardId: string;
  period: string;
  bucket: string;
  /** The friend who passed, as they stand now. */
  by: StandingData;
  /** The players passed, as they stand now, the closest first (at most 100). */
  passed: StandingData[];
  at: string;
}

/** TOP_CHANGED's data: the GraphQL TopBoard with limit = the board's topSize. */
export interface TopChangedData {
  boardId: string;
  period: string;
  bucket: string;
  region: string | null;
  startsAt: string | null;
  endsAt: string | null;
  entries: StandingData[];
  size: number;
  asOf: string;
}

export interface EventData {
  BUCKET_CLOSED: BucketClosedData;
  LEAGUE_ROUND_CLOSED: LeagueRoundClosedData;
  FRIEND_OVERTAKEN: FriendOvertakenData;
  TOP_CHANGED: TopChangedData;
}

/**
 * Which events some webhook wants, as a process knows it (services/webhook-directory.ts): what the
 * write side asks before it computes an event that costs something to compute (an overtaking, a
 * top), so a deployment with no such webhook pays nothing. A cache, renewed when a webhook is
 * created or deleted in any process.
 */
export interface WebhookInterest {
  /** Whether some webhook wants `event` of board `boardId`. O(1). */
  wants(boardId: string, event: WebhookEvent): boolean;
}

/** How webhooks are delivered (AppDeps.webhooks). */
export interface WebhookOptions {
  /**
   * Whether a webhook may be sent over http to a loopback or private address (WEBHOOK_ALLOW_PRIVATE).
   * @default false: only https to public addresses, checked at creation and again at each delivery.
   */
  allowPrivate?: boolean | undefined;
  /**
   * Resolves a webhook's host name to its addresses (as dns.lookup with `all: true`), at creation
   * and at each delivery, where the address checked is the one connected to. A test gives its own to
   * make a public-looking name resolve to loopback.
   * @default the system's resolver
   */
  lookup?: ((hostname: string) => Promise<{ address: string; family: number }[]>) | undefined;
}

/** The first retry's delay, doubled each attempt after, up to {@link MAX_RETRY_DELAY_MS}. */
export const FIRST_RETRY_DELAY_MS = 5_000;
/** The longest wait between two attempts. */
export const MAX_RETRY_DELAY_MS = 60 * 60_000;

/**
 * How long after its `attempts`-th failed attempt a delivery is tried again: exponential (5 s, 10 s,
 * 20 s, … up to an hour) with full jitter over the upper half, so that the deliveries a dead receiver
 * failed together do not all come back at the same instant. `random` in [0, 1) (Math.random; a test
 * gives its own). Pure.
 */
export function nextAttemptDelayMs(attempts: number, random: () => number): number {
  const exponent = Math.min(Math.max(attempts - 1, 0), 30);
  const ceiling = Math.min(FIRST_RETRY_DELAY_MS * 2 ** exponent, MAX_RETRY_DELAY_MS);
  return Math.round(ceiling / 2 + (ceiling / 2) * random());
}
