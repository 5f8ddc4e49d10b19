/* global URLSearchParams */
/**
 * A board's buckets period by period (open and closed, with the next reset), a bucket's own page
 * (its standings, its score histogram) and the export buttons each bucket has.
 */
import { download, gql } from './session.js';
import { Q } from './documents.js';
import { attempt, card, failureText, field, fmtNumber, fmtTime, h, playerHref, playerName, select, table } from './dom.js';
import { histogram } from './charts.js';

export const STANDING_HEADERS = ['#Rank', 'Player', '#Score', '#Percentile', 'Achieved (UTC)'];

/** A standing's row; with `action`, a last cell holding what it makes for the standing (a button). */
export function standingRow(standing, action) {
  return h(
    'tr',
    { dataset: { player: standing.player.id } },
    h('td', { class: 'num rank' }, standing.rank),
    h(
      'td',
      {},
      h('a', { href: playerHref(standing.player.id) }, playerName(standing.player)),
      standing.player.displayName ? h('span', { class: 'muted id' }, standing.player.id) : null,
    ),
    h('td', { class: 'num' }, fmtNumber(standing.score)),
    h('td', { class: 'num' }, `${standing.percentile.toFixed(1)}%`),
    h('td', { class: 'time' }, fmtTime(standing.achievedAt)),
    action ? h('td', { class: 'row-actions' }, action(standing)) : null,
  );
}

/** The headers of standings rows, with an empty one for their actions when they have some. */
export const standingHeaders = (action) => (action ? [...STANDING_HEADERS, ''] : STANDING_HEADERS);

/**
 * Shows a bucket's standings in `box` a page at a time, with buttons to the first and the next
 * page. Answers the function that shows one: `(at, after?, pageNumber?)`, `at` naming the bucket as
 * the reads take it. With `action`, each row has a cell of what it makes for the standing.
 */
export function standingPages(box, action) {
  const page = async (at, after = null, pageNumber = 1) => {
    const answer = await attempt(() => gql(Q.page, { ...at, first: 25, after }));
    if (!answer) return;
    const { edges, pageInfo } = answer.standings;
    const next = h('button', { type: 'button', disabled: !pageInfo.hasNextPage }, 'Next page →');
    next.addEventListener('click', () => page(at, pageInfo.endCursor, pageNumber + 1));
    const first = h('button', { type: 'button', disabled: pageNumber === 1 }, '← First page');
    first.addEventListener('click', () => page(at));
    box.replaceChildren(
      table(
        standingHeaders(action),
        edges.map((edge) => standingRow(edge.node, action)),
        { empty: 'Nobody is ranked here.', label: 'Standings page' },
      ),
      h('div', { class: 'pager' }, first, h('span', { class: 'muted', dataset: { page: pageNumber } }, `page ${pageNumber}`), next),
    );
  };
  return page;
}

/** The trail above a page of one board's: Boards / BOARD / what the page is. */
export function boardCrumbs(boardId, ...here) {
  return h(
    'p',
    { class: 'crumbs' },
    h('a', { href: '#/boards' }, 'Boards'),
    ' / ',
    h('a', { href: `#/boards/${encodeURIComponent(boardId)}` }, boardId),
    ' / ',
    ...here,
  );
}

/** Where a bucket's page is: #/boards/BOARD/PERIOD/BUCKET, and /REGION for a region's list. */
export function bucketHref({ board, period, bucket, region }) {
  const parts = [board, period, bucket, ...(region ? [region] : [])];
  return `#/boards/${parts.map((part) => encodeURIComponent(part)).join('/')}`;
}

/** How many buckets of a period the board page lists at a time. */
const BUCKETS_PAGE = 10;
/** The histogram's bin counts on offer (scoreDistribution takes 1 to 100). */
const BIN_CHOICES = [10, 20, 50];

/**
 * The buttons that export a bucket's whole standings (GET /export, CSV or NDJSON) with the
 * session's key, each saving the file the service streams.
 */
export function exportButtons({ board, period, bucket, region }) {
  const button = (format, label) => {
    const query = new URLSearchParams({ board, period, bucket, ...(region ? { region } : {}), format });
    const name = `${[board, period, bucket, ...(region ? [region] : [])].join('-')}.${format === 'ndjson' ? 'ndjson' : 'csv'}`;
    const element = h(
      'button',
      { type: 'button', class: 'small export', dataset: { format }, title: `Export ${period} ${bucket}${region ? ` (${region})` : ''} as ${label}` },
      label,
    );
    element.addEventListener('click', async () => {
      element.disabled = true;
      try {
        await attempt(
          () => download(`/export?${query}`, name),
          (saved) => `Exported ${saved.name} (${fmtNumber(saved.bytes)} bytes).`,
        );
      } finally {
        element.disabled = false;
      }
    });
    return element;
  };
  return h('span', { class: 'export-buttons' }, button('csv', 'CSV'), button('ndjson', 'NDJSON'));
}

