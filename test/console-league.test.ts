import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumFor, launchChromium, signedInConsole } from './helpers/chromium.js';
import { movableClock } from './helpers/clock.js';
import { type LeagueRules, type OracleCohort, type OracleRound, type SentResult, leagueRound } from './helpers/league-oracle.js';
import { labelsAt } from './helpers/oracle.js';
import { settle } from './helpers/wait.js';
import { ADMIN_KEY, type TestApp, startTestApp } from './helpers/test-app.js';

/**
 * The console's league pages (issue 57), in Debian's Chromium against the real service: a league
 * board's settings, each round's tiers with their cohorts and players, and a cohort's players in
 * rank order with the promotion and demotion zones and each player's outcome, all against the
 * test's own working of the rules from the results it sent (helpers/league-oracle.ts: placement in
 * arrival order, cohorts of cohortSize, the zones, the moves at a round's close); and a tournament's settings with how many
 * joined. Tier names hold spaces and unicode, player ids are mixed case and unicode, one name is
 * hostile markup and must stay text.
 *
 * With SCREENSHOT_DIR set, the tiers and a cohort are saved there as console-league-tiers.png and
 * console-cohort.png (CI leaves it unset and writes nothing).
 */

const hasChromium = chromiumFor('console league');
const SCREENSHOT_DIR = process.env.SCREENSHOT_DIR;

const BOARD = 'Liga-EU';
const TIERS = ['Gold', 'Argent clair', 'Bronze ü 銅'];
const LEAGUE = { tiers: TIERS, cohortSize: 5, promote: 1, demote: 1, period: 'DAILY' };
// A Wednesday in years to come, so that the keys the app sets expiries on from this clock stay.
const DAY_1 = new Date('2037-12-02T09:00:00.000Z');
const DAY_MS = 86_400_000;
const HOSTILE_NAME = '<img src=x onerror=window.pwned=1>Zoë';

/** Twenty-three players: mixed case, unicode, one with a hostile name; 23 = four full cohorts of 5 and one of 3. */
const PLAYERS = ['Chloé', 'EU-7', '吴', 'ana', 'Bo', 'dmitri', 'fay', 'Ω-9', ...Array.from({ length: 15 }, (_, i) => `P${String(i + 1).padStart(2, '0')}`)];
const NAMED = 'fay';

const SUBMIT = `mutation Submit($input: SubmitScoreInput!) { submitScore(input: $input) { __typename duplicate } }`;
const UPSERT = `mutation Upsert($input: PlayerInput!) { upsertPlayer(input: $input) { __typename id } }`;
const CLOSED = `query Closed($board: ID!, $bucket: String) { cohort(board: $board, tier: "${TIERS[2]}", number: 1, bucket: $bucket) { closed } }`;

/** Distinct scores (37 and 1,009 are coprime): no rank is ever decided by time or id. */
const scoreOf = (round: number, i: number) => 100 + ((((round + 1) * 97 + i) * 37) % 1009);

const RULES: LeagueRules = { ...LEAGUE, rankStyle: 'ORDINAL' };
const ZONE = { PROMOTED: 'promotion', STAYED: 'safe', DEMOTED: 'demotion' } as const;
const MARK = { PROMOTED: '▲ promotion', STAYED: '● stays', DEMOTED: '▼ demotion' } as const;

/** What a round's tiers table should say: every tier, best first, with its cohorts and players. */
const tierRows = (round: OracleRound) => round.tiers.map(({ tier, cohorts, players }) => ({ tier, cohorts: String(cohorts), players: String(players) }));

/** What a cohort's page should show: its players in rank order, each one's zone and outcome. */
const expectedCohort = (cohort: OracleCohort) =>
  cohort.entries.map(({ playerId, rank }) => {
    const outcome = cohort.outcomes.get(playerId)!;
    return { player: playerId, rank: String(rank), zone: ZONE[outcome], outcome, mark: MARK[outcome] };
  });

