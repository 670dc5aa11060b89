// What the webhook pages share: the event types, a subscription's state,
// and its form (creating one, or changing one).

import {Problem} from '../api.js';
import {h, when, field, fieldError, alert, safeURL} from '../dom.js';

// EVENTS are the event types a subscription may take, as the API names
// them, and what each means.
export const EVENTS = [
  ['pr.gate_changed', 'A pull request\'s gate changed (blocked or not, or its reasons)'],
  ['scan.recorded', 'A scan was recorded'],
  ['upload.completed', 'A large SARIF upload was recorded'],
  ['upload.failed', 'A large SARIF upload failed'],
  ['allowlist.created', 'An allowlist was created'],
  ['allowlist.updated', 'An allowlist was changed'],
  ['allowlist.expired', 'An allowlist expired'],
  ['allowlist.expiring', 'An allowlist expires within 7 days'],
  ['webhook.test', 'A test event (a test is sent when asked, whatever is chosen here)'],
];

// stateText: Active, Inactive (an admin's choice) or Disabled (by
// scangate: disabled_reason says why).
export function stateText(w) {
  if (w.active) return 'Active';
  return w.disabled_reason ? 'Disabled' : 'Inactive';
}

// stateView is a subscription's state, why scangate disabled it, and
// since when its attempts fail, if they do.
export function stateView(w) {
  return h('span', {class: `state-${stateText(w).toLowerCase()}`}, h('strong', {}, stateText(w)),
    w.disabled_reason ? [h('br'), h('span', {class: 'small'}, w.disabled_reason)] : null,
    w.failing_since ? [h('br'), h('span', {class: 'small'}, 'Failing since ', when(w.failing_since))] : null);
}

// webhookForm builds a subscription's form. current: the subscription to
// start from (null: a new one); prefix: the controls' ids' prefix;
// submit(values) sends {url, events, description, active} and handles
// the answer; a Problem it throws is shown on the fields it names.
export function webhookForm({current, prefix, heading, button, submit}) {
  const c = {
    url: h('input', {id: `${prefix}-url`, type: 'url', value: current?.url ?? '', spellcheck: 'false', autocomplete: 'off', maxlength: 2048, class: 'mono'}),
    description: h('textarea', {id: `${prefix}-description`, rows: 2, maxlength: 1000}, current?.description ?? ''),
    active: h('input', {id: `${prefix}-active`, type: 'checkbox', checked: current ? current.active : true}),
  };
  const boxes = EVENTS.map(([type, text]) => {
    const id = `${prefix}-ev-${type.replace(/[._]/g, '-')}`;
    const box = h('input', {id, type: 'checkbox', name: `${prefix}-events`, value: type, checked: Boolean(current?.events.includes(type))});
    return [box, h('li', {class: 'choice'}, box, h('label', {for: id}, h('span', {class: 'mono'}, type), ` — ${text}`))];
  });
  const eventsError = h('p', {class: 'field-error', id: `${prefix}-events-error`, hidden: true});
  const showEventsError = (message) => {
    eventsError.textContent = message || '';
    eventsError.hidden = !message;
  };
  const errors = h('div', {'aria-live': 'assertive'});
  const form = h('form', {class: 'edit webhook-form', novalidate: true, 'aria-labelledby': `${prefix}-heading`},
    h('h2', {id: `${prefix}-heading`}, heading),
    errors,
    field('Payload URL', c.url, 'Where each event is posted: https, at a public address.'),
    h('fieldset', {'aria-describedby': eventsError.id},
      h('legend', {}, 'Events to send'),
      h('ul', {class: 'plain events'}, boxes.map(([, li]) => li)),
      eventsError),
    field('Description (optional)', c.description, 'Up to 1,000 characters, to tell subscriptions apart.'),
    h('div', {class: 'choice'}, c.active, h('label', {for: c.active.id}, 'Active (events are delivered)')),
    h('div', {class: 'actions'}, h('button', {type: 'submit'}, button)));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    errors.replaceChildren();
    fieldError(c.url, safeURL(c.url.value) ? '' : 'Enter the receiver\'s URL, such as https://example.com/scangate.');
    fieldError(c.description, '');
    const events = boxes.filter(([box]) => box.checked).map(([box]) => box.value);
    showEventsError(events.length ? '' : 'Choose at least one event.');
    const bad = form.querySelector('[aria-invalid="true"]') || (events.length ? null : boxes[0][0]);
    if (bad) {
      bad.focus();
      return;
    }
    try {
      await submit({url: c.url.value, events, description: c.description.value, active: c.active.checked});
    } catch (err) {
      errors.replaceChildren(alert(err.message));
      for (const fe of err instanceof Problem ? err.errors : []) {
        const member = (fe.pointer || '').split('/')[1];
        if (member === 'events') showEventsError(fe.detail);
        else if (c[member]) fieldError(c[member], fe.detail);
      }
    }
  });
  return form;
}

// changed is what a PATCH of w sends: the members whose values differ.
export function changed(w, values) {
  const body = {};
  if (values.url !== w.url) body.url = values.url;
  if ([...values.events].sort().join() !== [...w.events].sort().join()) body.events = values.events;
  if (values.description !== w.description) body.description = values.description;
  if (values.active !== w.active) body.active = values.active;
  return body;
}
