package api_test

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/scangate/scangate/internal/ddbtest"
	"github.com/scangate/scangate/internal/queue/work"
	"github.com/scangate/scangate/internal/scangate"
)

// baselineChanges lists a PR's pr.gate_changed events of cause baseline
// as blocked:count/new_count of their first reason.
func baselineChanges(t *testing.T, h *harness, pr int64) []string {
	t.Helper()
	var out []string
	for _, g := range ddbtest.GateChanges(t, h.env.DB, h.env.Table)[pr] {
		if g.Cause != scangate.CauseBaseline {
			continue
		}
		s := fmt.Sprint(g.Blocked)
		if len(g.Reasons) > 0 {
			s += fmt.Sprintf(":%d/%d", g.Reasons[0].Count, g.Reasons[0].NewCount)
		}
		out = append(out, s)
	}
	return out
}

// TestBaseMoves: a branch analysis that changes the branch's newest scan
// of a category re-classifies the active PRs based on the branch whose
// baseline for it is not exact (not those of an exact one, nor those of
// another base), in its recording's work: their findings' states, their
// counts, the absent listing and, under block_on new, their gates, each
// changed gate with one pr.gate_changed of cause baseline; an analysis
// that changes nothing re-classifies nothing; check finds no drift.
func TestBaseMoves(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	shaA := strings.Repeat("a", 40)
	record := func(body string) {
		t.Helper()
		mustOK(t, h.call("record-scan", jsonReq(&h.admin, body)))
	}
	mustOK(t, h.setPolicy(0, `{"block_on":"new"}`))
	record(classBody("main", 0, `,"commit_sha":"`+shaA+`"`, "sha256:x@10", "sha256:y@20"))            // scan 1
	record(classBody("", 1, `,"base_ref":"main"`, "sha256:x@11", "sha256:y@21", "sha256:w@3"))        // scan 2: PR 1, newest
	record(classBody("", 2, `,"base_ref":"main","base_sha":"`+shaA+`"`, "sha256:x@11", "sha256:w@3")) // scan 3: PR 2, exact
	record(classBody("", 3, `,"base_ref":"dev"`, "sha256:x@11"))                                      // scan 4: PR 3, another base
	if g := h.gate(1); g["blocked"] != true || reasonsOf(g) != "findings:SECRET/default:1/1" {
		t.Fatalf("PR 1 before the base moves: %v %s", g["blocked"], reasonsOf(g))
	}
	states := func(scan string) string {
		var out []string
		for _, f := range findingsOf(h, scan) {
			out = append(out, fmt.Sprint(f["name"], "=", f["baseline_state"]))
		}
		return strings.Join(out, " ")
	}

	// main gains w: PR 1's w is no longer new, and it is not blocked.
	record(classBody("main", 0, ``, "sha256:x@10", "sha256:y@20", "sha256:w@3")) // scan 5
	if got := states("2"); got != "sha256:x=unchanged sha256:y=unchanged sha256:w=unchanged" {
		t.Errorf("PR 1 once main has w: %s", got)
	}
	g := h.gate(1)
	cat := g["categories"].([]any)[0].(map[string]any)
	if g["blocked"] != false || cat["new_count"] != 0.0 || cat["unchanged_count"] != 3.0 || cat["absent_count"] != 0.0 ||
		cat["baseline"].(map[string]any)["scan_id"] != 5.0 || cat["baseline"].(map[string]any)["match"] != "newest" || cat["block_status"] != false {
		t.Errorf("PR 1's gate once main has w: %v", g)
	}
	if got := states("3"); got != "sha256:x=unchanged sha256:w=new" {
		t.Errorf("PR 2 (exact) was re-classified: %s", got)
	}
	if got := states("4"); got != "sha256:x=new" {
		t.Errorf("PR 3 (based on dev) was re-classified: %s", got)
	}
	if got := baselineChanges(t, h, 1); strings.Join(got, " ") != "false" {
		t.Errorf("PR 1's gate changes of cause baseline: %v; want one, not blocked", got)
	}
	h.noDrift()

	// main loses y and w: both are new in PR 1 again, and main's x is
	// not absent from it.
	record(classBody("main", 0, ``, "sha256:x@10", "sha256:z@40")) // scan 6
	if got := states("2"); got != "sha256:x=unchanged sha256:y=new sha256:w=new" {
		t.Errorf("PR 1 once main lost y and w: %s", got)
	}
	if g := h.gate(1); g["blocked"] != true || reasonsOf(g) != "findings:SECRET/default:2/2" {
		t.Errorf("PR 1 once main lost y and w: %v %s", g["blocked"], reasonsOf(g))
	}
	absent := mustOK(t, h.read("list-pr-absent", &h.admin, map[string]string{"pr_id": "1"}, ""))["items"].([]any)
	if len(absent) != 1 || absent[0].(map[string]any)["name"] != "sha256:z" || absent[0].(map[string]any)["baseline_scan_id"] != 6.0 {
		t.Errorf("PR 1's absent findings against scan 6: %v", absent)
	}
	if got := baselineChanges(t, h, 1); strings.Join(got, " ") != "false true:2/2" {
		t.Errorf("PR 1's gate changes of cause baseline: %v", got)
	}
	h.noDrift()

	// An analysis of another category moves nothing of PR 1's.
	record(strings.Replace(classBody("main", 0, `,"category":"other"`, "sha256:y@20"), `"SECRET"`, `"SECRET"`, 1))
	if got := baselineChanges(t, h, 1); len(got) != 2 {
		t.Errorf("an analysis of another category changed PR 1's gate: %v", got)
	}
	for _, pr := range []int64{2, 3} {
		if got := baselineChanges(t, h, pr); len(got) != 0 {
			t.Errorf("PR %d's gate changed for its base: %v", pr, got)
		}
	}
	h.noDrift()
}