/**
 * The board page's buckets, one section per period the board keeps: its buckets newest first (the
 * open one first, then the closed ones within retention), each with its state, size and a link to
 * its page and exports, paged; the period's next reset beside its name. One region at a time.
 * Each section loads on its own and says its own failure.
 */
export function periodBucketsCard(board) {
  const region = select('region', [{ value: '', label: 'global' }, ...board.regions], '');
  const sections = h('div', { class: 'period-sections' });
  const grace = h('span', { class: 'muted small', id: 'close-grace' });
  const load = () => sections.replaceChildren(...board.periods.map((period) => periodSection(board, period, region.value || null, grace)));
  region.addEventListener('change', load);
  load();
  return card(
    'Buckets by period',
    h(
      'div',
      { class: 'card-head' },
      h('p', { class: 'muted small' }, 'A bucket closes at its end plus the board’s grace for late results; from then on its standings are final. ', grace),
      h('form', { class: 'inline-form', id: 'period-buckets-region' }, field('Region', region)),
    ),
    sections,
  );
}

function periodSection(board, period, region, grace) {
  const box = h('div', { class: 'period-buckets-list' }, h('p', { class: 'muted' }, 'Loading…'));
  const reset = h('span', { class: 'muted small next-reset' });
  const section = h('section', { class: 'period-buckets', dataset: { period } }, h('h3', {}, period, reset), box);
  const show = async (after = null, pageNumber = 1) => {
    let answer;
    try {
      answer = await gql(Q.periodBuckets, { id: board.id, period, region, first: BUCKETS_PAGE, after });
    } catch (error) {
      box.replaceChildren(h('p', { class: 'error' }, error.message));
      return;
    }
    const { closeGraceSeconds, nextReset, periodBuckets } = answer.board;
    grace.textContent = `This board’s grace: ${fmtNumber(closeGraceSeconds)} s.`;
    reset.textContent = nextReset ? `next reset ${fmtTime(nextReset)} UTC` : period === 'ALL_TIME' ? 'never resets' : 'no reset set';
    reset.dataset.nextReset = nextReset ?? '';
    const rows = periodBuckets.edges.map(({ node }) => {
      const at = { board: board.id, period: node.period, bucket: node.bucket, region: node.region };
      return h(
        'tr',
        { dataset: { period: node.period, bucket: node.bucket, region: node.region ?? '', closed: node.closed } },
        h('td', {}, h('a', { href: bucketHref(at) }, node.bucket)),
        h('td', { class: 'time' }, fmtTime(node.startsAt)),
        h('td', { class: 'time' }, fmtTime(node.endsAt)),
        h('td', {}, node.closed ? h('span', { class: 'badge' }, 'closed') : h('span', { class: 'badge ok' }, 'open')),
        h('td', { class: 'num' }, fmtNumber(node.size)),
        h('td', { class: 'time' }, node.closed ? '—' : fmtTime(nextReset)),
        h('td', { class: 'row-actions' }, exportButtons(at)),
      );
    });
    const older = h('button', { type: 'button', class: 'small', disabled: !periodBuckets.pageInfo.hasNextPage }, 'Older →');
    older.addEventListener('click', () => show(periodBuckets.pageInfo.endCursor, pageNumber + 1));
    const newest = h('button', { type: 'button', class: 'small', disabled: pageNumber === 1 }, '← Newest');
    newest.addEventListener('click', () => show());
    box.replaceChildren(
      table(['Bucket', 'Starts (UTC)', 'Ends (UTC)', 'State', '#Players', 'Resets (UTC)', 'Export'], rows, {
        empty: 'No bucket of this period can be read.',
        label: `${period} buckets`,
      }),
      h('div', { class: 'pager' }, newest, h('span', { class: 'muted', dataset: { page: pageNumber } }, `page ${pageNumber}`), older),
    );
  };
  void show();
  return section;
}

/**
 * A bucket's page: what it is (its span, whether it has closed, its size), its export buttons, its
 * score histogram with a choice of bins, and its standings page by page.
 */
