import type { DeliveryStatus, WebhookEvent } from '../model/webhooks.js';
import type { CreatedWebhook, DeliveryPage, StoredDelivery, StoredWebhook } from '../writes/webhooks.js';
import type { Context } from './context.js';

/** What answers the webhook fields (issue 58, admin only): the arguments in, one call of the webhook admin out. */

export type { CreatedWebhook, DeliveryPage, StoredDelivery, StoredWebhook };

/** Query.webhooks. */
export const webhooks = (ctx: Context): Promise<StoredWebhook[]> => ctx.webhooks.list();

/** Query.webhookDeliveries. */
export const webhookDeliveries = (
  args: { webhook: string; status?: DeliveryStatus | null | undefined; first: number; after?: string | null | undefined },
  ctx: Context,
): Promise<DeliveryPage> => ctx.webhooks.deliveries({ webhook: args.webhook, status: args.status ?? null, first: args.first, after: args.after ?? null });

/** Mutation.createWebhook. */
export const createWebhook = (args: { input: { url: string; events: WebhookEvent[]; boards: string[] } }, ctx: Context): Promise<CreatedWebhook> =>
  ctx.webhooks.create(args.input);

/** Mutation.deleteWebhook. */
export const deleteWebhook = (args: { id: string }, ctx: Context): Promise<boolean> => ctx.webhooks.delete(args.id);

/** Mutation.redeliverWebhook. */
export const redeliverWebhook = (args: { delivery: string }, ctx: Context): Promise<StoredDelivery> => ctx.webhooks.redeliver(args.delivery);
