/* global location, setTimeout, clearTimeout */
/**
 * The boards: their list and creation, a board's settings and edits, reward bands (rewards.js), buckets (by period: buckets.js), live top, pages and seasons; rebuilds;
 * removing a player's entry from the board (removals.js) and deleting the board.
 */
import { gql, socket } from './session.js';
import { Q } from './documents.js';
import { attempt, card, commaList, confirmAction, field, flash, fmtNumber, fmtTime, formValues, h, instant, select, table } from './dom.js';
import { route } from './router.js';
import { STANDING_HEADERS, periodBucketsCard, standingHeaders, standingPages, standingRow } from './buckets.js';
import { leagueCards, leagueFields, leagueInput } from './league.js';
import { rewardsCard } from './rewards.js';
import { removalsCard, removeEntryButton } from './removals.js';

export const PERIODS = ['ALL_TIME', 'SEASON', 'MONTHLY', 'WEEKLY', 'DAILY'];

export async function boardsView(visit) {
  const { boards } = await gql(Q.boards);
  const rows = boards.map((board) =>
    h(
      'tr',
      { dataset: { board: board.id } },
      h('td', {}, h('a', { href: `#/boards/${encodeURIComponent(board.id)}` }, board.id)),
      h('td', {}, board.title),
      h('td', {}, board.order === 'HIGH_FIRST' ? 'high first' : 'low first'),
      h('td', {}, board.aggregate.toLowerCase()),
      h('td', {}, board.periods.join(', ')),
      h('td', {}, board.regions.join(', ') || '—'),
      h('td', { class: 'num' }, board.shards),
      h('td', {}, board.currentSeason ? `${board.currentSeason.name} (${board.currentSeason.id})` : '—'),
    ),
  );
  const form = h(
    'form',
    { class: 'grid-form', id: 'create-board', autocomplete: 'off' },
    field('Id', h('input', { name: 'id', required: true, placeholder: 'arena', pattern: '[A-Za-z0-9_.\\-]{1,64}' }), 'letters, digits, _, - and .; fixed'),
    field('Title', h('input', { name: 'title', required: true, placeholder: 'Arena' })),
    field('Max score', h('input', { name: 'maxScore', type: 'number', min: 1, step: 1, required: true, value: 1000000 })),
    field(
      'Order',
      select(
        'order',
        [
          { value: 'HIGH_FIRST', label: 'Higher scores first' },
          { value: 'LOW_FIRST', label: 'Lower scores first (times)' },
        ],
        'HIGH_FIRST',
      ),
    ),
    field(
      'Aggregate',
      select(
        'aggregate',
        [
          { value: 'BEST', label: 'Best submission' },
          { value: 'SUM', label: 'Sum of submissions' },
        ],
        'BEST',
      ),
    ),
    field('Top size', h('input', { name: 'topSize', type: 'number', min: 1, max: 100, value: 10 })),
    field('Shards', h('input', { name: 'shards', type: 'number', min: 1, max: 64, value: 1 }), 'fixed once created'),
    field('Regions', h('input', { name: 'regions', placeholder: 'eu, us' }), 'comma-separated'),
    field('Time zone', h('input', { name: 'timeZone', value: 'UTC', placeholder: 'Europe/Paris' }), 'IANA name: days, weeks and months reset at its midnight'),
    h(
      'fieldset',
      { class: 'periods' },
      h('legend', {}, 'Periods'),
      PERIODS.map((period) =>
        h('label', { class: 'check' }, h('input', { type: 'checkbox', name: 'periods', value: period, checked: period === 'ALL_TIME' }), period),
      ),
    ),
    leagueFields(),
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, 'Create board')),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const v = formValues(form);
    const input = {
      id: v.id,
      title: v.title,
      maxScore: Number(v.maxScore),
      order: v.order,
      aggregate: v.aggregate,
      topSize: Number(v.topSize),
      shards: Number(v.shards),
      periods: v.periods.length ? v.periods : ['ALL_TIME'],
      regions: commaList(v.regions),
      timeZone: v.timeZone || 'UTC',
      ...leagueInput(v),
    };
    const created = await attempt(
      () => gql(Q.createBoard, { input }),
      (answer) => `Board ${answer.createBoard.id} created.`,
    );
    if (created) location.hash = `#/boards/${encodeURIComponent(created.createBoard.id)}`;
  });
  visit.show(
    h('h1', {}, 'Boards'),
    card(
      'All boards',
      table(['Id', 'Title', 'Order', 'Aggregate', 'Periods', 'Regions', '#Shards', 'Current season'], rows, {
        empty: 'No boards yet: create the first below.',
        label: 'Boards',
      }),
    ),
    card('New board', form),
  );
}

