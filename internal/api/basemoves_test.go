package api_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

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

// workItems counts the durable work items of the table.
func workItems(t *testing.T, h *harness) int32 {
	t.Helper()
	out, err := h.env.DB.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(h.env.Table), ConsistentRead: aws.Bool(true),
		FilterExpression: aws.String("begins_with(PK, :w) AND SK = :s"), Select: types.SelectCount,
		ExpressionAttributeValues: map[string]types.AttributeValue{":w": &types.AttributeValueMemberS{Value: "WORK#"}, ":s": &types.AttributeValueMemberS{Value: "WORK"}}})
	if err != nil {
		t.Fatal(err)
	}
	return out.Count
}

// TestNotCompletedIsNoBaseline: under block_on new, a branch analysis
// that did not complete is shown as its branch's newest scan but is
// never a baseline, neither newest nor exact: recording it plans no
// re-classification and changes no PR's gate, and a later PR is
// classified against the newest completed one. A PR scan that did not
// complete is classified against nothing (baseline null, no absent
// findings) and stays so when its base moves. Check finds no drift.
func TestNotCompletedIsNoBaseline(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	shaA, shaB, shaC := strings.Repeat("a", 40), strings.Repeat("b", 40), strings.Repeat("c", 40)
	record := func(body string) {
		t.Helper()
		mustOK(t, h.call("record-scan", jsonReq(&h.admin, body)))
	}
	failed := func(body string) string { return strings.Replace(body, `"status":"completed"`, `"status":"failed"`, 1) }
	baselineOf := func(pr int) (any, map[string]any) {
		t.Helper()
		g := h.gate(pr)
		cat := g["categories"].([]any)[0].(map[string]any)
		return g["blocked"], cat
	}
	mustOK(t, h.setPolicy(0, `{"block_on":"new"}`))
	record(classBody("main", 0, `,"commit_sha":"`+shaA+`"`, "sha256:old@1")) // scan 1
	record(classBody("", 1, `,"base_ref":"main"`, "sha256:old@1"))           // scan 2: PR 1
	if blocked, cat := baselineOf(1); blocked != false || cat["unchanged_count"] != 1.0 {
		t.Fatalf("PR 1 against main's analysis: %v %v", blocked, cat)
	}
	work := workItems(t, h)

	// main's analysis at shaB fails: main shows it, PR 1 keeps scan 1.
	record(failed(classBody("main", 0, `,"commit_sha":"`+shaB+`"`))) // scan 3
	b := mustOK(t, h.read("get-branch", &h.admin, map[string]string{"branch_id": "1"}, ""))
	if c := b["categories"].([]any)[0].(map[string]any); c["scan_id"] != 3.0 || c["commit_sha"] != shaB {
		t.Errorf("main's newest scan once its analysis failed: %v", c)
	}
	blocked, cat := baselineOf(1)
	if blocked != false || cat["new_count"] != 0.0 || cat["unchanged_count"] != 1.0 {
		t.Errorf("PR 1 once main's analysis failed: %v %v", blocked, cat)
	}
	sameJSON(t, "PR 1's baseline", cat["baseline"], `{"scan_id":1,"commit_sha":"`+shaA+`","match":"newest"}`)
	if got := baselineChanges(t, h, 1); len(got) != 0 {
		t.Errorf("a failed analysis changed PR 1's gate: %v", got)
	}
	if n := workItems(t, h); n != work {
		t.Errorf("a failed analysis planned work: %d work items, %d before", n, work)
	}
	h.noDrift()

	// A PR based on the failed analysis's commit: not exact, the newest
	// completed one.
	record(classBody("", 2, `,"base_ref":"main","base_sha":"`+shaB+`"`, "sha256:old@1")) // scan 4: PR 2
	_, cat = baselineOf(2)
	sameJSON(t, "PR 2's baseline", cat["baseline"], `{"scan_id":1,"commit_sha":"`+shaA+`","match":"newest"}`)

	// A PR scan that failed, exact base and no findings: nothing absent.
	record(failed(classBody("", 3, `,"base_ref":"main","base_sha":"`+shaA+`"`))) // scan 5: PR 3
	blocked, cat = baselineOf(3)
	if blocked != true || cat["baseline"] != nil || cat["absent_count"] != 0.0 || cat["new_count"] != 0.0 {
		t.Errorf("PR 3's failed scan: %v %v", blocked, cat)
	}
	if a := mustOK(t, h.read("list-pr-absent", &h.admin, map[string]string{"pr_id": "3"}, "")); len(a["items"].([]any)) != 0 {
		t.Errorf("PR 3's failed scan fixes: %v", a)
	}
	// A PR scan that failed, based on main's newest: none either.
	record(failed(classBody("", 4, `,"base_ref":"main"`, "sha256:old@1"))) // scan 6: PR 4
	if _, cat = baselineOf(4); cat["baseline"] != nil || cat["absent_count"] != 0.0 || cat["new_count"] != 1.0 {
		t.Errorf("PR 4's failed scan: %v", cat)
	}
	h.noDrift()

	// main completes at shaC: PR 1 follows it, the failed scans of PRs
	// 3 and 4 do not.
	record(classBody("main", 0, `,"commit_sha":"`+shaC+`"`, "sha256:old@1", "sha256:other@2")) // scan 7
	_, cat = baselineOf(1)
	sameJSON(t, "PR 1's baseline once main completed again", cat["baseline"], `{"scan_id":7,"commit_sha":"`+shaC+`","match":"newest"}`)
	if _, cat = baselineOf(3); cat["baseline"] != nil || cat["absent_count"] != 0.0 {
		t.Errorf("PR 3's failed scan once main moved: %v", cat)
	}
	if _, cat = baselineOf(4); cat["baseline"] != nil || cat["absent_count"] != 0.0 {
		t.Errorf("PR 4's failed scan once main moved: %v", cat)
	}
	for _, pr := range []string{"3", "4"} {
		if a := mustOK(t, h.read("list-pr-absent", &h.admin, map[string]string{"pr_id": pr}, "")); len(a["items"].([]any)) != 0 {
			t.Errorf("PR %s's failed scan fixes once main moved: %v", pr, a)
		}
	}
	if got := baselineChanges(t, h, 4); len(got) != 0 {
		t.Errorf("PR 4's gate changed for its base: %v", got)
	}
	h.noDrift()
}
