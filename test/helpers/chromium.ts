import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

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
