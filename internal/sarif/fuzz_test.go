package sarif

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/scangate/scangate/internal/scangate"
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
		rep, err := readLog(bytes.NewReader(data), Options{Limits: lim, Pointer: "/sarif"})
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
		if rep.Results != rep.Skipped+rep.Recorded+rep.Duplicates || rep.Recorded != len(flat(rep)) || len(rep.Runs) == 0 {
			t.Fatalf("counts do not add up: %+v", rep)
		}
		suppressed := 0
		for _, run := range rep.Runs {
			if !scangate.ValidCategory(run.Category) || checkName(run.Tool.Name) != "" || checkName(run.Tool.Version) != "" {
				t.Fatalf("run %+v", run)
			}
			for _, typ := range []scangate.ScanType{scangate.ScanSecret, scangate.ScanVulnerability} {
				for _, fd := range run.Findings(typ) {
					if fd.InSource {
						suppressed++
					}
					checkFinding(t, typ, fd)
				}
			}
		}
		if suppressed != rep.SuppressedInSource {
			t.Fatalf("suppressed %d, counted %d", suppressed, rep.SuppressedInSource)
		}
	})
}

// checkFinding checks what every recorded finding holds to.
func checkFinding(t *testing.T, typ scangate.ScanType, fd scangate.Finding) {
	t.Helper()
	n := utf8.RuneCountInString(fd.Name)
	_, _, hidden := scangate.Hidden(fd.Name + fd.Rule + fd.Path)
	switch {
	case n < 1 || n > 256 || hidden:
		t.Fatalf("name, rule or path %q %q %q", fd.Name, fd.Rule, fd.Path)
	case utf8.RuneCountInString(fd.Rule) > 256 || utf8.RuneCountInString(fd.Path) > 2048 || len(fd.Aliases) > 20:
		t.Fatalf("bounds: %+v", fd)
	case fd.Path == ".." || strings.HasPrefix(fd.Path, "../"):
		t.Fatalf("a path out of the checkout: %q", fd.Path)
	case fd.Line != nil && *fd.Line < 1:
		t.Fatalf("line %d", *fd.Line)
	case !fd.Severity.Valid():
		t.Fatalf("severity %q", fd.Severity)
	case typ == scangate.ScanSecret && !strings.HasPrefix(fd.Name, "sha256:") && !strings.HasPrefix(fd.Name, "ggshield:") && !strings.HasPrefix(fd.Name, "loc:"):
		t.Fatalf("secret name %q", fd.Name)
	case typ == scangate.ScanSecret && len(fd.Aliases) > 0:
		t.Fatalf("a secret with aliases: %+v", fd)
	}
}
