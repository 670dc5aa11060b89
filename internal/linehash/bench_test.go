//go:build unix

package linehash

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the CPU time the process has used, user and system: the
// benchmarks report it a run (cpu-ms/op) beside the wall time, which other
// work on the machine inflates.
func cpuTime(b *testing.B) time.Duration {
	var u syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &u); err != nil {
		b.Fatal(err)
	}
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}

// loop runs op b.N times and reports its CPU time a run.
func loop(b *testing.B, op func()) {
	b.ReportAllocs()
	start := cpuTime(b)
	for b.Loop() {
		op()
	}
	b.ReportMetric(float64((cpuTime(b)-start).Microseconds())/1000/float64(b.N), "cpu-ms/op")
}

// source is n bytes of code-like text: indented lines of 20 to 80
// characters, some of them repeated.
func source(n int) []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "%s%s = compute(%q, %d)  # line %d\n", strings.Repeat("    ", i%4), "value", strings.Repeat("x", i%50), i%97, i%1000)
	}
	return b.Bytes()[:n]
}

// One pass over a 10 MB file for its last line: the hash's throughput.
func BenchmarkLines(b *testing.B) {
	src := source(10 << 20)
	last := bytes.Count(src, []byte("\n")) + 1
	b.SetBytes(int64(len(src)))
	loop(b, func() {
		h, err := Lines(bytes.NewReader(src), []int{last})
		if err != nil || h[last] == "" {
			b.Fatal(h, err)
		}
	})
}

// A log of 10,000 results in 100 files of 2,000 lines (about 100 KB each)
// of a checkout: what `scangate upload` adds before sending.
func BenchmarkAdd(b *testing.B) {
	dir := b.TempDir()
	const files, results = 100, 10_000
	for f := range files {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d.py", f)), source(100_000), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	rs := make([]string, results)
	for i := range rs {
		rs[i] = resultAt(fmt.Sprintf("f%d.py", i%files), "", 1+(i*7)%1500, "")
	}
	log := logOf(`,"results":[` + strings.Join(rs, ",") + `]`)
	c, err := Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	b.SetBytes(int64(len(log)))
	loop(b, func() {
		_, sum, err := c.Add(log)
		if err != nil || sum.Added != results {
			b.Fatal(sum, err)
		}
	})
}
