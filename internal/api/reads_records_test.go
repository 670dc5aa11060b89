package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scangate/scangate/internal/scangate"
)

// TestPRAndItsScans: GET /pr/{pr_id} is the PR object of spec 2.2, GET
// /pr/{pr_id}/scans its scans newest first, each exactly as GET
// /pr/scan/{id} shows it, filtered by type; unknown PRs are 404 and bad
// ids 422, for every role that may read.
func TestPRAndItsScans(t *testing.T) {
	h := newHarness(t)
	reader := h.member("rita", scangate.RoleReadonly)
	mustOK(t, h.record(scanReq{Type: "SECRET", VcID: 1, RepoID: 10, PR: 5, Findings: []string{"sha256:aa"}}))
	mustOK(t, h.record(scanReq{Type: "VULNERABILITY", VcID: 1, RepoID: 10, PR: 5, Status: "completed"}))
	mustOK(t, h.record(scanReq{VcID: 1, RepoID: 10, PR: 6}))
	last := mustOK(t, h.record(scanReq{Type: "SECRET", VcID: 1, RepoID: 10, PR: 5, Status: "completed"}))
	for _, c := range []*scangate.Caller{&h.admin, &reader} {
		pr := mustOK(t, h.read("get-pr", c, map[string]string{"pr_id": "1"}, ""))
		b, _ := json.Marshal(last["pr"])
		sameJSON(t, "GET /pr/1", pr, string(b))
		if got := sortedKeys(pr); !slices.Equal(got, []string{"base_ref", "base_sha", "created_at", "id", "last_scan", "pr_id", "pr_link", "pr_name",
			"repo_id", "secret_count", "vc_id", "vulnerability_count", "webhook_id"}) {
			t.Errorf("PR members %v", got)
		}
		scans := h.walk("list-pr-scans", c, map[string]string{"pr_id": "1"}, "/api/pr/1/scans", "", 2, true)
		if got := ids(scans); !slices.Equal(got, []int{4, 2, 1}) {
			t.Fatalf("the PR's scans %v; want 4, 2, 1", got)
		}
		for _, sc := range scans {
			id := strconv.Itoa(int(sc["id"].(float64)))
			b, _ := json.Marshal(mustOK(t, h.get(&h.admin, id)))
			sameJSON(t, "scan "+id+" as listed", sc, string(b))
		}
		if got := ids(h.walk("list-pr-scans", c, map[string]string{"pr_id": "1"}, "/api/pr/1/scans", "scan_type=SECRET", 1, true)); !slices.Equal(got, []int{4, 1}) {
			t.Errorf("the PR's secret scans %v; want 4, 1", got)
		}
		if got := ids(h.walk("list-pr-scans", c, map[string]string{"pr_id": "2"}, "/api/pr/2/scans", "scan_type=VULNERABILITY", 3, true)); len(got) != 0 {
			t.Errorf("PR 2 has no vulnerability scan, but lists %v", got)
		}
	}
	for fn, ps := range map[string][]map[string]string{"get-pr": {{"pr_id": "3"}, {"pr_id": "9223372036854775807"}}, "list-pr-scans": {{"pr_id": "3"}}} {
		for _, p := range ps {
			if ptrs := expectProblem(t, h.read(fn, &reader, p, ""), http.StatusNotFound); ptrs != nil {
				t.Errorf("%s %v: pointers %v", fn, p, ptrs)
			}
		}
	}
	for _, bad := range []string{"0", "abc", "01", "9223372036854775808"} {
		for _, fn := range []string{"get-pr", "list-pr-scans"} {
			expectProblem(t, h.read(fn, &reader, map[string]string{"pr_id": bad}, ""), http.StatusUnprocessableEntity)
		}
	}
	for _, fn := range []string{"get-pr", "list-pr-scans"} {
		expectProblem(t, h.read(fn, nil, map[string]string{"pr_id": "1"}, ""), http.StatusUnauthorized)
	}
}

