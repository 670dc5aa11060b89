// A pull request: its gate (with reasons per category, what each was
// compared with on its base branch, and the policy it was judged by), its
// findings grouped by what the pull request changes (new in it, already
// on its base branch, fixed by it), its scans, and each scan's findings,
// filtered by severity, from which a finding can be allowlisted.

import {call, find, session} from '../api.js';
import {h, when, table, plural, safeURL, missing, field, select} from '../dom.js';
import {loadGate, reasonText, policyFacts, SEVERITIES, atLeast} from '../gate.js';
import {repoOf, learn} from '../names.js';
import {allowThis} from './allowthis.js';
import {dismiss} from './dismiss.js';

export const name = 'pr';

export async function render(view, ctx) {
  const id = ctx.params[0];
  const pr = await find(`/pr/${id}`);
  if (!pr) {
    missing(view, 'pull request', id, '#/', 'Show the blocked pull requests.');
    return;
  }
  const [names, gate, scans, base] = await Promise.all([
    repoOf(pr), loadGate(pr.id), call('GET', `/pr/${pr.id}/scans`, {query: {limit: 20, cursor: ctx.query.get('scans')}}),
    baseBranch(pr),
  ]);
  scans.items.forEach(learn);
  const link = safeURL(pr.pr_link);
  view.append(
    h('h1', {}, `${names.repo} #${pr.pr_id}`),
    h('p', {class: 'lead'}, pr.pr_name, link ? ' · ' : null, link ? h('a', {href: link, rel: 'noopener noreferrer', target: '_blank'}, 'Open the pull request', h('span', {class: 'vh'}, ' (in a new tab)')) : null),
    h('dl', {class: 'facts'},
      h('dt', {}, 'Repository'), h('dd', {}, `${names.repo} (id ${pr.repo_id})`),
      h('dt', {}, 'Integration'), h('dd', {}, `${names.vc} (id ${pr.vc_id})`),
      h('dt', {}, 'Base branch'), h('dd', {}, pr.base_ref
        ? [base ? h('a', {href: `#/branches/${base.branch_id}`}, pr.base_ref) : h('span', {class: 'mono'}, pr.base_ref),
          pr.base_sha ? [' at ', h('span', {class: 'mono'}, pr.base_sha.slice(0, 12))] : null, base ? null : ' (no analysis of it yet)']
        : 'None named by its scans', ' · ', h('a', {href: `#/branches?vc_id=${pr.vc_id}&repo_id=${pr.repo_id}`}, 'Branches of this repository')),
      h('dt', {}, 'First scan'), h('dd', {}, when(pr.created_at)),
      h('dt', {}, 'Last scan'), h('dd', {}, when(pr.last_scan)),
      h('dt', {}, 'Unsuppressed'), h('dd', {}, `${plural(pr.secret_count, 'secret')}, ${plural(pr.vulnerability_count, 'vulnerability', 'vulnerabilities')}`)),
    gateSection(gate, pr));
  const newest = new Set(gate.categories.map((c) => c.scan_id));
  const severity = SEVERITIES.includes(ctx.query.get('severity')) ? ctx.query.get('severity') : '';
  view.append(severityFilter(pr, severity, ctx));
  const grouped = changes(gate, pr, severity, names, ctx);
  view.append(grouped.el);
  const section = h('section', {'aria-labelledby': 'scans-heading'}, h('h2', {id: 'scans-heading'}, 'Scans and findings'));
  view.append(section);
  await grouped.loaded;
  if (!scans.items.length) {
    section.append(h('p', {class: 'empty'}, 'No scan.'));
    return;
  }
  const loads = scans.items.map((s) => {
    const d = scanDetails(s, newest.has(s.id), severity, names, ctx);
    section.append(d.el);
    return d.loaded;
  });
  const q = (cursor) => prHash(pr, {severity, scans: cursor});
  section.append(h('nav', {class: 'pager', 'aria-label': 'Pages of scans'},
    ctx.query.get('scans') ? h('a', {href: q(null)}, 'Newest scans') : null,
    scans.next_cursor ? h('a', {href: q(scans.next_cursor), rel: 'next'}, 'Older scans') : null));
  await Promise.all(loads);
}

// baseBranch is the branch record of a PR's base (GET /branches by name),
// or null when the PR names none or its base has no analysis.
async function baseBranch(pr) {
  if (!pr.base_ref) return null;
  const page = await call('GET', '/branches', {query: {vc_id: pr.vc_id, repo_id: pr.repo_id, name: pr.base_ref}});
  return page.items[0] || null;
}

