// "Dismiss": the form that dismisses one finding (GitHub's "dismiss this
// alert"): an allowlist of its repository that covers only the finding's
// fingerprint (POST /whitelist with fingerprints), with a reason chosen
// and a comment typed (both required).

import {h, field, fieldError, select, alert} from '../dom.js';
import {reasons, changedText, allowlistLink, createAllowlist} from '../rules.js';

// dismiss builds the form for finding f of scan s; done(message) follows
// the creation, cancel closes it.
export function dismiss(f, s, done, cancel) {
  const reason = select('dm-reason', [['', 'Choose a reason'], ...reasons], '');
  reason.required = true;
  const comment = h('textarea', {id: 'dm-comment', name: 'comment', rows: 2, required: true});
  const errors = h('div', {'aria-live': 'assertive'});
  const submit = h('button', {type: 'submit'}, 'Dismiss');
  const heading = h('h3', {id: 'dm-heading', tabindex: '-1'}, 'Dismiss this finding');
  const form = h('form', {class: 'allowlist-form dismiss-form', novalidate: true, 'aria-labelledby': 'dm-heading'},
    heading,
    h('p', {class: 'hint'}, 'Only this finding (', h('span', {class: 'mono wrap'}, f.name), f.path ? ` at ${f.path}` : '',
      `) in this repository, wherever its lines move: an allowlist of its fingerprint `, h('span', {class: 'mono wrap'}, f.fingerprint), '.'),
    errors,
    field('Reason', reason, 'Required: why this finding may pass.'),
    field('Comment', comment, 'Required: what you checked, for whoever reads it next.'),
    h('div', {class: 'actions'},
      submit,
      h('button', {type: 'button', class: 'secondary', onclick: cancel}, 'Cancel')));
  const controls = {reason, comment};
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    errors.replaceChildren();
    Object.values(controls).forEach((c) => fieldError(c, ''));
    const missing = [[reason, !reason.value, 'Choose a reason.'], [comment, !comment.value.trim(), 'Say why.']].filter(([, bad]) => bad);
    if (missing.length) {
      missing.forEach(([c, , message]) => fieldError(c, message));
      errors.append(alert('Dismissing needs a reason and a comment.'));
      missing[0][0].focus();
      return;
    }
    const body = {type: s.scan_type, name: f.name, reason: reason.value, repos: [s.repo_id], fingerprints: [f.fingerprint], comment: comment.value};
    await createAllowlist(body, {submit, errors, controls}, (r) => done(h('span', {}, 'Dismissed with ', allowlistLink(r.id), '. ', changedText(r))));
  });
  return {form, focus: () => {
    heading.scrollIntoView({block: 'start'});
    heading.focus({preventScroll: true});
  }};
}
