// Allowlists: GET /whitelist, newest first, filtered by type, name and
// whether active, paged.

import {call} from '../api.js';
import {h, when, table, field, select} from '../dom.js';
import {reasonLabel, scopeText, stateText} from '../rules.js';

export const name = 'allowlists';

function hashOf(params) {
  return '#/whitelist?' + new URLSearchParams(Object.entries(params).filter(([, v]) => v));
}

export async function render(view, ctx) {
  const q = ctx.query;
  const f = {type: q.get('type') || '', name: q.get('name') || '', active: q.get('active') || ''};
  const type = select('type', [['', 'Any'], ['SECRET', 'Secret'], ['VULNERABILITY', 'Vulnerability']], f.type);
  const nameIn = h('input', {id: 'name', name: 'name', value: f.name, spellcheck: 'false'});
  const active = select('active', [['', 'Any'], ['true', 'Active'], ['false', 'Inactive']], f.active);
  const form = h('form', {class: 'filters', 'aria-label': 'Filters', novalidate: true},
    field('Type', type), field('Name', nameIn), field('State', active),
    h('div', {class: 'actions'}, h('button', {type: 'submit'}, 'Apply')));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    ctx.go(hashOf({type: type.value, name: nameIn.value, active: active.value}));
  });
  view.append(h('h1', {}, 'Allowlists'), form);
  const page = await call('GET', '/whitelist', {query: {...f, cursor: q.get('cursor'), limit: 25}});
  if (!page.items.length) {
    view.append(h('p', {class: 'empty'}, 'No allowlist matches these filters.'));
  } else {
    view.append(table('Allowlists, newest first', ['Allowlist', 'Type', 'Name', 'Scope', 'Reason', 'Expires', 'State'],
      page.items.map((a) => [
        h('a', {href: `#/whitelist/${a.id}`}, `#${a.id}`),
        a.type,
        h('span', {class: 'mono wrap'}, a.name),
        scopeText(a),
        reasonLabel(a.reason),
        a.expires_at ? when(a.expires_at) : 'Never',
        stateText(a),
      ])));
  }
  view.append(h('nav', {class: 'pager', 'aria-label': 'Pages'},
    q.get('cursor') ? h('a', {href: hashOf(f)}, 'First page') : null,
    page.next_cursor ? h('a', {href: hashOf({...f, cursor: page.next_cursor}), rel: 'next'}, 'Next page') : null));
}
