package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/scangate/scangate/internal/ddbtest"
	"github.com/scangate/scangate/internal/scangate"
)

// baseScans are a branch's analysis (pr 0) or PR scans based on main,
// of findings fp<from> to fp<from+n-1>.
func baseScan(branch string, pr int64, from, n int) scangate.NewScan {
	ns := scangate.NewScan{Type: scangate.ScanSecret, VcType: "github", VcID: 3, VcName: "gh", RepoID: 5, RepoName: "acme/api",
		WebhookID: 1, Status: "completed", Category: "gitleaks", Branch: branch}
	if branch == "" {
		ns.PR, ns.BaseRef = scangate.PRRef{Number: pr, Name: "n", Link: "l"}, "main"
	}
	for i := from; i < from+n; i++ {
		ns.Findings = append(ns.Findings, scangate.Finding{Name: fmt.Sprintf("sha256:%d", i), Rule: "r", Path: "a.go",
			Severity: scangate.SeverityHigh, Fingerprint: fmt.Sprintf("fp%d", i), FingerprintSource: "scanner"})
	}
	return ns
}

// TestBulkLoadClassifies: BulkLoad classifies PR scans with a base
// against the branch's newest analysis as a recording does (states,
// counts, absent items, the PRs kept under their base), so that check
// finds no drift, and a base scan after it re-classifies them through its
// work: each PR's gate changes once, of cause baseline.
func TestBulkLoadClassifies(t *testing.T) {
	t.Parallel()
	env := ddbtest.New(t)
	ctx := context.Background()
	if _, _, err := env.Store.RecordScan(ctx, baseScan("main", 0, 0, 10), testWho, time.Now()); err != nil {
		t.Fatal(err)
	}
	var prs []scangate.NewScan
	for pr := int64(1); pr <= 3; pr++ {
		prs = append(prs, baseScan("", pr, 2, 10)) // fp2..fp11: 2 new, 2 absent
	}
	if _, err := env.Store.BulkLoad(ctx, prs, testWho, time.Now()); err != nil {
		t.Fatal(err)
	}
	noDrift := func() {
		t.Helper()
		r, err := env.Store.Check(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Drift) > 0 || len(r.Running) > 0 {
			t.Fatalf("drift: %s; running %v", strings.Join(r.Drift, "\n"), r.Running)
		}
	}
	noDrift()
	g, err := env.Store.PRGate(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if c := g.Categories[0].Class; c.New != 2 || c.Unchanged != 8 || c.Absent != 2 || c.BaselineScanID != 1 {
		t.Errorf("PR 1 as loaded: %+v", c)
	}
	// main moves to fp2..fp11: every PR's findings are unchanged.
	if _, _, err := env.Store.RecordScan(ctx, baseScan("main", 0, 2, 10), testWho, time.Now()); err != nil {
		t.Fatal(err)
	}
	noDrift()
	changes := ddbtest.GateChanges(t, env.DB, env.Table)
	for pr := int64(1); pr <= 3; pr++ {
		g, err := env.Store.PRGate(ctx, pr)
		if err != nil {
			t.Fatal(err)
		}
		if c := g.Categories[0].Class; c.New != 0 || c.Unchanged != 10 || c.Absent != 0 || c.BaselineScanID != 5 {
			t.Errorf("PR %d once main moved: %+v", pr, c)
		}
		n := 0
		for _, e := range changes[pr] {
			if e.Cause == scangate.CauseBaseline {
				n++
			}
		}
		if n != 1 {
			t.Errorf("PR %d: %d gate changes of cause baseline; want 1", pr, n)
		}
	}
}
