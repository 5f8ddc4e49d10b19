/* global document, location, matchMedia, setTimeout, clearTimeout, CSS, URL, URLSearchParams */
/**
 * The overlay for streams: subscribes to topChanged over graphql-ws on this page's own origin and
 * renders the live top of one board bucket, rows keyed by player so a change animates (a row that
 * moves slides to its new place, a new or changed score flashes). It never gives up: the socket is
 * retried with backoff, and the subscription is started again whenever it ends or fails.
 *
 * Parameters: board (required), period (default ALL_TIME), region, limit (default 10),
 * title (a heading), background (a CSS colour for the page; transparent by default), format
 * (`time`: a score in milliseconds as m:ss.SSS, or h:mm:ss.SSS from an hour; `number`: as it is,
 * grouped; by default `time` on a LOW_FIRST board, where the lowest score wins a race, else `number`).
 */
import { createClient } from './graphql-ws/client.js';

const BOARD_ORDER = `query OverlayBoard($board: ID!) { board(id: $board) { order } }`;

const TOP_CHANGED = `subscription OverlayTop($board: ID!, $period: Period!, $region: String, $limit: Int!) {
  topChanged(board: $board, period: $period, region: $region, limit: $limit) {
    asOf
    entries { rank score player { id displayName } }
  }
}`;

/** Send a ping this often; a socket whose pong does not come back in time is dropped and retried. */
const KEEP_ALIVE_MS = 10_000;
const PONG_TIMEOUT_MS = 5_000;

const params = new URLSearchParams(location.search);
const list = document.querySelector('.rows');
const status = document.querySelector('.status');
const notice = document.querySelector('.notice');
const reducedMotion = matchMedia('(prefers-reduced-motion: reduce)');
const numbers = new Intl.NumberFormat(undefined, { maximumFractionDigits: 3 });

/** How scores show: 'time' or 'number' when the page says (`format`), else null until the board's order is known. */
let format = ['time', 'number'].includes(params.get('format')) ? params.get('format') : null;

/** A time in milliseconds as m:ss.SSS (57000 → 0:57.000), or h:mm:ss.SSS from an hour on. */
function formatTime(ms) {
  const whole = Math.max(0, Math.round(ms));
  const hours = Math.floor(whole / 3_600_000);
  const minutes = Math.floor(whole / 60_000) % 60;
  const seconds = Math.floor(whole / 1_000) % 60;
  const rest = `${String(seconds).padStart(2, '0')}.${String(whole % 1_000).padStart(3, '0')}`;
  return hours > 0 ? `${hours}:${String(minutes).padStart(2, '0')}:${rest}` : `${minutes}:${rest}`;
}

const formatScore = (score) => (format === 'time' ? formatTime(score) : numbers.format(score));

/** Rows on screen by player id, in rank order. */
let rows = new Map();
let firstView = true;

/** 0.5 s, 1 s, 2 s, ... up to 30 s, with jitter so that many overlays do not come back in step. */
const backoff = (attempt) => Math.min(30_000, 500 * 2 ** attempt) + Math.random() * 500;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** The socket's state, and the subscription's last failure: a failure shows until a view arrives. */
const health = { connection: 'connecting', failure: null, asOf: null };

function setStatus(changes) {
  Object.assign(health, changes);
  const { connection, failure, asOf } = health;
  const message = failure ?? (connection === 'live' && asOf ? `live, as of ${asOf}` : connection);
  status.dataset.state = failure ? 'error' : connection;
  status.title = message;
  status.setAttribute('aria-label', message);
}

function showNotice(message) {
  notice.textContent = message ?? '';
  notice.hidden = !message;
}

/** A readable line for whatever graphql-ws hands an error sink: GraphQL errors, a close event or an Error. */
function describe(failure) {
  if (Array.isArray(failure)) return failure.map((error) => error.message).join('; ');
  if (failure && typeof failure === 'object' && 'code' in failure && 'reason' in failure) {
    return `connection closed (${failure.code}${failure.reason ? `: ${failure.reason}` : ''})`;
  }
  if (failure instanceof Error) return failure.message;
  return 'connection failed';
}

/** Restarts a CSS animation class on a row, even when it is still running from the last change. */
function replay(row, name) {
  row.classList.remove(name);
  void row.offsetWidth;
  row.classList.add(name);
}

function createRow(playerId) {
  const row = document.createElement('li');
  row.className = 'row';
  row.dataset.player = playerId;
  for (const part of ['rank', 'name', 'score']) {
    const cell = document.createElement('span');
    cell.className = part;
    row.append(cell);
  }
  row.addEventListener('animationend', (event) => row.classList.remove(event.animationName === 'enter' ? 'is-new' : 'is-changed'));
  row.addEventListener('transitionend', () => row.classList.remove('is-moving'));
  return row;
}

/**
 * Draws one view. Rows are reused by player id, so a player who moves keeps their element and
 * slides from where it was (FLIP: measure, reorder, invert with a transform, then let it go).
 */
