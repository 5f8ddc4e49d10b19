/* global document */
/** Operations: store health, rebuilding a bucket, API keys. */
import { gql } from './session.js';
import { Q } from './documents.js';
import { attempt, boardChecks, card, confirmAction, field, fmtNumber, fmtTime, formValues, h, select, shownOnce, table } from './dom.js';
import { route } from './router.js';
import { PERIODS, runRebuild } from './boards.js';

function probeCell(name, probe) {
  return h(
    'div',
    { class: 'probe', dataset: { store: name, up: probe.up } },
    h('span', { class: `dot ${probe.up ? 'up' : 'down'}` }),
    h('strong', {}, name),
    h('span', {}, probe.up ? `up · ${probe.latencyMs.toFixed(1)} ms` : `down: ${probe.error}`),
  );
}

export async function refreshHealthPill() {
  const pill = document.getElementById('health-pill');
  const answer = await gql(Q.health).catch(() => null);
  const health = answer?.storeHealth;
  const good = health && health.postgres.up && health.redis.up && health.index === 'READY';
  pill.dataset.state = !health ? 'unknown' : good ? 'ok' : 'bad';
  pill.textContent = !health ? 'stores ?' : good ? 'stores ok' : 'stores degraded';
  return health;
}

export async function operationsView(visit) {
  const health = await refreshHealthPill();
  const healthCard = card(
    'Store health',
    health
      ? h(
          'div',
          { class: 'probes' },
          probeCell('PostgreSQL', health.postgres),
          probeCell('Redis', health.redis),
          h(
            'div',
            { class: 'probe', dataset: { store: 'index' } },
            h('span', { class: `dot ${health.index === 'READY' ? 'up' : 'down'}` }),
            h('strong', {}, 'Index'),
            h('span', {}, health.index.toLowerCase()),
          ),
          h(
            'div',
            { class: 'probe', dataset: { store: 'backlog' } },
            h('span', { class: `dot ${health.indexBacklog === 0 ? 'up' : 'down'}` }),
            h('strong', {}, 'Index backlog'),
            h('span', {}, health.indexBacklog === null ? 'unknown' : `${fmtNumber(health.indexBacklog)} waiting`),
          ),
        )
      : h('p', { class: 'error' }, 'Store health could not be read.'),
    h('button', { type: 'button', onclick: () => route() }, 'Refresh'),
  );

  const { keys, boards } = await Promise.all([gql(Q.keys), gql(Q.boards)]).then(([k, b]) => ({ keys: k.apiKeys, boards: b.boards }));
  const shownOnceBox = h('div', { id: 'new-key' });
  const keyForm = h(
    'form',
    { class: 'inline-form', id: 'create-key', autocomplete: 'off' },
    field('Name', h('input', { name: 'name', required: true, placeholder: 'EU game servers' })),
    field(
      'Role',
      select(
        'role',
        [
          { value: 'SERVER', label: 'server (game servers)' },
          { value: 'ADMIN', label: 'admin (operators)' },
        ],
        'SERVER',
      ),
    ),
    // Issue 59: a game-server key may be kept to some boards (its results and joins); an admin key is refused boards.
    boardChecks(boards, 'key-boards', 'Boards a server key may write to (none ticked: every board)', 'No boards yet.'),
    h('button', { type: 'submit', class: 'primary' }, 'Create key'),
  );
  keyForm.addEventListener('submit', async (event) => {
    event.preventDefault();
    const v = formValues(keyForm);
    const answer = await attempt(() => gql(Q.createKey, { name: v.name, role: v.role, boards: v.boards ?? [] }));
    if (!answer) return;
    const { key, apiKey } = answer.createApiKey;
    keyForm.reset();
    await renderKeys();
    shownOnceBox.replaceChildren(
      shownOnce({
        said: [
          h('strong', {}, `Key ${apiKey.id} (${apiKey.role.toLowerCase()}, “${apiKey.name}”)`),
          ' — shown this once; only its digest is stored, so it cannot be read again.',
        ],
        value: key,
        id: 'new-key-value',
        dismissed: () => shownOnceBox.replaceChildren(),
      }),
    );
  });
  const keysBox = h('div', { id: 'keys' });
  const renderKeys = async (list) => {
    const all = list ?? (await gql(Q.keys)).apiKeys;
    keysBox.replaceChildren(
      table(
        ['Id', 'Name', 'Role', 'Boards', 'Created (UTC)', 'State', ''],
        all.map((stored) => {
          const revoke = stored.revokedAt ? null : h('button', { type: 'button', class: 'small danger' }, 'Revoke');
          revoke?.addEventListener('click', async () => {
            const sure = await confirmAction({
              title: `Revoke “${stored.name}”?`,
              text: `Key ${stored.id} (${stored.role.toLowerCase()}) is refused by every process from now on.`,
              confirm: 'Revoke key',
            });
            if (sure && (await attempt(() => gql(Q.revokeKey, { key: stored.id }), `Key ${stored.id} revoked.`))) await renderKeys();
          });
          return h(
            'tr',
            { dataset: { key: stored.id } },
            h('td', {}, h('code', {}, stored.id)),
            h('td', {}, stored.name),
            h('td', {}, stored.role.toLowerCase()),
            h('td', { class: 'boards' }, stored.boards.length ? stored.boards.join(', ') : h('span', { class: 'muted' }, 'every board')),
            h('td', { class: 'time' }, fmtTime(stored.createdAt)),
            h(
              'td',
              {},
              stored.revokedAt ? h('span', { class: 'badge muted' }, `revoked ${fmtTime(stored.revokedAt)}`) : h('span', { class: 'badge ok' }, 'live'),
            ),
            h('td', {}, revoke),
          );
        }),
        { empty: 'No keys made yet (the environment’s ADMIN_API_KEY and SERVER_API_KEYS are not listed).', label: 'API keys' },
      ),
    );
  };
  await renderKeys(keys);

  const boardSelect = select(
    'board',
    boards.map((board) => board.id),
    boards[0]?.id,
  );
  const periodSelect = select('period', PERIODS, 'ALL_TIME');
  const regionInput = h('input', { name: 'region', placeholder: 'global', size: 8 });
  const bucketInput = h('input', { name: 'bucket', placeholder: 'current', size: 12 });
  const slot = h('span', { class: 'progress-slot', id: 'rebuild-progress' });
  const rebuildButton = h('button', { type: 'submit', class: 'primary' }, 'Rebuild');
  const rebuildForm = h(
    'form',
    { class: 'inline-form', id: 'rebuild-form' },
    field('Board', boardSelect),
    field('Period', periodSelect),
    field('Bucket', bucketInput),
    field('Region', regionInput),
    rebuildButton,
    slot,
  );
  rebuildForm.addEventListener('submit', (event) => {
    event.preventDefault();
    void runRebuild(
      visit,
      { board: boardSelect.value, period: periodSelect.value, bucket: bucketInput.value.trim() || null, region: regionInput.value.trim() || null },
      slot,
      rebuildButton,
    );
  });

  visit.show(
    h('h1', {}, 'Operations'),
    healthCard,
    card(
      'Rebuild a bucket',
      h(
        'p',
        { class: 'muted small' },
        'Reads the bucket’s board scores from PostgreSQL into a new sorted set and swaps it in at once; readers see the old one until then. Each board’s page lists its buckets with their drift.',
      ),
      boards.length ? rebuildForm : h('p', { class: 'empty' }, 'No boards yet.'),
    ),
    card('API keys', keyForm, shownOnceBox, keysBox),
  );
}
