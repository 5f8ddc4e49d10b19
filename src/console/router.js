/* global document, location */
/**
 * Views routed by the URL's hash (#/boards, #/boards/ID, #/boards/ID/PERIOD/BUCKET[/REGION],
 * #/boards/ID/cohort/TIER/NUMBER[/ROUND], #/players/ID,
 * #/moderation, #/webhooks, #/webhooks/ID, #/operations),
 * each rendered into #view; what a view starts (a subscription, a poll) is stopped when it is left.
 *
 * Each routing is a visit of its own, handed to the view it renders. A view loads before it shows,
 * and the operator may move on meanwhile (or the page reloads itself after an action): a visit that
 * a newer one overtook shows nothing and stops at once what it starts, so the page left never
 * replaces the page the operator moved to, and is never acted on by mistake.
 */
import { signedIn } from './session.js';
import { flash, h } from './dom.js';

const view = () => document.getElementById('view');

/** The visit whose view #view shows or is loading; null when signed out. */
let current = null;

/**
 * @typedef {object} Visit
 * @property {(...children: Node[]) => void} show Replaces #view's content, while this visit is current.
 * @property {(stop: () => void) => void} onLeave Something to stop when the visit is left (at once if it already was).
 */

/** @returns {Visit & { leave(): void }} */
function visit() {
  const stops = [];
  const self = {
    show: (...children) => {
      if (current === self) view().replaceChildren(...children);
    },
    onLeave: (stop) => {
      if (current === self) stops.push(stop);
      else stop();
    },
    leave: () => {
      for (const stop of stops.splice(0)) stop();
    },
  };
  return self;
}

export function route() {
  if (!signedIn()) return;
  leave();
  // A message about what the previous view did goes with it, unless the action itself just moved here.
  if (Date.now() - (flash.shownAt ?? 0) > 1_500) document.getElementById('flash').hidden = true;
  const [section = 'boards', ...parts] = location.hash.replace(/^#\/?/, '').split('/');
  // Each part is encoded on its own (encodeURIComponent), so a '/' in an id stays inside its part.
  const params = parts.map((part) => decodeURIComponent(part));
  for (const link of document.querySelectorAll('.nav a')) link.classList.toggle('active', link.dataset.section === section);
  const here = (current = visit());
  view().replaceChildren(h('p', { class: 'muted' }, 'Loading…'));
  viewOf(section)(here, ...params).catch((error) => here.show(h('p', { class: 'error' }, error.message)));
}

/** How a hash's section names its view (set once by console.js). */
let viewOf = () => async () => {};

/** Sets how a section names the function that renders its view: `(visit, ...params) => Promise`, params being the hash's decoded parts after the section. */
export function setViews(resolve) {
  viewOf = resolve;
}

/** Stops what the current view started; nothing a view still loading renders is shown after. */
export function leave() {
  current?.leave();
  current = null;
}
