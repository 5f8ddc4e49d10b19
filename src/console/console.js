/* global document, location, fetch, setTimeout, clearTimeout, setInterval, clearInterval, URL, navigator, addEventListener */
/**
 * The operators' console: boards, live tops and pages, seasons, players, moderation, rebuilds,
 * API keys and store health, all through this service's own /graphql (HTTP for queries and
 * mutations, graphql-ws for topChanged) with the admin key typed into the sign-in form.
 *
 * The key is held in this module's closure (`session`) and nowhere else: never a cookie,
 * localStorage or sessionStorage, never in the URL. Reloading or closing the tab signs out.
 *
 * Views are routed by the URL's hash (#/boards, #/boards/ID, #/players/ID, #/moderation,
 * #/operations) and built with DOM calls (textContent, never innerHTML), so names from players
 * are shown as text whatever they hold.
 */
import { createClient } from './graphql-ws/client.js';

// ---------------------------------------------------------------------------------------------
// Session: the key, the HTTP calls and the socket that carry it.

/** The signed-in session: the admin key and the socket opened with it. Null when signed out. */
let session = null;

/** A GraphQL answer with errors: the first error's message, and its extensions.code. */
class GraphQLFailure extends Error {
  constructor(errors) {
    super(errors.map((error) => error.message).join('; '));
    this.code = errors[0]?.extensions?.code ?? null;
  }
}

/** Runs one operation over HTTP POST with the session's key. Signs out when the key stops working. */
async function gql(query, variables = {}, key = session?.key) {
  const response = await fetch(new URL('/graphql', location.href), {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ query, variables }),
    credentials: 'omit',
    cache: 'no-store',
  });
  const body = await response.json().catch(() => ({ errors: [{ message: `HTTP ${response.status}` }] }));
  if (body.errors?.length) {
    const failure = new GraphQLFailure(body.errors);
    if (session && key === session.key && failure.code === 'UNAUTHENTICATED') signOut('The admin key is no longer accepted (revoked?). Sign in again.');
    throw failure;
  }
  return body.data;
}

/** The socket for topChanged, opened on first use, carrying the key in its connection parameters. */
function socket() {
  if (!session.socket) {
    const url = new URL('/graphql', location.href);
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    const key = session.key;
    session.socket = createClient({
      url: url.href,
      connectionParams: () => ({ authorization: `Bearer ${key}` }),
      retryAttempts: Infinity,
      shouldRetry: () => true,
      retryWait: (retries) => new Promise((resolve) => setTimeout(resolve, Math.min(10_000, 500 * 2 ** retries))),
      keepAlive: 10_000,
    });
  }
  return session.socket;
}

// ---------------------------------------------------------------------------------------------
// Documents: one fragment per type, __typename on every selection. Fragments are not nested
// inside one another: the service's depth and cost limits count each spread as a level.

const F = {
  Board: `fragment ConsoleBoard on Board { __typename id title order aggregate maxScore periods regions topSize shards
    timeZone regionTimeZones { __typename region timeZone } retention { __typename daily weekly monthly } currentSeason { __typename id name startsAt endsAt closedAt } }`,
  Season: 'fragment ConsoleSeason on Season { __typename id name startsAt endsAt closedAt }',
  Player: 'fragment ConsolePlayer on Player { __typename id displayName }',
  Standing: 'fragment ConsoleStanding on Standing { __typename rank score percentile achievedAt player { __typename id displayName } }',
  Bucket: 'fragment ConsoleBucket on BucketStatus { __typename period bucket region size stored drift }',
  Rebuild: 'fragment ConsoleRebuild on Rebuild { __typename id state rowsRead rowsTotal size error period bucket region startedAt finishedAt }',
  Key: 'fragment ConsoleKey on ApiKey { __typename id name role createdAt revokedAt }',
  Flag: 'fragment ConsoleFlag on PlayerFlag { __typename reason flaggedAt player { __typename id displayName } }',
  Probe: 'fragment ConsoleProbe on StoreProbe { __typename up latencyMs error }',
};

/** An operation with every fragment it spreads (nested ones too): a document holds no unused fragment. */
function doc(operation) {
  const used = new Set();
  const visit = (text) => {
    for (const [, name] of text.matchAll(/\.\.\.Console(\w+)/g)) {
      if (!used.has(name)) {
        used.add(name);
        visit(F[name]);
      }
    }
  };
  visit(operation);
  return [operation, ...[...used].map((name) => F[name])].join('\n');
}

