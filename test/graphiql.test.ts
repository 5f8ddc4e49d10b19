import { existsSync, mkdirSync } from 'node:fs';
import { createClient } from 'graphql-ws';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { type TestApp, startTestApp } from './helpers/test-app.js';

/**
 * GraphiQL on `/graphql`, served by the service itself: rendered in Debian's Chromium with every
 * request to anywhere but the service refused (no CDN, as on a machine without internet), its first
 * tab a real query against `global`; and the GRAPHIQL / INTROSPECTION switches.
 */

const CHROMIUM = '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium) console.warn(`GraphiQL browser test skipped: ${CHROMIUM} is missing (apt-get install chromium).`);
const SCREENSHOT = 'test-results/graphiql.png';
const INTROSPECT = '{ __schema { queryType { name } } }';

describe.skipIf(!hasChromium)('GraphiQL in Chromium, without internet', () => {
  let t: TestApp;
  let browser: Browser;
  beforeAll(async () => {
    t = await startTestApp();
    expect(
      (await t.server('mutation { submitScore(input: {board: "global", playerId: "ada", score: 4200, matchId: "m1"}) { duplicate } }')).errors,
    ).toBeUndefined();
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
  });

  it('renders from the service alone, opens on a query against global, and runs it', { timeout: 90_000 }, async () => {
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    const page = await context.newPage();
    const elsewhere: string[] = [];
    const failures: string[] = [];
    // Anything not from the service (or the page's own blob: and data: URLs) is what a CDN would serve: refuse and record it.
    await context.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith(t.url) || url.startsWith('data:') || url.startsWith('blob:')) return route.continue();
      elsewhere.push(url);
      return route.abort('internetdisconnected');
    });
    page.on('pageerror', (error) => failures.push(error.message));
    await page.goto(`${t.url}/graphql`);
    await page.locator('.graphiql-container').first().waitFor({ timeout: 30_000 });
    await page.getByText('query TopOfGlobal').first().waitFor({ timeout: 30_000 });
    await page.locator('.graphiql-execute-button').click();
    await page.locator('.result-window').getByText('"displayName"').first().waitFor({ timeout: 30_000 });
    // Monaco lays the result out with non-breaking spaces.
    const result = (await page.locator('.result-window').innerText()).replace(/\s+/gu, ' ');
    expect(result).toContain('"bucket": "all"');
    expect(result).toContain('"id": "ada"');
    mkdirSync('test-results', { recursive: true });
    await page.screenshot({ path: SCREENSHOT });
    expect(elsewhere).toEqual([]);
    expect(failures).toEqual([]);
    await context.close();
  });
});

describe('GRAPHIQL=false and INTROSPECTION=false', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ http: { graphiql: false, introspection: false } });
  });

  it('serves no GraphiQL page, and the landing page does not link one', async () => {
    const page = await fetch(`${t.url}/graphql`, { headers: { accept: 'text/html' } });
    expect(await page.text()).not.toContain('GraphiQL');
    const landing = await (await fetch(`${t.url}/`)).text();
    expect(landing).not.toContain('href="/graphql"');
    expect(landing).toContain('GRAPHIQL=false');
  });

  it('refuses __schema and __type over POST, GET and graphql-ws, and still answers __typename', async () => {
    const post = await t.gql(INTROSPECT);
    expect(post.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(post.errors?.[0]?.message).toMatch(/introspection/i);
    expect((await t.gql('{ __type(name: "Board") { name } }')).errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    const get = (await (await fetch(`${t.url}/graphql?query=${encodeURIComponent(INTROSPECT)}`)).json()) as { errors?: { extensions?: { code?: string } }[] };
    expect(get.errors?.[0]?.extensions?.code).toBe('GRAPHQL_VALIDATION_FAILED');
    const client = createClient({ url: `${t.url.replace('http', 'ws')}/graphql`, webSocketImpl: WebSocket, retryAttempts: 0 });
    // graphql-ws hands validation errors to the subscriber as its error: the iterator rejects with them.
    const overWs: unknown = await client
      .iterate({ query: INTROSPECT })
      .next()
      .catch((errors: unknown) => errors);
    await client.dispose();
    expect(JSON.stringify(overWs)).toMatch(/introspection has been disabled/i);
    expect(await t.gql('{ __typename top(board: "global") { __typename size } }')).toEqual({
      data: { __typename: 'Query', top: { __typename: 'TopBoard', size: 0 } },
    });
  });
});

describe('by default', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });

  it('serves GraphiQL with no address outside the service, and answers introspection', async () => {
    const html = await (await fetch(`${t.url}/graphql`, { headers: { accept: 'text/html' } })).text();
    expect(html).toContain('YogaGraphiQL.renderYogaGraphiQL');
    expect(html).toContain('query TopOfGlobal');
    expect(html).not.toMatch(/<(script|link)[^>]+(src|href)=["']?https?:/i);
    expect(html).not.toContain('unpkg.com');
    expect((await t.gql(INTROSPECT)).data).toEqual({ __schema: { queryType: { name: 'Query' } } });
  });
});
