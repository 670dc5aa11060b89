package api_test

import (
	"fmt"
	"strings"
	"testing"
)

// reasonsOf lists a gate's reasons as kind:type/category:count/new_count.
func reasonsOf(g map[string]any) string {
	var out []string
	for _, r := range g["reasons"].([]any) {
		m := r.(map[string]any)
		out = append(out, fmt.Sprintf("%s:%s/%s:%v/%v", m["kind"], m["scan_type"], m["category"], m["count"], m["new_count"]))
	}
	return strings.Join(out, " ")
}

// TestBlockOnNew: under block_on new (global, or a repository's) a PR
// is blocked only by unsuppressed new findings at or above the severity,
// its scans' block_status follows, and its reasons count the new ones;
// under all (the default) every finding blocks and the reason says how
// many of them are new. A PR without a baseline fails closed (every
// finding new). The spec's counts stay every unsuppressed finding; an
// allowlist that covers the new finding unblocks; a bad block_on is 422
// and changes nothing; check finds no drift.
func TestBlockOnNew(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	mustOK(t, h.call("record-scan", jsonReq(&h.admin, classBody("main", 0, ``, "sha256:x@10", "sha256:y@20"))))
	mustOK(t, h.call("record-scan", jsonReq(&h.admin, classBody("", 1, `,"base_ref":"main"`, "sha256:x@11", "sha256:y@21", "sha256:w@3"))))
	mustOK(t, h.call("record-scan", jsonReq(&h.admin, classBody("", 2, ``, "sha256:x@11"))))
	if g := h.gate(1); g["blocked"] != true || reasonsOf(g) != "findings:SECRET/default:3/1" || g["policy"].(map[string]any)["block_on"] != "all" {
		t.Errorf("PR 1 under block_on all: %v %s %v", g["blocked"], reasonsOf(g), g["policy"])
	}

	p := mustOK(t, h.setPolicy(0, `{"block_on":"new"}`))
	if p["block_on"] != "new" || p["rejudge"] == nil {
		t.Errorf("the policy as changed: %v", p)
	}
	if got := mustOK(t, h.read("get-gate-policy", &h.admin, nil, "")); got["block_on"] != "new" {
		t.Errorf("GET /gate/policy: %v", got)
	}
	g := h.gate(1)
	if g["blocked"] != true || reasonsOf(g) != "findings:SECRET/default:1/1" {
		t.Errorf("PR 1 under block_on new: %v %s", g["blocked"], reasonsOf(g))
	}
	if s, _, b := h.counts(2); s != 3 || !b {
		t.Errorf("PR 1's scan: %v secrets, block_status %v; want 3 (the spec's count), true", s, b)
	}
	if g := h.gate(2); g["blocked"] != true || reasonsOf(g) != "findings:SECRET/default:1/1" {
		t.Errorf("PR 2, no baseline, under block_on new (fails closed): %v %s", g["blocked"], reasonsOf(g))
	}

	// The new finding allowlisted: PR 1 is no longer blocked; its two
	// unchanged ones still count.
	mustOK(t, h.allow(`{"type":"SECRET","name":"sha256:w","repos":[100]}`))
	if g := h.gate(1); g["blocked"] != false || reasonsOf(g) != "" {
		t.Errorf("PR 1, its new finding allowlisted: %v %s", g["blocked"], reasonsOf(g))
	}
	if s, _, b := h.counts(2); s != 2 || b {
		t.Errorf("PR 1's scan: %v secrets, block_status %v; want 2, false", s, b)
	}

	// A repository's block_on all overrides the global new; deleting it
	// returns to new.
	o := mustOK(t, h.setPolicy(100, `{"block_on":"all"}`))
	if o["effective"].(map[string]any)["block_on"] != "all" || o["override"].(map[string]any)["block_on"] != "all" {
		t.Errorf("the repository's policy: %v", o)
	}
	if g := h.gate(1); g["blocked"] != true || reasonsOf(g) != "findings:SECRET/default:2/0" {
		t.Errorf("PR 1 under its repository's block_on all: %v %s", g["blocked"], reasonsOf(g))
	}
	mustOK(t, h.call("delete-repo-gate-policy", request{caller: &h.admin, params: map[string]string{"repo_id": "100"}}))
	if g := h.gate(1); g["blocked"] != false {
		t.Errorf("PR 1 back under the global block_on new: %v %s", g["blocked"], reasonsOf(g))
	}

	before := mustOK(t, h.read("get-gate-policy", &h.admin, nil, ""))
	expectProblem(t, h.setPolicy(0, `{"block_on":"some"}`), 422)
	expectProblem(t, h.setPolicy(100, `{"block_on":null}`), 422)
	if after := mustOK(t, h.read("get-gate-policy", &h.admin, nil, "")); after["version"] != before["version"] || after["block_on"] != "new" {
		t.Errorf("a refused policy changed it: %v, then %v", before, after)
	}
	h.noDrift()
}