const Q = {
  health: doc('query ConsoleHealth { storeHealth { __typename index indexBacklog postgres { ...ConsoleProbe } redis { ...ConsoleProbe } } }'),
  boards: doc('query ConsoleBoards { boards { ...ConsoleBoard } }'),
  board: doc('query ConsoleBoardDetail($id: ID!) { board(id: $id) { ...ConsoleBoard seasons { ...ConsoleSeason } } }'),
  buckets: doc('query ConsoleBuckets($id: ID!) { board(id: $id) { __typename id buckets { ...ConsoleBucket } } }'),
  createBoard: doc('mutation ConsoleCreateBoard($input: CreateBoardInput!) { createBoard(input: $input) { ...ConsoleBoard } }'),
  updateBoard: doc('mutation ConsoleUpdateBoard($input: UpdateBoardInput!) { updateBoard(input: $input) { ...ConsoleBoard } }'),
  page: doc(`query ConsolePage($board: ID!, $period: Period!, $bucket: String, $region: String, $first: Int!, $after: String) {
    standings(board: $board, period: $period, bucket: $bucket, region: $region, first: $first, after: $after) {
      __typename edges { __typename cursor node { ...ConsoleStanding } } pageInfo { __typename endCursor hasNextPage } } }`),
  top: doc(`subscription ConsoleTop($board: ID!, $period: Period!, $bucket: String, $region: String, $limit: Int!) {
    topChanged(board: $board, period: $period, bucket: $bucket, region: $region, limit: $limit) {
      __typename asOf size bucket entries { ...ConsoleStanding } } }`),
  startSeason: doc('mutation ConsoleStartSeason($board: ID!, $name: String!, $endsAt: DateTime) { startSeason(board: $board, name: $name, endsAt: $endsAt) { ...ConsoleSeason } }'),
  // startsAt (scheduling a season ahead) is sent only when it is given, so that the console works
  // on a service whose startSeason does not take it yet.
  scheduleSeason: doc(
    'mutation ConsoleScheduleSeason($board: ID!, $name: String!, $endsAt: DateTime, $startsAt: DateTime) { startSeason(board: $board, name: $name, endsAt: $endsAt, startsAt: $startsAt) { ...ConsoleSeason } }',
  ),
  closeSeason: doc('mutation ConsoleCloseSeason($board: ID!) { closeSeason(board: $board) { ...ConsoleSeason } }'),
  seasonResults: doc(`query ConsoleSeasonResults($board: ID!, $season: ID!, $first: Int!, $after: String) {
    seasonResults(board: $board, season: $season, first: $first, after: $after) {
      __typename edges { __typename cursor node { ...ConsoleStanding } } pageInfo { __typename endCursor hasNextPage } } }`),
  search: doc('query ConsoleSearch($text: String!) { searchPlayers(text: $text, first: 50) { ...ConsolePlayer flag { __typename reason } } }'),
  player: doc(`query ConsolePlayerDetail($id: String!) { searchPlayers(text: $id, first: 1) {
    ...ConsolePlayer avatarUrl flag { __typename reason flaggedAt }
    boardScores { __typename period bucket region score achievedAt board { __typename id title } standing { __typename rank percentile } }
    recentResults(first: 25) { __typename matchId score region achievedAt recordedAt board { __typename id title } } } }`),
  flag: doc('mutation ConsoleFlagPlayer($playerId: ID!, $reason: String!) { flagPlayer(playerId: $playerId, reason: $reason) { ...ConsolePlayer } }'),
  unflag: doc('mutation ConsoleUnflagPlayer($playerId: ID!) { unflagPlayer(playerId: $playerId) { ...ConsolePlayer } }'),
  erase: 'mutation ConsoleErasePlayer($playerId: ID!) { deletePlayer(playerId: $playerId) }',
  flagged: doc('query ConsoleFlagged { flaggedPlayers(first: 100) { ...ConsoleFlag } }'),
  keys: doc('query ConsoleKeys { apiKeys { ...ConsoleKey } }'),
  createKey: doc('mutation ConsoleCreateKey($name: String!, $role: ApiKeyRole!) { createApiKey(name: $name, role: $role) { __typename key apiKey { ...ConsoleKey } } }'),
  revokeKey: doc('mutation ConsoleRevokeKey($key: ID!) { revokeApiKey(key: $key) { ...ConsoleKey } }'),
  startRebuild: doc(
    'mutation ConsoleStartRebuild($board: ID!, $period: Period!, $bucket: String, $region: String) { startRebuild(board: $board, period: $period, bucket: $bucket, region: $region) { ...ConsoleRebuild } }',
  ),
  rebuild: doc('query ConsoleRebuildProgress($id: ID!) { rebuild(id: $id) { ...ConsoleRebuild } }'),
};

// ---------------------------------------------------------------------------------------------
// DOM helpers.

