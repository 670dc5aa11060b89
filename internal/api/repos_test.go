package api_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/scangate/scangate/internal/ops"
	"github.com/scangate/scangate/internal/scangate"
)

// scopedRoutes are the operations a token scoped to repositories may call:
// recording scans and reading scans, PRs, gates, findings, branches,
// uploads and a PR's SARIF.
var scopedRoutes = map[string]bool{
	"record-scan": true, "record-sarif": true, "create-sarif-upload": true, "get-sarif-upload": true,
	"get-scan": true, "get-pr": true, "list-pr-scans": true, "list-prs": true, "get-pr-gate": true, "list-findings": true,
	"get-branch": true, "list-branches": true, "list-pr-absent": true, "get-pr-sarif": true,
}

// envelopeOf is the envelope of a recording of PR number pr of repository
// repo of version-control system 10, with extra members.
func envelopeOf(repo, pr int64, extra string) string {
	return fmt.Sprintf(`{"vc_type":"github","vc_id":10,"vc_name":"acme","repo_id":%d,"repo_name":"acme/r%d","webhook_id":3,`+
		`"pr":{"pr_id":%d,"pr_name":"n","pr_link":"https://git.example.com/pull/%d"}%s}`, repo, repo, pr, pr, extra)
}

const emptySARIF = `,"sarif":{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"gitleaks"}},"results":[]}]}`

// scopedCaller creates a personal token of the caller with body and
// returns its caller, as the authorizer answers for it.
func (h *harness) scopedCaller(c *scangate.Caller, body string) (scangate.Caller, map[string]any) {
	h.t.Helper()
	tok := mustOK(h.t, h.createToken(c, body))
	sc, err := h.callerOf(tok["access_token"].(string))
	if err != nil {
		h.t.Fatal(err)
	}
	return sc, tok
}

