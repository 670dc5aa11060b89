package sarif

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/scangate/scangate/internal/scangate"
)

// TestSeverity: every finding has a severity (docs/DECISIONS.md): the
// result's security-severity, else its rule's (a CVSS score, as a number
// or a string), else high for a secret, else the result's level, else its
// rule's default level, else medium.
func TestSeverity(t *testing.T) {
	rule := func(id, extra string) string { return `{"id":"` + id + `"` + extra + `}` }
	cvss := func(v string) string { return `,"properties":{"security-severity":` + v + `}` }
	level := func(l string) string { return `,"defaultConfiguration":{"level":"` + l + `"}` }
	rules := []string{
		rule("S98", cvss(`"9.8"`)), rule("S90", cvss(`9.0`)), rule("S89", cvss(`"8.9"`)), rule("S70", cvss(`7`)),
		rule("S69", cvss(`"6.9"`)), rule("S40", cvss(`"4.0"`)), rule("S39", cvss(`3.9`)), rule("S01", cvss(`"0.1"`)),
		rule("S00", cvss(`0`)), rule("S10", cvss(`"1e1"`)),
		rule("BAD1", cvss(`"high"`)+level("note")), rule("BAD2", cvss(`11`)+level("note")), rule("BAD3", cvss(`-1`)+level("note")),
		rule("BAD4", cvss(`"0x1p1"`)+level("note")), rule("BAD5", cvss(`[7]`)+level("note")),
		rule("LE", level("error")), rule("LW", level("warning")), rule("LN", level("note")), rule("L0", level("none")),
		rule("LX", level("fatal")), rule("PLAIN", ""),
	}
	results := []string{}
	want := map[string]scangate.Severity{
		"S98": "critical", "S90": "critical", "S89": "high", "S70": "high", "S69": "medium", "S40": "medium", "S39": "low",
		"S01": "low", "S00": "none", "S10": "critical", "BAD1": "low", "BAD2": "low", "BAD3": "low", "BAD4": "low", "BAD5": "low",
		"LE": "high", "LW": "medium", "LN": "low", "L0": "none", "LX": "medium", "PLAIN": "medium",
	}
	for id := range want {
		results = append(results, res(id, "a.py", 1, ""))
	}
	// The result's level and security-severity come first.
	results = append(results, res("LE", "b.py", 1, `"level":"note"`), res("PLAIN", "b.py", 2, `"level":"error"`),
		res("PLAIN", "b.py", 3, `"level":"none"`), res("S98", "b.py", 4, `"properties":{"security-severity":"2.0"}`),
		res("LN", "b.py", 5, `"level":"bogus"`))
	want["LE b.py"], want["PLAIN b.py:2"], want["PLAIN b.py:3"], want["S98 b.py"], want["LN b.py"] = "low", "high", "none", "low", "low"
	rep := mustRead(t, logOf(`{"tool":{"driver":{"name":"scanner","rules":[`+strings.Join(rules, ",")+`]}},"results":[`+strings.Join(results, ",")+`]}`))
	got := map[string]scangate.Severity{}
	for _, f := range rep.Runs[0].Vulnerabilities {
		key := f.Rule
		switch {
		case f.Path == "b.py" && f.Rule == "PLAIN":
			key += " b.py:" + itoa(int(*f.Line))
		case f.Path == "b.py":
			key += " b.py"
		}
		got[key] = f.Severity
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: %q; want %q", k, got[k], w)
		}
	}
	// A secret is high unless the log gives a security-severity; levels
	// do not count for it.
	rep = mustRead(t, logOf(runOf(`"name":"gitleaks","rules":[{"id":"r","properties":{"security-severity":"5.5"}},{"id":"q"}]`,
		secretRes("q", "a", 1, "v1v1v1v1", `"level":"note"`), secretRes("r", "a", 2, "v2v2v2v2", ""))))
	if s := rep.Runs[0].Secrets; len(s) != 2 || s[0].Severity != "high" || s[1].Severity != "medium" {
		t.Errorf("secrets %+v", s)
	}
	// Duplicates keep the highest severity.
	rep = mustRead(t, logOf(runOf(`"name":"bandit"`, res("B1", "a.py", 1, `"level":"note"`), res("B1", "a.py", 1, `"level":"error"`),
		res("B1", "a.py", 1, `"level":"warning"`))))
	if v := rep.Runs[0].Vulnerabilities; len(v) != 1 || v[0].Severity != "high" || rep.Duplicates != 2 {
		t.Errorf("duplicates: %+v", v)
	}
}

