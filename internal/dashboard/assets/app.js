// The dashboard: a router on the URL's fragment (#/pr/7, #/whitelist/3,
// #/gate/policy/repos/101, #/webhooks/2, #/integrations/1),
// the header, and the life of a page. Pages are in pages/.

import {configure, session, call} from './api.js';
import {h, alert, status} from './dom.js';
import * as signIn from './pages/signin.js';
import * as prs from './pages/prs.js';
import * as pr from './pages/pr.js';
import * as allowlists from './pages/allowlists.js';
import * as allowlist from './pages/allowlist.js';
import * as audit from './pages/audit.js';
import * as tokens from './pages/tokens.js';
import * as policy from './pages/policy.js';
import * as repoPolicy from './pages/repopolicy.js';
import * as webhooks from './pages/webhooks.js';
import * as webhook from './pages/webhook.js';
import * as integrations from './pages/integrations.js';
import * as health from './pages/health.js';

// routes: the fragment's path, and the page that shows it.
const routes = [
  [/^\/signin$/, signIn, false],
  [/^\/(?:prs)?$/, prs, true],
  [/^\/pr\/([1-9][0-9]{0,18})$/, pr, true],
  [/^\/whitelist$/, allowlists, true],
  [/^\/whitelist\/([1-9][0-9]{0,18})$/, allowlist, true],
  [/^\/audit$/, audit, true],
  [/^\/tokens$/, tokens, true],
  [/^\/gate\/policy$/, policy, true],
  [/^\/gate\/policy\/repos\/([1-9][0-9]{0,18})$/, repoPolicy, true],
  [/^\/webhooks$/, webhooks, true],
  [/^\/webhooks\/([1-9][0-9]{0,18})$/, webhook, true],
  [/^\/integrations(?:\/([1-9][0-9]{0,18}))?$/, integrations, true],
  [/^\/health$/, health, true],
];

const main = document.getElementById('main');
let flash = null; // a message for the next page shown
let after = null; // where to go once signed in
let shown = 0; // the number of the page being shown

// go shows the page of a fragment (#/...), adding it to the history.
export function go(hash) {
  if (location.hash === hash) show();
  else location.hash = hash;
}

function parse() {
  const raw = location.hash.replace(/^#/, '') || '/';
  const [path, q] = raw.split('?', 2);
  return {path, query: new URLSearchParams(q || '')};
}

async function show() {
  const n = ++shown;
  const {path, query} = parse();
  const route = routes.find(([re]) => re.test(path));
  header();
  const view = h('div', {class: 'view'});
  main.replaceChildren(view);
  main.setAttribute('aria-busy', 'true');
  if (!route) {
    main.dataset.page = 'missing';
    view.append(h('h1', {tabindex: '-1'}, 'Page not found'),
      h('p', {}, 'No page has this address. ', h('a', {href: '#/'}, 'Show the blocked pull requests.')));
    done(n, view);
    return;
  }
  const [re, page, needsSession] = route;
  if (needsSession && !session.token()) {
    after = location.hash;
    go('#/signin');
    return;
  }
  main.dataset.page = page.name;
  if (flash) {
    view.append(flash);
    flash = null;
  }
  const ctx = {
    params: re.exec(path).slice(1),
    query,
    go,
    reload: show,
    // say keeps a message for the next page shown (after go or reload).
    say(message, ok = true) {
      flash = ok ? status(message) : alert(message);
    },
    signedIn(token, user) {
      session.start(token);
      session.setUser(user);
      const next = after && after !== '#/signin' ? after : '#/';
      after = null;
      go(next);
    },
    signOut,
  };
  try {
    await page.render(view, ctx);
  } catch (err) {
    view.append(alert(err.message));
    if (!view.querySelector('h1')) view.prepend(h('h1', {tabindex: '-1'}, 'Something went wrong'));
  }
  done(n, view);
}

// done marks the page shown (aria-busy false, data-view its number),
// names the tab after its h1 and moves the focus there, unless another
// page was asked for meanwhile.
function done(n, view) {
  if (n !== shown) return;
  main.setAttribute('aria-busy', 'false');
  main.dataset.view = String(n);
  const h1 = view.querySelector('h1');
  document.title = h1 ? `${h1.textContent} · scangate` : 'scangate';
  if (h1) {
    h1.setAttribute('tabindex', '-1');
    h1.focus({preventScroll: true});
  }
}

// header shows the navigation while signed in.
function header() {
  const nav = document.getElementById('nav');
  const user = session.user();
  if (!session.token() || !user) {
    nav.hidden = true;
    nav.replaceChildren();
    return;
  }
  const current = location.hash.replace(/\?.*$/, '') || '#/';
  const link = (href, text, also = []) => h('li', {}, h('a', {href,
    'aria-current': current === href || also.some((p) => current.startsWith(p)) ? 'page' : null}, text));
  nav.hidden = false;
  nav.replaceChildren(
    h('ul', {},
      link('#/', 'Pull requests', ['#/prs', '#/pr/']),
      link('#/whitelist', 'Allowlists', ['#/whitelist/']),
      user.role === 'admin' ? link('#/gate/policy', 'Gate policy', ['#/gate/']) : null,
      user.role === 'admin' ? link('#/audit', 'Audit log') : null,
      user.role === 'admin' ? link('#/webhooks', 'Webhooks', ['#/webhooks/']) : null,
      user.role === 'admin' ? link('#/integrations', 'Integrations', ['#/integrations/']) : null,
      user.role === 'admin' ? link('#/health', 'Health') : null,
      link('#/tokens', 'Tokens')),
    h('p', {class: 'who'}, 'Signed in as ', h('strong', {}, user.username), ` (${user.role})`),
    h('button', {type: 'button', class: 'secondary', onclick: () => signOut()}, 'Sign out'));
}

// signOut revokes the session's token (DELETE /auth/token) and forgets it.
async function signOut(message = 'You are signed out.') {
  try {
    if (session.token()) await call('DELETE', '/auth/token');
  } catch {
    // A token the API no longer takes is as good as revoked.
  }
  session.end();
  flash = status(message);
  go('#/signin');
}

// unauthorized: the API refused the token (expired, revoked, or its user
// deactivated): the session ends and sign-in follows.
function unauthorized() {
  if (!session.token()) return;
  session.end();
  after = location.hash;
  flash = alert('Your session has ended. Sign in again.');
  go('#/signin');
}

async function start() {
  document.querySelector('.skip').addEventListener('click', (e) => {
    e.preventDefault();
    main.focus();
  });
  try {
    await configure(unauthorized);
  } catch (err) {
    main.replaceChildren(h('h1', {}, 'The dashboard cannot start'), alert(err.message));
    main.setAttribute('aria-busy', 'false');
    return;
  }
  window.addEventListener('hashchange', show);
  show();
}

start();
