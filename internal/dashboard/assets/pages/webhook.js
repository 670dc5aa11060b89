// One webhook (admins): what it is, a test event, a new signing secret
// (shown once), its deliveries (newest first, paged) and redelivering
// one, its change (PATCH) and its deletion, after a confirmation.

import {call, find} from '../api.js';
import {h, append, missing, when, table, alert, reveal, adminOnly, userText, plural, confirmDelete} from '../dom.js';
import {webhookForm, stateText, changed} from './webhookform.js';

export const name = 'webhook';

export async function render(view, ctx) {
  const id = ctx.params[0];
  let w;
  try {
    w = await find(`/webhooks/${id}`);
  } catch (err) {
    view.append(h('h1', {}, `Webhook #${id}`));
    adminOnly(view, err, 'read and change webhooks');
    return;
  }
  if (!w) {
    missing(view, 'webhook', `#${id}`, '#/webhooks', 'Show the webhooks.');
    return;
  }
  const cursor = ctx.query.get('cursor');
  const deliveries = await call('GET', `/webhooks/${id}/deliveries`, {query: {cursor, limit: 25}});
  let facts = factsList(w);
  append(view, [
    h('h1', {}, `Webhook #${w.id}`),
    h('p', {class: `lead state-${stateText(w).toLowerCase()}`}, h('strong', {}, stateText(w)), ' · ', h('span', {class: 'mono wrap'}, w.url)),
    w.disabled_reason ? h('p', {class: 'notice error'}, `scangate disabled it: ${w.disabled_reason}. Make it active again below once the receiver answers.`) : null,
    w.failing_since ? h('p', {class: 'notice error failing'}, 'Its attempts have failed since ', when(w.failing_since),
      '. After 3 days of failures scangate disables it.') : null,
    facts,
    actions(w, ctx, (next) => facts.replaceWith(facts = factsList(next))),
    deliveriesSection(w, deliveries, cursor, ctx),
    webhookForm({current: w, prefix: 'ed', heading: 'Change it', button: 'Save changes',
      submit: async (values) => {
        const body = changed(w, values);
        if (!Object.keys(body).length) throw new Error('Nothing was changed.');
        await call('PATCH', `/webhooks/${w.id}`, {body});
        ctx.say(`Saved webhook #${w.id}: ${Object.keys(body).join(', ')} changed.`);
        ctx.reload();
      }}),
    deleteSection(w, ctx)]);
}

// factsList is what the subscription is.
function factsList(w) {
  return h('dl', {class: 'facts'},
    h('dt', {}, 'Payload URL'), h('dd', {class: 'mono wrap'}, w.url),
    h('dt', {}, 'Events'), h('dd', {}, h('ul', {class: 'plain mono'}, w.events.map((e) => h('li', {}, e)))),
    h('dt', {}, 'Description'), h('dd', {}, w.description || '—'),
    h('dt', {}, 'Signing secret'), h('dd', {}, w.previous_secret_until
      ? ['Rotated: the previous secret also signs until ', when(w.previous_secret_until)]
      : 'One secret signs (never shown again after it was made)'),
    h('dt', {}, 'Created'), h('dd', {}, when(w.created_at), ` by ${userText(w.created_by)}`),
    h('dt', {}, 'Updated'), h('dd', {}, when(w.updated_at), ` by ${userText(w.updated_by)}`));
}

// actions: send a test event, rotate the signing secret (the new one
// shown once, here; rotated(w) shows the subscription after it).
function actions(w, ctx, rotated) {
  const errors = h('div', {'aria-live': 'assertive'});
  const shown = h('div', {class: 'shown-once'});
  const test = async () => {
    try {
      const r = await call('POST', `/webhooks/${w.id}/test`);
      ctx.say(`Sent a test event (${r.event_id}). Its delivery is listed once it is dispatched: refresh the deliveries.`);
      ctx.reload();
    } catch (err) {
      errors.replaceChildren(alert(err.message));
    }
  };
  const rotate = async () => {
    errors.replaceChildren();
    try {
      const r = await call('POST', `/webhooks/${w.id}/rotate-secret`);
      rotated(r);
      reveal(shown, 'wh-new-secret', 'New signing secret', r.secret,
        h('span', {}, 'Rotated the signing secret. Copy the new one now: it is not shown again. Deliveries carry both signatures until ',
          when(r.previous_secret_until), ', so receivers can switch meanwhile.'));
    } catch (err) {
      errors.replaceChildren(alert(err.message));
    }
  };
  return h('section', {'aria-labelledby': 'actions-heading'},
    h('h2', {id: 'actions-heading'}, 'Test it, rotate its secret'),
    h('p', {}, 'A test event (webhook.test) goes to this webhook alone, whatever its events, even when it is not active. ',
      'A new signing secret signs at once; the previous one keeps signing beside it for 24 hours (a second rotation within them ends the oldest at once).'),
    errors,
    h('div', {class: 'actions'},
      h('button', {type: 'button', onclick: test}, 'Send a test event'),
      h('button', {type: 'button', class: 'secondary', onclick: rotate}, 'Rotate the secret')),
    shown);
}

