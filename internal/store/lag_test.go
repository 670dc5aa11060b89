package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/scangate/scangate/internal/ddbtest"
	"github.com/scangate/scangate/internal/retry"
	"github.com/scangate/scangate/internal/scangate"
	"github.com/scangate/scangate/internal/store"
)

func vulnScan(repo int64, names ...string) scangate.NewScan {
	ns := scangate.NewScan{Type: scangate.ScanVulnerability, VcType: "github", VcID: 1, VcName: "v", RepoID: repo,
		RepoName: "o/r", WebhookID: 1, PR: scangate.PRRef{Number: repo, Name: "n", Link: "l"}, Status: "completed"}
	for _, n := range names {
		ns.Findings = append(ns.Findings, scangate.Finding{Name: n})
	}
	return ns
}

// TestIndexLag runs recordings and allowlist changes, at once and one right
// after the other, on a store whose index answers as it was 1.5 s before
// (as DynamoDB's eventually consistent indexes may): every finding ends up
// judged by every change, and check finds no drift. With the fix (the
// RECENT items of a group) switched off, the same test finds drift: a
// change made right after a recording misses its findings.
func TestIndexLag(t *testing.T) {
	for _, fix := range []bool{true, false} {
		t.Run(fmt.Sprint("fix=", fix), func(t *testing.T) {
			t.Parallel()
			env := ddbtest.New(t)
			opts := []store.Option{store.WithRetry(retry.Default)}
			if !fix {
				opts = append(opts, store.WithRecentWindow(0))
			}
			st, _ := env.Lagged(t, 1500*time.Millisecond, opts...)
			ctx := context.Background()
			names := []string{"CVE-1", "CVE-2", "CVE-3"}
			r := rand.New(rand.NewPCG(7, 7))
			var wg sync.WaitGroup
			for i := range 12 {
				name, repo := names[r.IntN(3)], int64(1+r.IntN(2))
				wg.Go(func() {
					if i%3 == 0 {
						rule := scangate.Rule{Type: scangate.ScanVulnerability, Name: name, Active: true, Repos: []int64{repo}}
						if _, _, err := allowNow(t, st, rule); err != nil {
							t.Error(err)
						}
						return
					}
					if _, _, err := st.RecordScan(ctx, vulnScan(repo, name, name), testWho, time.Now()); err != nil {
						t.Error(err)
					}
				})
			}
			wg.Wait()
			// A recording, then at once an allowlist that covers it.
			if _, _, err := st.RecordScan(ctx, vulnScan(9, "CVE-9"), testWho, time.Now()); err != nil {
				t.Fatal(err)
			}
			rule := scangate.Rule{Type: scangate.ScanVulnerability, Name: "cve-9", Active: true, Global: true}
			if _, upd, err := allowNow(t, st, rule); err != nil || fix && upd.Vulnerabilities != 1 {
				t.Fatalf("create: %+v %v", upd, err)
			}
			rep, err := env.Store.Check(ctx)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case fix && len(rep.Drift) > 0:
				t.Errorf("drift under index lag: %v", rep.Drift)
			case !fix && len(rep.Drift) == 0:
				t.Error("no drift with the fix off: the test does not show the gap it closes")
			}
		})
	}
}

// TestIndexServesOldVersions: a finding whose judgement changed a moment
// ago is served by the index in its old version; the next change still
// judges it right (its write is conditioned on the finding's version).
func TestIndexServesOldVersions(t *testing.T) {
	t.Parallel()
	env := ddbtest.New(t)
	st, _ := env.Lagged(t, 400*time.Millisecond, store.WithRetry(retry.Default))
	ctx := context.Background()
	sc, _, err := st.RecordScan(ctx, vulnScan(1, "CVE-7"), testWho, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // the finding is in the index now
	rule := scangate.Rule{Type: scangate.ScanVulnerability, Name: "CVE-7", Active: true, Global: true}
	a, _, err := allowNow(t, st, rule)
	if err != nil {
		t.Fatal(err)
	}
	// The index still shows the finding unsuppressed; deactivate at once.
	if _, err := modifyNow(t, st, a.ID, scangate.AllowlistChange{Active: new(bool)}); err != nil {
		t.Fatal(err)
	}
	got, _, err := st.Scan(ctx, sc.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.VulnerabilityCount != 1 {
		t.Errorf("count %d; want 1 once the allowlist is inactive", got.VulnerabilityCount)
	}
	if rep, _ := env.Store.Check(ctx); len(rep.Drift) > 0 {
		t.Errorf("drift: %v", rep.Drift)
	}
}

// TestReevaluationPacking: a scan of 250 findings of one advisory is
// re-evaluated in a chain of three transactions (96, 96 and 58 finding
// updates with the scan's counts, its PR's record and the PR's
// pr.gate_changed, as each step changes its reasons' count), each within
// DynamoDB's 100 items; three scans of 30 share one transaction.
func TestReevaluationPacking(t *testing.T) {
	t.Parallel()
	env := ddbtest.New(t)
	ctx := context.Background()
	var mu sync.Mutex
	var sizes []int
	st := env.Recorder(t, func(op string, input any) {
		if tx, ok := input.(*dynamodb.TransactWriteItemsInput); ok {
			mu.Lock()
			sizes = append(sizes, len(tx.TransactItems))
			mu.Unlock()
		}
	})
	names := make([]string, 250)
	for i := range names {
		names[i] = "CVE-2021-44228"
	}
	if _, _, err := env.Store.RecordScan(ctx, vulnScan(1, names...), testWho, time.Now()); err != nil {
		t.Fatal(err)
	}
	for repo := int64(2); repo <= 4; repo++ {
		if _, _, err := env.Store.RecordScan(ctx, vulnScan(repo, names[:30]...), testWho, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	rule := scangate.Rule{Type: scangate.ScanVulnerability, Name: "CVE-2021-44228", Active: true, Repos: []int64{1}}
	a, upd, err := allowNow(t, st, rule)
	if err != nil || upd.Vulnerabilities != 250 {
		t.Fatalf("create: %+v %v", upd, err)
	}
	// The allowlist's transaction (its item, rule, group version, audit
	// entry, event and work item), then the chain of scan 1 (its
	// findings, its counts, its PR record and the PR's event each time).
	if want := []int{6, 96 + 3, 96 + 3, 58 + 3}; !slices.Equal(sizes, want) {
		t.Errorf("transactions of %v items; want %v", sizes, want)
	}
	sizes = nil
	if _, err := modifyNow(t, st, a.ID, scangate.AllowlistChange{Repos: &[]int64{2, 3, 4}}); err != nil {
		t.Fatal(err)
	}
	// The change, then one unit of every scan at once: scan 1's chain of
	// three (each alone, as it is full), the three small scans packed
	// together.
	total := 0
	for _, n := range sizes[1:] {
		if n > 100 {
			t.Errorf("a transaction of %d items", n)
		}
		total += n
	}
	if want := 250 + 3*30; total < want || len(sizes) > 5 {
		t.Errorf("transactions %v: %d items for %d finding updates", sizes, total, want)
	}
	if rep, _ := env.Store.Check(ctx); len(rep.Drift) > 0 {
		t.Errorf("drift: %v", rep.Drift)
	}
}
