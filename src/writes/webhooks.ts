import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import type { StoredDelivery, StoredWebhook } from '../db/webhooks.js';
import type { Storage } from '../db/storage.js';
import { type DeliveryStatus, MAX_WEBHOOK_BOARDS, MAX_WEBHOOK_URL_LENGTH, MAX_WEBHOOKS, WEBHOOK_EVENTS, type WebhookEvent } from '../model/webhooks.js';
import type { BoardDirectory } from '../services/board-directory.js';
import { type CursorCodec, forwardPageInfo } from '../services/cursor.js';
import type { WebhookDirectory } from '../services/webhook-directory.js';
import { type WebhookLookup, addressProblem, hostOf, schemeProblem } from '../services/webhook-addresses.js';
import { badInput, notFound } from '../errors.js';

/**
 * The admin's webhooks (issue 58): create (its secret shown once), list, delete, a webhook's
 * deliveries, and sending one again. Delivering is jobs/webhook-delivery.ts's.
 */

export type { StoredDelivery, StoredWebhook };

/** What the webhook use cases take. */
export interface WebhookAdminDeps {
  storage: Pick<Storage, 'webhooks'>;
  boards: Pick<BoardDirectory, 'find'>;
  /** This process's directory, renewed at once after a change here (the others are told by NOTIFY). */
  webhookInterest: Pick<WebhookDirectory, 'refresh'>;
  cursors: CursorCodec;
  /** WEBHOOK_ALLOW_PRIVATE. */
  allowPrivate: boolean;
  lookup: WebhookLookup;
  now: () => Date;
}

/** A webhook just made, and its signing secret, which is shown this once. */
export interface CreatedWebhook {
  webhook: StoredWebhook;
  secret: string;
}

export interface CreateWebhookInput {
  url: string;
  events: readonly WebhookEvent[];
  boards: readonly string[];
}

/** How long creation waits for a name to resolve before taking it (it is checked again at every delivery). */
const CREATE_LOOKUP_MS = 2_000;

/**
 * Why `url` is refused as a webhook's (BAD_USER_INPUT), checked before anything is stored: its
 * length, form, scheme, no credentials in it, and its address: a literal one by the address rules,
 * a name by the addresses it resolves to now (`localhost` and any name resolving to loopback are so
 * refused here; a name is checked again at each delivery, where the check counts).
 */
async function urlProblem(deps: Pick<WebhookAdminDeps, 'allowPrivate' | 'lookup'>, url: string): Promise<string | null> {
  if (url.length > MAX_WEBHOOK_URL_LENGTH) return `url must be at most ${MAX_WEBHOOK_URL_LENGTH.toLocaleString('en-US')} characters`;
  if (!URL.canParse(url)) return 'url must be an absolute https URL';
  const parsed = new URL(url);
  const scheme = schemeProblem(parsed.protocol, deps.allowPrivate);
  if (scheme) return `url ${scheme}`;
  if (parsed.username || parsed.password) return 'url must not carry a user name or password';
  const host = hostOf(parsed);
  const protocol = parsed.protocol as 'http:' | 'https:';
  if (isIP(host)) return addressProblem(host, protocol, deps.allowPrivate);
  let addresses: { address: string }[];
  try {
    addresses = await Promise.race([
      deps.lookup(host),
      new Promise<never>((_resolve, reject) => setTimeout(() => reject(new Error('slow')), CREATE_LOOKUP_MS).unref()),
    ]);
  } catch {
    // A name that does not resolve yet is taken: each delivery resolves and checks it.
    return host === 'localhost' || host.endsWith('.localhost') ? addressProblem('127.0.0.1', protocol, deps.allowPrivate) : null;
  }
  for (const { address } of addresses) {
    const problem = addressProblem(address, protocol, deps.allowPrivate);
    if (problem) return `${problem} (${host} resolves to it)`;
  }
  return null;
}

