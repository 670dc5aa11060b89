package sarif

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
)

// genLog streams a log of one run of n results without holding it: each
// result is a gitleaks-like finding with a message of pad bytes, in a file
// of its own. A non-empty tail is written after the n-th result instead of
// closing the log.
type genLog struct {
	n, pad, i int
	tail      string
	buf       bytes.Buffer
	read      int64
}

func (g *genLog) Read(p []byte) (int, error) {
	for g.buf.Len() < len(p) && g.i <= g.n {
		if g.i == 0 {
			g.buf.WriteString(`{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"gitleaks","semanticVersion":"v8.0.0","rules":[{"id":"github-pat","shortDescription":{"text":"GitHub PAT"}}]}},"results":[`)
		} else {
			fmt.Fprintf(&g.buf, `{"ruleId":"github-pat","message":{"text":"github-pat has detected secret for file src/f%d.env.%s"},`+
				`"locations":[{"physicalLocation":{"artifactLocation":{"uri":"src/f%d.env"},"region":{"startLine":%d,"startColumn":7,"endLine":%d,"endColumn":47,"snippet":{"text":"ghp_%036d"}}}}],`+
				`"partialFingerprints":{"commitSha":"","email":"","author":"","date":"","commitMessage":""},"properties":{"tags":[]}}`,
				g.i, strings.Repeat("x", g.pad), g.i, g.i%500+1, g.i%500+1, g.i)
			if g.i < g.n {
				g.buf.WriteByte(',')
			}
		}
		g.i++
		if g.i > g.n {
			if g.tail != "" {
				g.buf.WriteString(g.tail)
			} else {
				g.buf.WriteString(`]}]}`)
			}
		}
	}
	if g.buf.Len() == 0 {
		return 0, io.EOF
	}
	n, _ := g.buf.Read(p)
	g.read += int64(n)
	return n, nil
}

func wantLimit(t *testing.T, err error, limit, pointer string) {
	t.Helper()
	var le *LimitError
	if !errors.As(err, &le) {
		t.Fatalf("got %v (%T), want a LimitError %s", err, err, limit)
	}
	if le.Limit != limit || pointer != "" && le.Pointer != pointer {
		t.Fatalf("got limit %s at %q (%v), want %s at %q", le.Limit, le.Pointer, le, limit, pointer)
	}
}

