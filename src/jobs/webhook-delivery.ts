import type { Logger } from 'pino';
import type { Storage } from '../db/storage.js';
import type { ClaimedDelivery } from '../db/webhooks.js';
import { DELIVERY_GIVE_UP_MS, DELIVERY_TIMEOUT_MS, nextAttemptDelayMs } from '../model/webhooks.js';
import type { Metrics } from '../services/metrics.js';
import type { AttemptOutcome, WebhookSender } from '../services/webhook-sender.js';
import type { WebhookDirectory } from '../services/webhook-directory.js';

/**
 * The webhook delivery job (issue 58), run by every process. It claims due deliveries from the
 * outbox (db/webhooks.ts claimDeliveries: one process a delivery at a time, SKIP LOCKED and a lease)
 * and sends each concurrently, at most `concurrency` at once in the process and `perWebhook` of one
 * webhook, so that a slow or dead receiver holds at most its own share and never another webhook's
 * deliveries; no transaction is open while a request is in flight, and nothing here is on a
 * submission's path (events are written by the causes' own transactions, db/webhook-outbox.ts).
 * A failed attempt is tried again after an exponential backoff with jitter (nextAttemptDelayMs),
 * until its event is DELIVERY_GIVE_UP_MS old: FAILED then. A process that dies mid-attempt leaves
 * its claim to be taken again once the lease passes: at least once, with the same webhook-id.
 * Every `pruneEveryMs` it deletes DELIVERED and FAILED deliveries (and their events) older than
 * `retentionMs`, and counts what waits for the pending gauge.
 */

export interface WebhookDeliveryOptions {
  /**
   * How often the job looks for due deliveries (it also looks again at once while a look filled
   * every free place). null: only when pass() is called (tests).
   * @default 500
   */
  intervalMs?: number | null | undefined;
  /** @default 16 deliveries in flight in this process */
  concurrency?: number | undefined;
  /** @default 4 deliveries of one webhook in flight in this process */
  perWebhook?: number | undefined;
  /**
   * How long a claim holds a delivery: longer than the attempts a claim can wait for in this process
   * (concurrency / perWebhook rounds of DELIVERY_TIMEOUT_MS), so no other process takes it meanwhile.
   * @default 60,000 ms
   */
  leaseMs?: number | undefined;
  /** How long DELIVERED and FAILED deliveries stay readable (webhookDeliveries) before they are deleted. @default 7 days */
  retentionMs?: number | undefined;
  /** @default 60,000 ms */
  pruneEveryMs?: number | undefined;
  /** The jitter's source, in [0, 1). @default Math.random */
  random?: (() => number) | undefined;
}

export interface WebhookDeliveryDeps {
  storage: Pick<Storage, 'webhooks'>;
  /** Whether the deployment has no webhook (services/webhook-directory.ts): then the timer asks PostgreSQL nothing. */
  webhooks: Pick<WebhookDirectory, 'none'>;
  sender: Pick<WebhookSender, 'send'>;
  metrics: Pick<Metrics, 'webhookDeliveries' | 'webhookPending'>;
  now: () => Date;
  log: Logger;
}

export interface WebhookDelivery {
  /** Claims what is due by the app's clock and sends it, again until nothing is due; answers how many attempts it made once they all ended. */
  pass(): Promise<number>;
  /** Stops looking; waits for the attempts in flight. */
  stop(): Promise<void>;
}

/** How many claims the pruning deletes at most per statement. */
const PRUNE_BATCH = 10_000;