// baseName is how the PR's base branch is named in headings.
function baseName(gate) {
  return gate.base_ref || 'the base branch';
}

// baselineText says which analysis of the base branch a category was
// compared with: the one of the PR's base commit (exact) or the branch's
// newest, or none.
function baselineText(c, gate) {
  const b = c.baseline;
  if (!b) return 'None yet: every finding is new';
  const at = b.commit_sha ? ` at ${b.commit_sha.slice(0, 12)}` : '';
  return `Scan #${b.scan_id}${at} (${b.match === 'exact' ? 'the base commit' : `${baseName(gate)}'s newest`})`;
}

// changes groups the findings of the PR's newest scans by what the PR
// changes: new in it, already on its base branch, fixed by it (the
// baseline's findings it no longer has), each with its count from the
// gate; without a base branch it says that every finding is new.
function changes(gate, pr, severity, names, ctx) {
  const sum = (k) => gate.categories.reduce((n, c) => n + c[k], 0);
  const el = h('section', {class: 'changes', 'aria-labelledby': 'changes-heading'},
    h('h2', {id: 'changes-heading'}, 'What this pull request changes'));
  if (!gate.base_ref) {
    el.append(h('p', {class: 'empty'}, 'Its scans name no base branch, so every finding counts as new. ',
      'A CI job that runs scangate upload on pull requests sends it.'));
    return {el, loaded: Promise.resolve()};
  }
  const groups = [
    ['new', 'New in this PR', sum('new_count')],
    ['unchanged', `Already on ${gate.base_ref}`, sum('unchanged_count')],
    ['absent', 'Fixed by this PR', sum('absent_count')],
  ];
  const loads = groups.map(([state, title, count]) => {
    const id = `group-${state}`;
    const body = h('div', {class: 'group', id});
    el.append(h('h3', {id: `${id}-heading`}, title, ' ', h('span', {class: `count count-${state}`}, String(count))), body);
    if (!count) {
      body.append(h('p', {class: 'empty'}, 'None.'));
      return Promise.resolve();
    }
    return group(state, title, gate, pr, severity, names, ctx, body).catch((err) => {
      body.append(h('p', {role: 'alert', class: 'notice error'}, err.message));
    });
  });
  return {el, loaded: Promise.all(loads)};
}

// group lists the first findings of one state: new and unchanged ones of
// each newest scan (GET /pr/scan/{id}/findings?baseline_state=), the fixed
// ones of the PR (GET /pr/{id}/absent).
async function group(state, title, gate, pr, severity, names, ctx, body) {
  const limit = 100;
  let rows = [];
  let more = false;
  if (state === 'absent') {
    const page = await call('GET', `/pr/${pr.id}/absent`, {query: {limit}});
    for (const f of page.items) {
      if (severity && SEVERITIES.indexOf(f.severity) > SEVERITIES.indexOf(severity)) continue;
      rows.push([pairCell(f), ...findingRow(f, scanOf(f, pr), names, ctx)]);
    }
    more = Boolean(page.next_cursor);
  } else {
    const pages = await Promise.all(gate.categories.filter((c) => c[`${state}_count`] > 0).map((c) =>
      call('GET', `/pr/scan/${c.scan_id}/findings`, {query: {baseline_state: state, severity, limit}}).then((page) => ({c, page}))));
    for (const {c, page} of pages) {
      const s = scanOf(c, pr);
      rows = rows.concat(page.items.map((f) => [pairCell(c), ...findingRow(f, s, names, ctx)]));
      more = more || Boolean(page.next_cursor);
    }
  }
  if (!rows.length) {
    // The fixed ones are filtered here, over their first page only.
    const unchecked = state === 'absent' && severity && more;
    body.append(h('p', {class: 'empty'}, unchecked ? `None of ${atLeast(severity)} among the first ${limit} fixed findings (only those were checked).` :
      severity ? `None of ${atLeast(severity)}.` : 'None.'));
    return;
  }
  const t = table(`${title}${severity ? `, ${atLeast(severity)}` : ''}`, ['Scan', ...FINDING_HEADERS], rows);
  t.caption.className = 'vh'; // the group's heading says it
  body.append(t);
  if (more) body.append(h('p', {class: 'hint'}, `The first ${limit} of each scan are shown; each scan's findings are listed below.`));
}

// scanOf is the scan of a category c (of a gate or a branch) of pr (a pull
// request or a branch), as far as the rows of its findings need it (its
// type and repository).
export function scanOf(c, pr) {
  return {id: c.scan_id, scan_type: c.scan_type, repo_id: pr.repo_id, vc_id: pr.vc_id};
}

