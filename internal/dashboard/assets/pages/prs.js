// Pull requests: GET /pr, newest scan first, filtered by repository (by
// its name, as a person knows it: GET /pr?repo_name=; an address with
// vc_id and repo_id still names one by its ids) and by whether they are
// blocked (the blocked ones by default), paged.

import {call} from '../api.js';
import {h, when, table, field, select, fieldError} from '../dom.js';
import {repoOf, knownRepos} from '../names.js';

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
  const filter = {blocked, repo: (q.get('repo') || '').trim(), vc_id: q.get('vc_id') || '', repo_id: q.get('repo_id') || ''};
  const heading = headings[blocked] + (filter.repo ? ` of ${filter.repo}` : '');
  const form = filters(filter, ctx);
  view.append(h('h1', {}, heading), form);
  const page = await call('GET', '/pr', {query: {
    blocked: blocked === 'any' ? '' : blocked, repo_name: filter.repo, vc_id: filter.vc_id, repo_id: filter.repo_id, cursor: q.get('cursor'), limit: 25,
  }});
  const names = await Promise.all(page.items.map((p) => repoOf(p)));
  // The names to pick from: every repository seen so far.
  form.querySelector('datalist').replaceChildren(...knownRepos().map((n) => h('option', {value: n})));
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
  const repo = h('input', {id: 'repo', name: 'repo', value: f.repo, size: 30, list: 'repo-names', autocomplete: 'off', spellcheck: 'false'});
  const form = h('form', {class: 'filters', novalidate: true, 'aria-label': 'Filters'},
    field('Gate', blocked),
    field('Repository', repo, 'Its full name, as acme/payments (any case); empty for every repository.'),
    h('datalist', {id: 'repo-names'}),
    h('div', {class: 'actions'}, h('button', {type: 'submit'}, 'Apply')));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const name = repo.value.trim();
    if ([...name].length > 256 || /[\u0000-\u001f\u007f-\u009f]/.test(name)) {
      fieldError(repo, 'Enter a repository name of at most 256 characters, without control characters.');
      repo.focus();
      return;
    }
    fieldError(repo, '');
    // A name replaces the ids an older address named the repository by.
    ctx.go(hashOf({blocked: blocked.value, repo: name}));
  });
  return form;
}
