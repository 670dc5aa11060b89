// Names the API's objects lack: a pull request object carries its
// repository's id, not its name, which each of its scans carries. Each
// repository's name is read once (one scan of one of its PRs) and kept for
// the session.

import {call} from './api.js';

const repos = new Map(); // "vc_id/repo_id": Promise of {repo, vc}
const known = new Set(); // the repositories' names learnt so far

function key(pr) {
  return `${pr.vc_id}/${pr.repo_id}`;
}

// repoOf answers {repo, vc}: the repository's and the integration's names
// of a PR, from its newest scan; of another object with vc_id and repo_id
// (a branch), from the scan that first gives (undefined when it has none).
export function repoOf(pr, first = () => call('GET', `/pr/${pr.id}/scans`, {query: {limit: 1}}).then((page) => page.items[0])) {
  const k = key(pr);
  if (!repos.has(k)) {
    repos.set(k, Promise.resolve(first()).then((s) => {
      if (s) known.add(s.repo_name);
      return s ? {repo: s.repo_name, vc: s.vc_name} : {repo: `repository ${pr.repo_id}`, vc: `integration ${pr.vc_id}`};
    }, (err) => {
      repos.delete(k);
      throw err;
    }));
  }
  return repos.get(k);
}

// learn keeps the names a scan carries.
export function learn(scan) {
  const k = `${scan.vc_id}/${scan.repo_id}`;
  known.add(scan.repo_name);
  if (!repos.has(k)) repos.set(k, Promise.resolve({repo: scan.repo_name, vc: scan.vc_name}));
}

// knownRepos is the names of the repositories learnt so far, sorted: what
// a person may pick from when naming one.
export function knownRepos() {
  return [...known].sort();
}