/** Which bucket of the board the live top and the pages read. */
function bucketPicker(board, onChange) {
  const period = select('period', board.periods, board.periods[0]);
  const region = select('region', [{ value: '', label: 'global' }, ...board.regions], '');
  const bucket = h('input', { name: 'bucket', placeholder: 'current', size: 12 });
  const form = h(
    'form',
    { class: 'inline-form bucket-picker' },
    field('Period', period),
    field('Bucket', bucket, 'label, or empty for the current one'),
    field('Region', region),
    h('button', { type: 'submit' }, 'Show'),
  );
  const value = () => ({ board: board.id, period: period.value, bucket: bucket.value.trim() || null, region: region.value || null });
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    onChange(value());
  });
  period.addEventListener('change', () => onChange(value()));
  region.addEventListener('change', () => onChange(value()));
  return { form, value };
}

/** How each rank style shares ranks between equal scores, as the console says it. */
const RANK_STYLE_LABELS = {
  ORDINAL: 'A rank each (1, 2, 3, 4)',
  COMPETITION: 'Ties share a rank (1, 2, 2, 4)',
  DENSE: 'Ties share a rank, the next follows (1, 2, 2, 3)',
};

export async function boardView(visit, id) {
  const { board } = await gql(Q.board, { id });
  if (!board) return visit.show(h('h1', {}, 'Board not found'), h('p', { class: 'error' }, `No board "${id}".`), h('a', { href: '#/boards' }, '← All boards'));

  const settings = h(
    'dl',
    { class: 'settings' },
    [
      ['Order', board.order === 'HIGH_FIRST' ? 'Higher scores first' : 'Lower scores first'],
      ['Aggregate', board.aggregate === 'BEST' ? 'Best submission' : 'Sum of submissions'],
      ['Max score', fmtNumber(board.maxScore)],
      ['Periods', board.periods.join(', ')],
      ['Regions', board.regions.join(', ') || 'none'],
      ['Top size', board.topSize],
      ['Shards', board.shards],
      ['Retention', `daily ${board.retention.daily} d · weekly ${board.retention.weekly} d · monthly ${board.retention.monthly} d`],
      ['Rank style', RANK_STYLE_LABELS[board.rankStyle] ?? board.rankStyle],
      ['Close grace', `${fmtNumber(board.closeGraceSeconds)} s: a bucket closes that long after it ends, its standings then final`],
      ['Time zone', [board.timeZone, ...board.regionTimeZones.map((zone) => `${zone.region}: ${zone.timeZone}`)].join(' · ')],
    ].map(([term, value]) => [h('dt', {}, term), h('dd', {}, String(value))]),
  );

  const bucketsBox = h('div', { id: 'buckets' });
  const loadBuckets = async () => {
    const answer = await gql(Q.buckets, { id });
    bucketsBox.replaceChildren(
      table(
        ['Period', 'Bucket', 'Region', '#Ranked (Redis)', '#Stored (PostgreSQL)', '#Drift', ''],
        answer.board.buckets.map((bucket) => {
          const progress = h('span', { class: 'progress-slot' });
          const rebuild = h('button', { type: 'button', class: 'small' }, 'Rebuild');
          rebuild.addEventListener('click', () =>
            runRebuild(visit, { board: id, period: bucket.period, bucket: bucket.bucket, region: bucket.region }, progress, rebuild, loadBuckets),
          );
          return h(
            'tr',
            { dataset: { period: bucket.period, bucket: bucket.bucket, region: bucket.region ?? '' } },
            h('td', {}, bucket.period),
            h('td', {}, bucket.bucket),
            h('td', {}, bucket.region ?? 'global'),
            h('td', { class: 'num' }, fmtNumber(bucket.size)),
            h('td', { class: 'num' }, fmtNumber(bucket.stored)),
            h(
              'td',
              { class: 'num' },
              h(
                'span',
                { class: `badge ${bucket.drift === 0 ? 'ok' : 'warn'}`, dataset: { drift: bucket.drift } },
                bucket.drift === 0 ? '0' : fmtNumber(bucket.drift),
              ),
            ),
            h('td', { class: 'row-actions' }, rebuild, progress),
          );
        }),
        { empty: 'No buckets.', label: 'Buckets' },
      ),
    );
  };

  // The live top (topChanged) and the pages of one bucket; each row can remove that player's entry from the board.
  const entryAction = (standing) => removeEntryButton(board.id, standing.player);
  const topBox = h('div', { class: 'live-top' });
  const topStatus = h('span', { class: 'status', dataset: { state: 'connecting' } }, 'connecting');
  const pagesBox = h('div', { class: 'pages' });
  let stopTop = () => {};
  const watch = (at) => {
    stopTop();
    topStatus.dataset.state = 'connecting';
    topStatus.textContent = 'connecting';
    topBox.replaceChildren(h('p', { class: 'muted' }, 'Waiting for the first view…'));
    stopTop = socket().subscribe(
      { query: Q.top, variables: { ...at, limit: board.topSize } },
      {
        next: ({ data, errors }) => {
          if (errors?.length) {
            topStatus.dataset.state = 'error';
            topStatus.textContent = errors.map((error) => error.message).join('; ');
            return;
          }
          const top = data.topChanged;
          topStatus.dataset.state = 'live';
          topStatus.textContent = `live · ${fmtNumber(top.size)} ranked in ${top.bucket} · as of ${fmtTime(top.asOf)} UTC`;
          topBox.replaceChildren(
            table(
              standingHeaders(entryAction),
              top.entries.map((standing) => standingRow(standing, entryAction)),
              { empty: 'Nobody is ranked here yet.', label: 'Live top' },
            ),
          );
        },
        error: (error) => {
          topStatus.dataset.state = 'error';
          topStatus.textContent = Array.isArray(error) ? error.map((e) => e.message).join('; ') : 'connection lost';
        },
        complete: () => {},
      },
    );
  };
  const page = standingPages(pagesBox, entryAction);
  const picker = bucketPicker(board, (at) => {
    watch(at);
    void page(at);
  });

  visit.show(
    h('p', { class: 'crumbs' }, h('a', { href: '#/boards' }, 'Boards'), ' / ', board.id),
    h('h1', {}, board.title, h('span', { class: 'muted id' }, board.id)),
    h('div', { class: 'columns' }, card('Settings', settings, editBoardForm(board)), await seasonsCard(board)),
    leagueCards(board.id),
    rewardsCard(board.id),
    periodBucketsCard(board),
    card(
      'Buckets',
      h(
        'div',
        { class: 'card-head' },
        h(
          'p',
          { class: 'muted small' },
          'Drift is what PostgreSQL holds minus what Redis ranks (the leaderboard_index_drift gauge): anything but 0 calls for a rebuild.',
        ),
        h('button', { type: 'button', class: 'small', id: 'refresh-buckets', onclick: () => attempt(loadBuckets) }, 'Refresh'),
      ),
      bucketsBox,
    ),
    card(
      'Live top and pages',
      picker.form,
      h('div', { class: 'columns' }, h('div', {}, h('h3', {}, 'Live top ', topStatus), topBox), h('div', {}, h('h3', {}, 'Pages'), pagesBox)),
    ),
    removalsCard({ board: board.id }),
    deleteBoardCard(board),
  );
  await loadBuckets();
  watch(picker.value());
  // After the first watch: a visit already left (its view never shown) stops it at once.
  visit.onLeave(() => stopTop());
  await page(picker.value());
}

