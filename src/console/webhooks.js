/* global location, setTimeout, clearTimeout */
/**
 * Webhooks (issue 58) in the console: the deployment's webhooks with their health (failing in a row,
 * last delivered, last error), creating one (its signing secret shown this once) and deleting one;
 * a webhook's page lists its deliveries, the FAILED ones first picked, with "Redeliver" on each
 * FAILED or DELIVERED one.
 *
 * A webhook's page is #/webhooks/ID (the id URL-encoded).
 */
import { gql } from './session.js';
import { Q } from './documents.js';
import { attempt, boardChecks, card, confirmAction, field, fmtNumber, fmtTime, formValues, h, select, shownOnce, table } from './dom.js';

/** The events a webhook may want, in the contract's order, each as the form says it. */
const EVENTS = [
  { value: 'BUCKET_CLOSED', label: 'a bucket closed, with its top and awards' },
  { value: 'LEAGUE_ROUND_CLOSED', label: 'a league round closed, with each player’s outcome' },
  { value: 'FRIEND_OVERTAKEN', label: 'a friend passed a player' },
  { value: 'TOP_CHANGED', label: 'a bucket’s top changed (at most once a second)' },
];
/** Which deliveries a webhook's page lists; FAILED first, as what needs the operator. */
const FILTERS = [
  { value: 'FAILED', label: 'failed' },
  { value: 'PENDING', label: 'pending' },
  { value: 'DELIVERED', label: 'delivered' },
  { value: '', label: 'all' },
];
/** Deliveries a page. */
const DELIVERIES_PAGE = 25;
/** How often, and how many times, a redelivered row is read again until it is no longer PENDING. */
const REDELIVERY_POLL_MS = 1_000;
const REDELIVERY_POLLS = 60;
/** How many deliveries of the unfiltered list are read looking for a redelivered one (see watchRedelivery). */
const REDELIVERY_SCAN = 200;

export const webhookHref = (id) => `#/webhooks/${encodeURIComponent(id)}`;

/** A webhook's health in a word and a colour: failing deliveries in a row, or fine. */
function health(webhook) {
  return webhook.failing > 0
    ? h('span', { class: 'badge warn', dataset: { failing: webhook.failing } }, `${fmtNumber(webhook.failing)} failing in a row`)
    : h('span', { class: 'badge ok', dataset: { failing: 0 } }, 'ok');
}

const boardsOf = (webhook) => (webhook.boards.length ? webhook.boards.join(', ') : h('span', { class: 'muted' }, 'every board'));

/** Asks, then deletes the webhook; answers whether it was deleted. */
async function deleteWebhook(webhook) {
  const sure = await confirmAction({
    title: `Delete webhook ${webhook.id}?`,
    text: `${webhook.url} receives nothing more, and its deliveries (pending ones included) are removed. This cannot be undone.`,
    confirm: 'Delete webhook',
  });
  return sure && Boolean(await attempt(() => gql(Q.deleteWebhook, { id: webhook.id }), `Webhook ${webhook.id} deleted.`));
}