/** An element: h('td', { class: 'num' }, 'text', child, ...). Strings become text nodes; attributes starting with "on" are listeners. */
function h(tag, attrs = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on')) element.addEventListener(name.slice(2), value);
    else if (name === 'dataset') Object.assign(element.dataset, value);
    else element.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child instanceof globalThis.Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

const numbers = new Intl.NumberFormat('en-US', { maximumFractionDigits: 3 });
const fmtNumber = (value) => (value === null || value === undefined ? '—' : numbers.format(value));
/** Times are shown in UTC, as the API and the buckets count them; column headers say so. */
const fmtTime = (iso) => (iso ? new Date(iso).toISOString().replace('T', ' ').replace(/\.\d+Z$/, '') : '—');
const playerName = (player) => player?.displayName ?? player?.id ?? '(erased)';
const playerHref = (id) => `#/players/${encodeURIComponent(id)}`;

function card(title, ...children) {
  return h('section', { class: 'card', 'aria-label': title }, h('h2', {}, title), ...children);
}

function table(headers, rows, { empty = 'Nothing yet.', label } = {}) {
  if (rows.length === 0) return h('p', { class: 'empty' }, empty);
  return h(
    'table',
    { 'aria-label': label },
    h('thead', {}, h('tr', {}, headers.map((header) => h('th', { class: header.startsWith('#') ? 'num' : undefined }, header.replace(/^#/, ''))))),
    h('tbody', {}, rows),
  );
}

function field(label, input, hint) {
  return h('label', { class: 'field' }, h('span', {}, label), input, hint ? h('small', { class: 'muted' }, hint) : null);
}

function select(name, options, value) {
  return h('select', { name }, options.map((option) => h('option', { value: option.value ?? option, selected: (option.value ?? option) === value }, option.label ?? option)));
}

/** A message on the page: success in green, failures in red. */
function flash(message, kind = 'ok') {
  const box = document.getElementById('flash');
  box.textContent = message;
  box.dataset.kind = kind;
  box.hidden = false;
  flash.shownAt = Date.now();
  clearTimeout(flash.timer);
  flash.timer = setTimeout(() => (box.hidden = true), kind === 'error' ? 12_000 : 5_000);
}

/** Runs an action from a button or a form, showing its failure rather than throwing it away. */
async function attempt(work, success) {
  try {
    const answer = await work();
    if (success) flash(typeof success === 'function' ? success(answer) : success);
    return answer;
  } catch (error) {
    flash(error.message, 'error');
    return undefined;
  }
}

/** The confirmation dialog; with `typed`, the user must type that text (a player id) to confirm. Answers whether confirmed. */
function confirmAction({ title, text, confirm = 'Confirm', typed = null }) {
  const dialog = document.getElementById('confirm');
  const input = document.getElementById('confirm-type');
  const label = document.getElementById('confirm-type-label');
  const ok = document.getElementById('confirm-ok');
  document.getElementById('confirm-title').textContent = title;
  document.getElementById('confirm-text').textContent = text;
  ok.textContent = confirm;
  input.value = '';
  input.hidden = label.hidden = typed === null;
  label.textContent = typed === null ? '' : `Type ${typed} to confirm`;
  ok.disabled = typed !== null;
  input.oninput = () => (ok.disabled = input.value !== typed);
  return new Promise((resolve) => {
    const done = (answer) => {
      dialog.close();
      resolve(answer);
    };
    document.getElementById('confirm-form').onsubmit = (event) => {
      event.preventDefault();
      if (typed === null || input.value === typed) done(true);
    };
    document.getElementById('confirm-cancel').onclick = () => done(false);
    dialog.oncancel = () => resolve(false);
    dialog.showModal();
    (typed === null ? ok : input).focus();
  });
}

/** Values of a form's named controls; checkboxes of one name are collected into a list. */
function formValues(form) {
  const values = {};
  for (const control of form.elements) {
    if (!control.name) continue;
    if (control.type === 'checkbox') (values[control.name] ??= []).push(...(control.checked ? [control.value] : []));
    else values[control.name] = control.value.trim();
  }
  return values;
}

/** `datetime-local` values are the browser's local time; the API takes UTC instants. */
const instant = (local) => (local ? new Date(local).toISOString() : null);

// ---------------------------------------------------------------------------------------------
// Routing.

const view = () => document.getElementById('view');
/** What the current view must stop when it is left (a subscription, a poll). */
let leaving = [];

function route() {
  if (!session) return;
  for (const stop of leaving) stop();
  leaving = [];
  // A message about what the previous view did goes with it, unless the action itself just moved here.
  if (Date.now() - (flash.shownAt ?? 0) > 1_500) document.getElementById('flash').hidden = true;
  const [section = 'boards', id] = location.hash.replace(/^#\/?/, '').split('/');
  const param = id === undefined ? undefined : decodeURIComponent(id);
  for (const link of document.querySelectorAll('.nav a')) link.classList.toggle('active', link.dataset.section === section);
  view().replaceChildren(h('p', { class: 'muted' }, 'Loading…'));
  const views = { boards: param === undefined ? boardsView : () => boardView(param), players: param === undefined ? playersView : () => playerView(param), moderation: moderationView, operations: operationsView };
  const render = views[section] ?? boardsView;
  render().catch((error) => view().replaceChildren(h('p', { class: 'error' }, error.message)));
}

const show = (...children) => view().replaceChildren(...children);

// ---------------------------------------------------------------------------------------------
// Boards.

const PERIODS = ['ALL_TIME', 'SEASON', 'MONTHLY', 'WEEKLY', 'DAILY'];

async function boardsView() {
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
    field('Order', select('order', [{ value: 'HIGH_FIRST', label: 'Higher scores first' }, { value: 'LOW_FIRST', label: 'Lower scores first (times)' }], 'HIGH_FIRST')),
    field('Aggregate', select('aggregate', [{ value: 'BEST', label: 'Best submission' }, { value: 'SUM', label: 'Sum of submissions' }], 'BEST')),
    field('Top size', h('input', { name: 'topSize', type: 'number', min: 1, max: 100, value: 10 })),
    field('Shards', h('input', { name: 'shards', type: 'number', min: 1, max: 64, value: 1 }), 'fixed once created'),
    field('Regions', h('input', { name: 'regions', placeholder: 'eu, us' }), 'comma-separated'),
    field('Time zone', h('input', { name: 'timeZone', value: 'UTC', placeholder: 'Europe/Paris' }), 'IANA name: days, weeks and months reset at its midnight'),
    h(
      'fieldset',
      { class: 'periods' },
      h('legend', {}, 'Periods'),
      PERIODS.map((period) => h('label', { class: 'check' }, h('input', { type: 'checkbox', name: 'periods', value: period, checked: period === 'ALL_TIME' }), period)),
    ),
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
    };
    const created = await attempt(() => gql(Q.createBoard, { input }), (answer) => `Board ${answer.createBoard.id} created.`);
    if (created) location.hash = `#/boards/${encodeURIComponent(created.createBoard.id)}`;
  });
  show(
    h('h1', {}, 'Boards'),
    card('All boards', table(['Id', 'Title', 'Order', 'Aggregate', 'Periods', 'Regions', '#Shards', 'Current season'], rows, { empty: 'No boards yet: create the first below.', label: 'Boards' })),
    card('New board', form),
  );
}

/** Which bucket of the board the live top and the pages read. */
function bucketPicker(board, onChange) {
  const period = select('period', board.periods, board.periods[0]);
  const region = select('region', [{ value: '', label: 'global' }, ...board.regions], '');
  const bucket = h('input', { name: 'bucket', placeholder: 'current', size: 12 });
  const form = h('form', { class: 'inline-form bucket-picker' }, field('Period', period), field('Bucket', bucket, 'label, or empty for the current one'), field('Region', region), h('button', { type: 'submit' }, 'Show'));
  const value = () => ({ board: board.id, period: period.value, bucket: bucket.value.trim() || null, region: region.value || null });
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    onChange(value());
  });
  period.addEventListener('change', () => onChange(value()));
  region.addEventListener('change', () => onChange(value()));
  return { form, value };
}

function standingRow(standing) {
  return h(
    'tr',
    { dataset: { player: standing.player.id } },
    h('td', { class: 'num rank' }, standing.rank),
    h('td', {}, h('a', { href: playerHref(standing.player.id) }, playerName(standing.player)), standing.player.displayName ? h('span', { class: 'muted id' }, standing.player.id) : null),
    h('td', { class: 'num' }, fmtNumber(standing.score)),
    h('td', { class: 'num' }, `${standing.percentile.toFixed(1)}%`),
    h('td', { class: 'time' }, fmtTime(standing.achievedAt)),
  );
}

const STANDING_HEADERS = ['#Rank', 'Player', '#Score', '#Percentile', 'Achieved (UTC)'];

async function boardView(id) {
  const { board } = await gql(Q.board, { id });
  if (!board) return show(h('h1', {}, 'Board not found'), h('p', { class: 'error' }, `No board "${id}".`), h('a', { href: '#/boards' }, '← All boards'));

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
          rebuild.addEventListener('click', () => runRebuild({ board: id, period: bucket.period, bucket: bucket.bucket, region: bucket.region }, progress, rebuild, loadBuckets));
          return h(
            'tr',
            { dataset: { period: bucket.period, bucket: bucket.bucket, region: bucket.region ?? '' } },
            h('td', {}, bucket.period),
            h('td', {}, bucket.bucket),
            h('td', {}, bucket.region ?? 'global'),
            h('td', { class: 'num' }, fmtNumber(bucket.size)),
            h('td', { class: 'num' }, fmtNumber(bucket.stored)),
            h('td', { class: 'num' }, h('span', { class: `badge ${bucket.drift === 0 ? 'ok' : 'warn'}`, dataset: { drift: bucket.drift } }, bucket.drift === 0 ? '0' : fmtNumber(bucket.drift))),
            h('td', { class: 'row-actions' }, rebuild, progress),
          );
        }),
        { empty: 'No buckets.', label: 'Buckets' },
      ),
    );
  };

  // The live top (topChanged) and the pages of one bucket.
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
          topBox.replaceChildren(table(STANDING_HEADERS, top.entries.map(standingRow), { empty: 'Nobody is ranked here yet.', label: 'Live top' }));
        },
        error: (error) => {
          topStatus.dataset.state = 'error';
          topStatus.textContent = Array.isArray(error) ? error.map((e) => e.message).join('; ') : 'connection lost';
        },
        complete: () => {},
      },
    );
  };
  const page = async (at, after = null, pageNumber = 1) => {
    const answer = await attempt(() => gql(Q.page, { ...at, first: 25, after }));
    if (!answer) return;
    const { edges, pageInfo } = answer.standings;
    const next = h('button', { type: 'button', disabled: !pageInfo.hasNextPage }, 'Next page →');
    next.addEventListener('click', () => page(at, pageInfo.endCursor, pageNumber + 1));
    const first = h('button', { type: 'button', disabled: pageNumber === 1 }, '← First page');
    first.addEventListener('click', () => page(at));
    pagesBox.replaceChildren(
      table(STANDING_HEADERS, edges.map((edge) => standingRow(edge.node)), { empty: 'Nobody is ranked here.', label: 'Standings page' }),
      h('div', { class: 'pager' }, first, h('span', { class: 'muted', dataset: { page: pageNumber } }, `page ${pageNumber}`), next),
    );
  };
  const picker = bucketPicker(board, (at) => {
    watch(at);
    void page(at);
  });
  leaving.push(() => stopTop());

  show(
    h('p', { class: 'crumbs' }, h('a', { href: '#/boards' }, 'Boards'), ' / ', board.id),
    h('h1', {}, board.title, h('span', { class: 'muted id' }, board.id)),
    h('div', { class: 'columns' },
      card('Settings', settings, editBoardForm(board)),
      await seasonsCard(board),
    ),
    card(
      'Buckets',
      h('div', { class: 'card-head' }, h('p', { class: 'muted small' }, 'Drift is what PostgreSQL holds minus what Redis ranks (the leaderboard_index_drift gauge): anything but 0 calls for a rebuild.'), h('button', { type: 'button', class: 'small', id: 'refresh-buckets', onclick: () => attempt(loadBuckets) }, 'Refresh')),
      bucketsBox,
    ),
    card('Live top and pages', picker.form, h('div', { class: 'columns' }, h('div', {}, h('h3', {}, 'Live top ', topStatus), topBox), h('div', {}, h('h3', {}, 'Pages'), pagesBox))),
  );
  await loadBuckets();
  watch(picker.value());
  await page(picker.value());
}

