// Building the page: every text from the API goes in as a text node
// (never as HTML), every attribute through setAttribute.

import {session} from './api.js';

// h builds an element: h('a', {href: '#/pr/1'}, 'text', child, [more]).
// Attributes named on* take a listener (onclick: fn); null and false
// attributes and children are skipped.
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') {
      el.addEventListener(name.slice(2), value);
    } else {
      el.setAttribute(name, value === true ? '' : String(value));
    }
  }
  append(el, children);
  return el;
}

// append adds children: nodes as they are, anything else as text.
export function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

// when is a <time> of an RFC 3339 instant, shown in UTC to the minute.
export function when(iso) {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return String(iso);
  const text = d.toISOString().slice(0, 16).replace('T', ' ') + ' UTC';
  return h('time', {datetime: iso}, text);
}

// table is a table with a caption, a header row and rows of cells.
export function table(caption, headers, rows) {
  return h('table', {},
    h('caption', {}, caption),
    h('thead', {}, h('tr', {}, headers.map((x) => h('th', {scope: 'col'}, x)))),
    h('tbody', {}, rows.map((cells) => h('tr', {}, cells.map((c) => h('td', {}, c))))));
}

// plural: plural(1, 'finding') is "1 finding", plural(2, 'finding') "2
// findings"; words whose plural is not an s say it.
export function plural(n, word, words = word + 's') {
  return `${n} ${n === 1 ? word : words}`;
}

// alert is an error message that assistive technology announces.
export function alert(message) {
  return h('div', {class: 'notice error', role: 'alert'}, message);
}

// status is a message of success that assistive technology announces.
export function status(message) {
  return h('div', {class: 'notice ok', role: 'status'}, message);
}

// field is a labelled form control with an optional hint and a place for
// its error; the control gets an id from name.
export function field(label, control, hint) {
  const id = control.id;
  const hintEl = hint ? h('p', {class: 'hint', id: id + '-hint'}, hint) : null;
  const err = h('p', {class: 'field-error', id: id + '-error', hidden: true});
  control.setAttribute('aria-describedby', [hintEl && hintEl.id, err.id].filter(Boolean).join(' '));
  return h('div', {class: 'field'}, h('label', {for: id}, label), control, hintEl, err);
}

// fieldError shows (or with an empty message clears) a control's error.
export function fieldError(control, message) {
  const err = document.getElementById(control.id + '-error');
  if (message) control.setAttribute('aria-invalid', 'true');
  else control.removeAttribute('aria-invalid');
  if (err) {
    err.textContent = message || '';
    err.hidden = !message;
  }
}

// select is a <select> of [value, label] options, value selected.
export function select(id, options, value) {
  return h('select', {id, name: id}, options.map(([v, label]) =>
    h('option', {value: v, selected: String(v) === String(value ?? '')}, label)));
}

// safeURL is url when it is http or https (a link from the API never
// runs script), else null.
export function safeURL(url) {
  try {
    const u = new URL(url);
    return u.protocol === 'https:' || u.protocol === 'http:' ? u.href : null;
  } catch {
    return null;
  }
}

// localInput is an instant as a datetime-local input's value (local time).
export function localInput(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  const pad = (n) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

// fromLocalInput is a datetime-local input's value as an RFC 3339 instant.
export function fromLocalInput(value) {
  if (!value) return null;
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? null : d.toISOString();
}

// missing is the page of a resource that does not exist: what it is (a
// noun), its id, and where to go instead.
export function missing(view, what, id, href, back) {
  view.append(h('h1', {}, `${what[0].toUpperCase()}${what.slice(1)} not found`),
    h('p', {}, `There is no ${what} ${id}. `, h('a', {href}, back)));
}

// reveal shows, in container, a secret the API shows only this once: the
// message (which says to copy it now), then a read-only field holding it,
// focused and selected, and a Copy button. The secret is kept nowhere
// else: leaving the page drops it with the page.
export function reveal(container, id, label, value, message) {
  const out = h('input', {id, readonly: true, value, spellcheck: 'false', autocomplete: 'off', class: 'mono'});
  const copy = h('button', {type: 'button', class: 'secondary', onclick: async () => {
    await navigator.clipboard.writeText(out.value);
    copy.textContent = 'Copied';
  }}, 'Copy', h('span', {class: 'vh'}, ` ${label.toLowerCase()}`));
  container.replaceChildren(status(message), h('div', {class: 'secret'}, field(label, out), copy));
  out.focus();
  out.select();
}

// userText names a user by id, saying when it is the one signed in.
export function userText(id) {
  if (id === null || id === undefined) return 'an unknown user';
  return id === session.user()?.id ? `user ${id} (you)` : `user ${id}`;
}

// adminOnly shows, for a caller the API refused (403), that the page is
// for admins (what: what they may do there); any other error is thrown.
export function adminOnly(view, err, what) {
  if (err && err.status === 403) {
    view.append(alert(`Only admins can ${what}.`));
    return;
  }
  throw err;
}

// idSection is a section whose form goes to the page of an id (the API
// lists no repositories or integrations, so they are reached by id):
// id names the control, to(value) is the page's address.
export function idSection(ctx, {id, heading, label, hint, button, to}) {
  const input = h('input', {id, inputmode: 'numeric', size: 12, autocomplete: 'off'});
  const form = h('form', {class: 'filters', novalidate: true, 'aria-labelledby': `${id}-heading`},
    field(label, input, hint),
    h('div', {class: 'actions'}, h('button', {type: 'submit'}, button)));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    if (!/^[1-9][0-9]{0,18}$/.test(input.value)) {
      fieldError(input, 'Enter a positive whole number.');
      input.focus();
      return;
    }
    ctx.go(to(input.value));
  });
  return h('section', {'aria-labelledby': `${id}-heading`}, h('h2', {id: `${id}-heading`}, heading), form);
}

// confirmDelete is a section whose button asks first, then deletes by
// remove() (whose error is shown in the section) or keeps the thing.
export function confirmDelete({heading, hint, question, detail, button, remove}) {
  const errors = h('div', {'aria-live': 'assertive'});
  const confirm = h('div', {class: 'confirm', hidden: true, role: 'group', 'aria-labelledby': 'confirm-text'},
    h('p', {id: 'confirm-text', tabindex: '-1'}, h('strong', {}, question), detail),
    h('div', {class: 'actions'},
      h('button', {type: 'button', class: 'danger', onclick: async () => {
        try {
          await remove();
        } catch (err) {
          errors.replaceChildren(alert(err.message));
        }
      }}, button),
      h('button', {type: 'button', class: 'secondary', onclick: () => {
        confirm.hidden = true;
        ask.hidden = false;
        ask.focus();
      }}, 'Keep it')));
  const ask = h('button', {type: 'button', class: 'danger', onclick: () => {
    ask.hidden = true;
    confirm.hidden = false;
    document.getElementById('confirm-text').focus();
  }}, 'Delete…');
  return h('section', {class: 'lifecycle', 'aria-labelledby': 'delete-heading'},
    h('h2', {id: 'delete-heading'}, heading), h('p', {}, hint), errors, ask, confirm);
}
