// Tokens: the caller's sign-in and personal tokens (GET /auth/tokens),
// creating a personal token (shown once) and revoking one.

import {call, session, Problem} from '../api.js';
import {h, when, table, field, select, fieldError, alert, reveal} from '../dom.js';

export const name = 'tokens';

export async function render(view, ctx) {
  let list = null;
  const form = createForm(async () => list.replaceWith(list = await listSection(ctx)));
  view.append(h('h1', {}, 'Tokens'), form);
  list = await listSection(ctx);
  view.append(list);
}

// listSection lists the tokens.
async function listSection(ctx) {
  const page = await call('GET', '/auth/tokens', {query: {cursor: ctx.query.get('cursor'), limit: 50}});
  const mine = session.tokenID();
  const errors = h('div', {'aria-live': 'assertive'});
  const section = h('section', {'aria-labelledby': 'list-heading'}, h('h2', {id: 'list-heading'}, 'Your tokens'), errors);
  if (!page.items.length) {
    section.append(h('p', {class: 'empty'}, 'No token.'));
  } else {
    section.append(table('Tokens that are neither expired nor revoked, newest first',
      ['Name', 'Kind', 'Scope', 'Created', 'Expires', 'Last used', 'Repositories', 'Action'],
      page.items.map((t) => [
        t.id === mine ? h('span', {}, t.name ?? 'Sign-in', h('strong', {class: 'tag'}, 'this session')) : (t.name ?? 'Sign-in'),
        t.kind, t.scope, when(t.created_at), when(t.expires_at), t.last_used_at ? when(t.last_used_at) : 'Never',
        reposText(t.repos),
        h('button', {type: 'button', class: 'small danger', onclick: () => revoke(t, t.id === mine, errors, ctx)},
          t.id === mine ? 'Revoke and sign out' : 'Revoke', h('span', {class: 'vh'}, ` token ${t.name ?? t.id}`)),
      ])));
  }
  section.append(h('nav', {class: 'pager', 'aria-label': 'Pages'},
    ctx.query.get('cursor') ? h('a', {href: '#/tokens'}, 'First page') : null,
    page.next_cursor ? h('a', {href: '#/tokens?' + new URLSearchParams({cursor: page.next_cursor}), rel: 'next'}, 'Next page') : null));
  return section;
}

async function revoke(t, current, errors, ctx) {
  if (current) {
    ctx.signOut('You revoked this session\'s token and are signed out.');
    return;
  }
  try {
    await call('DELETE', `/auth/tokens/${t.id}`);
    ctx.say(`Revoked the token ${t.name ?? t.id}.`);
    ctx.reload();
  } catch (err) {
    errors.replaceChildren(alert(err.message));
  }
}

// scopes a personal token may have (a scan token is a CI job's: it records
// scans and reads).
const scopes = [['read', 'Read only'], ['scan', 'Record scans and read'], ['write', 'Read and write']];

// reposText shows the repositories a token is scoped to.
function reposText(repos) {
  return repos ? repos.map((r) => `${r.vc_id}/${r.repo_id}`).join(', ') : 'All';
}

// parseRepos reads "VC_ID/REPO_ID" pairs separated by commas or spaces:
// the repositories, [] for none (every repository), or null when a pair
// is not two positive integers.
export function parseRepos(text) {
  const out = [];
  for (const part of text.split(/[\s,]+/).filter(Boolean)) {
    const m = /^([1-9][0-9]{0,14})\/([1-9][0-9]{0,14})$/.exec(part);
    if (!m) return null;
    out.push({vc_id: Number(m[1]), repo_id: Number(m[2])});
  }
  return out;
}

function createForm(created) {
  const name = h('input', {id: 'tk-name', maxlength: 100, autocomplete: 'off', required: true});
  const scope = select('tk-scope', scopes, 'read');
  const days = h('input', {id: 'tk-days', type: 'number', min: 1, max: 366, value: 90, required: true});
  const repos = h('input', {id: 'tk-repos', autocomplete: 'off', placeholder: 'All repositories'});
  const errors = h('div', {'aria-live': 'assertive'});
  const shown = h('div', {});
  const form = h('form', {class: 'create', novalidate: true, 'aria-labelledby': 'create-heading'},
    h('h2', {id: 'create-heading'}, 'Create a personal token'),
    h('p', {}, 'For a CI job or a script. Its secret is shown once, here, and never again.'),
    errors,
    h('div', {class: 'grid'},
      field('Name', name, 'Unique among your tokens, such as "ci-payments".'),
      field('Scope', scope, 'A CI job that uploads scans needs only to record scans and read.'),
      field('Expires in (days)', days, 'From 1 to 366.'),
      field('Repositories', repos, 'Leave empty for every repository, or scope it to some: VC_ID/REPO_ID pairs, such as "10/100, 10/101" (at most 100). It then records and reads those repositories only, and nothing else.')),
    h('div', {class: 'actions'}, h('button', {type: 'submit'}, 'Create token')),
    shown);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    errors.replaceChildren();
    shown.replaceChildren();
    fieldError(name, name.value.trim() ? '' : 'Enter a name.');
    const n = Number(days.value);
    fieldError(days, Number.isInteger(n) && n >= 1 && n <= 366 ? '' : 'Enter a number of days from 1 to 366.');
    const scoped = parseRepos(repos.value);
    fieldError(repos, scoped === null ? 'Enter VC_ID/REPO_ID pairs of positive numbers, such as 10/100.' :
      scoped.length > 100 ? 'Enter at most 100 repositories.' : '');
    const bad = form.querySelector('[aria-invalid="true"]');
    if (bad) {
      bad.focus();
      return;
    }
    try {
      const body = {name: name.value, scope: scope.value, expires_in_days: n};
      if (scoped.length) body.repos = scoped;
      const t = await call('POST', '/auth/tokens', {body});
      name.value = '';
      repos.value = '';
      reveal(shown, 'tk-secret', 'New token', t.access_token,
        h('span', {}, `Created the token ${t.name} (${t.scope}; repositories: ${reposText(t.repos)}), expiring `, when(t.expires_at), '. Copy it now: it is not shown again.'));
      await created();
    } catch (err) {
      errors.append(alert(err.message));
      if (err instanceof Problem && err.status === 409) fieldError(name, err.message);
    }
  });
  return form;
}
