// A pull request's gate, in the shape of GET /pr/{pr_id}/gate:
// {pr_id, blocked, head_sha, reasons: [{kind, scan_type, category, scan_id,
// count}], categories: [{scan_type, category, scan_id, status, block_status,
// secret_count, vulnerability_count, created_at}], policy, evaluated_at}.

import {call} from './api.js';

// GATE_ROUTE: while false, the gate is derived from the PR's scans by
// today's rule (docs/API.md: a PR is blocked when the newest scan of either
// type blocks). Once the API serves GET /pr/{pr_id}/gate, set it to true
// (or make loadGate that one call): every page reads the gate through
// loadGate only.
const GATE_ROUTE = false;

export async function loadGate(prID) {
  if (GATE_ROUTE) return call('GET', `/pr/${prID}/gate`);
  return deriveGate(prID);
}

const TYPES = ['SECRET', 'VULNERABILITY'];

// deriveGate reads the newest scan of each type (one page of one scan
// each) and judges it as the API does today.
async function deriveGate(prID) {
  const pages = await Promise.all(TYPES.map((t) =>
    call('GET', `/pr/${prID}/scans`, {query: {scan_type: t, limit: 1}})));
  const categories = [];
  const reasons = [];
  for (const page of pages) {
    const s = page.items[0];
    if (!s) continue;
    const category = typeof s.other_details?.category === 'string' ? s.other_details.category : 'default';
    categories.push({
      scan_type: s.scan_type, category, scan_id: s.id, status: s.status, block_status: s.block_status,
      secret_count: s.secret_count, vulnerability_count: s.vulnerability_count, created_at: s.created_at,
    });
    if (s.block_status) reasons.push(reasonOf(s, category));
  }
  return {
    pr_id: prID, blocked: reasons.length > 0, head_sha: null, reasons, categories,
    policy: null, evaluated_at: new Date().toISOString(),
  };
}

function reasonOf(s, category) {
  const r = {scan_type: s.scan_type, category, scan_id: s.id, count: s.secret_count + s.vulnerability_count};
  if (s.status === 'failed') return {kind: 'failed', ...r};
  if (s.status !== 'completed') return {kind: 'pending', ...r};
  return {kind: 'findings', ...r};
}

// reasonText says a reason in words.
export function reasonText(r) {
  const what = `${r.scan_type} (${r.category})`;
  switch (r.kind) {
    case 'findings':
      return `${what}: ${r.count} unsuppressed finding${r.count === 1 ? '' : 's'} in scan #${r.scan_id}`;
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
