// Pull requests: GET /pr, newest scan first, filtered by repository and
// by whether they are blocked (the blocked ones by default), paged.

import {call} from '../api.js';
import {h, when, table, field, select, fieldError} from '../dom.js';
import {repoOf} from '../names.js';

export const name = 'prs';

const headings = {true: 'Blocked pull requests', false: 'Pull requests not blocked', any: 'Pull requests'};

// hashOf is the address of a listing: its filters, without the empty ones.
function hashOf(params) {
  const q = new URLSearchParams(Object.entries(params).filter(([, v]) => v));
  return '#/prs?' + q;
}

export async function render(view, ctx) {
  const q = ctx.query;
  const blocked = headings[q.get('blocked')] ? q.get('blocked') : 'true';
  const filter = {blocked, vc_id: q.get('vc_id') || '', repo_id: q.get('repo_id') || ''};
  const heading = headings[blocked];
  view.append(h('h1', {}, heading), filters(filter, ctx));
  const page = await call('GET', '/pr', {query: {
    blocked: blocked === 'any' ? '' : blocked, vc_id: filter.vc_id, repo_id: filter.repo_id, cursor: q.get('cursor'), limit: 25,
  }});
  const names = await Promise.all(page.items.map((p) => repoOf(p)));
  if (page.items.length === 0) {
    view.append(h('p', {class: 'empty'}, q.get('cursor') ? 'No more pull requests.' : 'No pull request matches these filters.'));
  } else {
    view.append(table(heading, ['Pull request', 'Title', 'Last scan', 'Secrets', 'Vulnerabilities'],
      page.items.map((p, i) => [
        h('a', {href: `#/pr/${p.id}`}, `${names[i].repo} #${p.pr_id}`),
        p.pr_name,
        when(p.last_scan),
        String(p.secret_count),
        String(p.vulnerability_count),
      ])));
  }
  view.append(h('nav', {class: 'pager', 'aria-label': 'Pages'},
    q.get('cursor') ? h('a', {href: hashOf(filter)}, 'First page') : null,
    page.next_cursor ? h('a', {href: hashOf({...filter, cursor: page.next_cursor}), rel: 'next'}, 'Next page') : null));
}

function filters(f, ctx) {
  const blocked = select('blocked', [['true', 'Blocked'], ['false', 'Not blocked'], ['any', 'Any']], f.blocked);
  const id = (name, value) => h('input', {id: name, name, inputmode: 'numeric', value, size: 10});
  const vc = id('vc_id', f.vc_id);
  const repo = id('repo_id', f.repo_id);
  const form = h('form', {class: 'filters', novalidate: true, 'aria-label': 'Filters'},
    field('Gate', blocked),
    field('Integration id', vc),
    field('Repository id', repo),
    h('div', {class: 'actions'}, h('button', {type: 'submit'}, 'Apply')));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    let first = null;
    for (const c of [vc, repo]) {
      const bad = c.value && !/^[1-9][0-9]{0,18}$/.test(c.value);
      fieldError(c, bad ? 'Enter a positive whole number.' : '');
      first = first || (bad ? c : null);
    }
    if (!first && Boolean(vc.value) !== Boolean(repo.value)) {
      first = vc.value ? repo : vc;
      fieldError(first, 'A repository is named by both ids: its integration and its own.');
    }
    if (first) {
      first.focus();
      return;
    }
    ctx.go(hashOf({blocked: blocked.value, vc_id: vc.value, repo_id: repo.value}));
  });
  return form;
}
