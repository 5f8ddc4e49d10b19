/**
 * A board's reward bands (issue 58) in the console: what each band covers, and editing them
 * (updateBoard's rewards, the whole list at once). The awards a closed bucket granted are on the
 * bucket's page (buckets.js).
 */
import { gql } from './session.js';
import { Q } from './documents.js';
import { attempt, failureText, fmtNumber, h, select } from './dom.js';

/** How a band's ranks are counted, as the page says it: ties share a band under every style but ORDINAL. */
const TIES = {
  ORDINAL: 'a rank each, so no two players share one',
  COMPETITION: 'players tied on a rank share the band',
  DENSE: 'players tied on a rank share the band',
};

/** What a band covers, in words. */
export function bandCovers(band) {
  if (band.topPercent !== null) return `the top ${fmtNumber(band.topPercent)}% (ranks 1 to ⌈players × ${fmtNumber(band.topPercent)} / 100⌉)`;
  return band.fromRank === band.toRank ? `rank ${fmtNumber(band.fromRank)}` : `ranks ${fmtNumber(band.fromRank)} to ${fmtNumber(band.toRank)}`;
}

/**
 * The board page's reward bands card: the bands, and a form editing them. Loads on its own and says
 * its own failure; answers the element to place on the page at once.
 */
export function rewardsCard(boardId) {
  const box = h('section', { class: 'card', 'aria-label': 'Reward bands', id: 'rewards' }, h('h2', {}, 'Reward bands'), h('p', { class: 'muted' }, 'Loading…'));
  const render = (board) =>
    box.replaceChildren(
      h('h2', {}, 'Reward bands'),
      h(
        'p',
        { class: 'muted small' },
        `Each bucket’s close (days, weeks, months, regions, seasons, league rounds) awards every band once from its final standings; ranks are by the board’s rank style: ${TIES[board.rankStyle] ?? board.rankStyle}. A player in two bands gets both.`,
      ),
      bandsTable(board.rewards),
      bandsForm(board, render),
    );
  void gql(Q.rewards, { id: boardId }).then(
    (answer) => (answer.board ? render(answer.board) : box.remove()),
    (error) => box.replaceChildren(h('h2', {}, 'Reward bands'), h('p', { class: 'error' }, failureText(error))),
  );
  return box;
}

function bandsTable(bands) {
  if (bands.length === 0) return h('p', { class: 'empty' }, 'No reward bands: closes award nothing.');
  return h(
    'table',
    { class: 'reward-bands' },
    h('caption', {}, 'Bands, in the order closes award them'),
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        ['Band', 'Covers'].map((header) => h('th', { scope: 'col' }, header)),
      ),
    ),
    h(
      'tbody',
      {},
      bands.map((band) => h('tr', { dataset: { band: band.name } }, h('th', { scope: 'row' }, band.name), h('td', { class: 'covers' }, bandCovers(band)))),
    ),
  );
}

/** One band's row of the form: its name, and its ranks or its top percent. */
function bandRow(band = { name: '', fromRank: 1, toRank: 1, topPercent: null }) {
  const byPercent = band.topPercent !== null;
  const number = (key, attrs) => h('input', { type: 'number', dataset: { key }, 'aria-label': key, ...attrs });
  const kind = select(
    'kind',
    [
      { value: 'ranks', label: 'ranks' },
      { value: 'percent', label: 'top %' },
    ],
    byPercent ? 'percent' : 'ranks',
  );
  kind.dataset.key = 'kind';
  kind.setAttribute('aria-label', 'counted by');
  const ranks = h(
    'span',
    { class: 'band-ranks' },
    number('fromRank', { min: 1, step: 1, value: band.fromRank ?? 1, size: 6 }),
    ' to ',
    number('toRank', { min: 1, step: 1, value: band.toRank ?? 1, size: 6 }),
  );
  const percent = h(
    'span',
    { class: 'band-percent' },
    number('topPercent', { min: 0.001, max: 100, step: 'any', value: band.topPercent ?? 10, size: 6 }),
    ' %',
  );
  const shown = () => {
    ranks.hidden = kind.value !== 'ranks';
    percent.hidden = kind.value !== 'percent';
  };
  kind.addEventListener('change', shown);
  shown();
  const remove = h('button', { type: 'button', class: 'small', 'aria-label': 'Remove this band' }, 'Remove');
  const row = h(
    'div',
    { class: 'band-row' },
    h('input', { dataset: { key: 'name' }, 'aria-label': 'band name', value: band.name, placeholder: 'Gold', maxlength: 40, required: true }),
    kind,
    ranks,
    percent,
    remove,
  );
  remove.addEventListener('click', () => row.remove());
  return row;
}

/** A form row as RewardBandInput. */
function bandOf(row) {
  const value = (key) => row.querySelector(`[data-key="${key}"]`).value.trim();
  const name = value('name');
  return value('kind') === 'percent'
    ? { name, topPercent: Number(value('topPercent')) }
    : { name, fromRank: Number(value('fromRank')), toRank: Number(value('toRank')) };
}

function bandsForm(board, render) {
  const rows = h(
    'div',
    { class: 'band-rows' },
    board.rewards.map((band) => bandRow(band)),
  );
  const add = h('button', { type: 'button', class: 'small', id: 'add-band' }, 'Add band');
  add.addEventListener('click', () => rows.append(bandRow()));
  const form = h(
    'form',
    { class: 'bands-form', id: 'edit-rewards', autocomplete: 'off' },
    h('h3', {}, 'Edit bands'),
    rows,
    h(
      'div',
      { class: 'actions' },
      add,
      h('button', { type: 'submit', class: 'primary' }, 'Save bands'),
      h('span', { class: 'muted small' }, 'the next closes award the bands saved; closed buckets keep what they awarded'),
    ),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const rewards = [...rows.querySelectorAll('.band-row')].map(bandOf);
    const answer = await attempt(
      () => gql(Q.updateRewards, { input: { id: board.id, rewards } }),
      `Reward bands of ${board.id} saved (${rewards.length === 0 ? 'none' : rewards.length}).`,
    );
    if (answer) render(answer.updateBoard);
  });
  return form;
}
