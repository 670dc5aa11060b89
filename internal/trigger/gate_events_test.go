package trigger_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/scangate/scangate/internal/ddbtest"
	"github.com/scangate/scangate/internal/queue/work"
	"github.com/scangate/scangate/internal/scangate"
	"github.com/scangate/scangate/internal/store"
	"github.com/scangate/scangate/internal/trigger"
)

// TestReevaluationGateChangesOnce: an allowlist that unblocks two PRs
// (20 scans of 10 findings of one advisory, the newest scan of each PR
// the tenth), then its expiry, which blocks them again, each leave
// exactly one pr.gate_changed a PR: sequence 2 of cause allowlist from
// blocked, then sequence 3 of cause expiry from unblocked, whether the
// re-evaluation runs in the request or is fanned out to the work queue;
// fanned out, every step is handled by two workers at once and then
// delivered again once done, and in the request every step is delivered
// again after the work completed. Check then finds the events whole.
func TestReevaluationGateChangesOnce(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		sync   int // the most findings a change runs in place
		fanOut bool
	}{{"in the request", 1000, false}, {"fanned out", 10, true}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := ddbtest.New(t)
			ctx := context.Background()
			st := env.RecorderWith(t, func(string, any) {}, []store.Option{store.WithReevaluation(tc.sync, 20)})
			if _, err := st.BulkLoad(ctx, ddbtest.GroupScans(20, 10, "CVE-2021-44228"), scangate.Who{RequestID: "test"}, time.Now()); err != nil {
				t.Fatal(err)
			}
			worker := trigger.RunWork(st.Runner(time.Now, nil), slog.New(slog.NewJSONHandler(io.Discard, nil)))
			deliver := func(id, body string) {
				resp, err := worker(ctx, sqsEvent(id, body))
				if err != nil || len(resp.BatchItemFailures) > 0 {
					t.Errorf("message %s: %+v %v", id, resp, err)
				}
			}
			// run continues a change's work: in place, or dispatched and
			// each message handled twice at once, then again once done.
			// Either way every step is delivered again at the end.
			run := func(it work.Item) {
				t.Helper()
				queue := &collect{}
				it, err := st.Runner(time.Now, queue).Continue(ctx, it)
				if err != nil || it.FanOut != tc.fanOut || len(queue.bodies) != map[bool]int{true: it.Steps}[tc.fanOut] {
					t.Fatalf("run: %+v %v, messages %v", it, err, queue.bodies)
				}
				for i, body := range queue.bodies {
					var wg sync.WaitGroup
					for _, w := range []string{"a", "b"} {
						wg.Go(func() { deliver(fmt.Sprintf("m%d-%s", i, w), body) })
					}
					wg.Wait()
				}
				for n := range it.Steps {
					deliver(fmt.Sprint("again-", n), work.Message(it.ID, n))
				}
				if got, err := st.WorkItem(ctx, it.ID); err != nil || got.Status != work.Complete {
					t.Fatalf("the work: %+v %v", got, err)
				}
			}
			check := func(when string, seq int64, cause string, was, is bool) {
				t.Helper()
				changes := ddbtest.GateChanges(t, env.DB, env.Table)
				for id := int64(1); id <= 2; id++ {
					gs := changes[id]
					if int64(len(gs)) != seq {
						t.Fatalf("%s: PR %d has %d gate changes, want %d: %+v", when, id, len(gs), seq, gs)
					}
					g := gs[seq-1]
					if g.Sequence != seq || g.Cause != cause || g.Previous == nil || g.Previous.Blocked != was || g.Blocked != is {
						t.Errorf("%s: PR %d's last gate change %+v (previous %+v); want sequence %d, cause %s, blocked %v then %v",
							when, id, g, g.Previous, seq, cause, was, is)
					}
					if is && (len(g.Reasons) != 1 || g.Reasons[0].Count != 10) {
						t.Errorf("%s: PR %d blocked for %+v; want its newest scan's 10 findings", when, id, g.Reasons)
					}
				}
				if rep, err := st.Check(ctx); err != nil || len(rep.Drift)+len(rep.Running)+len(rep.Pending) > 0 {
					t.Errorf("%s: check: %+v %v", when, rep, err)
				}
			}
			if changes := ddbtest.GateChanges(t, env.DB, env.Table); len(changes[1]) != 1 || len(changes[2]) != 1 || !changes[1][0].Blocked {
				t.Fatalf("the loaded PRs' gate changes: %+v", changes)
			}

			at := time.Now()
			expires := scangate.At(at.Add(time.Hour))
			_, it, err := st.CreateAllowlist(ctx, scangate.Allowlist{Rule: scangate.Rule{Type: scangate.ScanVulnerability,
				Name: "CVE-2021-44228", Active: true, Global: true}, ExpiresAt: &expires}, "", scangate.Who{RequestID: "test"}, at, 0)
			if err != nil {
				t.Fatal(err)
			}
			run(it)
			check("the allowlist", 2, scangate.CauseAllowlist, true, false)

			expired, err := st.ExpireDue(ctx, at.Add(2*time.Hour), 0)
			if err != nil || len(expired) != 1 {
				t.Fatalf("expired %+v %v", expired, err)
			}
			run(expired[0])
			check("its expiry", 3, scangate.CauseExpiry, false, true)
		})
	}
}
