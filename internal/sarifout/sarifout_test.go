package sarifout_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/scangate/scangate/internal/sarifout"
	"github.com/scangate/scangate/internal/sariftest"
	"github.com/scangate/scangate/internal/scangate"
)

func line(n int64) *int64 { return &n }

// TestWriter: a log of two runs, one without results, and results of
// every shape validates against the SARIF 2.1.0 schema and reads back as
// written: partialFingerprints under the key of the fingerprint's source,
// baselineState, severity, suppressions external (the allowlist's reason
// and id) and inSource, a path made a relative URI reference.
func TestWriter(t *testing.T) {
	var b bytes.Buffer
	w := sarifout.New(&b)
	if err := w.Result(sarifout.Result{}); !errors.Is(err, sarifout.ErrNoRun) {
		t.Errorf("a result before a run: %v", err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(w.Run(sarifout.Run{Category: "semgrep", Tool: sarifout.Tool{Name: "Semgrep OSS", Version: "1.2.3"}, Properties: map[string]any{"scan_ids": []int64{4}}}))
	must(w.Result(sarifout.Result{Type: scangate.ScanVulnerability, Name: "CVE-1", Aliases: []string{"GHSA-1"}, Rule: "r1", Path: "src/a b:c/ü.go", Line: line(3),
		Severity: scangate.SeverityHigh, Fingerprint: "abc:1", FPSource: scangate.FingerprintLineHash, BaselineState: "new",
		Suppressions: []sarifout.Suppression{{AllowlistID: 7, Reason: "false_positive"}, {AllowlistID: 9}}}))
	must(w.Result(sarifout.Result{Type: scangate.ScanSecret, Name: "sha256:x", Path: "c:/x", Line: line(0), Severity: scangate.SeverityLow,
		Fingerprint: "d1", FPSource: scangate.FingerprintDerived, BaselineState: "absent", InSource: true}))
	must(w.Result(sarifout.Result{Type: scangate.ScanSecret, Name: "s", Severity: scangate.SeverityMedium, Fingerprint: "k=v", FPSource: scangate.FingerprintScanner}))
	must(w.Run(sarifout.Run{Category: "empty", Tool: sarifout.Tool{Name: "scangate"}}))
	must(w.Close())
	sariftest.Check(t, b.Bytes())

	var log struct {
		Runs []struct {
			Tool struct {
				Driver struct{ Name, Version string }
			}
			AutomationDetails struct{ ID string }
			Results           []map[string]any
		}
	}
	if err := json.Unmarshal(b.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	if len(log.Runs) != 2 || log.Runs[0].AutomationDetails.ID != "semgrep" || log.Runs[0].Tool.Driver.Name != "Semgrep OSS" ||
		log.Runs[1].AutomationDetails.ID != "empty" || len(log.Runs[1].Results) != 0 || len(log.Runs[0].Results) != 3 {
		t.Fatalf("runs: %s", b.String())
	}
	rs := log.Runs[0].Results
	for i, want := range []string{
		`{"ruleId":"r1","level":"error","message":{"text":"Vulnerability CVE-1 (also GHSA-1) in src/a b:c/ü.go"},` +
			`"locations":[{"physicalLocation":{"artifactLocation":{"uri":"src/a%20b:c/%C3%BC.go","uriBaseId":"%SRCROOT%"},"region":{"startLine":3}}}],` +
			`"partialFingerprints":{"primaryLocationLineHash":"abc:1"},"baselineState":"new",` +
			`"suppressions":[{"kind":"external","status":"accepted","justification":"false_positive (allowlist 7)","properties":{"allowlist_id":7,"reason":"false_positive"}},` +
			`{"kind":"external","status":"accepted","justification":"allowlist 9","properties":{"allowlist_id":9}}],` +
			`"properties":{"aliases":["GHSA-1"],"fingerprint_source":"primaryLocationLineHash","name":"CVE-1","scan_type":"VULNERABILITY","severity":"high"}}`,
		`{"ruleId":"sha256:x","level":"note","message":{"text":"Secret sha256:x in c:/x"},` +
			`"locations":[{"physicalLocation":{"artifactLocation":{"uri":"./c:/x","uriBaseId":"%SRCROOT%"}}}],` +
			`"partialFingerprints":{"scangate/derived/v1":"d1"},"baselineState":"absent","suppressions":[{"kind":"inSource"}],` +
			`"properties":{"fingerprint_source":"derived","name":"sha256:x","scan_type":"SECRET","severity":"low"}}`,
		`{"ruleId":"s","level":"warning","message":{"text":"Secret s"},"partialFingerprints":{"scangate/scanner/v1":"k=v"},` +
			`"properties":{"fingerprint_source":"scanner","name":"s","scan_type":"SECRET","severity":"medium"}}`,
	} {
		got, _ := json.Marshal(rs[i])
		var w map[string]any
		if err := json.Unmarshal([]byte(want), &w); err != nil {
			t.Fatal(err)
		}
		exp, _ := json.Marshal(w)
		if string(got) != string(exp) {
			t.Errorf("result %d:\n got %s\nwant %s", i, got, exp)
		}
	}
}

// TestEmptyLog: a log without runs is a SARIF log with an empty list.
func TestEmptyLog(t *testing.T) {
	var b bytes.Buffer
	if err := sarifout.New(&b).Close(); err != nil {
		t.Fatal(err)
	}
	if want := `{"$schema":"` + sarifout.SchemaURI + `","version":"2.1.0","runs":[]}`; b.String() != want {
		t.Errorf("%s; want %s", b.String(), want)
	}
	sariftest.Check(t, b.Bytes())
}

// TestPathURI: a path is a relative reference of RFC 3986's characters
// only, whatever it holds.
func TestPathURI(t *testing.T) {
	ok := regexp.MustCompile(`^[A-Za-z0-9\-._~!$&'()*+,;=:@/%]*$`)
	for _, p := range []string{"a b.go", "x/ü/ä.go", "c:/d", "a#b?c.go", "%41", "[x].go", "a\\b", `q"'<>.go`} {
		u := sarifout.PathURI(p)
		if !ok.MatchString(u) || strings.HasPrefix(u, "/") || strings.SplitN(u, "/", 2)[0] != "." && strings.Contains(strings.SplitN(u, "/", 2)[0], ":") {
			t.Errorf("%q: %q", p, u)
		}
	}
}

// failing is a writer that fails after n bytes.
type failing struct{ n int }

func (f *failing) Write(p []byte) (int, error) {
	if f.n -= len(p); f.n < 0 {
		return 0, errors.New("disk full")
	}
	return len(p), nil
}

// TestWriterError: the first error of the writer beneath stops every
// later call.
func TestWriterError(t *testing.T) {
	w := sarifout.New(&failing{n: 100})
	_ = w.Run(sarifout.Run{Category: "c", Tool: sarifout.Tool{Name: "t"}})
	var err error
	for range 10 {
		if err = w.Result(sarifout.Result{Name: "n", Severity: scangate.SeverityHigh}); err != nil {
			break
		}
	}
	if err == nil || w.Close() == nil {
		t.Errorf("no error: %v", err)
	}
}
