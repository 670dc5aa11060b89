package api

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"fmt"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/scangate/scangate/internal/sarif"
)

// readSARIFRequest is what POST /pr/scan/sarif does with its request
// before it records anything (its first read): it reads the body, the
// envelope and the log, and returns the number of findings the log
// records. The findings are collected (sarif.Report), as the route did
// before it wrote them as they are read.
func readSARIFRequest(req events.APIGatewayProxyRequest) (int, error) {
	raw, err := rawBody(req, MaxSARIFBody)
	if err != nil {
		return 0, err
	}
	rep := &sarif.Report{}
	_, counts, err := readSARIFUpload(raw, sarif.Options{Category: bodyCategory(raw)}, rep.Add)
	if err != nil {
		return 0, err
	}
	return counts.Recorded, nil
}

// sarifBody is a body of POST /pr/scan/sarif whose sarif member is log.
func sarifBody(log string) events.APIGatewayProxyRequest {
	return events.APIGatewayProxyRequest{Headers: map[string]string{"Content-Type": "application/json"},
		Body: `{"vc_type":"github","vc_id":10,"vc_name":"acme","repo_id":100,"repo_name":"acme/api","webhook_id":3,` +
			`"pr":{"pr_id":7,"pr_name":"Add login","pr_link":"https://git.example.com/acme/api/pull/7"},"sarif":` + log + `}`}
}

// BenchmarkReadSARIFBody reads the body of POST /pr/scan/sarif with a log
// of 25,000 results, as the route does before recording: the log as a JSON
// object in the body (25,000 bandit-shaped results, 3.4 MB), and as base64
// of its gzip (25,000 gitleaks-shaped results with their secrets' values,
// 10.5 MB of JSON). It reports the time, the allocation per result and
// the largest live heap while reading, above the heap that holds the
// request.
func BenchmarkReadSARIFBody(b *testing.B) {
	var obj, gz strings.Builder
	obj.WriteString(`{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"Bandit","version":"1.9.4"}},"results":[`)
	gz.WriteString(`{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"gitleaks","semanticVersion":"v8.0.0","rules":[{"id":"github-pat"}]}},"results":[`)
	for i := range 25_000 {
		if i > 0 {
			obj.WriteByte(',')
			gz.WriteByte(',')
		}
		fmt.Fprintf(&obj, `{"ruleId":"B%03d","level":"warning","message":{"text":"m"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"src/f%d.py"},"region":{"startLine":%d}}}]}`,
			i%1000, i, i%500+1)
		fmt.Fprintf(&gz, `{"ruleId":"github-pat","message":{"text":"github-pat has detected secret for file src/f%d.env."},`+
			`"locations":[{"physicalLocation":{"artifactLocation":{"uri":"src/f%d.env"},"region":{"startLine":%d,"startColumn":7,"endLine":%d,"endColumn":47,"snippet":{"text":"ghp_%036d"}}}}],`+
			`"partialFingerprints":{"commitSha":"","email":"","author":"","date":"","commitMessage":""},"properties":{"tags":[]}}`,
			i, i, i%500+1, i%500+1, i)
	}
	obj.WriteString(`]}]}`)
	gz.WriteString(`]}]}`)
	var z bytes.Buffer
	w := gzip.NewWriter(&z)
	_, _ = w.Write([]byte(gz.String()))
	_ = w.Close()
	for _, c := range []struct {
		name string
		req  events.APIGatewayProxyRequest
	}{
		{"object", sarifBody(obj.String())},
		{"base64-gzip", sarifBody(`"` + base64.StdEncoding.EncodeToString(z.Bytes()) + `"`)},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.req.Body)))
			read := func() {
				if n, err := readSARIFRequest(c.req); err != nil || n != 25_000 {
					b.Fatalf("recorded %d: %v", n, err)
				}
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for b.Loop() {
				read()
			}
			runtime.ReadMemStats(&after)
			n := float64(b.N) * 25_000
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/n, "B/result")
			b.ReportMetric(float64(after.Mallocs-before.Mallocs)/n, "allocs/result")
			b.ReportMetric(float64(livePeak(read))/(1<<20), "peak-live-MiB")
		})
	}
}

// livePeak runs f once and returns the largest live heap seen meanwhile
// (as the collections during f measured it) above the live heap before.
func livePeak(f func()) uint64 {
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	live := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	runtime.GC()
	base := live()
	var mu sync.Mutex
	peak := base
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			mu.Lock()
			peak = max(peak, live())
			mu.Unlock()
			select {
			case <-done:
				return
			case <-time.After(200 * time.Microsecond):
			}
		}
	})
	f()
	close(done)
	wg.Wait()
	return peak - base
}