/**
 * Deleting the board (deleteBoard), confirmed by typing its id. The service refuses while an API
 * key is kept to the board; its words are shown as it says them. Deleted, the boards list is shown.
 */
function deleteBoardCard(board) {
  const button = h('button', { type: 'button', class: 'danger', id: 'delete-board' }, `Delete board ${board.id}`);
  button.addEventListener('click', async () => {
    const sure = await confirmAction({
      title: `Delete board ${board.id} (“${board.title}”)?`,
      text: `Board ${board.id} goes with its settings, every result and board score, its seasons and final standings, and every index key; live tops of it end. The removals recorded for it stay. This cannot be undone.`,
      confirm: `Delete board ${board.id}`,
      typed: board.id,
    });
    if (!sure) return;
    const answer = await attempt(() => gql(Q.deleteBoard, { id: board.id }));
    if (!answer) return;
    flash(answer.deleteBoard ? `Board ${board.id} deleted.` : `Board ${board.id} was already gone.`);
    location.hash = '#/boards';
  });
  return card(
    'Delete this board',
    h(
      'p',
      { class: 'muted small' },
      'Deletes the board and everything ranked on it, for a board made by mistake. Refused while an API key is kept to this board: revoke the key first (Operations).',
    ),
    button,
  );
}

/** The board's editable settings (updateBoard): only what was changed is sent; every process serves it within a second. */
function editBoardForm(board) {
  const form = h(
    'form',
    { class: 'grid-form', id: 'edit-board', autocomplete: 'off' },
    field('Title', h('input', { name: 'title', required: true, value: board.title })),
    field('Top size', h('input', { name: 'topSize', type: 'number', min: 1, max: 100, value: board.topSize })),
    field(
      'Rank style',
      select(
        'rankStyle',
        // A DENSE board stays DENSE, and no other becomes one: only ORDINAL and COMPETITION swap.
        (board.rankStyle === 'DENSE' ? ['DENSE'] : ['ORDINAL', 'COMPETITION']).map((value) => ({ value, label: RANK_STYLE_LABELS[value] })),
        board.rankStyle,
      ),
    ),
    field('Add regions', h('input', { name: 'addRegions', placeholder: 'latam, oce' }), 'comma-separated; existing ones stay'),
    field(
      'Close grace (s)',
      h('input', { name: 'closeGraceSeconds', type: 'number', min: 0, max: 31_622_400, step: 1, value: board.closeGraceSeconds }),
      'how long late results still count; lowering it closes at once every bucket whose end plus it has passed',
    ),
    field(
      'Max score',
      h('input', { name: 'maxScore', type: 'number', min: board.maxScore, step: 1, value: board.maxScore }),
      'only up, and only where the ranking packs every score as before',
    ),
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, 'Save changes')),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const v = formValues(form);
    const input = { id: board.id };
    if (v.title !== board.title) input.title = v.title;
    if (Number(v.topSize) !== board.topSize) input.topSize = Number(v.topSize);
    if (v.rankStyle !== board.rankStyle) input.rankStyle = v.rankStyle;
    if (commaList(v.addRegions).length) input.addRegions = commaList(v.addRegions);
    if (Number(v.maxScore) !== board.maxScore) input.maxScore = Number(v.maxScore);
    if (Number(v.closeGraceSeconds) !== board.closeGraceSeconds) input.closeGraceSeconds = Number(v.closeGraceSeconds);
    if (Object.keys(input).length === 1) return flash('Nothing changed.');
    if (await attempt(() => gql(Q.updateBoard, { input }), `Board ${board.id} saved.`)) route();
  });
  return form;
}

