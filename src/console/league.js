/**
 * Leagues and tournaments (issue 57) in the console: a league board's settings and, round by round,
 * its tiers with their cohorts and players (leagueTiers), each cohort linked to its own page; a
 * cohort's page lists its players in rank order with the promotion and demotion zones marked in
 * words and signs (never colour alone) and each player's outcome; a tournament's settings and how
 * many have joined.
 *
 * A cohort's page is #/boards/BOARD/cohort/TIER/NUMBER, and /ROUND for a round other than the open
 * one (each part URL-encoded: tier names may hold spaces and any character but '/').
 */
import { gql } from './session.js';
import { Q } from './documents.js';
import { card, field, fmtNumber, fmtTime, h, select } from './dom.js';
import { STANDING_HEADERS, boardCrumbs, bucketHref, standingRow } from './buckets.js';

/** Cohort links listed per tier; a tier with more (a league of many players) is reached by number. */
const COHORT_LINKS = 100;
/** Rounds offered in the picker: the newest of the league's period (periodBuckets takes up to 50). */
const ROUNDS_LISTED = 50;
/** The largest cohort number a page asks for: GraphQL's Int. */
const MAX_NUMBER = 2_147_483_647;

/** Where a cohort's page is; `bucket` null: the open round's. */
export function cohortHref(board, tier, number, bucket = null) {
  const parts = [board, 'cohort', tier, String(number), ...(bucket ? [bucket] : [])];
  return `#/boards/${parts.map((part) => encodeURIComponent(part)).join('/')}`;
}

/** "rank 5" or "ranks 1 to 3". */
const ranks = (from, to) => (from === to ? `rank ${from}` : `ranks ${from} to ${to}`);

/** How a round is named on the page. */
const roundName = (bucket) => (bucket ? `round ${bucket}` : 'the open round');

/**
 * Ranks 1..promotedThrough move up and demotedFrom down move down (model/league.ts outcomeAt). The
 * place counted is the entry's place in the cohort's rank order, as the round's close counts it
 * (ties already broken as the board breaks them), not a rank two tied players share.
 */
function outcomeAt(cohort, place) {
  if (place <= cohort.promotedThrough) return 'PROMOTED';
  if (cohort.demotedFrom !== null && cohort.demotedFrom !== undefined && place >= cohort.demotedFrom) return 'DEMOTED';
  return 'STAYED';
}

const ZONE_OF = { PROMOTED: 'promotion', STAYED: 'safe', DEMOTED: 'demotion' };
/** A zone said with a sign and a word, so that it reads without its colour and aloud. */
const ZONE_MARK = { promotion: '▲ promotion', safe: '● stays', demotion: '▼ demotion' };

/** The league's periods (ALL_TIME has no rounds). */
const LEAGUE_PERIODS = ['WEEKLY', 'DAILY', 'MONTHLY', 'SEASON'];

/**
 * The new-board form's league and tournament settings, fixed at creation: each left empty sends
 * nothing (no league, no tournament), so a plain board is made as before.
 */
export function leagueFields() {
  const number = (name, attrs) => h('input', { name, type: 'number', step: 1, ...attrs });
  return [
    h(
      'fieldset',
      { class: 'periods league-fields' },
      h('legend', {}, 'League (optional)'),
      field(
        'Tiers',
        h('textarea', { name: 'leagueTiers', rows: 3, placeholder: 'Gold\nSilver\nBronze', spellcheck: 'false' }),
        'one per line, best first; empty: no league',
      ),
      field('Cohort size', number('cohortSize', { min: 5, max: 1000, value: 50 })),
      field('Promote', number('promote', { min: 0, max: 1000, value: 5 }), 'top of each cohort'),
      field('Demote', number('demote', { min: 0, max: 1000, value: 5 }), 'bottom of each cohort'),
      field(
        'Rounds',
        select(
          'leaguePeriod',
          LEAGUE_PERIODS.map((period) => ({ value: period, label: `${period} buckets` })),
          'WEEKLY',
        ),
        'one of the board’s periods',
      ),
    ),
    h(
      'fieldset',
      { class: 'periods tournament-fields' },
      h('legend', {}, 'Tournament (optional)'),
      h('label', { class: 'check' }, h('input', { type: 'checkbox', name: 'joinRequired', value: 'yes' }), 'Join required'),
      field('Max players', number('maxPlayers', { min: 1 }), 'empty: no limit'),
      field('Max attempts', number('maxAttempts', { min: 1 }), 'per bucket of the shortest period; empty: no limit'),
    ),
  ];
}

