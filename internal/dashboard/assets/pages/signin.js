// Sign in: POST /auth/token, then GET /users/me for the header.

import {call, session, Problem} from '../api.js';
import {h, alert, field} from '../dom.js';

export const name = 'signin';

export async function render(view, ctx) {
  if (session.token() && session.user()) {
    ctx.go('#/');
    return;
  }
  const username = h('input', {id: 'username', name: 'username', autocomplete: 'username', required: true, autocapitalize: 'none', spellcheck: 'false'});
  const password = h('input', {id: 'password', name: 'password', type: 'password', autocomplete: 'current-password', required: true});
  const errors = h('div', {'aria-live': 'assertive'});
  const button = h('button', {type: 'submit'}, 'Sign in');
  const form = h('form', {class: 'signin', novalidate: true},
    errors,
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
  view.append(
    h('div', {class: 'narrow'},
      h('h1', {}, 'Sign in to scangate'),
      h('p', {class: 'lead'}, 'Triage the findings that block pull requests.'),
      form));
}