// TestRepoScopedToken: a token scoped to repositories records scans of
// those only (403 for another, nothing written), reads scans, PRs, gates,
// findings, branches and uploads of those only (404 for another's, as for
// an id nothing has; listings filtered), shows its repositories in its
// metadata, and is 403 on every other operation of the table, called
// with the other repository's ids. Every operation it may call is tried
// against the other repository.
func TestRepoScopedToken(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	// Repository 100 (PR 7) is the token's, 200 (PR 8) another's.
	mine := mustOK(t, h.call("record-scan", jsonReq(&h.admin, scanReq{RepoID: 100, PR: 7, Findings: []string{"sha256:aa"}}.body())))
	theirs := mustOK(t, h.call("record-scan", jsonReq(&h.admin, scanReq{RepoID: 200, PR: 8, Findings: []string{"sha256:bb"}}.body())))
	theirUpload := mustOK(t, h.call("create-sarif-upload", jsonReq(&h.admin, envelopeOf(200, 8, ""))))
	myBranch := mustOK(t, h.call("record-scan", jsonReq(&h.admin, branchBody("main", ""))))
	theirBranch := mustOK(t, h.call("record-scan", jsonReq(&h.admin, strings.Replace(branchBody("main", ""), `"repo_id":100`, `"repo_id":200`, 1))))
	tried := map[string]bool{} // the operations tried against the other repository
	ci, tok := h.scopedCaller(&h.admin, `{"name":"ci","scope":"scan","repos":[{"vc_id":10,"repo_id":100},{"vc_id":11,"repo_id":5}]}`)
	want := `[map[repo_id:100 vc_id:10] map[repo_id:5 vc_id:11]]`
	if got := fmt.Sprint(tok["repos"]); got != want {
		t.Errorf("the new token's repos: %s", got)
	}
	listed := decodePage(t, h.read("list-tokens", &h.admin, nil, ""))
	found := false
	for _, it := range listed.Items {
		if it["id"] == tok["id"] {
			found = true
			if got := fmt.Sprint(it["repos"]); got != want {
				t.Errorf("the listed token's repos: %s; want %s", got, want)
			}
		} else if it["repos"] != nil {
			t.Errorf("an unscoped token lists repos %v", it["repos"])
		}
	}
	if !found {
		t.Fatalf("the scoped token is not listed: %v", listed.Items)
	}

	// Recording: its repository, not another's.
	mustOK(t, h.call("record-scan", jsonReq(&ci, scanReq{RepoID: 100, PR: 7, Status: "completed"}.body())))
	mustOK(t, h.call("record-sarif", jsonReq(&ci, envelopeOf(100, 7, emptySARIF))))
	mustOK(t, h.call("create-sarif-upload", jsonReq(&ci, envelopeOf(100, 7, ""))))
	before := len(h.items())
	for fn, body := range map[string]string{
		"record-scan":         scanReq{RepoID: 200, PR: 8, Status: "completed"}.body(),
		"record-sarif":        envelopeOf(200, 8, emptySARIF),
		"create-sarif-upload": envelopeOf(200, 8, ""),
	} {
		for _, b := range []string{body, strings.Replace(body, `"vc_id":10`, `"vc_id":11`, 1)} { // the repository's id under another system
			resp := h.call(fn, jsonReq(&ci, b))
			tried[fn] = true
			if resp.StatusCode != 403 || !strings.Contains(resp.Body, "may not record scans of repository") {
				t.Errorf("%s for another repository: %d %s; want 403", fn, resp.StatusCode, resp.Body)
			}
		}
	}
	if after := len(h.items()); after != before {
		t.Errorf("refused recordings stored %d items", after-before)
	}

	// Reading: its repository's records, another's are absent.
	id := func(m map[string]any, k string) string { return fmt.Sprint(int64(m[k].(float64))) }
	myScan, theirScan := id(mine, "id"), id(theirs, "id")
	myPR, theirPR := id(mine, "pr_id"), id(theirs, "pr_id")
	branchOf := func(m map[string]any) string { return id(m["branch"].(map[string]any), "branch_id") }
	for _, c := range []struct {
		fn, param, ok, absent string
	}{
		{"get-scan", "pr_scan_id", myScan, theirScan},
		{"list-findings", "pr_scan_id", myScan, theirScan},
		{"get-pr", "pr_id", myPR, theirPR},
		{"get-pr-gate", "pr_id", myPR, theirPR},
		{"list-pr-scans", "pr_id", myPR, theirPR},
		{"get-sarif-upload", "upload_id", "", id(theirUpload, "id")},
		{"get-branch", "branch_id", branchOf(myBranch), branchOf(theirBranch)},
		{"list-pr-absent", "pr_id", myPR, theirPR},
		{"get-pr-sarif", "pr_id", myPR, theirPR},
	} {
		tried[c.fn] = true
		if c.ok != "" {
			if resp := h.read(c.fn, &ci, map[string]string{c.param: c.ok}, ""); resp.StatusCode != 200 {
				t.Errorf("%s of its repository: %d %s", c.fn, resp.StatusCode, resp.Body)
			}
		}
		absent := h.read(c.fn, &ci, map[string]string{c.param: c.absent}, "")
		nothing := h.read(c.fn, &h.admin, map[string]string{c.param: "999999"}, "")
		if absent.StatusCode != 404 || nothing.StatusCode != 404 {
			t.Errorf("%s of another repository: %d %s (an id nothing has: %d); want 404", c.fn, absent.StatusCode, absent.Body, nothing.StatusCode)
		}
		if admin := h.read(c.fn, &h.admin, map[string]string{c.param: c.absent}, ""); admin.StatusCode != 200 {
			t.Errorf("%s by an unscoped token: %d %s", c.fn, admin.StatusCode, admin.Body)
		}
	}
	prsOf := func(query string) []string {
		var out []string
		for _, it := range decodePage(t, h.read("list-prs", &ci, nil, query)).Items {
			out = append(out, fmt.Sprint(it["repo_id"]))
		}
		return out
	}
	if got := prsOf(""); fmt.Sprint(got) != "[100]" {
		t.Errorf("list-prs: the PRs of repositories %v; want only 100's", got)
	}
	for _, q := range []string{"vc_id=10&repo_id=200", "vc_id=10&repo_id=200&number=8", "vc_id=10&repo_id=200&blocked=true"} {
		if got := prsOf(q); len(got) != 0 {
			t.Errorf("list-prs?%s: %v; want none", q, got)
		}
	}
	if got := prsOf("vc_id=10&repo_id=100&number=7"); fmt.Sprint(got) != "[100]" {
		t.Errorf("list-prs of its PR by number: %v", got)
	}
	tried["list-prs"] = true
	// Branches: its repository's listed, another's an empty page (also by
	// name), as of a repository with no branch.
	for q, want := range map[string]int{"vc_id=10&repo_id=100": 1, "vc_id=10&repo_id=200": 0, "vc_id=10&repo_id=200&name=main": 0, "vc_id=11&repo_id=100": 0} {
		if got := decodePage(t, h.read("list-branches", &ci, nil, q)).Items; len(got) != want {
			t.Errorf("list-branches?%s: %v; want %d", q, got, want)
		}
		if got := decodePage(t, h.read("list-branches", &h.admin, nil, q)).Items; q == "vc_id=10&repo_id=200" && len(got) != 1 {
			t.Errorf("list-branches?%s by an unscoped token: %v", q, got)
		}
	}
	tried["list-branches"] = true
	for fn := range scopedRoutes {
		if !tried[fn] {
			t.Errorf("%s is not tried against another repository", fn)
		}
	}

	// Nothing else of the service, whatever the route.
	before = len(h.items())
	for _, op := range ops.Operations() {
		if op.API == nil || op.Name == "login" || op.Name == "exchange-oidc-token" || scopedRoutes[op.Name] {
			continue
		}
		r := jsonReq(&ci, `{}`)
		// Every path id the routes take, naming the other repository's
		// records (or the first of a kind).
		r.params = map[string]string{"pr_id": theirPR, "pr_scan_id": theirScan, "branch_id": branchOf(theirBranch), "upload_id": id(theirUpload, "id"),
			"repo_id": "200", "vc_id": "10", "user_id": "1", "whitelist_id": "1", "token_id": "1", "webhook_id": "1", "delivery_id": "1",
			"reevaluation_id": "1", "name": "ci"}
		if resp := h.call(op.Name, r); resp.StatusCode != 403 {
			t.Errorf("%s with a token scoped to repositories: %d %s; want 403", op.Name, resp.StatusCode, resp.Body)
		}
	}
	if after := len(h.items()); after != before {
		t.Errorf("refused calls stored %d items", after-before)
	}
}

