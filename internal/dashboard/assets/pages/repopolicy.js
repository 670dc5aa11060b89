// A repository's gate policy (admins): GET /gate/policy/repos/{id}, its
// own members over the global policy; PUT sets them, DELETE returns the
// repository to the global policy. Each change judges every pull
// request's gate again.

import {call} from '../api.js';
import {h, append, when, alert, userText} from '../dom.js';
import {policyFacts, atLeast, TYPES} from '../gate.js';
import {policyForm, savedText, forbidden, put} from './policyform.js';

export const name = 'repo-policy';

const memberNames = {SECRET: 'secrets that block', VULNERABILITY: 'vulnerabilities that block'};

export async function render(view, ctx) {
  const id = ctx.params[0];
  const path = `/gate/policy/repos/${id}`;
  view.append(h('h1', {}, `Gate policy of repository ${id}`));
  let p, global;
  try {
    [p, global] = await Promise.all([call('GET', path), call('GET', '/gate/policy')]);
  } catch (err) {
    forbidden(view, err);
    return;
  }
  const o = p.override;
  const errors = h('div', {'aria-live': 'assertive'});
  const reset = async () => {
    try {
      ctx.say(savedText(`Repository ${id} follows the global policy again`, await call('DELETE', path)));
      ctx.reload();
    } catch (err) {
      errors.replaceChildren(alert(err.message));
    }
  };
  const globalLink = h('a', {href: '#/gate/policy'}, 'the global policy');
  append(view, [
    h('p', {class: 'lead'}, o ? [`Its own policy: ${ownText(o)}; the rest as `, globalLink, '.'] : ['It follows ', globalLink, '.']),
    h('section', {'aria-labelledby': 'now-heading'},
      h('h2', {id: 'now-heading'}, 'Its pull requests are judged by'),
      policyFacts(p.effective),
      h('p', {class: 'hint'}, p.updated_at ? ['Changed ', when(p.updated_at), ` by ${userText(p.updated_by)}.`] : 'Never changed.')),
    o ? h('section', {class: 'lifecycle', 'aria-labelledby': 'reset-heading'},
      h('h2', {id: 'reset-heading'}, 'Return to the global policy'),
      h('p', {}, 'Forget the repository\'s own members: its pull requests are judged by the global policy, now and when it changes.'),
      errors,
      h('button', {type: 'button', class: 'danger', onclick: reset}, 'Return to the global policy')) : null,
    policyForm({
      current: o || {}, global,
      heading: o ? 'Change its own policy' : 'Give it a policy of its own',
      note: 'A member left as the global policy follows it, now and when it changes; with every member so, the repository follows the global policy.',
      // Nothing of its own is no override: the repository follows the
      // global policy (DELETE), rather than keeping an empty one.
      send: (body) => (Object.keys(body).length ? put(path)(body) : call('DELETE', path)),
      done: (r) => {
        ctx.say(savedText(r.override ? `Saved the policy of repository ${id}` : `Repository ${id} follows the global policy`, r));
        ctx.reload();
      },
    })]);
}

// ownText names the members a repository sets itself.
function ownText(o) {
  const parts = [];
  for (const t of TYPES) if (o.block_severity?.[t]) parts.push(`${memberNames[t]} (${atLeast(o.block_severity[t])})`);
  if (o.required) parts.push(`required scans (${o.required.length ? o.required.map((r) => `${r.scan_type} ${r.category}`).join(', ') : 'none'})`);
  if (o.block_on_missing !== undefined) parts.push(`a missing required scan ${o.block_on_missing ? 'blocks' : 'does not block'}`);
  return parts.join(', ');
}