export function startWebhookDelivery(deps: WebhookDeliveryDeps, options: WebhookDeliveryOptions = {}): WebhookDelivery {
  const concurrency = options.concurrency ?? 16;
  const perWebhook = options.perWebhook ?? 4;
  const leaseMs = Math.max(options.leaseMs ?? 60_000, Math.ceil(concurrency / perWebhook) * DELIVERY_TIMEOUT_MS + 5_000);
  const retentionMs = options.retentionMs ?? 7 * 24 * 60 * 60_000;
  const pruneEveryMs = options.pruneEveryMs ?? 60_000;
  const random = options.random ?? Math.random;
  const inFlight = new Map<string, number>();
  const running = new Set<Promise<void>>();
  let stopped = false;
  let claiming: Promise<number> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let lastPrune = -Infinity;

  const attempt = async (delivery: ClaimedDelivery): Promise<void> => {
    // A delivery that cannot even be sent (a secret that is not whsec_ base64, a url not a URL: rows
    // written by hand) fails like any other, saying why, rather than escaping as an unhandled rejection.
    const outcome = await deps.sender.send(delivery).catch((error: unknown): AttemptOutcome => ({
      delivered: false,
      error: `cannot send: ${error instanceof Error ? error.message : String(error)}`.slice(0, 300),
    }));
    const now = deps.now();
    try {
      if (outcome.delivered) {
        await deps.storage.webhooks.record({ id: delivery.id, webhookId: delivery.webhookId, attempts: delivery.attempts, now, delivered: true });
        deps.metrics.webhookDeliveries.inc({ outcome: 'delivered' });
        return;
      }
      const retryAt = new Date(now.getTime() + nextAttemptDelayMs(delivery.attempts, random));
      const giveUp = retryAt.getTime() - delivery.occurredAt.getTime() > DELIVERY_GIVE_UP_MS;
      await deps.storage.webhooks.record({
        id: delivery.id,
        webhookId: delivery.webhookId,
        attempts: delivery.attempts,
        now,
        delivered: false,
        error: outcome.error,
        retryAt: giveUp ? null : retryAt,
      });
      deps.metrics.webhookDeliveries.inc({ outcome: giveUp ? 'failed' : 'retried' });
    } catch (error) {
      // The outcome is lost: the lease passes and the delivery is tried again (at least once).
      deps.log.warn({ err: error, delivery: delivery.id }, 'cannot record a webhook delivery attempt; it will be tried again');
    }
  };

  const start = (delivery: ClaimedDelivery) => {
    inFlight.set(delivery.webhookId, (inFlight.get(delivery.webhookId) ?? 0) + 1);
    const run: Promise<void> = attempt(delivery).finally(() => {
      const left = (inFlight.get(delivery.webhookId) ?? 1) - 1;
      if (left > 0) inFlight.set(delivery.webhookId, left);
      else inFlight.delete(delivery.webhookId);
      running.delete(run);
      // A place freed: look at once when the timer runs the job (pass() looks on its own).
      if (options.intervalMs !== null && !stopped) void claim();
    });
    running.add(run);
  };

  /** Claims what fits in the free places and starts it; answers how many it claimed. */
  const claimOnce = async (): Promise<number> => {
    const free = concurrency - running.size;
    if (free <= 0 || stopped) return 0;
    const claimed = await deps.storage.webhooks.claim({ now: deps.now(), limit: free, perWebhook, inFlight: Object.fromEntries(inFlight), leaseMs });
    for (const delivery of claimed) start(delivery);
    return claimed.length;
  };
  const claim = (): Promise<number> => {
    claiming ??= claimOnce()
      .catch((error: unknown) => {
        deps.log.warn({ err: error }, 'cannot claim webhook deliveries; trying again');
        return 0;
      })
      .finally(() => (claiming = undefined));
    return claiming;
  };

  const prune = async () => {
    const now = deps.now().getTime();
    if (now - lastPrune < pruneEveryMs) return;
    lastPrune = now;
    try {
      await deps.storage.webhooks.prune(new Date(now - retentionMs), PRUNE_BATCH);
      deps.metrics.webhookPending.set(await deps.storage.webhooks.countPending());
    } catch (error) {
      deps.log.warn({ err: error }, 'cannot prune webhook deliveries; trying again later');
    }
  };

  const tick = async () => {
    // A deployment without webhooks has no delivery (they go with their webhook): nothing to ask
    // PostgreSQL every half second. The directory renews itself, so a webhook made meanwhile is seen.
    if (!deps.webhooks.none()) {
      await claim();
      await prune();
    }
    if (!stopped && options.intervalMs !== null) timer = setTimeout(() => void tick(), options.intervalMs ?? 500);
  };
  if (options.intervalMs !== null) void tick();

  return {
    async pass() {
      let attempts = 0;
      for (;;) {
        const claimed = await claim();
        attempts += claimed;
        if (claimed === 0 && running.size === 0) break;
        await Promise.race(running);
      }
      await prune();
      return attempts;
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await claiming;
      await Promise.allSettled(running);
    },
  };
}