// TestRepoScopedTokenRefused: the repositories of a new token are 1 to 100,
// each with positive ids, none twice: 422 and nothing stored otherwise.
func TestRepoScopedTokenRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	many := make([]string, scangate.MaxTokenRepos+1)
	for i := range many {
		many[i] = fmt.Sprintf(`{"vc_id":1,"repo_id":%d}`, i+1)
	}
	before := len(h.items())
	for name, repos := range map[string]string{
		"none":         `[]`,
		"too many":     "[" + strings.Join(many, ",") + "]",
		"twice":        `[{"vc_id":1,"repo_id":2},{"vc_id":1,"repo_id":2}]`,
		"a zero id":    `[{"vc_id":0,"repo_id":2}]`,
		"a negative":   `[{"vc_id":1,"repo_id":-2}]`,
		"no repo_id":   `[{"vc_id":1}]`,
		"an extra":     `[{"vc_id":1,"repo_id":2,"name":"x"}]`,
		"not an array": `{"vc_id":1,"repo_id":2}`,
		"null":         `null`,
		"a string":     `["1/2"]`,
	} {
		expectProblem(t, h.createToken(&h.admin, `{"name":"ci","repos":`+repos+`}`), 422)
		_ = name
	}
	if after := len(h.items()); after != before {
		t.Errorf("refused tokens stored %d items", after-before)
	}
	ok := make([]string, scangate.MaxTokenRepos)
	copy(ok, many)
	mustOK(t, h.createToken(&h.admin, `{"name":"ci","repos":[`+strings.Join(ok, ",")+`]}`))
}

