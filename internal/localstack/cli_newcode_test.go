package localstack_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/scangate/scangate/internal/cienv/cienvtest"
)

// TestCLIBranchAnalysis: a GitHub Actions job on a push to master records
// a branch analysis (exit 0, no pull request, no gate); the pull
// request's job then sends its base (master at the payload's base.sha,
// the checkout having no history) and is judged against that analysis:
// exactly the secret it adds is new, printed before the gate, and
// findings --baseline-state new lists it alone.
func TestCLIBranchAnalysis(t *testing.T) {
	t.Parallel()
	e := startCLI(t)
	push := job{env: cienvtest.GitHubPush(t, t.TempDir(), "master", cienvtest.GitHubBaseSHA)}
	push.env["SCANGATE_URL"], push.env["SCANGATE_TOKEN"] = e.api, e.admin
	old := []string{cliSecret, "fixture-not-a-live-key-43"}
	code, out, errOut := e.run(t, push, "upload", e.file(t, "base.sarif", gitleaksLog(old...)))
	if code != 0 || errOut != "" || !strings.Contains(out, "Codertocat/Hello-World: branch master analysed at f95f852bd8fc (1 log); the baseline of its pull requests, no gate") {
		t.Fatalf("upload on a push: exit %d\n%s%s", code, out, errOut)
	}
	if prs := e.prs(t, 1, cienvtest.GitHubRepoID); len(prs) != 0 {
		t.Errorf("a push made pull requests: %v", prs)
	}
	resp, body := do(t, "GET", fmt.Sprintf("%s/branches?vc_id=1&repo_id=%d&name=refs/heads/master", e.api, cienvtest.GitHubRepoID), e.admin, "")
	var branches struct {
		Items []struct {
			Name       string
			Categories []struct {
				Category    string
				ScanID      int64  `json:"scan_id"`
				CommitSHA   string `json:"commit_sha"`
				SecretCount int64  `json:"secret_count"`
			}
		}
	}
	if resp.StatusCode != 200 || json.Unmarshal([]byte(body), &branches) != nil || len(branches.Items) != 1 || len(branches.Items[0].Categories) != 1 {
		t.Fatalf("the branch: %d %s", resp.StatusCode, body)
	}
	if c := branches.Items[0].Categories[0]; c.Category != "gitleaks" || c.CommitSHA != cienvtest.GitHubBaseSHA || c.SecretCount != 2 {
		t.Errorf("the branch's analysis: %+v", c)
	}
	baseScan := branches.Items[0].Categories[0].ScanID

	pr := e.github(t, e.admin)
	added := "fixture-not-a-live-key-44"
	code, out, errOut = e.run(t, pr, "upload", e.file(t, "pr.sarif", gitleaksLog(append(old, added)...)))
	name := "sha256:" + sha256hex(added)
	newAt, gateAt := strings.Index(out, "new in this pull request (not on master): 1 finding\n"), strings.Index(out, "Codertocat/Hello-World#2: BLOCKED")
	if code != 1 || newAt < 0 || gateAt < newAt || !strings.Contains(out[newAt:gateAt], name) || strings.Contains(out[newAt:gateAt], sha256hex(cliSecret)) ||
		!strings.Contains(out, "base master (f95f852bd8fc, the CI's base commit") {
		t.Fatalf("upload on the pull request: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = e.run(t, pr, "gate", "--json")
	var g struct {
		BaseRef    string `json:"base_ref"`
		Categories []struct {
			Baseline *struct {
				ScanID int64 `json:"scan_id"`
				Match  string
			}
			New       int64 `json:"new_count"`
			Unchanged int64 `json:"unchanged_count"`
		}
	}
	if code != 1 || json.Unmarshal([]byte(out), &g) != nil || g.BaseRef != "master" || len(g.Categories) != 1 {
		t.Fatalf("gate --json: exit %d %s", code, out)
	}
	if c := g.Categories[0]; c.Baseline == nil || c.Baseline.ScanID != baseScan || c.Baseline.Match != "exact" || c.New != 1 || c.Unchanged != 2 {
		t.Errorf("the gate's category: %+v (baseline %+v), want scan %d exact, 1 new, 2 unchanged", c, c.Baseline, baseScan)
	}
	code, out, _ = e.run(t, pr, "findings", "--baseline-state", "new")
	if code != 0 || !strings.Contains(out, name) || !strings.Contains(out, "1 finding in 1 scan") {
		t.Errorf("findings --baseline-state new: exit %d\n%s", code, out)
	}
	code, out, _ = e.run(t, pr, "findings")
	if i, j := strings.Index(out, name), strings.Index(out, "sha256:"+sha256hex(cliSecret)); code != 0 || i < 0 || j < i || !strings.Contains(out, "3 findings in 1 scan") {
		t.Errorf("findings, the new first: exit %d\n%s", code, out)
	}
	e.check(t, 2)
}