// deliveriesSection lists a page of the deliveries, each with its latest
// attempt, and redelivers one.
function deliveriesSection(w, page, cursor, ctx) {
  const errors = h('div', {'aria-live': 'assertive'});
  const base = `#/webhooks/${w.id}`;
  const redeliver = async (d) => {
    try {
      await call('POST', `/webhooks/${w.id}/deliveries/${d.id}/redeliver`);
      ctx.say(`Redelivering ${d.type} ${d.id}: it is pending again, with a new series of attempts.`);
      ctx.reload();
    } catch (err) {
      errors.replaceChildren(alert(err.message));
    }
  };
  return h('section', {'aria-labelledby': 'deliveries-heading'},
    h('h2', {id: 'deliveries-heading'}, 'Deliveries'),
    h('p', {class: 'hint'}, 'Newest first. A delivery is attempted up to 8 times over more than a day; the latest attempt is shown, with the first KiB of the receiver\'s answer.'),
    errors,
    h('div', {class: 'actions'}, h('button', {type: 'button', class: 'secondary small', onclick: () => ctx.reload()}, 'Refresh the deliveries')),
    page.items.length ? deliveriesTable(page.items, redeliver)
      : h('p', {class: 'empty'}, cursor ? 'No more deliveries.' : 'No delivery yet.'),
    h('nav', {class: 'pager', 'aria-label': 'Pages of deliveries'},
      cursor ? h('a', {href: base}, 'First page') : null,
      page.next_cursor ? h('a', {href: `${base}?` + new URLSearchParams({cursor: page.next_cursor}), rel: 'next'}, 'Next page') : null));
}

// deliveriesTable shows deliveries, each with its latest attempt and a
// Redeliver button.
function deliveriesTable(items, redeliver) {
  const t = table('Deliveries, newest first', ['Event', 'Status', 'Attempt', 'Attempted', 'Response status', 'Duration', 'Next attempt', 'Error and answer', 'Action'],
    items.map((d) => [
      h('span', {}, h('span', {class: 'mono'}, d.type), h('br'), h('span', {class: 'mono small'}, d.event_id), h('br'),
        h('span', {class: 'small'}, 'at ', when(d.created_at))),
      h('span', {class: `tag delivery-${d.status}`}, d.status),
      String(d.attempt),
      d.attempted_at ? when(d.attempted_at) : 'Not yet',
      d.response_status === null ? '—' : String(d.response_status),
      d.duration_ms === null ? '—' : `${d.duration_ms} ms`,
      d.next_attempt_at ? when(d.next_attempt_at) : '—',
      d.error === null && d.response === null ? '—' : [
        d.error === null ? null : h('p', {class: 'error wrap'}, d.error),
        d.response === null ? null : answer(d.response)],
      h('button', {type: 'button', class: 'small secondary', onclick: () => redeliver(d)}, 'Redeliver', h('span', {class: 'vh'}, ` ${d.type} ${d.id}`)),
    ]));
  t.classList.add('deliveries');
  return t;
}

// answer is the first KiB of the receiver's answer, as text.
function answer(text) {
  if (!text) return h('p', {class: 'empty'}, 'An empty answer');
  return h('details', {class: 'answer'}, h('summary', {}, `Answer, ${plural(new TextEncoder().encode(text).length, 'byte')}`),
    h('pre', {class: 'mono wrap'}, text));
}

// deleteSection deletes the subscription once confirmed.
function deleteSection(w, ctx) {
  return confirmDelete({
    heading: 'Delete it',
    hint: 'To stop deliveries for a while, make it inactive instead (above): it keeps its secret and its log.',
    question: `Delete webhook #${w.id}?`,
    detail: ' Its pending deliveries are cancelled and its delivery log is no longer listed. This cannot be undone.',
    button: `Delete webhook #${w.id}`,
    remove: async () => {
      await call('DELETE', `/webhooks/${w.id}`);
      ctx.say(`Deleted webhook #${w.id}.`);
      ctx.go('#/webhooks');
    }});
}