// TestListPRs: PR objects by last scan, newest first, each as GET
// /pr/{pr_id} shows it; filtered by repository (its ids, or its name
// ignoring case) and by blocked state.
func TestListPRs(t *testing.T) {
	h := newHarness(t)
	reader := h.member("rita", scangate.RoleReadonly)
	step := func(s scanReq) {
		mustOK(t, h.record(s))
		time.Sleep(2 * time.Millisecond) // distinct last_scan times, so the order is known in advance
	}
	step(scanReq{VcID: 1, RepoID: 10, PR: 1, Status: "completed", Findings: []string{"sha256:aa"}}) // PR 1: blocked
	step(scanReq{VcID: 1, RepoID: 10, PR: 2, Status: "completed"})                                  // PR 2: clean
	step(scanReq{VcID: 2, RepoID: 20, PR: 1, Status: "pending", RepoName: "Acme/Web"})              // PR 3: blocked (pending)
	step(scanReq{VcID: 1, RepoID: 10, PR: 2, Type: "VULNERABILITY", Status: "failed"})              // PR 2: blocked by its VULNERABILITY scan
	step(scanReq{VcID: 1, RepoID: 10, PR: 1, Status: "completed"})                                  // PR 1: clean again, newest
	mustOK(t, h.allow(`{"type":"SECRET","name":"sha256:aa","global_":true}`))
	for query, want := range map[string][]int{
		"":                                      {1, 2, 3},
		"blocked=true":                          {2, 3},
		"blocked=false":                         {1},
		"vc_id=1&repo_id=10":                    {1, 2},
		"vc_id=1&repo_id=10&blocked=true":       {2},
		"vc_id=2&repo_id=20":                    {3},
		"vc_id=2&repo_id=10":                    {},
		"repo_name=acme/api":                    {1, 2},
		"repo_name=ACME/api&blocked=true":       {2},
		"repo_name=acme/web":                    {3},
		"vc_id=1&repo_id=10&repo_name=acme/web": {},
		"vc_id=1&repo_id=10&number=2&repo_name=acme/api": {2},
		"vc_id=1&repo_id=10&number=2&repo_name=acme/web": {},
		"repo_name=acme": {},
	} {
		for _, limit := range []int{1, 3, 100} {
			got := h.walk("list-prs", &reader, nil, "/api/pr", query, limit, true)
			if !slices.Equal(ids(got), want) {
				t.Errorf("GET /pr?%s limit %d: %v; want %v", query, limit, ids(got), want)
			}
			if strings.Contains(query, "number=") {
				continue
			}
			for _, pr := range got {
				b, _ := json.Marshal(mustOK(t, h.read("get-pr", &reader, map[string]string{"pr_id": strconv.Itoa(int(pr["id"].(float64)))}, "")))
				sameJSON(t, "PR as listed", pr, string(b))
			}
		}
	}
}

// TestAllowlistReads: GET /whitelist/{whitelist_id} in the shape of
// section 6, its comments as objects oldest first; GET /whitelist newest
// first, filtered by type, name (as suppression matches) and active.
func TestAllowlistReads(t *testing.T) {
	h := newHarness(t)
	reader := h.member("rita", scangate.RoleReadonly)
	created := mustOK(t, h.allow(`{"type":"SECRET","name":"sha256:AA","repos":[3,1],"comment":"a test fixture"}`))
	mustOK(t, h.modify(1, `{"vcs":[7],"comment":"and in gitlab"}`))
	a := mustOK(t, h.read("get-allowlist", &reader, map[string]string{"whitelist_id": "1"}, ""))
	at := func(v any) string { return strconv.Quote(v.(string)) }
	comments := a["comments"].([]any)
	if len(comments) != 2 {
		t.Fatalf("comments %v", a["comments"])
	}
	sameJSON(t, "GET /whitelist/1", a, `{"id":1,"type":"SECRET","name":"sha256:AA","active":true,"global_":false,"repos":[3,1],"vcs":[7],`+
		`"paths":[],"fingerprints":[],"reason":"false_positive","expires_at":null,"expired":false,"comments":[`+
		`{"id":1,"comment":"a test fixture","created_by":1,"created_on":`+at(comments[0].(map[string]any)["created_on"])+`},`+
		`{"id":2,"comment":"and in gitlab","created_by":1,"created_on":`+at(comments[1].(map[string]any)["created_on"])+`}],`+
		`"created_by":1,"created_on":`+at(created["created_on"])+`,"updated_by":1,"updated_on":`+at(a["updated_on"])+`}`)
	if a["updated_on"].(string) < a["created_on"].(string) || comments[1].(map[string]any)["created_on"] != a["updated_on"] {
		t.Errorf("times: %v", a)
	}
	mustOK(t, h.allow(`{"type":"SECRET","name":"sha256:aa"}`))                            // 2
	mustOK(t, h.allow(`{"type":"VULNERABILITY","name":"CVE-2021-44228","active":false}`)) // 3
	mustOK(t, h.allow(`{"type":"VULNERABILITY","name":"cve-2021-44228"}`))                // 4
	mustOK(t, h.allow(`{"type":"VULNERABILITY","name":"sha256:AA"}`))                     // 5
	for query, want := range map[string][]int{
		"":                                {5, 4, 3, 2, 1},
		"type=SECRET":                     {2, 1},
		"type=VULNERABILITY":              {5, 4, 3},
		"active=false":                    {3},
		"active=true&type=VULNERABILITY":  {5, 4},
		"name=sha256:AA":                  {5, 1},
		"name=sha256:aa":                  {5, 2},
		"name=SHA256:AA":                  {5},
		"name=CVE-2021-44228":             {4, 3},
		"name=cve-2021-44228&active=true": {4},
		"name=CVE-2021-4422":              {},
	} {
		got := h.walk("list-allowlists", &reader, nil, "/api/whitelist", query, 2, true)
		if !slices.Equal(ids(got), want) {
			t.Errorf("GET /whitelist?%s: %v; want %v", query, ids(got), want)
		}
		for _, it := range got {
			full := mustOK(t, h.read("get-allowlist", &reader, map[string]string{"whitelist_id": strconv.Itoa(int(it["id"].(float64)))}, ""))
			var cids []any
			for _, c := range full["comments"].([]any) {
				cids = append(cids, c.(map[string]any)["id"])
			}
			full["comments"] = append([]any{}, cids...)
			b, _ := json.Marshal(full)
			sameJSON(t, "allowlist as listed (comment ids)", it, string(b))
		}
	}
	expectProblem(t, h.read("get-allowlist", &reader, map[string]string{"whitelist_id": "6"}, ""), http.StatusNotFound)
	expectProblem(t, h.read("get-allowlist", &reader, map[string]string{"whitelist_id": "x"}, ""), http.StatusUnprocessableEntity)
	expectProblem(t, h.read("list-allowlists", nil, nil, ""), http.StatusUnauthorized)
}

