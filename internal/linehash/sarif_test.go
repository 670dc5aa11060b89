package linehash

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"
)

// open opens a checkout for a test.
func open(t *testing.T, dir string) *Checkout {
	t.Helper()
	c, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// sameJSON fails unless a and b are the same JSON value.
func sameJSON(t *testing.T, got, want []byte) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("got: %v\n%s", err, got)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("want: %v", err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// GitHub's end-to-end test: a log whose results name their files by URI
// under a base and by artifact index gets the hashes GitHub expects.
func TestGitHubLog(t *testing.T) {
	c := open(t, "testdata/github")
	in, _ := os.ReadFile("testdata/github/fingerprinting.input.sarif")
	want, _ := os.ReadFile("testdata/github/fingerprinting.expected.sarif")
	got, sum, err := c.Add(in)
	if err != nil || sum != (Summary{Added: 2}) {
		t.Fatalf("%+v %v", sum, err)
	}
	sameJSON(t, got, want)

	// A result without a region is the whole file: no line, no hash (the
	// log is sent as it is).
	in, _ = os.ReadFile("testdata/github/fingerprinting2.input.sarif")
	got, sum, err = c.Add(in)
	if err != nil || sum != (Summary{}) || !bytes.Equal(got, in) {
		t.Errorf("no region: %+v %v\n%s", sum, err, got)
	}
}

// logOf is a log of one run with the given members after tool.
func logOf(members string) []byte {
	return []byte(`{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"t"}}` + members + `}]}`)
}

// resultAt is a result at a line of a URI (with a uriBaseId when base is
// not empty), with more members when extra is not empty.
func resultAt(uri, base string, line int, extra string) string {
	loc := `"uri":` + quote(uri)
	if base != "" {
		loc += `,"uriBaseId":` + quote(base)
	}
	return `{"ruleId":"r","message":{"text":"<m> & co"},"locations":[{"physicalLocation":{"artifactLocation":{` + loc +
		`},"region":{"startLine":` + itoa(line) + `}}}]` + extra + `}`
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }
func itoa(n int) string     { b, _ := json.Marshal(n); return string(b) }

// hashesOf is the primaryLocationLineHash of each result of a log's first
// run ("" for none), and its partialFingerprints' other members.
func hashesOf(t *testing.T, log []byte) ([]string, []map[string]any) {
	t.Helper()
	var doc struct {
		Runs []struct {
			Results []struct {
				PartialFingerprints json.RawMessage `json:"partialFingerprints"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(log, &doc); err != nil {
		t.Fatalf("%v\n%s", err, log)
	}
	var hashes []string
	var others []map[string]any
	for _, r := range doc.Runs[0].Results {
		var fp map[string]any
		_ = json.Unmarshal(r.PartialFingerprints, &fp) // not an object: none
		h, _ := fp[key].(string)
		delete(fp, key)
		hashes = append(hashes, h)
		others = append(others, fp)
	}
	return hashes, others
}

// checkout writes files under a new directory.
func checkout(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	tree := fstest.MapFS{}
	for name, text := range files {
		tree[name] = &fstest.MapFile{Data: []byte(text)}
	}
	if err := os.CopyFS(dir, tree); err != nil {
		t.Fatal(err)
	}
	return dir
}

// hashOf is GitHub's hash of a line of text.
func hashOf(t *testing.T, text string, line int) string {
	t.Helper()
	h, err := Lines(strings.NewReader(text), []int{line})
	if err != nil || h[line] == "" {
		t.Fatalf("line %d: %v %v", line, h, err)
	}
	return h[line]
}

// Every way a SARIF log names a file of the checkout finds it, and only a
// file inside the checkout is read.
func TestResolve(t *testing.T) {
	app := "import os\n\npassword = 'hunter2'\nprint(password)\n"
	dir := checkout(t, map[string]string{"src/app.py": app, "src/lib/util.py": app, "a b.py": app})
	outside := checkout(t, map[string]string{"secret.py": app})
	if err := os.Symlink(filepath.Join(outside, "secret.py"), filepath.Join(dir, "src", "link.py")); err != nil {
		t.Fatal(err)
	}
	want := hashOf(t, app, 3)
	abs, _ := filepath.Abs(dir)
	cases := []struct {
		name    string
		members string
		hashed  bool
		why     string // the first skipped result's reason holds this
	}{
		{"a relative URI", `,"results":[` + resultAt("src/app.py", "", 3, "") + `]`, true, ""},
		{"a base the log does not define is the checkout", `,"results":[` + resultAt("src/app.py", "%SRCROOT%", 3, "") + `]`, true, ""},
		{"through relative bases to an absolute one", `,"originalUriBaseIds":{"ROOT":{"uri":"file:///home/runner/work/app/app/"},"SRC":{"uri":"src/","uriBaseId":"ROOT"},"LIB":{"uri":"lib/","uriBaseId":"SRC"}}` +
			`,"results":[` + resultAt("util.py", "LIB", 3, "") + `]`, true, ""},
		{"percent-encoded", `,"results":[` + resultAt("a%20b.py", "", 3, "") + `]`, true, ""},
		{"./ and .. that stay inside", `,"results":[` + resultAt("./src/lib/../app.py", "", 3, "") + `]`, true, ""},
		{"an absolute path in the checkout", `,"results":[` + resultAt(abs+"/src/app.py", "", 3, "") + `]`, true, ""},
		{"a file: URI in the checkout", `,"results":[` + resultAt("file://"+abs+"/src/app.py", "", 3, "") + `]`, true, ""},
		{"a file: URI under the log's absolute base (the scanner ran elsewhere)", `,"originalUriBaseIds":{"ROOT":{"uri":"file:///src/"}}` +
			`,"results":[` + resultAt("file:///src/src/app.py", "", 3, "") + `]`, true, ""},
		{"under an invocation's working directory", `,"invocations":[{"executionSuccessful":true,"workingDirectory":{"uri":"file:///scan"}}]` +
			`,"results":[` + resultAt("/scan/src/lib/util.py", "", 3, "") + `]`, true, ""},
		{"a file: URI of a relative path", `,"results":[` + resultAt("file:src/app.py", "", 3, "") + `]`, true, ""},
		{"by artifact index", `,"artifacts":[{"location":{"uri":"other.py"}},{"location":{"uri":"app.py","uriBaseId":"S"}}],"originalUriBaseIds":{"S":{"uri":"src/"}}` +
			`,"results":[{"ruleId":"r","message":{"text":"m"},"locations":[{"physicalLocation":{"artifactLocation":{"index":1},"region":{"startLine":3}}}]}]`, true, ""},

		{"climbing out with ..", `,"results":[` + resultAt("src/../../"+filepath.Base(outside)+"/secret.py", "", 3, "") + `]`, false, "climbs out of the checkout"},
		{"climbing out through a base", `,"originalUriBaseIds":{"UP":{"uri":"../"}},"results":[` + resultAt(filepath.Base(outside)+"/secret.py", "UP", 3, "") + `]`, false, "climbs out of the checkout"},
		{"an absolute path outside", `,"results":[` + resultAt(outside+"/secret.py", "", 3, "") + `]`, false, "outside the checkout"},
		{"a symbolic link out of the checkout", `,"results":[` + resultAt("src/link.py", "", 3, "") + `]`, false, "src/link.py"},
		{"climbing out in a file: URI", `,"results":[` + resultAt("file:../x/secret.py", "", 3, "") + `]`, false, "climbs out of the checkout"},
		{"another scheme", `,"results":[` + resultAt("https://example.com/src/app.py", "", 3, "") + `]`, false, "not a file"},
		{"a missing file", `,"results":[` + resultAt("src/gone.py", "", 3, "") + `]`, false, "src/gone.py: no such file in the checkout"},
		{"a directory", `,"results":[` + resultAt("src/lib", "", 3, "") + `]`, false, "src/lib: not a regular file"},
		{"the checkout itself", `,"results":[` + resultAt(".", "", 3, "") + `]`, false, "not a file"},
		{"a line past the end", `,"results":[` + resultAt("src/app.py", "", 7, "") + `]`, false, "line 7 is past the end"},
		{"an artifact index out of range", `,"artifacts":[],"results":[{"ruleId":"r","message":{"text":"m"},"locations":[{"physicalLocation":{"artifactLocation":{"index":0},"region":{"startLine":3}}}]}]`, false, "artifact 0: no such artifact"},
	}
	c := open(t, dir)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := logOf(tc.members)
			got, sum, err := c.Add(in)
			if err != nil {
				t.Fatal(err)
			}
			if !tc.hashed {
				if sum.Added != 0 || sum.Skipped != 1 || !strings.Contains(sum.FirstSkipped, tc.why) || !bytes.Equal(got, in) {
					t.Errorf("%+v, log changed: %t", sum, !bytes.Equal(got, in))
				}
				if !strings.Contains(sum.String(), "no primaryLocationLineHash computed for 1 of 1 results") {
					t.Errorf("%q", sum.String())
				}
				return
			}
			if hashes, _ := hashesOf(t, got); sum != (Summary{Added: 1}) || len(hashes) != 1 || hashes[0] != want {
				t.Errorf("%+v %v, want %s", sum, hashes, want)
			}
		})
	}
}

// A hash given is kept as it is, other fingerprints stay beside an added
// one, results without a line or with a partialFingerprints that is not an
// object are left alone; many results of one file in several runs are
// hashed together; the log's text is otherwise the same JSON.
func TestAdd(t *testing.T) {
	lines := "x = 1\nx = 1\nx = 2\n"
	dir := checkout(t, map[string]string{"a.py": lines})
	results := []string{
		resultAt("a.py", "", 1, `,"partialFingerprints":{"primaryLocationLineHash":"given:1"}`),
		resultAt("a.py", "", 2, `,"partialFingerprints":{"tool/v1":"abc"}`),
		resultAt("a.py", "", 3, `,"partialFingerprints":null`),
		resultAt("a.py", "", 1, `,"partialFingerprints":"not an object"`),
		`{"ruleId":"r","message":{"text":"no location"}}`,
		`{"ruleId":"r","message":{"text":"no region"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"a.py"}}}]}`,
		`{"ruleId":"r","message":{"text":"line 0"},"locations":[{"physicalLocation":{"artifactLocation":{"uri":"a.py"},"region":{"startLine":0}}}]}`,
		resultAt("a.py", "", 1, ""),
	}
	in := []byte(`{"version":"2.1.0","$schema":"https://json.schemastore.org/sarif-2.1.0.json","runs":[` +
		`{"tool":{"driver":{"name":"t"}},"results":[` + strings.Join(results, ",") + `],"properties":{"n":12345678901234567890}},` +
		`{"tool":{"driver":{"name":"u"}},"results":[` + resultAt("a.py", "", 2, "") + `]}]}`)
	c := open(t, dir)
	got, sum, err := c.Add(in)
	if err != nil || sum != (Summary{Added: 4, Kept: 1}) {
		t.Fatalf("%+v %v", sum, err)
	}
	hashes, others := hashesOf(t, got)
	want := []string{"given:1", hashOf(t, lines, 2), hashOf(t, lines, 3), "", "", "", "", hashOf(t, lines, 1)}
	if !reflect.DeepEqual(hashes, want) {
		t.Errorf("hashes %v, want %v", hashes, want)
	}
	if others[1]["tool/v1"] != "abc" {
		t.Errorf("other fingerprints %v", others[1])
	}
	// Apart from the hashes added, the same JSON, numbers and text as written.
	var g, w map[string]any
	_ = json.Unmarshal(got, &g)
	_ = json.Unmarshal(in, &w)
	run0, run1 := g["runs"].([]any)[0].(map[string]any), g["runs"].([]any)[1].(map[string]any)
	for _, i := range []int{1, 2, 7} {
		r := run0["results"].([]any)[i].(map[string]any)
		if fp := r["partialFingerprints"].(map[string]any); len(fp) == 1 {
			delete(r, "partialFingerprints")
		} else {
			delete(fp, key)
		}
	}
	r1 := run1["results"].([]any)[0].(map[string]any)
	if r1["partialFingerprints"].(map[string]any)[key] != want[1] {
		t.Errorf("second run: %v", r1["partialFingerprints"])
	}
	delete(r1, "partialFingerprints")
	delete(w["runs"].([]any)[0].(map[string]any)["results"].([]any)[2].(map[string]any), "partialFingerprints")
	if !reflect.DeepEqual(g, w) {
		t.Errorf("the log changed beyond the hashes:\n%s", got)
	}
	if !bytes.Contains(got, []byte(`12345678901234567890`)) || !bytes.Contains(got, []byte(`"<m> & co"`)) {
		t.Errorf("numbers or text rewritten:\n%s", got)
	}

	// A gzip is read too; what comes back is the log's JSON.
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write(in)
	_ = zw.Close()
	fromGz, sum, err := c.Add(gz.Bytes())
	if err != nil || sum.Added != 4 || !bytes.Equal(fromGz, got) {
		t.Errorf("gzip: %+v %v", sum, err)
	}

	// What is not a SARIF log goes as it is, for the service to explain.
	for _, bad := range []string{"", "not json", `{"runs":{}}`, `[1]`, "\x1f\x8bnot gzip"} {
		if out, sum, err := c.Add([]byte(bad)); err != nil || sum != (Summary{}) || string(out) != bad {
			t.Errorf("%q: %q %+v %v", bad, out, sum, err)
		}
	}
}

// A log over MaxLog is sent as it is, and said so.
func TestTooLarge(t *testing.T) {
	dir := checkout(t, map[string]string{"a.py": "x\n"})
	c := open(t, dir)
	log := logOf(`,"results":[` + resultAt("a.py", "", 1, "") + `]`)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write(log)
	_ = zw.Close()
	c.maxLog = len(log)
	if _, sum, err := c.Add(gz.Bytes()); err != nil || sum.Added != 1 {
		t.Errorf("at the limit: %+v %v", sum, err)
	}
	c.maxLog = len(log) - 1
	for _, in := range [][]byte{log, gz.Bytes()} {
		got, sum, err := c.Add(in)
		if err != nil || !sum.TooLarge || !bytes.Equal(got, in) || !strings.Contains(sum.String(), "no primaryLocationLineHash computed: the log is over 512 MiB") {
			t.Errorf("%+v %v %q", sum, err, sum.String())
		}
	}
}

// A checkout that is not a directory is an error.
func TestOpen(t *testing.T) {
	if _, err := Open(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("a missing checkout opened")
	}
}

// The logs real scanners wrote (internal/sarif's golden files, from `make
// test-scanners`) of the fixture trees they scanned: every result with a
// line gets the hash of that line of its file.
func TestRealScanners(t *testing.T) {
	const scanners = "../sarif/testdata/scanners/"
	for log, tree := range map[string]string{"bandit.sarif": "python", "semgrep.sarif": "python", "checkov.sarif": "iac", "gitleaks.sarif": "secrets"} {
		t.Run(log, func(t *testing.T) {
			in, err := os.ReadFile("../sarif/testdata/golden/" + log)
			if err != nil {
				t.Fatal(err)
			}
			got, sum, err := open(t, scanners+tree).Add(in)
			if err != nil || sum.Added == 0 || sum.Skipped != 0 || sum.Kept != 0 {
				t.Fatalf("%+v %v", sum, err)
			}
			var doc struct {
				Runs []struct {
					Results []struct {
						Locations []struct {
							PhysicalLocation struct {
								ArtifactLocation struct{ URI string }    `json:"artifactLocation"`
								Region           struct{ StartLine int } `json:"region"`
							} `json:"physicalLocation"`
						} `json:"locations"`
						PartialFingerprints map[string]string `json:"partialFingerprints"`
					} `json:"results"`
				} `json:"runs"`
			}
			if err := json.Unmarshal(got, &doc); err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, r := range doc.Runs[0].Results {
				pl := r.Locations[0].PhysicalLocation
				if pl.Region.StartLine == 0 {
					continue
				}
				n++
				text, err := os.ReadFile(scanners + tree + "/" + pl.ArtifactLocation.URI)
				if err != nil {
					t.Fatal(err)
				}
				if want := hashOf(t, string(text), pl.Region.StartLine); r.PartialFingerprints[key] != want {
					t.Errorf("%s:%d: %q, want %q", pl.ArtifactLocation.URI, pl.Region.StartLine, r.PartialFingerprints[key], want)
				}
			}
			if n != sum.Added {
				t.Errorf("%d results with a line, %d hashed", n, sum.Added)
			}
		})
	}
}