async function seasonsCard(board) {
  if (!board.periods.includes('SEASON'))
    return card('Seasons', h('p', { class: 'muted' }, 'This board keeps no SEASON buckets; create a board with the SEASON period to run seasons.'));
  const current = board.currentSeason;
  const resultsBox = h('div', { class: 'season-results' });
  const reload = () => route();

  const closeButton = current ? h('button', { type: 'button', class: 'danger', id: 'close-season' }, 'Close season') : null;
  closeButton?.addEventListener('click', async () => {
    const sure = await confirmAction({
      title: `Close “${current.name}”?`,
      text: `Season ${current.id} of ${board.id} closes now and its final standings are frozen. This cannot be undone.`,
      confirm: 'Close season',
    });
    if (sure && (await attempt(() => gql(Q.closeSeason, { board: board.id }), `Season ${current.id} closed; its results are frozen.`))) reload();
  });

  const startForm = h(
    'form',
    { class: 'grid-form', id: 'start-season', autocomplete: 'off' },
    field('Name', h('input', { name: 'name', required: true, placeholder: 'Winter cup' })),
    field('Starts at', h('input', { name: 'startsAt', type: 'datetime-local' }), 'empty: now; a later time schedules it (your local time)'),
    field('Ends at', h('input', { name: 'endsAt', type: 'datetime-local' }), 'optional; it closes by itself then'),
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, 'Start season')),
  );
  startForm.addEventListener('submit', async (event) => {
    event.preventDefault();
    const v = formValues(startForm);
    const variables = { board: board.id, name: v.name, endsAt: instant(v.endsAt) };
    const startsAt = instant(v.startsAt);
    const started = await attempt(
      () => (startsAt ? gql(Q.scheduleSeason, { ...variables, startsAt }) : gql(Q.startSeason, variables)),
      (answer) => `Season ${answer.startSeason.id} ${startsAt ? 'scheduled' : 'started'}.`,
    );
    if (started) reload();
  });

  const browse = async (season, after = null) => {
    const answer = await attempt(() => gql(Q.seasonResults, { board: board.id, season: season.id, first: 25, after }));
    if (!answer) return;
    const { edges, pageInfo } = answer.seasonResults;
    const more = h('button', { type: 'button', disabled: !pageInfo.hasNextPage }, 'Next page →');
    more.addEventListener('click', () => browse(season, pageInfo.endCursor));
    resultsBox.replaceChildren(
      h('h3', {}, `Final standings of “${season.name}”`),
      table(
        STANDING_HEADERS,
        edges.map((edge) => standingRow(edge.node)),
        { empty: 'Nobody was ranked in this season.', label: 'Season results' },
      ),
      h('div', { class: 'pager' }, more),
    );
  };
  const rows = [...board.seasons].reverse().map((season) => {
    const open = season.closedAt ? h('button', { type: 'button', class: 'small' }, 'Results') : h('span', { class: 'badge ok' }, 'open');
    if (season.closedAt) open.addEventListener('click', () => browse(season));
    return h(
      'tr',
      { dataset: { season: season.id } },
      h('td', {}, season.id),
      h('td', {}, season.name),
      h('td', { class: 'time' }, fmtTime(season.startsAt)),
      h('td', { class: 'time' }, fmtTime(season.endsAt)),
      h('td', { class: 'time' }, fmtTime(season.closedAt)),
      h('td', {}, open),
    );
  });

  return card(
    'Seasons',
    current
      ? h(
          'div',
          { class: 'current-season' },
          h(
            'p',
            {},
            'Current: ',
            h('strong', {}, current.name),
            ` (${current.id}) since ${fmtTime(current.startsAt)} UTC`,
            current.endsAt ? `, ends ${fmtTime(current.endsAt)} UTC` : ', no end set',
          ),
          closeButton,
        )
      : startForm,
    table(['Id', 'Name', 'Starts (UTC)', 'Ends (UTC)', 'Closed (UTC)', ''], rows, { empty: 'No seasons yet.', label: 'Seasons' }),
    resultsBox,
  );
}

