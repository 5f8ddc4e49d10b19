import { afterEach, describe, expect, it } from 'vitest';
import { enqueueWebhookEvents, type OutboxEvent } from '../src/db/webhook-outbox.js';
import { DELIVERY_GIVE_UP_MS, EVENT_TYPES } from '../src/model/webhooks.js';
import { movableClock } from './helpers/clock.js';
import { type TestApp, startTestApp } from './helpers/test-app.js';
import { until } from './helpers/wait.js';
import { type WebhookReceiver, startWebhookReceiver } from './helpers/webhook-receiver.js';

/**
 * Issue 58's delivery rules against a receiver on 127.0.0.1 that verifies every delivery with
 * `standardwebhooks`: signed bodies, retries with backoff on the app's clock, FAILED after 24 hours
 * and redelivery with the same id, a receiver that hangs holding nothing else up, two processes
 * sending each attempt once, a crash losing nothing, redirects not followed, and addresses refused
 * at delivery when a name resolves to loopback.
 */

const CREATE = `mutation ($input: CreateWebhookInput!) { createWebhook(input: $input) { secret webhook { id url failing lastError lastDeliveredAt } } }`;
const DELIVERIES = `query ($webhook: ID!, $status: DeliveryStatus, $first: Int!, $after: String) {
  webhookDeliveries(webhook: $webhook, status: $status, first: $first, after: $after) {
    edges { cursor node { id event status attempts lastAttemptAt nextAttemptAt lastError } }
    pageInfo { hasNextPage endCursor }
  }
}`;
const REDELIVER = `mutation ($delivery: ID!) { redeliverWebhook(delivery: $delivery) { id status } }`;
const WEBHOOKS = `{ webhooks { id failing lastError lastDeliveredAt } }`;

interface Delivery {
  id: string;
  event: string;
  status: string;
  attempts: number;
  lastAttemptAt: string | null;
  nextAttemptAt: string | null;
  lastError: string | null;
}

const apps: TestApp[] = [];
let receiver: WebhookReceiver | undefined;
afterEach(async () => {
  for (const app of apps.splice(0).reverse()) await app.close();
  await receiver?.close();
  receiver = undefined;
});

async function app(options: Parameters<typeof startTestApp>[0] = {}) {
  // No bucket closer: the closes of the template's boards would write BUCKET_CLOSED events of their own.
  const t = await startTestApp({ seasonCloseIntervalMs: null, webhooks: { allowPrivate: true, intervalMs: null }, ...options });
  apps.push(t);
  return t;
}

/** Creates a webhook to the receiver's `path` and registers its secret there. */
async function hook(t: TestApp, path: string, events = ['BUCKET_CLOSED']) {
  const answer = await t.admin<{ createWebhook: { secret: string; webhook: { id: string } } }>(CREATE, { input: { url: receiver!.url(path), events } });
  expect(answer.errors).toBeUndefined();
  receiver!.secret(path, answer.data!.createWebhook.secret);
  return answer.data!.createWebhook.webhook.id;
}

const closed = (n: number, at: Date): OutboxEvent => ({
  type: 'BUCKET_CLOSED',
  boardId: 'B',
  at,
  data: { boardId: 'B', period: 'DAILY', bucket: `2026-12-0${n}`, region: null, closedAt: at.toISOString(), size: n, top: [], awards: [], awardCount: 0 },
});

async function deliveries(t: TestApp, webhook: string, status?: string): Promise<Delivery[]> {
  const answer = await t.admin<{ webhookDeliveries: { edges: { node: Delivery }[] } }>(DELIVERIES, { webhook, status, first: 100 });
  expect(answer.errors).toBeUndefined();
  return answer.data!.webhookDeliveries.edges.map((e) => e.node);
}

