package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/scangate/scangate/internal/ddbtest"
	"github.com/scangate/scangate/internal/scangate"
)

// TestLoneChangeMeetsNoConflict: an allowlist change that re-evaluates
// the findings of 40 scans, with nothing else running, commits its
// transactions without one TransactionConflict. Every transaction of a
// re-evaluation checks the group's version, and DynamoDB cancels
// transactions in flight together that include the same item, a check
// included (ddbtest plays that rule), so they must not overlap.
func TestLoneChangeMeetsNoConflict(t *testing.T) {
	t.Parallel()
	env := ddbtest.New(t)
	ctx := context.Background()
	names := make([]string, 30)
	for i := range names {
		names[i] = "CVE-2021-44228"
	}
	for repo := int64(1); repo <= 40; repo++ {
		if _, _, err := env.Store.RecordScan(ctx, vulnScan(repo, names...), testWho, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	before := env.Conflicts()
	rule := scangate.Rule{Type: scangate.ScanVulnerability, Name: "CVE-2021-44228", Active: true, Global: true}
	_, upd, err := allowNow(t, env.Store, rule)
	if err != nil || upd.Vulnerabilities != 40*30 {
		t.Fatalf("create: %+v %v", upd, err)
	}
	if n := env.Conflicts() - before; n != 0 {
		t.Errorf("%d of the change's transactions were cancelled by a conflict; want none", n)
	}
	if rep, err := env.Store.Check(ctx); err != nil || len(rep.Drift) > 0 {
		t.Errorf("check: %v %v", rep.Drift, err)
	}
}
