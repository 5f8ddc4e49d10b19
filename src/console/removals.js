/**
 * Removing one player's entry from one board (removeEntry: every result and board score of theirs
 * on it, with a reason) and the removals recorded (entryRemovals, newest first), on the moderation
 * page, a board's page and a player's.
 */
import { gql } from './session.js';
import { Q } from './documents.js';
import { attempt, card, confirmAction, failureText, flash, fmtNumber, fmtTime, h, playerHref, table } from './dom.js';
import { route } from './router.js';

/** How many removals a list shows (entryRemovals takes 1 to 200). */
const REMOVALS_SHOWN = 100;

/**
 * A button removing `player`'s entry from the board `boardId`: it asks for the reason (required,
 * recorded with the removal), and the view is shown again after it, the entry gone.
 */
export function removeEntryButton(boardId, player) {
  const button = h(
    'button',
    { type: 'button', class: 'small', dataset: { action: 'remove-entry' }, 'aria-label': `Remove the entry of ${player.id} from ${boardId}` },
    'Remove…',
  );
  button.addEventListener('click', async () => {
    const named = player.displayName ? `“${player.displayName}” (${player.id})` : player.id;
    const reason = await confirmAction({
      title: `Remove ${named} from ${boardId}?`,
      text: `Every result and board score of ${named} on board ${boardId} is removed, in every bucket and season (final standings of closed buckets stay). Their profile and their other boards are untouched, and results they send later count again. The removal is recorded with your reason.`,
      confirm: 'Remove entry',
      reason: 'why this entry goes',
    });
    if (!reason) return;
    const answer = await attempt(() => gql(Q.removeEntry, { board: boardId, playerId: player.id, reason }));
    if (!answer) return;
    flash(answer.removeEntry ? `The entry of ${player.id} on ${boardId} was removed.` : `${player.id} had nothing on ${boardId} to remove.`);
    route();
  });
  return button;
}

/**
 * The removals recorded, newest first, of one board or one player when `board` or `playerId` is
 * given, of every board otherwise. The card loads on its own and says its own failure.
 */
export function removalsCard({ board = null, playerId = null } = {}) {
  const box = h('div', { class: 'removals' }, h('p', { class: 'muted' }, 'Loading…'));
  void gql(Q.entryRemovals, { board, playerId, first: REMOVALS_SHOWN }).then(
    ({ entryRemovals }) =>
      box.replaceChildren(
        table(
          ['Board', 'Player', 'Reason', 'Removed by', 'Removed (UTC)', '#Results'],
          entryRemovals.map((removal) =>
            h(
              'tr',
              { dataset: { board: removal.board, player: removal.playerId } },
              h('td', {}, h('a', { href: `#/boards/${encodeURIComponent(removal.board)}` }, removal.board)),
              h('td', {}, h('a', { href: playerHref(removal.playerId) }, removal.playerId)),
              h('td', { class: 'reason' }, removal.reason),
              h('td', {}, h('code', {}, removal.removedBy)),
              h('td', { class: 'time' }, fmtTime(removal.removedAt)),
              h('td', { class: 'num' }, fmtNumber(removal.results)),
            ),
          ),
          { empty: 'No entry removed yet.', label: 'Entry removals' },
        ),
        ...(entryRemovals.length === REMOVALS_SHOWN ? [h('p', { class: 'muted small' }, `The latest ${REMOVALS_SHOWN} shown.`)] : []),
      ),
    (error) => box.replaceChildren(h('p', { class: 'error' }, failureText(error))),
  );
  return card(
    'Removed entries',
    h('p', { class: 'muted small' }, 'Each removeEntry as recorded: who asked (the API key’s id), when, why, and how many results went.'),
    box,
  );
}
