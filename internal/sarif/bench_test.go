package sarif

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"runtime"
	"runtime/metrics"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkRead reads a log of 25,000 gitleaks-like results, each in a file
// of its own (25,000 findings), as JSON, as gzip and as base64 of gzip. It
// reports the allocation per result, the heap the report keeps, and the
// largest live heap while reading (above the heap before it, which holds the
// input): with 2 KiB messages the log is 6 times larger and the live heap
// does not grow with it, since the log is streamed.
func BenchmarkRead(b *testing.B) {
	for _, c := range []struct {
		name string
		pad  int
	}{{"25000", 0}, {"25000-2KiB-messages", 2048}} {
		raw, _ := io.ReadAll(&genLog{n: 25000, pad: c.pad})
		size := int64(len(raw))
		z := gz(b, string(raw))
		b64 := base64.StdEncoding.EncodeToString(z)
		for _, form := range []struct {
			name string
			read func() (*Report, error)
		}{
			{"json", func() (*Report, error) { return readLog(bytes.NewReader(raw), Options{}) }},
			{"gzip", func() (*Report, error) { return readGzip(bytes.NewReader(z), Options{}) }},
			{"base64-gzip", func() (*Report, error) { return readB64(b64, Options{}) }},
		} {
			b.Run(c.name+"/"+form.name, func(b *testing.B) {
				b.SetBytes(size)
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				for b.Loop() {
					rep, err := form.read()
					if err != nil || rep.Recorded != 25000 {
						b.Fatalf("%v, %+v", err, rep)
					}
				}
				runtime.ReadMemStats(&after)
				n := float64(b.N) * 25000
				b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/n, "B/result")
				b.ReportMetric(float64(after.Mallocs-before.Mallocs)/n, "allocs/result")
				b.ReportMetric(float64(size)/(1<<20), "log-MiB")
				b.ReportMetric(float64(len(z))/(1<<10), "gzip-KiB")
				peak, kept := peakLive(form.read)
				b.ReportMetric(float64(peak)/(1<<20), "peak-live-MiB")
				b.ReportMetric(float64(kept)/(1<<20), "report-MiB")
			})
		}
		raw = nil
	}
}

// peakLive reads once and returns the largest live heap seen while reading
// (as the collections during the read measured it) above the live heap
// before, and the heap the report keeps.
func peakLive(read func() (*Report, error)) (peak, kept uint64) {
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	live := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	runtime.GC()
	base := live()
	var max atomic.Uint64
	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			if h := live(); h > max.Load() {
				max.Store(h)
			}
			select {
			case <-done:
				return
			case <-time.After(200 * time.Microsecond):
			}
		}
	}()
	rep, _ := read()
	close(done)
	wg.Wait()
	runtime.GC()
	end := live()
	runtime.KeepAlive(rep)
	peak = max.Load()
	if end > peak {
		peak = end
	}
	return peak - min(peak, base), end - min(end, base)
}

// BenchmarkGzipBomb refuses a 134 KiB base64 gzip that inflates to 101 MiB
// of whitespace, as base64 of gzip and as gzip: both as they inflate, at
// the 8 MiB held of one value.
func BenchmarkGzipBomb(b *testing.B) {
	z := bomb(b, `{"version":"2.1.0","runs":[`, ' ')
	b64 := base64.StdEncoding.EncodeToString(z)
	b.Run("base64", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := readB64(b64, Options{}); err == nil {
				b.Fatal("read")
			}
		}
	})
	b.Run("gzip", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := readGzip(bytes.NewReader(z), Options{}); err == nil {
				b.Fatal("read")
			}
		}
	})
}

// runsLog streams a log of n compact gitleaks-like results (about 170
// bytes each, so that 500,000 stay under the 100 MiB a log may hold) in
// runs of perRun, each result a distinct secret in a file of its own.
type runsLog struct {
	n, perRun, i int
	buf          bytes.Buffer
}

func (g *runsLog) Read(p []byte) (int, error) {
	for g.buf.Len() < len(p) && g.i <= g.n {
		switch {
		case g.i == 0:
			g.buf.WriteString(`{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"gitleaks"}},"results":[`)
		case g.i == g.n:
			fmt.Fprintf(&g.buf, `%s]}]}`, g.result())
		case g.i%g.perRun == 0:
			fmt.Fprintf(&g.buf, `%s]},{"tool":{"driver":{"name":"gitleaks"}},"results":[`, g.result())
		default:
			fmt.Fprintf(&g.buf, `%s,`, g.result())
		}
		g.i++
	}
	if g.buf.Len() == 0 {
		return 0, io.EOF
	}
	return g.buf.Read(p)
}

func (g *runsLog) result() string {
	return fmt.Sprintf(`{"ruleId":"github-pat","message":{"text":"m"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"s/f%d.env"},`+
		`"region":{"startLine":%d,"snippet":{"text":"v%d"}}}}]}`, g.i, g.i%500+1, g.i)
}

// BenchmarkReadLarge reads logs of 100,000 and 500,000 results in runs of
// 25,000 (the contract's 20 runs of 25,000 at most), streamed from a
// generator, with a handler that drops each run once handed on (as an
// ingest that writes a run's findings does). It reports the largest live
// heap while reading (above the heap before), and allocation per result:
// the live heap is one run's state plus the de-duplication set, which
// grows by a few dozen bytes a finding, not with the log.
func BenchmarkReadLarge(b *testing.B) {
	for _, n := range []int{100_000, 500_000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			lim := Limits{FindingsPerType: n}
			read := func() {
				var found int
				c, err := Read(&runsLog{n: n, perRun: 25_000}, Options{Limits: lim}, func(run *Run) error {
					found += len(run.Secrets)
					return nil
				})
				if err != nil || found != n || c.Recorded != n {
					b.Fatalf("%d findings of %d: %v", found, n, err)
				}
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for b.Loop() {
				read()
			}
			runtime.ReadMemStats(&after)
			count := float64(b.N) * float64(n)
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/count, "B/result")
			b.ReportMetric(float64(after.Mallocs-before.Mallocs)/count, "allocs/result")
			peak, _ := peakLive(func() (*Report, error) { read(); return nil, nil })
			b.ReportMetric(float64(peak)/(1<<20), "peak-live-MiB")
			b.ReportMetric(float64(peak)/float64(n), "peak-live-B/result")
		})
	}
}