/** The board's editable settings (updateBoard): only what was changed is sent; every process serves it within a second. */
function editBoardForm(board) {
  const form = h(
    'form',
    { class: 'grid-form', id: 'edit-board', autocomplete: 'off' },
    field('Title', h('input', { name: 'title', required: true, value: board.title })),
    field('Top size', h('input', { name: 'topSize', type: 'number', min: 1, max: 100, value: board.topSize })),
    field('Add regions', h('input', { name: 'addRegions', placeholder: 'latam, oce' }), 'comma-separated; existing ones stay'),
    field('Max score', h('input', { name: 'maxScore', type: 'number', min: board.maxScore, step: 1, value: board.maxScore }), 'only up, and only where the ranking packs every score as before'),
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, 'Save changes')),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const v = formValues(form);
    const input = { id: board.id };
    if (v.title !== board.title) input.title = v.title;
    if (Number(v.topSize) !== board.topSize) input.topSize = Number(v.topSize);
    if (commaList(v.addRegions).length) input.addRegions = commaList(v.addRegions);
    if (Number(v.maxScore) !== board.maxScore) input.maxScore = Number(v.maxScore);
    if (Object.keys(input).length === 1) return flash('Nothing changed.');
    if (await attempt(() => gql(Q.updateBoard, { input }), `Board ${board.id} saved.`)) route();
  });
  return form;
}

