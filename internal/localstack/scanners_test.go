package localstack_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// factFinding is one finding as .ci/sarif_facts.py computes it.
type factFinding struct {
	Type       string   `json:"type"`
	Name       string   `json:"name"`
	Aliases    []string `json:"aliases"`
	Rule       string   `json:"rule"`
	Path       *string  `json:"path"`
	Line       *int64   `json:"line"`
	Suppressed bool     `json:"suppressed"`
}

func (f factFinding) String() string {
	path, line := "", int64(0)
	if f.Path != nil {
		path = *f.Path
	}
	if f.Line != nil {
		line = *f.Line
	}
	return fmt.Sprintf("%s %s %v %s %s:%d suppressed=%v", f.Type, f.Name, f.Aliases, f.Rule, path, line, f.Suppressed)
}

type facts struct {
	ByType   map[string]int `json:"by_type"`
	Findings []factFinding  `json:"findings"`
	Recorded int            `json:"recorded"`
	Results  int            `json:"results"`
	Skipped  int            `json:"skipped"`
}

// TestScannerUploads is the upload step of the real-scanner tier (make
// test-scanners): the SARIF that gitleaks, semgrep, bandit and checkov wrote
// over the fixtures is uploaded, gzipped and base64-encoded as a CI job
// sends it, through the local server; what is stored must equal what
// .ci/sarif_facts.py computed from the same files on its own, and a global
// allowlist named sha256 of a planted value suppresses exactly its
// occurrences.
func TestScannerUploads(t *testing.T) {
	t.Parallel()
	dir := os.Getenv("SCANGATE_SARIF_DIR")
	if dir == "" {
		t.Skip("set SCANGATE_SARIF_DIR to the scanners' output (make test-scanners)")
	}
	var all map[string]json.RawMessage
	readJSON(t, filepath.Join(dir, "facts.json"), &all)
	_, api, pwDir, env := startCounted(t, 0)
	admin := loginToken(t, api, "admin", adminPassword(t, pwDir))
	logs, _ := filepath.Glob(filepath.Join(dir, "*.sarif"))
	if len(logs) < 4 {
		t.Fatalf("%d SARIF files in %s; want the four scanners' (and gitleaks --redact)", len(logs), dir)
	}
	secretOccurrences := map[string]int{}
	for i, path := range logs {
		var want facts
		if err := json.Unmarshal(all[filepath.Base(path)], &want); err != nil {
			t.Fatalf("%s: no facts: %v", path, err)
		}
		got := uploadLog(t, api, admin, path, int64(100+i))
		if got.Results != want.Results || got.Recorded != want.Recorded || got.Skipped != want.Skipped {
			t.Errorf("%s: results/recorded/skipped %d/%d/%d; the facts say %d/%d/%d", filepath.Base(path),
				got.Results, got.Recorded, got.Skipped, want.Results, want.Recorded, want.Skipped)
		}
		var stored []factFinding
		for _, id := range got.ScanIDs {
			stored = append(stored, storedFindings(t, env.DB, env.Table, id)...)
		}
		compareFindings(t, filepath.Base(path), stored, want.Findings)
		for _, f := range want.Findings {
			if f.Type == "SECRET" && !f.Suppressed {
				secretOccurrences[f.Name]++
			}
		}
	}
	// An allowlist for the planted value found most often covers exactly
	// its occurrences across every upload.
	var planted struct{ Names []string }
	if err := json.Unmarshal(all["planted"], &planted); err != nil || len(planted.Names) == 0 {
		t.Fatalf("no planted names: %v", err)
	}
	best := planted.Names[0]
	for _, n := range planted.Names {
		if secretOccurrences[n] > secretOccurrences[best] {
			best = n
		}
	}
	resp, body := do(t, "POST", api+"/whitelist", admin, `{"type":"SECRET","name":"`+best+`","global_":true,"reason":"used_in_tests"}`)
	if resp.StatusCode != 201 || !strings.Contains(body, fmt.Sprintf(`"secrets_updated":%d`, secretOccurrences[best])) {
		t.Errorf("the allowlist for %s: %d %s; want secrets_updated %d", best, resp.StatusCode, body, secretOccurrences[best])
	}
	if r, err := env.Store.Check(context.Background()); err != nil || len(r.Drift) > 0 {
		t.Errorf("check: %v %v", r.Drift, err)
	}
}

type uploaded struct {
	Results, Recorded, Skipped int
	ScanIDs                    []int64
}

