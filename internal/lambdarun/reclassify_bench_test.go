package lambdarun_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scangate/scangate/internal/queue/work"
	"github.com/scangate/scangate/internal/scangate"
	"github.com/scangate/scangate/internal/store"
	"github.com/scangate/scangate/internal/usecase"
)

// perPR is the findings of each PR's scan (and of the base's analyses)
// in BenchmarkReclassify.
const perPR = 1000

// reclassSizes are the numbers of PRs measured: SCANGATE_BENCH_RECLASS_PRS
// (comma separated) or 100 and 1,000.
func reclassSizes(b *testing.B) []int {
	s := os.Getenv("SCANGATE_BENCH_RECLASS_PRS")
	if s == "" {
		return []int{100, 1000}
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			b.Fatalf("SCANGATE_BENCH_RECLASS_PRS: %q", f)
		}
		out = append(out, n)
	}
	return out
}

// reclassScan is main's analysis (pr 0) or PR pr's scan based on main, of
// the secrets fp<from> to fp<from+perPR-1>.
func reclassScan(pr int64, from int) scangate.NewScan {
	ns := scangate.NewScan{Type: scangate.ScanSecret, VcType: "github", VcID: 1, VcName: "gh", RepoID: 7, RepoName: "acme/api",
		WebhookID: 1, Status: "completed", Category: "gitleaks", Branch: "main"}
	if pr > 0 {
		ns.Branch, ns.BaseRef, ns.PR = "", "main", scangate.PRRef{Number: pr, Name: "n", Link: "l"}
	}
	for i := from; i < from+perPR; i++ {
		ns.Findings = append(ns.Findings, scangate.Finding{Name: fmt.Sprintf("sha256:%d", i), Rule: "generic-api-key", Path: "src/app.py",
			Severity: scangate.SeverityHigh, Fingerprint: fmt.Sprintf("fp%d", i), FingerprintSource: "scanner"})
	}
	return ns
}

// BenchmarkReclassify measures a base scan that re-classifies N active
// PRs of 1,000 findings each (100 and 1,000 PRs), on DynamoDB Local (make
// bench) or the embedded server: main's analysis of fp0..fp999 is
// recorded, the PRs' scans (fp0..fp999, every finding unchanged) are
// loaded with store.BulkLoad, classified against it; a raw-rate probe then
// writes findings-sized items and updates them in TransactWriteItems of
// 98 conditioned updates (the re-evaluation benchmark's probe); then
// main's next analysis (fp100..fp1099) is recorded with no budget in its
// request, so its whole work goes to the queue, and its steps run in
// benchWorkers processes of the work function. Every PR then has 100 new
// findings, 900 unchanged and 100 absent: 100 findings of each change
// state. It reports the time from the base scan to the work's completion,
// the PRs' findings re-classified per second, that rate as a fraction of
// the raw transactional rate, and the largest peak resident memory of a
// worker; and checks that every PR was re-classified once.
func BenchmarkReclassify(b *testing.B) {
	ctx := context.Background()
	db, endpoint := benchDB(b)
	bin := build(b, b.TempDir(), "./functions/run-work", runtime.GOARCH)
	who := scangate.Who{RequestID: "bench"}
	for _, n := range reclassSizes(b) {
		b.Run(fmt.Sprintf("prs=%d", n), func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				table := fmt.Sprintf("bench-reclass-%d-%d", time.Now().UnixNano(), i)
				if err := store.CreateTable(ctx, db, table); err != nil {
					b.Fatal(err)
				}
				st := store.New(db, table, store.WithBaselineBudget(0))
				if _, _, err := st.RecordScan(ctx, reclassScan(0, 0), who, time.Now()); err != nil {
					b.Fatal(err)
				}
				start := time.Now()
				for from := 1; from <= n; from += 100 {
					var nss []scangate.NewScan
					for pr := from; pr < min(from+100, n+1); pr++ {
						nss = append(nss, reclassScan(int64(pr), 0))
					}
					if _, err := st.BulkLoad(ctx, nss, who, time.Now()); err != nil {
						b.Fatal(err)
					}
				}
				b.Logf("loaded %d PRs of %d findings in %.1f s", n, perPR, time.Since(start).Seconds())
				raw := rawRate(b, db, table, min(n*perPR, 100_000))
				rawTx := rawTxRate(b, db, table, min(n*perPR, 100_000))
				took, peak := rebase(b, st, bin, table, endpoint, n)
				found := float64(n * perPR)
				b.ReportMetric(took.Seconds(), "s/base-scan")
				b.ReportMetric(found/took.Seconds(), "findings/s")
				b.ReportMetric(raw, "raw-items/s")
				b.ReportMetric(rawTx, "raw-tx-items/s")
				b.ReportMetric(found/took.Seconds()/rawTx, "fraction-of-raw-tx")
				b.ReportMetric(float64(peak)/1024, "worker-peak-MiB")
			}
		})
	}
}

// rebase records main's next analysis, dispatches its work in this
// process (the scheduled function's part) and runs its steps in
// benchWorkers work functions; it returns the time from the base scan to
// the work's completion and the largest peak memory of a worker (KiB).
func rebase(b *testing.B, st *store.Store, bin, table, endpoint string, n int) (time.Duration, int64) {
	ctx := context.Background()
	queue := &collected{}
	run := usecase.Runner(st, time.Now, queue)
	start := time.Now()
	if _, _, err := st.RecordScan(ctx, reclassScan(0, 100), scangate.Who{RequestID: "bench"}, start); err != nil {
		b.Fatal(err)
	}
	ids, err := st.DueWork(ctx, time.Now())
	if err != nil || len(ids) == 0 {
		b.Fatalf("the base scan's work: %v %v", ids, err)
	}
	// The newest: the first analysis of main left one too, of no PR.
	it, ok, err := st.ClaimWork(ctx, slices.Max(ids), time.Now(), run.LeaseFrom(time.Now()))
	if err != nil || !ok {
		b.Fatalf("claim the base scan's work: %v %v", ok, err)
	}
	if it, err = run.Continue(ctx, it); err != nil {
		b.Fatal(err)
	}
	planned := time.Since(start)
	peaks := runWorkers(b, bin, table, endpoint, queue.bodies)
	if len(queue.bodies) == 0 { // one step: run here
		if it, err = run.Continue(ctx, it); err != nil {
			b.Fatal(err)
		}
	}
	took := time.Since(start)
	got, err := st.WorkItem(ctx, it.ID)
	if err != nil || got.Status != work.Complete || got.Totals["prs"] != int64(n) || got.Totals["changed"] != int64(n) {
		b.Fatalf("the work: %+v %v", got, err)
	}
	for _, pr := range []int64{1, int64(n)} {
		g, err := st.PRGate(ctx, pr)
		if err != nil {
			b.Fatal(err)
		}
		if c := g.Categories[0].Class; c.New != 100 || c.Unchanged != perPR-100 || c.Absent != 100 {
			b.Fatalf("PR %d after the base scan: %+v", pr, c)
		}
	}
	peak := int64(0)
	for _, p := range peaks {
		peak = max(peak, p)
	}
	b.Logf("%d PRs: %d steps; planned and dispatched in %.1f s, complete in %.1f s; worker peaks %v KiB", n, got.Steps,
		planned.Seconds(), took.Seconds(), peaks)
	return took, peak
}
