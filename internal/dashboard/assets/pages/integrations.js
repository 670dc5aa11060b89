// Integrations (admins): the version-control API through which scangate
// posts each pull request's gate as a commit status, per vc_id (GET and
// PUT /integrations/{vc_id}). Its token is written here, in a password
// field, and never shown back: the API says only whether one is set.

import {call, find, Problem} from '../api.js';
import {h, append, when, field, fieldError, select, alert, adminOnly, userText, safeURL, idSection, confirmDelete} from '../dom.js';

export const name = 'integrations';

// defaults are the API URLs the API uses when none is given.
const defaults = {github: 'https://api.github.com', gitlab: 'https://gitlab.com/api/v4'};
const types = [['github', 'GitHub'], ['gitlab', 'GitLab']];

export async function render(view, ctx) {
  const id = ctx.params[0];
  view.append(h('h1', {}, id ? `Integration ${id}` : 'Integrations'));
  let current = null;
  if (id) {
    try {
      current = await find(`/integrations/${id}`);
    } catch (err) {
      adminOnly(view, err, 'read and change integrations');
      return;
    }
  }
  append(view, [
    h('p', {class: 'lead'}, 'scangate posts each pull request\'s gate as a commit status named scangate, through the integration of the pull request\'s vc_id: the API of GitHub (or GitHub Enterprise Server) or of GitLab, with a token you give it here.'),
    id ? [facts(id, current), putForm(id, current, ctx), current ? deleteSection(id, ctx) : null] : null,
    idSection(ctx, {id: 'in-vc', heading: id ? 'Another integration' : 'An integration', label: 'Integration id (vc_id)',
      hint: 'The vc_id your scans carry.', button: 'Show it', to: (vc) => `#/integrations/${vc}`})]);
}

// facts says how the integration is set up, never its token.
function facts(id, c) {
  if (!c) return h('p', {class: 'empty'}, `Not set up: no commit status is posted for the pull requests of integration ${id}.`);
  return h('dl', {class: 'facts'},
    h('dt', {}, 'Type'), h('dd', {}, types.find(([v]) => v === c.type)?.[1] ?? c.type),
    h('dt', {}, 'API URL'), h('dd', {class: 'mono wrap'}, c.api_url),
    h('dt', {}, 'Token'), h('dd', {'data-token-set': String(c.token_set)}, c.token_set ? 'Set (never shown)' : 'Not set'),
    h('dt', {}, 'Updated'), h('dd', {}, when(c.updated_at), ` by ${userText(c.updated_by)}`));
}

// putForm sets the integration up, or changes it (PUT is whole: an API
// URL left empty, or one of the defaults, follows the type's default).
function putForm(id, c, ctx) {
  const type = select('in-type', types, c?.type ?? 'github');
  const url = h('input', {id: 'in-api-url', type: 'url', value: c && !Object.values(defaults).includes(c.api_url) ? c.api_url : '',
    spellcheck: 'false', autocomplete: 'off', class: 'mono', maxlength: 2048});
  const token = h('input', {id: 'in-token', type: 'password', autocomplete: 'new-password', spellcheck: 'false', maxlength: 1024});
  const errors = h('div', {'aria-live': 'assertive'});
  const form = h('form', {class: 'edit', novalidate: true, 'aria-labelledby': 'in-heading'},
    h('h2', {id: 'in-heading'}, c ? 'Change it' : 'Set it up'),
    errors,
    field('Type', type),
    field('API URL (optional)', url, `Empty: ${defaults.github} for GitHub, ${defaults.gitlab} for GitLab. GitHub Enterprise Server: https://HOST/api/v3.`),
    field(c?.token_set ? 'Replace the token (optional)' : 'Token', token, c?.token_set
      ? 'Empty: the stored token is kept. It is stored sealed and never shown.'
      : 'A token allowed to post commit statuses. It is stored sealed and never shown.'),
    h('div', {class: 'actions'}, h('button', {type: 'submit'}, 'Save')));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    errors.replaceChildren();
    fieldError(url, url.value && !safeURL(url.value) ? 'Enter an https URL, or nothing for the default.' : '');
    let tokenError = '';
    if (/\s/.test(token.value)) tokenError = 'A token has no spaces or line breaks.';
    else if (!token.value && !c?.token_set) tokenError = 'Enter the token: scangate has none for this integration.';
    fieldError(token, tokenError);
    const bad = form.querySelector('[aria-invalid="true"]');
    if (bad) {
      bad.focus();
      return;
    }
    const body = {type: type.value};
    if (url.value && !Object.values(defaults).includes(url.value.replace(/\/+$/, ''))) body.api_url = url.value;
    if (token.value) body.token = token.value;
    try {
      const r = await call('PUT', `/integrations/${id}`, {body});
      token.value = '';
      ctx.say(`Saved integration ${id}: ${r.type}, ${r.api_url}, ${r.token_set ? 'a token set' : 'no token'}.`);
      ctx.reload();
    } catch (err) {
      errors.append(alert(err.message));
      const controls = {type, api_url: url, token};
      for (const fe of err instanceof Problem ? err.errors : []) {
        const el = controls[(fe.pointer || '').split('/')[1]];
        if (el) fieldError(el, fe.detail);
      }
    }
  });
  return form;
}

// deleteSection deletes the integration once confirmed (DELETE
// /integrations/{vc_id}): its sealed token is deleted with it.
function deleteSection(id, ctx) {
  return confirmDelete({
    heading: 'Delete it',
    hint: 'To post statuses with another token or API, change it instead (above).',
    question: `Delete integration ${id}?`,
    detail: ' No commit status is posted for its pull requests any more, its pending statuses are cancelled and its token is deleted.',
    button: `Delete integration ${id}`,
    remove: async () => {
      await call('DELETE', `/integrations/${id}`);
      ctx.say(`Deleted integration ${id}.`);
      ctx.reload();
    }});
}