export async function bucketView(visit, boardId, period, label, region = null) {
  const at = { board: boardId, period, bucket: label, region: region || null };
  const [{ board }, listed] = await Promise.all([
    gql(Q.board, { id: boardId }),
    // The bucket's span and state, when it is among the period's newest (it usually is: buckets are read recently).
    gql(Q.periodBuckets, { id: boardId, period, region: at.region, first: 50 }).catch(() => null),
  ]);
  const crumbs = boardCrumbs(boardId, `${period} ${label}${at.region ? ` (${at.region})` : ''}`);
  if (!board) return visit.show(crumbs, h('h1', {}, 'Board not found'), h('p', { class: 'error' }, `No board "${boardId}".`));
  const node = listed?.board.periodBuckets.edges.map((edge) => edge.node).find((bucket) => bucket.bucket === label) ?? null;
  const { board: sized } = await gql(Q.bucketSize, { id: boardId, period, bucket: label, region: at.region });

  const facts = h(
    'dl',
    { class: 'settings bucket-facts' },
    [
      ['Period', period],
      ['Bucket', label],
      ['Region', at.region ?? 'global'],
      ['Players', fmtNumber(sized.size)],
      ...(node
        ? [
            ['Starts (UTC)', fmtTime(node.startsAt)],
            ['Ends (UTC)', fmtTime(node.endsAt)],
            [
              'State',
              node.closed ? 'closed: its standings are final' : `open${listed.board.nextReset ? `, resets ${fmtTime(listed.board.nextReset)} UTC` : ''}`,
            ],
          ]
        : []),
    ].map(([term, value]) => [h('dt', {}, term), h('dd', {}, String(value))]),
  );

  // The histogram, drawn again when another number of bins is picked.
  const bins = select(
    'bins',
    BIN_CHOICES.map((count) => ({ value: String(count), label: `${count} bins` })),
    '20',
  );
  const chartBox = h('div', { class: 'histogram-box' }, h('p', { class: 'muted' }, 'Loading…'));
  const draw = async () => {
    const answer = await attempt(() => gql(Q.distribution, { ...at, bins: Number(bins.value) }));
    if (!answer) return;
    chartBox.replaceChildren(
      histogram({ title: `Scores in ${period} ${label}${at.region ? ` (${at.region})` : ''} of ${board.title}`, bins: answer.scoreDistribution }),
    );
  };
  bins.addEventListener('change', () => void draw());

  const pagesBox = h('div', { class: 'pages' });
  const page = standingPages(pagesBox);

  visit.show(
    crumbs,
    h('h1', {}, `${period} ${label}`, h('span', { class: 'muted id' }, `${board.title}${at.region ? ` · ${at.region}` : ''}`)),
    card('Bucket', facts, h('div', { class: 'actions' }, h('span', { class: 'muted small' }, 'Export its standings:'), exportButtons(at))),
    card('Score histogram', h('form', { class: 'inline-form', id: 'histogram-bins' }, field('Bins', bins)), chartBox),
    card('Standings', pagesBox),
    node?.closed ? awardsCard(at) : null,
  );
  await Promise.all([draw(), page(at)]);
}

/** Awards listed a page. */
const AWARDS_PAGE = 25;

/**
 * A closed bucket's awards (issue 58): band by band in rank order, each with its stable id (what a
 * studio grants once), paged. Loads on its own and says its own failure.
 */
function awardsCard(at) {
  const box = h('div', { class: 'awards' }, h('p', { class: 'muted' }, 'Loading…'));
  const show = async (after = null, pageNumber = 1) => {
    let answer;
    try {
      answer = await gql(Q.awards, { ...at, first: AWARDS_PAGE, after });
    } catch (error) {
      box.replaceChildren(h('p', { class: 'error' }, failureText(error)));
      return;
    }
    const { edges, pageInfo } = answer.awards;
    const rows = edges.map(({ node }) => {
      // The standing's row (rank, player, score, percentile, time), the band before it and the award's id after.
      const row = standingRow(node.standing);
      Object.assign(row.dataset, { award: node.id, band: node.band });
      row.prepend(h('th', { scope: 'row', class: 'band' }, node.band));
      row.append(h('td', { class: 'award-id' }, h('code', {}, node.id)));
      return row;
    });
    const next = h('button', { type: 'button', class: 'small', disabled: !pageInfo.hasNextPage }, 'Next page →');
    next.addEventListener('click', () => show(pageInfo.endCursor, pageNumber + 1));
    const first = h('button', { type: 'button', class: 'small', disabled: pageNumber === 1 }, '← First page');
    first.addEventListener('click', () => show());
    box.replaceChildren(
      table(['Band', ...STANDING_HEADERS, 'Award id'], rows, {
        empty: 'This close awarded nothing (the board had no bands, or nobody was in one).',
        label: 'Awards',
      }),
      h('div', { class: 'pager' }, first, h('span', { class: 'muted', dataset: { page: pageNumber } }, `page ${pageNumber}`), next),
    );
  };
  void show();
  return card(
    'Awards',
    h(
      'p',
      { class: 'muted small' },
      'Computed once at the close from the final standings, by the bands the board had then; each award’s id is stable: grant it once.',
    ),
    box,
  );
}