export async function webhooksView(visit) {
  const [{ webhooks }, { boards }] = await Promise.all([gql(Q.webhooks), gql(Q.boards)]);
  const listBox = h('div', { id: 'webhooks' });
  const renderList = (list) =>
    listBox.replaceChildren(
      table(
        ['Id', 'URL', 'Events', 'Boards', 'Created (UTC)', 'Health', 'Last delivered (UTC)', 'Last error', ''],
        list.map((webhook) => {
          const remove = h('button', { type: 'button', class: 'small danger' }, 'Delete');
          remove.addEventListener('click', async () => {
            if (await deleteWebhook(webhook)) renderList((await gql(Q.webhooks)).webhooks);
          });
          return h(
            'tr',
            { dataset: { webhook: webhook.id } },
            h('td', {}, h('a', { href: webhookHref(webhook.id) }, webhook.id)),
            h('td', { class: 'url' }, h('code', {}, webhook.url)),
            h('td', { class: 'events' }, webhook.events.join(', ')),
            h('td', { class: 'boards' }, boardsOf(webhook)),
            h('td', { class: 'time' }, fmtTime(webhook.createdAt)),
            h('td', {}, health(webhook)),
            h('td', { class: 'time' }, fmtTime(webhook.lastDeliveredAt)),
            h('td', { class: 'last-error' }, webhook.lastError ?? '—'),
            h('td', {}, h('div', { class: 'row-actions' }, h('a', { href: webhookHref(webhook.id) }, 'Deliveries'), remove)),
          );
        }),
        { empty: 'No webhooks yet: create the first below.', label: 'Webhooks' },
      ),
    );
  renderList(webhooks);

  const secretBox = h('div', { id: 'new-webhook' });
  const form = h(
    'form',
    { class: 'grid-form', id: 'create-webhook', autocomplete: 'off' },
    field(
      'URL',
      h('input', { name: 'url', type: 'url', required: true, placeholder: 'https://game.example.com/hooks/leaderboard', size: 48 }),
      'https; http to a private address only with WEBHOOK_ALLOW_PRIVATE=true',
    ),
    h(
      'fieldset',
      { class: 'periods webhook-events' },
      h('legend', {}, 'Events'),
      EVENTS.map(({ value, label }) =>
        h(
          'label',
          { class: 'check' },
          h('input', { type: 'checkbox', name: 'events', value }),
          h('code', {}, value),
          h('span', { class: 'muted small' }, label),
        ),
      ),
    ),
    boardChecks(
      boards,
      'webhook-boards',
      'Boards (none ticked: every board, those made later too)',
      'No boards yet: the webhook hears of every board made later.',
    ),
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary' }, 'Create webhook')),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const v = formValues(form);
    const input = { url: v.url, events: v.events ?? [], boards: v.boards ?? [] };
    const answer = await attempt(() => gql(Q.createWebhook, { input }));
    if (!answer) return;
    const { webhook, secret } = answer.createWebhook;
    form.reset();
    renderList((await gql(Q.webhooks)).webhooks);
    secretBox.replaceChildren(secretOnce(webhook, secret, () => secretBox.replaceChildren()));
  });

  visit.show(
    h('h1', {}, 'Webhooks'),
    card(
      'All webhooks',
      h(
        'p',
        { class: 'muted small' },
        'Each event is signed per Standard Webhooks (headers webhook-id, webhook-timestamp, webhook-signature) and delivered at least once: retried with backoff for 24 hours, then FAILED. A webhook’s page lists its deliveries and sends one again.',
      ),
      listBox,
    ),
    card('New webhook', secretBox, form),
  );
}

/** The new webhook's signing secret, shown this once with a button to copy it. */
function secretOnce(webhook, secret, dismissed) {
  return shownOnce({
    said: [
      h('strong', {}, `Webhook ${webhook.id} created: copy its signing secret now.`),
      ' It is shown this once and never again; your receiver verifies each delivery with it (the standardwebhooks package takes it as it is).',
    ],
    value: secret,
    id: 'new-webhook-secret',
    dismissed,
  });
}