/** "eu, us" as ['eu', 'us']. */
const commaList = (text) => (text ? text.split(',').map((item) => item.trim()).filter(Boolean) : []);

async function seasonsCard(board) {
  if (!board.periods.includes('SEASON')) return card('Seasons', h('p', { class: 'muted' }, 'This board keeps no SEASON buckets; create a board with the SEASON period to run seasons.'));
  const current = board.currentSeason;
  const resultsBox = h('div', { class: 'season-results' });
  const reload = () => route();

  const closeButton = current ? h('button', { type: 'button', class: 'danger', id: 'close-season' }, 'Close season') : null;
  closeButton?.addEventListener('click', async () => {
    const sure = await confirmAction({ title: `Close “${current.name}”?`, text: `Season ${current.id} of ${board.id} closes now and its final standings are frozen. This cannot be undone.`, confirm: 'Close season' });
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
      table(STANDING_HEADERS, edges.map((edge) => standingRow(edge.node)), { empty: 'Nobody was ranked in this season.', label: 'Season results' }),
      h('div', { class: 'pager' }, more),
    );
  };
  const rows = [...board.seasons].reverse().map((season) => {
    const open = season.closedAt ? h('button', { type: 'button', class: 'small' }, 'Results') : h('span', { class: 'badge ok' }, 'open');
    if (season.closedAt) open.addEventListener('click', () => browse(season));
    return h('tr', { dataset: { season: season.id } }, h('td', {}, season.id), h('td', {}, season.name), h('td', { class: 'time' }, fmtTime(season.startsAt)), h('td', { class: 'time' }, fmtTime(season.endsAt)), h('td', { class: 'time' }, fmtTime(season.closedAt)), h('td', {}, open));
  });

  return card(
    'Seasons',
    current
      ? h('div', { class: 'current-season' }, h('p', {}, 'Current: ', h('strong', {}, current.name), ` (${current.id}) since ${fmtTime(current.startsAt)} UTC`, current.endsAt ? `, ends ${fmtTime(current.endsAt)} UTC` : ', no end set'), closeButton)
      : startForm,
    table(['Id', 'Name', 'Starts (UTC)', 'Ends (UTC)', 'Closed (UTC)', ''], rows, { empty: 'No seasons yet.', label: 'Seasons' }),
    resultsBox,
  );
}

/** Starts a rebuild and shows its progress beside `button` until it is done; then `after()`. */
async function runRebuild(at, slot, button, after) {
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
  const poll = async () => {
    bar.max = Math.max(job.rowsTotal, 1);
    bar.value = job.state === 'DONE' ? bar.max : job.rowsRead;
    label.textContent =
      job.state === 'RUNNING' ? `${fmtNumber(job.rowsRead)} / ${fmtNumber(job.rowsTotal)} read` : job.state === 'DONE' ? `done: ${fmtNumber(job.size)} ranked` : `failed: ${job.error}`;
    slot.dataset.state = job.state;
    if (job.state !== 'RUNNING') {
      button.disabled = false;
      if (job.state === 'DONE') flash(`Rebuilt ${job.period} ${job.bucket}${job.region ? ` (${job.region})` : ''}: ${fmtNumber(job.size)} players ranked.`);
      else flash(`Rebuild failed: ${job.error}`, 'error');
      await after?.();
      return;
    }
    timer = setTimeout(async () => {
      const answer = await gql(Q.rebuild, { id: job.id }).catch(() => null);
      if (answer?.rebuild) job = answer.rebuild;
      void poll();
    }, 250);
  };
  leaving.push(() => clearTimeout(timer));
  await poll();
}

