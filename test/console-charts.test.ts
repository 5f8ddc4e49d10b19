import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bucketAt } from '../src/model/buckets.js';
import { closeCalendarLists } from '../src/writes/close-buckets.js';
import { chromiumFor, launchChromium, signedInConsole } from './helpers/chromium.js';
import { movableClock } from './helpers/clock.js';
import { type OracleBoard, type OracleEntry, type OracleResult, bucketId, foldResults, labelsAt, rankEntries } from './helpers/oracle.js';
import { ADMIN_KEY, type TestApp, startTestApp } from './helpers/test-app.js';

/**
 * The console's charts and exports (issue 21), in Debian's Chromium against the real service: a
 * board's buckets period by period (open and closed, with the next reset), a player's rank over
 * the closed days and weeks drawn as SVG (one point per closed bucket at the rank the test works
 * out itself from the results it sent), a bucket's score histogram (each bar's count against the
 * test's own count of the scores in its bin), and the export buttons' files (their first rows
 * against the test's own ranking). Player names are hostile markup and must stay text.
 *
 * With SCREENSHOT_DIR set, the rank chart and the histogram are saved there as
 * console-history.png and console-histogram.png (CI leaves it unset and writes nothing).
 */

const hasChromium = chromiumFor('console charts');
const SCREENSHOT_DIR = process.env.SCREENSHOT_DIR;

const BOARD = 'charts';
const BOARD_TITLE = 'Charts <arena>';
const ORACLE_BOARD: OracleBoard = { id: BOARD, order: 'HIGH_FIRST', aggregate: 'BEST', periods: ['ALL_TIME', 'WEEKLY', 'DAILY'] };
// Thursday of 2037-W48, in years to come so that the keys the app sets expiries on from this clock stay.
const START = new Date('2037-11-26T09:00:00.000Z');
const DAY_MS = 86_400_000;
/** Thursday 26 November to Tuesday 1 December: five days and a week close, the last day and its week stay open. */
const DAYS = 6;
const PLAYERS = 40;
/** The player charted: a hostile name, in the eu region, and no result on the third day (a gap). */
const CHARTED = 'p03';
const HOSTILE_NAME = '<script>window.pwned=1</script>Zoë 🎮<img src=x onerror=alert(2)>';
const HOSTILE_ID = '<b>ü</b>&amp;';

const SUBMIT = `mutation Submit($input: SubmitScoreInput!) { submitScore(input: $input) { __typename duplicate } }`;
const UPSERT = `mutation Upsert($input: PlayerInput!) { upsertPlayer(input: $input) { __typename id } }`;
const SERVER = { key: 'test-server-key-0123456789' };

const playerIds = Array.from({ length: PLAYERS }, (_, i) => `p${String(i + 1).padStart(2, '0')}`);
const inEu = (playerId: string) => Number(playerId.slice(1)) % 3 === 0;
/**
 * Every score is different (53 and 1009 are coprime, 1009 is prime, and k % 7 < 10): no rank is
 * ever decided by time or id. The k % 7 keeps them off the histograms' inner bin edges.
 */
function scoreOf(day: number, player: number): number {
  const k = ((day * PLAYERS + player) * 53) % 1009;
  return 1_000 + 10 * k + (k % 7);
}

