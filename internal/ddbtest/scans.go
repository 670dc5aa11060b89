package ddbtest

import (
	"fmt"

	"github.com/scangate/scangate/internal/scangate"
)

// GroupScans are scans of one vulnerability: n scans of per findings
// each, all named name (so one allowlist group holds them all), spread
// over n/10 pull requests (scans 10k..10k+9 of one PR, the last the newest)
// in 7 repositories: the shape of the re-evaluations the kill test and
// the benchmarks run, to load with store.BulkLoad. Scan i's findings are
// in files of their own (path src/<i>/<k>.go).
func GroupScans(n, per int, name string) []scangate.NewScan {
	out := make([]scangate.NewScan, n)
	for i := range out {
		fs := make([]scangate.Finding, per)
		for k := range fs {
			fs[k] = scangate.Finding{Name: name, Path: fmt.Sprintf("src/%d/%d.go", i, k), Severity: scangate.SeverityHigh}
		}
		pr := int64(1 + i/10)
		out[i] = scangate.NewScan{Type: scangate.ScanVulnerability, VcType: "github", VcID: 1, VcName: "acme", RepoID: 100 + pr%7,
			RepoName: fmt.Sprintf("acme/r%d", pr%7), WebhookID: 1, Status: "completed", Category: scangate.DefaultCategory,
			PR: scangate.PRRef{Number: pr, Name: fmt.Sprintf("PR %d", pr), Link: fmt.Sprintf("https://git.example.com/pr/%d", pr)}, Findings: fs}
	}
	return out
}
