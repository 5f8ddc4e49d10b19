/* global document, location */
/**
 * Views routed by the URL's hash (#/boards, #/boards/ID, #/players/ID, #/moderation, #/operations),
 * each rendered into #view; what a view starts (a subscription, a poll) is stopped when it is left.
 */
import { signedIn } from './session.js';
import { flash, h } from './dom.js';

const view = () => document.getElementById('view');
/** What the current view must stop when it is left (a subscription, a poll). */
let leaving = [];

export function route() {
  if (!signedIn()) return;
  leave();
  // A message about what the previous view did goes with it, unless the action itself just moved here.
  if (Date.now() - (flash.shownAt ?? 0) > 1_500) document.getElementById('flash').hidden = true;
  const [section = 'boards', id] = location.hash.replace(/^#\/?/, '').split('/');
  const param = id === undefined ? undefined : decodeURIComponent(id);
  for (const link of document.querySelectorAll('.nav a')) link.classList.toggle('active', link.dataset.section === section);
  view().replaceChildren(h('p', { class: 'muted' }, 'Loading…'));
  const render = viewOf(section, param);
  render().catch((error) => view().replaceChildren(h('p', { class: 'error' }, error.message)));
}

export const show = (...children) => view().replaceChildren(...children);

/** How a hash's section and id name a view (set once by console.js). */
let viewOf = () => async () => {};

/** Sets how a section and an id name the function that renders their view. */
export function setViews(resolve) {
  viewOf = resolve;
}

/** Stops what the current view started. */
export function leave() {
  for (const stop of leaving) stop();
  leaving = [];
}

/** Something the current view must stop when it is left (a subscription, a poll). */
export const onLeave = (stop) => leaving.push(stop);
