package api_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// classBody is a SECRET scan of repository 100 with findings
// name@line (rule k, path a.go), for a branch or a PR (pr > 0).
func classBody(branch string, pr int, extra string, findings ...string) string {
	var fs []string
	for _, f := range findings {
		name, line, _ := strings.Cut(f, "@")
		fs = append(fs, fmt.Sprintf(`{"name":%q,"rule":"k","path":"a.go","line":%s}`, name, line))
	}
	target := fmt.Sprintf(`"branch":%q`, branch)
	if pr > 0 {
		target = fmt.Sprintf(`"pr":{"pr_id":%d,"pr_name":"n","pr_link":"l"}`, pr)
	}
	return `{"scan_type":"SECRET","vc_type":"github","vc_id":10,"vc_name":"v","repo_id":100,"repo_name":"o/r","webhook_id":3,"status":"completed",` +
		target + extra + `,"findings":[` + strings.Join(fs, ",") + `]}`
}

// TestClassification: a PR's scan is classified in its own recording
// against the base branch's analysis at its base_sha (exact), else the
// branch's newest (newest), else none (all new): its findings new or
// unchanged by (rule, fingerprint), lines moved or not; the baseline's
// findings it no longer has listed by GET /pr/{pr_id}/absent;
// ?baseline_state= filters; check recounts it all.
func TestClassification(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	shaA, shaB, shaC := strings.Repeat("a", 40), strings.Repeat("b", 40), strings.Repeat("c", 40)
	mustOK(t, h.call("record-scan", jsonReq(&h.admin, classBody("main", 0, `,"commit_sha":"`+shaA+`"`, "sha256:x@10", "sha256:y@20", "sha256:z@30"))))
	mustOK(t, h.call("record-scan", jsonReq(&h.admin, classBody("main", 0, `,"commit_sha":"`+shaB+`"`, "sha256:x@10", "sha256:y@20"))))
	before := h.env.RoundTrips()
	mustOK(t, h.call("record-scan", jsonReq(&h.admin, classBody("", 1, `,"base_ref":"main","base_sha":"`+shaA+`"`, "sha256:x@15", "sha256:y@25", "sha256:w@3"))))
	classified := h.env.RoundTrips() - before
	before = h.env.RoundTrips()
	mustOK(t, h.call("record-scan", jsonReq(&h.admin, classBody("", 9, ``, "sha256:x@15", "sha256:y@25", "sha256:w@3"))))
	if plain := h.env.RoundTrips() - before; classified > plain+6 {
		t.Errorf("a classified recording took %d round trips, one without a base %d: the baseline may cost 6 (its branch, its commit, two reads of its one page, the write of its absent finding, its branch again once committed)", classified, plain)
	}
	states := func(scan string) string {
		var out []string
		for _, f := range findingsOf(h, scan) {
			out = append(out, fmt.Sprint(f["name"], "=", f["baseline_state"]))
		}
		return strings.Join(out, " ")
	}
	if got := states("3"); got != "sha256:x=unchanged sha256:y=unchanged sha256:w=new" {
		t.Errorf("against the exact baseline: %s", got)
	}
	if got := states("1"); got != "sha256:x=<nil> sha256:y=<nil> sha256:z=<nil>" {
		t.Errorf("a branch analysis's findings: %s", got)
	}
	newOnly := mustOK(t, h.read("list-findings", &h.admin, map[string]string{"pr_scan_id": "3"}, "baseline_state=new"))
	if items := newOnly["items"].([]any); len(items) != 1 || items[0].(map[string]any)["name"] != "sha256:w" {
		t.Errorf("?baseline_state=new: %v", items)
	}
	expectProblem(t, h.read("list-findings", &h.admin, map[string]string{"pr_scan_id": "3"}, "baseline_state=absent"), 422)
	absent := mustOK(t, h.read("list-pr-absent", &h.admin, map[string]string{"pr_id": "1"}, ""))
	items := absent["items"].([]any)
	if len(items) != 1 {
		t.Fatalf("absent: %v", absent)
	}
	z := items[0].(map[string]any)
	if z["name"] != "sha256:z" || z["baseline_scan_id"] != 1.0 || z["scan_id"] != 3.0 || z["finding_id"] != 3.0 || z["baseline_state"] != "absent" ||
		z["line"] != 30.0 || z["category"] != "default" {
		t.Errorf("the absent finding: %v", z)
	}
	// A base_sha with no analysis: the newest (shaB), which lacks z.
	mustOK(t, h.call("record-scan", jsonReq(&h.admin, classBody("", 2, `,"base_ref":"refs/heads/main","base_sha":"`+shaC+`"`, "sha256:x@1", "sha256:w@3"))))
	if got := states("5"); got != "sha256:x=unchanged sha256:w=new" {
		t.Errorf("against the newest: %s", got)
	}
	if a := mustOK(t, h.read("list-pr-absent", &h.admin, map[string]string{"pr_id": "3"}, "")); len(a["items"].([]any)) != 1 {
		t.Errorf("absent against the newest (y): %v", a)
	}
	// A base with no analysis, and no base: every finding new.
	mustOK(t, h.call("record-scan", jsonReq(&h.admin, classBody("", 3, `,"base_ref":"dev"`, "sha256:x@1"))))
	if got := states("6"); got != "sha256:x=new" {
		t.Errorf("no baseline: %s", got)
	}
	if got := states("4"); got != "sha256:x=new sha256:y=new sha256:w=new" {
		t.Errorf("no base: %s", got)
	}
	// A later scan of PR 1 without a base is classified against the
	// PR's base.
	mustOK(t, h.call("record-scan", jsonReq(&h.admin, classBody("", 1, ``, "sha256:z@30"))))
	if got := states("7"); got != "sha256:z=unchanged" {
		t.Errorf("a later scan, against the PR's base: %s", got)
	}
	if a := mustOK(t, h.read("list-pr-absent", &h.admin, map[string]string{"pr_id": "1"}, "")); len(a["items"].([]any)) != 2 {
		t.Errorf("absent after the later scan (x, y): %v", a)
	}
	// The gate explains it: the base, and per category the baseline and
	// the counts.
	g := h.gate(1)
	cat := g["categories"].([]any)[0].(map[string]any)
	if g["base_ref"] != "main" || cat["scan_id"] != 7.0 || cat["new_count"] != 0.0 || cat["unchanged_count"] != 1.0 || cat["absent_count"] != 2.0 {
		t.Errorf("the gate of PR 1: %v", g)
	}
	sameJSON(t, "its baseline", cat["baseline"], `{"scan_id":1,"commit_sha":"`+shaA+`","match":"exact"}`)
	g = h.gate(3) // PR number 2
	sameJSON(t, "PR 2's baseline", g["categories"].([]any)[0].(map[string]any)["baseline"], `{"scan_id":2,"commit_sha":"`+shaB+`","match":"newest"}`)
	if cat := h.gate(4)["categories"].([]any)[0].(map[string]any); cat["baseline"] != nil || cat["new_count"] != 1.0 {
		t.Errorf("PR number 3, without a baseline: %v", cat)
	}
	if rep, err := h.env.Store.Check(context.Background()); err != nil || len(rep.Drift) > 0 {
		t.Errorf("check: %v %v", rep.Drift, err)
	}
}