/** Creates a webhook; its secret (whsec_ and 32 random bytes in base64) is answered this once. */
export async function createWebhook(deps: WebhookAdminDeps, input: CreateWebhookInput): Promise<CreatedWebhook> {
  const problem = await urlProblem(deps, input.url);
  if (problem) throw badInput(problem.startsWith('url') ? problem : `url refused: ${problem}`);
  if (input.events.length === 0) throw badInput('events must name at least one event');
  if (new Set(input.events).size !== input.events.length) throw badInput('events must not repeat an event');
  if (input.events.some((event) => !WEBHOOK_EVENTS.includes(event))) throw badInput('events must be WebhookEvent values');
  if (input.boards.length > MAX_WEBHOOK_BOARDS) throw badInput(`boards must name at most ${MAX_WEBHOOK_BOARDS} boards`);
  if (new Set(input.boards).size !== input.boards.length) throw badInput('boards must not repeat a board');
  const found = await Promise.all(input.boards.map((id) => deps.boards.find(id)));
  const missing = input.boards.find((_id, i) => !found[i]);
  if (missing !== undefined) throw badInput(`boards names "${missing}", which no board has`);
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  const webhook = await deps.storage.webhooks.insert(
    { id: `wh_${randomBytes(9).toString('base64url')}`, url: input.url, events: input.events, boards: input.boards, secret, createdAt: deps.now() },
    MAX_WEBHOOKS,
  );
  if (!webhook) throw badInput(`A deployment has at most ${MAX_WEBHOOKS} webhooks; delete one first.`);
  await deps.webhookInterest.refresh();
  return { webhook, secret };
}

/** Deletes a webhook and its deliveries; whether it existed. */
export async function deleteWebhook(deps: Pick<WebhookAdminDeps, 'storage' | 'webhookInterest'>, id: string): Promise<boolean> {
  const deleted = await deps.storage.webhooks.delete(id);
  if (deleted) await deps.webhookInterest.refresh();
  return deleted;
}

/** Every webhook, oldest first (never their secrets). */
export const listWebhooks = (deps: Pick<WebhookAdminDeps, 'storage'>): Promise<StoredWebhook[]> => deps.storage.webhooks.list();

export interface DeliveryPage {
  edges: { cursor: string; node: StoredDelivery }[];
  pageInfo: { hasNextPage: boolean; endCursor: string | null; hasPreviousPage: boolean; startCursor: string | null };
}

/** The cursor scope of a webhook's deliveries under one filter: a cursor of another page is refused. */
const scopeOf = (webhookId: string, status: DeliveryStatus | null) => `webhook-deliveries:${webhookId}:${status ?? ''}`;

/** A webhook's deliveries, newest first, a keyset page (NOT_FOUND for an unknown webhook). */
export async function webhookDeliveries(
  deps: Pick<WebhookAdminDeps, 'storage' | 'cursors'>,
  args: { webhook: string; status: DeliveryStatus | null; first: number; after: string | null },
): Promise<DeliveryPage> {
  const scope = scopeOf(args.webhook, args.status);
  const position = args.after ? deps.cursors.decode(scope, args.after) : null;
  const webhooks = await deps.storage.webhooks.list();
  if (!webhooks.some((webhook) => webhook.id === args.webhook)) throw notFound(`No webhook has the id "${args.webhook}".`);
  const rows = await deps.storage.webhooks.deliveries({
    webhookId: args.webhook,
    status: args.status,
    first: args.first + 1,
    after: position ? { createdUs: position.packed, id: position.playerId } : null,
  });
  const page = rows.slice(0, args.first);
  const edges = page.map((node) => ({ cursor: deps.cursors.encode(scope, { packed: node.createdUs, playerId: node.id }), node }));
  return {
    edges,
    pageInfo: forwardPageInfo(edges, rows.length > args.first, args.after),
  };
}

/** Sends a FAILED or DELIVERED delivery again, with the same id; BAD_USER_INPUT while it is PENDING, NOT_FOUND when none has the id. */
export async function redeliverWebhook(deps: Pick<WebhookAdminDeps, 'storage' | 'now'>, deliveryId: string): Promise<StoredDelivery> {
  const delivery = await deps.storage.webhooks.redeliver(deliveryId, deps.now());
  if (delivery === null) throw notFound(`No delivery has the id "${deliveryId}".`);
  if (delivery === 'pending') throw badInput(`Delivery "${deliveryId}" is PENDING: it will be sent; only a FAILED or DELIVERED one is sent again.`);
  return delivery;
}

/** The webhook use cases bound to their parts (built in src/app.ts). */
export function createWebhookAdmin(deps: WebhookAdminDeps) {
  return {
    create: (input: CreateWebhookInput) => createWebhook(deps, input),
    delete: (id: string) => deleteWebhook(deps, id),
    list: () => listWebhooks(deps),
    deliveries: (args: Parameters<typeof webhookDeliveries>[1]) => webhookDeliveries(deps, args),
    redeliver: (deliveryId: string) => redeliverWebhook(deps, deliveryId),
  };
}

export type WebhookAdmin = ReturnType<typeof createWebhookAdmin>;