// ---------------------------------------------------------------------------------------------
// Players and moderation.

async function playersView() {
  const input = h('input', { name: 'text', type: 'search', placeholder: 'player id or name', required: true, autofocus: true });
  const results = h('div', { id: 'search-results' });
  const form = h('form', { class: 'inline-form', id: 'search', role: 'search' }, field('Find a player', input, 'an id prefix, or part of a display name'), h('button', { type: 'submit', class: 'primary' }, 'Search'));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const answer = await attempt(() => gql(Q.search, { text: input.value.trim() }));
    if (!answer) return;
    results.replaceChildren(
      table(
        ['Id', 'Display name', 'Status'],
        answer.searchPlayers.map((player) =>
          h('tr', { dataset: { player: player.id } }, h('td', {}, h('a', { href: playerHref(player.id) }, player.id)), h('td', {}, player.displayName ?? '—'), h('td', {}, player.flag ? h('span', { class: 'badge warn' }, 'flagged') : 'shown')),
        ),
        { empty: `No player matches “${input.value.trim()}”.`, label: 'Players found' },
      ),
    );
  });
  show(h('h1', {}, 'Players'), card('Search', form, results));
  input.focus();
}

async function playerView(id) {
  const { searchPlayers } = await gql(Q.player, { id });
  const player = searchPlayers[0]?.id === id ? searchPlayers[0] : null;
  const reload = () => route();

  const flagForm = h('form', { class: 'inline-form', id: 'flag-form', autocomplete: 'off' }, field('Reason', h('input', { name: 'reason', required: true, maxlength: 500, placeholder: 'why they are hidden' })), h('button', { type: 'submit', class: 'warn' }, player?.flag ? 'Update reason' : 'Flag'));
  flagForm.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (await attempt(() => gql(Q.flag, { playerId: id, reason: formValues(flagForm).reason }), `${id} is flagged: hidden from every board.`)) reload();
  });
  const unflag = h('button', { type: 'button', id: 'unflag' }, 'Unflag');
  unflag.addEventListener('click', async () => {
    if (await attempt(() => gql(Q.unflag, { playerId: id }), `${id} is shown again.`)) reload();
  });
  const erase = h('button', { type: 'button', class: 'danger', id: 'erase' }, 'Erase player…');
  erase.addEventListener('click', async () => {
    const named = player?.displayName ? `“${player.displayName}” (${id})` : id;
    const sure = await confirmAction({
      title: `Erase ${named}?`,
      text: `This erases ${named} everywhere, for a privacy request: profile, friends, every result and board score, and their places in every index; frozen season results keep the rank without the name. It cannot be undone.`,
      confirm: 'Erase for good',
      typed: id,
    });
    if (!sure) return;
    const answer = await attempt(() => gql(Q.erase, { playerId: id }));
    if (answer) {
      flash(answer.deletePlayer ? `${id} was erased.` : `Nothing was left to erase for ${id}.`);
      location.hash = '#/players';
    }
  });

  const moderation = card(
    'Moderation',
    player?.flag ? h('p', { class: 'flag-note' }, h('span', { class: 'badge warn' }, 'flagged'), ` since ${fmtTime(player.flag.flaggedAt)} UTC: ${player.flag.reason}`) : h('p', { class: 'muted' }, 'Shown on every board.'),
    flagForm,
    h('div', { class: 'actions' }, player?.flag ? unflag : null, erase),
  );

  if (!player) {
    return show(h('p', { class: 'crumbs' }, h('a', { href: '#/players' }, 'Players'), ' / ', id), h('h1', {}, id), h('p', { class: 'muted' }, 'No profile and no scores under this id.'), moderation);
  }
  const scores = player.boardScores.map((row) =>
    h(
      'tr',
      { dataset: { board: row.board.id, period: row.period, bucket: row.bucket, region: row.region ?? '' } },
      h('td', {}, h('a', { href: `#/boards/${encodeURIComponent(row.board.id)}` }, row.board.title)),
      h('td', {}, row.period),
      h('td', {}, row.bucket),
      h('td', {}, row.region ?? 'global'),
      h('td', { class: 'num' }, fmtNumber(row.score)),
      h('td', { class: 'num rank' }, row.standing ? row.standing.rank : '—'),
      h('td', { class: 'num' }, row.standing ? `${row.standing.percentile.toFixed(1)}%` : '—'),
      h('td', { class: 'time' }, fmtTime(row.achievedAt)),
    ),
  );
  const results = player.recentResults.map((result) =>
    h('tr', { dataset: { match: result.matchId } }, h('td', { class: 'time' }, fmtTime(result.achievedAt)), h('td', {}, result.board.title), h('td', {}, result.matchId), h('td', { class: 'num' }, fmtNumber(result.score)), h('td', {}, result.region ?? '—'), h('td', { class: 'time' }, fmtTime(result.recordedAt))),
  );
  show(
    h('p', { class: 'crumbs' }, h('a', { href: '#/players' }, 'Players'), ' / ', id),
    h('h1', {}, player.displayName ?? id, player.displayName ? h('span', { class: 'muted id' }, id) : null, player.flag ? h('span', { class: 'badge warn' }, 'flagged') : null),
    moderation,
    card('Standing in every bucket', table(['Board', 'Period', 'Bucket', 'Region', '#Score', '#Rank', '#Percentile', 'Reached (UTC)'], scores, { empty: 'No board scores in any bucket kept now.', label: 'Standings' }), player.flag ? h('p', { class: 'muted small' }, 'Flagged: their scores are kept but they are ranked nowhere.') : null),
    card('Recent results', table(['Achieved (UTC)', 'Board', 'Match', '#Score', 'Region', 'Recorded (UTC)'], results, { empty: 'No results.', label: 'Recent results' })),
  );
}

