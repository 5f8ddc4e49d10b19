import { existsSync } from 'node:fs';
import { type Browser, type Page, chromium } from 'playwright-core';

/** Debian's Chromium: playwright-core drives it and never downloads a browser of its own. */
export const CHROMIUM = '/usr/bin/chromium';

/** Whether Chromium is installed; when it is not, says which test is skipped and how to get it. */
export function chromiumFor(testName: string): boolean {
  const found = existsSync(CHROMIUM);
  if (!found) console.warn(`${testName} browser test skipped: ${CHROMIUM} is missing (apt-get install chromium; .ci/run installs it).`);
  return found;
}

/** Chromium headless, with nothing of its own reaching for the network. Close it after the test. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/**
 * A console page signed in with the admin key, on a fresh browser context (1360×900, en-US, UTC),
 * once `board`'s row is listed. Page errors, console errors and Content-Security-Policy refusals
 * are pushed onto `failures`, for the test to expect empty.
 */
export async function signedInConsole(
  browser: Browser,
  url: string,
  adminKey: string,
  board: string,
  failures: string[],
  options: { acceptDownloads?: boolean } = {},
): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1360, height: 900 }, locale: 'en-US', timezoneId: 'UTC', ...options });
  const page = await context.newPage();
  page.on('pageerror', (error) => failures.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error' || /Content.Security.Policy|Refused to/i.test(message.text())) failures.push(`console: ${message.text()}`);
  });
  await page.goto(`${url}/console`);
  await page.fill('#admin-key', adminKey);
  await page.click('#sign-in-form button[type=submit]');
  await page.locator(`tr[data-board="${board}"]`).waitFor();
  return page;
}

/** Routes the signed-in console to `hash`, rendering it again when it is there already (as a reload of the view would). */
export async function openHash(page: Page, hash: string): Promise<void> {
  await page.evaluate((target) => {
    if (location.hash === target) dispatchEvent(new HashChangeEvent('hashchange'));
    else location.hash = target;
  }, hash);
}

/** The overlay's rows as shown: rank, name and score as text, and the zone a cohort's row is marked with (undefined elsewhere). */
export const overlayRows = (page: Page) =>
  page.$$eval('.rows .row', (rows) =>
    rows.map((row) => ({
      rank: row.querySelector('.rank')!.textContent,
      name: row.querySelector('.name')!.textContent,
      score: row.querySelector('.score')!.textContent,
      zone: (row as HTMLElement).dataset.zone,
    })),
  );