// TestUserReads: any role reads itself (by id and as /users/me); only
// admins read other users (403 otherwise, whatever the id) and list them,
// by id, filtered by role and active.
func TestUserReads(t *testing.T) {
	h := newHarness(t)
	una := h.member("una", scangate.RoleUser)
	rita := h.member("rita", scangate.RoleReadonly)
	vic := h.member("vic", scangate.RoleUser)
	mustOK(t, h.call("update-user", request{caller: &h.admin, params: map[string]string{"user_id": "4"},
		body: `{"role":"user","active":false,"user_email":"vic@example.com"}`, headers: map[string]string{"Content-Type": "application/json"}}))
	for _, c := range []*scangate.Caller{&h.admin, &una, &rita} {
		self := strconv.FormatInt(c.ID, 10)
		me := mustOK(t, h.read("get-me", c, nil, ""))
		byID := mustOK(t, h.read("get-user", c, map[string]string{"user_id": self}, ""))
		b, _ := json.Marshal(byID)
		sameJSON(t, c.Username+": /users/me", me, string(b))
		if me["username"] != c.Username || me["role"] != string(c.Role) || len(me) != 10 || strings.Contains(string(b), "password") {
			t.Errorf("%s reads itself as %v", c.Username, me)
		}
	}
	for _, c := range []*scangate.Caller{&una, &rita} {
		for _, id := range []string{"1", "4", "99", "abc", "0"} {
			expectProblem(t, h.read("get-user", c, map[string]string{"user_id": id}, ""), http.StatusForbidden)
		}
		expectProblem(t, h.read("list-users", c, nil, ""), http.StatusForbidden)
	}
	vicJSON := mustOK(t, h.read("get-user", &h.admin, map[string]string{"user_id": "4"}, ""))
	if vicJSON["active"] != false || vicJSON["username"] != "vic" {
		t.Errorf("admin reads vic as %v", vicJSON)
	}
	expectProblem(t, h.read("get-user", &h.admin, map[string]string{"user_id": "99"}, ""), http.StatusNotFound)
	expectProblem(t, h.read("get-user", &h.admin, map[string]string{"user_id": "abc"}, ""), http.StatusUnprocessableEntity)
	for _, fn := range []string{"get-me", "get-user", "list-users"} {
		expectProblem(t, h.read(fn, nil, map[string]string{"user_id": "1"}, ""), http.StatusUnauthorized)
	}
	_ = vic
	for query, want := range map[string][]int{
		"":                        {1, 2, 3, 4},
		"role=user":               {2, 4},
		"role=user&active=true":   {2},
		"active=false":            {4},
		"role=readonly":           {3},
		"role=admin&active=false": {},
	} {
		got := h.walk("list-users", &h.admin, nil, "/api/users", query, 3, true)
		if !slices.Equal(ids(got), want) {
			t.Errorf("GET /users?%s: %v; want %v", query, ids(got), want)
		}
		for _, u := range got {
			b, _ := json.Marshal(mustOK(t, h.read("get-user", &h.admin, map[string]string{"user_id": strconv.Itoa(int(u["id"].(float64)))}, "")))
			sameJSON(t, "user as listed", u, string(b))
		}
	}
}

