package sarif

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/scangate/scangate/internal/scangate"
)

// facts is what .ci/sarif_facts.py computes from one SARIF file, without
// this package.
type facts struct {
	Results            int            `json:"results"`
	Skipped            int            `json:"skipped"`
	Recorded           int            `json:"recorded"`
	SuppressedInSource int            `json:"suppressed_in_source"`
	ByType             map[string]int `json:"by_type"`
	Tools              []struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"tools"`
	Findings []struct {
		Type       string   `json:"type"`
		Name       string   `json:"name"`
		Aliases    []string `json:"aliases"`
		Rule       string   `json:"rule"`
		Path       string   `json:"path"`
		Line       *int64   `json:"line"`
		Suppressed bool     `json:"suppressed"`
		Severity   string   `json:"severity"`
		Category   string   `json:"category"`
	} `json:"findings"`
	Runs []struct {
		Tool     string `json:"tool"`
		Type     string `json:"type"`
		Category string `json:"category"`
	} `json:"runs"`
}

// checkFacts reads every SARIF file of dir and compares what it records with
// the facts computed independently in dir/facts.json.
func checkFacts(t *testing.T, dir string) {
	raw, err := os.ReadFile(filepath.Join(dir, "facts.json"))
	if err != nil {
		t.Fatal(err)
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(raw, &all); err != nil {
		t.Fatal(err)
	}
	logs, _ := filepath.Glob(filepath.Join(dir, "*.sarif"))
	if len(logs) == 0 {
		t.Fatalf("no SARIF file in %s", dir)
	}
	for _, path := range logs {
		t.Run(filepath.Base(path), func(t *testing.T) {
			var want facts
			if err := json.Unmarshal(all[filepath.Base(path)], &want); err != nil {
				t.Fatalf("facts of %s: %v", path, err)
			}
			rep := readFile(t, path)
			if rep.Results != want.Results || rep.Skipped != want.Skipped || rep.Recorded != want.Recorded ||
				rep.SuppressedInSource != want.SuppressedInSource {
				t.Errorf("counts: results %d skipped %d recorded %d suppressed %d; facts say %d %d %d %d",
					rep.Results, rep.Skipped, rep.Recorded, rep.SuppressedInSource,
					want.Results, want.Skipped, want.Recorded, want.SuppressedInSource)
			}
			if rep.Results != rep.Skipped+rep.Recorded+rep.Duplicates {
				t.Errorf("results %d != skipped %d + recorded %d + duplicates %d", rep.Results, rep.Skipped, rep.Recorded, rep.Duplicates)
			}
			byType := map[string]int{}
			var got, runs []string
			for _, run := range rep.Runs {
				runs = append(runs, run.Tool.Name+"|"+string(run.Type)+"|"+run.Category)
				for _, typ := range []scangate.ScanType{scangate.ScanSecret, scangate.ScanVulnerability} {
					for _, f := range run.Findings(typ) {
						byType[string(typ)]++
						got = append(got, findingKey(string(typ), f.Name, f.Aliases, f.Rule, f.Path, f.Line, f.InSource)+
							"|"+string(f.Severity)+"|"+run.Category)
					}
				}
			}
			var wantRuns []string
			for _, r := range want.Runs {
				wantRuns = append(wantRuns, r.Tool+"|"+r.Type+"|"+r.Category)
			}
			if !slices.Equal(runs, wantRuns) {
				t.Errorf("runs %q, facts say %q", runs, wantRuns)
			}
			if !reflect.DeepEqual(byType, want.ByType) && (len(byType) > 0 || len(want.ByType) > 0) {
				t.Errorf("per type %v, facts say %v", byType, want.ByType)
			}
			var exp []string
			for _, f := range want.Findings {
				exp = append(exp, findingKey(f.Type, f.Name, f.Aliases, f.Rule, f.Path, f.Line, f.Suppressed)+"|"+f.Severity+"|"+f.Category)
			}
			slices.Sort(got)
			slices.Sort(exp)
			if !slices.Equal(got, exp) {
				t.Errorf("findings:\n got %q\nwant %q", got, exp)
			}
			for i, tool := range want.Tools {
				if i >= len(tools(rep)) || tools(rep)[i].Name != tool.Name || tools(rep)[i].Version != tool.Version {
					t.Errorf("tools %+v, facts say %+v", tools(rep), want.Tools)
					break
				}
			}
		})
	}
}

func findingKey(typ, name string, aliases []string, rule, path string, line *int64, suppressed bool) string {
	l := "-"
	if line != nil {
		l = itoa(int(*line))
	}
	return strings.Join([]string{typ, name, strings.Join(aliases, ","), rule, path, l, map[bool]string{true: "suppressed"}[suppressed]}, "|")
}

func readFile(t *testing.T, path string) *Report {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := readLog(bytes.NewReader(b), Options{Pointer: "/sarif"})
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return rep
}

// TestGoldenScannerLogs reads SARIF that real scanners wrote over the
// fixtures of testdata/scanners (.ci/scanners.sh golden) and checks it
// against the facts .ci/sarif_facts.py computed from the same files.
func TestGoldenScannerLogs(t *testing.T) {
	checkFacts(t, "testdata/golden")
}

// TestScannerTier does the same with the SARIF files of a fresh run of the
// pinned scanners (.ci/scanners.sh sets SCANGATE_SARIF_DIR).
func TestScannerTier(t *testing.T) {
	dir := os.Getenv("SCANGATE_SARIF_DIR")
	if dir == "" {
		t.Skip("SCANGATE_SARIF_DIR is not set: .ci/scanners.sh runs this test")
	}
	checkFacts(t, dir)
}

func planted(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile("testdata/scanners/planted.txt")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(raw))
}

func sha(v string) string {
	s := sha256.Sum256([]byte(v))
	return "sha256:" + hex.EncodeToString(s[:])
}

// A gitleaks run records each planted secret under sha256: of its value, in
// each file it was planted in, and nothing else.
func TestGoldenGitleaksNamesArePlantedHashes(t *testing.T) {
	rep := readFile(t, "testdata/golden/gitleaks.sarif")
	names := map[string][]string{}
	for _, f := range flat(rep) {
		if f.Type != scangate.ScanSecret {
			t.Errorf("%+v: want SECRET", f)
		}
		names[f.Name] = append(names[f.Name], f.Path)
	}
	want := map[string][]string{}
	for _, v := range planted(t) {
		want[sha(v)] = nil
	}
	for n := range names {
		if _, ok := want[n]; !ok {
			t.Errorf("name %s is no planted value's hash", n)
		}
	}
	for n := range want {
		if _, ok := names[n]; !ok {
			t.Errorf("planted value %s not recorded", n)
		}
	}
	// The first GitHub token is planted in .env and deploy.sh, where two
	// rules find it on one line: one finding per file.
	if got := names[sha(planted(t)[0])]; len(got) != 2 || !slices.Contains(got, ".env") || !slices.Contains(got, "deploy.sh") {
		t.Errorf("first token recorded at %v, want .env and deploy.sh once each", got)
	}
	if rep.Duplicates != 1 || rep.Recorded != 7 {
		t.Errorf("recorded %d, duplicates %d: want 7 and 1", rep.Recorded, rep.Duplicates)
	}
	if len(tools(rep)) != 1 || tools(rep)[0].Name != "gitleaks" || !slices.Equal(tools(rep)[0].Types, []scangate.ScanType{scangate.ScanSecret}) {
		t.Errorf("tools %+v", tools(rep))
	}
}

// gitleaks --redact writes REDACTED for every value: the findings are named
// by their location, and no name is a planted value's hash.
func TestGoldenGitleaksRedacted(t *testing.T) {
	rep := readFile(t, "testdata/golden/gitleaks-redacted.sarif")
	if rep.Recorded != 8 {
		t.Errorf("recorded %d, want 8 (two rules on one line are two locations)", rep.Recorded)
	}
	for _, f := range flat(rep) {
		if !strings.HasPrefix(f.Name, "loc:") {
			t.Errorf("%+v: want a loc: name", f)
		}
		line := ""
		if f.Line != nil {
			line = itoa(int(*f.Line))
		}
		s := sha256.Sum256([]byte(f.Rule + "|" + f.Path + "|" + line))
		if f.Name != "loc:"+hex.EncodeToString(s[:]) {
			t.Errorf("%+v: name is not sha256 of rule|path|line", f)
		}
	}
}

// semgrep: a rule tagged secret records a SECRET, a rule tagged with a CVE
// records the CVE, and a nosemgrep line is recorded suppressed in source.
func TestGoldenSemgrep(t *testing.T) {
	rep := readFile(t, "testdata/golden/semgrep.sarif")
	var secret, cve, suppressed int
	for _, f := range flat(rep) {
		switch {
		case f.Type == scangate.ScanSecret:
			secret++
			if f.Rule != "github-token-in-code" || f.Path != "app.py" || !strings.HasPrefix(f.Name, "sha256:") {
				t.Errorf("secret %+v", f)
			}
		case f.Name == "CVE-2017-18342":
			cve++
			if f.Rule != "yaml-unsafe-load" {
				t.Errorf("CVE finding %+v", f)
			}
		case f.SuppressedInSource:
			suppressed++
			if f.Rule != "subprocess-shell-true" || *f.Line != 33 {
				t.Errorf("suppressed %+v", f)
			}
		}
	}
	if secret != 1 || cve != 1 || suppressed != 1 || rep.SuppressedInSource != 1 {
		t.Errorf("secret %d, cve %d, suppressed %d (%d): want 1 each", secret, cve, suppressed, rep.SuppressedInSource)
	}
	if len(tools(rep)) != 1 || tools(rep)[0].Name != "Semgrep OSS" || tools(rep)[0].Version != "1.180.0" ||
		!slices.Equal(tools(rep)[0].Types, []scangate.ScanType{scangate.ScanSecret, scangate.ScanVulnerability}) {
		t.Errorf("tools %+v", tools(rep))
	}
}

// bandit and checkov record code and configuration findings under their
// rule ids, with repository-relative paths.
func TestGoldenBanditCheckov(t *testing.T) {
	for file, want := range map[string][]string{
		"bandit.sarif":  {"B602|app.py|15", "B602|app.py|33", "B105|app.py|10", "B506|app.py|24"},
		"checkov.sarif": {"CKV_AWS_20|main.tf|2", "CKV_AWS_24|main.tf|7", "CKV_DOCKER_8|Dockerfile|5"},
	} {
		rep := readFile(t, "testdata/golden/"+file)
		var got []string
		for _, f := range flat(rep) {
			if f.Type != scangate.ScanVulnerability || f.Name != f.Rule {
				t.Errorf("%s: %+v", file, f)
			}
			got = append(got, f.Name+"|"+f.Path+"|"+itoa(int(*f.Line)))
		}
		for _, w := range want {
			if !slices.Contains(got, w) {
				t.Errorf("%s: %s not recorded in %v", file, w, got)
			}
		}
	}
}
