import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumFor, launchChromium, openHash, signedInConsole } from './helpers/chromium.js';
import { ADMIN_KEY, type TestApp, startTestApp } from './helpers/test-app.js';

/**
 * The console's Moderation list for a board that guards itself (issue 59), clicked through in
 * Debian's Chromium against the real service: a player flagged by their own result (suspectJump)
 * is listed with the reason and the result that tripped it (board, score, tie-break values, match),
 * one flagged by hand with none, and Clear (unflagPlayer) shows the suspect again on the board.
 */

const hasChromium = chromiumFor('console guards');

const BOARD = 'guarded';
const SUBMIT = `mutation($input: SubmitScoreInput!) { submitScore(input: $input) { duplicate } }`;
const STANDING = `query($id: ID!) { standing(board: "${BOARD}", playerId: $id) { rank score } }`;
const LIST = 'table[aria-label="Flagged players"]';

describe.skipIf(!hasChromium)('the console’s flagged list', () => {
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  const failures: string[] = [];
  let match = 0;

  async function submit(playerId: string, score: number, tieBreakValues: number[], matchId = `m${++match}`) {
    expect((await t.server(SUBMIT, { input: { board: BOARD, playerId, matchId, score, tieBreakValues } })).errors).toBeUndefined();
  }
  const standing = async (id: string) => (await t.gql<{ standing: { rank: number; score: number } | null }>(STANDING, { id })).data!.standing;

  beforeAll(async () => {
    t = await startTestApp();
    const created = await t.admin(`mutation($input: CreateBoardInput!) { createBoard(input: $input) { id } }`, {
      input: { id: BOARD, title: 'Guarded', maxScore: 100_000, suspectJump: 4, tieBreaks: [{ name: 'stars', order: 'HIGH_FIRST', max: 3 }] },
    });
    expect(created.errors).toBeUndefined();
    await submit('ann', 500, [2]);
    await submit('bob', 400, [3]);
    await submit('cid', 300, [1]);
    // More than 4 times ann's 500: recorded, and ann is flagged in the same transaction.
    await submit('ann', 2_001, [3], 'jump-match');
    expect((await t.admin(`mutation { flagPlayer(playerId: "cid", reason: "reported by players") { id } }`)).errors).toBeUndefined();
    browser = await launchChromium();
    page = await signedInConsole(browser, t.url, ADMIN_KEY, BOARD, failures);
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
  });

  it('shows the reason and the result that tripped the rule, and Clear shows the player again', { timeout: 60_000 }, async () => {
    await openHash(page, '#/moderation');
    const ann = page.locator(`${LIST} tr[data-player="ann"]`);
    await ann.waitFor();
    const cells = ann.locator('td');
    expect(await cells.nth(1).textContent()).toBe(
      `suspect: score 2001 on board "${BOARD}" is more than its suspectJump of 4 times the player's previous best of 500`,
    );
    expect(await cells.nth(2).textContent()).toMatch(new RegExp(`^${BOARD}: 2,001 \\(3\\), match jump-match, `));
    expect(await cells.nth(2).locator('a').getAttribute('href')).toBe(`#/boards/${BOARD}`);
    // Flagged by hand: the reason given, no result.
    expect(await page.locator(`${LIST} tr[data-player="cid"] td`).nth(1).textContent()).toBe('reported by players');
    expect(await page.locator(`${LIST} tr[data-player="cid"] td`).nth(2).textContent()).toBe('— (by hand)');
    expect(await standing('ann')).toBeNull();

    await ann.locator('button', { hasText: 'Clear' }).click();
    await expect.poll(() => page.locator(`${LIST} tr[data-player="ann"]`).count()).toBe(0);
    expect(await page.locator('#flash').textContent()).toContain('ann is shown again.');
    // Back with the result that tripped the rule, first on the board; cid stays flagged.
    expect(await standing('ann')).toEqual({ rank: 1, score: 2_001 });
    expect(await page.locator(`${LIST} tr[data-player="cid"]`).count()).toBe(1);
    expect(failures).toEqual([]);
  });
});
