package scangate_test

import (
	"strings"
	"testing"

	"github.com/scangate/scangate/internal/scangate"
)

func at(n int64) *int64 { return &n }

// TestDerivedFingerprints: a derived fingerprint holds no line number
// (a finding keeps it when lines above it move), differs by rule, path,
// name and snippet (whitespace aside), and the N-th finding of a scan
// with the same base in line order gets :N.
func TestDerivedFingerprints(t *testing.T) {
	t.Parallel()
	snip := func(s string) *[32]byte { v := scangate.SnippetSum([]byte(s)); return &v }
	base := scangate.DerivedFingerprint("r", "a.go", "n", snip("x := 1"))
	if base != scangate.DerivedFingerprint("r", "a.go", "n", snip("  x:=1\t")) {
		t.Error("whitespace changed the fingerprint")
	}
	for name, other := range map[string]string{
		"rule": scangate.DerivedFingerprint("s", "a.go", "n", snip("x := 1")), "path": scangate.DerivedFingerprint("r", "b.go", "n", snip("x := 1")),
		"name": scangate.DerivedFingerprint("r", "a.go", "m", snip("x := 1")), "snippet": scangate.DerivedFingerprint("r", "a.go", "n", snip("x := 2")),
		"no snippet": scangate.DerivedFingerprint("r", "a.go", "n", nil), "fields run together": scangate.DerivedFingerprint("ra.go", "", "n", snip("x := 1")),
	} {
		if other == base {
			t.Errorf("another %s, the same fingerprint", name)
		}
	}
	mk := func(line int64) scangate.Finding {
		return scangate.Finding{Name: "n", Rule: "r", Path: "a.go", Line: at(line), Fingerprint: base, FingerprintSource: scangate.FingerprintDerived}
	}
	fs := []scangate.Finding{mk(30), mk(10), mk(20), {Name: "k", Fingerprint: "given", FingerprintSource: scangate.FingerprintScanner}}
	scangate.NumberFindings(fs)
	want := []string{base + ":3", base + ":1", base + ":2", "given"}
	for i := range fs {
		if fs[i].Fingerprint != want[i] {
			t.Errorf("finding %d: %s; want %s", i, fs[i].Fingerprint, want[i])
		}
	}
	// The same findings 5 lines further down: the same fingerprints.
	moved := []scangate.Finding{mk(35), mk(15), mk(25)}
	scangate.NumberFindings(moved)
	for i := range moved {
		if moved[i].Fingerprint != want[i] {
			t.Errorf("moved finding %d: %s; want %s", i, moved[i].Fingerprint, want[i])
		}
	}
}

// TestScannerFingerprint: sorted by key, joined; too long, hashed.
func TestScannerFingerprint(t *testing.T) {
	t.Parallel()
	if got := scangate.ScannerFingerprint(map[string]string{"b": "2", "a/v1": "1"}); got != "a/v1=1;b=2" {
		t.Errorf("joined: %q", got)
	}
	if got := scangate.ScannerFingerprint(nil); got != "" {
		t.Errorf("none: %q", got)
	}
	long := scangate.ScannerFingerprint(map[string]string{"k": strings.Repeat("x", 300)})
	if !strings.HasPrefix(long, "sha256:") || len(long) != 7+64 {
		t.Errorf("too long: %q", long)
	}
}
