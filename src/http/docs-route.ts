import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { extname, join, posix } from 'node:path';
import markdownIt, { type MarkdownIt, type Token } from 'markdown-it';

/**
 * `/docs`: README.md and every page under docs/, rendered to HTML once, at start, so a reader on
 * the service gets the same pages as on the repository, offline (no CDN, no script).
 *
 * Links are rewritten the way a reader of the repository follows them: `docs/x.md#a` (from the
 * README) and `x.md#a` (between pages) go to `/docs/x#a`; a file the service itself serves
 * (`schema.graphql`) goes there; any other file of the repository (`bench/RESULTS.md`, `client/`)
 * is shown as its path in the repository rather than as a link that would 404. Headings carry the
 * ids GitHub gives them, so the anchors the pages already link work on both.
 *
 * Raw HTML in the Markdown is escaped, never passed through (markdown-it's `html: false`), and
 * javascript: and data: links are refused by markdown-it's own link check, so a page is only what
 * its Markdown says; the page's policy allows no script at all.
 */

/** What a docs page's response carries: no script, no frame, images only from the service. */
export const DOCS_POLICY = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** Where the docs live on the service. */
export const DOCS_PATH = '/docs';

/** Files of the repository the service serves itself, by their path in the repository. */
const SERVED_FILES: Record<string, string> = { 'schema.graphql': '/schema.graphql' };

const IMAGE_TYPES: Record<string, string> = { '.svg': 'image/svg+xml', '.png': 'image/png' };

export interface DocsFile {
  body: Buffer;
  type: string;
}

interface Source {
  /** Its path in the repository: `README.md` or `docs/x.md`. */
  file: string;
  /** Where the service serves it. */
  path: string;
}

/**
 * Every docs page (and image a page shows) by the path it is served at: `/docs` the README,
 * `/docs/<name>` docs/<name>.md, `/docs/files/<path>` an image of the repository a page shows.
 * O(size of the docs) once.
 */
export function renderDocs(packageDir: string): Map<string, DocsFile> {
  const docsDir = join(packageDir, 'docs');
  const sources: Source[] = [{ file: 'README.md', path: DOCS_PATH }];
  if (existsSync(docsDir)) {
    for (const name of readdirSync(docsDir).sort()) {
      if (name.endsWith('.md')) sources.push({ file: `docs/${name}`, path: pagePath(`docs/${name}`) });
    }
  }
  const files = new Map<string, DocsFile>();
  const markdown = createRenderer(packageDir, files);
  for (const source of sources) {
    const env: RenderEnv = { file: source.file, slugs: new Map(), title: undefined };
    const body = markdown.render(readFileSync(join(packageDir, source.file), 'utf8'), { docs: env });
    files.set(source.path, { body: Buffer.from(page(env.title ?? source.file, body)), type: 'text/html; charset=utf-8' });
  }
  return files;
}

/** Where docs/x.md is served: /docs/x. */
function pagePath(file: string): string {
  return `${DOCS_PATH}/${posix.basename(file, '.md')}`;
}

interface RenderEnv {
  /** The page being rendered, by its path in the repository: where its relative links start. */
  file: string;
  /** The heading ids given so far on this page, each with how many times, for GitHub's -1, -2 suffixes. */
  slugs: Map<string, number>;
  /** The page's first heading, for its <title>. */
  title: string | undefined;
}

function createRenderer(packageDir: string, files: Map<string, DocsFile>): MarkdownIt {
  const markdown = new markdownIt({ html: false, linkify: false, typographer: false });

  markdown.core.ruler.push('docs_links', (state) => {
    const env = (state.env as { docs: RenderEnv }).docs;
    state.tokens.forEach((token, at) => {
      if (token.type === 'heading_open') {
        const text = plainText(state.tokens[at + 1]?.children ?? []);
        env.title ??= text;
        token.attrSet('id', headingId(text, env.slugs));
      }
      const children = token.children ?? [];
      children.forEach((child, index) => {
        if (child.type === 'link_open') rewriteLink(child, children, index, env, packageDir);
        if (child.type === 'image') rewriteImage(child, env, packageDir, files);
      });
    });
  });
  return markdown;
}

