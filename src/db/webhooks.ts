import type { Sql } from 'postgres';
import type { Logger } from 'pino';
import type { Database } from './client.js';
import type { DeliveryStatus, WebhookEvent } from '../model/webhooks.js';

/**
 * Webhooks and their deliveries (issue 58): the admin's records, the page of a webhook's
 * deliveries, and the delivery job's claims and outcomes. Events get in through db/webhook-outbox.ts.
 */

/** A webhook as the admin sees it: never its secret, which is shown once at creation. */
export interface StoredWebhook {
  id: string;
  url: string;
  events: WebhookEvent[];
  /** Empty: every board. */
  boards: string[];
  createdAt: Date;
  failing: number;
  lastDeliveredAt: Date | null;
  lastError: string | null;
}

/** One delivery as webhookDeliveries pages it; `createdUs` (its created_at in microseconds) is its place in the page. */
export interface StoredDelivery {
  id: string;
  webhookId: string;
  event: WebhookEvent;
  status: DeliveryStatus;
  attempts: number;
  lastAttemptAt: Date | null;
  nextAttemptAt: Date | null;
  lastError: string | null;
  createdUs: number;
}

/** A delivery the job claimed: what to send where, signed with which secret. */
export interface ClaimedDelivery {
  id: string;
  webhookId: string;
  url: string;
  secret: string;
  /** This attempt's number, 1 the first. */
  attempts: number;
  type: WebhookEvent;
  data: unknown;
  occurredAt: Date;
}

/** Every process listens on this channel and reloads which events webhooks want. */
export const WEBHOOKS_CHANGED_CHANNEL = 'leaderboard_webhooks_changed';

/** The pool hands timestamps back as text: dates here. */
const at = (value: Date | string | null): Date | null => (value === null ? null : new Date(value));
const asWebhook = (row: StoredWebhook): StoredWebhook => ({ ...row, createdAt: at(row.createdAt)!, lastDeliveredAt: at(row.lastDeliveredAt) });
const asDelivery = (row: StoredDelivery): StoredDelivery => ({ ...row, lastAttemptAt: at(row.lastAttemptAt), nextAttemptAt: at(row.nextAttemptAt) });

const webhookColumns = (sql: Sql) =>
  sql`id, url, events, boards, created_at as "createdAt", failing, last_delivered_at as "lastDeliveredAt", last_error as "lastError"`;
const deliveryColumns = (sql: Sql) => sql`
  d.id, d.webhook_id as "webhookId", e.type as event, d.status, d.attempts, d.last_attempt_at as "lastAttemptAt",
  d.next_attempt_at as "nextAttemptAt", d.last_error as "lastError",
  (extract(epoch from d.created_at) * 1000000)::bigint::float8 as "createdUs"`;

/**
 * Inserts a webhook unless `max` exist already (null then), counted under a transaction lock so two
 * creations at once cannot both pass; every process is told (WEBHOOKS_CHANGED_CHANNEL, on commit).
 */
export async function insertWebhook(
  sql: Sql,
  webhook: { id: string; url: string; events: readonly WebhookEvent[]; boards: readonly string[]; secret: string; createdAt: Date },
  max: number,
): Promise<StoredWebhook | null> {
  return sql.begin<StoredWebhook | null>(async (tx) => {
    await tx`select pg_advisory_xact_lock(hashtext(${WEBHOOKS_CHANGED_CHANNEL}))`;
    const [count] = await tx<{ n: number }[]>`select count(*)::int as n from webhooks`;
    if ((count?.n ?? 0) >= max) return null;
    const [row] = await tx<StoredWebhook[]>`
      insert into webhooks (id, url, events, boards, secret, created_at)
      values (${webhook.id}, ${webhook.url}, ${tx.array(webhook.events as string[])}, ${tx.array(webhook.boards as string[])}, ${webhook.secret}, ${webhook.createdAt.toISOString()})
      returning ${webhookColumns(tx as unknown as Sql)}`;
    await tx`select pg_notify(${WEBHOOKS_CHANGED_CHANNEL}, ${webhook.id})`;
    return asWebhook(row!);
  });
}

/** Every webhook, oldest first. O(W), W ≤ MAX_WEBHOOKS. */
export async function listWebhooks(sql: Sql): Promise<StoredWebhook[]> {
  return (await sql<StoredWebhook[]>`select ${webhookColumns(sql)} from webhooks order by created_at, id`).map(asWebhook);
}

