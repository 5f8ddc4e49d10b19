import { mkdirSync } from 'node:fs';
import { type Socket, connect, createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumFor, launchChromium, overlayRows } from './helpers/chromium.js';
import { rankScores } from './helpers/oracle.js';
import { type TestApp, startTestApp } from './helpers/test-app.js';

/**
 * The overlay for streams: its files over HTTP, then the page itself in Debian's Chromium (driven
 * by playwright-core, which never downloads a browser): the live top ten, a new score showing up
 * within 2 s, and the page coming back by itself after its connection is cut.
 */

const hasChromium = chromiumFor('overlay');

const BOARD = 'arena';
const SCREENSHOT = 'test-results/overlay.png';
const CREATE = `mutation($input: CreateBoardInput!) { createBoard(input: $input) { id } }`;
const SUBMIT = `mutation($input: SubmitScoreInput!) { submitScore(input: $input) { duplicate } }`;
const UPSERT = `mutation($input: PlayerInput!) { upsertPlayer(input: $input) { id } }`;

/** What the board should show, computed without the service: best score per player, highest first. */
function oracleTop(scores: Map<string, number>, names: Map<string, string>, limit = 10) {
  return rankScores(scores)
    .slice(0, limit)
    .map(([playerId, score], i) => ({ rank: String(i + 1), name: names.get(playerId) ?? playerId, score: new Intl.NumberFormat('en-US').format(score) }));
}

/**
 * A TCP proxy in front of the app, so the test can cut every connection the browser holds (and
 * refuse new ones for a while) the way a network drop would, without touching the server.
 */
