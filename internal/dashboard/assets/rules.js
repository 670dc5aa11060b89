// What allowlist forms and pages share: reasons, scopes, paths.

import {call, Problem} from './api.js';
import {h, plural, alert, fieldError} from './dom.js';

export const reasons = [
  ['false_positive', 'False positive'],
  ['used_in_tests', 'Used in tests'],
  ['accepted_risk', 'Accepted risk'],
  ['wont_fix', "Won't fix"],
  ['revoked', 'Revoked (the secret was rotated)'],
];

export function reasonLabel(value) {
  const r = reasons.find(([v]) => v === value);
  return r ? r[1] : value || '—';
}

// scopeText says where an allowlist applies.
export function scopeText(a) {
  if (a.global_) return 'Global';
  const parts = [];
  if (a.repos.length) parts.push(`${a.repos.length === 1 ? 'repository' : 'repositories'} ${a.repos.join(', ')}`);
  if (a.vcs.length) parts.push(`${a.vcs.length === 1 ? 'integration' : 'integrations'} ${a.vcs.join(', ')}`);
  return parts.length ? parts.join('; ') : 'Nowhere (neither global nor naming a repository or an integration)';
}

// stateText: Active, Inactive or Expired.
export function stateText(a) {
  if (a.expired) return 'Expired';
  return a.active ? 'Active' : 'Inactive';
}

// paths reads a textarea of globs, one a line.
export function paths(text) {
  return text.split('\n').map((s) => s.trim()).filter(Boolean);
}

// ids reads a list of positive ids separated by commas or spaces; null
// when one is not an id.
export function ids(text) {
  const list = text.split(/[\s,]+/).filter(Boolean);
  return list.every((s) => /^[1-9][0-9]{0,18}$/.test(s)) ? list.map(Number) : null;
}

// changedText says what an allowlist change did (its change response): the
// counts, or, for a change answered 202, that its re-evaluation runs.
export function changedText(r) {
  const re = r.reevaluation;
  if (re && re.status !== 'complete') {
    const what = re.findings == null ? 'its findings' : plural(re.findings, 'finding');
    return `Re-evaluation #${re.id} of ${what} runs in the background: ` +
      'counts and gates change as it goes, with nothing to send again.';
  }
  return `It changed how ${plural(r.secrets_updated, 'secret finding')} and ` +
    `${plural(r.vulnerabilities_updated, 'vulnerability finding')} are judged.`;
}

// link to an allowlist's page.
export function allowlistLink(id) {
  return h('a', {href: `#/whitelist/${id}`}, `allowlist #${id}`);
}

// pointerField maps a problem's pointer (/reason, /paths/0) to a form's
// control id.
export function pointerField(pointer) {
  return (pointer || '').split('/')[1] || '';
}

// createAllowlist sends a form's POST /whitelist with submit disabled
// meanwhile: done(r) follows the creation; an error is shown in errors
// and beside the controls (by member name) its pointers name.
export async function createAllowlist(body, {submit, errors, controls}, done) {
  submit.disabled = true;
  try {
    done(await call('POST', '/whitelist', {body}));
  } catch (err) {
    errors.append(alert(err.message));
    if (err instanceof Problem) {
      for (const fe of err.errors) {
        const c = controls[pointerField(fe.pointer)];
        if (c) fieldError(c, fe.detail);
      }
    }
  } finally {
    submit.disabled = false;
  }
}