async function moderationView() {
  const { flaggedPlayers } = await gql(Q.flagged);
  const rows = flaggedPlayers.map((flag) => {
    const unflag = h('button', { type: 'button', class: 'small' }, 'Unflag');
    unflag.addEventListener('click', async () => {
      if (await attempt(() => gql(Q.unflag, { playerId: flag.player.id }), `${flag.player.id} is shown again.`)) route();
    });
    return h('tr', { dataset: { player: flag.player.id } }, h('td', {}, h('a', { href: playerHref(flag.player.id) }, playerName(flag.player)), flag.player.displayName ? h('span', { class: 'muted id' }, flag.player.id) : null), h('td', {}, flag.reason), h('td', { class: 'time' }, fmtTime(flag.flaggedAt)), h('td', {}, unflag));
  });
  const form = h('form', { class: 'inline-form', id: 'quick-flag', autocomplete: 'off' }, field('Player id', h('input', { name: 'playerId', required: true })), field('Reason', h('input', { name: 'reason', required: true, maxlength: 500 })), h('button', { type: 'submit', class: 'warn' }, 'Flag'));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const v = formValues(form);
    if (await attempt(() => gql(Q.flag, v), `${v.playerId} is flagged.`)) route();
  });
  show(h('h1', {}, 'Moderation'), card(`Flagged players (${flaggedPlayers.length})`, table(['Player', 'Reason', 'Flagged (UTC)', ''], rows, { empty: 'Nobody is flagged.', label: 'Flagged players' })), card('Flag a player', form));
}

// ---------------------------------------------------------------------------------------------
// Operations.

function probeCell(name, probe) {
  return h('div', { class: 'probe', dataset: { store: name, up: probe.up } }, h('span', { class: `dot ${probe.up ? 'up' : 'down'}` }), h('strong', {}, name), h('span', {}, probe.up ? `up · ${probe.latencyMs.toFixed(1)} ms` : `down: ${probe.error}`));
}

async function refreshHealthPill() {
  const pill = document.getElementById('health-pill');
  const answer = await gql(Q.health).catch(() => null);
  const health = answer?.storeHealth;
  const good = health && health.postgres.up && health.redis.up && health.index === 'READY';
  pill.dataset.state = !health ? 'unknown' : good ? 'ok' : 'bad';
  pill.textContent = !health ? 'stores ?' : good ? 'stores ok' : 'stores degraded';
  return health;
}