// TestRepoScopedWriteCheckRoundTrips: the repositories of a scoped token
// are checked in the write check's one read: recording with a scoped
// token makes as many round trips as with an unscoped one, and its
// refusal one (the check's) and no write.
func TestRepoScopedWriteCheckRoundTrips(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	mustOK(t, h.call("record-scan", jsonReq(&h.admin, scanReq{RepoID: 100, PR: 7, Status: "completed"}.body())))
	scoped, _ := h.scopedCaller(&h.admin, `{"name":"scoped","scope":"scan","repos":[{"vc_id":10,"repo_id":100}]}`)
	plain, _ := h.scopedCaller(&h.admin, `{"name":"plain","scope":"scan"}`)
	trips := func(c *scangate.Caller, repo int64, status int) int64 {
		return h.env.CountTrips(func() {
			if resp := h.call("record-scan", jsonReq(c, scanReq{RepoID: repo, PR: 7, Status: "completed"}.body())); resp.StatusCode != status {
				t.Fatalf("record-scan: %d %s; want %d", resp.StatusCode, resp.Body, status)
			}
		})
	}
	p, s := trips(&plain, 100, 201), trips(&scoped, 100, 201)
	if s != p {
		t.Errorf("a recording with a scoped token: %d round trips; with an unscoped one %d", s, p)
	}
	if r := trips(&scoped, 200, 403); r != 1 {
		t.Errorf("a refused recording: %d round trips; want 1 (the write check)", r)
	}
}

// TestRepoScopeNeverWidens: an authorizer's answer whose repos are empty
// or not of their form reaches no repository; it is never taken for a
// token of every repository.
func TestRepoScopeNeverWidens(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	sc := mustOK(t, h.call("record-scan", jsonReq(&h.admin, scanReq{RepoID: 100, PR: 7, Status: "completed"}.body())))
	id := fmt.Sprint(int64(sc["id"].(float64)))
	for _, repos := range []string{"", "x", "10/100/1", "0/100"} {
		r := request{caller: &h.admin, params: map[string]string{"pr_scan_id": id}}
		if resp := h.callWith(r, "get-scan", map[string]any{"repos": repos}); resp.StatusCode != 404 {
			t.Errorf("repos %q: %d %s; want 404", repos, resp.StatusCode, resp.Body)
		}
	}
	if resp := h.call("get-scan", request{caller: &h.admin, params: map[string]string{"pr_scan_id": id}}); resp.StatusCode != 200 {
		t.Errorf("without repos: %d %s", resp.StatusCode, resp.Body)
	}
}

// TestRepoScopedAbsentRoundTrips: the absent findings of a PR read with a
// token scoped to repositories are checked against the PR the page reads
// (no read of it before): as many round trips as with an unscoped token,
// of its repository or (refused, 404) another's.
func TestRepoScopedAbsentRoundTrips(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	mine := mustOK(t, h.call("record-scan", jsonReq(&h.admin, scanReq{RepoID: 100, PR: 7, Status: "completed"}.body())))
	theirs := mustOK(t, h.call("record-scan", jsonReq(&h.admin, scanReq{RepoID: 200, PR: 8, Status: "completed"}.body())))
	scoped, _ := h.scopedCaller(&h.admin, `{"name":"scoped","scope":"scan","repos":[{"vc_id":10,"repo_id":100}]}`)
	trips := func(c *scangate.Caller, pr map[string]any, status int) int64 {
		return h.env.CountTrips(func() {
			resp := h.read("list-pr-absent", c, map[string]string{"pr_id": fmt.Sprint(int64(pr["pr_id"].(float64)))}, "")
			if resp.StatusCode != status {
				t.Fatalf("list-pr-absent: %d %s; want %d", resp.StatusCode, resp.Body, status)
			}
		})
	}
	for _, pr := range []map[string]any{mine, theirs} {
		status := 200
		if pr["pr_id"] == theirs["pr_id"] {
			status = 404
		}
		if s, a := trips(&scoped, pr, status), trips(&h.admin, pr, 200); s != a {
			t.Errorf("list-pr-absent (%d) with a scoped token: %d round trips; with an unscoped one %d", status, s, a)
		}
	}
}
