package api_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/scangate/scangate/internal/scangate"
)

// gate reads a pull request's gate as the admin.
func (h *harness) gate(pr int) map[string]any {
	h.t.Helper()
	return mustOK(h.t, h.read("get-pr-gate", &h.admin, map[string]string{"pr_id": strconv.Itoa(pr)}, ""))
}

// setPolicy puts the global gate policy (repo 0) or a repository's.
func (h *harness) setPolicy(repo int, body string) events.APIGatewayProxyResponse {
	h.t.Helper()
	if repo == 0 {
		return h.call("update-gate-policy", jsonReq(&h.admin, body))
	}
	r := jsonReq(&h.admin, body)
	r.params = map[string]string{"repo_id": strconv.Itoa(repo)}
	return h.call("update-repo-gate-policy", r)
}

// reasons is a gate's reasons as kind:type/category:count.
func reasons(g map[string]any) []string {
	var out []string
	for _, r := range g["reasons"].([]any) {
		m := r.(map[string]any)
		out = append(out, fmt.Sprintf("%s:%s/%s:%v", m["kind"], m["scan_type"], m["category"], m["count"]))
	}
	return out
}

// categories is a gate's categories as type/category=scan id.
func categories(g map[string]any) []string {
	var out []string
	for _, c := range g["categories"].([]any) {
		m := c.(map[string]any)
		out = append(out, fmt.Sprintf("%s/%s=%v", m["scan_type"], m["category"], m["scan_id"]))
	}
	return out
}

// TestCategoriesStandSideBySide: scans of one type and pull request but
// of different categories stand side by side; a newer scan replaces only
// its own category's; the PR's counts are the sums over the newest scan
// of each (type, category); every scan shows its category in
// other_details.
func TestCategoriesStandSideBySide(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	rec := func(typ, category string, findings ...string) map[string]any {
		t.Helper()
		extra := ""
		if category != "" {
			extra = `,"category":"` + category + `"`
		}
		return mustOK(t, h.record(scanReq{Type: typ, Status: "completed", Findings: findings, Extra: extra}))
	}
	rec("SECRET", "gitleaks", "sha256:aa", "sha256:bb")          // 1
	rec("SECRET", "trufflehog", "sha256:cc")                     // 2
	rec("VULNERABILITY", "", "CVE-2021-44228")                   // 3: category default
	sc := rec("VULNERABILITY", "semgrep/python", "B602", "B105") // 4
	if d := sc["other_details"].(map[string]any); d["category"] != "semgrep/python" {
		t.Errorf("other_details %v", d)
	}
	if pr := sc["pr"].(map[string]any); pr["secret_count"] != 3.0 || pr["vulnerability_count"] != 3.0 {
		t.Errorf("the PR counts %v/%v; want the sums 3/3", pr["secret_count"], pr["vulnerability_count"])
	}
	g := h.gate(1)
	sameJSON(t, "categories", categories(g), `["SECRET/gitleaks=1","SECRET/trufflehog=2","VULNERABILITY/default=3","VULNERABILITY/semgrep/python=4"]`)
	sameJSON(t, "reasons", reasons(g), `["findings:SECRET/gitleaks:2","findings:SECRET/trufflehog:1","findings:VULNERABILITY/default:1","findings:VULNERABILITY/semgrep/python:2"]`)
	// A clean gitleaks re-run replaces gitleaks' scan only.
	sc = rec("SECRET", "gitleaks")
	if pr := sc["pr"].(map[string]any); pr["secret_count"] != 1.0 {
		t.Errorf("after a clean gitleaks scan the PR counts %v secrets; want trufflehog's 1", pr["secret_count"])
	}
	g = h.gate(1)
	sameJSON(t, "categories after a clean re-scan", categories(g),
		`["SECRET/gitleaks=5","SECRET/trufflehog=2","VULNERABILITY/default=3","VULNERABILITY/semgrep/python=4"]`)
	if g["blocked"] != true || slices.Contains(reasons(g), "findings:SECRET/gitleaks:2") {
		t.Errorf("gate %v", reasons(g))
	}
	for body, ptr := range map[string]string{
		`,"category":""`:                                 "/category",
		`,"category":"semgrep python"`:                   "/category",
		`,"category":"` + strings.Repeat("c", 101) + `"`: "/category",
		`,"category":7`:                                  "/category",
	} {
		got := expectProblem(t, h.record(scanReq{Status: "completed", Extra: body}), 422)
		if !slices.Equal(got, []string{ptr}) {
			t.Errorf("%s: pointers %v", body, got)
		}
	}
	h.noDrift()
}