function pairCell(c) {
  return h('span', {}, c.scan_type, ' ', h('span', {class: 'mono'}, c.category), ` #${c.scan_id}`);
}

// prHash is the address of a PR's page with its parameters (the
// severity filter, the scans' cursor), leaving out the empty ones.
function prHash(pr, params) {
  const q = new URLSearchParams(Object.entries(params).filter(([, v]) => v));
  return `#/pr/${pr.id}` + ([...q].length ? '?' + q : '');
}

// gateSection shows whether the PR may merge, why not, the newest scan of
// each category and the policy the decision was made by.
function gateSection(gate, pr) {
  const word = gate.blocked ? 'Blocked' : 'Not blocked';
  const admin = session.user()?.role === 'admin';
  return h('section', {class: 'gate', 'aria-labelledby': 'gate-heading'},
    h('h2', {id: 'gate-heading'}, 'Gate'),
    h('p', {class: `gate-state ${gate.blocked ? 'is-blocked' : 'is-clear'}`},
      h('span', {'data-gate': ''}, word)),
    gate.reasons.length
      ? h('ul', {class: 'reasons'}, gate.reasons.map((r) => h('li', {}, reasonText(r, gate.policy))))
      : h('p', {}, 'Nothing blocks it.'),
    gate.categories.length ? categoriesTable(gate) : h('p', {}, 'No scan yet.'),
    h('h3', {}, 'Policy'),
    policyFacts(gate.policy),
    h('p', {class: 'hint'}, 'Evaluated ', when(gate.evaluated_at),
      gate.head_sha ? ['; head commit ', h('span', {class: 'mono wrap'}, gate.head_sha)] : null, '.',
      admin ? [' ', h('a', {href: `#/gate/policy/repos/${pr.repo_id}`}, `The gate policy of repository ${pr.repo_id}`), '.'] : null));
}

// categoriesTable is the newest scan of each (type, category); with a
// base branch, what each adds, keeps and fixes and which analysis of the
// base it was compared with.
function categoriesTable(gate) {
  const based = Boolean(gate.base_ref);
  return table('Newest scan of each type and category',
    ['Type', 'Category', 'Scan', 'Status', 'Blocks', 'Unsuppressed', ...(based ? ['New', `Already on ${gate.base_ref}`, 'Fixed', 'Compared with'] : []), 'Recorded'],
    gate.categories.map((c) => [c.scan_type, h('span', {class: 'mono'}, c.category), `#${c.scan_id}`,
      c.status, c.block_status ? h('span', {class: 'blocks'}, 'yes') : 'no',
      c.scan_type === 'SECRET' ? plural(c.secret_count, 'secret') : plural(c.vulnerability_count, 'vulnerability', 'vulnerabilities'),
      ...(based ? [String(c.new_count), String(c.unchanged_count), String(c.absent_count), baselineText(c, gate)] : []),
      when(c.created_at)]));
}

// severityFilter lists only the findings at or above a severity (the
// address keeps it: #/pr/7?severity=high).
function severityFilter(pr, value, ctx) {
  const sev = select('severity', [['', 'Any severity'], ...SEVERITIES.slice(0, -1).map((s) => [s, atLeast(s)[0].toUpperCase() + atLeast(s).slice(1)])], value);
  const form = h('form', {class: 'filters', novalidate: true, 'aria-label': 'Findings'},
    field('Findings of severity', sev),
    h('div', {class: 'actions'}, h('button', {type: 'submit'}, 'Apply')));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    ctx.go(prHash(pr, {severity: sev.value}));
  });
  return form;
}

// scanDetails is a scan, with its findings inside (loaded when opened;
// the newest of each type open from the start).
function scanDetails(s, open, severity, names, ctx) {
  const summary = h('summary', {},
    h('span', {class: 'scan-title'}, `Scan #${s.id}`), ' ',
    h('span', {class: 'tag'}, s.scan_type), ' ',
    h('span', {class: 'tag mono'}, categoryOf(s)), ' ',
    h('span', {class: `tag status-${s.status}`}, s.status), ' ',
    h('span', {class: s.block_status ? 'blocks' : 'passes'}, s.block_status ? 'blocks' : 'passes'), ' · ',
    `${plural(s.secret_count, 'secret')}, ${plural(s.vulnerability_count, 'vulnerability', 'vulnerabilities')} · `,
    when(s.created_at), open ? ' · newest of its type and category' : '');
  const body = h('div', {class: 'findings'});
  const el = h('details', {open, id: `scan-${s.id}`}, summary, body);
  let loading = null;
  const load = () => {
    loading = loading || findings(s, body, severity, names, ctx).catch((err) => {
      loading = null;
      body.append(h('p', {role: 'alert', class: 'notice error'}, err.message));
    });
    return loading;
  };
  el.addEventListener('toggle', () => el.open && load());
  return {el, loaded: open ? load() : Promise.resolve()};
}

