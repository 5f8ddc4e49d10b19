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
 *
 * With `cohort=TIER/NUMBER` (`cohort=Gold/3`, the tier's name URL-encoded: it may hold spaces and
 * any character but '/') the page shows one cohort of the league's open round instead: all its
 * players (or the first `limit`) with the promotion (▲) and demotion (▼) zones marked. It follows
 * the cohort through one of its players' cohortChanged (any member's view is the whole cohort),
 * choosing another when that one leaves it (flagged, erased), and reads Query.cohort every few
 * seconds on a service without that subscription. When the round rolls over (the cohort's end, or
 * a view of the followed player in another round), the page asks for the new open round's cohort
 * of that tier and number: until it forms (its players' first results of the round), the ended
 * round's last rows stay up, marked as ended, and the page asks again every few seconds.
 */
import { createClient } from './graphql-ws/client.js';

const BOARD_ORDER = `query OverlayBoard($board: ID!) { board(id: $board) { order } }`;

const TOP_CHANGED = `subscription OverlayTop($board: ID!, $period: Period!, $region: String, $limit: Int!) {
  topChanged(board: $board, period: $period, region: $region, limit: $limit) {
    asOf
    entries { rank score player { id displayName } }
  }
}`;

const COHORT_FIELDS = `bucket tier number promotedThrough demotedFrom closed endsAt entries { rank score player { id displayName } }`;

/** The cohort of the open round, with what the page needs to say why there is none. */
const COHORT = `query OverlayCohort($board: ID!, $tier: String!, $number: Int!) {
  board(id: $board) { order league { tiers } }
  cohort(board: $board, tier: $tier, number: $number) { ${COHORT_FIELDS} }
}`;

const COHORT_CHANGED = `subscription OverlayCohortChanged($board: ID!, $playerId: ID!) {
  cohortChanged(board: $board, playerId: $playerId) { tier cohort { ${COHORT_FIELDS} } }
}`;

/** How often a cohort is read again while it has not formed, or on a service without cohortChanged. */
const COHORT_POLL_MS = 5_000;
/** The longest a timer may wait (setTimeout's bound); a round's end further off is waited for in steps. */
const MAX_TIMER_MS = 2_147_483_647;

/** Send a ping this often; a socket whose pong does not come back in time is dropped and retried. */
const KEEP_ALIVE_MS = 10_000;
const PONG_TIMEOUT_MS = 5_000;

const params = new URLSearchParams(location.search);
/** `cohort=Gold/3`: one cohort of a league's open round rather than a top. */
const cohortText = params.get('cohort');
const cohortMode = cohortText !== null;
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
  for (const part of cohortMode ? ['rank', 'name', 'score', 'zone'] : ['rank', 'name', 'score']) {
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
    if (entry.zone) {
      // The zone said by a sign and, for a screen reader or a caption, in words: never colour alone.
      const zone = row.querySelector('.zone');
      row.dataset.zone = entry.zone;
      zone.textContent = ZONE_SIGN[entry.zone];
      zone.title = ZONE_WORDS[entry.zone];
      zone.setAttribute('aria-label', ZONE_WORDS[entry.zone]);
    }
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

const ZONE_SIGN = { promotion: '▲', safe: '', demotion: '▼' };
const ZONE_WORDS = { promotion: 'promotion zone', safe: 'stays', demotion: 'demotion zone' };

/**
 * `cohort=Gold/3` as { tier, number }: split at the last '/', the number a whole number from 1;
 * null when it is not one (the page then says so).
 */
function cohortParameter(text) {
  const at = text.lastIndexOf('/');
  const tier = text.slice(0, at);
  const number = text.slice(at + 1);
  if (at <= 0 || tier.length > 200 || !/^[1-9]\d{0,9}$/.test(number) || Number(number) > 2_147_483_647) return null;
  return { tier, number: Number(number) };
}

/** Runs a query over the socket: resolves its answer ({ data, errors }), rejects when the socket fails. */
function ask(client, query, variables) {
  return new Promise((resolve, reject) => {
    let answer = null;
    client.subscribe(
      { query, variables },
      {
        next: (result) => (answer = result),
        // GraphQL errors (a document the service refuses) are an answer; anything else is the socket's failure.
        error: (error) => (Array.isArray(error) ? resolve({ errors: error }) : reject(error)),
        complete: () => resolve(answer ?? {}),
      },
    );
  });
}

/** A cohort's entries with their zones: ranks 1..promotedThrough move up, demotedFrom and below down (by place, as the close counts). */
function zoned(cohort) {
  return cohort.entries.map((entry, i) => ({
    ...entry,
    zone: i + 1 <= cohort.promotedThrough ? 'promotion' : cohort.demotedFrom !== null && i + 1 >= cohort.demotedFrom ? 'demotion' : 'safe',
  }));
}

/** Whether a view is of the cohort on screen. */
const sameCohort = (a, b) => a !== null && b !== null && a.bucket === b.bucket && a.tier === b.tier && a.number === b.number;

/**
 * Shows one cohort of the open round and keeps it live (see the header). Every failure is said on
 * the page and retried; nothing is thrown.
 */
function watchCohort(client, board, wanted) {
  const label = `${wanted.tier} ${wanted.number}`;
  const limit = params.has('limit') ? variables().limit : Infinity;
  let shown = null;
  let following = null;
  let stopFollowing = () => {};
  let timer;
  let roundTimer;
  let attempt = 0;
  /** Views in a row not of the cohort shown: the first is followed at once, the next ones with backoff, so that no disagreement loops fast. */
  let strayViews = 0;
  let live = true;
  /** A new resolution overtakes the one before: a stale answer draws nothing. */
  let generation = 0;

  const heading = document.querySelector('.title');
  const draw = (cohort) => {
    shown = cohort;
    list.dataset.bucket = cohort.bucket;
    list.dataset.closed = String(cohort.closed);
    if (!params.get('title')) {
      heading.textContent = `${cohort.tier} ${cohort.number} · ${cohort.bucket}`;
      heading.hidden = false;
    }
    render(zoned(cohort).slice(0, limit));
    armRoundEnd(cohort);
  };

  /** At the round's end the open round is another: ask for its cohort of this name then. */
  function armRoundEnd(cohort) {
    clearTimeout(roundTimer);
    if (!cohort.endsAt || cohort.closed) return;
    const wait = () => {
      const left = new Date(cohort.endsAt).getTime() - Date.now();
      if (left > MAX_TIMER_MS) roundTimer = setTimeout(wait, MAX_TIMER_MS);
      else roundTimer = setTimeout(resolveCohort, Math.max(0, left) + 1_000);
    };
    wait();
  }

  const later = (ms) => {
    clearTimeout(timer);
    timer = setTimeout(resolveCohort, ms);
  };

  /**
   * Follows the cohort through one member's cohortChanged. Once a view says the cohort moved on (a
   * closed round, the member in another cohort or round, a flag or an erasure), or the subscription
   * fails or ends, it is dropped on the spot and one resolution is scheduled: left running, the
   * member's next views (the new round's cohort filling up, every change of it) would each push
   * that resolution off again, by a longer backoff each time, and the page would show the ended
   * round's rows, not said to have ended, for as long as that cohort keeps changing.
   */
  function follow(playerId, mine) {
    following = playerId;
    /** Dropped: nothing it says counts any more (graphql-ws still calls `complete` after an unsubscribe). */
    let dropped = false;
    const current = () => !dropped && mine === generation;
    const unsubscribe = client.subscribe(
      { query: COHORT_CHANGED, variables: { board, playerId } },
      {
        next: (result) => {
          if (!current()) return;
          const view = result.data?.cohortChanged;
          if (view) {
            attempt = 0;
            setStatus({ failure: null, asOf: new Date().toISOString() });
            const cohort = view.cohort ?? null;
            // The followed player moved on (a new round, a flag, an erasure), or the round closed: find the open round's cohort again.
            if (!sameCohort(cohort, shown) || cohort.closed || !cohort.entries.some((entry) => entry.player.id === following))
              return drop(strayViews++ === 0 ? 0 : backoff(strayViews));
            strayViews = 0;
            showNotice(null);
            draw(cohort);
          } else if (result.errors?.length) {
            // A service without cohortChanged refuses the document: the page reads the cohort every few seconds instead.
            if (result.errors.some((error) => /cohortChanged/.test(error.message))) live = false;
            else setStatus({ failure: describe(result.errors) });
            drop(live ? backoff(attempt++) : COHORT_POLL_MS);
          }
        },
        error: (error) => {
          if (!current()) return;
          if (Array.isArray(error) && error.some((e) => /cohortChanged/.test(e.message))) live = false;
          else setStatus({ failure: describe(error) });
          drop(live ? backoff(attempt++) : COHORT_POLL_MS);
        },
        complete: () => {
          if (current()) drop(backoff(attempt++));
        },
      },
    );
    stopFollowing = () => {
      dropped = true;
      unsubscribe();
    };
    /** Stops following and resolves the cohort again in `ms`. */
    function drop(ms) {
      unfollow();
      later(ms);
    }
  }

  /** Ends the subscription of the member followed, if any. */
  function unfollow() {
    stopFollowing();
    stopFollowing = () => {};
    following = null;
  }

  async function resolveCohort() {
    clearTimeout(timer);
    const mine = ++generation;
    unfollow();
    let answer;
    try {
      answer = await ask(client, COHORT, { board, tier: wanted.tier, number: wanted.number });
    } catch (error) {
      if (mine !== generation) return;
      setStatus({ failure: describe(error) });
      return later(backoff(attempt++));
    }
    if (mine !== generation) return;
    const known = answer.data?.board;
    if (format === null && known) format = known.order === 'LOW_FIRST' ? 'time' : 'number';
    // Why nothing can be shown, most basic first; the page keeps asking (a board or a cohort may come).
    const refused = !known
      ? answer.errors?.length
        ? describe(answer.errors)
        : `No board "${board}".`
      : !known.league
        ? `Board "${board}" has no league: cohort= needs a league board.`
        : !known.league.tiers.some((tier) => tier.toLowerCase() === wanted.tier.toLowerCase())
          ? `"${wanted.tier}" is not a tier of board "${board}" (its tiers: ${known.league.tiers.join(', ')}).`
          : answer.errors?.length
            ? describe(answer.errors)
            : null;
    if (refused) {
      setStatus({ failure: refused });
      showNotice(refused);
      return later(answer.errors?.length && known?.league ? backoff(attempt++) : COHORT_POLL_MS * 3);
    }
    attempt = 0;
    setStatus({ failure: null, asOf: new Date().toISOString() });
    const cohort = answer.data.cohort;
    if (!cohort) {
      // Not formed yet in the open round: the ended round's rows, if any, stay, marked as ended.
      list.dataset.ended = shown ? 'true' : 'false';
      showNotice(
        shown
          ? `Round ${shown.bucket} has ended. ${label} of the new round forms with its players’ first results.`
          : `${label} has not formed in the open round yet: it forms with its players’ first results.`,
      );
      return later(COHORT_POLL_MS);
    }
    delete list.dataset.ended;
    showNotice(cohort.entries.length === 0 ? `Nobody is ranked in ${label} at the moment.` : null);
    draw(cohort);
    // Any member's cohortChanged carries the whole cohort; with nobody to follow, or no subscription, it is read again.
    const member = cohort.entries[0]?.player.id;
    if (live && member !== undefined && !cohort.closed) follow(member, mine);
    else later(COHORT_POLL_MS);
  }

  resolveCohort();
}

applyPageOptions();
const request = { query: TOP_CHANGED, variables: variables() };
if (!request.variables.board) {
  setStatus({ failure: 'no board' });
  showNotice('Add ?board=ID to the address.');
} else if (cohortMode) {
  list.dataset.mode = 'cohort';
  const wanted = cohortParameter(cohortText);
  if (!wanted) {
    setStatus({ failure: 'bad cohort' });
    showNotice(`cohort=${cohortText} is not a tier and a cohort number: write it like cohort=Gold/3 (the tier's name URL-encoded).`);
  } else {
    watchCohort(connect(), request.variables.board, wanted);
  }
} else {
  watch(connect(), request);
}
