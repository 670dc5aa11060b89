package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/scangate/scangate/internal/ddbtest"
	"github.com/scangate/scangate/internal/scangate"
)

// TestFindingsPageOfABigScan: a scan of 25,000 findings (what a SARIF
// upload may record) is read a page at a time, each page within two round
// trips, wherever it starts; a filter that drops most findings still
// answers in one Query a page.
func TestFindingsPageOfABigScan(t *testing.T) {
	t.Parallel()
	env := ddbtest.New(t)
	ctx := context.Background()
	const n = 25000
	ns := scangate.NewScan{Type: scangate.ScanSecret, VcType: "github", VcID: 1, VcName: "v", RepoID: 2, RepoName: "o/r",
		WebhookID: 3, PR: scangate.PRRef{Number: 4, Name: "n", Link: "l"}, Status: "completed"}
	for i := range n {
		ns.Findings = append(ns.Findings, scangate.Finding{Name: fmt.Sprintf("sha256:%02d", i%10), Rule: "rule", Path: "p", InSource: i%1000 == 7})
	}
	sc, _, err := env.Store.RecordScan(ctx, ns, testWho, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var page []scangate.RecordedFinding
	var next map[string]string
	findings := func(f scangate.FindingFilter, after map[string]string) func() {
		return func() {
			var p scangate.Page[scangate.RecordedFinding]
			p, err = env.Store.FindingsPage(ctx, sc.ID, f, 100, after)
			page, next = p.Items, p.Next
		}
	}
	trips := env.CountTrips(findings(scangate.FindingFilter{}, nil))
	if err != nil || len(page) != 100 || next == nil || page[0].Index != 0 || page[99].Index != 99 {
		t.Fatalf("first page: %d findings from %v, next %v, %v", len(page), page[0], next, err)
	}
	if trips > 2 {
		t.Errorf("the first page of 100 of %d findings took %d round trips", n, trips)
	}
	// Further pages: one Query each, in order, without a gap.
	for p := 1; p < 3; p++ {
		trips = env.CountTrips(findings(scangate.FindingFilter{}, next))
		if err != nil || len(page) != 100 || page[0].Index != 100*p || trips != 1 {
			t.Fatalf("page %d: %d findings from %d, %d round trips, %v", p+1, len(page), page[0].Index, trips, err)
		}
	}
	// Only the 25 findings suppressed in source: most of the scan is read
	// past, a Query a page, and every one is found once, in order.
	var got []int
	var after map[string]string
	pages := 0
	for first := true; first || after != nil; first = false {
		sup := true
		trips = env.CountTrips(findings(scangate.FindingFilter{Suppressed: &sup}, after))
		after = next
		if err != nil {
			t.Fatal(err)
		}
		if trips > 2 {
			t.Errorf("a filtered page took %d round trips", trips)
		}
		for _, f := range page {
			got = append(got, f.Index)
		}
		pages++
	}
	if len(got) != n/1000 {
		t.Fatalf("suppressed findings %v; want %d", got, n/1000)
	}
	for i, idx := range got {
		if idx != 1000*i+7 {
			t.Fatalf("suppressed findings %v", got)
		}
	}
	t.Logf("%d findings: 25 suppressed ones in %d pages", n, pages)
}

// TestPRByNumberIsOneGetItem: the PR of a number in a repository is read
// with one GetItem of its record, keyed by that identity: no Query, no
// BatchGetItem.
func TestPRByNumberIsOneGetItem(t *testing.T) {
	t.Parallel()
	env := ddbtest.New(t)
	ctx := context.Background()
	sc, _, err := env.Store.RecordScan(ctx, scangate.NewScan{Type: scangate.ScanSecret, VcType: "github", VcID: 1, VcName: "v",
		RepoID: 2, RepoName: "o/r", WebhookID: 3, PR: scangate.PRRef{Number: 42, Name: "n", Link: "l"}}, testWho, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	var ops []string
	st := env.Recorder(t, func(op string, _ any) { ops = append(ops, op) })
	for _, c := range []struct {
		number int64
		want   []int64
	}{{42, []int64{sc.PRID}}, {43, nil}} {
		ops = nil
		prs, err := st.PRsPage(ctx, scangate.PRFilter{VcID: 1, RepoID: 2, Number: c.number}, 50, nil)
		next := prs.Next
		var got []int64
		for _, pr := range prs.Items {
			got = append(got, pr.ID)
		}
		if err != nil || next != nil || fmt.Sprint(got) != fmt.Sprint(c.want) || fmt.Sprint(ops) != "[GetItem]" {
			t.Errorf("number %d: PRs %v, next %v, %v, operations %v; want %v in one GetItem", c.number, got, next, err, ops, c.want)
		}
	}
}
