package api_test

import (
	"context"
	"strings"
	"testing"
)

// TestPRBase: PR scans take base_ref (refs/heads/ removed) and base_sha;
// the PR keeps both from its newest scan that carries them (a scan
// without them leaves them), GET /pr/{id} and the gate show them, and
// bad values are 422 and change nothing.
func TestPRBase(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	shaA, shaB := strings.Repeat("a", 40), strings.Repeat("b", 64)
	mustOK(t, h.record(scanReq{Extra: `,"base_ref":"refs/heads/main","base_sha":"` + shaA + `"`}))
	pr := mustOK(t, h.read("get-pr", &h.admin, map[string]string{"pr_id": "1"}, ""))
	if pr["base_ref"] != "main" || pr["base_sha"] != shaA {
		t.Errorf("the PR after a scan with a base: %v", pr)
	}
	mustOK(t, h.record(scanReq{}))
	pr = mustOK(t, h.read("get-pr", &h.admin, map[string]string{"pr_id": "1"}, ""))
	if pr["base_ref"] != "main" || pr["base_sha"] != shaA {
		t.Errorf("a scan without a base moved it: %v", pr)
	}
	mustOK(t, h.record(scanReq{Extra: `,"base_ref":"release","base_sha":"` + shaB + `"`}))
	pr = mustOK(t, h.read("get-pr", &h.admin, map[string]string{"pr_id": "1"}, ""))
	if pr["base_ref"] != "release" || pr["base_sha"] != shaB {
		t.Errorf("the newest scan's base: %v", pr)
	}
	if g := h.gate(1); g["base_ref"] != "release" {
		t.Errorf("the gate's base_ref: %v", g["base_ref"])
	}
	mustOK(t, h.record(scanReq{PR: 8}))
	if pr := mustOK(t, h.read("get-pr", &h.admin, map[string]string{"pr_id": "2"}, "")); pr["base_ref"] != nil || pr["base_sha"] != nil {
		t.Errorf("a PR without a base: %v", pr)
	}
	for name, extra := range map[string]string{
		"sha without ref": `,"base_sha":"` + shaA + `"`,
		"bad sha":         `,"base_ref":"main","base_sha":"xyz"`,
		"only refs":       `,"base_ref":"refs/heads/"`,
		"empty":           `,"base_ref":""`,
		"control":         `,"base_ref":"ma\u0000in"`,
		"too long":        `,"base_ref":"` + strings.Repeat("m", 256) + `"`,
	} {
		if resp := h.record(scanReq{Extra: extra}); resp.StatusCode != 422 {
			t.Errorf("%s: %d %s", name, resp.StatusCode, resp.Body)
		}
	}
	if resp := h.call("record-scan", jsonReq(&h.admin, branchBody("main", `,"base_ref":"dev"`))); resp.StatusCode != 422 {
		t.Errorf("a branch analysis with a base: %d %s", resp.StatusCode, resp.Body)
	}
	if rep, err := h.env.Store.Check(context.Background()); err != nil || len(rep.Drift) > 0 || rep.Scans != 4 {
		t.Errorf("check: %d scans, %v %v", rep.Scans, rep.Drift, err)
	}
}