// allocated returns the bytes f allocates.
func allocated(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// bomb returns the gzip of a log that inflates to 101 MiB: a prefix, then
// 101 MiB of fill.
func bomb(t testing.TB, prefix string, fill byte) []byte {
	var b bytes.Buffer
	w, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	if _, err := io.WriteString(w, prefix); err != nil {
		t.Fatal(err)
	}
	chunk := bytes.Repeat([]byte{fill}, 1<<20)
	for i := 0; i < 101; i++ {
		if _, err := w.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// A gzip bomb (100 KiB that inflate to 101 MiB) is refused as it inflates,
// as base64 of gzip and as gzip alike, without ever holding more than a few
// buffers of it.
func TestGzipBomb(t *testing.T) {
	for name, gz := range map[string][]byte{
		"whitespace": bomb(t, `{"version":"2.1.0","runs":[`, ' '),
		"one string": bomb(t, `{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"`, 'A'),
	} {
		b64 := base64.StdEncoding.EncodeToString(gz)
		if len(b64) > 200<<10 {
			t.Fatalf("%s: the bomb is %d bytes of base64", name, len(b64))
		}
		for form, read := range map[string]func() error{
			"base64": func() error { _, err := readB64(b64, Options{Pointer: "/sarif"}); return err },
			"gzip":   func() error { _, err := readGzip(bytes.NewReader(gz), Options{Pointer: "/sarif"}); return err },
		} {
			var err error
			n := allocated(func() { err = read() })
			wantLimit(t, err, "value_bytes", "/sarif")
			if n > 40<<20 {
				t.Errorf("%s as %s: allocated %d MiB to refuse it", name, form, n>>20)
			}
			t.Logf("%s as %s: %d KiB of base64 that inflate to 101 MiB: %v, %d MiB allocated as it inflates", name, form, len(b64)>>10, err, n>>20)
		}
	}
	// Exactly at the limit is read.
	at := `{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"t"}}}]}`
	if _, err := readLog(strings.NewReader(at), Options{Limits: Limits{Bytes: int64(len(at))}}); err != nil {
		t.Errorf("a log of exactly Bytes: %v", err)
	}
	_, err := readLog(strings.NewReader(at+" "), Options{Limits: Limits{Bytes: int64(len(at))}})
	wantLimit(t, err, "bytes", "")
	_, err = readB64(b64gz(t, at+" "), Options{Limits: Limits{Bytes: int64(len(at))}})
	wantLimit(t, err, "bytes", "")
}

// The 25,001st result of a run is refused before it is decoded: what
// follows it is not even valid JSON, and is never read.
func TestResultsPerRun(t *testing.T) {
	junk := `,{"message":` + strings.Repeat("!", 8<<20)
	g := &genLog{n: 25000, tail: junk}
	_, err := readLog(g, Options{Pointer: "/sarif"})
	wantLimit(t, err, "results_per_run", "/sarif/runs/0/results/25000")
	if g.buf.Len() < 7<<20 {
		t.Errorf("read %d bytes of the %d after the 25,000th result", len(junk)-g.buf.Len(), len(junk))
	}
	// 25,000 are read.
	rep, err := readLog(&genLog{n: 25000}, Options{})
	if err != nil || rep.Recorded != 25000 {
		t.Fatalf("25,000 results: %v", err)
	}
}

func TestLimits(t *testing.T) {
	run := func(results ...string) string { return runOf(`"name":"t"`, results...) }
	r := func(i int) string { return res("R"+itoa(i), "a.py", 1, "") }
	var many []string
	for i := 0; i < 21; i++ {
		many = append(many, run())
	}
	cases := []struct {
		name, log      string
		lim            Limits
		limit, pointer string
	}{
		{"21 runs", logOf(many...), Limits{}, "runs", "/sarif/runs/20"},
		{"results per run", logOf(run(r(1), r(2), r(3))), Limits{ResultsPerRun: 2}, "results_per_run", "/sarif/runs/0/results/2"},
		{"results in the log", logOf(run(r(1), r(2)), run(r(3), r(4))), Limits{Results: 3}, "results", "/sarif/runs/1/results/1"},
		{"findings of one type", logOf(run(r(1), r(2), r(1), r(3))), Limits{FindingsPerType: 2}, "findings_per_type", "/sarif/runs/0/results/3"},
		{"rules per run", logOf(`{"tool":{"driver":{"name":"t","rules":[{"id":"a"},{"id":"b"}]},"extensions":[{"name":"e","rules":[{"id":"c"}]}]}}`), Limits{RulesPerRun: 3}, "rules_per_run", "/sarif/runs/0/tool/extensions/0/rules/0"},
		{"one value", logOf(run(r(1), `{"ruleId":"R","message":{"text":"`+strings.Repeat("m", 4096)+`"}}`)), Limits{ValueBytes: 1024}, "value_bytes", ""},
		{"log size", logOf(run(r(1), r(2))), Limits{Bytes: 150}, "bytes", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := readLog(strings.NewReader(c.log), Options{Limits: c.lim, Pointer: "/sarif"})
			wantLimit(t, err, c.limit, c.pointer)
		})
	}
	// Duplicates and other types do not count toward FindingsPerType.
	rep, err := readLog(strings.NewReader(logOf(run(r(1), r(2), r(1), r(2)), runOf(`"name":"gitleaks"`, secretRes("s", "a", 1, "vvvvvvvv", "")))),
		Options{Limits: Limits{FindingsPerType: 2}})
	if err != nil || rep.Recorded != 3 {
		t.Errorf("got %v, %v", rep, err)
	}
}

// The limits' error messages name the limit.
func TestLimitErrorMessage(t *testing.T) {
	e := &LimitError{Limit: "results_per_run", Max: 25000, Pointer: "/sarif/runs/0/results/25000"}
	if got := e.Error(); got != "the SARIF log holds more than 25000 results in one run (limit results_per_run) at /sarif/runs/0/results/25000" {
		t.Errorf("got %q", got)
	}
}
