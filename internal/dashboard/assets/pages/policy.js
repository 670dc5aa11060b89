// The global gate policy (admins): GET /gate/policy, changed with PUT
// /gate/policy, which judges every pull request's gate again; and the way
// to a repository's own policy.

import {call} from '../api.js';
import {h, when, userText, idSection} from '../dom.js';
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
    idSection(ctx, {id: 'gp-repo', heading: 'A repository\'s policy', label: 'Repository id',
      hint: 'A repository may change any member of the policy for its own pull requests.', button: 'Show its policy',
      to: (repo) => `#/gate/policy/repos/${repo}`}));
}
