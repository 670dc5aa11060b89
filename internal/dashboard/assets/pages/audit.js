// The audit log (admins): GET /audit, newest first, with its filters.

import {call, Problem} from '../api.js';
import {h, when, table, field, select, fieldError, localInput, fromLocalInput} from '../dom.js';

export const name = 'audit';

const actions = ['user.create', 'user.update', 'allowlist.create', 'allowlist.update', 'allowlist.expire',
  'token.create', 'token.revoke', 'login.failure', 'login.throttled', 'admin.bootstrap', 'scan.record', 'gate.policy.update',
  'webhook.create', 'webhook.update', 'webhook.delete', 'webhook.rotate', 'webhook.test', 'webhook.redeliver', 'integration.update', 'integration.delete',
  'oidc.trust.put', 'oidc.trust.delete'];
const targets = ['user', 'allowlist', 'token', 'username', 'scan', 'gate_policy', 'webhook', 'integration', 'oidc_trust'];

function hashOf(params) {
  return '#/audit?' + new URLSearchParams(Object.entries(params).filter(([, v]) => v));
}

export async function render(view, ctx) {
  const q = ctx.query;
  const f = {};
  for (const k of ['action', 'actor_id', 'target_type', 'target_id', 'since', 'until']) f[k] = q.get(k) || '';
  view.append(h('h1', {}, 'Audit log'), filters(f, ctx));
  let page;
  try {
    page = await call('GET', '/audit', {query: {...f, cursor: q.get('cursor'), limit: 50}});
  } catch (err) {
    if (err instanceof Problem && err.status === 403) {
      view.append(h('p', {class: 'notice error', role: 'alert'}, 'Only admins can read the audit log.'));
      return;
    }
    throw err;
  }
  if (!page.items.length) {
    view.append(h('p', {class: 'empty'}, 'No entry matches these filters.'));
  } else {
    view.append(table('Audit entries, newest first', ['Time', 'Action', 'Actor', 'Target', 'Changes', 'Request'],
      page.items.map((e) => [
        when(e.at),
        h('span', {class: 'mono nowrap'}, e.action),
        e.actor ? `${e.actor.username} (user ${e.actor.user_id}${e.actor.token_id ? `, token ${e.actor.token_id}` : ''})` : 'system',
        target(e.target),
        changes(e.changes),
        h('span', {class: 'mono small wrap'}, e.request_id, e.source_ip ? h('br') : null, e.source_ip || ''),
      ])));
  }
  view.append(h('nav', {class: 'pager', 'aria-label': 'Pages'},
    q.get('cursor') ? h('a', {href: hashOf(f)}, 'First page') : null,
    page.next_cursor ? h('a', {href: hashOf({...f, cursor: page.next_cursor}), rel: 'next'}, 'Next page') : null));
}

// target names an entry's target, linking to its page where it has one.
function target(t) {
  const text = `${t.type} ${t.id}`;
  if (t.type === 'allowlist') return h('a', {href: `#/whitelist/${t.id}`}, text);
  if (t.type === 'webhook') return h('a', {href: `#/webhooks/${t.id}`}, text);
  if (t.type === 'integration') return h('a', {href: `#/integrations/${t.id}`}, text);
  if (t.type === 'gate_policy') return h('a', {href: t.id === 'global' ? '#/gate/policy' : `#/gate/policy/repos/${t.id}`}, text);
  return text;
}

function changes(c) {
  const keys = Object.keys(c || {});
  if (!keys.length) return '—';
  const show = (v) => (v === undefined ? '—' : JSON.stringify(v));
  return h('ul', {class: 'plain changes'}, keys.map((k) => h('li', {}, h('span', {class: 'mono'}, k), `: ${show(c[k].from)} → ${show(c[k].to)}`)));
}

function filters(f, ctx) {
  const action = select('action', [['', 'Any'], ...actions.map((a) => [a, a])], f.action);
  const actor = h('input', {id: 'actor_id', value: f.actor_id, inputmode: 'numeric', size: 8});
  const ttype = select('target_type', [['', 'Any'], ...targets.map((t) => [t, t])], f.target_type);
  const tid = h('input', {id: 'target_id', value: f.target_id, size: 12});
  const since = h('input', {id: 'since', type: 'datetime-local', value: localInput(f.since)});
  const until = h('input', {id: 'until', type: 'datetime-local', value: localInput(f.until)});
  const form = h('form', {class: 'filters', 'aria-label': 'Filters', novalidate: true},
    field('Action', action), field('Actor (user id)', actor), field('Target type', ttype), field('Target id', tid),
    field('Since (your local time)', since), field('Until (your local time)', until),
    h('div', {class: 'actions'}, h('button', {type: 'submit'}, 'Apply')));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    fieldError(actor, actor.value && !/^[1-9][0-9]{0,18}$/.test(actor.value) ? 'Enter a user id.' : '');
    const alone = Boolean(ttype.value) !== Boolean(tid.value) ? (ttype.value ? tid : ttype) : null;
    fieldError(tid, '');
    fieldError(ttype, '');
    if (alone) fieldError(alone, 'A target is named by its type and its id.');
    const bad = form.querySelector('[aria-invalid="true"]');
    if (bad) {
      bad.focus();
      return;
    }
    ctx.go(hashOf({action: action.value, actor_id: actor.value, target_type: ttype.value, target_id: tid.value,
      since: fromLocalInput(since.value), until: fromLocalInput(until.value)}));
  });
  return form;
}