// TestBaseMovesKilledMidway: the database fails every transaction from
// the third one on while a base scan's recording runs its
// re-classification of 30 PRs (the branch's analysis itself commits
// first): the recording answers, its work is left running with check
// saying so; once its lease has run out the scheduled function completes
// it, nobody sending the base scan again, and every PR's gate changed
// exactly once (one pr.gate_changed of cause baseline each), with no
// drift.
func TestBaseMovesKilledMidway(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	mustOK(t, h.setPolicy(0, `{"block_on":"new"}`))
	mustOK(t, h.call("record-scan", jsonReq(&h.admin, classBody("main", 0, ``, "sha256:x@10"))))
	const prs = 30
	for pr := 1; pr <= prs; pr++ {
		mustOK(t, h.call("record-scan", jsonReq(&h.admin, classBody("", pr, `,"base_ref":"main"`, "sha256:x@11", "sha256:w@3"))))
	}
	var txs atomic.Int64
	var down atomic.Bool
	hook := func(op string) {
		if op == "TransactWriteItems" && txs.Add(1) == 3 {
			down.Store(true)
		}
	}
	fault := func(op string, _ any) error {
		if down.Load() && op == "TransactWriteItems" {
			return ddbtest.InternalServerError()
		}
		return nil
	}
	h.env.Hook.Store(&hook)
	h.env.Fault.Store(&fault)
	mustOK(t, h.call("record-scan", jsonReq(&h.admin, classBody("main", 0, ``, "sha256:x@10", "sha256:w@3"))))
	h.env.Hook.Store(nil)
	h.env.Fault.Store(nil)
	if !down.Load() {
		t.Fatalf("the recording made %d transactions; the test needs at least 3", txs.Load())
	}
	rep, err := h.env.Store.Check(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Drift) > 0 || len(rep.Running) != 1 || len(rep.Pending) < prs-2 {
		t.Fatalf("check after the failure: drift %v, running %v, %d pending: the test does not fail midway", rep.Drift, rep.Running, len(rep.Pending))
	}
	h.expireAt(time.Now().Add(work.DefaultLease + time.Second))
	h.noDrift()
	for pr := 1; pr <= prs; pr++ {
		if got := baselineChanges(t, h, int64(pr)); strings.Join(got, " ") != "false" {
			t.Errorf("PR %d: gate changes of cause baseline %v; want one, not blocked", pr, got)
		}
	}
	if rep, _ := h.env.Store.Check(t.Context()); len(rep.Running) != 0 {
		t.Errorf("work still running: %v", rep.Running)
	}
}
