import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { renderDocs } from '../src/http/docs-route.js';
import { type TestApp, startTestApp } from './helpers/test-app.js';

/** Where the README's own links point: the service as the tour starts it. */
const TOUR_ORIGIN = 'http://127.0.0.1:4000';

const docsPages = readdirSync('docs')
  .filter((name) => name.endsWith('.md'))
  .map((name) => `/docs/${name.slice(0, -'.md'.length)}`)
  .sort();

/** The Markdown link targets of a file: `[text](target)` and `![alt](target)`. */
function markdownLinks(file: string): string[] {
  return [...readFileSync(file, 'utf8').matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1]!);
}

function attributes(html: string, name: 'href' | 'src' | 'id'): string[] {
  return [...html.matchAll(new RegExp(`\\s${name}="([^"]*)"`, 'g'))].map((match) => match[1]!.replaceAll('&amp;', '&'));
}

/** README.md and docs/: a README a newcomer reads in minutes, every page linked from it and served at /docs. */
describe('the docs', () => {
  it('keep the README at most 200 lines and link every page under docs/ from it', () => {
    expect(readFileSync('README.md', 'utf8').trimEnd().split('\n').length).toBeLessThanOrEqual(200);
    const linked = new Set(markdownLinks('README.md').map((target) => target.split('#', 1)[0]));
    for (const page of docsPages) expect(linked, `README.md links ${page}`).toContain(`docs/${page.slice('/docs/'.length)}.md`);
  });

  it('have a page for each subject a newcomer looks for', () => {
    // Issue 55's list: the API and its rules and limits, live boards and the overlay, running boards,
    // configuration, operating, scaling out, performance, architecture (with recovery), development.
    const subjects: [page: string, mustSay: RegExp[]][] = [
      ['api', [/^#+ .*what it serves/im, /errors/i]],
      ['limits', [/limit/i]],
      ['live-boards', [/topChanged/, /overlay/i]],
      ['running-boards', [/season/i, /time zone/i, /flag/i, /erasure|erase/i]],
      ['configuration', [/DATABASE_URL/, /REDIS_URL/]],
      ['operating', [/health/i, /metrics/i, /alert/i, /console/i, /rebuild/i, /API keys/i, /backup/i, /upgrade/i, /archiv/i]],
      ['scaling-out', [/cluster/i, /shard/i]],
      ['performance', [/\|.*stock Yoga/i, /20\d\d-\d\d-\d\d/]],
      ['architecture', [/recovery/i]],
      ['development', [/npm test/]],
    ];
    for (const [page, mustSay] of subjects) {
      const text = readFileSync(`docs/${page}.md`, 'utf8');
      for (const words of mustSay) expect(text, `docs/${page}.md says ${words}`).toMatch(words);
    }
  });

  describe('served at /docs', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startTestApp();
    });

    it('as HTML, every link answering and every #anchor there, with every page under docs/ reached from the README', async () => {
      const pages = new Map<string, Set<string>>(); // a docs page → the ids on it
      const anchors: [from: string, page: string, id: string][] = [];
      const answered = new Map<string, number>();
      const queue = ['/docs'];
      while (queue.length > 0) {
        const page = queue.shift()!;
        if (pages.has(page)) continue;
        const answer = await fetch(`${t.url}${page}`);
        expect(answer.status, page).toBe(200);
        expect(answer.headers.get('content-type'), page).toBe('text/html; charset=utf-8');
        const html = await answer.text();
        pages.set(page, new Set(attributes(html, 'id')));
        for (const link of [...attributes(html, 'href'), ...attributes(html, 'src')]) {
          if (/^https?:/.test(link) && !link.startsWith(TOUR_ORIGIN)) continue; // outside the service
          const [target = '', id] = link.replace(TOUR_ORIGIN, '').split('#', 2);
          const path = target === '' ? page : target;
          if (id !== undefined) anchors.push([page, path, id]);
          if (path.startsWith('/docs') && !path.startsWith('/docs/files/')) {
            queue.push(path);
          } else if (!answered.has(path)) {
            const other = await fetch(`${t.url}${path}`, { headers: { accept: 'text/html' } });
            answered.set(path, other.status);
            await other.body?.cancel();
          }
        }
      }
      for (const [path, status] of answered) expect(status, path).toBe(200);
      for (const [from, page, id] of anchors) expect(pages.get(page), `${from} links ${page}#${id}`).toContain(id);
      expect([...pages.keys()].filter((page) => page !== '/docs').sort()).toEqual(docsPages);
      // The links between pages that a reader of the repository follows, and the ones they land on.
      expect(anchors).toContainEqual(['/docs', '/docs/live-boards', 'overlay-for-streams']);
      expect(answered.get('/docs/files/bench/results/chart.svg')).toBe(200);
    });

    it('with a policy that runs no script, and files the service does not serve shown as their path', async () => {
      const answer = await fetch(`${t.url}/docs/performance`);
      const policy = answer.headers.get('content-security-policy')!;
      expect(policy).toContain("default-src 'none'");
      expect(policy).not.toMatch(/script-src/);
      const html = await answer.text();
      expect(html).not.toContain('RESULTS.md"');
      expect(html).toMatch(/<span class="repository-path" title="bench\/RESULTS.md in the repository">bench\/RESULTS.md<\/span>/);
      expect(await (await fetch(`${t.url}/docs/`)).text()).toBe(await (await fetch(`${t.url}/docs`)).text());
      expect((await fetch(`${t.url}/docs/nope`)).status).toBe(404);
    });
  });

  it('escape raw HTML and refuse script links in the Markdown', () => {
    const dir = mkdtempSync(join(tmpdir(), 'docs-'));
    try {
      mkdirSync(join(dir, 'docs'));
      writeFileSync(
        join(dir, 'README.md'),
        '# Title <script>alert(1)</script>\n\n<img src=x onerror=alert(1)>\n\n[x](javascript:alert(1)) [y](docs/page.md#a-b) [z](src/main.ts)\n',
      );
      writeFileSync(join(dir, 'docs', 'page.md'), '## A, b!\n\n[back](../README.md#title-scriptalert1script)\n');
      const docs = renderDocs(dir);
      const readme = docs.get('/docs')!.body.toString();
      expect(readme).not.toMatch(/<script|<img|href="javascript/i);
      expect(readme).toContain('&lt;img src=x onerror=alert(1)&gt;');
      expect(readme).toContain('<a href="/docs/page#a-b">y</a>');
      expect(readme).toContain('<span class="repository-path" title="src/main.ts in the repository">z</span>');
      expect(docs.get('/docs/page')!.body.toString()).toContain('<h2 id="a-b">');
      expect(docs.get('/docs/page')!.body.toString()).toContain('<a href="/docs#title-scriptalert1script">back</a>');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