async function startProxy(targetPort: number) {
  const open = new Set<Socket>();
  let refusing = false;
  let webSockets = 0;
  const server = createServer((client) => {
    if (refusing) return void client.destroy();
    const upstream = connect(targetPort, '127.0.0.1');
    open.add(client);
    open.add(upstream);
    client.once('data', (chunk: Buffer) => {
      if (/\r\nupgrade:\s*websocket\r\n/i.test(chunk.toString('latin1'))) webSockets += 1;
    });
    const drop = () => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    for (const socket of [client, upstream]) socket.on('error', drop).on('close', drop);
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    /** WebSocket handshakes that went through so far. */
    webSockets: () => webSockets,
    /** Drops every open connection and refuses new ones for `refuseMs`. */
    cut(refuseMs: number) {
      refusing = true;
      for (const socket of open) socket.destroy();
      // Why a timer: how long the service stays unreachable is the fault's duration, a part of the scenario.
      setTimeout(() => (refusing = false), refuseMs);
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of open) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

describe('the overlay files over HTTP', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('serves the page with its type, a page policy and revalidation headers, and answers 304 when unchanged', async () => {
    for (const path of ['/overlay', '/overlay/', `/overlay?board=${BOARD}&limit=5`]) {
      const page = await fetch(`${t.url}${path}`);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(page.headers.get('cache-control')).toBe('no-cache');
      expect(page.headers.get('content-security-policy')).toContain("connect-src 'self'");
      expect(await page.text()).toContain('<script type="module" src="/overlay/overlay.js"></script>');
    }
    const first = await fetch(`${t.url}/overlay/overlay.css`);
    expect(first.headers.get('content-type')).toBe('text/css; charset=utf-8');
    expect(first.headers.get('x-content-type-options')).toBe('nosniff');
    const etag = first.headers.get('etag');
    expect(etag).toMatch(/^".+"$/);
    const again = await fetch(`${t.url}/overlay/overlay.css`, { headers: { 'if-none-match': etag! } });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe('');
  });

  it('serves the graphql-ws browser client and every chunk it imports as JavaScript', async () => {
    const seen = new Set<string>();
    const queue = ['/overlay/graphql-ws/client.js'];
    while (queue.length > 0) {
      const path = queue.shift()!;
      if (seen.has(path)) continue;
      seen.add(path);
      const response = await fetch(`${t.url}${path}`);
      expect(response.status, path).toBe(200);
      expect(response.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
      const source = await response.text();
      for (const match of source.matchAll(/\bfrom\s*["'](\.\/[^"']+)["']/g)) queue.push(new URL(match[1]!, `${t.url}${path}`).pathname);
    }
    expect(seen.size).toBeGreaterThan(1);
    const overlayScript = await (await fetch(`${t.url}/overlay/overlay.js`)).text();
    expect(overlayScript).toContain("from './graphql-ws/client.js'");
  });

  it('answers 404 for an unknown overlay file and 405 for a write, and leaves other paths alone', async () => {
    expect((await fetch(`${t.url}/overlay/nope.js`)).status).toBe(404);
    expect((await fetch(`${t.url}/overlay/../package.json`)).status).not.toBe(200);
    const post = await fetch(`${t.url}/overlay`, { method: 'POST', body: 'x' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    expect((await fetch(`${t.url}/overlayz`)).status).not.toBe(200);
    expect((await fetch(`${t.url}/healthz`)).status).toBe(200);
  });
});

describe.skipIf(!hasChromium)('the overlay in Chromium', () => {
  let t: TestApp;
  let browser: Browser;
  let proxy: Awaited<ReturnType<typeof startProxy>>;
  const scores = new Map<string, number>();
  const names = new Map<string, string>();
  let match = 0;

  async function submit(playerId: string, score: number) {
    const answer = await t.server(SUBMIT, { input: { board: BOARD, playerId, score, matchId: `m${++match}` } });
    expect(answer.errors).toBeUndefined();
    scores.set(playerId, Math.max(score, scores.get(playerId) ?? 0));
  }

  /** Submits a score and answers how long after the submission's answer its row was on screen. */
  async function timeUntilShown(page: Page, playerId: string, score: number): Promise<number> {
    await submit(playerId, score);
    const answered = performance.now();
    await page.locator(`.rows .row[data-player="${playerId}"]`).waitFor({ timeout: 5_000 });
    return performance.now() - answered;
  }

  beforeAll(async () => {
    t = await startTestApp();
    expect((await t.admin(CREATE, { input: { id: BOARD, title: 'Arena', maxScore: 1_000_000 } })).errors).toBeUndefined();
    for (const [id, displayName] of [
      ['p01', 'Ada'],
      ['p02', 'Grace Hopper'],
      ['p05', 'Линус'],
      ['p07', '<b>Bobby</b> Tables'],
    ] as const) {
      expect((await t.server(UPSERT, { input: { id, displayName } })).errors).toBeUndefined();
      names.set(id, displayName);
    }
    // Twelve players with distinct scores, so the top ten has one order; p03 improves once.
    const start = [1200, 950, 40, 870, 1500, 600, 2250, 310, 720, 90, 1010, 450];
    for (const [i, score] of start.entries()) await submit(`p${String(i + 1).padStart(2, '0')}`, score);
    await submit('p03', 1100);
    proxy = await startProxy(Number(new URL(t.url).port));
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await proxy?.close();
    await t?.close();
  });

  it('shows the live top ten, adds a score that enters it within 2 s, and comes back after a drop', { timeout: 90_000 }, async () => {
    const context = await browser.newContext({ viewport: { width: 1920, height: 1080 }, locale: 'en-US' });
    const page = await context.newPage();
    const failures: string[] = [];
    page.on('pageerror', (error) => failures.push(`page error: ${error.message}`));
    page.on('console', (message) => {
      if (/Content.Security.Policy|Refused to/i.test(message.text())) failures.push(`blocked: ${message.text()}`);
    });

    await page.goto(`${proxy.url}/overlay?board=${BOARD}&title=Arena%20top%2010`);
    await page.waitForFunction(() => document.querySelectorAll('.rows .row').length === 10, undefined, { timeout: 10_000 });
    expect(await overlayRows(page)).toEqual(oracleTop(scores, names));
    expect(await page.locator('.status').getAttribute('data-state')).toBe('live');
    // Transparent unless asked otherwise, so a streaming tool shows the game behind it.
    expect(await page.evaluate(() => [getComputedStyle(document.documentElement).backgroundColor, getComputedStyle(document.body).backgroundColor])).toEqual([
      'rgba(0, 0, 0, 0)',
      'rgba(0, 0, 0, 0)',
    ]);

    // A newcomer at rank 3: the row is on screen within 2 s of the submission's answer.
    const shownAfter = await timeUntilShown(page, 'p13', 1300);
    expect(shownAfter).toBeLessThan(2_000);
    await page.waitForFunction(() => document.querySelectorAll('.rows .row').length === 10);
    expect(await overlayRows(page)).toEqual(oracleTop(scores, names));
    expect(oracleTop(scores, names)[2]).toMatchObject({ rank: '3', name: 'p13' });
    mkdirSync('test-results', { recursive: true });
    // What a streaming tool composites: transparent around the rows, animations run to their end.
    await page.screenshot({ path: SCREENSHOT, omitBackground: true, animations: 'disabled' });

    // Cut every connection and refuse new ones for 1.5 s: the page retries on its own.
    expect(proxy.webSockets()).toBe(1);
    proxy.cut(1_500);
    await page.waitForFunction(() => document.querySelector('.status')?.getAttribute('data-state') !== 'live', undefined, { timeout: 5_000 });
    await expect.poll(() => proxy.webSockets(), { timeout: 15_000, interval: 100 }).toBe(2);
    await page.waitForFunction(() => document.querySelector('.status')?.getAttribute('data-state') === 'live', undefined, { timeout: 5_000 });
    // The rows stayed up through the drop, and the new subscription carries new scores again.
    expect(await overlayRows(page)).toEqual(oracleTop(scores, names));
    expect(await timeUntilShown(page, 'p14', 5_000)).toBeLessThan(2_000);
    await page.waitForFunction(() => document.querySelector('.rows .row')?.getAttribute('data-player') === 'p14');
    expect(await overlayRows(page)).toEqual(oracleTop(scores, names));

    expect(failures).toEqual([]);
    await context.close();
  });

  it("shows a race board's times as times (m:ss.SSS) by default, and as the page asks with format", { timeout: 30_000 }, async () => {
    const created = await t.admin(CREATE, { input: { id: 'sprint', title: 'Sprint', order: 'LOW_FIRST', maxScore: 36_000_000 } });
    expect(created.errors).toBeUndefined();
    for (const [playerId, score] of [
      ['runner-a', 57_000],
      ['runner-b', 61_250],
      ['runner-c', 3_723_456],
      ['runner-d', 999],
    ] as const) {
      expect((await t.server(SUBMIT, { input: { board: 'sprint', playerId, score, matchId: `sprint-${playerId}` } })).errors).toBeUndefined();
    }
    const page = await browser.newPage({ locale: 'en-US' });
    const scoresShown = async (query: string, rows: number) => {
      await page.goto(`${proxy.url}/overlay?${query}`);
      await page.waitForFunction((count) => document.querySelectorAll('.rows .row').length === count, rows, { timeout: 10_000 });
      return (await overlayRows(page)).map((row) => row.score);
    };
    expect(await scoresShown('board=sprint', 4)).toEqual(['0:00.999', '0:57.000', '1:01.250', '1:02:03.456']);
    expect(await scoresShown('board=sprint&format=number', 4)).toEqual(['999', '57,000', '61,250', '3,723,456']);
    // A HIGH_FIRST board keeps its numbers, unless the page asks for times.
    expect((await t.admin(CREATE, { input: { id: 'laps', title: 'Laps', maxScore: 36_000_000 } })).errors).toBeUndefined();
    expect((await t.server(SUBMIT, { input: { board: 'laps', playerId: 'runner-a', score: 83_456, matchId: 'lap-1' } })).errors).toBeUndefined();
    expect(await scoresShown('board=laps', 1)).toEqual(['83,456']);
    expect(await scoresShown('board=laps&format=time', 1)).toEqual(['1:23.456']);
    await page.close();
  });

  it('says what is missing instead of showing a broken page', { timeout: 30_000 }, async () => {
    const page = await browser.newPage();
    await page.goto(`${proxy.url}/overlay`);
    await expect.poll(() => page.locator('.notice').textContent()).toContain('?board=');
    expect(await page.locator('.status').getAttribute('data-state')).toBe('error');

    await page.goto(`${proxy.url}/overlay?board=no-such-board`);
    await expect.poll(() => page.locator('.notice').textContent(), { timeout: 10_000 }).toContain('no-such-board');
    // It keeps trying (the board may be created later), and keeps saying why it shows nothing.
    await page.waitForTimeout(1_500);
    expect(await page.locator('.status').getAttribute('data-state')).toBe('error');
    expect(await page.locator('.rows .row').count()).toBe(0);
    await page.close();
  });
});
