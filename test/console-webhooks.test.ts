import { type IncomingHttpHeaders, type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enqueueWebhookEvents } from '../src/db/webhook-outbox.js';
import type { BucketClosedData } from '../src/model/webhooks.js';
import { chromiumFor, launchChromium, openHash, signedInConsole } from './helpers/chromium.js';
import { movableClock } from './helpers/clock.js';
import { labelsAt } from './helpers/oracle.js';
import { settle } from './helpers/wait.js';
import { ADMIN_KEY, type GraphQLResponse, type TestApp, startTestApp } from './helpers/test-app.js';

/**
 * The console's webhooks page (issue 58), in Debian's Chromium against the real service and a
 * receiver of the test's own on 127.0.0.1: a webhook created through the form (its secret shown
 * once, and the one deliveries are signed with: the receiver verifies them with it through
 * standardwebhooks), listed as typed; a delivery the receiver refused until it was given up, listed
 * among the failed ones with the attempts the receiver counted; Redeliver, the receiver answering
 * now, takes the row to DELIVERED with the same webhook-id; the deliveries paged; the webhook
 * deleted. The board page's reward bands edited through their form and read back through the API,
 * and a closed bucket's awards against the test's own ranking of what it sent.
 *
 * With SCREENSHOT_DIR set, the webhooks page, a webhook's deliveries and a board's reward bands are
 * saved there (console-webhooks.png, console-webhook-deliveries.png, console-rewards.png).
 */

const hasChromium = chromiumFor('console webhooks');
const SCREENSHOT_DIR = process.env.SCREENSHOT_DIR;

const BOARD = 'Hooks-Arena';
const DAILY_BOARD = 'Daily-Prizes';
// A Wednesday in years to come, so that the keys the app sets expiries on from this clock stay.
const DAY_1 = new Date('2037-12-02T09:00:00.000Z');
const HOUR_MS = 3_600_000;

const SUBMIT = `mutation Submit($input: SubmitScoreInput!) { submitScore(input: $input) { __typename duplicate } }`;
const DELIVERIES = `query D($webhook: ID!, $status: DeliveryStatus, $after: String) {
  webhookDeliveries(webhook: $webhook, status: $status, first: 100, after: $after) {
    edges { node { id status attempts lastError } } pageInfo { endCursor hasNextPage } } }`;

interface ApiDelivery {
  id: string;
  status: string;
  attempts: number;
  lastError: string | null;
}
interface DeliveriesPage {
  webhookDeliveries: { edges: { node: ApiDelivery }[]; pageInfo: { endCursor: string | null; hasNextPage: boolean } };
}

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  answered: number;
}

