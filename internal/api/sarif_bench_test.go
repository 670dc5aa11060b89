package api_test

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkSARIFUpload records a SARIF upload of 25,000 results (2,500
// distinct secrets, each found 10 times) through the real handler, and
// reports findings recorded per second and round trips (make bench: on
// DynamoDB Local; the budget is 29 s an upload). rtt=10ms makes every call
// wait 10 ms before it is sent, as a call to DynamoDB from a function in
// its region takes about that long: what the recording's parallel batches
// win on AWS, where it waits on the network rather than on the server's
// CPU as with DynamoDB Local on one machine.
func BenchmarkSARIFUpload(b *testing.B) {
	results := make([]any, 25_000)
	for i := range results {
		results[i] = map[string]any{"ruleId": "generic-api-key", "message": map[string]any{"text": "secret"},
			"locations": []any{map[string]any{"physicalLocation": map[string]any{
				"artifactLocation": map[string]any{"uri": fmt.Sprintf("src/f%d.go", i%10)},
				"region":           map[string]any{"startLine": 1 + i/2500, "snippet": map[string]any{"text": fmt.Sprintf("value-%d", i%2500)}}}}}}
	}
	log := map[string]any{"version": "2.1.0", "runs": []any{map[string]any{
		"tool": map[string]any{"driver": map[string]any{"name": "gitleaks", "version": "8.30.1"}}, "results": results}}}
	body := gzipBase64(b, log)
	for _, rtt := range []time.Duration{0, 10 * time.Millisecond} {
		b.Run(fmt.Sprintf("rtt=%v", rtt), func(b *testing.B) {
			h := newHarness(b)
			wait := func(string) { time.Sleep(rtt) }
			if rtt > 0 {
				h.env.Hook.Store(&wait)
			}
			b.ResetTimer()
			start, trips := time.Now(), h.env.RoundTrips()
			for range b.N {
				out := mustOK(b, h.upload(body, ""))
				if out["recorded"] != 25_000.0 {
					b.Fatalf("recorded %v", out["recorded"])
				}
			}
			perUpload := time.Since(start) / time.Duration(b.N)
			b.ReportMetric(perUpload.Seconds(), "s/upload")
			b.ReportMetric(25_000/perUpload.Seconds(), "findings/s")
			b.ReportMetric(float64(h.env.RoundTrips()-trips)/float64(b.N), "roundtrips/upload")
		})
	}
}
