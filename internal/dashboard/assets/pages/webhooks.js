// Webhooks (admins): the subscriptions (GET /webhooks, by id, paged) and
// creating one (POST /webhooks), whose signing secret is shown once.

import {call} from '../api.js';
import {h, when, table, reveal, adminOnly} from '../dom.js';
import {webhookForm, stateView} from './webhookform.js';

export const name = 'webhooks';

export async function render(view, ctx) {
  view.append(h('h1', {}, 'Webhooks'));
  let list;
  try {
    list = await listSection(ctx);
  } catch (err) {
    adminOnly(view, err, 'read and change webhooks');
    return;
  }
  const shown = h('div', {class: 'shown-once'});
  const form = webhookForm({current: null, prefix: 'wh', heading: 'Create a webhook', button: 'Create webhook',
    submit: async (values) => {
      shown.replaceChildren();
      const w = await call('POST', '/webhooks', {body: values});
      form.reset();
      list.replaceWith(list = await listSection(ctx));
      reveal(shown, 'wh-secret', 'Signing secret', w.secret,
        h('span', {}, `Created webhook #${w.id}. Copy its signing secret now: it is not shown again. `,
          'Receivers verify each delivery\'s signature with it (Standard Webhooks). ',
          h('a', {href: `#/webhooks/${w.id}`}, `Open webhook #${w.id}`), '.'));
    }});
  view.append(
    h('p', {class: 'lead'}, 'scangate posts each event of the chosen types to each active webhook, signed with the webhook\'s secret, and retries for more than a day when the receiver fails.'),
    list, shown, form);
}

// listSection lists a page of the subscriptions.
async function listSection(ctx) {
  const cursor = ctx.query.get('cursor');
  const page = await call('GET', '/webhooks', {query: {cursor, limit: 50}});
  const section = h('section', {'aria-labelledby': 'list-heading'}, h('h2', {id: 'list-heading'}, 'Subscriptions'));
  if (!page.items.length) {
    section.append(h('p', {class: 'empty'}, 'No webhook.'));
  } else {
    section.append(table('Webhooks, by id', ['Webhook', 'Payload URL', 'Events', 'Description', 'State', 'Created'],
      page.items.map((w) => [
        h('a', {href: `#/webhooks/${w.id}`}, `#${w.id}`),
        h('span', {class: 'mono wrap'}, w.url),
        h('ul', {class: 'plain mono small'}, w.events.map((e) => h('li', {}, e))),
        w.description || '—',
        stateView(w),
        when(w.created_at),
      ])));
  }
  section.append(h('nav', {class: 'pager', 'aria-label': 'Pages'},
    cursor ? h('a', {href: '#/webhooks'}, 'First page') : null,
    page.next_cursor ? h('a', {href: '#/webhooks?' + new URLSearchParams({cursor: page.next_cursor}), rel: 'next'}, 'Next page') : null));
  return section;
}
