import { z } from 'zod';
import { MAX_PAGE } from '../model/contract.js';
import { DELIVERY_STATUSES, MAX_WEBHOOK_BOARDS, MAX_WEBHOOK_URL_LENGTH, WEBHOOK_EVENTS } from '../model/webhooks.js';
import * as webhooks from '../resolvers/webhooks.js';
import type { CreatedWebhook, DeliveryPage, StoredDelivery, StoredWebhook } from '../resolvers/webhooks.js';
import { builder } from './builder.js';
import { PageInfoRef } from './standing-connection.js';
import { idSchema, intRange, plainTextSchema } from './validation.js';

/** Webhooks (issue 58): admin only, every field and mutation. Names and descriptions as contract/api.graphql spells them. */

const EVENT_DESCRIPTIONS = {
  BUCKET_CLOSED: "A bucket closed (a day, week, month, a region's, or a season): its final top (the board's topSize) and each reward band's awards.",
  LEAGUE_ROUND_CLOSED: "A league round closed: each player's outcome, in pages of at most 1,000 players an event.",
  FRIEND_OVERTAKEN: 'A result moved a player past someone who lists them as a friend.',
  TOP_CHANGED: "A bucket's top changed: the same views topChanged sends, at most one a second per bucket.",
} as const;

export const WebhookEventEnum = builder.enumType('WebhookEvent', {
  description: 'Added (issue 23).',
  values: Object.fromEntries(WEBHOOK_EVENTS.map((event) => [event, { value: event, description: EVENT_DESCRIPTIONS[event] }])) as {
    [E in (typeof WEBHOOK_EVENTS)[number]]: { value: E; description: string };
  },
});

export const DeliveryStatusEnum = builder.enumType('DeliveryStatus', { values: DELIVERY_STATUSES });

export const WebhookRef = builder.objectRef<StoredWebhook>('Webhook').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    url: t.exposeString('url'),
    events: t.expose('events', { type: [WebhookEventEnum] }),
    boards: t.exposeIDList('boards', { description: 'Empty: every board.' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    failing: t.exposeInt('failing', { description: 'Deliveries that failed in a row; 0 once one succeeds.' }),
    lastDeliveredAt: t.expose('lastDeliveredAt', { type: 'DateTime', nullable: true }),
    lastError: t.exposeString('lastError', { nullable: true }),
  }),
});

const CreatedWebhookRef = builder.objectRef<CreatedWebhook>('CreatedWebhook').implement({
  fields: (t) => ({
    webhook: t.expose('webhook', { type: WebhookRef }),
    secret: t.exposeString('secret', { description: 'The signing secret (whsec_…), shown once.' }),
  }),
});

export const WebhookDeliveryRef = builder.objectRef<StoredDelivery>('WebhookDelivery').implement({
  fields: (t) => ({
    id: t.exposeID('id', { description: 'The webhook-id header; the same on every attempt.' }),
    event: t.expose('event', { type: WebhookEventEnum }),
    status: t.expose('status', { type: DeliveryStatusEnum }),
    attempts: t.exposeInt('attempts'),
    lastAttemptAt: t.expose('lastAttemptAt', { type: 'DateTime', nullable: true }),
    nextAttemptAt: t.expose('nextAttemptAt', { type: 'DateTime', nullable: true }),
    lastError: t.exposeString('lastError', { nullable: true }),
  }),
});

const WebhookDeliveryEdgeRef = builder.objectRef<DeliveryPage['edges'][number]>('WebhookDeliveryEdge').implement({
  fields: (t) => ({
    cursor: t.exposeString('cursor'),
    node: t.expose('node', { type: WebhookDeliveryRef }),
  }),
});

const WebhookDeliveryConnectionRef = builder.objectRef<DeliveryPage>('WebhookDeliveryConnection').implement({
  fields: (t) => ({
    edges: t.expose('edges', { type: [WebhookDeliveryEdgeRef] }),
    pageInfo: t.expose('pageInfo', { type: PageInfoRef }),
  }),
});

const CreateWebhookInput = builder.inputType('CreateWebhookInput', {
  fields: (t) => ({
    url: t.string({
      required: true,
      validate: plainTextSchema().max(MAX_WEBHOOK_URL_LENGTH, `must be at most ${MAX_WEBHOOK_URL_LENGTH.toLocaleString('en-US')} characters`),
    }),
    events: t.field({
      type: [WebhookEventEnum],
      required: true,
      validate: z
        .array(z.string())
        .min(1, 'must name at least one event')
        .max(WEBHOOK_EVENTS.length, `must name at most ${WEBHOOK_EVENTS.length} events, each once`),
    }),
    boards: t.idList({
      required: true,
      defaultValue: [],
      validate: z.array(idSchema).max(MAX_WEBHOOK_BOARDS, `must name at most ${MAX_WEBHOOK_BOARDS} boards`),
    }),
  }),
});

builder.queryFields((t) => ({
  webhooks: t.field({
    type: [WebhookRef],
    description: 'Admin. Every webhook, oldest first (never their secrets).',
    authScopes: { admin: true },
    resolve: (_root, _args, ctx) => webhooks.webhooks(ctx),
  }),
  webhookDeliveries: t.field({
    type: WebhookDeliveryConnectionRef,
    description: "Admin. A webhook's deliveries, newest first; NOT_FOUND for an unknown webhook.",
    authScopes: { admin: true },
    args: {
      webhook: t.arg.id({ required: true, validate: idSchema }),
      status: t.arg({ type: DeliveryStatusEnum }),
      first: t.arg.int({ required: true, defaultValue: 50, validate: intRange(1, MAX_PAGE, 'first') }),
      after: t.arg.string({ validate: plainTextSchema().max(1_000, 'must be at most 1,000 characters').nullish() }),
    },
    resolve: (_root, args, ctx) => webhooks.webhookDeliveries(args, ctx),
  }),
}));

builder.mutationFields((t) => ({
  createWebhook: t.field({
    type: CreatedWebhookRef,
    description:
      'Admin. Makes a webhook: an https URL (http to a loopback or private address only with WEBHOOK_ALLOW_PRIVATE), the events it wants, the boards (empty: every board). The answer carries its signing secret, this once.',
    authScopes: { admin: true },
    args: { input: t.arg({ type: CreateWebhookInput, required: true }) },
    resolve: (_root, args, ctx) => webhooks.createWebhook(args, ctx),
  }),
  deleteWebhook: t.field({
    type: 'Boolean',
    description: 'Admin. Deletes a webhook and its deliveries; whether it existed.',
    authScopes: { admin: true },
    args: { id: t.arg.id({ required: true, validate: idSchema }) },
    resolve: (_root, args, ctx) => webhooks.deleteWebhook(args, ctx),
  }),
  redeliverWebhook: t.field({
    type: WebhookDeliveryRef,
    description: 'Sends a FAILED or DELIVERED delivery again, with the same id.',
    authScopes: { admin: true },
    args: { delivery: t.arg.id({ required: true, validate: idSchema }) },
    resolve: (_root, args, ctx) => webhooks.redeliverWebhook(args, ctx),
  }),
}));
