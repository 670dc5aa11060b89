// A branch: its newest analysis of each (scan type, category), which the
// pull requests on it are compared with (GET /branches/{branch_id}), and
// each analysis's findings.

import {call, find} from '../api.js';
import {h, when, table, plural, missing} from '../dom.js';
import {FINDING_HEADERS, findingRow, scanOf} from './pr.js';
import {repoOf} from '../names.js';

export const name = 'branch';

export async function render(view, ctx) {
  const id = ctx.params[0];
  const b = await find(`/branches/${id}`);
  if (!b) {
    missing(view, 'branch', id, '#/', 'Show the blocked pull requests.');
    return;
  }
  // Each analysis's findings are asked for at once; the repository's and
  // integration's names come from its first analysis, which carries them
  // (kept for the session; a branch without one is not asked about).
  const pages = b.categories.map((c) => call('GET', `/pr/scan/${c.scan_id}/findings`, {query: {limit: 100}}));
  pages.forEach((p) => p.catch(() => {})); // a failure shows when its page is awaited, below
  const names = b.categories.length ? await repoOf(b, () => call('GET', `/pr/scan/${b.categories[0].scan_id}`)) :
    {repo: `repository ${b.repo_id}`, vc: `integration ${b.vc_id}`};
  const secrets = b.categories.reduce((n, c) => n + c.secret_count, 0);
  const vulns = b.categories.reduce((n, c) => n + c.vulnerability_count, 0);
  view.append(
    h('h1', {}, `${names.repo} · ${b.name}`),
    h('p', {class: 'lead'}, 'A branch: its newest analysis of each scanner (scan type and category), recorded by CI jobs on pushes to it. ',
      'The pull requests whose base it is are compared with these: a finding they have that is here is not new.'),
    h('dl', {class: 'facts'},
      h('dt', {}, 'Repository'), h('dd', {}, `${names.repo} (id ${b.repo_id})`),
      h('dt', {}, 'Integration'), h('dd', {}, `${names.vc} (id ${b.vc_id})`),
      h('dt', {}, 'Last analysis'), h('dd', {}, when(b.last_scan)),
      h('dt', {}, 'Unsuppressed'), h('dd', {}, `${plural(secrets, 'secret')}, ${plural(vulns, 'vulnerability', 'vulnerabilities')}`),
      h('dt', {}, 'Other branches'), h('dd', {}, h('a', {href: `#/branches?vc_id=${b.vc_id}&repo_id=${b.repo_id}`}, 'Branches of this repository'))));
  const section = h('section', {'aria-labelledby': 'analyses-heading'}, h('h2', {id: 'analyses-heading'}, 'Newest analyses'));
  view.append(section);
  if (!b.categories.length) {
    section.append(h('p', {class: 'empty'}, 'No analysis.'));
    return;
  }
  section.append(table('Newest analysis of each type and category', ['Type', 'Category', 'Scan', 'Commit', 'Secrets', 'Vulnerabilities', 'Recorded'],
    b.categories.map((c) => [c.scan_type, h('span', {class: 'mono'}, c.category), `#${c.scan_id}`,
      c.commit_sha ? h('span', {class: 'mono'}, c.commit_sha.slice(0, 12)) : '—',
      String(c.secret_count), String(c.vulnerability_count), when(c.created_at)])));
  // Each analysis's findings in the order of the table, as they arrive.
  await Promise.all(b.categories.map(async (c, i) => {
    const s = scanOf(c, b);
    const title = `Findings of scan #${s.id} (${c.scan_type}, ${c.category})`;
    const body = h('div', {class: 'findings'});
    section.append(h('h3', {}, title), body);
    const page = await pages[i];
    if (!page.items.length) {
      body.append(h('p', {class: 'empty'}, 'This analysis recorded no finding.'));
      return;
    }
    const t = table(title, FINDING_HEADERS, page.items.map((f) => findingRow(f, s, names, ctx)));
    t.caption.className = 'vh'; // the heading above says it
    body.append(t);
    if (page.next_cursor) body.append(h('p', {class: 'hint'}, `The first ${page.items.length} are shown.`));
  }));
}