describe.skipIf(!hasChromium)('the console charts a player’s history and a bucket’s scores, and exports a bucket', () => {
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  const results: OracleResult[] = [];
  const failures: string[] = [];
  let buckets: Map<string, Map<string, OracleEntry>>;
  const closedDays: string[] = [];

  /** The oracle's ranking of one bucket. */
  const ranking = (period: string, label: string, region: string | null) =>
    rankEntries(ORACLE_BOARD, buckets.get(bucketId(period, label, region))?.values() ?? []);

  /** The charted player's final rank and bucket size in each closed bucket of a period where they had one, oldest first. */
  const historyOf = (playerId: string, period: 'DAILY' | 'WEEKLY', labels: string[], region: string | null) =>
    labels.flatMap((label) => {
      const ranked = ranking(period, label, region);
      const at = ranked.findIndex((entry) => entry.playerId === playerId);
      return at < 0 ? [] : [{ bucket: label, rank: String(at + 1), size: String(ranked.length) }];
    });

  async function open(hash: string) {
    await page.evaluate((target) => {
      if (location.hash === target) dispatchEvent(new HashChangeEvent('hashchange'));
      else location.hash = target;
    }, hash);
  }

  /** The points a rank chart drew, left to right, with where it drew them. */
  const chartPoints = (period: string) =>
    page.$$eval(`section.history[data-period="${period}"] circle.point`, (dots) =>
      dots.map((dot) => {
        const data = (dot as SVGElement).dataset;
        return { bucket: data.bucket, rank: data.rank, size: data.size, cx: Number(dot.getAttribute('cx')), cy: Number(dot.getAttribute('cy')) };
      }),
    );

  /** The histogram's bars, lowest bin first. */
  const bars = () =>
    page.$$eval('figure.histogram rect.bar', (rects) =>
      rects.map((rect) => {
        const data = (rect as SVGElement).dataset;
        return { from: Number(data.from), to: Number(data.to), players: Number(data.players) };
      }),
    );

  /**
   * The test's own count of `scores` in `bins` equal-width bins from the lowest score to the
   * highest: [from, to), the last bin holding its upper edge too.
   */
  function binCounts(scores: number[], bins: number) {
    const low = Math.min(...scores);
    const high = Math.max(...scores);
    const width = (high - low) / bins;
    const counts = Array.from({ length: bins }, (_, i) => ({ from: low + i * width, to: i === bins - 1 ? high : low + (i + 1) * width, players: 0 }));
    for (const score of scores) counts[Math.min(bins - 1, Math.floor((score - low) / width))]!.players++;
    // No score sits on an inner edge, so no bin convention could count it elsewhere.
    for (const score of scores)
      for (let i = 1; i < bins; i++) expect(Math.abs(score - (low + i * width)), `score ${score} on an inner edge`).toBeGreaterThan(1e-6);
    return counts;
  }

  async function expectHistogram(scores: number[], bins: number) {
    const expected = binCounts(scores, bins);
    await expect.poll(async () => (await bars()).length, { timeout: 10_000 }).toBe(bins);
    const drawn = await bars();
    expect(drawn.map((bar) => bar.players)).toEqual(expected.map((bin) => bin.players));
    drawn.forEach((bar, i) => {
      expect(bar.from).toBeCloseTo(expected[i]!.from, 6);
      expect(bar.to).toBeCloseTo(expected[i]!.to, 6);
    });
    // The table beside it says the same.
    const table = await page.$$eval('figure.histogram .chart-data tbody tr td.players', (cells) => cells.map((cell) => Number(cell.textContent)));
    expect(table).toEqual(expected.map((bin) => bin.players));
    // A taller bar holds more players.
    const heights = await page.$$eval('figure.histogram rect.bar', (rects) => rects.map((rect) => Number(rect.getAttribute('height'))));
    for (let i = 0; i < bins; i++)
      for (let j = 0; j < bins; j++) if (expected[i]!.players > expected[j]!.players) expect(heights[i]).toBeGreaterThan(heights[j]!);
  }

  /** RFC 4180 records of a CSV text (a quoted field may hold commas, quotes and line breaks). */
  function csvRows(text: string): string[][] {
    const rows: string[][] = [];
    let row: string[] = [];
    let field = '';
    let quoted = false;
    const endField = () => {
      row.push(field);
      field = '';
    };
    const endRow = () => {
      endField();
      rows.push(row);
      row = [];
    };
    for (let i = 0; i < text.length; i++) {
      const c = text[i]!;
      if (quoted && c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = !quoted;
      else if (quoted) field += c;
      else if (c === ',') endField();
      else if (c === '\r' && text[i + 1] === '\n') {
        endRow();
        i++;
      } else if (c === '\n') endRow();
      else field += c;
    }
    if (field !== '' || row.length > 0) endRow();
    return rows;
  }

  async function downloaded(format: 'csv' | 'ndjson', scope: string) {
    const [file] = await Promise.all([page.waitForEvent('download', { timeout: 15_000 }), page.click(`${scope} button.export[data-format="${format}"]`)]);
    expect(await file.failure()).toBeNull();
    return { name: file.suggestedFilename(), text: readFileSync(await file.path(), 'utf8') };
  }

  beforeAll(async () => {
    const clock = movableClock({ startsAt: START });
    t = await startTestApp({ now: clock.now });
    const created = await t.admin(
      `mutation($title: String!) { createBoard(input: { id: "${BOARD}", title: $title, maxScore: 100000, periods: [ALL_TIME, DAILY, WEEKLY], regions: ["eu"] }) { id } }`,
      { title: BOARD_TITLE },
    );
    expect(created.errors).toBeUndefined();
    expect((await t.server(UPSERT, { input: { id: CHARTED, displayName: HOSTILE_NAME } })).errors).toBeUndefined();

    let match = 0;
    const submit = async (playerId: string, score: number) => {
      const achievedAt = clock.now();
      const region = inEu(playerId) ? 'eu' : null;
      const answer = await t.gql(
        SUBMIT,
        { input: { board: BOARD, playerId, matchId: `m${++match}`, score, region, achievedAt: achievedAt.toISOString() } },
        SERVER,
      );
      expect(answer.errors).toBeUndefined();
      results.push({ playerId, score, region, achievedAt });
    };
    for (let day = 0; day < DAYS; day++) {
      if (day > 0) clock.advance(DAY_MS);
      if (day < DAYS - 1) closedDays.push(labelsAt(clock.now()).DAILY!);
      for (let player = 1; player <= PLAYERS; player++) {
        if (day === 2 && playerIds[player - 1] === CHARTED) continue;
        await submit(playerIds[player - 1]!, scoreOf(day, player));
      }
    }
    // One more player, named by a hostile id, on the last (open) day.
    await submit(HOSTILE_ID, 6_007);
    buckets = foldResults(ORACLE_BOARD, results);

    // The past days and week have closed (their end plus the board's 300 s grace is behind the
    // clock): they are closed as the bucket closer closes them, their final standings frozen and
    // their keys let go (idempotent: a closer of the app's own that got there first leaves nothing to do).
    const board = (await t.app.parts.boards.find(BOARD))!;
    const lists = [null, 'eu'].flatMap((region) => [
      ...closedDays.map((label) => ({ board, bucket: bucketAt(board, 'DAILY', new Date(`${label}T12:00:00.000Z`), region), region })),
      { board, bucket: bucketAt(board, 'WEEKLY', START, region), region },
    ]);
    await closeCalendarLists(t.app.parts, lists);

    browser = await launchChromium();
    page = await signedInConsole(browser, t.url, ADMIN_KEY, BOARD, failures, { acceptDownloads: true });
    if (SCREENSHOT_DIR) mkdirSync(SCREENSHOT_DIR, { recursive: true });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
  });

  it('lists a board’s buckets period by period, newest first, closed or open, with their sizes and the next reset', { timeout: 60_000 }, async () => {
    await open(`#/boards/${BOARD}`);
    const rowsOf = (period: string) =>
      page.$$eval(`section.period-buckets[data-period="${period}"] tbody tr`, (rows) =>
        rows.map((row) => ({ bucket: (row as HTMLElement).dataset.bucket, closed: (row as HTMLElement).dataset.closed, size: row.children[4]!.textContent })),
      );
    const today = labelsAt(new Date(START.getTime() + (DAYS - 1) * DAY_MS)).DAILY!;
    const days = [today, ...[...closedDays].reverse()];
    // The days and weeks of the results, newest first; older ones within the board's retention,
    // closed and empty, may follow.
    const expectListed = async (period: 'DAILY' | 'WEEKLY', labels: string[], open: string) => {
      await expect.poll(async () => (await rowsOf(period)).length, { timeout: 10_000 }).toBeGreaterThanOrEqual(labels.length);
      const rows = await rowsOf(period);
      expect(rows.slice(0, labels.length)).toEqual(
        labels.map((label) => ({ bucket: label, closed: String(label !== open), size: String(ranking(period, label, null).length) })),
      );
      for (const row of rows.slice(labels.length)) expect(row).toMatchObject({ closed: 'true', size: '0' });
      return rows.length;
    };
    const listed = (await expectListed('DAILY', days, today)) + (await expectListed('WEEKLY', ['2037-W49', '2037-W48'], '2037-W49'));
    // The next resets: the day after the last, the Monday after it.
    expect(await page.locator('section.period-buckets[data-period="DAILY"] .next-reset').getAttribute('data-next-reset')).toBe('2037-12-02T00:00:00.000Z');
    expect(await page.locator('section.period-buckets[data-period="WEEKLY"] .next-reset').getAttribute('data-next-reset')).toBe('2037-12-07T00:00:00.000Z');
    // Every bucket has its page and its exports.
    expect(await page.locator('section.period-buckets tbody tr button.export').count()).toBe(2 * (listed + 1));
  });

  it('charts a player’s rank over the closed days and weeks, oldest first, rank 1 at the top', { timeout: 60_000 }, async () => {
    await open(`#/players/${CHARTED}`);
    await page.locator('section.history[data-period="DAILY"] figure.rank-chart').waitFor({ timeout: 10_000 });
    // The name is text, and ran nothing.
    expect(await page.locator('#view h1').textContent()).toContain(HOSTILE_NAME);
    expect(await page.evaluate(() => (window as unknown as { pwned?: number }).pwned)).toBeUndefined();

    const daily = historyOf(CHARTED, 'DAILY', closedDays, null);
    // Four closed days: the third was missed, the last is still open.
    expect(daily).toHaveLength(closedDays.length - 1);
    const points = await chartPoints('DAILY');
    expect(points.map(({ bucket, rank, size }) => ({ bucket, rank, size }))).toEqual(daily);
    // Oldest on the left, placed by time (the missed day is a gap twice as wide as a step).
    const xs = points.map((point) => point.cx);
    for (let i = 1; i < xs.length; i++) expect(xs[i]).toBeGreaterThan(xs[i - 1]!);
    expect(xs[2]! - xs[1]!).toBeCloseTo(2 * (xs[1]! - xs[0]!), 0);
    // The rank axis is upside down: a better rank is drawn higher (a smaller y).
    for (const a of points) for (const b of points) if (Number(a.rank) < Number(b.rank)) expect(a.cy).toBeLessThan(b.cy);
    // The data table says the same, and names it for a screen reader.
    const table = await page.$$eval('section.history[data-period="DAILY"] .chart-data tbody tr', (rows) =>
      rows.map((row) => ({ bucket: (row as HTMLElement).dataset.bucket, rank: row.children[1]!.textContent, size: row.children[2]!.textContent })),
    );
    expect(table).toEqual(daily);
    const svg = page.locator('section.history[data-period="DAILY"] svg');
    expect(await svg.getAttribute('role')).toBe('img');
    expect(await svg.locator('title').first().textContent()).toContain('DAILY');

    const weekly = historyOf(CHARTED, 'WEEKLY', ['2037-W48'], null);
    await expect.poll(async () => (await chartPoints('WEEKLY')).map(({ bucket, rank, size }) => ({ bucket, rank, size }))).toEqual(weekly);
    if (SCREENSHOT_DIR)
      await page.locator('section.card[aria-label="Rank history"]').screenshot({ path: join(SCREENSHOT_DIR, 'console-history.png'), animations: 'disabled' });

    // The eu region's ranks: among the eu players only.
    await page.selectOption('#history-picker [name=region]', 'eu');
    const euDaily = historyOf(CHARTED, 'DAILY', closedDays, 'eu');
    expect(euDaily.map((point) => point.rank)).not.toEqual(daily.map((point) => point.rank));
    await expect.poll(async () => (await chartPoints('DAILY')).map(({ bucket, rank, size }) => ({ bucket, rank, size })), { timeout: 10_000 }).toEqual(euDaily);
    expect(failures).toEqual([]);
  });

  it('draws a bucket’s score histogram with the bins asked for, each bar holding the players whose score is in it', { timeout: 60_000 }, async () => {
    await open(`#/boards/${BOARD}/ALL_TIME/all`);
    await page.locator('figure.histogram').waitFor({ timeout: 10_000 });
    const allTime = ranking('ALL_TIME', 'all', null);
    const scores = allTime.map((entry) => entry.score);
    await expectHistogram(scores, 20);
    if (SCREENSHOT_DIR)
      await page
        .locator('section.card[aria-label="Score histogram"]')
        .screenshot({ path: join(SCREENSHOT_DIR, 'console-histogram.png'), animations: 'disabled' });
    await page.selectOption('#histogram-bins [name=bins]', '10');
    await expectHistogram(scores, 10);
    // Its standings beside it, names as text.
    await expect.poll(() => page.locator('.pages tbody tr').count()).toBe(Math.min(25, allTime.length));
    expect(await page.$$eval('.pages tbody tr', (rows) => rows.slice(0, 5).map((row) => (row as HTMLElement).dataset.player))).toEqual(
      allTime.slice(0, 5).map((entry) => entry.playerId),
    );

    // A closed day's page, reached from the board's list: its frozen standings' spread.
    await open(`#/boards/${BOARD}`);
    const day = closedDays[1]!;
    await page.click(`section.period-buckets[data-period="DAILY"] tr[data-bucket="${day}"] a`);
    await page.waitForURL(new RegExp(`#/boards/${BOARD}/DAILY/${day}$`));
    await page.locator('figure.histogram').waitFor({ timeout: 10_000 });
    expect(await page.locator('.bucket-facts').textContent()).toContain('closed');
    await expectHistogram(
      ranking('DAILY', day, null).map((entry) => entry.score),
      20,
    );
    expect(failures).toEqual([]);
  });

  it('exports a bucket as CSV and NDJSON from its buttons, with the admin key and in rank order', { timeout: 60_000 }, async () => {
    const day = closedDays[0]!;
    await open(`#/boards/${BOARD}/DAILY/${day}/eu`);
    await page.locator('.bucket-facts').waitFor({ timeout: 10_000 });
    const expected = ranking('DAILY', day, 'eu');
    expect(expected.length).toBeGreaterThan(2);
    // Its standings, names as text.
    await page.locator(`.pages tr[data-player="${CHARTED}"]`).waitFor({ timeout: 10_000 });
    expect(await page.locator(`.pages tr[data-player="${CHARTED}"] a`).textContent()).toBe(HOSTILE_NAME);

    const csv = await downloaded('csv', 'section.card[aria-label="Bucket"]');
    expect(csv.name).toMatch(/\.csv$/);
    const [header, ...rows] = csvRows(csv.text).filter((row) => row.some((cell) => cell !== ''));
    expect(header).toEqual(['rank', 'playerId', 'displayName', 'score', 'achievedAt', 'metadata']);
    expect(rows.map((row) => [row[0], row[1], Number(row[3])])).toEqual(expected.map((entry, i) => [String(i + 1), entry.playerId, entry.score]));
    // The hostile name is a cell like any other (neutralised only where it starts with = + - @).
    expect(rows.find((row) => row[1] === CHARTED)?.[2]).toBe(HOSTILE_NAME);

    const ndjson = await downloaded('ndjson', 'section.card[aria-label="Bucket"]');
    const lines = ndjson.text
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { rank: number; playerId: string; score: number });
    expect(lines.map((line) => [line.rank, line.playerId, line.score])).toEqual(expected.map((entry, i) => [i + 1, entry.playerId, entry.score]));

    // The key never went into a URL or a store the page can reach.
    expect(await page.evaluate(() => [location.href, document.cookie, Object.keys(localStorage).length, Object.keys(sessionStorage).length])).toEqual([
      expect.not.stringContaining(ADMIN_KEY),
      '',
      0,
      0,
    ]);
    // The board's list exports as well: its open day, global.
    await open(`#/boards/${BOARD}`);
    const today = labelsAt(new Date(START.getTime() + (DAYS - 1) * DAY_MS)).DAILY!;
    const listed = await downloaded('csv', `section.period-buckets[data-period="DAILY"] tr[data-bucket="${today}"]`);
    const listedRows = csvRows(listed.text).filter((row) => row.some((cell) => cell !== ''));
    expect(listedRows.slice(1).map((row) => row[1])).toEqual(ranking('DAILY', today, null).map((entry) => entry.playerId));
    expect(listedRows.slice(1).find((row) => row[1] === HOSTILE_ID)).toBeDefined();
    expect(failures).toEqual([]);
  });

  it('shows the board’s close grace and edits it', { timeout: 60_000 }, async () => {
    await open(`#/boards/${BOARD}`);
    await page.locator('.settings').waitFor();
    const settings = await page.$$eval('.settings dt, .settings dd', (cells) => cells.map((cell) => cell.textContent));
    expect(settings[settings.indexOf('Close grace') + 1]).toMatch(/^300 s/);
    await page.fill('#edit-board [name=closeGraceSeconds]', '7200');
    await page.click('#edit-board button[type=submit]');
    await page.locator('#flash', { hasText: `Board ${BOARD} saved.` }).waitFor();
    const stored = await t.admin<{ board: { closeGraceSeconds: number } }>(`query { board(id: "${BOARD}") { closeGraceSeconds } }`);
    expect(stored.data!.board.closeGraceSeconds).toBe(7200);
    await page.locator('#close-grace', { hasText: '7,200 s' }).waitFor();
    expect(failures).toEqual([]);
  });
});