function render(entries) {
  const animate = !firstView && !reducedMotion.matches;
  const before = new Map();
  if (animate) for (const [id, row] of rows) before.set(id, row.getBoundingClientRect().top);

  const next = new Map();
  for (const entry of entries) {
    const id = entry.player.id;
    const known = rows.get(id);
    const row = known ?? createRow(id);
    const score = String(entry.score);
    const changed = known !== undefined && row.dataset.score !== score;
    row.dataset.rank = String(entry.rank);
    row.dataset.score = score;
    row.querySelector('.rank').textContent = String(entry.rank);
    row.querySelector('.name').textContent = entry.player.displayName || id;
    row.querySelector('.score').textContent = formatScore(entry.score);
    if (animate && !known) replay(row, 'is-new');
    if (animate && changed) replay(row, 'is-changed');
    next.set(id, row);
  }
  list.replaceChildren(...next.values());
  rows = next;
  firstView = false;

  if (!animate) return;
  const moved = [];
  for (const [id, row] of next) {
    const top = before.get(id);
    if (top === undefined) continue;
    const delta = top - row.getBoundingClientRect().top;
    if (Math.abs(delta) < 1) continue;
    row.classList.remove('is-moving');
    row.style.transform = `translateY(${delta}px)`;
    moved.push(row);
  }
  if (moved.length === 0) return;
  void list.offsetHeight;
  for (const row of moved) {
    row.classList.add('is-moving');
    row.style.transform = '';
  }
}

function applyPageOptions() {
  const title = params.get('title');
  if (title) {
    const heading = document.querySelector('.title');
    heading.textContent = title;
    heading.hidden = false;
  }
  let background = params.get('background');
  // `background=101820` saves URL-encoding the '#'.
  if (background && /^[0-9a-f]{3,8}$/i.test(background)) background = `#${background}`;
  if (background && CSS.supports('color', background)) document.documentElement.style.setProperty('--page', background);
}

function variables() {
  const limit = Number.parseInt(params.get('limit') ?? '10', 10);
  return {
    board: params.get('board'),
    period: (params.get('period') || 'ALL_TIME').toUpperCase(),
    region: params.get('region') || null,
    limit: Number.isInteger(limit) && limit > 0 ? limit : 10,
  };
}

function connect() {
  const url = new URL('/graphql', location.href);
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  let pongTimer;
  const client = createClient({
    url: url.href,
    // Retry every drop forever: a browser reports a lost socket as a bare error event, which
    // graphql-ws would otherwise treat as final.
    retryAttempts: Infinity,
    shouldRetry: () => true,
    retryWait: (retries) => sleep(backoff(retries)),
    keepAlive: KEEP_ALIVE_MS,
    // The board's order is asked for first (boardOrder), then the top subscribed to: the socket
    // stays open between the two rather than closing once the first completes.
    lazyCloseTimeout: 5_000,
    on: {
      connecting: () => setStatus({ connection: 'connecting' }),
      connected: () => setStatus({ connection: 'live' }),
      closed: () => {
        clearTimeout(pongTimer);
        setStatus({ connection: 'connecting' });
      },
      // A half-open socket (a network that vanished without closing it) shows up only as a pong
      // that never comes; terminate() drops it and the client retries at once.
      ping: (received) => {
        if (!received) pongTimer = setTimeout(() => client.terminate(), PONG_TIMEOUT_MS);
      },
      pong: (received) => {
        if (received) clearTimeout(pongTimer);
      },
    },
  });
  return client;
}

/**
 * The board's order, over the same socket: a LOW_FIRST board (a race) shows its scores as times
 * unless the page says otherwise. Resolves null when the board is unknown; rejects when the
 * socket fails, to be asked again with the subscription.
 */
function boardOrder(client, board) {
  return new Promise((resolve, reject) => {
    let order = null;
    client.subscribe(
      { query: BOARD_ORDER, variables: { board } },
      { next: (result) => (order = result.data?.board?.order ?? null), error: reject, complete: () => resolve(order) },
    );
  });
}

/** Keeps one topChanged subscription alive: started again, with backoff, whenever it ends or fails. */
function watch(client, request) {
  let attempt = 0;
  const again = () => setTimeout(start, backoff(attempt++));
  function start() {
    if (format === null) {
      boardOrder(client, request.variables.board).then((order) => {
        format = order === 'LOW_FIRST' ? 'time' : 'number';
        start();
      }, again);
      return;
    }
    client.subscribe(request, {
      next: (result) => {
        const view = result.data?.topChanged;
        if (view) {
          attempt = 0;
          setStatus({ failure: null, asOf: view.asOf });
          showNotice(null);
          render(view.entries);
        } else if (result.errors?.length) {
          setStatus({ failure: describe(result.errors) });
          showNotice(describe(result.errors));
        }
      },
      error: (error) => {
        setStatus({ failure: describe(error) });
        if (Array.isArray(error)) showNotice(describe(error));
        again();
      },
      complete: again,
    });
  }
  start();
}

applyPageOptions();
const request = { query: TOP_CHANGED, variables: variables() };
if (!request.variables.board) {
  setStatus({ failure: 'no board' });
  showNotice('Add ?board=ID to the address.');
} else {
  watch(connect(), request);
}