// TestSARIFCategories: real scanners' logs (bandit, semgrep, checkov and
// gitleaks, as they wrote them) record one scan per (type, category): four
// categories,
// separately and in one log, side by side; allowlisting every checkov
// finding unblocks checkov's category only (the PR stays blocked by
// bandit's and semgrep's); the envelope's category puts every run in it,
// a finding reported by two runs once.
func TestSARIFCategories(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var scans []map[string]any
	for _, tool := range []string{"gitleaks", "semgrep", "bandit", "checkov"} {
		out := mustOK(t, h.upload(golden(t, tool+".sarif"), ""))
		for _, s := range out["scans"].([]any) {
			scans = append(scans, s.(map[string]any))
		}
	}
	// Four categories side by side: semgrep's rule tagged secret makes
	// a SECRET scan of its category beside its VULNERABILITY one.
	g := h.gate(1)
	var got []string
	var secrets, vulns float64
	for _, c := range g["categories"].([]any) {
		m := c.(map[string]any)
		got = append(got, fmt.Sprint(m["scan_type"], "/", m["category"]))
		secrets += m["secret_count"].(float64)
		vulns += m["vulnerability_count"].(float64)
	}
	sameJSON(t, "categories", got, `["SECRET/gitleaks","SECRET/semgrep-oss","VULNERABILITY/bandit","VULNERABILITY/checkov","VULNERABILITY/semgrep-oss"]`)
	pr := mustOK(t, h.read("get-pr", &h.admin, map[string]string{"pr_id": "1"}, ""))
	if pr["secret_count"] != secrets || pr["vulnerability_count"] != vulns || vulns == 0 || secrets == 0 {
		t.Errorf("the PR counts %v/%v; its categories sum to %v/%v", pr["secret_count"], pr["vulnerability_count"], secrets, vulns)
	}
	// Allowlist every finding checkov made: its category unblocks, the PR does not.
	var checkov map[string]any
	for _, s := range scans {
		if s["other_details"].(map[string]any)["category"] == "checkov" {
			checkov = s
		}
	}
	done := map[string]bool{}
	for _, f := range h.walk("list-findings", &h.admin, map[string]string{"pr_scan_id": fmt.Sprint(checkov["id"])}, "", "", 100, false) {
		if name := f["name"].(string); !done[name] {
			done[name] = true
			mustOK(t, h.allow(fmt.Sprintf(`{"type":"VULNERABILITY","name":%q,"repos":[100]}`, name)))
		}
	}
	g = h.gate(1)
	if g["blocked"] != true || slices.ContainsFunc(reasons(g), func(r string) bool { return strings.Contains(r, "/checkov:") }) ||
		!slices.ContainsFunc(reasons(g), func(r string) bool { return strings.Contains(r, "/bandit:") }) {
		t.Errorf("after allowlisting checkov's findings: blocked %v by %v", g["blocked"], reasons(g))
	}
	listed := mustOK(t, h.read("list-prs", &h.admin, nil, "blocked=true"))
	if len(listed["items"].([]any)) != 1 {
		t.Errorf("GET /pr?blocked=true lists %v", listed["items"])
	}

	// All four in one log, for another PR: the same four scans.
	runs := []any{}
	for _, tool := range []string{"gitleaks", "semgrep", "bandit", "checkov"} {
		runs = append(runs, golden(t, tool+".sarif")["runs"].([]any)...)
	}
	one := mustOK(t, h.uploadRaw(mustJSON(map[string]any{"version": "2.1.0", "runs": runs}), `,"commit_sha":"`+strings.Repeat("ab", 20)+`"`))
	if n := len(one["scans"].([]any)); n != 5 {
		t.Errorf("one log of four tools recorded %d scans; want the same 5", n)
	}
	// With the envelope's category, every run is of it: one scan per type;
	// bandit's and semgrep's findings of one name, path and line are one.
	merged := mustOK(t, h.uploadRaw(mustJSON(map[string]any{"version": "2.1.0", "runs": runs}), `,"category":"ci/nightly"`))
	var types []string
	for _, s := range merged["scans"].([]any) {
		m := s.(map[string]any)
		types = append(types, fmt.Sprint(m["scan_type"], "/", m["other_details"].(map[string]any)["category"]))
	}
	sameJSON(t, "the scans of one category", types, `["SECRET/ci/nightly","VULNERABILITY/ci/nightly"]`)
	if merged["recorded"].(float64) > one["recorded"].(float64) {
		t.Errorf("merged %v findings, apart %v", merged["recorded"], one["recorded"])
	}
	h.noDrift()
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// TestCleanRescanUnblocks: a gitleaks run that finds nothing records a
// completed SECRET scan with no finding, which unblocks its category; a
// log without a run is refused.
func TestCleanRescanUnblocks(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	mustOK(t, h.upload(golden(t, "gitleaks.sarif"), ""))
	if g := h.gate(1); g["blocked"] != true {
		t.Fatalf("gitleaks' findings do not block: %v", g)
	}
	clean := map[string]any{"version": "2.1.0", "runs": []any{map[string]any{"tool": map[string]any{"driver": map[string]any{"name": "gitleaks", "version": "8.30.1"}}, "results": []any{}}}}
	out := mustOK(t, h.upload(clean, ""))
	scans := out["scans"].([]any)
	if len(scans) != 1 {
		t.Fatalf("a clean run recorded %d scans; want one", len(scans))
	}
	sc := scans[0].(map[string]any)
	if sc["scan_type"] != "SECRET" || sc["status"] != "completed" || sc["secret_count"] != 0.0 || sc["block_status"] != false {
		t.Errorf("the clean scan: %v", sc)
	}
	g := h.gate(1)
	if g["blocked"] != false || len(g["reasons"].([]any)) != 0 {
		t.Errorf("after a clean re-run: %v", g)
	}
	if l := mustOK(t, h.read("list-prs", &h.admin, nil, "blocked=false")); len(l["items"].([]any)) != 1 {
		t.Errorf("GET /pr?blocked=false: %v", l)
	}
	for _, log := range []string{`{"version":"2.1.0","runs":[]}`, `{"version":"2.1.0","runs":null}`} {
		if got := expectProblem(t, h.uploadRaw(log, ""), 422); !slices.Equal(got, []string{"/sarif/runs"}) {
			t.Errorf("%s: pointers %v", log, got)
		}
	}
	h.noDrift()
}

// TestSeverities: findings have a severity (POST /pr/scan: as sent,
// default high; SARIF: from the log), shown in the findings listing and
// filtered by it (?severity=high: high or above).
func TestSeverities(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	mustOK(t, h.recordWith(scanReq{Type: "VULNERABILITY", Status: "completed"}, `[`+
		`{"name":"CVE-1","severity":"critical"},{"name":"CVE-2","severity":"high"},{"name":"CVE-3"},`+
		`{"name":"CVE-4","severity":"medium"},{"name":"CVE-5","severity":"low"},{"name":"CVE-6","severity":"none"}]`))
	sev := func(query string) []string {
		var out []string
		for _, f := range h.walk("list-findings", &h.admin, map[string]string{"pr_scan_id": "1"}, "/api/pr/scan/1/findings", query, 2, true) {
			out = append(out, fmt.Sprint(f["name"], "=", f["severity"]))
		}
		return out
	}
	sameJSON(t, "all", sev(""), `["CVE-1=critical","CVE-2=high","CVE-3=high","CVE-4=medium","CVE-5=low","CVE-6=none"]`)
	sameJSON(t, "high or above", sev("severity=high"), `["CVE-1=critical","CVE-2=high","CVE-3=high"]`)
	sameJSON(t, "low or above", sev("severity=low&suppressed=false"), `["CVE-1=critical","CVE-2=high","CVE-3=high","CVE-4=medium","CVE-5=low"]`)
	expectProblem(t, h.read("list-findings", &h.admin, map[string]string{"pr_scan_id": "1"}, "severity=urgent"), 422)
	got := expectProblem(t, h.recordWith(scanReq{Type: "VULNERABILITY"}, `[{"name":"CVE-1","severity":"High"}]`), 422)
	if !slices.Equal(got, []string{"/findings/0/severity"}) {
		t.Errorf("pointers %v", got)
	}
	// SARIF: bandit's levels and semgrep's, as the log says.
	out := mustOK(t, h.upload(golden(t, "bandit.sarif"), ""))
	id := fmt.Sprint(out["scans"].([]any)[0].(map[string]any)["id"])
	seen := map[string]bool{}
	for _, f := range h.walk("list-findings", &h.admin, map[string]string{"pr_scan_id": id}, "", "", 100, false) {
		seen[f["severity"].(string)] = true
	}
	if len(seen) < 2 || seen[""] {
		t.Errorf("bandit's findings have severities %v", seen)
	}
	h.noDrift()
}

// TestGatePolicy: the global policy and a repository's decide the gate
// of every pull request, judged again when they change; counts never
// change with the policy; changes are audited, for admins only, and
// refused when malformed.
func TestGatePolicy(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	// PR 1 (repo 100): medium and low vulnerabilities; PR 2 (repo 200): a secret.
	mustOK(t, h.recordWith(scanReq{Type: "VULNERABILITY", Status: "completed", Extra: `,"category":"semgrep"`},
		`[{"name":"CVE-1","severity":"medium"},{"name":"CVE-2","severity":"low"}]`))
	mustOK(t, h.record(scanReq{RepoID: 200, PR: 8, Status: "completed", Findings: []string{"sha256:aa"}, Extra: `,"category":"gitleaks"`}))
	sameJSON(t, "the default policy", withoutMeta(mustOK(t, h.read("get-gate-policy", &h.admin, nil, ""))),
		`{"block_severity":{"SECRET":"none","VULNERABILITY":"none"},"required":[],"block_on_missing":true,"block_on":"all","version":0,"updated_at":null,"updated_by":null}`)
	if g := h.gate(1); g["blocked"] != true {
		t.Fatal("not blocked by default")
	}
	p := mustOK(t, h.setPolicy(0, `{"block_severity":{"VULNERABILITY":"high"}}`))
	sameJSON(t, "the change's work", p["rejudge"], `{"id":1,"status":"complete","prs":2}`)
	if p["version"] != 1.0 || p["updated_by"] != 1.0 || p["block_severity"].(map[string]any)["SECRET"] != "none" {
		t.Errorf("answer %v", p)
	}
	g := h.gate(1)
	if g["blocked"] != false || g["policy"].(map[string]any)["block_severity"].(map[string]any)["VULNERABILITY"] != "high" {
		t.Errorf("PR 1 under block_severity high: %v", g)
	}
	if s, v, b := h.counts(1); s != 0 || v != 2 || b {
		t.Errorf("scan 1 under block_severity high: %v/%v block %v; the counts stay, the block goes", s, v, b)
	}
	// Repository 100 requires a secret scan of gitleaks: missing, so blocked.
	r := mustOK(t, h.setPolicy(100, `{"required":[{"scan_type":"SECRET","category":"gitleaks"}]}`))
	if r["override"] == nil || r["effective"].(map[string]any)["block_severity"].(map[string]any)["VULNERABILITY"] != "high" || r["version"] != 2.0 {
		t.Errorf("repository policy %v", r)
	}
	sameJSON(t, "PR 1's reasons", reasons(h.gate(1)), `["missing:SECRET/gitleaks:0"]`)
	if g := h.gate(2); g["blocked"] != true || len(g["policy"].(map[string]any)["required"].([]any)) != 0 {
		t.Errorf("PR 2 (repo 200) follows the global policy: %v", g)
	}
	mustOK(t, h.setPolicy(100, `{"required":[{"scan_type":"SECRET","category":"gitleaks"}],"block_on_missing":false}`))
	if g := h.gate(1); g["blocked"] != false {
		t.Errorf("without block_on_missing: %v", reasons(g))
	}
	// DELETE returns the repository to the global policy.
	del := request{caller: &h.admin, params: map[string]string{"repo_id": "100"}}
	if d := mustOK(t, h.call("delete-repo-gate-policy", del)); d["override"] != nil || d["rejudge"].(map[string]any)["status"] != "complete" {
		t.Errorf("delete: %v", d)
	}
	if g := h.gate(1); g["blocked"] != false || len(g["policy"].(map[string]any)["required"].([]any)) != 0 {
		t.Errorf("after the delete: %v", g)
	}
	// Every change is audited.
	var changes []string
	for _, e := range h.auditEntries("gate.policy.update") {
		b, _ := json.Marshal(e.Changes)
		changes = append(changes, e.Target.ID+" "+string(b))
	}
	sameJSON(t, "audit", changes, `[`+
		`"100 {\"block_on_missing\":{\"from\":false,\"to\":true},\"override\":{\"from\":true,\"to\":false},\"required\":{\"from\":[{\"category\":\"gitleaks\",\"scan_type\":\"SECRET\"}],\"to\":[]}}",`+
		`"100 {\"block_on_missing\":{\"from\":true,\"to\":false}}",`+
		`"100 {\"override\":{\"from\":false,\"to\":true},\"required\":{\"from\":[],\"to\":[{\"category\":\"gitleaks\",\"scan_type\":\"SECRET\"}]}}",`+
		`"global {\"block_severity\":{\"from\":{\"SECRET\":\"none\",\"VULNERABILITY\":\"none\"},\"to\":{\"SECRET\":\"none\",\"VULNERABILITY\":\"high\"}}}"]`)
	// Admins only; bad bodies change nothing.
	user := h.member("uma", scangate.RoleUser)
	expectProblem(t, h.call("update-gate-policy", jsonReq(&user, `{}`)), 403)
	expectProblem(t, h.read("get-gate-policy", &user, nil, ""), 403)
	for body, ptrs := range map[string][]string{
		`{"block_severity":{"SECRET":"urgent"}}`:                                                     {"/block_severity/SECRET"},
		`{"block_severity":{"LICENSE":"high"}}`:                                                      {"/block_severity/LICENSE"},
		`{"required":[{"scan_type":"SECRET"}]}`:                                                      {"/required/0/category"},
		`{"required":[{"scan_type":"SECRET","category":"a b"}]}`:                                     {"/required/0/category"},
		`{"required":[{"scan_type":"SECRET","category":"x"},{"scan_type":"SECRET","category":"x"}]}`: {"/required/1"},
		`{"block_on_missing":"yes"}`:                                                                 {"/block_on_missing"},
		`{"block_on":"changed"}`:                                                                     {"/block_on"},
		`{"required":null}`:                                                                          {"/required"},
		`{"blocked":true}`:                                                                           {"/blocked"},
	} {
		if got := expectProblem(t, h.setPolicy(0, body), 422); !slices.Equal(got, ptrs) {
			t.Errorf("%s: pointers %v; want %v", body, got, ptrs)
		}
	}
	if p := mustOK(t, h.read("get-gate-policy", &h.admin, nil, "")); p["version"] != 4.0 {
		t.Errorf("refused changes moved the version: %v", p)
	}
	h.noDrift()
}

// withoutMeta drops a policy's rejudge.
func withoutMeta(p map[string]any) map[string]any {
	delete(p, "rejudge")
	return p
}

// TestGateRoute: GET /pr/{pr_id}/gate in its whole shape, read in two
// round trips, and the PR listing's blocked filter reads the same
// decision.
func TestGateRoute(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	sha := strings.Repeat("0123456789abcdef", 4)
	mustOK(t, h.record(scanReq{Status: "completed", Findings: []string{"sha256:aa"}, Extra: `,"category":"gitleaks","commit_sha":"` + sha[:40] + `","ref":"refs/pull/7/head"`}))
	mustOK(t, h.record(scanReq{Type: "VULNERABILITY", Status: "pending", Extra: `,"category":"trivy"`}))
	mustOK(t, h.record(scanReq{PR: 8, Status: "completed", Extra: `,"category":"gitleaks","commit_sha":"` + sha + `"`}))
	mustOK(t, h.record(scanReq{PR: 9, Status: "failed"}))
	var g map[string]any
	trips := h.env.CountTrips(func() { g = h.gate(1) })
	if trips > 2 {
		t.Errorf("the gate took %d round trips; the budget is 2", trips)
	}
	at := func(i int) string {
		return strconv.Quote(g["categories"].([]any)[i].(map[string]any)["created_at"].(string))
	}
	sameJSON(t, "gate", g, `{"pr_id":1,"blocked":true,"head_sha":"`+sha[:40]+`","base_ref":null,`+
		`"reasons":[{"kind":"findings","scan_type":"SECRET","category":"gitleaks","scan_id":1,"count":1,"new_count":1},`+
		`{"kind":"pending","scan_type":"VULNERABILITY","category":"trivy","scan_id":2,"count":0,"new_count":0}],`+
		`"categories":[{"scan_type":"SECRET","category":"gitleaks","scan_id":1,"status":"completed","block_status":true,"secret_count":1,"vulnerability_count":0,"created_at":`+at(0)+`,`+
		`"baseline":null,"new_count":1,"unchanged_count":0,"absent_count":0},`+
		`{"scan_type":"VULNERABILITY","category":"trivy","scan_id":2,"status":"pending","block_status":true,"secret_count":0,"vulnerability_count":0,"created_at":`+at(1)+`,`+
		`"baseline":null,"new_count":0,"unchanged_count":0,"absent_count":0}],`+
		`"policy":{"block_severity":{"SECRET":"none","VULNERABILITY":"none"},"required":[],"block_on_missing":true,"block_on":"all"},`+
		`"evaluated_at":`+strconv.Quote(g["evaluated_at"].(string))+`}`)
	if g2 := h.gate(2); g2["blocked"] != false || g2["head_sha"] != sha || len(g2["reasons"].([]any)) != 0 {
		t.Errorf("PR 2: %v", g2)
	}
	sameJSON(t, "PR 3", reasons(h.gate(3)), `["failed:SECRET/default:0"]`)
	expectProblem(t, h.read("get-pr-gate", &h.admin, map[string]string{"pr_id": "99"}, ""), 404)
	expectProblem(t, h.read("get-pr-gate", &h.admin, map[string]string{"pr_id": "0"}, ""), 422)
	// Every PR the listing shows as blocked, and only those, has a gate that blocks.
	for _, blocked := range []string{"true", "false"} {
		for _, it := range mustOK(t, h.read("list-prs", &h.admin, nil, "blocked="+blocked))["items"].([]any) {
			id := int(it.(map[string]any)["id"].(float64))
			if g := h.gate(id); fmt.Sprint(g["blocked"]) != blocked {
				t.Errorf("PR %d is listed blocked=%s, its gate says %v", id, blocked, g["blocked"])
			}
		}
	}
	h.noDrift()
}

// TestCommitAndRef: a scan's commit_sha (40 or 64 hex digits) and ref (up
// to 255 characters) are checked, kept in other_details (the hash in lower
// case), and the newest scan that named a commit sets the gate's head_sha.
func TestCommitAndRef(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a, b := strings.Repeat("a", 40), strings.Repeat("B", 64)
	sc := mustOK(t, h.record(scanReq{Status: "completed", Extra: `,"commit_sha":"` + a + `","ref":"refs/heads/main"`}))
	if d := sc["other_details"].(map[string]any); d["commit_sha"] != a || d["ref"] != "refs/heads/main" {
		t.Errorf("other_details %v", d)
	}
	mustOK(t, h.record(scanReq{Status: "completed", Extra: `,"category":"x","commit_sha":"` + b + `"`}))
	mustOK(t, h.record(scanReq{Status: "completed", Extra: `,"category":"y"`}))
	if g := h.gate(1); g["head_sha"] != strings.ToLower(b) {
		t.Errorf("head_sha %v; want the newest scan's that named one, in lower case", g["head_sha"])
	}
	for extra, ptr := range map[string]string{
		`,"commit_sha":"` + strings.Repeat("a", 39) + `"`: "/commit_sha",
		`,"commit_sha":"` + strings.Repeat("g", 40) + `"`: "/commit_sha",
		`,"commit_sha":""`:                          "/commit_sha",
		`,"ref":"` + strings.Repeat("r", 256) + `"`: "/ref",
		`,"ref":"refs/\u0000"`:                      "/ref",
		`,"ref":""`:                                 "/ref",
	} {
		if got := expectProblem(t, h.record(scanReq{Extra: extra}), 422); !slices.Equal(got, []string{ptr}) {
			t.Errorf("%s: pointers %v", extra, got)
		}
	}
	if got := expectProblem(t, h.uploadRaw(`{"version":"2.1.0","runs":[]}`, `,"commit_sha":"x"`), 422); !slices.Equal(got, []string{"/commit_sha"}) {
		t.Errorf("SARIF envelope: pointers %v; the envelope answers before the log", got)
	}
	h.noDrift()
}

// TestScanRecordAudit: every recording, inline or SARIF, leaves a
// scan.record entry per scan, in its transaction, naming the caller and
// its token and the scan.
func TestScanRecordAudit(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	member := h.member("ci", scangate.RoleUser)
	tok := mustOK(t, h.createToken(&member, `{"name":"ci","scope":"scan"}`))
	ci, err := h.callerOf(tok["access_token"].(string))
	if err != nil {
		t.Fatal(err)
	}
	sc := mustOK(t, h.call("record-scan", jsonReq(&ci, scanReq{Status: "completed", Findings: []string{"sha256:aa"}}.body())))
	mustOK(t, h.upload(golden(t, "gitleaks.sarif"), ""))
	entries := h.auditEntries("scan.record")
	if len(entries) != 2 {
		t.Fatalf("%d scan.record entries; want 2", len(entries))
	}
	e := entries[1] // oldest last
	if e.Target != (scangate.Target{Type: "scan", ID: fmt.Sprint(sc["id"])}) || e.Who.Actor == nil || e.Who.Actor.UserID != ci.ID ||
		e.Who.Actor.TokenID != ci.TokenID || e.Who.Actor.Username != "ci" {
		t.Errorf("entry %+v", e)
	}
	if b, _ := json.Marshal(e.Changes); !strings.Contains(string(b), `"scan_type":{"to":"SECRET"}`) {
		t.Errorf("changes %s", b)
	}
	if got := h.auditEntries(""); len(got) < 2 {
		t.Errorf("the unfiltered log: %d entries", len(got))
	}
	h.noDrift()
}

// TestScanScope: a scan token records scans (inline, SARIF, uploads),
// reads and logs out; every other write is 403, whatever its role.
func TestScanScope(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	tok := mustOK(t, h.createToken(&h.admin, `{"name":"ci","scope":"scan"}`))
	if tok["scope"] != "scan" {
		t.Fatalf("token %v", tok)
	}
	ci, err := h.callerOf(tok["access_token"].(string))
	if err != nil || ci.Scope != scangate.ScopeScan {
		t.Fatalf("caller %+v, %v", ci, err)
	}
	mustOK(t, h.call("record-scan", jsonReq(&ci, scanReq{Status: "completed"}.body())))
	mustOK(t, h.call("create-sarif-upload", jsonReq(&ci, `{"vc_type":"github","vc_id":1,"vc_name":"v","repo_id":2,"repo_name":"o/r","webhook_id":3,`+
		`"pr":{"pr_id":4,"pr_name":"n","pr_link":"l"},"category":"trivy"}`)))
	mustOK(t, h.read("get-pr-gate", &ci, map[string]string{"pr_id": "1"}, ""))
	mustOK(t, h.read("list-findings", &ci, map[string]string{"pr_scan_id": "1"}, ""))
	for fn, body := range map[string]string{
		"create-allowlist":   `{"type":"SECRET","name":"sha256:aa","reason":"revoked"}`,
		"create-token":       `{"name":"more"}`,
		"create-user":        `{"username":"x","user_email":"x@example.com","password":"password-123","role":"user"}`,
		"update-gate-policy": `{}`,
	} {
		if resp := h.call(fn, jsonReq(&ci, body)); resp.StatusCode != 403 || !strings.Contains(resp.Body, "a scan token may only record scans") {
			t.Errorf("%s with a scan token: %d %s", fn, resp.StatusCode, resp.Body)
		}
	}
	if resp := h.call("logout", request{caller: &ci}); resp.StatusCode != 204 {
		t.Errorf("logout with a scan token: %d %s", resp.StatusCode, resp.Body)
	}
	expectProblem(t, h.createToken(&h.admin, `{"name":"x","scope":"admin"}`), 422)
}
