import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startTestApp } from './helpers/test-app.js';

/** `/`: a short page pointing a newcomer at GraphiQL, the overlay and the docs, instead of a 404. */
describe('the landing page', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });

  it('answers / with links to GraphiQL, the overlay and the docs, each of which answers', async () => {
    const page = await fetch(`${t.url}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const html = await page.text();
    const links = [...html.matchAll(/href="([^"]+)"/g)].map((match) => match[1]!);
    expect(links).toEqual(expect.arrayContaining(['/graphql', '/overlay?board=global', '/docs', '/schema.graphql']));
    for (const link of links) {
      const answer = await fetch(`${t.url}${link}`, { headers: { accept: 'text/html' } });
      expect(answer.status, link).toBe(200);
    }
  });

  it('serves the README, rendered, as the docs (see docs.test.ts) and the committed schema', async () => {
    const docs = await fetch(`${t.url}/docs`);
    expect(docs.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await docs.text()).toContain('<h1 id="leaderboard">Leaderboard</h1>');
    expect(await (await fetch(`${t.url}/schema.graphql`)).text()).toBe(readFileSync('schema.graphql', 'utf8'));
  });

  it('leaves other paths and methods alone', async () => {
    expect((await fetch(`${t.url}/nope`)).status).toBe(404);
    expect((await fetch(`${t.url}/`, { method: 'POST', body: 'x' })).status).not.toBe(200);
  });
});
