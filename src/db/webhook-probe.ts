import type { Sql, TransactionSql } from 'postgres';
import type { WebhookEvent } from '../model/webhooks.js';

/**
 * Whether some webhook wants `event` of board `boardId`, as committed (or as this transaction sees
 * it): what a close asks before it builds an event's data, so that a close no webhook listens to
 * costs one probe more. The webhooks table is small (at most MAX_WEBHOOKS rows): O(webhooks).
 */
export async function webhookWants(sql: Sql | TransactionSql, event: WebhookEvent, boardId: string): Promise<boolean> {
  const [row] = await sql<{ wanted: boolean }[]>`
    select exists (select 1 from webhooks where ${event} = any(events) and (boards = '{}' or ${boardId} = any(boards))) as wanted`;
  return row?.wanted === true;
}