/**
 * Starts a rebuild and shows its progress beside `button` until it is done; then `after()`.
 * The progress is polled while `visit` (the view's, see router.js) is not left.
 */
export async function runRebuild(visit, at, slot, button, after) {
  button.disabled = true;
  const started = await attempt(() => gql(Q.startRebuild, at));
  if (!started) {
    button.disabled = false;
    return;
  }
  const bar = h('progress', { max: 1, value: 0 });
  const label = h('span', { class: 'progress-label' }, 'starting');
  slot.replaceChildren(bar, label);
  slot.dataset.state = 'RUNNING';
  let job = started.startRebuild;
  let timer;
  let left = false;
  visit.onLeave(() => {
    left = true;
    clearTimeout(timer);
  });
  const poll = async () => {
    // rowsTotal is 0 while the job still counts the bucket: an indeterminate bar until then.
    const counted = job.rowsTotal > 0 || job.state !== 'RUNNING';
    bar.max = Math.max(job.rowsTotal, 1);
    if (!counted) bar.removeAttribute('value');
    else bar.value = job.state === 'DONE' ? bar.max : job.rowsRead;
    label.textContent =
      job.state === 'RUNNING'
        ? `${fmtNumber(job.rowsRead)} / ${counted ? fmtNumber(job.rowsTotal) : 'counting…'} read`
        : job.state === 'DONE'
          ? `done: ${fmtNumber(job.size)} ranked`
          : `failed: ${job.error}`;
    slot.dataset.state = job.state;
    if (job.state !== 'RUNNING') {
      button.disabled = false;
      if (job.state === 'DONE') flash(`Rebuilt ${job.period} ${job.bucket}${job.region ? ` (${job.region})` : ''}: ${fmtNumber(job.size)} players ranked.`);
      else flash(`Rebuild failed: ${job.error}`, 'error');
      await after?.();
      return;
    }
    // A poll already sent when the view was left does not start another.
    if (left) return;
    timer = setTimeout(async () => {
      const answer = await gql(Q.rebuild, { id: job.id }).catch(() => null);
      if (answer?.rebuild) job = answer.rebuild;
      void poll();
    }, 250);
  };
  await poll();
}