// TestCommitHashesIgnoreCase: a commit's hash is the same commit in
// either case, so an analysis recorded with an upper-case commit_sha is
// the exact baseline of a PR whose base_sha is in lower case (and the
// other way round); both are kept and shown in lower case.
func TestCommitHashesIgnoreCase(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	sha := "abcdef0123456789abcdef0123456789abcdef01"
	mustOK(t, h.call("record-scan", jsonReq(&h.admin, classBody("main", 0, `,"commit_sha":"`+strings.ToUpper(sha)+`"`, "sha256:kept@1"))))
	mustOK(t, h.call("record-scan", jsonReq(&h.admin, classBody("main", 0, `,"commit_sha":"`+strings.Repeat("1", 40)+`"`))))
	pr := mustOK(t, h.call("record-scan", jsonReq(&h.admin, classBody("", 1, `,"base_ref":"main","base_sha":"`+sha+`"`, "sha256:kept@1"))))
	cat := h.gate(int(pr["pr_id"].(float64)))["categories"].([]any)[0].(map[string]any)
	sameJSON(t, "the baseline", cat["baseline"], `{"scan_id":1,"commit_sha":"`+sha+`","match":"exact"}`)
	if cat["new_count"] != 0.0 || cat["unchanged_count"] != 1.0 {
		t.Errorf("against the analysis of the same commit: %v", cat)
	}
	pr = mustOK(t, h.call("record-scan", jsonReq(&h.admin, classBody("", 2, `,"base_ref":"main","base_sha":"`+strings.ToUpper(sha)+`"`, "sha256:kept@1"))))
	if pr["pr"].(map[string]any)["base_sha"] != sha {
		t.Errorf("the base_sha kept: %v", pr["pr"])
	}
	cat = h.gate(int(pr["pr_id"].(float64)))["categories"].([]any)[0].(map[string]any)
	sameJSON(t, "the baseline of an upper-case base_sha", cat["baseline"], `{"scan_id":1,"commit_sha":"`+sha+`","match":"exact"}`)
}

// TestOtherDetailsNamesTheScansOwn: other_details shows the scan's
// category, commit, ref and base, and only those it has: the same names
// sent in other_details by the client are not kept (a branch analysis
// never shows a base_ref, a scan without a commit never shows one); other
// members are kept as sent.
func TestOtherDetailsNamesTheScansOwn(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	sc := mustOK(t, h.call("record-scan", jsonReq(&h.admin, classBody("main", 0,
		`,"other_details":{"commit_sha":"not-a-commit","ref":"refs/heads/x","base_ref":"release","base_sha":"zz","category":"c","runner":"linux"}`))))
	sameJSON(t, "a branch analysis's other_details", sc["other_details"], `{"category":"default","runner":"linux"}`)
	sha := strings.Repeat("a", 40)
	sc = mustOK(t, h.call("record-scan", jsonReq(&h.admin, classBody("", 1,
		`,"base_ref":"main","base_sha":"`+sha+`","other_details":{"commit_sha":"not-a-commit","base_ref":"release"}`))))
	sameJSON(t, "a PR scan's other_details", sc["other_details"], `{"category":"default","base_ref":"main","base_sha":"`+sha+`"}`)
}