/** Deletes a webhook and (cascade) its deliveries; whether it existed. Every process is told. */
export async function deleteWebhook(sql: Sql, id: string): Promise<boolean> {
  return sql.begin<boolean>(async (tx) => {
    const deleted = await tx`delete from webhooks where id = ${id}`;
    if (deleted.count > 0) await tx`select pg_notify(${WEBHOOKS_CHANGED_CHANNEL}, ${id})`;
    return deleted.count > 0;
  });
}

/**
 * One page of a webhook's deliveries, newest first, after the delivery at (`after.createdUs`,
 * `after.id`): a keyset walk of webhook_deliveries_webhook_idx backwards, O(first) when no status
 * is asked for (a status filters along the walk).
 */
export async function pageDeliveries(
  sql: Sql,
  args: { webhookId: string; status: DeliveryStatus | null; first: number; after: { createdUs: number; id: string } | null },
): Promise<StoredDelivery[]> {
  const { webhookId, status, first, after } = args;
  const rows = await sql<StoredDelivery[]>`
    select ${deliveryColumns(sql)}
    from webhook_deliveries d join webhook_events e on e.id = d.event_id
    where d.webhook_id = ${webhookId}
      ${status ? sql`and d.status = ${status}` : sql``}
      ${after ? sql`and (d.created_at, d.id) < (timestamptz 'epoch' + ${after.createdUs}::bigint * interval '1 microsecond', ${after.id})` : sql``}
    order by d.created_at desc, d.id desc
    limit ${first}`;
  return rows.map(asDelivery);
}

/**
 * Puts a FAILED or DELIVERED delivery back to PENDING, due at `now`, with the same id (so the
 * same webhook-id header). Answers it; `pending` when it is PENDING already; null when none has the id.
 */
export async function redeliver(sql: Sql, id: string, now: Date): Promise<StoredDelivery | 'pending' | null> {
  const [row] = await sql<StoredDelivery[]>`
    with changed as (
      update webhook_deliveries set status = 'PENDING', next_attempt_at = ${now.toISOString()}
      where id = ${id} and status in ('FAILED', 'DELIVERED')
      returning *
    )
    select ${deliveryColumns(sql)} from changed d join webhook_events e on e.id = d.event_id`;
  if (row) return asDelivery(row);
  const [existing] = await sql<{ status: string }[]>`select status from webhook_deliveries where id = ${id}`;
  return existing ? 'pending' : null;
}

/**
 * Claims up to `limit` due deliveries for this process, at most `perWebhook` less what it has in
 * flight (`inFlight`) of each webhook, the longest due first. The rows are locked with SKIP LOCKED
 * while they are claimed, and a claim moves their next attempt `leaseMs` ahead in the same
 * statement: whatever the number of processes, a delivery is claimed by one of them at a time. A
 * process that dies with a claim leaves it due again once the lease passes: at least once. O(W ×
 * perWebhook) rows locked, W the webhooks.
 */
export async function claimDeliveries(
  sql: Sql,
  args: { now: Date; limit: number; perWebhook: number; inFlight: Record<string, number>; leaseMs: number },
): Promise<ClaimedDelivery[]> {
  const { now, limit, perWebhook, inFlight, leaseMs } = args;
  if (limit <= 0) return [];
  const leaseUntil = new Date(now.getTime() + leaseMs);
  const rows = await sql<ClaimedDelivery[]>`
    with candidates as (
      select d.id, d.next_attempt_at, w.id as webhook_id,
        row_number() over (partition by w.id order by d.next_attempt_at, d.id) as nth,
        ${perWebhook}::int - coalesce((${JSON.stringify(inFlight)}::jsonb ->> w.id)::int, 0) as free
      from webhooks w
      cross join lateral (
        select id, next_attempt_at from webhook_deliveries
        where webhook_id = w.id and status = 'PENDING' and next_attempt_at <= ${now.toISOString()}
        order by next_attempt_at
        limit ${perWebhook}
        for update skip locked
      ) d
    ),
    chosen as (
      select id from candidates where nth <= free order by next_attempt_at limit ${limit}
    ),
    claimed as (
      update webhook_deliveries d
      set next_attempt_at = ${leaseUntil.toISOString()}, attempts = d.attempts + 1, last_attempt_at = ${now.toISOString()}
      from chosen where d.id = chosen.id
      returning d.id, d.webhook_id, d.event_id, d.attempts
    )
    select c.id, c.webhook_id as "webhookId", w.url, w.secret, c.attempts, e.type, e.data, e.occurred_at as "occurredAt"
    from claimed c join webhook_events e on e.id = c.event_id join webhooks w on w.id = c.webhook_id`;
  return rows.map((row) => ({ ...row, occurredAt: at(row.occurredAt)! }));
}

