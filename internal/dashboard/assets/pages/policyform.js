// The gate policy's form, shared by the global policy's page and a
// repository's: the lowest severity that blocks per scan type, the
// required (scan type, category) pairs, and what a missing one does. For a
// repository each member may instead follow the global policy.

import {call, Problem} from '../api.js';
import {h, field, fieldError, select, alert, adminOnly} from '../dom.js';
import {TYPES, SEVERITIES, atLeast, pairText, rejudgeText} from '../gate.js';

const CATEGORY = /^[A-Za-z0-9._/-]{1,100}$/;
const typeNames = {SECRET: 'Secrets', VULNERABILITY: 'Vulnerabilities'};

const cap = (s) => s[0].toUpperCase() + s.slice(1);

// policyForm builds the form. current: the members to start from (a
// policy, or a repository's override: a member left out follows
// global). global: the global policy when the form is a repository's
// (each member may follow it), else null. send(body) stores it (PUT or
// DELETE) and answers the API's answer; done(answer) follows. heading
// and note (optional) say what saving does.
export function policyForm({current, global, send, done, heading = 'Change it', note = null}) {
  const inherit = global !== null;
  const sev = {};
  for (const t of TYPES) {
    const options = SEVERITIES.map((s) => [s, cap(atLeast(s))]);
    if (inherit) options.unshift(['', `As the global policy: ${atLeast(global.block_severity[t])}`]);
    sev[t] = select(`gp-sev-${t}`, options, current.block_severity?.[t] ?? '');
  }
  const ownRequired = !inherit || Array.isArray(current.required);
  const reqMode = inherit
    ? select('gp-req-mode', [['', `As the global policy: ${global.required.length ? global.required.map(pairText).join(', ') : 'none'}`], ['own', 'Its own list']], ownRequired ? 'own' : '')
    : null;
  const rows = h('ol', {class: 'pairs'});
  const add = h('button', {type: 'button', class: 'secondary small', onclick: () => addRow({scan_type: 'SECRET', category: ''}, true)}, 'Add a required scan');
  const none = h('p', {class: 'empty'}, 'No scan is required.');
  const list = h('div', {class: 'pairs-box', id: 'gp-required'}, none, rows, add);
  let n = 0;
  function addRow(pair, focus) {
    const i = n++;
    const type = select(`gp-req-type-${i}`, TYPES.map((t) => [t, t]), pair.scan_type);
    const category = h('input', {id: `gp-req-cat-${i}`, value: pair.category, spellcheck: 'false', autocomplete: 'off', size: 24});
    const row = h('li', {class: 'pair'},
      field('Type', type), field('Category', category),
      h('button', {type: 'button', class: 'secondary small', onclick: () => {
        row.remove();
        shown();
        add.focus();
      }}, 'Remove', h('span', {class: 'vh'}, ` required scan ${i + 1}`)));
    rows.append(row);
    shown();
    if (focus) category.focus();
  }
  function shown() {
    none.hidden = rows.children.length > 0;
    list.hidden = reqMode !== null && reqMode.value !== 'own';
  }
  (ownRequired ? current.required || [] : global.required).forEach((p) => addRow(p, false));
  if (reqMode) reqMode.addEventListener('change', shown);
  shown();
  const missingOptions = [['true', 'Blocks the pull request'], ['false', 'Does not block']];
  if (inherit) missingOptions.unshift(['', `As the global policy: ${global.block_on_missing ? 'blocks' : 'does not block'}`]);
  const missing = select('gp-missing', missingOptions, current.block_on_missing ?? '');
  const errors = h('div', {'aria-live': 'assertive'});
  const submit = h('button', {type: 'submit'}, 'Save the policy');
  const form = h('form', {class: 'edit policy-form', novalidate: true, 'aria-labelledby': 'gp-heading'},
    h('h2', {id: 'gp-heading'}, heading),
    errors,
    h('fieldset', {}, h('legend', {}, 'Unsuppressed findings that block'),
      h('div', {class: 'grid'}, TYPES.map((t) => field(typeNames[t], sev[t])))),
    h('fieldset', {}, h('legend', {}, 'Required scans'),
      h('p', {class: 'hint'}, 'A pull request must have a scan of each (type, category). A category is 1 to 100 characters of A–Z a–z 0–9 . _ / -, such as gitleaks or trivy.'),
      reqMode ? field('Required scans of this repository', reqMode) : null,
      list),
    field('A missing required scan', missing),
    note ? h('p', {class: 'hint'}, note) : null,
    h('div', {class: 'actions'}, submit));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    errors.replaceChildren();
    form.querySelectorAll('[aria-invalid]').forEach((c) => fieldError(c, ''));
    const body = {};
    const bs = {};
    for (const t of TYPES) if (sev[t].value) bs[t] = sev[t].value;
    if (Object.keys(bs).length) body.block_severity = bs;
    if (!reqMode || reqMode.value === 'own') {
      body.required = [];
      for (const row of rows.querySelectorAll('li')) {
        const [type, category] = row.querySelectorAll('select, input');
        if (!CATEGORY.test(category.value)) fieldError(category, 'Enter 1 to 100 characters of A–Z a–z 0–9 . _ / -.');
        body.required.push({scan_type: type.value, category: category.value});
      }
    }
    if (missing.value) body.block_on_missing = missing.value === 'true';
    const bad = form.querySelector('[aria-invalid="true"]');
    if (bad) {
      errors.append(alert('Some required scans are not valid.'));
      bad.focus();
      return;
    }
    submit.disabled = true;
    try {
      done(await send(body));
    } catch (err) {
      errors.append(alert(err.message));
      for (const fe of err instanceof Problem ? err.errors : []) {
        const el = controlOf(form, fe.pointer);
        if (el) fieldError(el, fe.detail);
      }
    } finally {
      submit.disabled = false;
    }
  });
  return form;
}

// controlOf finds the control a problem's pointer names: /block_severity/SECRET,
// /required/2/category (the third row shown), /block_on_missing.
function controlOf(form, pointer) {
  const [, member, a, b] = (pointer || '').split('/');
  if (member === 'block_severity' && a) return form.querySelector(`#gp-sev-${a}`);
  if (member === 'block_on_missing') return form.querySelector('#gp-missing');
  if (member === 'required' && a !== undefined) {
    const row = form.querySelectorAll('li.pair')[Number(a)];
    return row ? row.querySelectorAll('select, input')[b === 'scan_type' ? 0 : 1] : null;
  }
  return null;
}

// saved says what a change did: its version and its re-judgement.
export function savedText(what, p) {
  return `${what} (version ${p.version}). ${rejudgeText(p.rejudge)}`;
}

// forbidden answers the page of a caller that is not an admin, or
// rethrows.
export function forbidden(view, err) {
  adminOnly(view, err, 'read and change the gate policy');
}

// put sends a policy to path.
export function put(path) {
  return (body) => call('PUT', path, {body});
}