// TestCategoriesAndTypes: each run's category comes from its
// automationDetails.id up to the last "/", else from its driver's name;
// its type from its tool.
func TestCategoriesAndTypes(t *testing.T) {
	run := func(driver, auto string) string {
		s := `{"tool":{"driver":{"name":` + quote(driver) + `}},"results":[]`
		if auto != "" {
			s += `,"automationDetails":{"id":` + quote(auto) + `}`
		}
		return s + "}"
	}
	cases := []struct {
		driver, auto string
		typ          scangate.ScanType
		category     string
	}{
		{"gitleaks", "", secretT, "gitleaks"},
		{"Semgrep OSS", "", vulnT, "semgrep-oss"},
		{"Checkov", "", vulnT, "checkov"},
		{"TruffleHog", "", secretT, "trufflehog"},
		{"Trivy", "ci/trivy/2026-11-24", vulnT, "ci/trivy"},
		{"CodeQL", "/language:go/", vulnT, "/language-go"},
		{"bandit", "nightly-42", vulnT, "bandit"},
		{"bandit", "/run-1", vulnT, "bandit"},
		{"bandit", "a b//x", vulnT, "a-b/"},
		{"My Scanner (beta)!", "", vulnT, "my-scanner-beta-"},
		{"", "", vulnT, "default"},
		{"!!!", "", vulnT, "-"},
		{strings.Repeat("x", 100), "", vulnT, strings.Repeat("x", 100)},
	}
	var runs []string
	for _, c := range cases {
		runs = append(runs, run(c.driver, c.auto))
	}
	rep := mustRead(t, logOf(runs[:len(runs)/2]...))
	rep2 := mustRead(t, logOf(runs[len(runs)/2:]...))
	all := append(rep.Runs, rep2.Runs...)
	for i, c := range cases {
		if r := all[i]; r.Type != c.typ || r.Category != c.category || !scangate.ValidCategory(r.Category) {
			t.Errorf("%q %q: %s %q; want %s %q", c.driver, c.auto, r.Type, r.Category, c.typ, c.category)
		}
	}
	for _, c := range []struct{ log, ptr string }{
		{logOf(run(strings.Repeat("x", 101), "")), "/sarif/runs/0/tool/driver/name"},
		{logOf(run("t", strings.Repeat("c", 101)+"/1")), "/sarif/runs/0/automationDetails/id"},
		{logOf(run("t", strings.Repeat("é", 51)+"/1")), ""}, // 51 characters become one "-"
		{logOf(`{"tool":{"driver":{"name":"t"}},"automationDetails":{"id":7}}`), "/sarif/runs/0/automationDetails/id"},
	} {
		_, err := readLog(strings.NewReader(c.log), Options{Pointer: "/sarif"})
		var se *SchemaError
		if c.ptr == "" && err != nil || c.ptr != "" && (!errors.As(err, &se) || se.Pointer != c.ptr) {
			t.Errorf("%.80s: %v; want a problem at %q", c.log, err, c.ptr)
		}
	}
}

// TestEveryRunReported: a run is reported whatever its results: none, all
// skipped, results null; a log without a run is refused.
func TestEveryRunReported(t *testing.T) {
	rep := mustRead(t, logOf(
		`{"tool":{"driver":{"name":"gitleaks"}},"results":[]}`,
		runOf(`"name":"bandit"`, res("B1", "a.py", 1, `"kind":"pass"`), res("B2", "a.py", 2, `"baselineState":"absent"`)),
		`{"tool":{"driver":{"name":"checkov"}},"results":null}`,
		`{"tool":{"driver":{"name":"trivy"}}}`,
	))
	want := []string{"gitleaks SECRET 0/0/0", "bandit VULNERABILITY 0/0/2", "checkov VULNERABILITY 0/0/0", "trivy VULNERABILITY 0/0/0"}
	for i, run := range rep.Runs {
		if got := fmt.Sprintf("%s %s %d/%d/%d", run.Category, run.Type, len(run.Secrets)+len(run.Vulnerabilities), run.Recorded, run.Skipped); i >= len(want) || got != want[i] {
			t.Errorf("run %d: %s", i, got)
		}
	}
	if len(rep.Runs) != 4 {
		t.Errorf("%d runs reported", len(rep.Runs))
	}
	for _, log := range []string{`{"version":"2.1.0","runs":[]}`, `{"version":"2.1.0","runs":null}`} {
		_, err := readLog(strings.NewReader(log), Options{Pointer: "/sarif"})
		var se *SchemaError
		if !errors.As(err, &se) || se.Pointer != "/sarif/runs" {
			t.Errorf("%s: %v", log, err)
		}
	}
}

