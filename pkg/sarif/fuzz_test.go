package sarif

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/scangate/scangate/pkg/scangate"
)

// FuzzRead reads arbitrary bytes as a log: it never panics, fails only with
// this package's three errors, and what it records keeps section 8's bounds.
func FuzzRead(f *testing.F) {
	// Small seeds: the fuzzer minimizes what it finds, which takes long on
	// the 50 KiB logs of gitleaks (its 222 rules).
	b, err := os.ReadFile("testdata/golden/semgrep.sarif")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte(logOf(runOf(`"name":"gitleaks"`, secretRes("r", "a", 1, "REDACTED", `"suppressions":[{"kind":"inSource"}]`)))))
	f.Add([]byte(logOf(`{"tool":{"driver":{"name":"t","rules":[{"id":"CVE-2020-0001","deprecatedIds":["GHSA-aaaa-bbbb-cccc"]}]}},"originalUriBaseIds":{"S":{"uri":"file:///r/"}},"results":[{"ruleIndex":0,"message":{"text":"x"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"a%20b","uriBaseId":"S"},"region":{"startLine":2}}}]}]}`)))
	f.Fuzz(func(t *testing.T, data []byte) {
		lim := Limits{Bytes: 1 << 20, ResultsPerRun: 200, FindingsPerType: 100, RulesPerRun: 200, ValueBytes: 64 << 10}
		rep, err := Read(bytes.NewReader(data), Options{Limits: lim, Pointer: "/sarif"})
		if err != nil {
			var le *LimitError
			var ie *InputError
			var se *SchemaError
			if !errors.As(err, &le) && !errors.As(err, &ie) && !errors.As(err, &se) {
				t.Fatalf("error of another type: %T %v", err, err)
			}
			if se != nil && !strings.HasPrefix(se.Pointer, "/sarif") {
				t.Fatalf("pointer %q outside the log", se.Pointer)
			}
			return
		}
		if rep.Results != rep.Skipped+rep.Recorded+rep.Duplicates || rep.Recorded != len(rep.Findings) {
			t.Fatalf("counts do not add up: %+v", rep)
		}
		suppressed := 0
		for _, fd := range rep.Findings {
			if fd.SuppressedInSource {
				suppressed++
			}
			n := utf8.RuneCountInString(fd.Name)
			switch {
			case n < 1 || n > 256 || controls(fd.Name):
				t.Fatalf("name %q", fd.Name)
			case utf8.RuneCountInString(fd.Rule) > 256 || utf8.RuneCountInString(fd.Path) > 2048 || len(fd.Aliases) > 20:
				t.Fatalf("bounds: %+v", fd)
			case fd.Line != nil && *fd.Line < 1:
				t.Fatalf("line %d", *fd.Line)
			case fd.Type == scangate.ScanSecret && !strings.HasPrefix(fd.Name, "sha256:") && !strings.HasPrefix(fd.Name, "ggshield:") && !strings.HasPrefix(fd.Name, "loc:"):
				t.Fatalf("secret name %q", fd.Name)
			case fd.Type != scangate.ScanSecret && fd.Type != scangate.ScanVulnerability:
				t.Fatalf("type %q", fd.Type)
			case fd.Type == scangate.ScanSecret && len(fd.Aliases) > 0:
				t.Fatalf("a secret with aliases: %+v", fd)
			}
		}
		if suppressed != rep.SuppressedInSource {
			t.Fatalf("suppressed %d, counted %d", suppressed, rep.SuppressedInSource)
		}
	})
}
