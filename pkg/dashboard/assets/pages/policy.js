// The global gate policy (admins): GET /gate/policy, changed with PUT
// /gate/policy, which judges every pull request's gate again; and the way
// to a repository's own policy.

import {call} from '../api.js';
import {h, when, field, fieldError, userText} from '../dom.js';
import {policyFacts} from '../gate.js';
import {policyForm, savedText, forbidden, put} from './policyform.js';

export const name = 'policy';

export async function render(view, ctx) {
  view.append(h('h1', {}, 'Gate policy'));
  let p;
  try {
    p = await call('GET', '/gate/policy');
  } catch (err) {
    forbidden(view, err);
    return;
  }
  view.append(
    h('p', {class: 'lead'}, 'What blocks a pull request, in every repository without a policy of its own. A change judges the gate of every pull request again.'),
    h('section', {'aria-labelledby': 'now-heading'},
      h('h2', {id: 'now-heading'}, 'In force'),
      policyFacts(p),
      h('p', {class: 'hint'}, p.updated_at ? ['Version ', String(p.version), ', changed ', when(p.updated_at), ` by ${userText(p.updated_by)}. `] : 'The default policy: never changed. ',
        h('a', {href: '#/audit?action=gate.policy.update'}, 'Changes in the audit log'), '.')),
    policyForm({current: p, global: null, send: put('/gate/policy'), done: (r) => {
      ctx.say(savedText('Saved the global policy', r));
      ctx.reload();
    }}),
    repoForm(ctx));
}

// repoForm goes to a repository's policy, by the repository's id.
function repoForm(ctx) {
  const id = h('input', {id: 'gp-repo', inputmode: 'numeric', size: 12, autocomplete: 'off'});
  const form = h('form', {class: 'filters', novalidate: true, 'aria-labelledby': 'repo-title'},
    field('Repository id', id, 'A repository may change any member of the policy for its own pull requests.'),
    h('div', {class: 'actions'}, h('button', {type: 'submit'}, 'Show its policy')));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    if (!/^[1-9][0-9]{0,18}$/.test(id.value)) {
      fieldError(id, 'Enter a positive whole number.');
      id.focus();
      return;
    }
    ctx.go(`#/gate/policy/repos/${id.value}`);
  });
  return h('section', {'aria-labelledby': 'repo-title'}, h('h2', {id: 'repo-title'}, 'A repository\'s policy'), form);
}