/** What a reader sees of a heading: its text and code, no markup. */
function plainText(tokens: readonly Token[]): string {
  return tokens.map((token) => (token.type === 'text' || token.type === 'code_inline' ? token.content : plainText(token.children ?? []))).join('');
}

/** GitHub's heading id: lower case, punctuation dropped, spaces to hyphens, a repeat suffixed -1, -2, … */
function headingId(text: string, slugs: Map<string, number>): string {
  const base = text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
  const seen = slugs.get(base);
  slugs.set(base, (seen ?? 0) + 1);
  return seen === undefined ? base : `${base}-${seen}`;
}

/** A link's target inside the repository (`docs/x.md`, `bench/RESULTS.md`), or undefined for one outside it. */
function repositoryPath(href: string, from: string): { path: string; hash: string } | undefined {
  if (/^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith('//') || href.startsWith('#') || href.startsWith('/')) return undefined;
  const [target = '', hash = ''] = href.split(/(?=#)/, 2);
  const path = posix.normalize(posix.join(posix.dirname(from), decodeURI(target))).replace(/\/$/, '');
  return path.startsWith('..') ? undefined : { path, hash };
}

function rewriteLink(link: Token, siblings: readonly Token[], index: number, env: RenderEnv, packageDir: string): void {
  const target = repositoryPath(String(link.attrGet('href') ?? ''), env.file);
  if (!target) return;
  const { path, hash } = target;
  if (path === 'README.md' || path === 'docs') return link.attrSet('href', `${DOCS_PATH}${hash}`);
  if (path.startsWith('docs/') && path.endsWith('.md')) return link.attrSet('href', `${pagePath(path)}${hash}`);
  const served = SERVED_FILES[path];
  if (served) return link.attrSet('href', served);
  // Another file of the repository: the service does not serve it, so say where it is instead of
  // linking a page that would not be found.
  const close = siblings.slice(index).find((token) => token.type === 'link_close');
  link.tag = 'span';
  link.attrs = [
    ['class', 'repository-path'],
    ['title', `${path}${existsSync(join(packageDir, path)) && statSync(join(packageDir, path)).isDirectory() ? '/' : ''} in the repository`],
  ];
  if (close) close.tag = 'span';
}

function rewriteImage(image: Token, env: RenderEnv, packageDir: string, files: Map<string, DocsFile>): void {
  const target = repositoryPath(String(image.attrGet('src') ?? ''), env.file);
  const type = target && IMAGE_TYPES[extname(target.path)];
  if (!target || !type || !existsSync(join(packageDir, target.path))) return;
  const served = `${DOCS_PATH}/files/${target.path}`;
  if (!files.has(served)) files.set(served, { body: readFileSync(join(packageDir, target.path)), type });
  image.attrSet('src', served);
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title === 'Leaderboard' ? title : `${title} · Leaderboard`)}</title>
<style>
  body { font: 16px/1.55 system-ui, sans-serif; max-width: 52rem; margin: 2rem auto; padding: 0 1rem; color: #1b1f24; }
  nav { font-size: 0.9em; margin-bottom: 1.5rem; }
  code, pre, .repository-path { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 0.88em; }
  .repository-path { background: #f3f4f6; border-radius: 3px; padding: 0 0.2em; }
  pre { background: #f6f8fa; padding: 0.8rem; overflow-x: auto; border-radius: 4px; }
  table { border-collapse: collapse; display: block; overflow-x: auto; font-size: 0.9em; }
  th, td { border: 1px solid #d0d7de; padding: 0.3rem 0.5rem; vertical-align: top; text-align: left; }
  img { max-width: 100%; }
  h1, h2, h3 { line-height: 1.25; }
</style>
</head>
<body>
<nav><a href="/">Leaderboard</a> · <a href="${DOCS_PATH}">Docs</a></nav>
<main>
${body}</main>
</body>
</html>
`;
}
