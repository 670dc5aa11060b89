package local_test

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
