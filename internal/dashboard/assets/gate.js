// A pull request's gate (GET /pr/{pr_id}/gate) and the gate policy, in
// words: {pr_id, blocked, head_sha, reasons: [{kind, scan_type, category,
// scan_id, count}], categories: [{scan_type, category, scan_id, status,
// block_status, secret_count, vulnerability_count, created_at}], policy:
// {block_severity: {SECRET, VULNERABILITY}, required: [{scan_type,
// category}], block_on_missing}, evaluated_at}.

import {call} from './api.js';
import {h, plural} from './dom.js';

// loadGate reads a pull request's stored gate: the decision the blocked
// listing also reads, with its reasons and the policy it was judged by.
export function loadGate(prID) {
  return call('GET', `/pr/${prID}/gate`);
}

export const TYPES = ['SECRET', 'VULNERABILITY'];

// SEVERITIES, most severe first (the API's order).
export const SEVERITIES = ['critical', 'high', 'medium', 'low', 'none'];

// atLeast says which findings a lowest severity takes in: "high and
// above", "critical only", "any severity" (none is the lowest).
export function atLeast(severity) {
  if (severity === 'none') return 'any severity';
  if (severity === 'critical') return 'critical only';
  return `${severity} and above`;
}

// pairText names a (scan type, category) pair.
export function pairText(p) {
  return `${p.scan_type} (${p.category})`;
}

// reasonText says a reason in words; policy (the gate's) names the
// severity its findings are counted from.
export function reasonText(r, policy) {
  const what = pairText(r);
  const sev = policy?.block_severity?.[r.scan_type];
  const from = sev && sev !== 'none' ? ` (${atLeast(sev)})` : '';
  switch (r.kind) {
    case 'findings':
      return `${what}: ${plural(r.count, 'unsuppressed finding')}${from} in scan #${r.scan_id}`;
    case 'pending':
      return `${what}: scan #${r.scan_id} has not completed`;
    case 'failed':
      return `${what}: scan #${r.scan_id} failed`;
    case 'missing':
      return `${what}: no scan, and the policy requires one`;
    default:
      return `${what}: ${r.kind}`;
  }
}

// policyFacts shows a policy: which findings block, the required scans,
// what a missing one does.
export function policyFacts(policy) {
  const cap = (s) => s[0].toUpperCase() + s.slice(1);
  return h('dl', {class: 'facts'},
    h('dt', {}, 'Secrets that block'), h('dd', {}, cap(atLeast(policy.block_severity.SECRET))),
    h('dt', {}, 'Vulnerabilities that block'), h('dd', {}, cap(atLeast(policy.block_severity.VULNERABILITY))),
    h('dt', {}, 'Required scans'), h('dd', {}, policy.required.length ? policy.required.map(pairText).join(', ') : 'None'),
    h('dt', {}, 'A missing required scan'), h('dd', {}, policy.block_on_missing ? 'Blocks the pull request' : 'Does not block'));
}

// rejudgeText says what a policy change's re-judgement did (its answer's
// rejudge: {id, status, prs}).
export function rejudgeText(r) {
  if (!r) return '';
  const prs = r.prs === null ? 'every pull request' : plural(r.prs, 'pull request');
  return r.status === 'complete'
    ? `The gates of ${prs} were judged again.`
    : `The gates of ${prs} are being judged again; what is left finishes within about a minute.`;
}