/**
 * Records an attempt's outcome, if the claim is still this attempt's (its `attempts` unchanged: a
 * claim whose lease passed and was taken again is the new claimer's to record). DELIVERED resets the
 * webhook's `failing`; a failure counts it, keeps the error, and makes the delivery due at `retryAt`,
 * or FAILED when `retryAt` is null (past the give-up time).
 */
export async function recordAttempt(
  sql: Sql,
  attempt: { id: string; webhookId: string; attempts: number; now: Date } & ({ delivered: true } | { delivered: false; error: string; retryAt: Date | null }),
): Promise<void> {
  const { id, webhookId, attempts, now } = attempt;
  if (attempt.delivered) {
    await sql`
      with done as (
        update webhook_deliveries set status = 'DELIVERED', next_attempt_at = null, last_error = null
        where id = ${id} and status = 'PENDING' and attempts = ${attempts} returning id
      )
      update webhooks set failing = 0, last_delivered_at = ${now.toISOString()} where id = ${webhookId} and exists (select 1 from done)`;
    return;
  }
  const status = attempt.retryAt ? 'PENDING' : 'FAILED';
  await sql`
    with done as (
      update webhook_deliveries set status = ${status}, next_attempt_at = ${attempt.retryAt?.toISOString() ?? null}, last_error = ${attempt.error}
      where id = ${id} and status = 'PENDING' and attempts = ${attempts} returning id
    )
    update webhooks set failing = failing + 1, last_error = ${attempt.error} where id = ${webhookId} and exists (select 1 from done)`;
}

/**
 * Deletes up to `limit` DELIVERED and FAILED deliveries made before `before`, then events made
 * before it that no delivery names any more. Answers how many deliveries went.
 */
export async function pruneDeliveries(sql: Sql, before: Date, limit: number): Promise<number> {
  const deleted = await sql`
    delete from webhook_deliveries where id in (
      select id from webhook_deliveries where status in ('DELIVERED', 'FAILED') and created_at < ${before.toISOString()} limit ${limit}
    )`;
  await sql`
    delete from webhook_events where id in (
      select e.id from webhook_events e
      where e.occurred_at < ${before.toISOString()} and not exists (select 1 from webhook_deliveries d where d.event_id = e.id)
      limit ${limit}
    )`;
  return deleted.count;
}

/** How many deliveries wait (PENDING), through the partial due index. */
export async function countPending(sql: Sql): Promise<number> {
  const [row] = await sql<{ n: number }[]>`select count(*)::int as n from webhook_deliveries where status = 'PENDING'`;
  return row?.n ?? 0;
}

/** How long to wait before listening again after PostgreSQL did not answer. */
const LISTEN_RETRY_MS = 2_000;
/** How often the webhooks are looked at behind transaction pooling, where no LISTEN outlives its statement. */
export const WEBHOOKS_POLL_MS = 1_000;

/**
 * Calls `changed` whenever any process creates or deletes a webhook (LISTEN on its own connection),
 * and when the listening connection comes back after a drop (what changed meanwhile is not known).
 * Behind transaction pooling the webhooks' ids are polled instead every WEBHOOKS_POLL_MS (one
 * statement over at most MAX_WEBHOOKS rows). The directory's short max age bounds what is missed
 * while PostgreSQL does not answer.
 */
export function listenForWebhookChanges(database: Pick<Database, 'sql' | 'pooling'>, changed: () => void, log: Logger) {
  const { sql } = database;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let listener: { unlisten(): Promise<void> } | undefined;
  let polling: Promise<void> | undefined;
  let seen: string | undefined;
  const poll = async () => {
    try {
      const [row] = await sql<{ ids: string | null }[]>`select string_agg(id, ',' order by id) as ids from webhooks`;
      const now = row?.ids ?? '';
      if (seen !== undefined && now !== seen) changed();
      seen = now;
    } catch (error) {
      log.warn({ err: error }, 'cannot look for webhook changes; trying again');
    }
    if (!stopped)
      timer = setTimeout(() => {
        polling = poll();
      }, WEBHOOKS_POLL_MS);
  };
  const listen = () => {
    sql
      .listen(WEBHOOKS_CHANGED_CHANNEL, changed, () => changed())
      .then(
        (active) => {
          if (stopped) void active.unlisten();
          else listener = active;
        },
        (error: unknown) => {
          log.warn({ err: error }, 'cannot listen for webhook changes yet; retrying');
          if (!stopped) timer = setTimeout(listen, LISTEN_RETRY_MS);
        },
      );
  };
  return {
    start: () => (database.pooling === 'transaction' ? void (polling = poll()) : listen()),
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await polling;
      await listener?.unlisten().catch(() => undefined);
    },
  };
}