// TestDuplicatesWithinCategory: duplicates are judged within one (scan
// type, category): the same name, path and line from two tools are two
// findings; from two runs of one category, one (the first: a later run
// cannot change what an earlier one handed on).
func TestDuplicatesWithinCategory(t *testing.T) {
	r := res("B602", "a.py", 3, "")
	rep := mustRead(t, logOf(
		runOf(`"name":"bandit"`, r, r),
		runOf(`"name":"Semgrep OSS"`, r),
		runOf(`"name":"bandit"`, res("B602", "a.py", 3, `"suppressions":[{"kind":"inSource"}]`), res("B999", "a.py", 1, "")),
		`{"tool":{"driver":{"name":"bandit"}},"automationDetails":{"id":"other/1"},"results":[`+r+`]}`,
	))
	var got []string
	for _, run := range rep.Runs {
		got = append(got, fmt.Sprintf("%s:%d+%d", run.Category, len(run.Vulnerabilities), run.Duplicates))
	}
	if want := "bandit:1+1 semgrep-oss:1+0 bandit:1+1 other:1+0"; strings.Join(got, " ") != want {
		t.Errorf("runs %v; want %s", got, want)
	}
	if rep.Recorded != 4 || rep.Duplicates != 2 || rep.Runs[0].Vulnerabilities[0].InSource {
		t.Errorf("%+v", rep.Counts)
	}
}

// TestIJSONEveryForm: a repeated member name, a lone surrogate escape and
// bytes that are not UTF-8 are refused (400) in a log on its own, in its
// gzip, in base64 of its gzip and in a body, wherever they are.
func TestIJSONEveryForm(t *testing.T) {
	ok := res("B1", "a.py", 1, "")
	for name, log := range map[string]string{
		"a repeated member of a result":  logOf(runOf(`"name":"t"`, `{"ruleId":"a","ruleId":"b","message":{"text":"m"}}`)),
		"a repeated member of a skipped": logOf(runOf(`"name":"t"`, ok+`],"x":{"y":1,"y":2},"z":[`)),
		"a repeated member of the log":   `{"version":"2.1.0","version":"2.1.0","runs":[` + runOf(`"name":"t"`) + `]}`,
		"a repeated run member":          logOf(`{"tool":{"driver":{"name":"t"}},"tool":{"driver":{"name":"u"}}}`),
		"a lone high surrogate":          logOf(runOf(`"name":"t"`, `{"ruleId":"a\ud800","message":{"text":"m"}}`)),
		"a lone low surrogate":           logOf(runOf(`"name":"t"`, `{"ruleId":"a","message":{"text":"\udc00x"}}`)),
		"a reversed pair":                logOf(runOf(`"name":"t"`, `{"ruleId":"a","message":{"text":"\udc00\ud800"}}`)),
		"a surrogate in a name":          logOf(runOf(`"name":"t"`, `{"ruleId":"a","message":{"text":"m"},"properties":{"\ud800":1}}`)),
		"not UTF-8":                      logOf(runOf(`"name":"t"`, "{\"ruleId\":\"a\xff\",\"message\":{\"text\":\"m\"}}")),
		"an encoded surrogate":           logOf(runOf(`"name":"t"`, "{\"ruleId\":\"a\xed\xa0\x80\",\"message\":{\"text\":\"m\"}}")),
	} {
		for form, read := range map[string]func() error{
			"log":    func() error { _, err := readLog(strings.NewReader(log), Options{}); return err },
			"gzip":   func() error { _, err := readGzip(bytes.NewReader(gz(t, log)), Options{}); return err },
			"base64": func() error { _, err := readB64(b64gz(t, log), Options{}); return err },
			"body":   func() error { _, err := ReadBody([]byte(`{"sarif":`+log+`}`), Options{}, (&Report{}).Add); return err },
			"body, base64": func() error {
				_, err := ReadBody([]byte(`{"sarif":"`+b64gz(t, log)+`"}`), Options{}, (&Report{}).Add)
				return err
			},
		} {
			var ie *InputError
			if err := read(); !errors.As(err, &ie) {
				t.Errorf("%s as %s: %v (%T); want an InputError", name, form, err, err)
			}
		}
	}
	// A valid pair is one character.
	rep := mustRead(t, logOf(runOf(`"name":"t"`, `{"ruleId":"a\ud83d\ude00","message":{"text":"m"}}`)))
	if f := flat(rep); len(f) != 1 || f[0].Name != "a😀" {
		t.Errorf("%+v", f)
	}
}

