// A repository's branches (GET /branches?vc_id=&repo_id=), by name, each
// with its newest analyses: the baselines of the pull requests on them.

import {call} from '../api.js';
import {h, when, table, plural} from '../dom.js';

export const name = 'branches';

export async function render(view, ctx) {
  const vc = ctx.query.get('vc_id') || '';
  const repo = ctx.query.get('repo_id') || '';
  if (!/^[1-9][0-9]{0,18}$/.test(vc) || !/^[1-9][0-9]{0,18}$/.test(repo)) {
    view.append(h('h1', {}, 'Branches'),
      h('p', {}, 'A repository\'s branches are reached from one of its pull requests. ', h('a', {href: '#/'}, 'Show the blocked pull requests.')));
    return;
  }
  const page = await call('GET', '/branches', {query: {vc_id: vc, repo_id: repo, cursor: ctx.query.get('cursor'), limit: 50}});
  view.append(h('h1', {}, `Branches of repository ${repo}`),
    h('p', {class: 'lead'}, `Of integration ${vc}: the branches CI jobs recorded analyses of, on pushes to them.`));
  if (!page.items.length) {
    view.append(h('p', {class: 'empty'}, 'No branch analysis yet. A CI job that runs scangate upload on pushes to the default branch records one.'));
    return;
  }
  view.append(table('Branches', ['Branch', 'Last analysis', 'Analyses', 'Secrets', 'Vulnerabilities'],
    page.items.map((b) => [
      h('a', {href: `#/branches/${b.branch_id}`}, b.name),
      when(b.last_scan),
      plural(b.categories.length, 'category', 'categories'),
      String(b.categories.reduce((n, c) => n + c.secret_count, 0)),
      String(b.categories.reduce((n, c) => n + c.vulnerability_count, 0)),
    ])));
  if (page.next_cursor) {
    const q = new URLSearchParams({vc_id: vc, repo_id: repo, cursor: page.next_cursor});
    view.append(h('nav', {class: 'pager', 'aria-label': 'Pages'}, h('a', {href: `#/branches?${q}`, rel: 'next'}, 'Next page')));
  }
}
