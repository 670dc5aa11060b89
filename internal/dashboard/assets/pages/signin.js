// Sign in: single sign-on through the organisation's OpenID provider
// (authorization code with PKCE S256, state and nonce; the code is
// exchanged by POST /auth/oidc/session) and/or the password form (POST
// /auth/token), as config.json says; then GET /users/me for the header.

import {call, session, Problem, signInSettings} from '../api.js';
import {h, alert, field} from '../dom.js';

export const name = 'signin';

// SSO keeps the sign-in under way (state, nonce, PKCE verifier, redirect
// URI) in this tab's sessionStorage while the person is at the provider.
const SSO = 'scangate.sso';

function randomString() {
  const b = new Uint8Array(32);
  crypto.getRandomValues(b);
  return base64url(b);
}

function base64url(bytes) {
  let s = '';
  for (const b of new Uint8Array(bytes)) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

// startSSO sends the person to the provider with a new authorization
// request.
async function startSSO(sso) {
  const pending = {state: randomString(), nonce: randomString(), verifier: randomString(), redirect: location.origin + location.pathname};
  const challenge = base64url(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(pending.verifier)));
  sessionStorage.setItem(SSO, JSON.stringify(pending));
  const u = new URL(sso.authorization_endpoint);
  for (const [k, v] of Object.entries({
    response_type: 'code', client_id: sso.client_id, redirect_uri: pending.redirect, scope: sso.scope,
    state: pending.state, nonce: pending.nonce, code_challenge: challenge, code_challenge_method: 'S256',
  })) u.searchParams.set(k, v);
  location.assign(u.toString());
}

// finishSSO handles the provider's answer in the URL's query (code and
// state, or error), once: it leaves the URL without them. It answers the
// message to show when the sign-in failed, or null once signed in.
async function finishSSO(ctx) {
  const q = new URLSearchParams(location.search);
  const pending = JSON.parse(sessionStorage.getItem(SSO) || 'null');
  sessionStorage.removeItem(SSO);
  history.replaceState(null, '', location.pathname + location.hash);
  if (q.get('error')) return `The sign-in provider refused: ${q.get('error_description') || q.get('error')}.`;
  if (!pending || !q.get('state') || q.get('state') !== pending.state) {
    return 'The answer of the sign-in provider does not belong to a sign-in started here. Sign in again.';
  }
  try {
    const t = await call('POST', '/auth/oidc/session', {auth: false, body: {
      code: q.get('code') || '', code_verifier: pending.verifier, redirect_uri: pending.redirect, nonce: pending.nonce,
    }});
    session.start(t.access_token);
    const me = await call('GET', '/users/me');
    ctx.signedIn(t.access_token, me);
    return null;
  } catch (err) {
    session.end();
    if (err instanceof Problem && err.status === 401) return 'The sign-in could not be verified. Sign in again.';
    return err.message;
  }
}

export async function render(view, ctx) {
  if (session.token() && session.user()) {
    ctx.go('#/');
    return;
  }
  const settings = signInSettings();
  const errors = h('div', {'aria-live': 'assertive'});
  const parts = [errors];
  if (settings.sso) {
    const sso = h('button', {type: 'button', class: 'sso'}, 'Sign in with single sign-on');
    sso.addEventListener('click', async () => {
      sso.disabled = true;
      try {
        await startSSO(settings.sso);
      } catch (err) {
        errors.replaceChildren(alert(err.message));
        sso.disabled = false;
      }
    });
    parts.push(h('div', {class: 'actions'}, sso));
  }
  if (settings.passwordLogin) parts.push(passwordForm(ctx, errors, settings.sso !== null));
  view.append(
    h('div', {class: 'narrow'},
      h('h1', {}, 'Sign in to scangate'),
      h('p', {class: 'lead'}, 'Triage the findings that block pull requests.'),
      ...parts));
  const q = new URLSearchParams(location.search);
  if (q.has('code') || q.has('error')) {
    const failed = await finishSSO(ctx);
    if (failed) errors.append(alert(failed));
  }
}

// passwordForm is the username and password form (break-glass, below
// single sign-on when both are on).
function passwordForm(ctx, errors, withSSO) {
  const username = h('input', {id: 'username', name: 'username', autocomplete: 'username', required: true, autocapitalize: 'none', spellcheck: 'false'});
  const password = h('input', {id: 'password', name: 'password', type: 'password', autocomplete: 'current-password', required: true});
  const button = h('button', {type: 'submit'}, 'Sign in');
  const form = h('form', {class: 'signin', novalidate: true},
    withSSO ? h('p', {class: 'hint'}, 'Or with a scangate password:') : null,
    field('Username', username),
    field('Password', password),
    h('div', {class: 'actions'}, button));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    errors.replaceChildren();
    if (!username.value || !password.value) {
      errors.append(alert('Enter your username and password.'));
      (username.value ? password : username).focus();
      return;
    }
    button.disabled = true;
    try {
      const t = await call('POST', '/auth/token', {auth: false, body: {username: username.value, password: password.value}});
      session.start(t.access_token);
      const me = await call('GET', '/users/me');
      password.value = '';
      ctx.signedIn(t.access_token, me);
    } catch (err) {
      session.end();
      let message = err.message;
      if (err instanceof Problem && err.status === 401) message = 'The username or password is not right.';
      if (err instanceof Problem && err.status === 429) message = 'Too many failed sign-ins for this username. Try again later.';
      errors.append(alert(message));
      password.focus();
    } finally {
      button.disabled = false;
    }
  });
  return form;
}
