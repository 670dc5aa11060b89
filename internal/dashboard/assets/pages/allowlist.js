// One allowlist: what it is, its comments, and its edit (PUT
// /whitelist/{id}): change it, deactivate it now, or reactivate it.

import {call, find, session, Problem} from '../api.js';
import {h, append, missing, when, field, fieldError, select, alert, localInput, fromLocalInput, userText} from '../dom.js';
import {reasons, reasonLabel, scopeText, stateText, paths, ids, changedText, pointerField} from '../rules.js';

export const name = 'allowlist';

export async function render(view, ctx) {
  const id = ctx.params[0];
  const a = await find(`/whitelist/${id}`);
  if (!a) {
    missing(view, 'allowlist', id, '#/whitelist', 'Show the allowlists.');
    return;
  }
  append(view, [
    h('h1', {}, `Allowlist #${a.id}`),
    h('p', {class: `lead state-${stateText(a).toLowerCase()}`}, h('strong', {}, stateText(a)), ' · ', a.type, ' ', h('span', {class: 'mono wrap'}, a.name)),
    h('dl', {class: 'facts'},
      h('dt', {}, 'Scope'), h('dd', {}, scopeText(a)),
      h('dt', {}, 'Reason'), h('dd', {}, reasonLabel(a.reason)),
      h('dt', {}, 'Expires'), h('dd', {}, a.expires_at ? when(a.expires_at) : 'Never', a.expired ? ' (expired)' : ''),
      h('dt', {}, 'Paths'), h('dd', {}, a.paths.length ? h('ul', {class: 'plain mono'}, a.paths.map((p) => h('li', {}, p))) : 'Any path'),
      h('dt', {}, 'Created'), h('dd', {}, when(a.created_on), ` by ${userText(a.created_by)}`),
      h('dt', {}, 'Updated'), h('dd', {}, when(a.updated_on), ` by ${userText(a.updated_by)}`)),
    h('section', {'aria-labelledby': 'comments-heading'},
      h('h2', {id: 'comments-heading'}, 'Comments'),
      a.comments.length
        ? h('ol', {class: 'comments'}, a.comments.map((c) => h('li', {}, h('p', {}, c.comment), h('p', {class: 'hint'}, when(c.created_on), ` · ${userText(c.created_by)}`))))
        : h('p', {class: 'empty'}, 'No comment.')),
    session.user()?.role === 'readonly' ? null : [lifecycle(a, ctx), editForm(a, ctx)]]);
}

// lifecycle: end the allowlist now, or bring it back. The API takes only
// future expiries, so ending now is deactivating.
function lifecycle(a, ctx) {
  const errors = h('div', {'aria-live': 'assertive'});
  const put = async (body, done) => {
    try {
      const r = await call('PUT', `/whitelist/${a.id}`, {body});
      ctx.say(`${done} ${changedText(r)}`);
      ctx.reload();
    } catch (err) {
      errors.replaceChildren(alert(err.message));
    }
  };
  const active = a.active && !a.expired;
  return h('section', {class: 'lifecycle', 'aria-labelledby': 'life-heading'},
    h('h2', {id: 'life-heading'}, active ? 'End it now' : 'Bring it back'),
    h('p', {}, active
      ? 'Deactivating stops the allowlist at once: every finding it suppresses counts again, and the gates of their pull requests are judged anew.'
      : a.expired ? 'It has expired. Set a later expiry, or none, below to apply it again.' : 'It is inactive: it suppresses nothing until it is reactivated.'),
    errors,
    active
      ? h('button', {type: 'button', class: 'danger', onclick: () => put({active: false}, 'Deactivated.')}, 'Deactivate now')
      : (a.expired ? null : h('button', {type: 'button', onclick: () => put({active: true}, 'Reactivated.')}, 'Reactivate')));
}

// editForm changes what was changed, and nothing else.
function editForm(a, ctx) {
  const c = {
    type: select('ed-type', [['SECRET', 'Secret'], ['VULNERABILITY', 'Vulnerability']], a.type),
    name: h('input', {id: 'ed-name', value: a.name, spellcheck: 'false', autocomplete: 'off'}),
    global_: h('input', {id: 'ed-global', type: 'checkbox', checked: a.global_}),
    repos: h('input', {id: 'ed-repos', value: a.repos.join(', '), inputmode: 'numeric'}),
    vcs: h('input', {id: 'ed-vcs', value: a.vcs.join(', '), inputmode: 'numeric'}),
    reason: select('ed-reason', [...(a.reason ? [] : [['', 'No reason given']]), ...reasons], a.reason || ''),
    expires_at: h('input', {id: 'ed-expires', type: 'datetime-local', value: localInput(a.expires_at)}),
    paths: h('textarea', {id: 'ed-paths', rows: 3, spellcheck: 'false'}, a.paths.join('\n')),
    comment: h('textarea', {id: 'ed-comment', rows: 2}),
  };
  const errors = h('div', {'aria-live': 'assertive'});
  const form = h('form', {class: 'edit', novalidate: true, 'aria-labelledby': 'edit-heading'},
    h('h2', {id: 'edit-heading'}, 'Change it'),
    errors,
    h('div', {class: 'grid'}, field('Type', c.type), field('Name', c.name)),
    h('div', {class: 'choice'}, c.global_, h('label', {for: 'ed-global'}, 'Global (every repository)')),
    h('div', {class: 'grid'},
      field('Repositories (ids)', c.repos, 'Separated by commas.'),
      field('Integrations (ids)', c.vcs, 'Separated by commas.')),
    field('Reason', c.reason),
    field('Expires (your local time)', c.expires_at, 'Empty: no expiry.'),
    field('Paths', c.paths, 'One glob a line; empty: any path.'),
    field('Add a comment (optional)', c.comment),
    h('div', {class: 'actions'}, h('button', {type: 'submit'}, 'Save changes')));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    errors.replaceChildren();
    Object.values(c).forEach((el) => fieldError(el, ''));
    const body = {};
    if (c.type.value !== a.type) body.type = c.type.value;
    if (c.name.value !== a.name) body.name = c.name.value;
    if (c.global_.checked !== a.global_) body.global_ = c.global_.checked;
    for (const k of ['repos', 'vcs']) {
      const list = ids(c[k].value);
      if (!list) {
        fieldError(c[k], 'Enter positive whole numbers separated by commas.');
        c[k].focus();
        return;
      }
      if (list.join() !== a[k].join()) body[k] = list;
    }
    if (c.reason.value && c.reason.value !== a.reason) body.reason = c.reason.value;
    if (c.expires_at.value !== localInput(a.expires_at)) body.expires_at = c.expires_at.value ? fromLocalInput(c.expires_at.value) : 'never';
    if (paths(c.paths.value).join('\n') !== a.paths.join('\n')) body.paths = paths(c.paths.value);
    if (c.comment.value.trim()) body.comment = c.comment.value;
    if (!Object.keys(body).length) {
      errors.append(alert('Nothing was changed.'));
      return;
    }
    try {
      const r = await call('PUT', `/whitelist/${a.id}`, {body});
      ctx.say(`Saved. ${changedText(r)}`);
      ctx.reload();
    } catch (err) {
      errors.append(alert(err.message));
      for (const fe of err instanceof Problem ? err.errors : []) {
        const el = c[pointerField(fe.pointer)];
        if (el) fieldError(el, fe.detail);
      }
    }
  });
  return form;
}
