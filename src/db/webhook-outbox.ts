import type { Sql, TransactionSql } from 'postgres';
import type { EventData, WebhookEvent } from '../model/webhooks.js';

/**
 * The webhook outbox's one way in (issue 58): events written with what caused them, in its
 * transaction when given one, so that a crash either loses both or neither. The delivery job
 * (jobs/webhook-delivery.ts) sends what is written here.
 */

/** One event to write: its type, the board it is of, its data (model/webhooks.ts), and when it happened (the app's clock). */
export type OutboxEvent = {
  [E in WebhookEvent]: { type: E; boardId: string; data: EventData[E]; at: Date };
}[WebhookEvent];

/**
 * Writes events and a PENDING delivery of each to every webhook that wants it (its events name the
 * type, and its boards are empty or name the board), due at once (the event's `at`). An event no
 * webhook wants is not written at all. One statement, whatever the number of events and webhooks;
 * answers how many deliveries it made.
 */
export async function enqueueWebhookEvents(sql: Sql | TransactionSql, events: readonly OutboxEvent[]): Promise<number> {
  if (events.length === 0) return 0;
  const rows = events.map((event) => ({ type: event.type, board_id: event.boardId, data: event.data, at: event.at.toISOString() }));
  const made = await sql`
    with given as (
      select x.ord, x.type, x.board_id, x.data, x.at
      -- A column definition list and WITH ORDINALITY go together only inside ROWS FROM. The rows go as
      -- JSON text: postgres.js sends an array given to sql.json as a PostgreSQL array, not as JSON.
      from rows from (jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) as (type text, board_id text, data jsonb, at timestamptz))
        with ordinality as x(type, board_id, data, at, ord)
    ),
    wanted as (
      select g.* from given g
      where exists (select 1 from webhooks w where g.type = any(w.events) and (w.boards = '{}' or g.board_id = any(w.boards)))
    ),
    written as (
      insert into webhook_events (type, board_id, data, occurred_at)
      select type, board_id, data, at from wanted order by ord
      returning id, type, board_id, occurred_at
    )
    insert into webhook_deliveries (webhook_id, event_id, next_attempt_at, created_at)
    select w.id, e.id, e.occurred_at, e.occurred_at
    from written e join webhooks w on e.type = any(w.events) and (w.boards = '{}' or e.board_id = any(w.boards))`;
  return made.count;
}