// TestBodyRules: the body around the log is checked in the same pass:
// I-JSON, at most 32 levels, one object, nothing after it; a problem of the
// body answers before the log's.
func TestBodyRules(t *testing.T) {
	log := logOf(runOf(`"name":"t"`, res("B1", "a.py", 1, "")))
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	for name, body := range map[string]string{
		"empty":                            " \n",
		"not an object":                    `[` + log + `]`,
		"not JSON":                         `{"sarif":` + log,
		"more after it":                    `{"sarif":` + log + `} {}`,
		"a repeated envelope member":       `{"repo_id":1,"sarif":` + log + `,"repo_id":2}`,
		"a repeated sarif member":          `{"sarif":` + log + `,"sarif":null}`,
		"a lone surrogate in the envelope": `{"repo_name":"\ud800","sarif":` + log + `}`,
		"an envelope 33 levels deep":       `{"other_details":` + deep(32) + `,"sarif":` + log + `}`,
		"a byte order mark":                "\xef\xbb\xbf{\"sarif\":" + log + "}",
		"not JSON after a schema problem":  `{"sarif":{"version":"2.0.0","runs":[]},"x":tru}`,
	} {
		_, err := ReadBody([]byte(body), Options{}, (&Report{}).Add)
		var ie *InputError
		if !errors.As(err, &ie) {
			t.Errorf("%s: %v (%T); want an InputError", name, err, err)
		}
	}
	// 32 levels are read; the log may nest 128 levels (a result's
	// properties are its 6th).
	body := `{"other_details":` + deep(31) + `,"sarif":` + logOf(runOf(`"name":"t"`, `{"ruleId":"a","message":{"text":"m"},"properties":{"p":`+deep(122)+`}}`)) + `}`
	if _, err := ReadBody([]byte(body), Options{}, (&Report{}).Add); err != nil {
		t.Errorf("32 and 128 levels: %v", err)
	}
	body = `{"sarif":` + logOf(runOf(`"name":"t"`, `{"ruleId":"a","message":{"text":"m"},"properties":{"p":`+deep(123)+`}}`)) + `}`
	if _, err := ReadBody([]byte(body), Options{}, (&Report{}).Add); !errors.As(err, new(*InputError)) {
		t.Errorf("129 levels: %v", err)
	}
}