/** A webhook's page: what it is, deleting it, and its deliveries by status, paged, each FAILED or DELIVERED one sent again on request. */
export async function webhookView(visit, id) {
  const crumbs = (...here) => h('p', { class: 'crumbs' }, h('a', { href: '#/webhooks' }, 'Webhooks'), ' / ', ...here);
  const { webhooks } = await gql(Q.webhooks);
  const webhook = webhooks.find((each) => each.id === id);
  if (!webhook) return visit.show(crumbs(id), h('h1', {}, 'Webhook not found'), h('p', { class: 'error', role: 'alert' }, `No webhook "${id}".`));

  const facts = h(
    'dl',
    { class: 'settings webhook-facts' },
    [
      ['URL', h('code', {}, webhook.url)],
      ['Events', webhook.events.join(', ')],
      ['Boards', boardsOf(webhook)],
      ['Created (UTC)', fmtTime(webhook.createdAt)],
      ['Health', health(webhook)],
      ['Last delivered (UTC)', fmtTime(webhook.lastDeliveredAt)],
      ['Last error', webhook.lastError ?? '—'],
    ].map(([term, value]) => [h('dt', {}, term), h('dd', {}, value)]),
  );
  const remove = h('button', { type: 'button', class: 'danger', id: 'delete-webhook' }, 'Delete webhook');
  remove.addEventListener('click', async () => {
    if (await deleteWebhook(webhook)) location.hash = '#/webhooks';
  });

  const status = select('status', FILTERS, 'FAILED');
  const box = h('div', { class: 'deliveries' }, h('p', { class: 'muted' }, 'Loading…'));
  let left = false;
  const timers = new Set();
  visit.onLeave(() => {
    left = true;
    for (const timer of timers) clearTimeout(timer);
  });

  /**
   * After a redelivery answered PENDING, reads the row again until it is no longer (the delivery job
   * sends it within seconds), while the page is open. The row is looked for in the unfiltered list
   * from the page's own start: it may have left the filter it was listed under.
   */
  const watchRedelivery = (row, from, polls = REDELIVERY_POLLS) => {
    if (left || polls === 0) return;
    const timer = setTimeout(async () => {
      timers.delete(timer);
      const found = await findDelivery(webhook.id, row.dataset.delivery, from).catch(() => null);
      if (left) return;
      if (found && found.status !== 'PENDING') row.replaceWith(deliveryRow(found, from));
      else {
        if (found) row.replaceWith((row = deliveryRow(found, from)));
        watchRedelivery(row, from, polls - 1);
      }
    }, REDELIVERY_POLL_MS);
    timers.add(timer);
  };

  const deliveryRow = (delivery, from) => {
    const resend =
      delivery.status === 'PENDING' ? null : h('button', { type: 'button', class: 'small', title: `Send ${delivery.id} again, with the same id` }, 'Redeliver');
    const row = h(
      'tr',
      { dataset: { delivery: delivery.id, status: delivery.status } },
      h('td', {}, h('code', {}, delivery.id)),
      h('td', {}, delivery.event),
      h(
        'td',
        { class: 'status-cell' },
        h('span', { class: `badge ${delivery.status === 'DELIVERED' ? 'ok' : delivery.status === 'FAILED' ? 'warn' : ''}` }, delivery.status),
      ),
      h('td', { class: 'num' }, fmtNumber(delivery.attempts)),
      h('td', { class: 'time' }, fmtTime(delivery.lastAttemptAt)),
      h('td', { class: 'time' }, fmtTime(delivery.nextAttemptAt)),
      h('td', { class: 'last-error' }, delivery.lastError ?? '—'),
      h('td', {}, resend),
    );
    resend?.addEventListener('click', async () => {
      resend.disabled = true;
      const answer = await attempt(() => gql(Q.redeliver, { delivery: delivery.id }), `Delivery ${delivery.id} sent again.`);
      if (!answer) {
        resend.disabled = false;
        return;
      }
      const updated = deliveryRow(answer.redeliverWebhook, from);
      row.replaceWith(updated);
      if (answer.redeliverWebhook.status === 'PENDING') watchRedelivery(updated, from);
    });
    return row;
  };

  const show = async (after = null, pageNumber = 1) => {
    const answer = await attempt(() => gql(Q.deliveries, { webhook: webhook.id, status: status.value || null, first: DELIVERIES_PAGE, after }));
    if (!answer || left) return;
    const { edges, pageInfo } = answer.webhookDeliveries;
    const next = h('button', { type: 'button', disabled: !pageInfo.hasNextPage }, 'Next page →');
    next.addEventListener('click', () => show(pageInfo.endCursor, pageNumber + 1));
    const first = h('button', { type: 'button', disabled: pageNumber === 1 }, '← First page');
    first.addEventListener('click', () => show());
    const filterName = FILTERS.find((filter) => filter.value === status.value).label;
    box.replaceChildren(
      table(
        ['Id (webhook-id)', 'Event', 'Status', '#Attempts', 'Last attempt (UTC)', 'Next attempt (UTC)', 'Last error', ''],
        edges.map((edge) => deliveryRow(edge.node, after)),
        { empty: status.value ? `No ${filterName} deliveries.` : 'No deliveries yet.', label: 'Deliveries' },
      ),
      h('div', { class: 'pager' }, first, h('span', { class: 'muted', dataset: { page: pageNumber } }, `page ${pageNumber}`), next),
    );
  };
  status.addEventListener('change', () => void show());
  const refresh = h('button', { type: 'button', class: 'small', id: 'refresh-deliveries' }, 'Refresh');
  refresh.addEventListener('click', () => void show());

  visit.show(
    crumbs(webhook.id),
    h('h1', {}, 'Webhook', h('span', { class: 'muted id' }, webhook.id)),
    card('Webhook', facts, h('div', { class: 'actions' }, remove)),
    card(
      'Deliveries',
      h(
        'div',
        { class: 'card-head' },
        h('form', { class: 'inline-form', id: 'delivery-filter' }, field('Status', status)),
        h(
          'div',
          { class: 'actions' },
          h('span', { class: 'muted small' }, 'Redeliver sends one again with the same webhook-id: receivers dedupe on it.'),
          refresh,
        ),
      ),
      box,
    ),
  );
  await show();
}

/** A delivery of the webhook, read again: looked for in its unfiltered list from `from` on (the page it was listed on), within REDELIVERY_SCAN rows. */
async function findDelivery(webhookId, deliveryId, from) {
  let after = from;
  for (let read = 0; read < REDELIVERY_SCAN; read += 50) {
    const { webhookDeliveries } = await gql(Q.deliveries, { webhook: webhookId, status: null, first: 50, after });
    const found = webhookDeliveries.edges.find((edge) => edge.node.id === deliveryId);
    if (found) return found.node;
    if (!webhookDeliveries.pageInfo.hasNextPage) return null;
    after = webhookDeliveries.pageInfo.endCursor;
  }
  return null;
}