/** A receiver on 127.0.0.1 answering `status` to every delivery, keeping what it was sent. */
async function startReceiver() {
  const received: Received[] = [];
  const state = { status: 500 };
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({ headers: request.headers, body: Buffer.concat(chunks).toString('utf8'), answered: state.status });
      response.writeHead(state.status, { 'content-type': 'text/plain' }).end(state.status === 200 ? 'ok' : 'receiver down for the test');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/leaderboard?team=ops`,
    received,
    state,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A BUCKET_CLOSED event's data as the outbox takes it (its content is not what this test reads). */
function closedData(bucket: string, at: Date): BucketClosedData {
  return { boardId: BOARD, period: 'ALL_TIME', bucket, region: null, closedAt: at.toISOString(), size: 0, top: [], awards: [], awardCount: 0 };
}

describe.skipIf(!hasChromium)('the console lists webhooks and their failed deliveries, and redelivers', () => {
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  const clock = movableClock({ startsAt: DAY_1 });
  const failures: string[] = [];
  let secret = '';
  let webhookId = '';

  const open = (hash: string) => openHash(page, hash);

  /** A webhook's deliveries as the API pages them, every page. */
  async function deliveriesOf(webhook: string, status: string | null = null) {
    const all: ApiDelivery[] = [];
    let after: string | null = null;
    for (;;) {
      const answer: GraphQLResponse<DeliveriesPage> = await t.admin<DeliveriesPage>(DELIVERIES, { webhook, status, after });
      expect(answer.errors, JSON.stringify(answer.errors)).toBeUndefined();
      all.push(...answer.data!.webhookDeliveries.edges.map((edge) => edge.node));
      if (!answer.data!.webhookDeliveries.pageInfo.hasNextPage) return all;
      after = answer.data!.webhookDeliveries.pageInfo.endCursor;
    }
  }

  /** The deliveries table as shown. */
  const shownDeliveries = () =>
    page.$$eval('.deliveries tbody tr', (rows) =>
      rows.map((row) => {
        const cells = [...row.children].map((cell) => cell.textContent);
        return {
          id: (row as HTMLElement).dataset.delivery,
          status: (row as HTMLElement).dataset.status,
          event: cells[1],
          attempts: cells[3],
          lastError: cells[6],
        };
      }),
    );

  beforeAll(async () => {
    receiver = await startReceiver();
    t = await startTestApp({ now: clock.now, webhooks: { allowPrivate: true } });
    for (const input of [
      { id: BOARD, title: 'Hooks arena', maxScore: 100_000, periods: ['ALL_TIME'] },
      { id: DAILY_BOARD, title: 'Daily prizes', maxScore: 100_000, periods: ['ALL_TIME', 'DAILY'], closeGraceSeconds: 60, rankStyle: 'COMPETITION' },
    ]) {
      const created = await t.admin(`mutation($input: CreateBoardInput!) { createBoard(input: $input) { id } }`, { input });
      expect(created.errors, JSON.stringify(created.errors)).toBeUndefined();
    }
    browser = await launchChromium();
    page = await signedInConsole(browser, t.url, ADMIN_KEY, BOARD, failures);
    if (SCREENSHOT_DIR) mkdirSync(SCREENSHOT_DIR, { recursive: true });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await receiver?.close();
  });

  it('creates a webhook through the form, shows its secret once and lists it as typed', { timeout: 60_000 }, async () => {
    await page.click('a[data-section=webhooks]');
    await page.locator('#create-webhook').waitFor();
    expect(await page.locator('#webhooks .empty').textContent()).toContain('No webhooks yet');

    // A URL the service refuses: said with its code, nothing created.
    await page.fill('#create-webhook [name=url]', 'ftp://127.0.0.1/hook');
    await page.check('#create-webhook input[name=events][value=BUCKET_CLOSED]');
    await page.click('#create-webhook button[type=submit]');
    await page.locator('#flash[data-kind=error]', { hasText: 'BAD_USER_INPUT' }).waitFor({ timeout: 10_000 });
    expect((await t.admin<{ webhooks: unknown[] }>('{ webhooks { id } }')).data!.webhooks).toEqual([]);

    await page.fill('#create-webhook [name=url]', receiver.url);
    await page.check(`#create-webhook input[name=boards][value="${BOARD}"]`);
    await page.click('#create-webhook button[type=submit]');
    await page.locator('#new-webhook-secret').waitFor({ timeout: 10_000 });
    secret = (await page.locator('#new-webhook-secret').textContent())!;
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/=]+$/);
    expect(await page.locator('#new-webhook .once').textContent()).toContain('copy its signing secret now');

    // Listed as typed.
    const row = page.locator('#webhooks tbody tr');
    await expect.poll(() => row.count(), { timeout: 10_000 }).toBe(1);
    webhookId = (await row.getAttribute('data-webhook'))!;
    expect(await row.locator('td.url').textContent()).toBe(receiver.url);
    expect(await row.locator('td.events').textContent()).toBe('BUCKET_CLOSED');
    expect(await row.locator('td.boards').textContent()).toBe(BOARD);
    expect(await row.locator('[data-failing]').textContent()).toBe('ok');
    const { webhooks } = (
      await t.admin<{ webhooks: { id: string; url: string; events: string[]; boards: string[] }[] }>('{ webhooks { id url events boards } }')
    ).data!;
    expect(webhooks).toEqual([{ id: webhookId, url: receiver.url, events: ['BUCKET_CLOSED'], boards: [BOARD] }]);

    // The page shown again, and the whole page reloaded (signed in again): the secret is gone.
    await open('#/webhooks');
    await page.locator(`#webhooks tr[data-webhook="${webhookId}"]`).waitFor();
    expect(await page.locator('#new-webhook-secret').count()).toBe(0);
    await page.reload();
    await page.fill('#admin-key', ADMIN_KEY);
    await page.click('#sign-in-form button[type=submit]');
    await page.locator(`#webhooks tr[data-webhook="${webhookId}"]`).waitFor({ timeout: 10_000 });
    expect(await page.locator('#new-webhook-secret').count()).toBe(0);
    expect(await page.content()).not.toContain(secret);
    expect(failures).toEqual([]);
  });

  it('lists a delivery given up as failed, with the attempts the receiver saw, and Redeliver delivers it with the same id', { timeout: 120_000 }, async () => {
    expect(webhookId).not.toBe('');
    // An event of the board (written as the closes write theirs); the receiver refuses it.
    receiver.state.status = 500;
    const made = await enqueueWebhookEvents(t.database.sql, [
      { type: 'BUCKET_CLOSED', boardId: BOARD, data: closedData('first', clock.now()), at: clock.now() },
    ]);
    expect(made).toBe(1);
    const [delivery] = await deliveriesOf(webhookId);
    const deliveryId = delivery!.id;
    await expect.poll(() => receiver.received.length, { timeout: 30_000 }).toBeGreaterThanOrEqual(1);

    // A day and more later the next attempt is the last: FAILED.
    clock.advance(25 * HOUR_MS);
    const failed = await settle(
      () => deliveriesOf(webhookId),
      (list) => list[0]?.status === 'FAILED',
      30_000,
    );
    expect(failed.map(({ id, status }) => ({ id, status }))).toEqual([{ id: deliveryId, status: 'FAILED' }]);
    const attempts = receiver.received.length;
    expect(receiver.received.every((request) => request.headers['webhook-id'] === deliveryId)).toBe(true);

    // The webhook's page: the failed list (the default), with the receiver's count of attempts and its refusal.
    await open('#/webhooks');
    await page.locator(`#webhooks tr[data-webhook="${webhookId}"] [data-failing]`).waitFor();
    expect(Number(await page.locator(`#webhooks tr[data-webhook="${webhookId}"] [data-failing]`).getAttribute('data-failing'))).toBeGreaterThan(0);
    await page.click(`#webhooks tr[data-webhook="${webhookId}"] a >> text=Deliveries`);
    await page.locator('.deliveries tbody tr').first().waitFor({ timeout: 10_000 });
    expect(await page.locator('#delivery-filter select').inputValue()).toBe('FAILED');
    const shown = await shownDeliveries();
    expect(shown.map(({ id, status, event, attempts: n }) => ({ id, status, event, attempts: n }))).toEqual([
      { id: deliveryId, status: 'FAILED', event: 'BUCKET_CLOSED', attempts: String(attempts) },
    ]);
    expect(shown[0]!.lastError).toContain('500');
    // Nothing pending or delivered yet.
    await page.selectOption('#delivery-filter select', 'DELIVERED');
    await page.locator('.deliveries .empty', { hasText: 'No delivered deliveries' }).waitFor({ timeout: 10_000 });
    await page.selectOption('#delivery-filter select', 'FAILED');
    await page.locator(`.deliveries tr[data-delivery="${deliveryId}"]`).waitFor({ timeout: 10_000 });

    if (SCREENSHOT_DIR) await page.locator('#view').screenshot({ path: join(SCREENSHOT_DIR, 'console-webhook-deliveries.png'), animations: 'disabled' });

    // The receiver answers now; Redeliver: the row moves on to DELIVERED by itself.
    receiver.state.status = 200;
    await page.click(`.deliveries tr[data-delivery="${deliveryId}"] button >> text=Redeliver`);
    await expect.poll(() => page.locator(`.deliveries tr[data-delivery="${deliveryId}"]`).getAttribute('data-status'), { timeout: 30_000 }).toBe('DELIVERED');
    // Sent once more, with the same webhook-id, signed with the secret the page showed once.
    const delivered = receiver.received.filter((request) => request.answered === 200);
    expect(delivered).toHaveLength(1);
    expect(delivered[0]!.headers['webhook-id']).toBe(deliveryId);
    const verified = new Webhook(secret).verify(delivered[0]!.body, delivered[0]!.headers as Record<string, string>) as { type: string };
    expect(verified.type).toBe('bucket.closed');
    const row = await shownDeliveries();
    expect(row).toEqual([expect.objectContaining({ id: deliveryId, status: 'DELIVERED', attempts: String(attempts + 1) })]);

    // The list says the webhook is well again.
    await open('#/webhooks');
    await expect
      .poll(() => page.locator(`#webhooks tr[data-webhook="${webhookId}"] [data-failing]`).getAttribute('data-failing'), { timeout: 10_000 })
      .toBe('0');
    expect(failures).toEqual([]);
  });

  it('pages the deliveries', { timeout: 120_000 }, async () => {
    receiver.state.status = 200;
    const events = Array.from({ length: 30 }, (_, i) => ({
      type: 'BUCKET_CLOSED' as const,
      boardId: BOARD,
      data: closedData(`page-${i}`, clock.now()),
      at: new Date(clock.now().getTime() + i),
    }));
    expect(await enqueueWebhookEvents(t.database.sql, events)).toBe(30);
    const all = await settle(
      () => deliveriesOf(webhookId),
      (list) => list.length === 31 && list.every((delivery) => delivery.status === 'DELIVERED'),
      60_000,
    );
    expect(all.filter((delivery) => delivery.status === 'DELIVERED')).toHaveLength(31);
    const expectedIds = (await t.database.sql<{ id: string }[]>`select id from webhook_deliveries where webhook_id = ${webhookId}`).map((row) => row.id).sort();

    await open(`#/webhooks/${encodeURIComponent(webhookId)}`);
    await page.locator('#delivery-filter select').waitFor();
    await page.selectOption('#delivery-filter select', 'DELIVERED');
    await expect.poll(async () => (await shownDeliveries()).length, { timeout: 10_000 }).toBe(25);
    const first = await shownDeliveries();
    await page.click('.deliveries .pager button >> text=Next page');
    await page.locator('.deliveries [data-page="2"]').waitFor({ timeout: 10_000 });
    const second = await shownDeliveries();
    expect(second).toHaveLength(6);
    expect([...first, ...second].map((row) => row.id).sort()).toEqual(expectedIds);
    expect(await page.locator('.deliveries .pager button >> text=Next page').isDisabled()).toBe(true);

    if (SCREENSHOT_DIR) {
      await open('#/webhooks');
      await page.locator(`#webhooks tr[data-webhook="${webhookId}"]`).waitFor();
      await page.locator('#view').screenshot({ path: join(SCREENSHOT_DIR, 'console-webhooks.png'), animations: 'disabled' });
    }
    expect(failures).toEqual([]);
  });

  it('deletes the webhook after a confirmation', { timeout: 60_000 }, async () => {
    await open(`#/webhooks/${encodeURIComponent(webhookId)}`);
    await page.click('#delete-webhook');
    await page.locator('#confirm[open]').waitFor();
    expect(await page.locator('#confirm-text').textContent()).toContain(receiver.url);
    await page.click('#confirm-ok');
    await page.locator('#webhooks .empty').waitFor({ timeout: 10_000 });
    expect(await page.evaluate(() => location.hash)).toBe('#/webhooks');
    expect((await t.admin<{ webhooks: unknown[] }>('{ webhooks { id } }')).data!.webhooks).toEqual([]);
    expect(failures).toEqual([]);
  });

  it('edits a board’s reward bands through the form, as the API then reads them', { timeout: 60_000 }, async () => {
    await open(`#/boards/${encodeURIComponent(DAILY_BOARD)}`);
    await page.locator('#edit-rewards').waitFor({ timeout: 10_000 });
    expect(await page.locator('#rewards .empty').textContent()).toContain('No reward bands');

    await page.click('#add-band');
    await page.click('#add-band');
    const rows = page.locator('#edit-rewards .band-row');
    await rows.nth(0).locator('[data-key=name]').fill('Gold');
    await rows.nth(0).locator('[data-key=fromRank]').fill('1');
    await rows.nth(0).locator('[data-key=toRank]').fill('2');
    await rows.nth(1).locator('[data-key=name]').fill('Top half');
    await rows.nth(1).locator('[data-key=kind]').selectOption('percent');
    await rows.nth(1).locator('[data-key=topPercent]').fill('50');
    await page.click('#edit-rewards button[type=submit]');
    await page.locator('#flash', { hasText: `Reward bands of ${DAILY_BOARD} saved` }).waitFor({ timeout: 10_000 });

    const read = async () =>
      (
        await t.admin<{ board: { rewards: unknown[] } }>(`query($id: ID!) { board(id: $id) { rewards { name fromRank toRank topPercent } } }`, {
          id: DAILY_BOARD,
        })
      ).data!.board.rewards;
    expect(await read()).toEqual([
      { name: 'Gold', fromRank: 1, toRank: 2, topPercent: null },
      { name: 'Top half', fromRank: null, toRank: null, topPercent: 50 },
    ]);
    expect(await page.$$eval('table.reward-bands tbody tr', (trs) => trs.map((tr) => [tr.children[0]!.textContent, tr.children[1]!.textContent]))).toEqual([
      ['Gold', 'ranks 1 to 2'],
      ['Top half', 'the top 50% (ranks 1 to ⌈players × 50 / 100⌉)'],
    ]);

    if (SCREENSHOT_DIR) await page.locator('#rewards').screenshot({ path: join(SCREENSHOT_DIR, 'console-rewards.png'), animations: 'disabled' });

    // Two bands named alike: refused, said with its code, the bands kept.
    await page.click('#add-band');
    await page.locator('#edit-rewards .band-row').nth(2).locator('[data-key=name]').fill('gold');
    await page.click('#edit-rewards button[type=submit]');
    await page.locator('#flash[data-kind=error]', { hasText: 'BAD_USER_INPUT' }).waitFor({ timeout: 10_000 });
    expect(await read()).toHaveLength(2);
    expect(failures).toEqual([]);
  });

  it('lists a closed bucket’s awards, band by band in rank order', { timeout: 120_000 }, async () => {
    // Five players, two tied (COMPETITION: 1, 2, 2, 4, 5): Gold (ranks 1–2) takes three, Top half (⌈5 × 50 / 100⌉ = 3) the same three.
    const scores: [string, number][] = [
      ['ana', 900],
      ['Bo', 800],
      ['Chloé', 800],
      ['dmitri', 500],
      ['EU-7', 100],
    ];
    const day = labelsAt(clock.now()).DAILY!;
    for (const [i, [playerId, score]] of scores.entries()) {
      const answer = await t.server(SUBMIT, { input: { board: DAILY_BOARD, playerId, matchId: `a${i}`, score, achievedAt: clock.now().toISOString() } });
      expect(answer.errors, JSON.stringify(answer.errors)).toBeUndefined();
    }
    // The oracle: ranks by COMPETITION, ties on score broken by time then id as the board shows them.
    const ranked = scores.map(([playerId, score]) => ({ playerId, rank: 1 + scores.filter(([, other]) => other > score).length }));
    const halfTo = Math.ceil((scores.length * 50) / 100);
    const expected = [
      ...ranked.filter((entry) => entry.rank <= 2).map((entry) => ({ band: 'Gold', ...entry })),
      ...ranked.filter((entry) => entry.rank <= halfTo).map((entry) => ({ band: 'Top half', ...entry })),
    ];

    clock.advance(26 * HOUR_MS);
    const closed = await settle(
      () =>
        t.admin<{ awards: { edges: unknown[] } }>(`query($b: ID!, $d: String!) { awards(board: $b, period: DAILY, bucket: $d) { edges { cursor } } }`, {
          b: DAILY_BOARD,
          d: day,
        }),
      (answer) => !answer.errors && (answer.data?.awards.edges.length ?? 0) > 0,
      30_000,
      250,
    );
    expect(closed.errors, JSON.stringify(closed.errors)).toBeUndefined();

    await open(`#/boards/${encodeURIComponent(DAILY_BOARD)}/DAILY/${encodeURIComponent(day)}`);
    await page.locator('.awards tbody tr').first().waitFor({ timeout: 10_000 });
    const shown = await page.$$eval('.awards tbody tr', (trs) =>
      trs.map((tr) => ({ band: (tr as HTMLElement).dataset.band, playerId: (tr as HTMLElement).dataset.player, rank: Number(tr.children[1]!.textContent) })),
    );
    // Band by band in the board's order, each in rank order; players tied on a rank in the order the board breaks ties by.
    expect(shown.map(({ band, rank }) => ({ band, rank }))).toEqual(expected.map(({ band, rank }) => ({ band, rank })));
    const key = (row: { band: string | undefined; playerId: string | undefined; rank: number }) => `${row.band} ${row.rank} ${row.playerId}`;
    expect(shown.map(key).sort()).toEqual(expected.map(key).sort());
    expect(failures).toEqual([]);
  });
});