/** What leagueFields' values add to createBoard's input. */
export function leagueInput(values) {
  const tiers = (values.leagueTiers ?? '')
    .split('\n')
    .map((tier) => tier.trim())
    .filter(Boolean);
  const input = {};
  if (tiers.length)
    input.league = {
      tiers,
      cohortSize: Number(values.cohortSize),
      promote: Number(values.promote),
      demote: Number(values.demote),
      period: values.leaguePeriod,
    };
  if (values.joinRequired?.length) input.joinRequired = true;
  if (values.maxPlayers) input.maxPlayers = Number(values.maxPlayers);
  if (values.maxAttempts) input.maxAttempts = Number(values.maxAttempts);
  return input;
}

/**
 * The board page's league and tournament cards (nothing for a board with neither), loading on
 * their own and saying their own failure. Answers the element to place on the page at once.
 */
export function leagueCards(boardId) {
  const box = h('div', { class: 'league-cards' }, h('p', { class: 'muted' }, 'Loading the league…'));
  void (async () => {
    let board;
    try {
      ({ board } = await gql(Q.league, { id: boardId }));
    } catch (error) {
      box.replaceChildren(card('League', h('p', { class: 'error' }, error.message)));
      return;
    }
    const cards = [];
    if (board?.league) cards.push(leagueCard(board));
    if (board && (board.joinRequired || board.maxPlayers !== null || board.maxAttempts !== null)) cards.push(tournamentCard(board));
    box.replaceChildren(...cards);
  })();
  return box;
}

function leagueSettings(league) {
  const first = league.tiers[0];
  const last = league.tiers[league.tiers.length - 1];
  return h(
    'dl',
    { class: 'settings league-settings' },
    [
      ['Tiers', `${league.tiers.join(' › ')} (best first; new players start in ${last})`],
      ['Cohort size', `${fmtNumber(league.cohortSize)} players`],
      ['Promote', `the top ${fmtNumber(league.promote)} of each cohort move up a tier (none from ${first})`],
      ['Demote', `the bottom ${fmtNumber(league.demote)} of each cohort move down a tier (none from ${last})`],
      ['Rounds', `${league.period} buckets`],
    ].map(([term, value]) => [h('dt', {}, term), h('dd', {}, value)]),
  );
}

function leagueCard(board) {
  const { league } = board;
  const round = select('round', [{ value: '', label: 'open round' }], '');
  const tiersBox = h('div', { class: 'league-tiers' }, h('p', { class: 'muted' }, 'Loading…'));
  const picker = h('form', { class: 'inline-form', id: 'league-round' }, field('Round', round, `a ${league.period} bucket of the global list`));
  picker.addEventListener('submit', (event) => event.preventDefault());

  const show = async () => {
    const bucket = round.value || null;
    let answer;
    try {
      answer = await gql(Q.leagueTiers, { board: board.id, bucket });
    } catch (error) {
      tiersBox.replaceChildren(h('p', { class: 'error' }, error.message));
      return;
    }
    // A picked round other than the one now asked for is not drawn over it.
    if ((round.value || null) !== bucket) return;
    tiersBox.replaceChildren(tiersTable(board, answer.leagueTiers, bucket));
  };
  round.addEventListener('change', () => void show());

  // The rounds on offer: the league period's buckets of the global list, newest first.
  void gql(Q.periodBuckets, { id: board.id, period: league.period, region: null, first: ROUNDS_LISTED })
    .then((answer) => {
      const options = answer.board.periodBuckets.edges.map(({ node }) =>
        h('option', { value: node.bucket, dataset: { closed: node.closed } }, `${node.bucket} (${node.closed ? 'closed' : 'open'})`),
      );
      round.append(...options);
    })
    .catch(() => {
      // The open round is still shown; only the choice of past rounds is missing.
    });
  void show();
  return card('League', leagueSettings(league), picker, tiersBox);
}