async function operationsView() {
  const health = await refreshHealthPill();
  const healthCard = card(
    'Store health',
    health
      ? h(
          'div',
          { class: 'probes' },
          probeCell('PostgreSQL', health.postgres),
          probeCell('Redis', health.redis),
          h('div', { class: 'probe', dataset: { store: 'index' } }, h('span', { class: `dot ${health.index === 'READY' ? 'up' : 'down'}` }), h('strong', {}, 'Index'), h('span', {}, health.index.toLowerCase())),
          h('div', { class: 'probe', dataset: { store: 'backlog' } }, h('span', { class: `dot ${health.indexBacklog === 0 ? 'up' : 'down'}` }), h('strong', {}, 'Index backlog'), h('span', {}, health.indexBacklog === null ? 'unknown' : `${fmtNumber(health.indexBacklog)} waiting`)),
        )
      : h('p', { class: 'error' }, 'Store health could not be read.'),
    h('button', { type: 'button', onclick: () => route() }, 'Refresh'),
  );

  const { keys, boards } = await Promise.all([gql(Q.keys), gql(Q.boards)]).then(([k, b]) => ({ keys: k.apiKeys, boards: b.boards }));
  const shownOnce = h('div', { id: 'new-key' });
  const keyForm = h('form', { class: 'inline-form', id: 'create-key', autocomplete: 'off' }, field('Name', h('input', { name: 'name', required: true, placeholder: 'EU game servers' })), field('Role', select('role', [{ value: 'SERVER', label: 'server (game servers)' }, { value: 'ADMIN', label: 'admin (operators)' }], 'SERVER')), h('button', { type: 'submit', class: 'primary' }, 'Create key'));
  keyForm.addEventListener('submit', async (event) => {
    event.preventDefault();
    const answer = await attempt(() => gql(Q.createKey, formValues(keyForm)));
    if (!answer) return;
    const { key, apiKey } = answer.createApiKey;
    keyForm.reset();
    await renderKeys();
    const copy = h('button', { type: 'button', class: 'small' }, 'Copy');
    copy.addEventListener('click', () => navigator.clipboard?.writeText(key).then(() => (copy.textContent = 'Copied'), () => (copy.textContent = 'Select and copy it')));
    const dismiss = h('button', { type: 'button', class: 'small' }, 'I have saved it');
    dismiss.addEventListener('click', () => shownOnce.replaceChildren());
    shownOnce.replaceChildren(
      h('div', { class: 'once' }, h('p', {}, h('strong', {}, `Key ${apiKey.id} (${apiKey.role.toLowerCase()}, “${apiKey.name}”)`), ' — shown this once; only its digest is stored, so it cannot be read again.'), h('code', { class: 'secret', id: 'new-key-value' }, key), h('div', { class: 'actions' }, copy, dismiss)),
    );
  });
  const keysBox = h('div', { id: 'keys' });
  const renderKeys = async (list) => {
    const all = list ?? (await gql(Q.keys)).apiKeys;
    keysBox.replaceChildren(
      table(
        ['Id', 'Name', 'Role', 'Created (UTC)', 'State', ''],
        all.map((stored) => {
          const revoke = stored.revokedAt ? null : h('button', { type: 'button', class: 'small danger' }, 'Revoke');
          revoke?.addEventListener('click', async () => {
            const sure = await confirmAction({ title: `Revoke “${stored.name}”?`, text: `Key ${stored.id} (${stored.role.toLowerCase()}) is refused by every process from now on.`, confirm: 'Revoke key' });
            if (sure && (await attempt(() => gql(Q.revokeKey, { key: stored.id }), `Key ${stored.id} revoked.`))) await renderKeys();
          });
          return h('tr', { dataset: { key: stored.id } }, h('td', {}, h('code', {}, stored.id)), h('td', {}, stored.name), h('td', {}, stored.role.toLowerCase()), h('td', { class: 'time' }, fmtTime(stored.createdAt)), h('td', {}, stored.revokedAt ? h('span', { class: 'badge muted' }, `revoked ${fmtTime(stored.revokedAt)}`) : h('span', { class: 'badge ok' }, 'live')), h('td', {}, revoke));
        }),
        { empty: 'No keys made yet (the environment’s ADMIN_API_KEY and SERVER_API_KEYS are not listed).', label: 'API keys' },
      ),
    );
  };
  await renderKeys(keys);

  const boardSelect = select('board', boards.map((board) => board.id), boards[0]?.id);
  const periodSelect = select('period', PERIODS, 'ALL_TIME');
  const regionInput = h('input', { name: 'region', placeholder: 'global', size: 8 });
  const bucketInput = h('input', { name: 'bucket', placeholder: 'current', size: 12 });
  const slot = h('span', { class: 'progress-slot', id: 'rebuild-progress' });
  const rebuildButton = h('button', { type: 'submit', class: 'primary' }, 'Rebuild');
  const rebuildForm = h('form', { class: 'inline-form', id: 'rebuild-form' }, field('Board', boardSelect), field('Period', periodSelect), field('Bucket', bucketInput), field('Region', regionInput), rebuildButton, slot);
  rebuildForm.addEventListener('submit', (event) => {
    event.preventDefault();
    void runRebuild({ board: boardSelect.value, period: periodSelect.value, bucket: bucketInput.value.trim() || null, region: regionInput.value.trim() || null }, slot, rebuildButton);
  });

  show(
    h('h1', {}, 'Operations'),
    healthCard,
    card('Rebuild a bucket', h('p', { class: 'muted small' }, 'Reads the bucket’s board scores from PostgreSQL into a new sorted set and swaps it in at once; readers see the old one until then. Each board’s page lists its buckets with their drift.'), boards.length ? rebuildForm : h('p', { class: 'empty' }, 'No boards yet.')),
    card('API keys', keyForm, shownOnce, keysBox),
  );
}

// ---------------------------------------------------------------------------------------------
// Sign in and out.

function signOut(message) {
  if (session?.socket) void session.socket.dispose();
  clearInterval(session?.healthTimer);
  session = null;
  for (const stop of leaving) stop();
  leaving = [];
  view().replaceChildren();
  document.getElementById('shell').hidden = true;
  document.getElementById('sign-in').hidden = false;
  const error = document.getElementById('sign-in-error');
  error.textContent = message ?? '';
  error.hidden = !message;
  document.getElementById('admin-key').focus();
}

document.getElementById('sign-in-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const input = document.getElementById('admin-key');
  const key = input.value.trim();
  const error = document.getElementById('sign-in-error');
  try {
    // An admin-only read: it tells an unknown key (UNAUTHENTICATED) from a game-server key (FORBIDDEN).
    await gql(Q.health, {}, key);
  } catch (failure) {
    error.textContent =
      failure.code === 'UNAUTHENTICATED' ? 'This key is not known (or was revoked).' : failure.code === 'FORBIDDEN' ? 'This is a game-server key; the console needs an admin key.' : failure.message;
    error.hidden = false;
    return;
  }
  // The form field is cleared at once: from here on the key is only in `session`.
  input.value = '';
  error.hidden = true;
  // The header's store health is kept fresh while signed in.
  session = { key, socket: null, healthTimer: setInterval(() => void refreshHealthPill(), 30_000) };
  document.getElementById('sign-in').hidden = true;
  document.getElementById('shell').hidden = false;
  // Setting the hash routes (hashchange); an address that has one is routed here.
  if (!location.hash) location.hash = '#/boards';
  else route();
  void refreshHealthPill();
});

document.getElementById('sign-out').addEventListener('click', () => signOut());
addEventListener('hashchange', route);
document.getElementById('admin-key').focus();
