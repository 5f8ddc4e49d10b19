/* global location */
/**
 * Players (search, a player's standings, rank history and results, flag, unflag, erase, removing their entry from a board) and the
 * moderation lists (flagged players, removed entries).
 */
import { gql } from './session.js';
import { Q } from './documents.js';
import { attempt, card, confirmAction, field, flash, fmtNumber, fmtTime, formValues, h, playerHref, playerName, select, table } from './dom.js';
import { route } from './router.js';
import { bucketHref } from './buckets.js';
import { rankChart } from './charts.js';
import { removalsCard, removeEntryButton } from './removals.js';

export async function playersView(visit) {
  const input = h('input', { name: 'text', type: 'search', placeholder: 'player id or name', required: true, autofocus: true });
  const results = h('div', { id: 'search-results' });
  const form = h(
    'form',
    { class: 'inline-form', id: 'search', role: 'search' },
    field('Find a player', input, 'an id prefix, or part of a display name'),
    h('button', { type: 'submit', class: 'primary' }, 'Search'),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const answer = await attempt(() => gql(Q.search, { text: input.value.trim() }));
    if (!answer) return;
    results.replaceChildren(
      table(
        ['Id', 'Display name', 'Status'],
        answer.searchPlayers.map((player) =>
          h(
            'tr',
            { dataset: { player: player.id } },
            h('td', {}, h('a', { href: playerHref(player.id) }, player.id)),
            h('td', {}, player.displayName ?? '—'),
            h('td', {}, player.flag ? h('span', { class: 'badge warn' }, 'flagged') : 'shown'),
          ),
        ),
        { empty: `No player matches “${input.value.trim()}”.`, label: 'Players found' },
      ),
    );
  });
  visit.show(h('h1', {}, 'Players'), card('Search', form, results));
  input.focus();
}

export async function playerView(visit, id) {
  const [{ searchPlayers }, { boards }] = await Promise.all([gql(Q.player, { id }), gql(Q.boards)]);
  const player = searchPlayers[0]?.id === id ? searchPlayers[0] : null;
  const reload = () => route();

  const flagForm = h(
    'form',
    { class: 'inline-form', id: 'flag-form', autocomplete: 'off' },
    field('Reason', h('input', { name: 'reason', required: true, maxlength: 500, placeholder: 'why they are hidden' })),
    h('button', { type: 'submit', class: 'warn' }, player?.flag ? 'Update reason' : 'Flag'),
  );
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
    player?.flag
      ? h('p', { class: 'flag-note' }, h('span', { class: 'badge warn' }, 'flagged'), ` since ${fmtTime(player.flag.flaggedAt)} UTC: ${player.flag.reason}`)
      : h('p', { class: 'muted' }, 'Shown on every board.'),
    flagForm,
    h('div', { class: 'actions' }, player?.flag ? unflag : null, erase),
  );

  if (!player) {
    return visit.show(
      h('p', { class: 'crumbs' }, h('a', { href: '#/players' }, 'Players'), ' / ', id),
      h('h1', {}, id),
      h('p', { class: 'muted' }, 'No profile and no scores under this id.'),
      moderation,
      removalsCard({ playerId: id }),
    );
  }
  // A removal takes the player off a whole board: its button is on the board's first row.
  const boardsSeen = new Set();
  const scores = player.boardScores.map((row) => {
    const firstOfBoard = !boardsSeen.has(row.board.id);
    boardsSeen.add(row.board.id);
    return h(
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
      h('td', { class: 'row-actions' }, firstOfBoard ? removeEntryButton(row.board.id, player) : null),
    );
  });
  const results = player.recentResults.map((result) =>
    h(
      'tr',
      { dataset: { match: result.matchId } },
      h('td', { class: 'time' }, fmtTime(result.achievedAt)),
      h('td', {}, result.board.title),
      h('td', {}, result.matchId),
      h('td', { class: 'num' }, fmtNumber(result.score)),
      h('td', {}, result.region ?? '—'),
      h('td', { class: 'time' }, fmtTime(result.recordedAt)),
    ),
  );
  visit.show(
    h('p', { class: 'crumbs' }, h('a', { href: '#/players' }, 'Players'), ' / ', id),
    h(
      'h1',
      {},
      player.displayName ?? id,
      player.displayName ? h('span', { class: 'muted id' }, id) : null,
      player.flag ? h('span', { class: 'badge warn' }, 'flagged') : null,
    ),
    moderation,
    card(
      'Standing in every bucket',
      table(['Board', 'Period', 'Bucket', 'Region', '#Score', '#Rank', '#Percentile', 'Reached (UTC)', ''], scores, {
        empty: 'No board scores in any bucket kept now.',
        label: 'Standings',
      }),
      player.flag ? h('p', { class: 'muted small' }, 'Flagged: their scores are kept but they are ranked nowhere.') : null,
    ),
    historyCard(id, boards, player.boardScores),
    card(
      'Recent results',
      table(['Achieved (UTC)', 'Board', 'Match', '#Score', 'Region', 'Recorded (UTC)'], results, { empty: 'No results.', label: 'Recent results' }),
    ),
    removalsCard({ playerId: id }),
  );
}

