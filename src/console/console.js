/* global document, location, setInterval, addEventListener */
/**
 * The operators' console: boards, live tops and pages, seasons, buckets open and closed with their
 * histograms and exports, league tiers and cohorts, tournaments, reward bands and awards, players with their rank history, moderation (flags, removing a player's entry from a board, the removals made), deleting a board, webhooks and their deliveries, rebuilds, API keys and store health, all through this service's own /graphql (HTTP for queries and
 * mutations, graphql-ws for topChanged) with the admin key typed into the sign-in form.
 *
 * The key is held by session.js and nowhere else: never a cookie, localStorage or sessionStorage,
 * never in the URL. Reloading or closing the tab signs out. This module signs in and out and names
 * the views (see router.js); each section's views are a module of their own.
 */
import { beginSession, endSession, gql, whenKeyRejected } from './session.js';
import { Q } from './documents.js';
import { leave, route, setViews } from './router.js';
import { boardView, boardsView } from './boards.js';
import { bucketView } from './buckets.js';
import { cohortView } from './league.js';
import { moderationView, playerView, playersView } from './players.js';
import { operationsView, refreshHealthPill } from './operations.js';
import { webhookView, webhooksView } from './webhooks.js';

setViews((section) => {
  if (section === 'players') return (visit, id) => (id === undefined ? playersView(visit) : playerView(visit, id));
  if (section === 'moderation') return moderationView;
  if (section === 'operations') return operationsView;
  if (section === 'webhooks') return (visit, id) => (id === undefined ? webhooksView(visit) : webhookView(visit, id));
  // #/boards, #/boards/ID, a bucket's page #/boards/ID/PERIOD/BUCKET[/REGION], and a league cohort's
  // #/boards/ID/cohort/TIER/NUMBER[/ROUND] (periods are upper case: 'cohort' is none of them).
  return (visit, id, ...rest) =>
    id === undefined
      ? boardsView(visit)
      : rest[0] === 'cohort'
        ? cohortView(visit, id, ...rest.slice(1))
        : rest.length
          ? bucketView(visit, id, ...rest)
          : boardView(visit, id);
});

function signOut(message) {
  endSession();
  leave();
  document.getElementById('view').replaceChildren();
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
      failure.code === 'UNAUTHENTICATED'
        ? 'This key is not known (or was revoked).'
        : failure.code === 'FORBIDDEN'
          ? 'This is a game-server key; the console needs an admin key.'
          : failure.message;
    error.hidden = false;
    return;
  }
  // The form field is cleared at once: from here on the key is only in the session.
  input.value = '';
  error.hidden = true;
  // The header's store health is kept fresh while signed in.
  beginSession(
    key,
    setInterval(() => void refreshHealthPill(), 30_000),
  );
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
whenKeyRejected(signOut);
