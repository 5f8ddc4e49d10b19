import { afterEach, describe, expect, it } from 'vitest';
import { enqueueWebhookEvents } from '../src/db/webhook-outbox.js';
import { type TestApp, startTestApp } from './helpers/test-app.js';
import { until } from './helpers/wait.js';

/**
 * Issue 58's admin side of webhooks: every field admin only, creation's refusals (addresses by
 * literal and by a name resolving to loopback, scheme, attacker inputs) with nothing created, the
 * deliveries' keyset pages, and the directory renewed in another process at once.
 */

const CREATE = `mutation ($input: CreateWebhookInput!) { createWebhook(input: $input) { secret webhook { id url events boards failing } } }`;
const LIST = `{ webhooks { id url } }`;
const DELIVERIES = `query ($webhook: ID!, $first: Int!, $after: String, $status: DeliveryStatus) {
  webhookDeliveries(webhook: $webhook, first: $first, after: $after, status: $status) { edges { cursor node { id } } pageInfo { hasNextPage endCursor } }
}`;
const DELETE = `mutation ($id: ID!) { deleteWebhook(id: $id) }`;
const REDELIVER = `mutation ($delivery: ID!) { redeliverWebhook(delivery: $delivery) { id } }`;

const apps: TestApp[] = [];
afterEach(async () => {
  for (const app of apps.splice(0).reverse()) await app.close();
});
async function app(options: Parameters<typeof startTestApp>[0] = {}) {
  const t = await startTestApp({ seasonCloseIntervalMs: null, webhooks: { intervalMs: null }, ...options });
  apps.push(t);
  return t;
}
const codeOf = (answer: Awaited<ReturnType<TestApp['gql']>>) => answer.errors?.[0]?.extensions?.code;
const input = (url: string, extra: Record<string, unknown> = {}) => ({ input: { url, events: ['TOP_CHANGED'], ...extra } });
const publicLookup = (hostname: string) =>
  Promise.resolve(
    hostname === 'localhost' || hostname === 'sneaky.example.com' ? [{ address: '127.0.0.1', family: 4 }] : [{ address: '93.184.216.34', family: 4 }],
  );