func uploadLog(t *testing.T, api, token, path string, repo int64) uploaded {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	_, _ = w.Write(raw)
	_ = w.Close()
	body := fmt.Sprintf(`{"vc_type":"github","vc_id":1,"vc_name":"acme","repo_id":%d,"repo_name":"acme/fixtures","webhook_id":1,`+
		`"pr":{"pr_id":1,"pr_name":"scanners","pr_link":"https://git.example.com/pull/1"},"sarif":%q}`, repo, base64.StdEncoding.EncodeToString(buf.Bytes()))
	resp, out := do(t, "POST", api+"/pr/scan/sarif", token, body)
	if resp.StatusCode != 201 {
		t.Fatalf("%s: %d %s", filepath.Base(path), resp.StatusCode, out)
	}
	var got struct {
		Scans                      []struct{ ID int64 }
		Results, Recorded, Skipped int
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	u := uploaded{Results: got.Results, Recorded: got.Recorded, Skipped: got.Skipped}
	for _, s := range got.Scans {
		u.ScanIDs = append(u.ScanIDs, s.ID)
	}
	return u
}

// storedFindings reads a scan's findings from the table itself.
func storedFindings(t *testing.T, db *dynamodb.Client, table string, scanID int64) []factFinding {
	t.Helper()
	out, err := db.Query(context.Background(), &dynamodb.QueryInput{TableName: &table,
		KeyConditionExpression:    aws.String("PK = :pk AND begins_with(SK, :f)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: fmt.Sprintf("SCAN#%d", scanID)}, ":f": &types.AttributeValueMemberS{Value: "FINDING#"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	s := func(it map[string]types.AttributeValue, k string) string {
		if v, ok := it[k].(*types.AttributeValueMemberS); ok {
			return v.Value
		}
		return ""
	}
	var fs []factFinding
	for _, it := range out.Items {
		f := factFinding{Type: s(it, "type"), Name: s(it, "name"), Rule: s(it, "rule"), Aliases: []string{}}
		if p := s(it, "path"); p != "" {
			f.Path = &p
		}
		if v, ok := it["line"].(*types.AttributeValueMemberN); ok {
			var n int64
			_, _ = fmt.Sscan(v.Value, &n)
			f.Line = &n
		}
		if l, ok := it["aliases"].(*types.AttributeValueMemberL); ok {
			for _, a := range l.Value {
				f.Aliases = append(f.Aliases, a.(*types.AttributeValueMemberS).Value)
			}
		}
		if b, ok := it["src"].(*types.AttributeValueMemberBOOL); ok {
			f.Suppressed = b.Value
		}
		fs = append(fs, f)
	}
	return fs
}

func compareFindings(t *testing.T, name string, got, want []factFinding) {
	t.Helper()
	key := func(fs []factFinding) []string {
		var out []string
		for _, f := range fs {
			slices.Sort(f.Aliases)
			out = append(out, f.String())
		}
		slices.Sort(out)
		return out
	}
	g, w := key(got), key(want)
	if !slices.Equal(g, w) {
		t.Errorf("%s: stored findings differ from the facts:\nstored %q\nfacts  %q", name, g, w)
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}

}

// TestScannerGate is the gate step of the real-scanner tier: gitleaks',
// semgrep's, bandit's and checkov's SARIF over the fixtures, uploaded for
// one pull request one log after the other, and for another in one log,
// stand side by side as four categories (semgrep's rule tagged secret
// adds a SECRET scan to its category), each counting what the facts
// computed on their own say its tool found, the PR counting their sum;
// gitleaks run again over a checkout without the secrets unblocks its
// category, and only it.
func TestScannerGate(t *testing.T) {
	t.Parallel()
	dir := os.Getenv("SCANGATE_SARIF_DIR")
	if dir == "" {
		t.Skip("set SCANGATE_SARIF_DIR to the scanners' output (make test-scanners)")
	}
	var all map[string]json.RawMessage
	readJSON(t, filepath.Join(dir, "facts.json"), &all)
	_, api, pwDir, env := startCounted(t, 0)
	admin := loginToken(t, api, "admin", adminPassword(t, pwDir))
	tools := map[string]string{"gitleaks": "gitleaks", "semgrep": "semgrep-oss", "bandit": "bandit", "checkov": "checkov"}
	// What each tool's category must count, from the facts.
	want := map[string][2]int64{}
	var runs []json.RawMessage
	for tool, category := range tools {
		var f facts
		if err := json.Unmarshal(all[tool+".sarif"], &f); err != nil {
			t.Fatalf("%s: no facts: %v", tool, err)
		}
		for _, x := range f.Findings {
			if x.Suppressed {
				continue
			}
			k := x.Type + "/" + category
			c := want[k]
			if x.Type == "SECRET" {
				c[0]++
			} else {
				c[1]++
			}
			want[k] = c
		}
		var log struct{ Runs []json.RawMessage }
		readJSON(t, filepath.Join(dir, tool+".sarif"), &log)
		runs = append(runs, log.Runs...)
	}
	one, _ := json.Marshal(map[string]any{"version": "2.1.0", "runs": runs})
	onePath := filepath.Join(t.TempDir(), "four-tools.sarif")
	if err := os.WriteFile(onePath, one, 0o600); err != nil {
		t.Fatal(err)
	}
	for pr, paths := range map[int64][]string{
		1: {filepath.Join(dir, "gitleaks.sarif"), filepath.Join(dir, "semgrep.sarif"), filepath.Join(dir, "bandit.sarif"), filepath.Join(dir, "checkov.sarif")},
		2: {onePath},
	} {
		var prID int64
		for _, p := range paths {
			prID = uploadLogFor(t, api, admin, p, 500, pr)
		}
		g := gateOf(t, api, admin, prID)
		got := map[string][2]int64{}
		var secrets, vulns int64
		for _, c := range g.Categories {
			got[c.ScanType+"/"+c.Category] = [2]int64{c.SecretCount, c.VulnerabilityCount}
			secrets, vulns = secrets+c.SecretCount, vulns+c.VulnerabilityCount
		}
		if fmt.Sprint(got) != fmt.Sprint(want) || !g.Blocked {
			t.Errorf("PR %d: blocked %v, categories %v; the facts say %v", pr, g.Blocked, got, want)
		}
		_, body := do(t, "GET", fmt.Sprintf("%s/pr/%d", api, prID), admin, "")
		if !strings.Contains(body, fmt.Sprintf(`"secret_count":%d,"vulnerability_count":%d`, secrets, vulns)) {
			t.Errorf("PR %d: %s; its categories sum to %d/%d", pr, body, secrets, vulns)
		}
		// The clean re-run: gitleaks' category no longer blocks, the others do.
		uploadLogFor(t, api, admin, filepath.Join(dir, "gitleaks-clean.sarif"), 500, pr)
		after := gateOf(t, api, admin, prID)
		for _, r := range after.Reasons {
			if r.Category == "gitleaks" {
				t.Errorf("PR %d: after a clean gitleaks run its category still blocks: %+v", pr, r)
			}
		}
		if len(after.Reasons) != len(g.Reasons)-1 || !after.Blocked {
			t.Errorf("PR %d: reasons %+v before the clean run, %+v after", pr, g.Reasons, after.Reasons)
		}
	}
	if r, err := env.Store.Check(context.Background()); err != nil || len(r.Drift)+len(r.Pending) > 0 {
		t.Errorf("check: %v %v %v", r.Drift, r.Pending, err)
	}
}

// scannerGate is what TestScannerGate reads of a gate.
type scannerGate struct {
	Blocked bool
	Reasons []struct {
		Kind, Category string
		ScanType       string `json:"scan_type"`
	}
	Categories []struct {
		ScanType           string `json:"scan_type"`
		Category           string
		SecretCount        int64 `json:"secret_count"`
		VulnerabilityCount int64 `json:"vulnerability_count"`
	}
}

func gateOf(t *testing.T, api, token string, prID int64) scannerGate {
	t.Helper()
	resp, body := do(t, "GET", fmt.Sprintf("%s/pr/%d/gate", api, prID), token, "")
	var g scannerGate
	if resp.StatusCode != 200 || json.Unmarshal([]byte(body), &g) != nil {
		t.Fatalf("gate of PR %d: %d %s", prID, resp.StatusCode, body)
	}
	return g
}

// uploadLogFor uploads a log for pull request number pr of repo, and
// returns the PR's id.
func uploadLogFor(t *testing.T, api, token, path string, repo, pr int64) int64 {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	body := fmt.Sprintf(`{"vc_type":"github","vc_id":1,"vc_name":"acme","repo_id":%d,"repo_name":"acme/fixtures","webhook_id":1,`+
		`"pr":{"pr_id":%d,"pr_name":"scanners","pr_link":"https://git.example.com/pull/%d"},"sarif":%s}`, repo, pr, pr, raw)
	resp, out := do(t, "POST", api+"/pr/scan/sarif", token, body)
	var got struct {
		Scans []struct {
			PRID int64 `json:"pr_id"`
		}
	}
	if resp.StatusCode != 201 || json.Unmarshal([]byte(out), &got) != nil || len(got.Scans) == 0 {
		t.Fatalf("%s: %d %s", filepath.Base(path), resp.StatusCode, out)
	}
	return got.Scans[0].PRID
}
