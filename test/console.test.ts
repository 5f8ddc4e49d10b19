import { mkdirSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumFor, launchChromium } from './helpers/chromium.js';
import { rankScores } from './helpers/oracle.js';
import { ADMIN_KEY, SERVER_KEY, type TestApp, startTestApp } from './helpers/test-app.js';

/**
 * The operators' console at /console, clicked through in Debian's Chromium (driven by
 * playwright-core, which never downloads a browser) against the real service over PostgreSQL and
 * Redis: sign-in, boards, a board's buckets with the drift gauge and a rebuild, its live top and
 * pages, seasons, player search and a player's standings and results, moderation, API keys and
 * store health. What each page shows is compared with what the test computed from the results it
 * sent. Every flow ends by checking that the admin key was never written to localStorage,
 * sessionStorage or a cookie. Screenshots of each page are kept in test-artifacts/console/.
 */

const hasChromium = chromiumFor('console');

const ARTIFACTS = 'test-artifacts/console';
const BOARD = 'arena';
const numbers = new Intl.NumberFormat('en-US', { maximumFractionDigits: 3 });

const SUBMIT = `mutation Submit($input: SubmitScoreInput!) { submitScore(input: $input) { __typename duplicate } }`;
const UPSERT = `mutation Upsert($input: PlayerInput!) { upsertPlayer(input: $input) { __typename id } }`;

interface Sent {
  playerId: string;
  score: number;
  region: string | null;
  at: number;
}

describe('the console files over HTTP', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });

  it('serves the page with a policy that allows only its own origin and no framing, its files, and the graphql-ws client', async () => {
    for (const path of ['/console', '/console/', '/console#/boards']) {
      const page = await fetch(`${t.url}${path}`);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
      const policy = page.headers.get('content-security-policy')!;
      for (const rule of ["default-src 'self'", "connect-src 'self'", "frame-ancestors 'none'", "form-action 'none'"]) expect(policy).toContain(rule);
      expect(await page.text()).toContain('<script type="module" src="/console/console.js"></script>');
    }
    for (const [path, type] of [
      ['/console/console.css', 'text/css; charset=utf-8'],
      ...['console', 'session', 'documents', 'dom', 'router', 'boards', 'players', 'operations', 'removals'].map((module) => [
        `/console/${module}.js`,
        'text/javascript; charset=utf-8',
      ]),
      ['/console/graphql-ws/client.js', 'text/javascript; charset=utf-8'],
    ]) {
      const file = await fetch(`${t.url}${path}`);
      expect(file.status, path).toBe(200);
      expect(file.headers.get('content-type')).toBe(type);
    }
    expect(await (await fetch(`${t.url}/console/session.js`)).text()).toContain("from './graphql-ws/client.js'");
    expect((await fetch(`${t.url}/console/nope.js`)).status).toBe(404);
    expect((await fetch(`${t.url}/console`, { method: 'POST', body: 'x' })).status).toBe(405);
    // The overlay beside it is unchanged.
    expect((await fetch(`${t.url}/overlay`)).status).toBe(200);
  });
});

