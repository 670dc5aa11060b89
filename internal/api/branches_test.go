package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
)

// branchBody is a branch analysis to record: POST /pr/scan with branch
// in place of pr.
func branchBody(branch string, extra string) string {
	name, _ := json.Marshal(branch)
	return fmt.Sprintf(`{"scan_type":"SECRET","vc_type":"github","vc_id":10,"vc_name":"acme-github","repo_id":100,"repo_name":"acme/api",`+
		`"webhook_id":3,"branch":%s,"status":"completed","commit_sha":"%s","findings":[{"name":"sha256:aa","path":"a.go","line":3}]%s}`,
		name, strings.Repeat("c", 40), extra)
}

// TestBranchAnalysisShape: POST /pr/scan with branch records a branch
// analysis (refs/heads/ removed): it shows branch {branch_id, name},
// pr_id and pr null, GET /pr/scan/{id} answers the same, and no pull
// request exists. GET /branches/{branch_id} and GET /branches (by name,
// &name= one) show the branch with its newest scan per (type,
// category), in at most 3 round trips.
func TestBranchAnalysisShape(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	resp := h.call("record-scan", jsonReq(&h.admin, branchBody("refs/heads/main", "")))
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("record: %d %s", resp.StatusCode, resp.Body)
	}
	sc := decode(t, resp)
	want := []string{"block_status", "branch", "created_at", "id", "other_details", "pr", "pr_id", "repo_id", "repo_name", "scan_type",
		"secret_count", "stat_url", "status", "vc_id", "vc_name", "vc_type", "vulnerability_count", "webhook_id"}
	if k := sortedKeys(sc); !reflect.DeepEqual(k, want) {
		t.Fatalf("scan fields %v; want %v", k, want)
	}
	if sc["pr"] != nil || sc["pr_id"] != nil || !reflect.DeepEqual(sc["branch"], map[string]any{"branch_id": 1.0, "name": "main"}) ||
		sc["secret_count"] != 1.0 {
		t.Errorf("branch analysis %s", resp.Body)
	}
	if got := h.get(&h.admin, "1"); got.Body != resp.Body {
		t.Errorf("GET answers %s\nbut the record answered %s", got.Body, resp.Body)
	}
	if prs := mustOK(t, h.read("list-prs", &h.admin, nil, "")); len(prs["items"].([]any)) != 0 {
		t.Errorf("a branch analysis made pull requests: %v", prs)
	}
	mustOK(t, h.call("record-scan", jsonReq(&h.admin, branchBody("dev", `,"category":"gitleaks"`))))
	var got events.APIGatewayProxyResponse
	if trips := h.env.CountTrips(func() { got = h.read("get-branch", &h.admin, map[string]string{"branch_id": "1"}, "") }); trips > 3 {
		t.Errorf("get branch: %d round trips; budget 3", trips)
	}
	b := mustOK(t, got)
	wantB := map[string]any{"branch_id": 1.0, "vc_id": 10.0, "repo_id": 100.0, "name": "main", "last_scan": sc["created_at"],
		"categories": []any{map[string]any{"scan_type": "SECRET", "category": "default", "scan_id": 1.0, "commit_sha": strings.Repeat("c", 40),
			"created_at": sc["created_at"], "secret_count": 1.0, "vulnerability_count": 0.0}}}
	if !reflect.DeepEqual(b, wantB) {
		t.Errorf("GET /branches/1 = %v\nwant %v", b, wantB)
	}
	list := mustOK(t, h.read("list-branches", &h.admin, nil, "vc_id=10&repo_id=100&limit=1"))
	items := list["items"].([]any)
	if len(items) != 1 || items[0].(map[string]any)["name"] != "dev" || list["next_cursor"] == nil {
		t.Fatalf("the first page: %v", list)
	}
	next := mustOK(t, h.read("list-branches", &h.admin, nil, "vc_id=10&repo_id=100&limit=1&cursor="+list["next_cursor"].(string)))
	if items := next["items"].([]any); len(items) != 1 || !reflect.DeepEqual(items[0], b) || next["next_cursor"] != nil {
		t.Errorf("the second page: %v", next)
	}
	one := mustOK(t, h.read("list-branches", &h.admin, nil, "vc_id=10&repo_id=100&name=refs/heads/main"))
	if items := one["items"].([]any); len(items) != 1 || !reflect.DeepEqual(items[0], b) {
		t.Errorf("by name: %v", one)
	}
	none := mustOK(t, h.read("list-branches", &h.admin, nil, "vc_id=10&repo_id=100&name=nope"))
	if items := none["items"].([]any); len(items) != 0 {
		t.Errorf("an unknown name: %v", none)
	}
	expectProblem(t, h.read("get-branch", &h.admin, map[string]string{"branch_id": "9"}, ""), 404)
	expectProblem(t, h.read("list-branches", &h.admin, nil, "vc_id=10"), 422)
	expectProblem(t, h.read("list-branches", &h.admin, nil, "vc_id=10&repo_id=100&name=refs/heads/"), 422)
	// The audit entry names the branch.
	entries := h.auditEntries("scan.record")
	if len(entries) != 2 {
		t.Fatalf("%d scan.record entries for 2 analyses", len(entries))
	}
	ch, _ := json.Marshal(entries[1].Changes)
	if !strings.Contains(string(ch), `"branch"`) || strings.Contains(string(ch), `"pr_id"`) {
		t.Errorf("the entry's changes %s; want the branch, no pr_id", ch)
	}
}

