package api_test

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkReevaluate measures an allowlist change that re-evaluates
// 10,000 findings, in two shapes: 100 scans of 100 findings and 2,000
// scans of 5. Each iteration suppresses them all and then releases them
// all again; the figure per change is in docs/BENCHMARKS.md.
func BenchmarkReevaluate(b *testing.B) {
	for _, shape := range []struct{ scans, per int }{{100, 100}, {2000, 5}} {
		b.Run(fmt.Sprintf("%dx%d", shape.scans, shape.per), func(b *testing.B) {
			h := newHarness(b)
			names := make([]string, shape.per)
			for i := range names {
				names[i] = "CVE-2021-44228"
			}
			for i := range shape.scans {
				resp := h.record(scanReq{Type: "VULNERABILITY", Status: "completed", PR: int64(1 + i%50), RepoID: int64(100 + i%7), Findings: names})
				if resp.StatusCode != 201 {
					b.Fatalf("record: %d %s", resp.StatusCode, resp.Body)
				}
			}
			if resp := h.allow(`{"type":"VULNERABILITY","name":"CVE-2021-44228","active":false,"global_":true}`); resp.StatusCode != 201 {
				b.Fatal(resp.Body)
			}
			trips := h.env.RoundTrips()
			b.ResetTimer()
			start := time.Now()
			for b.Loop() {
				for _, body := range []string{`{"active":true}`, `{"active":false}`} {
					resp := h.modify(1, body)
					if resp.StatusCode != 200 || decode(h.t, resp)["vulnerabilities_updated"] != 10000.0 {
						b.Fatalf("change: %d %s", resp.StatusCode, resp.Body)
					}
				}
			}
			changes := float64(2 * b.N)
			b.ReportMetric(time.Since(start).Seconds()/changes, "s/change")
			b.ReportMetric(float64(h.env.RoundTrips()-trips)/changes, "roundtrips/change")
		})
	}
}
