package work_test

import (
	"context"
	"testing"
	"time"

	"github.com/scangate/scangate/internal/ddbtest"
	"github.com/scangate/scangate/internal/queue/work"
	"github.com/scangate/scangate/internal/scangate"
)

// TestFanOut runs a policy change's work as a fan-out would: planned once,
// its steps in any order, one of them twice (a redelivered message), and
// completed when every step is done, with totals that count each step
// once; a step of no plan is refused.
func TestFanOut(t *testing.T) {
	t.Parallel()
	env := ddbtest.New(t)
	ctx := context.Background()
	for i := int64(1); i <= 120; i++ {
		ns := scangate.NewScan{Type: scangate.ScanSecret, VcType: "github", VcID: 1, VcName: "v", RepoID: 1, RepoName: "o/r", WebhookID: 1,
			PR: scangate.PRRef{Number: i, Name: "n", Link: "l"}, Status: "completed", Findings: []scangate.Finding{{Name: "sha256:aa", Severity: scangate.SeverityLow}}}
		if _, _, err := env.Store.RecordScan(ctx, ns, scangate.Who{RequestID: "test"}, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	run := env.Store.Runner(time.Now, nil)
	at := time.Now()
	change := scangate.PolicyChange{Global: scangate.DefaultPolicy().With(&scangate.PolicyOverride{
		BlockSeverity: map[scangate.ScanType]scangate.Severity{scangate.ScanSecret: scangate.SeverityMedium}})}
	_, it, err := env.Store.SetGatePolicy(ctx, change, scangate.Who{RequestID: "test"}, at, run.LeaseFrom(at))
	if err != nil {
		t.Fatal(err)
	}
	if err := run.Step(ctx, it.ID, 0); err == nil {
		t.Error("a step of an item not planned ran")
	}
	if it, err = run.Plan(ctx, it); err != nil || it.Steps != 3 || it.Planned["prs"] != 120 {
		t.Fatalf("plan: %+v %v", it, err)
	}
	for _, n := range []int{2, 0, 0} {
		if err := run.Step(ctx, it.ID, n); err != nil {
			t.Fatal(err)
		}
	}
	if done, err := run.Complete(ctx, it.ID); err != nil || done {
		t.Fatalf("complete with a step left: %v %v", done, err)
	}
	if err := run.Step(ctx, it.ID, 1); err != nil {
		t.Fatal(err)
	}
	if done, err := run.Complete(ctx, it.ID); err != nil || !done {
		t.Fatalf("complete: %v %v", done, err)
	}
	got, err := env.Store.WorkItem(ctx, it.ID)
	if err != nil || got.Status != work.Complete || got.Totals["prs"] != 120 || got.Totals["changed"] != 120 {
		t.Errorf("the work: %+v %v", got, err)
	}
	if rep, err := env.Store.Check(ctx); err != nil || len(rep.Drift)+len(rep.Running)+len(rep.Pending) > 0 {
		t.Errorf("check: %+v %v", rep, err)
	}
	if n, err := run.Resume(ctx, time.Now().Add(time.Hour)); err != nil || n != 0 {
		t.Errorf("resume after completion: %d %v", n, err)
	}
}