// TestBranchAnalysisBadInput: exactly one of pr and branch; a branch of
// 1 to 255 characters (after refs/heads/), no control characters. Each
// is 422 and records nothing.
func TestBranchAnalysisBadInput(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	both := strings.Replace(branchBody("main", ""), `"branch":"main"`, `"branch":"main","pr":{"pr_id":1,"pr_name":"n","pr_link":"l"}`, 1)
	neither := strings.Replace(branchBody("main", ""), `"branch":"main",`, ``, 1)
	for name, body := range map[string]string{
		"both":      both,
		"neither":   neither,
		"empty":     branchBody("", ""),
		"only refs": branchBody("refs/heads/", ""),
		"control":   branchBody("ma\u0007in", ""),
		"too long":  branchBody(strings.Repeat("b", 256), ""),
		"not text":  strings.Replace(branchBody("main", ""), `"branch":"main"`, `"branch":7`, 1),
	} {
		resp := h.call("record-scan", jsonReq(&h.admin, body))
		if resp.StatusCode != 422 || resp.Headers["Content-Type"] != "application/problem+json" {
			t.Errorf("%s: %d %s", name, resp.StatusCode, resp.Body)
		}
	}
	mustOK(t, h.call("record-scan", jsonReq(&h.admin, branchBody(strings.Repeat("b", 255), ""))))
	for _, it := range h.items() {
		if strings.Contains(it["SK"], "SCAN") && it["id"] != `{"Value":"1"}` {
			t.Errorf("a refused body stored %v", it)
		}
	}
}

// TestBranchAnalysisFromSARIF: POST /pr/scan/sarif with branch records
// the log's scans for the branch (refs/heads/ removed), none for a pull
// request; the upload route takes branch too, and keeps it for the
// ingest.
func TestBranchAnalysisFromSARIF(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	b, _ := json.Marshal(golden(t, "gitleaks.sarif"))
	env := `{"vc_type":"github","vc_id":10,"vc_name":"acme","repo_id":100,"repo_name":"acme/api","webhook_id":3,` +
		`"branch":"refs/heads/main","sarif":` + string(b) + `}`
	out := mustOK(t, h.send("record-sarif", &h.admin, events.APIGatewayProxyRequest{Body: env, Headers: map[string]string{"Content-Type": "application/json"}}))
	scans := out["scans"].([]any)
	if len(scans) == 0 {
		t.Fatalf("no scans: %v", out)
	}
	for _, s := range scans {
		sc := s.(map[string]any)
		if sc["pr"] != nil || sc["pr_id"] != nil || !reflect.DeepEqual(sc["branch"], map[string]any{"branch_id": 1.0, "name": "main"}) {
			t.Errorf("a SARIF branch analysis: %v", sc)
		}
	}
	if prs := mustOK(t, h.read("list-prs", &h.admin, nil, "")); len(prs["items"].([]any)) != 0 {
		t.Errorf("a branch analysis made pull requests: %v", prs)
	}
	up := h.call("create-sarif-upload", jsonReq(&h.admin, `{"vc_type":"github","vc_id":10,"vc_name":"acme","repo_id":100,"repo_name":"acme/api",`+
		`"webhook_id":3,"branch":"main"}`))
	if up.StatusCode != http.StatusCreated {
		t.Errorf("create upload for a branch: %d %s", up.StatusCode, up.Body)
	}
	both := h.call("create-sarif-upload", jsonReq(&h.admin, `{"vc_type":"github","vc_id":10,"vc_name":"acme","repo_id":100,"repo_name":"acme/api",`+
		`"webhook_id":3,"branch":"main","pr":{"pr_id":7,"pr_name":"n","pr_link":"l"}}`))
	expectProblem(t, both, 422)
}
