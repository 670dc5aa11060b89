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

// TestClassifyAgainstLargeBaseline records a PR scan of 25,000 findings
// against a 25,000-finding baseline (100 of them fixed by the PR, 100
// new) on DynamoDB Local (make test-dynamodb-local; 2,500 and 2,500 on
// the embedded server, whose queries slow down with a partition's size):
// every finding classified, in round trips that grow with the
// baseline's pages, not its findings: its branch, its reads (two, a 1 MB
// page each, by the size of its items), its ABSENT items' batches, and
// its branch again once committed, beside the same recording without a
// base.
func TestClassifyAgainstLargeBaseline(t *testing.T) {
	t.Parallel()
	env := ddbtest.New(t)
	ctx := context.Background()
	n := 2_500
	if ddbtest.External() {
		n = 25_000
	}
	scan := func(branch, base string, pr int64, from int) scangate.NewScan {
		ns := scangate.NewScan{Type: scangate.ScanVulnerability, VcType: "github", VcID: 3, VcName: "gh", RepoID: 5, RepoName: "acme/api",
			WebhookID: 1, Status: "completed", Category: "semgrep", Branch: branch, BaseRef: base}
		if branch == "" {
			ns.PR = scangate.PRRef{Number: pr, Name: "n", Link: "l"}
		}
		for i := from; i < from+n; i++ {
			line := int64(i)
			ns.Findings = append(ns.Findings, scangate.Finding{Name: fmt.Sprintf("CVE-2024-%05d", i), Rule: "r", Path: "src/a.go", Line: &line,
				Severity: scangate.SeverityHigh, Fingerprint: fmt.Sprintf("fp%05d", i), FingerprintSource: "scanner"})
		}
		return ns
	}
	if _, _, err := env.Store.RecordScan(ctx, scan("main", "", 0, 0), testWho, time.Now()); err != nil {
		t.Fatal(err)
	}
	var pr scangate.Scan
	classified := env.CountTrips(func() {
		var err error
		if pr, _, err = env.Store.RecordScan(ctx, scan("", "main", 1, 100), testWho, time.Now()); err != nil {
			t.Fatal(err)
		}
	})
	plain := env.CountTrips(func() {
		if _, _, err := env.Store.RecordScan(ctx, scan("", "", 2, 100), testWho, time.Now()); err != nil {
			t.Fatal(err)
		}
	})
	if c := pr.Class; c.New != 100 || c.Unchanged != int64(n-100) || c.Absent != 100 || c.BaselineScanID != 1 {
		t.Errorf("classified %+v; want 100 new, %d unchanged, 100 absent against scan 1", c, n-100)
	}
	// A finding item of this shape is under 300 bytes: n of them are at
	// most n*300/1 MiB + 1 pages of a read; the 100 absent ones are 4
	// batches.
	pages, absentBatches := int64(n*300/(1<<20)+1), int64(4)
	budget := plain + 2*pages + absentBatches + 3
	t.Logf("classified: %d round trips; without a base: %d; budget %d", classified, plain, budget)
	if classified > budget {
		t.Errorf("the classified recording took %d round trips; the same without a base %d: the baseline may cost %d", classified, plain, budget-plain)
	}
	r, err := env.Store.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Drift) > 0 {
		t.Errorf("drift: %s", strings.Join(r.Drift, "\n"))
	}
}