/** Each tier of a round, best first, with its cohorts (linked) and players. */
function tiersTable(board, tiers, bucket) {
  const counted = new Map(tiers.map((tier) => [tier.tier, tier]));
  // Every tier of the league, in its order, even one nobody reached this round.
  const names = [...board.league.tiers, ...tiers.map((tier) => tier.tier).filter((name) => !board.league.tiers.includes(name))];
  const rows = names.map((name) => {
    const { cohorts = 0, players = 0 } = counted.get(name) ?? {};
    const links = Array.from({ length: Math.min(cohorts, COHORT_LINKS) }, (_, i) =>
      h(
        'li',
        {},
        h('a', { href: cohortHref(board.id, name, i + 1, bucket), 'aria-label': `${name} cohort ${i + 1}`, dataset: { cohort: i + 1 } }, String(i + 1)),
      ),
    );
    return h(
      'tr',
      { dataset: { tier: name, cohorts, players } },
      h('th', { scope: 'row' }, name),
      h('td', { class: 'num cohorts' }, fmtNumber(cohorts)),
      h('td', { class: 'num players' }, fmtNumber(players)),
      h(
        'td',
        {},
        cohorts === 0 ? h('span', { class: 'muted' }, 'none') : h('ul', { class: 'cohort-links', 'aria-label': `Cohorts of ${name}` }, links),
        cohorts > COHORT_LINKS ? cohortByNumber(board.id, name, cohorts, bucket) : null,
      ),
    );
  });
  const total = tiers.reduce((sum, tier) => sum + tier.players, 0);
  return h(
    'table',
    { class: 'tiers' },
    h('caption', {}, `Tiers of ${roundName(bucket)}, best first: ${fmtNumber(total)} players placed`),
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        h('th', { scope: 'col' }, 'Tier'),
        h('th', { scope: 'col', class: 'num' }, 'Cohorts'),
        h('th', { scope: 'col', class: 'num' }, 'Players'),
        h('th', { scope: 'col' }, 'Cohort pages'),
      ),
    ),
    h('tbody', {}, rows),
  );
}

/** For a tier of more cohorts than are listed: a cohort's page by its number. */
function cohortByNumber(boardId, tier, cohorts, bucket) {
  const number = h('input', { name: 'number', type: 'number', min: 1, max: cohorts, step: 1, required: true, 'aria-label': `${tier} cohort number` });
  const form = h(
    'form',
    { class: 'inline-form cohort-by-number' },
    h('span', { class: 'muted small' }, `and ${fmtNumber(cohorts - COHORT_LINKS)} more: `),
    number,
    h('button', { type: 'submit', class: 'small' }, 'Open'),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const n = Number(number.value);
    if (Number.isInteger(n) && n >= 1 && n <= cohorts) globalThis.location.hash = cohortHref(boardId, tier, n, bucket);
  });
  return form;
}

function tournamentCard(board) {
  const joined = h('dd', { class: 'joined' }, '…');
  void gql(Q.joined, { id: board.id }).then(
    (answer) => {
      joined.textContent = fmtNumber(answer.board?.joined);
      joined.dataset.joined = String(answer.board?.joined ?? '');
    },
    (error) => {
      joined.textContent = `unknown (${error.message})`;
    },
  );
  return card(
    'Tournament',
    h(
      'dl',
      { class: 'settings tournament-settings' },
      h('dt', {}, 'Join required'),
      h('dd', { dataset: { joinRequired: board.joinRequired } }, board.joinRequired ? 'yes: only players who joined may have results' : 'no'),
      h('dt', {}, 'Max players'),
      h('dd', {}, board.maxPlayers === null ? 'no limit' : `${fmtNumber(board.maxPlayers)}, first come first served`),
      h('dt', {}, 'Max attempts'),
      h('dd', {}, board.maxAttempts === null ? 'no limit' : `${fmtNumber(board.maxAttempts)} results per player per bucket of the board’s shortest period`),
      h('dt', {}, 'Joined'),
      joined,
    ),
  );
}

/**
 * A cohort's page: what it is (round, tier, number, state, zones), then its players in rank order,
 * each with the zone they are in and where the close takes (or would take) them.
 */