describe('webhooks, the admin side', () => {
  it('every webhook field is the admin key only: UNAUTHENTICATED without a key, FORBIDDEN with a server key', async () => {
    const t = await app({ webhooks: { intervalMs: null, lookup: publicLookup } });
    const calls: [string, Record<string, unknown>][] = [
      [LIST, {}],
      [DELIVERIES, { webhook: 'wh_x', first: 1 }],
      [CREATE, input('https://hooks.example.com/x')],
      [DELETE, { id: 'wh_x' }],
      [REDELIVER, { delivery: 'msg_x' }],
    ];
    for (const [query, variables] of calls) {
      expect(codeOf(await t.gql(query, variables)), query).toBe('UNAUTHENTICATED');
      expect(codeOf(await t.server(query, variables)), query).toBe('FORBIDDEN');
    }
    expect((await t.admin<{ webhooks: unknown[] }>(LIST)).data?.webhooks).toEqual([]);
  });

  it('refuses forbidden addresses at creation, by literal and by a name resolving to loopback, and attacker inputs; nothing is created', async () => {
    const t = await app({ webhooks: { intervalMs: null, lookup: publicLookup } });
    const refused = [
      'http://hooks.example.com/x',
      'https://127.0.0.1/x',
      'https://10.0.0.1/x',
      'https://172.16.5.4/x',
      'https://192.168.1.1/x',
      'https://100.64.0.1/x',
      'https://169.254.169.254/latest/meta-data',
      'https://[::1]/x',
      'https://[::ffff:127.0.0.1]/x',
      'https://[fd00::1]/x',
      'https://[fe80::1]/x',
      'https://0.0.0.0/x',
      'https://localhost/x',
      'https://sneaky.example.com/x',
      'ftp://hooks.example.com/x',
      'https://user:pw@hooks.example.com/x',
      'not a url',
      `https://hooks.example.com/${'a'.repeat(3_000)}`,
      'https://hooks.example.com/\u0000x',
      'https://hooks.example.com/\u202ex',
    ];
    for (const url of refused) expect(codeOf(await t.admin(CREATE, input(url))), url).toBe('BAD_USER_INPUT');
    const sneaky = await t.admin(CREATE, input('https://sneaky.example.com/x'));
    expect(sneaky.errors?.[0]?.message).toContain('127.0.0.1 is loopback');
    const metadata = await t.admin(CREATE, input('https://169.254.169.254/x'));
    expect(metadata.errors?.[0]?.message).toContain('link-local');
    const url = 'https://hooks.example.com/x';
    expect(codeOf(await t.admin(CREATE, input(url, { events: [] })))).toBe('BAD_USER_INPUT');
    expect(codeOf(await t.admin(CREATE, input(url, { events: Array.from({ length: 10_000 }, () => 'TOP_CHANGED') })))).toBe('BAD_USER_INPUT');
    expect(codeOf(await t.admin(CREATE, input(url, { events: ['TOP_CHANGED', 'TOP_CHANGED'] })))).toBe('BAD_USER_INPUT');
    expect(codeOf(await t.admin(CREATE, input(url, { boards: ['no-such-board'] })))).toBe('BAD_USER_INPUT');
    expect(codeOf(await t.admin(CREATE, input(url, { boards: Array.from({ length: 101 }, (_, i) => `b${i}`) })))).toBe('BAD_USER_INPUT');
    expect(codeOf(await t.admin(CREATE, input(url, { boards: ['bad\u0007id'] })))).toBe('BAD_USER_INPUT');
    expect(codeOf(await t.admin(DELIVERIES, { webhook: 'wh_x', first: 0 }))).toBe('BAD_USER_INPUT');
    expect(codeOf(await t.admin(DELIVERIES, { webhook: 'wh_x', first: 1_000_000 }))).toBe('BAD_USER_INPUT');
    expect(codeOf(await t.admin(DELIVERIES, { webhook: 'wh_x', first: 1 }))).toBe('NOT_FOUND');
    expect((await t.admin<{ webhooks: unknown[] }>(LIST)).data?.webhooks).toEqual([]);
    const [count] = await t.database.sql<{ n: number }[]>`select count(*)::int as n from webhooks`;
    expect(count!.n).toBe(0);
    // The same public name is taken, its secret shown once (whsec_ and 32 bytes).
    const made = await t.admin<{ createWebhook: { secret: string; webhook: { url: string } } }>(CREATE, input(url));
    expect(made.data?.createWebhook.webhook.url).toBe(url);
    expect(Buffer.from(made.data!.createWebhook.secret.replace(/^whsec_/, ''), 'base64')).toHaveLength(32);
  });

  it('http to a loopback address only with WEBHOOK_ALLOW_PRIVATE, and never http to a public one', async () => {
    const open = await app({ webhooks: { intervalMs: null, allowPrivate: true, lookup: publicLookup } });
    expect(codeOf(await open.admin(CREATE, input('http://127.0.0.1:9/x')))).toBeUndefined();
    expect(codeOf(await open.admin(CREATE, input('http://hooks.example.com/x')))).toBe('BAD_USER_INPUT');
    expect(codeOf(await open.admin(CREATE, input('http://93.184.216.34/x')))).toBe('BAD_USER_INPUT');
  });

  it('pages deliveries newest first by a signed keyset cursor, and deletes a webhook once', async () => {
    const t = await app({ webhooks: { intervalMs: null, lookup: publicLookup } });
    const made = await t.admin<{ createWebhook: { webhook: { id: string } } }>(CREATE, input('https://hooks.example.com/x'));
    const id = made.data!.createWebhook.webhook.id;
    const base = Date.parse('2026-12-01T00:00:00Z');
    for (let i = 0; i < 7; i++) {
      const at = new Date(base + i * 1_000);
      const data = { boardId: 'B', period: 'DAILY', bucket: 'x', region: null, startsAt: null, endsAt: null, entries: [], size: i, asOf: at.toISOString() };
      await enqueueWebhookEvents(t.database.sql, [{ type: 'TOP_CHANGED', boardId: 'B', at, data }]);
    }
    // The oracle: the deliveries by their events' sizes, the last written first.
    const expected = (
      await t.database.sql<{ id: string }[]>`
      select d.id from webhook_deliveries d join webhook_events e on e.id = d.event_id order by (e.data->>'size')::int desc`
    ).map((r) => r.id);
    const seen: string[] = [];
    let after: string | null = null;
    for (let page = 0; page < 10; page++) {
      type Page = { webhookDeliveries: { edges: { node: { id: string } }[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } } };
      const answer: Awaited<ReturnType<typeof t.admin<Page>>> = await t.admin<Page>(DELIVERIES, { webhook: id, first: 3, after });
      const connection = answer.data!.webhookDeliveries;
      seen.push(...connection.edges.map((e) => e.node.id));
      if (!connection.pageInfo.hasNextPage) break;
      after = connection.pageInfo.endCursor;
    }
    expect(seen).toEqual(expected);
    expect(codeOf(await t.admin(DELIVERIES, { webhook: id, first: 3, after: 'forged.cursorxxxxxxxxxxxxxxx' }))).toBe('BAD_USER_INPUT');
    expect(codeOf(await t.admin(DELIVERIES, { webhook: id, first: 3, after, status: 'FAILED' }))).toBe('BAD_USER_INPUT');
    expect((await t.admin<{ deleteWebhook: boolean }>(DELETE, { id })).data?.deleteWebhook).toBe(true);
    expect((await t.admin<{ deleteWebhook: boolean }>(DELETE, { id })).data?.deleteWebhook).toBe(false);
    const [left] = await t.database.sql<{ n: number }[]>`select count(*)::int as n from webhook_deliveries`;
    expect(left!.n).toBe(0);
  });

  it('tells every process at once which events webhooks want (LISTEN/NOTIFY)', async () => {
    const a = await app({ webhooks: { intervalMs: null, lookup: publicLookup } });
    const b = await app({ webhooks: { intervalMs: null, lookup: publicLookup }, shareStoresOf: a });
    expect(b.app.parts.webhookInterest.wants('B', 'TOP_CHANGED')).toBe(false);
    const made = await a.admin<{ createWebhook: { webhook: { id: string } } }>(CREATE, input('https://hooks.example.com/x'));
    expect(a.app.parts.webhookInterest.wants('B', 'TOP_CHANGED')).toBe(true);
    await until(() => b.app.parts.webhookInterest.wants('B', 'TOP_CHANGED'), 5_000, 'b sees the new webhook');
    expect(b.app.parts.webhookInterest.wants('B', 'BUCKET_CLOSED')).toBe(false);
    await a.admin(DELETE, { id: made.data!.createWebhook.webhook.id });
    await until(() => !b.app.parts.webhookInterest.wants('B', 'TOP_CHANGED'), 5_000, 'b sees it deleted');
  });
});