describe.skipIf(!hasChromium)('the console', () => {
  let t: TestApp;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const sent: Sent[] = [];
  const names = new Map<string, string>();
  const failures: string[] = [];
  let match = 0;

  async function submit(playerId: string, score: number, region: string | null = null, key = SERVER_KEY) {
    const answer = await t.gql(SUBMIT, { input: { board: BOARD, playerId, matchId: `m${++match}`, score, region } }, { key });
    expect(answer.errors).toBeUndefined();
    sent.push({ playerId, score, region, at: Date.now() });
  }

  /** The oracle: best score per player among `rows`, highest first (scores are distinct). */
  const ranked = (rows: Sent[]) => {
    const best = new Map<string, number>();
    for (const row of rows) best.set(row.playerId, Math.max(best.get(row.playerId) ?? -1, row.score));
    return rankScores(best).map(([playerId, score], i) => ({ rank: String(i + 1), playerId, score: numbers.format(score) }));
  };

  const shot = (name: string) => page.screenshot({ path: `${ARTIFACTS}/${name}.png`, fullPage: true, animations: 'disabled' });

  /** The rows of a table, as (rank, player id, score) read off the page. */
  const standingRows = (selector: string) =>
    page.$$eval(`${selector} tbody tr`, (rows) =>
      rows.map((row) => ({ rank: row.children[0]!.textContent, playerId: (row as HTMLElement).dataset.player, score: row.children[2]!.textContent })),
    );

  /** Nothing the page can reach holds the key: no cookie, no localStorage or sessionStorage entry. */
  async function expectKeyNotStored() {
    const stored = await page.evaluate(() => ({
      local: Object.entries(localStorage),
      session: Object.entries(sessionStorage),
      cookie: document.cookie,
    }));
    expect(stored).toEqual({ local: [], session: [], cookie: '' });
    expect(await context.cookies()).toEqual([]);
    expect(JSON.stringify(await context.storageState())).not.toContain(ADMIN_KEY);
  }

  async function signIn(key = ADMIN_KEY) {
    await page.fill('#admin-key', key);
    await page.click('#sign-in-form button[type=submit]');
  }

  const flashText = () => page.locator('#flash').textContent();

  /** Opens a view by its hash; the view is built afresh even when it is the one shown (as a click on its link would). */
  async function open(hash: string) {
    await page.evaluate((target) => {
      if (location.hash === target) dispatchEvent(new HashChangeEvent('hashchange'));
      else location.hash = target;
    }, hash);
  }

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    t = await startTestApp({ seasonCloseIntervalMs: 60_000 });
    const created = await t.admin(
      `mutation { createBoard(input: { id: "${BOARD}", title: "Arena", maxScore: 1000000, periods: [ALL_TIME, DAILY, SEASON], regions: ["eu", "us"] }) { id } }`,
    );
    expect(created.errors).toBeUndefined();
    for (const [id, displayName] of [
      ['p01', 'Ada Lovelace'],
      ['p02', 'Grace Hopper'],
      ['p03', 'Линус'],
      ['p04', '<b>Bobby</b> Tables'],
      ['p05', 'Zoë'],
    ] as const) {
      expect((await t.server(UPSERT, { input: { id, displayName } })).errors).toBeUndefined();
      names.set(id, displayName);
    }
    // 30 players with distinct scores, so the pages have one order: 25 on the first, 5 on the second.
    for (let i = 1; i <= 30; i++) await submit(`p${String(i).padStart(2, '0')}`, 1_000 + ((i * 7919) % 997) * 10, i % 3 === 0 ? 'eu' : null);
    await submit('p04', 99_999, 'eu');
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1360, height: 900 }, locale: 'en-US', timezoneId: 'UTC' });
    page = await context.newPage();
    page.on('pageerror', (error) => failures.push(`page error: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error' || /Content.Security.Policy|Refused to/i.test(message.text())) failures.push(`console: ${message.text()}`);
    });
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
  });

  it('signs in with an admin key held in the tab only: refuses other keys, and a reload signs out', { timeout: 60_000 }, async () => {
    await page.goto(`${t.url}/console`);
    await page.locator('#admin-key').waitFor();
    await shot('01-sign-in');
    await signIn('not-a-key');
    await expect.poll(() => page.locator('#sign-in-error').textContent()).toContain('not known');
    await signIn(SERVER_KEY);
    await expect.poll(() => page.locator('#sign-in-error').textContent()).toContain('game-server key');
    await shot('02-sign-in-refused');
    await signIn();
    await page.locator(`tr[data-board="${BOARD}"]`).waitFor();
    expect(await page.inputValue('#admin-key')).toBe('');
    await expectKeyNotStored();

    // The key lives in the page's memory only: a reload asks for it again.
    await page.reload();
    await page.locator('#admin-key').waitFor();
    expect(await page.locator('#shell').isHidden()).toBe(true);
    await signIn();
    await page.locator(`tr[data-board="${BOARD}"]`).waitFor();
    await expectKeyNotStored();
  });

  it('lists boards and creates one; its settings are shown, and edited', { timeout: 60_000 }, async () => {
    await open('#/boards');
    await page.locator(`tr[data-board="${BOARD}"]`).waitFor();
    expect(await page.locator(`tr[data-board="${BOARD}"] td`).allTextContents()).toEqual([
      'arena',
      'Arena',
      'high first',
      'best',
      'ALL_TIME, SEASON, DAILY',
      'eu, us',
      '1',
      '—',
    ]);
    await page.fill('#create-board [name=id]', 'sprint-100m');
    await page.fill('#create-board [name=title]', 'Sprint 100 m');
    await page.fill('#create-board [name=maxScore]', '600000');
    await page.selectOption('#create-board [name=order]', 'LOW_FIRST');
    await page.fill('#create-board [name=regions]', 'eu, asia');
    await page.check('#create-board [name=periods][value=WEEKLY]');
    await shot('03-boards');
    await page.click('#create-board button[type=submit]');
    await page.waitForURL(/#\/boards\/sprint-100m$/);
    await page.locator('.settings').waitFor();
    const settings = await page.$$eval('.settings dt, .settings dd', (cells) => cells.map((cell) => cell.textContent));
    expect(settings).toEqual(
      expect.arrayContaining(['Order', 'Lower scores first', 'Periods', 'ALL_TIME, WEEKLY', 'Regions', 'eu, asia', 'Max score', '600,000']),
    );
    // The API holds it as the form said.
    const stored = await t.admin<{ board: Record<string, unknown> }>(`query { board(id: "sprint-100m") { title order periods regions maxScore } }`);
    expect(stored.data!.board).toEqual({
      title: 'Sprint 100 m',
      order: 'LOW_FIRST',
      periods: ['ALL_TIME', 'WEEKLY'],
      regions: ['eu', 'asia'],
      maxScore: 600_000,
    });

    // Edited: a new title and a region added are saved; a maxScore this LOW_FIRST board cannot take is refused, saying why.
    await page.fill('#edit-board [name=title]', 'Sprint 100 m — Finals');
    await page.fill('#edit-board [name=addRegions]', 'oce');
    await shot('03b-board-edit');
    await page.click('#edit-board button[type=submit]');
    await page.locator('#flash', { hasText: 'Board sprint-100m saved.' }).waitFor();
    await page.locator('h1', { hasText: 'Sprint 100 m — Finals' }).waitFor();
    await page.fill('#edit-board [name=maxScore]', '700000');
    await page.click('#edit-board button[type=submit]');
    await page.locator('#flash[data-kind=error]', { hasText: 'LOW_FIRST' }).waitFor();
    const edited = await t.admin<{ board: Record<string, unknown> }>(`query { board(id: "sprint-100m") { title regions maxScore } }`);
    expect(edited.data!.board).toEqual({ title: 'Sprint 100 m — Finals', regions: ['eu', 'asia', 'oce'], maxScore: 600_000 });
    await expectKeyNotStored();
  });

  it("shows a board's buckets with sizes and drift, its live top as scores arrive, and its pages", { timeout: 60_000 }, async () => {
    await open(`#/boards/${BOARD}`);
    await page.locator('#buckets tbody tr').first().waitFor();
    const buckets = await page.$$eval('#buckets tbody tr', (rows) => rows.map((row) => [...row.children].slice(0, 6).map((cell) => cell.textContent)));
    const all = ranked(sent).length;
    const eu = ranked(sent.filter((row) => row.region === 'eu')).length;
    expect(buckets).toEqual(
      expect.arrayContaining([
        ['ALL_TIME', 'all', 'global', String(all), String(all), '0'],
        ['ALL_TIME', 'all', 'eu', String(eu), String(eu), '0'],
        ['ALL_TIME', 'all', 'us', '0', '0', '0'],
      ]),
    );

    // The live top: the board's top ten as the oracle has it, then a newcomer at rank 1.
    await expect.poll(() => page.locator('.live-top tbody tr').count(), { timeout: 10_000 }).toBe(10);
    expect(await standingRows('.live-top')).toEqual(ranked(sent).slice(0, 10));
    // Names are text, whatever they hold.
    expect(await page.locator('.live-top tr[data-player="p04"] a').textContent()).toBe('<b>Bobby</b> Tables');
    await submit('p31', 250_000);
    await expect.poll(() => page.locator('.live-top tbody tr').first().getAttribute('data-player'), { timeout: 5_000 }).toBe('p31');
    expect(await standingRows('.live-top')).toEqual(ranked(sent).slice(0, 10));
    expect(await page.locator('.live-top').locator('xpath=..').locator('.status').getAttribute('data-state')).toBe('live');

    // Pages: 25, then the rest, in the oracle's order.
    await expect.poll(() => page.locator('.pages tbody tr').count()).toBe(25);
    // The page was read before p31 came: read it again from the picker.
    await page.click('.bucket-picker button[type=submit]');
    await expect.poll(async () => (await standingRows('.pages'))[0]?.playerId).toBe('p31');
    expect(await standingRows('.pages')).toEqual(ranked(sent).slice(0, 25));
    await shot('04-board');
    await page.click('.pages button:has-text("Next page")');
    await expect.poll(() => page.locator('.pages [data-page]').textContent()).toBe('page 2');
    expect(await standingRows('.pages')).toEqual(ranked(sent).slice(25));

    // Another bucket from the picker: the eu list, live and paged.
    await page.selectOption('.bucket-picker [name=region]', 'eu');
    await expect
      .poll(async () => (await standingRows('.live-top')).length, { timeout: 10_000 })
      .toBe(Math.min(10, ranked(sent.filter((row) => row.region === 'eu')).length));
    await expect.poll(() => standingRows('.live-top')).toEqual(ranked(sent.filter((row) => row.region === 'eu')).slice(0, 10));
    await shot('05-board-live-top-eu');
    await expectKeyNotStored();
  });

  it('shows drift when the index lost a player, and a rebuild with its progress brings it back to 0', { timeout: 60_000 }, async () => {
    const lost = ranked(sent)[3]!.playerId;
    expect(await t.redis.zrem(`lb:{${BOARD}:ALL_TIME:all}`, lost)).toBe(1);
    await open(`#/boards/${BOARD}`);
    const row = page.locator('#buckets tr[data-period="ALL_TIME"][data-region=""]');
    await expect.poll(() => row.locator('[data-drift]').getAttribute('data-drift'), { timeout: 10_000 }).toBe('1');
    await shot('06-board-drift');
    await row.locator('button:has-text("Rebuild")').click();
    await expect.poll(() => page.locator('#flash').textContent(), { timeout: 10_000 }).toContain(`${ranked(sent).length} players ranked`);
    await expect.poll(() => page.locator('#buckets tr[data-period="ALL_TIME"][data-region=""] [data-drift]').getAttribute('data-drift')).toBe('0');
    expect(await page.locator('#buckets .progress-slot[data-state="DONE"]').count()).toBeGreaterThanOrEqual(0);
    const standing = await t.gql<{ standing: { rank: number } | null }>(`query($p: ID!) { standing(board: "${BOARD}", playerId: $p) { rank } }`, { p: lost });
    expect(standing.data!.standing).toEqual({ rank: 4 });

    // The same from Operations, with its progress beside the form.
    await page.click('a[data-section=operations]');
    await page.locator('#rebuild-form').waitFor();
    await page.selectOption('#rebuild-form [name=board]', BOARD);
    await page.selectOption('#rebuild-form [name=period]', 'DAILY');
    await page.fill('#rebuild-form [name=region]', 'eu');
    await page.click('#rebuild-form button[type=submit]');
    await expect.poll(() => page.locator('#rebuild-progress').getAttribute('data-state'), { timeout: 10_000 }).toBe('DONE');
    expect(await page.locator('#rebuild-progress').textContent()).toContain(`done: ${ranked(sent.filter((r) => r.region === 'eu')).length} ranked`);
    expect(await page.locator('#rebuild-progress progress').evaluate((bar: HTMLProgressElement) => bar.value === bar.max)).toBe(true);
    await shot('07-operations-rebuild');
    await expectKeyNotStored();
  });

  it('starts a season, sends startsAt only when one is given, closes it and browses its frozen results', { timeout: 60_000 }, async () => {
    // Scheduling (on a board of its own, since a season scheduled ahead cannot be closed before it
    // starts and no season may overlap it) sends startsAt, and the season is scheduled.
    const AHEAD = 'Ahead-EU';
    expect(
      (await t.admin(`mutation { createBoard(input: { id: "${AHEAD}", title: "Ahead", maxScore: 1000, periods: [ALL_TIME, SEASON] }) { id } }`)).errors,
    ).toBeUndefined();
    await open(`#/boards/${AHEAD}`);
    await page.locator('#start-season').waitFor();
    const scheduled = page.waitForRequest((request) => request.url().endsWith('/graphql') && (request.postData() ?? '').includes('ConsoleScheduleSeason'));
    await page.fill('#start-season [name=name]', 'Scheduled cup');
    await page.fill('#start-season [name=startsAt]', '2036-01-05T18:00');
    await page.click('#start-season button[type=submit]');
    const body = JSON.parse((await scheduled).postData()!) as { variables: Record<string, unknown> };
    expect(body.variables).toMatchObject({ board: AHEAD, name: 'Scheduled cup', startsAt: '2036-01-05T18:00:00.000Z', endsAt: null });
    await expect
      .poll(
        async () =>
          (await t.admin<{ board: { seasons: { name: string; startsAt: string }[] } }>(`query { board(id: "${AHEAD}") { seasons { name startsAt } } }`)).data!
            .board.seasons,
      )
      .toEqual([{ name: 'Scheduled cup', startsAt: '2036-01-05T18:00:00.000Z' }]);
    // The page reloads itself once the schedule is answered, and shows it.
    await page.locator('#view', { hasText: 'Scheduled cup' }).waitFor();

    const start = page.waitForRequest((request) => (request.postData() ?? '').includes('ConsoleStartSeason'));
    await open(`#/boards/${BOARD}`);
    await page.locator('#start-season').waitFor();
    await page.fill('#start-season [name=name]', 'Winter cup');
    await page.click('#start-season button[type=submit]');
    expect((JSON.parse((await start).postData()!) as { variables: Record<string, unknown> }).variables).not.toHaveProperty('startsAt');
    // Say what the console showed if the season never shows (a start sent to another board once did).
    await page
      .locator('.current-season')
      .waitFor()
      .catch(async (error: unknown) => {
        const flash = await page.locator('#flash').textContent();
        const shown = (await page.locator('#view').textContent())?.slice(0, 400);
        throw new Error(`${(error as Error).message}\nflash: ${flash}\nview: ${shown}`);
      });
    expect(await page.locator('.current-season').textContent()).toContain('Winter cup');
    const { board } = (
      await t.admin<{ board: { currentSeason: { id: string; startsAt: string } } }>(`query { board(id: "${BOARD}") { currentSeason { id startsAt } } }`)
    ).data!;

    // Results achieved in the season (it opens a moment after it is started).
    const opens = new Date(board.currentSeason.startsAt).getTime();
    await expect.poll(() => Date.now() >= opens, { timeout: 5_000, interval: 50 }).toBe(true);
    const inSeason: Sent[] = [];
    for (const [playerId, score] of [
      ['p02', 5_000],
      ['p03', 7_000],
      ['p04', 6_000],
      ['p02', 9_000],
    ] as const) {
      await submit(playerId, score);
      inSeason.push(sent.at(-1)!);
    }
    // The season's bucket: counted in the buckets (after a refresh), and live in the picker.
    await page.click('#refresh-buckets');
    await expect.poll(() => page.locator('#buckets tr[data-period="SEASON"][data-region=""] td').nth(3).textContent()).toBe(String(ranked(inSeason).length));
    await page.selectOption('.bucket-picker [name=period]', 'SEASON');
    await expect.poll(() => standingRows('.live-top'), { timeout: 10_000 }).toEqual(ranked(inSeason));
    await shot('08-board-season-open');
    await page.click('#close-season');
    await expect.poll(() => page.locator('#confirm-title').textContent()).toBe('Close “Winter cup”?');
    await shot('09-confirm-close-season');
    await page.click('#confirm-ok');
    await page.locator(`tr[data-season="${board.currentSeason.id}"] button:has-text("Results")`).waitFor({ timeout: 10_000 });
    await page.click(`tr[data-season="${board.currentSeason.id}"] button:has-text("Results")`);
    await page.locator('.season-results tbody tr').first().waitFor();
    expect(await standingRows('.season-results')).toEqual(ranked(inSeason));
    await shot('10-board-season-results');
    await expectKeyNotStored();
  });

  it('never shows a view that finished loading after the operator moved on, nor keeps what it started', { timeout: 60_000 }, async () => {
    // The board's own read is held until the operator has gone to Moderation and it has shown.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const isBoardRead = (body: string | null) => (body ?? '').includes('ConsoleBoardDetail');
    await page.route('**/graphql', async (route) => {
      if (isBoardRead(route.request().postData())) await held;
      await route.continue();
    });
    try {
      const boardRead = page.waitForRequest((request) => isBoardRead(request.postData()));
      await open(`#/boards/${BOARD}`);
      await boardRead;
      await open('#/moderation');
      await page.locator('#view h1', { hasText: 'Moderation' }).waitFor();
      // What the page sends on its socket from here on (the board's view subscribes to its live top).
      await page.evaluate(() => {
        const sent: string[] = [];
        // A property, not a method: taken off the prototype, it is called with the socket as `this`.
        const prototype: { send: (this: WebSocket, data: Parameters<WebSocket['send']>[0]) => void } = WebSocket.prototype;
        const send = prototype.send;
        Object.assign(window, { framesSent: sent, realSend: send });
        WebSocket.prototype.send = function (data) {
          if (typeof data === 'string') sent.push(data);
          send.call(this, data);
        };
      });
      // Released, the board's view builds itself, subscribes and asks for its first page of
      // standings before it would show: once that request is seen and the page has run a task
      // more, it has shown or not, and any subscription it made was sent.
      const pageRead = page.waitForRequest((request) => (request.postData() ?? '').includes('ConsolePage'));
      release();
      await pageRead;
      await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 0)));
      expect(await page.locator('#view h1').allTextContents()).toEqual(['Moderation']);
      // A subscription it made is completed (graphql-ws sends none when it is stopped before it is sent).
      const frames = (await page.evaluate(() => (window as unknown as { framesSent: string[] }).framesSent)).map(
        (frame) => JSON.parse(frame) as { id?: string; type: string },
      );
      const unfinished = new Set(frames.filter((frame) => frame.type === 'subscribe').map((frame) => frame.id));
      for (const frame of frames) if (frame.type === 'complete') unfinished.delete(frame.id);
      expect([...unfinished]).toEqual([]);
    } finally {
      release();
      await page.unroute('**/graphql');
      await page.evaluate(() => {
        const saved = (window as unknown as { realSend?: WebSocket['send'] }).realSend;
        if (saved) WebSocket.prototype.send = saved;
      });
    }
  });

  it('finds a player, shows their standing in every bucket and recent results, flags and unflags them', { timeout: 60_000 }, async () => {
    await page.click('a[data-section=players]');
    await page.fill('#search [name=text]', 'bob');
    await page.click('#search button[type=submit]');
    await page.locator('#search-results tr[data-player="p04"]').waitFor();
    expect(await page.locator('#search-results tbody tr td').allTextContents()).toEqual(['p04', '<b>Bobby</b> Tables', 'shown']);
    await shot('11-players-search');
    await page.click('#search-results a:has-text("p04")');
    await page.waitForURL(/#\/players\/p04$/);
    await page.locator('table[aria-label="Standings"]').waitFor();

    const p04 = sent.filter((row) => row.playerId === 'p04');
    const rankOf = (rows: Sent[]) => ranked(rows).find((entry) => entry.playerId === 'p04')!;
    const globalAllTime = rankOf(sent);
    const euAllTime = rankOf(sent.filter((row) => row.region === 'eu'));
    const shown = await page.$$eval('table[aria-label="Standings"] tbody tr', (rows) =>
      rows.map((row) => ({
        period: (row as HTMLElement).dataset.period,
        region: (row as HTMLElement).dataset.region,
        score: row.children[4]!.textContent,
        rank: row.children[5]!.textContent,
      })),
    );
    expect(shown).toEqual(
      expect.arrayContaining([
        { period: 'ALL_TIME', region: '', score: globalAllTime.score, rank: globalAllTime.rank },
        { period: 'ALL_TIME', region: 'eu', score: euAllTime.score, rank: euAllTime.rank },
      ]),
    );
    // ALL_TIME and DAILY, global and eu (the closed season's bucket is read through its results).
    expect(shown).toHaveLength(4);
    const results = await page.$$eval('table[aria-label="Recent results"] tbody tr', (rows) => rows.map((row) => row.children[3]!.textContent));
    expect(results).toEqual([...p04].reverse().map((row) => numbers.format(row.score)));
    await shot('12-player');

    await page.fill('#flag-form [name=reason]', 'Impossible scores in the eu arena');
    await page.click('#flag-form button[type=submit]');
    await expect.poll(() => page.locator('.flag-note').textContent()).toContain('Impossible scores in the eu arena');
    expect(await page.$$eval('table[aria-label="Standings"] tbody tr', (rows) => rows.map((row) => row.children[5]!.textContent))).toEqual([
      '—',
      '—',
      '—',
      '—',
    ]);
    await shot('13-player-flagged');

    await page.click('a[data-section=moderation]');
    await page.locator('table[aria-label="Flagged players"] tr[data-player="p04"]').waitFor();
    expect(await page.locator('table[aria-label="Flagged players"] tr[data-player="p04"] td').nth(1).textContent()).toBe('Impossible scores in the eu arena');
    await shot('14-moderation');
    await page.click('table[aria-label="Flagged players"] tr[data-player="p04"] button:has-text("Clear")');
    await expect.poll(() => page.locator('.card .empty').first().textContent()).toBe('Nobody is flagged.');
    const back = await t.gql<{ standing: { rank: number } | null }>(`query { standing(board: "${BOARD}", playerId: "p04") { rank } }`);
    expect(back.data!.standing?.rank).toBe(Number(globalAllTime.rank));
    await expectKeyNotStored();
  });

  it('erases a player only after a confirmation naming them', { timeout: 60_000 }, async () => {
    await open('#/players/p03');
    await page.locator('#erase').waitFor();
    await page.click('#erase');
    await expect.poll(() => page.locator('#confirm-title').textContent()).toBe('Erase “Линус” (p03)?');
    expect(await page.locator('#confirm-ok').isDisabled()).toBe(true);
    await page.fill('#confirm-type', 'p0');
    expect(await page.locator('#confirm-ok').isDisabled()).toBe(true);
    await page.fill('#confirm-type', 'p03');
    await shot('15-confirm-erase');
    // Cancelled: nothing happens.
    await page.click('#confirm-cancel');
    expect((await t.gql<{ player: unknown }>(`query { player(id: "p03") { id } }`)).data!.player).toEqual({ id: 'p03' });
    await page.click('#erase');
    await page.fill('#confirm-type', 'p03');
    await page.click('#confirm-ok');
    await page.waitForURL(/#\/players$/);
    await expect.poll(flashText).toBe('p03 was erased.');
    expect((await t.gql<{ player: unknown }>(`query { player(id: "p03") { id } }`)).data!.player).toBeNull();
    expect((await t.gql<{ standing: unknown }>(`query { standing(board: "${BOARD}", playerId: "p03") { rank } }`)).data!.standing).toBeNull();
    await expectKeyNotStored();
  });

  it('shows store health, makes an API key shown once, lists and revokes it', { timeout: 60_000 }, async () => {
    await page.click('a[data-section=operations]');
    await page.locator('.probe[data-store="PostgreSQL"]').waitFor();
    expect(await page.locator('.probe[data-store="PostgreSQL"]').getAttribute('data-up')).toBe('true');
    expect(await page.locator('.probe[data-store="Redis"]').getAttribute('data-up')).toBe('true');
    expect(await page.locator('.probe[data-store="index"]').textContent()).toContain('ready');
    expect(await page.locator('#health-pill').textContent()).toBe('stores ok');

    await page.fill('#create-key [name=name]', 'EU game servers');
    // Issue 59: kept to one board, which its row shows.
    await page.check(`#create-key input[name=boards][value="${BOARD}"]`);
    await page.click('#create-key button[type=submit]');
    const key = (await page.locator('#new-key-value').textContent())!;
    expect(key).toMatch(/^lb_server_/);
    await shot('16-operations-key-created');
    // The key works as a game server's, and is listed without itself.
    await submit('p40', 123, null, key);
    const id = (await page.locator('#keys tbody tr').first().getAttribute('data-key'))!;
    await page.click('#new-key button:has-text("I have saved it")');
    expect(await page.locator('body').textContent()).not.toContain(key);
    await page.click('a[data-section=boards]');
    await page.click('a[data-section=operations]');
    await page.locator(`#keys tr[data-key="${id}"]`).waitFor();
    expect(await page.locator('body').textContent()).not.toContain(key);
    expect(await page.locator(`#keys tr[data-key="${id}"] td.boards`).textContent()).toBe(BOARD);

    await page.click(`#keys tr[data-key="${id}"] button:has-text("Revoke")`);
    await expect.poll(() => page.locator('#confirm-title').textContent()).toBe('Revoke “EU game servers”?');
    await page.click('#confirm-ok');
    await expect.poll(() => page.locator(`#keys tr[data-key="${id}"] .badge`).textContent()).toContain('revoked');
    await shot('17-operations');
    const refused = await t.gql(SUBMIT, { input: { board: BOARD, playerId: 'p40', matchId: 'after-revoke', score: 1 } }, { key });
    expect(refused.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED');
    await expectKeyNotStored();

    // Signing out forgets the key: the console asks for it again.
    await page.click('#sign-out');
    await page.locator('#admin-key').waitFor();
    expect(await page.locator('#view').textContent()).toBe('');
    await expectKeyNotStored();
    expect(failures).toEqual([]);
  });
});