// TestRunsHandedOnAsRead: a run is handed on as soon as it is read,
// before the next is read; a handler's error stops the read.
func TestRunsHandedOnAsRead(t *testing.T) {
	first := runOf(`"name":"bandit"`, res("B1", "a.py", 1, ""))
	handed := 0
	_, err := Read(io.MultiReader(strings.NewReader(`{"version":"2.1.0","runs":[`+first+`,`), errReader{}), Options{},
		func(run *Run) error { handed++; return nil })
	if handed != 1 || err == nil {
		t.Errorf("%d runs handed on before the read failed (%v)", handed, err)
	}
	stop := errors.New("stop")
	_, err = Read(strings.NewReader(logOf(first, first)), Options{}, func(*Run) error { return stop })
	if err != stop {
		t.Errorf("the handler's error: got %v", err)
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("the connection broke") }

// TestPaths: what a location's URI is recorded as, or why not.
func TestPaths(t *testing.T) {
	rs := &runState{bases: map[string]artifactLocation{
		"ROOT": {URI: "file:///home/runner/work/app/app/"}, "SRC": {URI: "src/", URIBaseID: "ROOT"},
		"UP": {URI: "../"}, "DEEP": {URI: "a/b/", URIBaseID: "SRC"},
	}, dirs: []string{"file:///checkout"}}
	for _, c := range []struct{ uri, base, path, problem string }{
		{"a.go", "", "a.go", ""},
		{"./x/../a.go", "", "a.go", ""},
		{"a.go", "SRC", "src/a.go", ""},
		{"../c.go", "DEEP", "src/a/c.go", ""},
		{"a%20b.go", "", "a b.go", ""},
		{"file:///home/runner/work/app/app/cmd/e.go", "", "cmd/e.go", ""},
		{"file:///checkout/x/../y.go", "", "y.go", ""},
		{"file:///checkout/../etc/passwd", "", "/etc/passwd", ""},
		{"/usr/lib/python3/x.py", "", "/usr/lib/python3/x.py", ""},
		{"https://example.com/a%00b", "", "https://example.com/a%00b", ""},
		{"../../etc/passwd", "", "", "climbs"},
		{"..", "", "", "climbs"},
		{"x.go", "UP", "", "climbs"},
		{"a%00.py", "", "", "control"},
		{"a%1b[31m.py", "", "", "control"},
		{"/abs/a%7f", "", "", "control"},
		{"a\u202e.py", "", "", "control"},
		{"a%ff.py", "", "", "UTF-8"},
		{strings.Repeat("a/", 1025), "", "", "2048"},
	} {
		p, problem := rs.repoPath(c.uri, c.base)
		if p != c.path || !strings.Contains(problem, c.problem) || (c.problem == "") != (problem == "") {
			t.Errorf("%q from %q: %q %q; want %q %q", c.uri, c.base, p, problem, c.path, c.problem)
		}
	}
	for _, c := range []struct {
		bases map[string]artifactLocation
		ptr   string
	}{
		{map[string]artifactLocation{"A": {URI: "a/", URIBaseID: "B"}, "B": {URI: "b/", URIBaseID: "A"}}, "/originalUriBaseIds/A/uriBaseId"},
		{map[string]artifactLocation{"Z": {URIBaseID: "Z"}}, "/originalUriBaseIds/Z/uriBaseId"},
		{map[string]artifactLocation{"C": {URIBaseID: "B"}, "B": {URIBaseID: "D"}, "D": {URIBaseID: "B"}}, "/originalUriBaseIds/B/uriBaseId"},
		{map[string]artifactLocation{"0": {URIBaseID: "1"}, "1": {URIBaseID: "2"}, "2": {URIBaseID: "3"}, "3": {URIBaseID: "4"},
			"4": {URIBaseID: "5"}, "5": {URIBaseID: "6"}, "6": {URIBaseID: "7"}, "7": {URIBaseID: "8"}, "8": {URIBaseID: "9"}}, "/originalUriBaseIds/0/uriBaseId"},
		{map[string]artifactLocation{"a/b": {URIBaseID: "a/b"}}, "/originalUriBaseIds/a~1b/uriBaseId"},
	} {
		err := (&runState{bases: c.bases}).checkBases()
		var se *SchemaError
		if !errors.As(err, &se) || se.Pointer != c.ptr {
			t.Errorf("%v: %v; want a problem at %s", c.bases, err, c.ptr)
		}
	}
	chain := map[string]artifactLocation{"0": {URIBaseID: "1"}, "1": {URIBaseID: "2"}, "2": {URIBaseID: "3"}, "3": {URIBaseID: "4"},
		"4": {URIBaseID: "5"}, "5": {URIBaseID: "6"}, "6": {URIBaseID: "7"}, "7": {URIBaseID: "8"}, "8": {URI: "file:///r/"}}
	if err := (&runState{bases: chain}).checkBases(); err != nil {
		t.Errorf("a chain of 8: %v", err)
	}
}