// findings lists a scan's findings (those at or above severity, when
// one is chosen), page by page.
async function findings(s, body, severity, names, ctx, cursor) {
  const page = await call('GET', `/pr/scan/${s.id}/findings`, {query: {severity, cursor, limit: 100}});
  if (!cursor && !page.items.length) {
    body.append(h('p', {class: 'empty'}, severity ? `No finding of ${atLeast(severity)}.` : 'This scan recorded no finding.'));
    return;
  }
  const headers = FINDING_HEADERS;
  const rows = page.items.map((f) => findingRow(f, s, names, ctx));
  let t = body.querySelector('table');
  if (!t) {
    t = table(`Findings of scan #${s.id}${severity ? `, ${atLeast(severity)}` : ''}`, headers, rows);
    body.append(t);
  } else {
    const tb = t.tBodies[0];
    table('', headers, rows).tBodies[0].querySelectorAll('tr').forEach((tr) => tb.append(tr));
  }
  body.querySelector('.more')?.remove();
  if (page.next_cursor) {
    body.append(h('button', {type: 'button', class: 'secondary more', onclick: () => findings(s, body, severity, names, ctx, page.next_cursor)}, 'More findings'));
  }
}

// FINDING_HEADERS are the columns of findingRow.
export const FINDING_HEADERS = ['Finding', 'Severity', 'Rule', 'Path', 'Line', 'State', 'Action'];

// findingRow is the cells of one finding of scan s (of a scan's listing,
// or of the PR's fixed ones, whose baseline_state is absent): every table
// of findings shows a finding by it, and its action cell offers what may
// be done with it.
export function findingRow(f, s, names, ctx) {
  const fixed = f.baseline_state === 'absent';
  return [
    h('span', {class: 'mono wrap'}, f.name, f.aliases?.length ? h('span', {class: 'aliases'}, ' also ', f.aliases.join(', ')) : null),
    h('span', {class: `sev sev-${f.severity}`}, f.severity),
    f.rule ?? '—',
    f.path ? h('span', {class: 'mono wrap'}, f.path) : '—',
    f.line === null || f.line === undefined ? '—' : String(f.line),
    fixed ? 'Fixed' : stateOf(f),
    fixed || f.suppressed || !canWrite() ? '' : h('span', {class: 'row-actions'},
      h('button', {type: 'button', class: 'small', onclick: (e) => open(e.currentTarget, f, s, names, ctx)},
        'Allowlist this', h('span', {class: 'vh'}, ` (${f.name}${f.path ? ' at ' + f.path : ''})`)),
      dismissButton(f, s, ctx)),
  ];
}

// categoryOf is a scan's category, which the API keeps in other_details.
function categoryOf(s) {
  const c = s.other_details?.category;
  return typeof c === 'string' ? c : 'default';
}

// canWrite: a readonly user may not create allowlists (the API answers
// 403), so it is not offered.
function canWrite() {
  return session.user()?.role !== 'readonly';
}

function stateOf(f) {
  if (!f.suppressed) return h('strong', {class: 'active'}, 'Active');
  if (!f.suppressed_by.length) return 'Suppressed in source';
  return h('span', {}, 'Suppressed by ', f.suppressed_by.flatMap((id, i) => [i ? ', ' : '', h('a', {href: `#/whitelist/${id}`}, `allowlist #${id}`)]));
}

// dismissButton offers to dismiss a finding that has a fingerprint (one
// recorded before fingerprints has none).
function dismissButton(f, s, ctx) {
  if (!f.fingerprint) return null;
  return h('button', {type: 'button', class: 'small secondary', onclick: (e) => open(e.currentTarget, f, s, null, ctx, dismiss)},
    'Dismiss', h('span', {class: 'vh'}, ` (${f.name}${f.path ? ' at ' + f.path : ''})`));
}

// open shows the "allowlist this" form (or another of the same shape,
// such as "dismiss") below the scan's findings.
function open(button, f, s, names, ctx, make = (f, s, done, cancel) => allowThis(f, s, names, done, cancel)) {
  document.querySelector('.allowlist-form')?.remove();
  const {form, focus} = make(f, s, (message) => {
    ctx.say(message);
    ctx.reload();
  }, () => {
    form.remove();
    button.focus();
  });
  button.closest('.findings, .group').append(form);
  focus();
}