describe.skipIf(!hasChromium)('the console shows a league board’s tiers and cohorts', () => {
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  const clock = movableClock({ startsAt: DAY_1 });
  const failures: string[] = [];
  let round1: OracleRound;
  let round2: OracleRound;
  const label1 = labelsAt(DAY_1).DAILY!;
  const label2 = labelsAt(new Date(DAY_1.getTime() + DAY_MS)).DAILY!;
  let match = 0;

  async function submit(board: string, playerId: string, score: number) {
    const answer = await t.server(SUBMIT, { input: { board, playerId, matchId: `m${++match}`, score, achievedAt: clock.now().toISOString() } });
    expect(answer.errors, `${playerId} ${score}`).toBeUndefined();
  }

  /** Sends a round's results one after another (their arrival order), answering them as sent. */
  async function playRound(round: number, order: string[]) {
    const sent: SentResult[] = [];
    const send = async (playerId: string, score: number) => {
      const achievedAt = clock.now();
      await submit(BOARD, playerId, score);
      sent.push({ playerId, score, achievedAt });
    };
    for (const [i, playerId] of order.entries()) {
      await send(playerId, scoreOf(round, PLAYERS.indexOf(playerId)));
      // A second, lower result of an earlier player: it places no one and changes no best.
      if (i % 4 === 3) await send(order[i - 3]!, 50);
    }
    return sent;
  }

  async function open(hash: string) {
    await page.evaluate((target) => {
      if (location.hash === target) dispatchEvent(new HashChangeEvent('hashchange'));
      else location.hash = target;
    }, hash);
  }

  /** The tiers table as shown. */
  const shownTiers = () =>
    page.$$eval('table.tiers tbody tr', (rows) =>
      rows.map((row) => {
        const data = (row as HTMLElement).dataset;
        return { tier: data.tier, cohorts: data.cohorts, players: data.players };
      }),
    );

  /** A cohort page's rows as shown. */
  const shownCohort = () =>
    page.$$eval('table.cohort tbody tr', (rows) =>
      rows.map((row) => {
        const data = (row as HTMLElement).dataset;
        return {
          player: data.player,
          rank: row.children[0]!.textContent,
          zone: data.zone,
          outcome: data.outcome,
          mark: row.querySelector('.zone-mark')!.textContent,
        };
      }),
    );

  beforeAll(async () => {
    t = await startTestApp({ now: clock.now, seasonCloseIntervalMs: 200 });
    const created = await t.admin(`mutation($input: CreateBoardInput!) { createBoard(input: $input) { id } }`, {
      input: { id: BOARD, title: 'Liga <EU>', maxScore: 100_000, periods: ['ALL_TIME', 'DAILY'], closeGraceSeconds: 60, league: LEAGUE },
    });
    expect(created.errors).toBeUndefined();
    expect((await t.server(UPSERT, { input: { id: NAMED, displayName: HOSTILE_NAME } })).errors).toBeUndefined();

    // Round 1: everyone is new, so in the last tier, placed in the order they arrive.
    const order1 = [...PLAYERS].sort((a, b) => ((PLAYERS.indexOf(a) * 7) % 23) - ((PLAYERS.indexOf(b) * 7) % 23));
    round1 = leagueRound(RULES, label1, await playRound(1, order1), new Map());

    // The day ends; past its grace (and the closer's settling) the app's bucket closer closes the round.
    clock.advance(DAY_MS + 3 * 3_600_000);
    const closed = await settle(
      () => t.gql<{ cohort: { closed: boolean } | null }>(CLOSED, { board: BOARD, bucket: label1 }),
      (answer) => answer.data?.cohort?.closed === true,
      30_000,
    );
    expect(closed.data?.cohort?.closed, JSON.stringify(closed)).toBe(true);

    // Round 2, in the reverse order: the tiers are those round 1's close left.
    round2 = leagueRound(RULES, label2, await playRound(2, [...order1].reverse()), round1.tierAfter);

    browser = await launchChromium();
    page = await signedInConsole(browser, t.url, ADMIN_KEY, BOARD, failures);
    if (SCREENSHOT_DIR) mkdirSync(SCREENSHOT_DIR, { recursive: true });
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
  });

  it('shows the league’s settings and the open round’s tiers, each with its cohorts and players', { timeout: 60_000 }, async () => {
    await open(`#/boards/${encodeURIComponent(BOARD)}`);
    await page.locator('table.tiers tbody tr').first().waitFor({ timeout: 10_000 });
    const settings = await page.$$eval('.league-settings dt, .league-settings dd', (cells) => cells.map((cell) => cell.textContent));
    expect(settings[settings.indexOf('Tiers') + 1]).toContain(TIERS.join(' › '));
    expect(settings[settings.indexOf('Cohort size') + 1]).toBe('5 players');
    // Round 2 holds players in two tiers: the promoted of round 1 in the middle one.
    const expected = tierRows(round2);
    expect(expected.filter((row) => row.players !== '0').length).toBe(2);
    expect(await shownTiers()).toEqual(expected);
    expect(await page.locator('table.tiers caption').textContent()).toContain('the open round');
    // A link to each cohort, by tier, its name encoded.
    for (const { tier, cohorts: count } of round2.tiers) {
      const links = await page.$$eval(`table.tiers tr[data-tier="${tier}"] .cohort-links a`, (anchors) => anchors.map((a) => a.getAttribute('href')));
      expect(links).toEqual(Array.from({ length: count }, (_, n) => `#/boards/${encodeURIComponent(BOARD)}/cohort/${encodeURIComponent(tier)}/${n + 1}`));
    }
    if (SCREENSHOT_DIR)
      await page.locator('section.card[aria-label="League"]').screenshot({ path: join(SCREENSHOT_DIR, 'console-league-tiers.png'), animations: 'disabled' });
    expect(failures).toEqual([]);
  });

  it('shows a cohort’s players in rank order with the promotion and demotion zones and each outcome', { timeout: 60_000 }, async () => {
    // The middle tier's cohort, reached from its link: a promotion zone and a demotion zone.
    await open(`#/boards/${encodeURIComponent(BOARD)}`);
    await page.click(`table.tiers tr[data-tier="${TIERS[1]}"] .cohort-links a[data-cohort="1"]`);
    await page.locator('table.cohort').waitFor({ timeout: 10_000 });
    const middle = round2.cohorts.find((cohort) => cohort.tier === TIERS[1] && cohort.number === 1)!;
    expect(middle.demotedFrom).not.toBeNull();
    expect(await shownCohort()).toEqual(expectedCohort(middle));
    expect(await page.locator('#view h1').textContent()).toContain(`${TIERS[1]} 1`);
    expect(await page.locator('table.cohort caption').textContent()).toContain('▲ marks the promotion zone');
    if (SCREENSHOT_DIR) await page.locator('#view').screenshot({ path: join(SCREENSHOT_DIR, 'console-cohort.png'), animations: 'disabled' });

    // Every cohort of the last tier: no demotion from it.
    for (const cohort of round2.cohorts.filter((c) => c.tier === TIERS[2])) {
      await open(`#/boards/${encodeURIComponent(BOARD)}/cohort/${encodeURIComponent(TIERS[2]!)}/${cohort.number}`);
      await expect.poll(shownCohort, { timeout: 10_000 }).toEqual(expectedCohort(cohort));
    }
    // A cohort that does not exist, and a tier that does not: said, not thrown.
    await open(`#/boards/${encodeURIComponent(BOARD)}/cohort/Gold/1`);
    await expect.poll(() => page.locator('#view .error').textContent(), { timeout: 10_000 }).toContain('has no cohort 1');
    await open(`#/boards/${encodeURIComponent(BOARD)}/cohort/Platinum/1`);
    await expect.poll(() => page.locator('#view .error').textContent(), { timeout: 10_000 }).toContain('is not a tier');
    expect(failures).toEqual([]);
  });

  it('shows a closed round picked from the period’s buckets, with its final outcomes', { timeout: 60_000 }, async () => {
    await open(`#/boards/${encodeURIComponent(BOARD)}`);
    await page.locator('table.tiers tbody tr').first().waitFor({ timeout: 10_000 });
    await expect.poll(() => page.locator(`#league-round option[value="${label1}"]`).count(), { timeout: 10_000 }).toBe(1);
    expect(await page.locator(`#league-round option[value="${label2}"]`).count()).toBe(1);
    await page.selectOption('#league-round [name=round]', label1);
    await expect.poll(() => page.locator('table.tiers caption').textContent(), { timeout: 10_000 }).toContain(`round ${label1}`);
    expect(await shownTiers()).toEqual(tierRows(round1));

    // Its cohort with the hostile name: the name as text; the outcomes final.
    const named = round1.cohortOf(NAMED)!;
    await page.click(`table.tiers tr[data-tier="${TIERS[2]}"] .cohort-links a[data-cohort="${named.number}"]`);
    await page.locator('table.cohort').waitFor({ timeout: 10_000 });
    expect(page.url()).toContain(`/${label1}`);
    expect(await shownCohort()).toEqual(expectedCohort(named));
    expect(await page.locator(`table.cohort tr[data-player="${NAMED}"] a`).textContent()).toBe(HOSTILE_NAME);
    expect(await page.evaluate(() => (window as unknown as { pwned?: number }).pwned)).toBeUndefined();
    const state = await page.$$eval('.cohort-facts dt, .cohort-facts dd', (cells) => cells.map((cell) => cell.textContent));
    expect(state[state.indexOf('State') + 1]).toMatch(/^closed/);
    expect(await page.locator('table.cohort tbody tr[data-outcome="PROMOTED"] td.outcome').first().textContent()).toBe(`promoted to ${TIERS[1]}`);
    expect(failures).toEqual([]);
  });

  it('creates a tournament and a league from the new-board form, and shows their settings and how many joined', { timeout: 60_000 }, async () => {
    type Created = { board: { joinRequired: boolean; maxPlayers: number | null; maxAttempts: number | null; league: typeof LEAGUE | null } };
    const stored = (id: string) =>
      t.admin<Created>(`query { board(id: "${id}") { joinRequired maxPlayers maxAttempts league { tiers cohortSize promote demote period } } }`);
    const create = async (fill: () => Promise<void>, id: string) => {
      await open('#/boards');
      await page.locator('#create-board').waitFor();
      await page.fill('#create-board [name=id]', id);
      await page.fill('#create-board [name=title]', id);
      await page.fill('#create-board [name=maxScore]', '1000');
      await page.check('#create-board [name=periods][value=DAILY]');
      await fill();
      await page.click('#create-board button[type=submit]');
      await page.waitForURL(new RegExp(`#/boards/${id}$`));
    };

    // A tournament: join required, 40 players at most, 3 attempts a day.
    await create(async () => {
      await page.check('#create-board [name=joinRequired]');
      await page.fill('#create-board [name=maxPlayers]', '40');
      await page.fill('#create-board [name=maxAttempts]', '3');
    }, 'Cup');
    expect((await stored('Cup')).data!.board).toEqual({ joinRequired: true, maxPlayers: 40, maxAttempts: 3, league: null });
    const joiners = ['Chloé', 'EU-7', '吴'];
    for (const playerId of joiners) expect((await t.server(`mutation { joinBoard(board: "Cup", playerId: "${playerId}") }`)).errors).toBeUndefined();
    await open('#/boards/Cup');
    await page.locator('.tournament-settings').waitFor({ timeout: 10_000 });
    await expect.poll(() => page.locator('.tournament-settings .joined').getAttribute('data-joined'), { timeout: 10_000 }).toBe(String(joiners.length));
    const settings = await page.$$eval('.tournament-settings dt, .tournament-settings dd', (cells) => cells.map((cell) => cell.textContent));
    expect(settings[settings.indexOf('Join required') + 1]).toMatch(/^yes/);
    expect(settings[settings.indexOf('Max players') + 1]).toMatch(/^40,/);
    expect(settings[settings.indexOf('Max attempts') + 1]).toMatch(/^3 results/);
    // No league on it: no league card.
    expect(await page.locator('section.card[aria-label="League"]').count()).toBe(0);

    // A league of daily rounds, one tier name per line; nobody has played yet.
    await create(async () => {
      await page.fill('#create-board [name=leagueTiers]', TIERS.join('\n'));
      await page.fill('#create-board [name=cohortSize]', '20');
      await page.fill('#create-board [name=promote]', '2');
      await page.fill('#create-board [name=demote]', '3');
      await page.selectOption('#create-board [name=leaguePeriod]', 'DAILY');
    }, 'Mini');
    expect((await stored('Mini')).data!.board).toEqual({
      joinRequired: false,
      maxPlayers: null,
      maxAttempts: null,
      league: { tiers: TIERS, cohortSize: 20, promote: 2, demote: 3, period: 'DAILY' },
    });
    await page.locator('table.tiers tbody tr').first().waitFor({ timeout: 10_000 });
    expect(await shownTiers()).toEqual(TIERS.map((tier) => ({ tier, cohorts: '0', players: '0' })));
    expect(await page.locator('.tournament-settings').count()).toBe(0);
    expect(failures).toEqual([]);
  });
});
