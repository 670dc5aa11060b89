// The API client: where the API is (config.json), the session's token (in
// sessionStorage only: never a URL, a cookie or localStorage) and RFC 9457
// problem details as errors.

const TOKEN = 'scangate.token';
const USER = 'scangate.user';

let base = '/api';
let onUnauthorized = () => {};

// configure reads config.json ({"api_url": ...}), written beside the
// dashboard's files when it is deployed and served by the local server.
export async function configure(unauthorized) {
  onUnauthorized = unauthorized;
  const r = await fetch('config.json', {cache: 'no-store', credentials: 'omit'});
  if (!r.ok) throw new Error(`config.json answered ${r.status}`);
  const c = await r.json();
  base = String(c.api_url).replace(/\/+$/, '');
}

// session is the signed-in user, kept for this tab only.
export const session = {
  token: () => sessionStorage.getItem(TOKEN),
  user: () => JSON.parse(sessionStorage.getItem(USER) || 'null'),
  start(token) {
    sessionStorage.setItem(TOKEN, token);
  },
  setUser(user) {
    sessionStorage.setItem(USER, JSON.stringify({id: user.id, username: user.username, role: user.role}));
  },
  // tokenID is the id a scangate token carries (sgt_<id>_<secret>).
  tokenID() {
    const m = /^sgt_([1-9][0-9]*)_/.exec(this.token() || '');
    return m ? Number(m[1]) : null;
  },
  end() {
    sessionStorage.removeItem(TOKEN);
    sessionStorage.removeItem(USER);
  },
};

// Problem is an error answer of the API (problem details).
export class Problem extends Error {
  constructor(status, body) {
    super((body && (body.detail || body.title)) || `the API answered ${status}`);
    this.status = status;
    this.problem = body || {};
  }

  // errors are the validation errors, each {pointer|parameter, detail}.
  get errors() {
    return Array.isArray(this.problem.errors) ? this.problem.errors : [];
  }
}

// call sends a request to the API: path below the base URL, query
// parameters (empty ones left out), a JSON body. It answers the parsed
// body (null for 204) or throws a Problem.
export async function call(method, path, {query, body, auth = true} = {}) {
  let url = base + path;
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query || {})) {
    if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  }
  if ([...q].length) url += '?' + q;
  const headers = {Accept: 'application/json'};
  if (auth) {
    const token = session.token();
    if (!token) {
      const p = new Problem(401, {title: 'Unauthorized', detail: 'sign in first'});
      onUnauthorized(p);
      throw p;
    }
    headers.Authorization = 'Bearer ' + token;
  }
  const init = {method, headers, credentials: 'omit', cache: 'no-store', referrerPolicy: 'no-referrer'};
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const r = await fetch(url, init);
  if (r.status === 204) return null;
  const text = await r.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = null;
  }
  if (!r.ok) {
    const p = new Problem(r.status, data && typeof data === 'object' ? data : {title: r.statusText});
    if (r.status === 401 && auth) onUnauthorized(p);
    throw p;
  }
  return data;
}

// find reads one resource: null when the API answers 404.
export async function find(path) {
  try {
    return await call('GET', path);
  } catch (err) {
    if (err instanceof Problem && err.status === 404) return null;
    throw err;
  }
}
