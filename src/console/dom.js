/* global document, setTimeout, clearTimeout */
/**
 * DOM helpers: elements built with DOM calls (textContent, never innerHTML), so names from players
 * are shown as text whatever they hold; formats; the flash message; confirmations; forms.
 */

export function h(tag, attrs = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on')) element.addEventListener(name.slice(2), value);
    else if (name === 'dataset') Object.assign(element.dataset, value);
    else element.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child instanceof globalThis.Node ? child : document.createTextNode(String(child)));
  }
  return element;
}

const numbers = new Intl.NumberFormat('en-US', { maximumFractionDigits: 3 });
export const fmtNumber = (value) => (value === null || value === undefined ? '—' : numbers.format(value));
/** Times are shown in UTC, as the API and the buckets count them; column headers say so. */
export const fmtTime = (iso) =>
  iso
    ? new Date(iso)
        .toISOString()
        .replace('T', ' ')
        .replace(/\.\d+Z$/, '')
    : '—';
export const playerName = (player) => player?.displayName ?? player?.id ?? '(erased)';
export const playerHref = (id) => `#/players/${encodeURIComponent(id)}`;

export function card(title, ...children) {
  return h('section', { class: 'card', 'aria-label': title }, h('h2', {}, title), ...children);
}

export function table(headers, rows, { empty = 'Nothing yet.', label } = {}) {
  if (rows.length === 0) return h('p', { class: 'empty' }, empty);
  return h(
    'table',
    { 'aria-label': label },
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        headers.map((header) => h('th', { class: header.startsWith('#') ? 'num' : undefined }, header.replace(/^#/, ''))),
      ),
    ),
    h('tbody', {}, rows),
  );
}

export function field(label, input, hint) {
  return h('label', { class: 'field' }, h('span', {}, label), input, hint ? h('small', { class: 'muted' }, hint) : null);
}

export function select(name, options, value) {
  return h(
    'select',
    { name },
    options.map((option) => h('option', { value: option.value ?? option, selected: (option.value ?? option) === value }, option.label ?? option)),
  );
}

/** One checkbox a board, each named `boards` (formValues gives the ticked ids): a webhook's boards, a key's. `empty` is said when there is no board. */
export function boardChecks(boards, className, legend, empty) {
  return h(
    'fieldset',
    { class: `periods ${className}` },
    h('legend', {}, legend),
    boards.length
      ? boards.map((board) => h('label', { class: 'check' }, h('input', { type: 'checkbox', name: 'boards', value: board.id }), board.id))
      : h('span', { class: 'muted small' }, empty),
  );
}

/** A message on the page: success in green, failures in red. */
export function flash(message, kind = 'ok') {
  const box = document.getElementById('flash');
  box.textContent = message;
  box.dataset.kind = kind;
  box.hidden = false;
  flash.shownAt = Date.now();
  clearTimeout(flash.timer);
  flash.timer = setTimeout(() => (box.hidden = true), kind === 'error' ? 12_000 : 5_000);
}

/** A failure as the console says it: the API's extensions.code (when it gave one), then its message. */
export const failureText = (error) => (error.code ? `${error.code}: ${error.message}` : error.message);

/** Runs an action from a button or a form, showing its failure rather than throwing it away. */
export async function attempt(work, success) {
  try {
    const answer = await work();
    if (success) flash(typeof success === 'function' ? success(answer) : success);
    return answer;
  } catch (error) {
    flash(failureText(error), 'error');
    return undefined;
  }
}

/**
 * The confirmation dialog. With `typed`, the user must type that text (a player id, a board id) to
 * confirm. With `reason`, they must give a reason (its hint the placeholder), and the answer is that
 * reason, trimmed, rather than true. Answers false when cancelled.
 */
export function confirmAction({ title, text, confirm = 'Confirm', typed = null, reason = null }) {
  const dialog = document.getElementById('confirm');
  const input = document.getElementById('confirm-type');
  const label = document.getElementById('confirm-type-label');
  const why = document.getElementById('confirm-reason');
  const whyLabel = document.getElementById('confirm-reason-label');
  const ok = document.getElementById('confirm-ok');
  document.getElementById('confirm-title').textContent = title;
  document.getElementById('confirm-text').textContent = text;
  ok.textContent = confirm;
  input.value = '';
  input.hidden = label.hidden = typed === null;
  label.textContent = typed === null ? '' : `Type ${typed} to confirm`;
  why.value = '';
  why.hidden = whyLabel.hidden = reason === null;
  why.placeholder = reason ?? '';
  // The service refuses a blank reason; the button waits for one, as it waits for the typed id.
  const ready = () => (typed === null || input.value === typed) && (reason === null || why.value.trim() !== '');
  ok.disabled = !ready();
  input.oninput = why.oninput = () => (ok.disabled = !ready());
  return new Promise((resolve) => {
    const done = (answer) => {
      dialog.close();
      resolve(answer);
    };
    document.getElementById('confirm-form').onsubmit = (event) => {
      event.preventDefault();
      if (ready()) done(reason === null ? true : why.value.trim());
    };
    document.getElementById('confirm-cancel').onclick = () => done(false);
    dialog.oncancel = () => resolve(false);
    dialog.showModal();
    (typed !== null ? input : reason !== null ? why : ok).focus();
  });
}

/**
 * A secret shown this once (an API key, a webhook's signing secret): what it is in `said`, the
 * value in a box of id `id` with a Copy button, and "I have saved it" calling `dismissed`.
 */
export function shownOnce({ said, value, id, dismissed }) {
  const copy = h('button', { type: 'button', class: 'small' }, 'Copy');
  copy.addEventListener('click', () =>
    globalThis.navigator.clipboard?.writeText(value).then(
      () => (copy.textContent = 'Copied'),
      () => (copy.textContent = 'Select and copy it'),
    ),
  );
  const dismiss = h('button', { type: 'button', class: 'small' }, 'I have saved it');
  dismiss.addEventListener('click', dismissed);
  return h(
    'div',
    { class: 'once', role: 'status' },
    h('p', {}, said),
    h('code', { class: 'secret', id }, value),
    h('div', { class: 'actions' }, copy, dismiss),
  );
}

/** Values of a form's named controls; checkboxes of one name are collected into a list. */
export function formValues(form) {
  const values = {};
  for (const control of form.elements) {
    if (!control.name) continue;
    if (control.type === 'checkbox') (values[control.name] ??= []).push(...(control.checked ? [control.value] : []));
    else values[control.name] = control.value.trim();
  }
  return values;
}

/** `datetime-local` values are the browser's local time; the API takes UTC instants. */
export const instant = (local) => (local ? new Date(local).toISOString() : null);

/** "eu, us" as ['eu', 'us']. */
export const commaList = (text) =>
  text
    ? text
        .split(',')
        .map((item) => item.trim())
        .filter(Boolean)
    : [];