/** How many closed buckets a history chart reads at a time (history's default page). */
const HISTORY_PAGE = 30;
const UNITS = { SEASON: 'season', MONTHLY: 'month', WEEKLY: 'week', DAILY: 'day' };

/**
 * The player's rank over the closed buckets of each period of one board (history): a chart per
 * period, oldest bucket on the left, rank 1 at the top; the board and the region are picked, the
 * board they last scored on first. ALL_TIME never closes, so it has no history.
 */
function historyCard(playerId, boards, boardScores) {
  if (boards.length === 0) return card('Rank history', h('p', { class: 'muted' }, 'No boards.'));
  const theirs = boardScores.map((row) => row.board.id);
  const boardPick = select(
    'board',
    boards.map((board) => ({ value: board.id, label: `${board.title} (${board.id})` })),
    theirs.find((boardId) => boards.some((board) => board.id === boardId)) ?? boards[0].id,
  );
  const regionSlot = h('span', { class: 'region-slot' });
  const charts = h('div', { class: 'history-charts' });
  let region = select('region', [{ value: '', label: 'global' }], '');
  const draw = () => {
    const board = boards.find((each) => each.id === boardPick.value);
    const periods = board.periods.filter((period) => period !== 'ALL_TIME');
    if (periods.length === 0) return charts.replaceChildren(h('p', { class: 'muted' }, 'This board keeps only ALL_TIME, which never closes.'));
    charts.replaceChildren(...periods.map((period) => historySection(playerId, board, period, region.value || null)));
  };
  const pickRegions = () => {
    const board = boards.find((each) => each.id === boardPick.value);
    const kept = board.regions.includes(region.value) ? region.value : '';
    region = select('region', [{ value: '', label: 'global' }, ...board.regions], kept);
    region.addEventListener('change', draw);
    regionSlot.replaceChildren(field('Region', region));
  };
  boardPick.addEventListener('change', () => {
    pickRegions();
    draw();
  });
  pickRegions();
  draw();
  return card(
    'Rank history',
    h('form', { class: 'inline-form', id: 'history-picker' }, field('Board', boardPick), regionSlot),
    h('p', { class: 'muted small' }, 'Their final rank in each closed bucket where they had one, oldest on the left; rank 1 is at the top.'),
    charts,
  );
}

