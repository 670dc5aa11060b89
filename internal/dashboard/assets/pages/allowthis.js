// "Allowlist this": the form that creates an allowlist from a finding
// (POST /whitelist), with a reason (required), a scope, an expiry and
// paths.

import {h, field, fieldError, select, alert, fromLocalInput} from '../dom.js';
import {reasons, paths, changedText, allowlistLink, createAllowlist} from '../rules.js';

// allowThis builds the form for finding f of scan s; names are the
// repository's and integration's names; done(response) follows a creation.
export function allowThis(f, s, names, done, cancel) {
  const type = select('al-type', [['SECRET', 'Secret'], ['VULNERABILITY', 'Vulnerability']], s.scan_type);
  const name = h('input', {id: 'al-name', name: 'name', value: f.name, required: true, spellcheck: 'false', autocomplete: 'off'});
  const reason = select('al-reason', [['', 'Choose a reason'], ...reasons], '');
  reason.required = true;
  const expires = h('input', {id: 'al-expires', name: 'expires_at', type: 'datetime-local'});
  const globs = h('textarea', {id: 'al-paths', name: 'paths', rows: 3, spellcheck: 'false'});
  const comment = h('textarea', {id: 'al-comment', name: 'comment', rows: 2});
  const scope = (value, label, checked) => h('div', {class: 'choice'},
    h('input', {type: 'radio', name: 'al-scope', id: `al-scope-${value}`, value, checked}),
    h('label', {for: `al-scope-${value}`}, label));
  const scopes = h('fieldset', {id: 'al-scope'},
    h('legend', {}, 'Scope'),
    scope('repo', `This repository (${names.repo}, id ${s.repo_id})`, true),
    scope('vc', `This integration (${names.vc}, id ${s.vc_id})`, false),
    scope('global', 'Global (every repository)', false));
  const errors = h('div', {'aria-live': 'assertive'});
  const submit = h('button', {type: 'submit'}, 'Create allowlist');
  const heading = h('h3', {id: 'al-heading', tabindex: '-1'}, 'Allowlist this finding');
  const form = h('form', {class: 'allowlist-form', novalidate: true, 'aria-labelledby': 'al-heading'},
    heading,
    errors,
    h('div', {class: 'grid'},
      field('Type', type),
      field('Name', name, 'What the allowlist matches: the finding\'s name (a secret\'s fingerprint, an advisory id).')),
    scopes,
    field('Reason', reason, 'Required: why this finding may pass.'),
    field('Expires (optional, your local time)', expires, 'Leave empty for no expiry. After it, the allowlist suppresses nothing.'),
    field('Paths (optional)', globs, `One glob a line, such as test/** or **/*.spec.ts${f.path ? ` (this finding: ${f.path})` : ''}. With paths, only findings at a matching path are covered.`),
    field('Comment (optional)', comment),
    h('div', {class: 'actions'},
      submit,
      h('button', {type: 'button', class: 'secondary', onclick: cancel}, 'Cancel')));
  const controls = {type, name, reason, expires_at: expires, paths: globs, comment};
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    errors.replaceChildren();
    Object.values(controls).forEach((c) => fieldError(c, ''));
    if (!reason.value) {
      fieldError(reason, 'Choose a reason.');
      errors.append(alert('The allowlist needs a reason.'));
      reason.focus();
      return;
    }
    if (expires.value && !fromLocalInput(expires.value)) {
      fieldError(expires, 'Enter a date and time.');
      expires.focus();
      return;
    }
    const chosen = form.querySelector('input[name="al-scope"]:checked').value;
    const body = {
      type: type.value, name: name.value, reason: reason.value,
      global_: chosen === 'global', repos: chosen === 'repo' ? [s.repo_id] : [], vcs: chosen === 'vc' ? [s.vc_id] : [],
    };
    if (expires.value) body.expires_at = fromLocalInput(expires.value);
    if (paths(globs.value).length) body.paths = paths(globs.value);
    if (comment.value.trim()) body.comment = comment.value;
    await createAllowlist(body, {submit, errors, controls}, (r) => done(h('span', {}, 'Created ', allowlistLink(r.id), '. ', changedText(r))));
  });
  return {form, focus: () => {
    heading.scrollIntoView({block: 'start'});
    heading.focus({preventScroll: true});
  }};
}