describe('webhook delivery', () => {
  it('signs every delivery as Standard Webhooks: the receiver verifies it unchanged, with the body the event was written with', async () => {
    receiver = await startWebhookReceiver();
    const clock = movableClock();
    const t = await app({ now: clock.now });
    const id = await hook(t, '/a');
    const at = clock.now();
    const event = closed(1, at);
    expect(await enqueueWebhookEvents(t.database.sql, [event])).toBe(1);
    expect(await t.app.parts.deliverWebhooks()).toBe(1);
    const [got] = receiver.of('/a');
    expect(got?.verified, got?.error).toBe(true);
    expect(JSON.parse(got!.body)).toEqual({ type: 'bucket.closed', timestamp: at.toISOString(), data: event.data });
    const [delivery] = await deliveries(t, id);
    expect(delivery).toMatchObject({ id: got!.id, event: 'BUCKET_CLOSED', status: 'DELIVERED', attempts: 1, nextAttemptAt: null });
    expect(got!.id).toMatch(/^msg_/);
    const { webhooks } = (await t.admin<{ webhooks: { failing: number; lastDeliveredAt: string | null }[] }>(WEBHOOKS)).data!;
    expect(webhooks[0]).toMatchObject({ failing: 0, lastDeliveredAt: clock.now().toISOString().slice(0, 10) + webhooks[0]!.lastDeliveredAt!.slice(10) });
    // A receiver with the wrong secret would not verify it: the check can fail.
    receiver.secret('/a', `whsec_${Buffer.alloc(32, 7).toString('base64')}`);
    await enqueueWebhookEvents(t.database.sql, [closed(2, clock.now())]);
    await t.app.parts.deliverWebhooks();
    expect(receiver.of('/a')[1]?.verified).toBe(false);
    expect(EVENT_TYPES.BUCKET_CLOSED).toBe('bucket.closed');
  });

  it('a delivery that cannot be signed (a secret written by hand, not whsec_ base64) fails saying why, and is retried', async () => {
    receiver = await startWebhookReceiver();
    const clock = movableClock({ runs: false });
    const t = await app({ now: clock.now });
    const id = await hook(t, '/hand');
    await t.database.sql`update webhooks set secret = 'whsec_not=base64!' where id = ${id}`;
    await enqueueWebhookEvents(t.database.sql, [closed(1, clock.now())]);
    expect(await t.app.parts.deliverWebhooks()).toBe(1);
    const [delivery] = await deliveries(t, id);
    expect(delivery).toMatchObject({ status: 'PENDING', attempts: 1 });
    expect(delivery!.lastError).toMatch(/^cannot send: /);
    expect(receiver.of('/hand')).toHaveLength(0);
  });

  it('retries a failure with exponential backoff and jitter on the app clock, with the same id, and counts failing until one succeeds', async () => {
    receiver = await startWebhookReceiver();
    const clock = movableClock({ runs: false });
    const t = await app({ now: clock.now });
    const id = await hook(t, '/flaky');
    receiver.answer('/flaky', receiver.status(500));
    await enqueueWebhookEvents(t.database.sql, [closed(1, clock.now())]);
    const delays: number[] = [];
    for (let attempt = 1; attempt <= 3; attempt++) {
      expect(await t.app.parts.deliverWebhooks()).toBe(1);
      const [d] = await deliveries(t, id);
      expect(d).toMatchObject({ status: 'PENDING', attempts: attempt, lastError: 'HTTP 500' });
      const delay = Date.parse(d!.nextAttemptAt!) - Date.parse(d!.lastAttemptAt!);
      // The attempt-th retry waits within the upper half of 5 s × 2^(attempt-1).
      expect(delay).toBeGreaterThanOrEqual(2_500 * 2 ** (attempt - 1));
      expect(delay).toBeLessThanOrEqual(5_000 * 2 ** (attempt - 1));
      delays.push(delay);
      // Not due yet: nothing is sent.
      clock.advance(delay - 1);
      expect(await t.app.parts.deliverWebhooks()).toBe(0);
      clock.advance(1);
      expect((await t.admin<{ webhooks: { failing: number }[] }>(WEBHOOKS)).data!.webhooks[0]!.failing).toBe(attempt);
    }
    receiver.answer('/flaky', receiver.status(200));
    expect(await t.app.parts.deliverWebhooks()).toBe(1);
    const sent = receiver.of('/flaky');
    expect(sent).toHaveLength(4);
    expect(new Set(sent.map((r) => r.id)).size).toBe(1);
    expect(sent.every((r) => r.verified)).toBe(true);
    expect((await deliveries(t, id))[0]).toMatchObject({ status: 'DELIVERED', attempts: 4 });
    expect((await t.admin<{ webhooks: { failing: number; lastError: string }[] }>(WEBHOOKS)).data!.webhooks[0]).toMatchObject({ failing: 0 });
  });

  it('gives up after 24 hours (FAILED, listed by status), and redeliverWebhook sends it again with the same id', async () => {
    receiver = await startWebhookReceiver();
    const clock = movableClock({ runs: false });
    const t = await app({ now: clock.now });
    const id = await hook(t, '/down');
    receiver.answer('/down', receiver.status(503));
    const start = clock.now().getTime();
    await enqueueWebhookEvents(t.database.sql, [closed(1, clock.now())]);
    let attempts = 0;
    for (let i = 0; i < 100; i++) {
      attempts += await t.app.parts.deliverWebhooks();
      const [d] = await deliveries(t, id);
      if (d!.status === 'FAILED') break;
      clock.advance(Date.parse(d!.nextAttemptAt!) - clock.now().getTime());
    }
    const [failed] = await deliveries(t, id, 'FAILED');
    expect(failed).toMatchObject({ status: 'FAILED', attempts, nextAttemptAt: null, lastError: 'HTTP 503' });
    // Retried for the whole day, never past it.
    expect(Date.parse(failed!.lastAttemptAt!) - start).toBeGreaterThan(DELIVERY_GIVE_UP_MS / 2);
    expect(Date.parse(failed!.lastAttemptAt!) - start).toBeLessThanOrEqual(DELIVERY_GIVE_UP_MS);
    expect(await deliveries(t, id, 'PENDING')).toEqual([]);
    expect(receiver.of('/down')).toHaveLength(attempts);
    receiver.answer('/down', receiver.status(200));
    const again = await t.admin<{ redeliverWebhook: { id: string; status: string } }>(REDELIVER, { delivery: failed!.id });
    expect(again.data?.redeliverWebhook).toEqual({ id: failed!.id, status: 'PENDING' });
    const pending = await t.admin(REDELIVER, { delivery: failed!.id });
    expect(pending.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect((await t.admin(REDELIVER, { delivery: 'msg_none' })).errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    expect(await t.app.parts.deliverWebhooks()).toBe(1);
    const last = receiver.of('/down').at(-1)!;
    expect(last).toMatchObject({ id: failed!.id, verified: true });
    expect((await deliveries(t, id))[0]).toMatchObject({ status: 'DELIVERED' });
  });

  it('a receiver that hangs holds up no other webhook', async () => {
    receiver = await startWebhookReceiver();
    const t = await app({ webhooks: { allowPrivate: true, intervalMs: 50 } });
    receiver.answer('/hang', receiver.hang);
    await hook(t, '/hang');
    await hook(t, '/fast');
    const now = new Date();
    await enqueueWebhookEvents(
      t.database.sql,
      Array.from({ length: 30 }, (_, i) => closed((i % 9) + 1, now)),
    );
    await until(
      () => receiver!.of('/fast').length === 30,
      20_000,
      () => `fast deliveries: ${receiver!.of('/fast').length}`,
    );
    // Every one arrived while the hanging receiver still held requests open.
    expect(receiver.hanging.size).toBeGreaterThan(0);
    expect(receiver.of('/fast').every((r) => r.verified)).toBe(true);
  });

  it('two processes send each attempt once', async () => {
    receiver = await startWebhookReceiver();
    const a = await app({ webhooks: { allowPrivate: true, intervalMs: 20 } });
    const b = await app({ webhooks: { allowPrivate: true, intervalMs: 20 }, shareStoresOf: a });
    await hook(a, '/once');
    await b.app.parts.webhookInterest.refresh();
    const now = new Date();
    const events = Array.from({ length: 300 }, (_, i) => closed((i % 9) + 1, now));
    for (let i = 0; i < events.length; i += 50) await enqueueWebhookEvents(a.database.sql, events.slice(i, i + 50));
    await until(
      () => new Set(receiver!.of('/once').map((r) => r.id)).size === 300,
      60_000,
      () => `distinct: ${new Set(receiver!.of('/once').map((r) => r.id)).size}`,
    );
    await a.stop();
    await b.stop();
    const ids = receiver.of('/once').map((r) => r.id);
    expect(ids.length).toBe(300);
    const [row] = await a.database.sql<{ n: number }[]>`select count(*)::int as n from webhook_deliveries where status = 'DELIVERED' and attempts = 1`;
    expect(row!.n).toBe(300);
  });

  it('a crash between the commit and the delivery loses nothing: another process sends what a stopped one wrote or claimed', async () => {
    receiver = await startWebhookReceiver();
    const clock = movableClock();
    const a = await app({ now: clock.now });
    await hook(a, '/crash');
    const now = clock.now();
    await enqueueWebhookEvents(a.database.sql, [closed(1, now), closed(2, now), closed(3, now)]);
    // One is claimed by the process that then dies without sending it (its lease outlives it).
    const [claimed] = await a.app.parts.storage.webhooks.claim({ now, limit: 1, perWebhook: 4, inFlight: {}, leaseMs: 60_000 });
    await a.stop();
    const b = await app({ now: clock.now, shareStoresOf: a });
    expect(await b.app.parts.deliverWebhooks()).toBe(2);
    expect(receiver.of('/crash').map((r) => r.id)).not.toContain(claimed!.id);
    clock.advance(60_001);
    expect(await b.app.parts.deliverWebhooks()).toBe(1);
    const got = receiver.of('/crash');
    expect(new Set(got.map((r) => r.id)).size).toBe(3);
    expect(got.map((r) => r.id)).toContain(claimed!.id);
    expect(got.every((r) => r.verified)).toBe(true);
  });

  it('does not follow a redirect', async () => {
    receiver = await startWebhookReceiver();
    const t = await app();
    const id = await hook(t, '/moved');
    receiver.answer('/moved', receiver.status(302, { location: receiver.url('/target') }));
    await enqueueWebhookEvents(t.database.sql, [closed(1, new Date())]);
    await t.app.parts.deliverWebhooks();
    expect(receiver.of('/target')).toEqual([]);
    const [d] = await deliveries(t, id);
    expect(d).toMatchObject({ status: 'PENDING', attempts: 1 });
    expect(d!.lastError).toMatch(/^HTTP 302: redirect not followed/);
  });

  it('refuses at delivery an address a name resolves to (loopback), with the resolver the connection uses', async () => {
    receiver = await startWebhookReceiver();
    let resolvesTo = '93.184.216.34';
    const lookup = (hostname: string) =>
      Promise.resolve(hostname === 'hooks.example.com' ? [{ address: resolvesTo, family: 4 }] : [{ address: '127.0.0.1', family: 4 }]);
    const t = await app({ webhooks: { allowPrivate: false, intervalMs: null, lookup } });
    // Public when created; loopback when delivered (DNS rebinding).
    const created = await t.admin<{ createWebhook: { webhook: { id: string } } }>(CREATE, {
      input: { url: `https://hooks.example.com:${receiver.port}/x`, events: ['BUCKET_CLOSED'] },
    });
    expect(created.errors).toBeUndefined();
    resolvesTo = '127.0.0.1';
    await enqueueWebhookEvents(t.database.sql, [closed(1, new Date())]);
    await t.app.parts.deliverWebhooks();
    const [d] = await deliveries(t, created.data!.createWebhook.webhook.id);
    expect(d!.lastError).toBe('address refused: 127.0.0.1 is loopback (hooks.example.com resolves to it)');
    expect(receiver.received).toEqual([]);
    // A literal loopback address that got past creation (written directly) is refused too.
    await t.database.sql`update webhooks set url = ${`https://127.0.0.1:${receiver.port}/x`}`;
    await t.database.sql`update webhook_deliveries set next_attempt_at = now() - interval '1 minute'`;
    await t.app.parts.deliverWebhooks();
    expect((await deliveries(t, created.data!.createWebhook.webhook.id))[0]!.lastError).toBe('address refused: 127.0.0.1 is loopback');
    expect(receiver.received).toEqual([]);
  });

  it('connects to the address the injected resolver answers (so the checked address is the one connected to)', async () => {
    receiver = await startWebhookReceiver();
    const lookup = () => Promise.resolve([{ address: '127.0.0.1', family: 4 }]);
    const t = await app({ webhooks: { allowPrivate: true, intervalMs: null, lookup } });
    const created = await t.admin<{ createWebhook: { secret: string } }>(CREATE, {
      input: { url: `http://receiver.test:${receiver.port}/named`, events: ['BUCKET_CLOSED'] },
    });
    receiver.secret('/named', created.data!.createWebhook.secret);
    await enqueueWebhookEvents(t.database.sql, [closed(1, new Date())]);
    await t.app.parts.deliverWebhooks();
    expect(receiver.of('/named')).toMatchObject([{ verified: true }]);
  });
});