function historySection(playerId, board, period, region) {
  const box = h('div', {}, h('p', { class: 'muted' }, 'Loading…'));
  const section = h('section', { class: 'history', dataset: { period } }, h('h3', {}, period), box);
  // Newest first from the API, as many pages as were asked for.
  const edges = [];
  const more = async (after = null) => {
    let answer;
    try {
      answer = await gql(Q.history, { board: board.id, playerId, period, region, first: HISTORY_PAGE, after });
    } catch (error) {
      box.replaceChildren(h('p', { class: 'error' }, error.message));
      return;
    }
    edges.push(...answer.history.edges);
    const { pageInfo } = answer.history;
    if (edges.length === 0) return box.replaceChildren(h('p', { class: 'muted empty' }, `No closed ${UNITS[period]} where they had a standing.`));
    const points = edges
      .map(({ node }) => ({
        label: node.bucket.bucket,
        rank: node.standing.rank,
        size: node.bucket.size,
        startsAt: node.bucket.startsAt,
        href: bucketHref({ board: board.id, period, bucket: node.bucket.bucket, region: node.bucket.region }),
      }))
      .reverse();
    const older = pageInfo.hasNextPage ? h('button', { type: 'button', class: 'small' }, 'Older buckets') : null;
    older?.addEventListener('click', () => void more(pageInfo.endCursor));
    box.replaceChildren(
      rankChart({ title: `Rank of ${playerId} in each closed ${period} bucket of ${board.title}${region ? ` (${region})` : ''}`, points, unit: UNITS[period] }),
      ...(older ? [older] : []),
    );
  };
  void more();
  return section;
}

/** The result that flagged a player automatically (a board's suspectAbove or suspectJump), or a dash when flagged by hand. */
function trippedBy(result) {
  if (!result) return h('span', { class: 'muted' }, '— (by hand)');
  const values = result.tieBreakValues.length > 0 ? ` (${result.tieBreakValues.map(fmtNumber).join(', ')})` : '';
  return h(
    'span',
    {},
    h('a', { href: `#/boards/${encodeURIComponent(result.boardId)}` }, result.boardId),
    `: ${fmtNumber(result.score)}${values}, match ${result.matchId}, ${fmtTime(result.achievedAt)}`,
  );
}

export async function moderationView(visit) {
  const { flaggedPlayers } = await gql(Q.flagged);
  const rows = flaggedPlayers.map((flag) => {
    // Clearing is unflagPlayer: the player's board scores, those recorded while flagged included, are shown again.
    const unflag = h('button', { type: 'button', class: 'small', 'aria-label': `Clear the flag of ${flag.player.id}` }, 'Clear');
    unflag.addEventListener('click', async () => {
      if (await attempt(() => gql(Q.unflag, { playerId: flag.player.id }), `${flag.player.id} is shown again.`)) route();
    });
    return h(
      'tr',
      { dataset: { player: flag.player.id } },
      h(
        'td',
        {},
        h('a', { href: playerHref(flag.player.id) }, playerName(flag.player)),
        flag.player.displayName ? h('span', { class: 'muted id' }, flag.player.id) : null,
      ),
      h('td', {}, flag.reason),
      h('td', { class: 'flag-result' }, trippedBy(flag.result)),
      h('td', { class: 'time' }, fmtTime(flag.flaggedAt)),
      h('td', {}, unflag),
    );
  });
  const form = h(
    'form',
    { class: 'inline-form', id: 'quick-flag', autocomplete: 'off' },
    field('Player id', h('input', { name: 'playerId', required: true })),
    field('Reason', h('input', { name: 'reason', required: true, maxlength: 500 })),
    h('button', { type: 'submit', class: 'warn' }, 'Flag'),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const v = formValues(form);
    if (await attempt(() => gql(Q.flag, v), `${v.playerId} is flagged.`)) route();
  });
  visit.show(
    h('h1', {}, 'Moderation'),
    card(
      `Flagged players (${flaggedPlayers.length})`,
      table(['Player', 'Reason', 'Tripped by', 'Flagged (UTC)', ''], rows, { empty: 'Nobody is flagged.', label: 'Flagged players' }),
    ),
    card('Flag a player', form),
    removalsCard(),
  );
}
