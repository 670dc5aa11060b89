package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/scangate/scangate/internal/ddbtest"
	"github.com/scangate/scangate/internal/scangate"
)

// TestBlockingFindings: the findings that block a gate, as its check run
// and note show them, are read one Query a page of each blocking scan
// (a scan of 2,500 findings: 3 pages), kept bounded (the first limit, new
// ones first, then the most severe, then by scan and place), without the
// suppressed ones or those below the scan's lowest blocking severity, and
// only the new ones when the policy blocks on new findings; the read
// stops at maxRead findings and says so.
func TestBlockingFindings(t *testing.T) {
	t.Parallel()
	env := ddbtest.New(t)
	ctx := context.Background()
	line := func(n int) *int64 { l := int64(n); return &l }
	sevs := []scangate.Severity{scangate.SeverityLow, scangate.SeverityMedium, scangate.SeverityHigh, scangate.SeverityCritical, scangate.SeverityNone}
	scan := func(ns scangate.NewScan) scangate.Scan {
		t.Helper()
		sc, _, err := env.Store.RecordScan(ctx, ns, testWho, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		return sc
	}
	base := scangate.NewScan{Type: scangate.ScanVulnerability, VcType: "github", VcID: 1, VcName: "v", RepoID: 2, RepoName: "o/r",
		WebhookID: 3, Status: "completed", Category: "semgrep"}
	// The base branch has fingerprints fp-0..fp-99: the PR's findings with
	// those are unchanged, the others new.
	main := base
	main.Branch = "main"
	for i := range 100 {
		main.Findings = append(main.Findings, scangate.Finding{Name: "CVE-1", Rule: "r", Path: "a.go", Line: line(i + 1),
			Severity: scangate.SeverityCritical, Fingerprint: fmt.Sprintf("fp-%d", i)})
	}
	scan(main)
	pr := base
	pr.PR, pr.BaseRef = scangate.PRRef{Number: 4, Name: "n", Link: "l"}, "main"
	for i := range 2500 {
		pr.Findings = append(pr.Findings, scangate.Finding{Name: fmt.Sprintf("CVE-%d", i), Rule: "r", Path: "b.go", Line: line(i + 1),
			Severity: sevs[i%len(sevs)], Fingerprint: fmt.Sprintf("fp-%d", i), InSource: i%10 == 3})
	}
	vulns := scan(pr)
	secret := base
	secret.Type, secret.Category, secret.PR = scangate.ScanSecret, "gitleaks", pr.PR
	secret.Findings = []scangate.Finding{{Name: "sha256:aa", Rule: "aws", Path: "c.go", Line: line(9), Severity: scangate.SeverityLow}}
	secrets := scan(secret)

	var got []scangate.BlockingFinding
	var truncated bool
	var err error
	read := func(scans []scangate.BlockingScan, limit, maxRead int) int64 {
		return env.CountTrips(func() { got, truncated, err = env.Store.BlockingFindings(ctx, scans, limit, maxRead) })
	}
	all := []scangate.BlockingScan{
		{ScanID: vulns.ID, Type: scangate.ScanVulnerability, Category: "semgrep", Min: scangate.SeverityHigh},
		{ScanID: secrets.ID, Type: scangate.ScanSecret, Category: "gitleaks", Min: scangate.SeverityNone},
	}
	trips := read(all, 10, 50000)
	if err != nil || truncated || trips != 4 { // 2,500 findings: 3 pages of at most 1,000; 1 finding: 1 page
		t.Fatalf("read %d findings, truncated %v, %d round trips, %v", len(got), truncated, trips, err)
	}
	// New first (the secret and the PR's findings from fp-100 on), then
	// the most severe: the new criticals (i%5 == 3) not suppressed (i%10
	// == 3 are), by place.
	want := []string{"CVE-108", "CVE-118", "CVE-128", "CVE-138", "CVE-148", "CVE-158", "CVE-168", "CVE-178", "CVE-188", "CVE-198"}
	for i, f := range got {
		if f.Name != want[i] || f.BaselineState != "new" || f.Severity != scangate.SeverityCritical || f.Category != "semgrep" ||
			f.Path != "b.go" || f.Line == nil || *f.Line != int64(f.Index+1) || f.ScanID != vulns.ID {
			t.Fatalf("finding %d: %+v, want %s", i, f, want[i])
		}
	}
	// All of them: 500 highs (i%10 is 2 or 7), 250 criticals not
	// suppressed, and the secret, which blocks at every severity.
	read(all, 5000, 50000)
	for _, f := range got {
		if f.Suppressed || !f.Severity.AtLeast(scangate.SeverityHigh) && f.Type == scangate.ScanVulnerability {
			t.Fatalf("%+v does not block", f)
		}
	}
	if len(got) != 751 {
		t.Fatalf("%d blocking findings, want 751", len(got))
	}
	// The 240 new criticals, the 480 new highs, the secret (new, low),
	// then the 30 unchanged of fp-0..fp-99, the last the last high.
	if s := got[720]; s.Type != scangate.ScanSecret || s.Name != "sha256:aa" || s.Order != 1 {
		t.Errorf("the secret (low, new) comes after the new highs: %+v", s)
	}
	if last := got[len(got)-1]; last.BaselineState != "unchanged" || last.Name != "CVE-97" {
		t.Errorf("the last is %+v, want the last unchanged high, CVE-97", last)
	}
	// block_on new: the unchanged ones do not block.
	newOnly := []scangate.BlockingScan{all[0]}
	newOnly[0].NewOnly = true
	read(newOnly, 5000, 50000)
	if len(got) != 720 {
		t.Errorf("%d new blocking findings, want 720", len(got))
	}
	// At most maxRead findings read: one page of 1,000, then 500.
	trips = read(all, 10, 1500)
	if err != nil || !truncated || trips != 2 || len(got) != 10 || got[0].Name != "CVE-108" {
		t.Fatalf("read at most 1,500: %d findings, truncated %v, %d round trips, %v", len(got), truncated, trips, err)
	}
}

// BenchmarkBlockingFindings reads the blocking findings of a scan of
// 25,000 (a SARIF run's most), every one blocking, keeping the first
// 1,000: the deliverer's read for a check run or a note of such a gate.
// go test -run '^$' -bench BlockingFindings ./internal/store
func BenchmarkBlockingFindings(b *testing.B) {
	env := ddbtest.New(b)
	ctx := context.Background()
	ns := scangate.NewScan{Type: scangate.ScanVulnerability, VcType: "github", VcID: 1, VcName: "v", RepoID: 2, RepoName: "o/r",
		WebhookID: 3, PR: scangate.PRRef{Number: 4, Name: "n", Link: "l"}, Status: "completed", Category: "semgrep"}
	for i := range 25000 {
		line := int64(i + 1)
		ns.Findings = append(ns.Findings, scangate.Finding{Name: fmt.Sprintf("CVE-2024-%05d", i), Rule: "rule-" + fmt.Sprint(i%50),
			Path: fmt.Sprintf("src/pkg%02d/file%03d.go", i%40, i%700), Line: &line, Severity: scangate.SeverityHigh})
	}
	sc, _, err := env.Store.RecordScan(ctx, ns, testWho, time.Now())
	if err != nil {
		b.Fatal(err)
	}
	scans := []scangate.BlockingScan{{ScanID: sc.ID, Type: scangate.ScanVulnerability, Category: "semgrep", Min: scangate.SeverityNone}}
	b.ResetTimer()
	trips := env.CountTrips(func() {
		for range b.N {
			fs, _, err := env.Store.BlockingFindings(ctx, scans, 1000, 50000)
			if err != nil || len(fs) != 1000 {
				b.Fatalf("%d findings, %v", len(fs), err)
			}
		}
	})
	b.ReportMetric(float64(trips)/float64(b.N), "round-trips/op")
}
