// Health (admins): what the service's own metrics say, added up since the
// local stack started (GET /local/health, served by the local stack
// alone). A deployment has no such route: CloudWatch holds the same
// metrics and the stack's operations dashboard graphs them.

import {call} from '../api.js';
import {h, when, table, alert, adminOnly} from '../dom.js';

export const name = 'health';

export async function render(view) {
  view.append(h('h1', {}, 'Health'));
  let health;
  try {
    health = await call('GET', '/local/health');
  } catch (err) {
    if (err && err.status === 404) {
      view.append(alert('This deployment\'s metrics are in CloudWatch: open the stack\'s operations dashboard (<stack>-operations) in the CloudWatch console.'));
      return;
    }
    adminOnly(view, err, 'read the service\'s health');
    return;
  }
  const stats = health.metrics;
  const sum = (name, match = () => true) => stats.filter((s) => s.name === name && match(s.dimensions)).reduce((n, s) => n + s.sum, 0);
  const count = (name) => stats.filter((s) => s.name === name).reduce((n, s) => n + s.count, 0);
  const last = (name) => {
    const s = stats.find((x) => x.name === name && !x.dimensions.Kind);
    return s ? s.last : 0;
  };
  const minutes = Math.max((Date.now() - Date.parse(health.since)) / 60000, 1 / 60);
  const rate = (n) => `${(n / minutes).toFixed(1)} a minute`;
  const share = (n, of) => of ? `${(100 * n / of).toFixed(1)}%` : '—';

  const requests = sum('Requests');
  const byClass = ['2xx', '4xx', '5xx'].map((c) => [c, sum('Requests', (d) => d.StatusClass === c)]);
  const routes = [...new Set(stats.filter((s) => s.name === 'Requests').map((s) => s.dimensions.Route))].sort();
  const gateRows = [...new Set(stats.filter((s) => s.name === 'GateDecisions').map((s) => s.dimensions.Cause))].sort().map((cause) => [
    cause,
    String(sum('GateDecisions', (d) => d.Cause === cause && d.Blocked === 'true')),
    String(sum('GateDecisions', (d) => d.Cause === cause && d.Blocked === 'false')),
  ]);
  const deliveries = ['delivered', 'retried', 'failed', 'dead_lettered'].map((o) => [o.replace('_', ' '), String(sum('Deliveries', (d) => d.Outcome === o))]);
  const lag = stats.find((s) => s.name === 'DeliveryLatency');

  view.append(
    h('p', {class: 'lead'}, 'The service\'s own metrics, added up by the local stack since ', when(health.since),
      '. In AWS the same metrics are in CloudWatch, on the stack\'s operations dashboard.'),
    h('section', {'aria-labelledby': 'req-heading'},
      h('h2', {id: 'req-heading'}, 'Requests'),
      table('Requests by status class', ['Status class', 'Requests', 'Share', 'Rate'],
        byClass.map(([c, n]) => [c, String(n), share(n, requests), rate(n)])),
      routes.length ? table('Requests by route', ['Route', 'Requests', 'Errors (5xx)', 'Slowest'], routes.map((r) => {
        const n = sum('Requests', (d) => d.Route === r);
        const slow = stats.filter((s) => s.name === 'Latency' && s.dimensions.Route === r).reduce((m, s) => Math.max(m, s.max), 0);
        return [h('span', {class: 'mono'}, r), String(n), share(sum('Requests', (d) => d.Route === r && d.StatusClass === '5xx'), n), `${slow.toFixed(1)} ms`];
      })) : h('p', {class: 'empty'}, 'No request yet.')),
    h('section', {'aria-labelledby': 'gate-heading'},
      h('h2', {id: 'gate-heading'}, 'Gate decisions'),
      gateRows.length ? table('Gate decisions by cause', ['Cause', 'Blocked', 'Not blocked'], gateRows) : h('p', {class: 'empty'}, 'No gate decided yet.'),
      h('p', {class: 'hint'}, `${sum('ScansRecorded')} scans recorded with ${sum('FindingsRecorded')} findings.`)),
    h('section', {'aria-labelledby': 'backlog-heading'},
      h('h2', {id: 'backlog-heading'}, 'Backlog'),
      count('WorkPending') ? h('p', {}, `${last('WorkPending')} work items pending; the oldest is ${Math.round(last('WorkOldestAge'))} s old (measured every minute).`)
        : h('p', {class: 'empty'}, 'Not measured yet: the scheduled function measures it every minute.')),
    h('section', {'aria-labelledby': 'delivery-heading'},
      h('h2', {id: 'delivery-heading'}, 'Deliveries'),
      table('Delivery attempts by outcome', ['Outcome', 'Attempts'], deliveries),
      h('p', {class: 'hint'}, lag ? `Delivery lag: ${(lag.sum / lag.count / 1000).toFixed(1)} s on average, ${(lag.max / 1000).toFixed(1)} s at most.` : 'No delivery yet.')),
    h('section', {'aria-labelledby': 'other-heading'},
      h('h2', {id: 'other-heading'}, 'Refusals and throttling'),
      h('p', {}, `${sum('AuthorizerDenied')} tokens refused by the authorizer; ${sum('DynamoDBThrottles')} DynamoDB attempts throttled.`)));
}