// TestReadRoles: admin, user and readonly read scans' findings, PRs and
// their scans, allowlists and themselves; only admins list users or read
// another user; without a caller every read is 401.
func TestReadRoles(t *testing.T) {
	h := newHarness(t)
	mustOK(t, h.record(scanReq{VcID: 1, RepoID: 10, PR: 5, Findings: []string{"sha256:aa"}}))
	mustOK(t, h.allow(`{"type":"SECRET","name":"sha256:aa","global_":true}`))
	una := h.member("una", scangate.RoleUser)
	rita := h.member("rita", scangate.RoleReadonly)
	routes := []struct {
		fn     string
		params map[string]string
		admin  bool // admins only
	}{
		{"list-findings", map[string]string{"pr_scan_id": "1"}, false},
		{"get-pr", map[string]string{"pr_id": "1"}, false},
		{"list-pr-scans", map[string]string{"pr_id": "1"}, false},
		{"list-prs", nil, false},
		{"get-allowlist", map[string]string{"whitelist_id": "1"}, false},
		{"list-allowlists", nil, false},
		{"get-me", nil, false},
		{"get-user", map[string]string{"user_id": "1"}, true},
		{"list-users", nil, true},
	}
	for _, r := range routes {
		for _, c := range []*scangate.Caller{&h.admin, &una, &rita, nil} {
			resp := h.read(r.fn, c, r.params, "")
			switch {
			case c == nil:
				expectProblem(t, resp, http.StatusUnauthorized)
			case r.admin && c.Role != scangate.RoleAdmin:
				expectProblem(t, resp, http.StatusForbidden)
			case resp.StatusCode != http.StatusOK:
				t.Errorf("%s as %s: %d %s", r.fn, c.Role, resp.StatusCode, resp.Body)
			}
		}
	}
}

// TestAllowlistLifecycleRead: GET /whitelist/{whitelist_id} and GET
// /whitelist show an allowlist's paths, reason and expiry as stored, and
// expired once its expiry has been applied.
func TestAllowlistLifecycleRead(t *testing.T) {
	h := newHarness(t)
	expires := time.Now().Add(48 * time.Hour).UTC().Truncate(time.Millisecond).Format("2006-01-02T15:04:05.000Z")
	mustOK(t, h.allow(`{"type":"SECRET","name":"sha256:aa","global_":true,"reason":"used_in_tests","paths":["test/**","**/*.spec.ts"],"expires_at":"`+expires+`"}`))
	mustOK(t, h.allow(`{"type":"SECRET","name":"sha256:bb"}`))
	one := map[string]string{"whitelist_id": "1"}
	a := mustOK(t, h.read("get-allowlist", &h.admin, one, ""))
	sameJSON(t, "lifecycle", map[string]any{"paths": a["paths"], "reason": a["reason"], "expires_at": a["expires_at"], "expired": a["expired"]},
		`{"paths":["test/**","**/*.spec.ts"],"reason":"used_in_tests","expires_at":"`+expires+`","expired":false}`)
	if _, err := h.env.Store.ExpireDue(context.Background(), time.Now().Add(49*time.Hour), 0); err != nil {
		t.Fatal(err)
	}
	if a := mustOK(t, h.read("get-allowlist", &h.admin, one, "")); a["expired"] != true || a["expires_at"] != expires {
		t.Errorf("after its expiry: %v", a)
	}
	listed := h.walk("list-allowlists", &h.admin, nil, "/api/whitelist", "", 1, true)
	if len(listed) != 2 || listed[1]["expired"] != true || listed[0]["expired"] != false || listed[0]["reason"] != "false_positive" ||
		len(listed[0]["paths"].([]any)) != 0 || listed[1]["reason"] != "used_in_tests" {
		t.Errorf("listed: %v", listed)
	}
}