export async function cohortView(visit, boardId, tier, numberText, bucket = null) {
  const crumbs = (...here) => boardCrumbs(boardId, ...here);
  const fail = (title, message) => visit.show(crumbs(title), h('h1', {}, title), h('p', { class: 'error', role: 'alert' }, message));
  const number = /^[1-9]\d{0,9}$/.test(numberText ?? '') ? Number(numberText) : NaN;
  if (!(number <= MAX_NUMBER)) return fail('Cohort not found', `"${numberText ?? ''}" is not a cohort number (1, 2, 3…).`);

  const { board } = await gql(Q.league, { id: boardId });
  if (!board) return fail('Board not found', `No board "${boardId}".`);
  if (!board.league) return fail('No league', `Board "${boardId}" has no league.`);
  // Tier names are told apart ignoring case (createBoard refuses two that differ only in case), as the reads take them.
  const tierIndex = board.league.tiers.findIndex((name) => name.toLowerCase() === tier.toLowerCase());
  if (tierIndex < 0) return fail('Tier not found', `"${tier}" is not a tier of this league (${board.league.tiers.join(', ')}).`);
  tier = board.league.tiers[tierIndex];

  const [{ cohort }, { leagueTiers }] = await Promise.all([
    gql(Q.cohort, { board: boardId, tier, number, bucket }),
    gql(Q.leagueTiers, { board: boardId, bucket }).catch(() => ({ leagueTiers: [] })),
  ]);
  const title = `${tier} ${number}`;
  if (!cohort) return fail(title, `${tier} has no cohort ${number} in ${roundName(bucket)}.`);

  const { league } = board;
  const above = league.tiers[tierIndex - 1];
  const below = league.tiers[tierIndex + 1];
  const cohorts = leagueTiers.find((entry) => entry.tier === tier)?.cohorts ?? null;
  const zones = [
    cohort.promotedThrough > 0
      ? `${ranks(1, cohort.promotedThrough)} move up to ${above}`
      : `nobody moves up (${tierIndex === 0 ? `${tier} is the first tier` : 'no promotion'})`,
    cohort.demotedFrom !== null
      ? `${ranks(cohort.demotedFrom, cohort.entries.length)} move down to ${below}`
      : `nobody moves down (${below === undefined ? `${tier} is the last tier` : `no more than ${league.promote + league.demote} players`})`,
  ].join('; ');
  const facts = h(
    'dl',
    { class: 'settings cohort-facts' },
    [
      ['Round', `${league.period} ${cohort.bucket}`],
      ['Tier', `${tier} (${tierIndex + 1} of ${league.tiers.length})`],
      ['Cohort', cohorts === null ? String(cohort.number) : `${cohort.number} of ${cohorts}`],
      ['Players', `${fmtNumber(cohort.entries.length)} of ${fmtNumber(league.cohortSize)}`],
      [
        'State',
        cohort.closed
          ? 'closed: the outcomes are final'
          : `open${cohort.endsAt ? `, ends ${fmtTime(cohort.endsAt)} UTC` : ''}: the outcomes are where the close would take each player now`,
      ],
      ['Zones', zones],
    ].map(([term, value]) => [h('dt', {}, term), h('dd', {}, value)]),
  );

  const said = (outcome) =>
    outcome === 'PROMOTED'
      ? `${cohort.closed ? 'promoted' : 'would move up'} to ${above}`
      : outcome === 'DEMOTED'
        ? `${cohort.closed ? 'demoted' : 'would move down'} to ${below}`
        : cohort.closed
          ? `stayed in ${tier}`
          : `would stay in ${tier}`;
  const rows = cohort.entries.map((standing, i) => {
    const outcome = outcomeAt(cohort, i + 1);
    const zone = ZONE_OF[outcome];
    // The last row of the promotion zone and the first of the demotion zone draw the zone's edge.
    const edge = (outcome === 'PROMOTED' && i + 1 === cohort.promotedThrough) || (outcome === 'DEMOTED' && i + 1 === cohort.demotedFrom);
    // The board's standing row (rank, player, score, percentile, time), with the zone and the outcome after it.
    const row = standingRow(standing);
    row.className = `zone-${zone}${edge ? ' zone-edge' : ''}`;
    Object.assign(row.dataset, { zone, outcome, place: i + 1 });
    row.append(h('td', { class: 'zone' }, h('span', { class: `zone-mark ${zone}` }, ZONE_MARK[zone])), h('td', { class: 'outcome' }, said(outcome)));
    return row;
  });
  const table =
    rows.length === 0
      ? h('p', { class: 'empty' }, 'Nobody is ranked in this cohort (its players may be hidden by a flag).')
      : h(
          'table',
          { class: 'cohort' },
          h('caption', {}, `${title} of ${cohort.bucket}, in rank order: ▲ marks the promotion zone, ▼ the demotion zone, ● the players who stay`),
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              [...STANDING_HEADERS, 'Zone', cohort.closed ? 'Outcome' : 'Outcome if it closed now'].map((header) =>
                h('th', { scope: 'col', class: header.startsWith('#') ? 'num' : undefined }, header.replace(/^#/, '')),
              ),
            ),
          ),
          h('tbody', {}, rows),
        );

  const sibling = (n, label) =>
    n >= 1 && (cohorts === null || n <= cohorts)
      ? h('a', { href: cohortHref(boardId, tier, n, bucket), rel: label === '←' ? 'prev' : 'next' }, label === '←' ? `← ${tier} ${n}` : `${tier} ${n} →`)
      : null;
  visit.show(
    crumbs(`${title} · ${cohort.bucket}`),
    h('h1', {}, title, h('span', { class: 'muted id' }, `${board.title} · ${league.period} ${cohort.bucket}`)),
    card(
      'Cohort',
      facts,
      h(
        'p',
        { class: 'pager' },
        sibling(number - 1, '←'),
        ' ',
        sibling(number + 1, '→'),
        ' ',
        h('a', { href: bucketHref({ board: boardId, period: league.period, bucket: cohort.bucket, region: null }) }, `the whole round’s standings`),
      ),
    ),
    card('Players', table),
  );
}
