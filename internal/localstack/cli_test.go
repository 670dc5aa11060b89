package localstack_test

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/scangate/scangate/internal/cienv/cienvtest"
	"github.com/scangate/scangate/internal/localstack"
)

// The tests of the command-line client (cmd/scangate) run the built
// binary, with exactly the environment a CI sets, against the local
// stack.

var cliBuild struct {
	once sync.Once
	dir  string
	bin  string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if cliBuild.dir != "" {
		_ = os.RemoveAll(cliBuild.dir)
	}
	os.Exit(code)
}

// scangateBinary builds cmd/scangate once for the tests of this package.
func scangateBinary(t *testing.T) string {
	t.Helper()
	cliBuild.once.Do(func() {
		if cliBuild.dir, cliBuild.err = os.MkdirTemp("", "scangate-cli-"); cliBuild.err != nil {
			return
		}
		cliBuild.bin = filepath.Join(cliBuild.dir, "scangate")
		out, err := exec.Command("go", "build", "-o", cliBuild.bin, "../../cmd/scangate").CombinedOutput()
		if err != nil {
			cliBuild.err = fmt.Errorf("go build ./cmd/scangate: %w\n%s", err, out)
		}
	})
	if cliBuild.err != nil {
		t.Fatal(cliBuild.err)
	}
	return cliBuild.bin
}

// cliEnv is the local stack, with its log kept, for the client's tests.
type cliEnv struct {
	uploadEnv
	log *syncBuffer
	bin string
	dir string // the job's working directory
}

func startCLI(t *testing.T) cliEnv {
	t.Helper()
	log := &syncBuffer{}
	e := startUploads(t, func(o *localstack.Options) { o.Log = slog.New(slog.NewJSONHandler(log, nil)) })
	dir := t.TempDir()
	// The checkout the jobs' logs name files of (their primaryLocationLineHash
	// is computed from them).
	files := fstest.MapFS{"config/test.env": {Data: []byte(strings.Repeat("MODE=test\n", 10))}, "app.py": {Data: []byte(strings.Repeat("import flask\n", 10))}}
	for i := range 3 {
		files[fmt.Sprintf("keys/%d.pem", i)] = &fstest.MapFile{Data: []byte("-----BEGIN PRIVATE KEY-----\n")}
	}
	if err := os.CopyFS(dir, files); err != nil {
		t.Fatal(err)
	}
	return cliEnv{uploadEnv: e, log: log, bin: scangateBinary(t), dir: dir}
}

// job is one run of the client: its whole environment and standard input.
type job struct {
	env   map[string]string
	stdin string
}

// github is a GitHub Actions job on the recorded pull_request event, with
// scangate's URL and the token in its secrets.
func (e cliEnv) github(t *testing.T, token string) job {
	env := cienvtest.GitHubPullRequest(t, t.TempDir())
	env["SCANGATE_URL"], env["SCANGATE_TOKEN"] = e.api, token
	return job{env: env}
}

// gitlab is a GitLab CI job of a merged results pipeline of a merge
// request, with scangate's URL and token in its CI/CD variables.
func (e cliEnv) gitlab(token string) job {
	env := cienvtest.GitLabMergeRequest(true)
	env["SCANGATE_URL"], env["SCANGATE_TOKEN"] = e.api, token
	return job{env: env}
}

// run runs the binary with exactly the job's environment in the job's
// directory. Neither its output nor the service's log may show a token.
func (e cliEnv) run(t *testing.T, j job, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(e.bin, args...)
	cmd.Dir = e.dir
	cmd.Env = []string{}
	for k, v := range j.env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Stdin = strings.NewReader(j.stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	for _, secret := range []string{j.env["SCANGATE_TOKEN"], strings.TrimSpace(j.stdin)} {
		if secret == "" {
			continue
		}
		for where, text := range map[string]string{"stdout": stdout.String(), "stderr": stderr.String(), "the service's log": e.log.String()} {
			if strings.Contains(text, secret) {
				t.Errorf("scangate %v: %s shows the token", args, where)
			}
		}
	}
	return code, stdout.String(), stderr.String()
}

// file writes a file into the job's directory.
func (e cliEnv) file(t *testing.T, name string, b []byte) string {
	t.Helper()
	if err := os.WriteFile(filepath.Join(e.dir, name), b, 0o600); err != nil {
		t.Fatal(err)
	}
	return name
}

// prs lists the pull requests of a repository as the API shows them.
func (e cliEnv) prs(t *testing.T, vc, repo int64) []map[string]any {
	t.Helper()
	resp, body := do(t, "GET", fmt.Sprintf("%s/pr?vc_id=%d&repo_id=%d", e.api, vc, repo), e.admin, "")
	var page struct{ Items []map[string]any }
	if resp.StatusCode != 200 || json.Unmarshal([]byte(body), &page) != nil {
		t.Fatalf("list PRs: %d %s", resp.StatusCode, body)
	}
	return page.Items
}

// scansOf reads the scans of a pull request (the service's id), newest first.
func (e cliEnv) scansOf(t *testing.T, pr float64) []map[string]any {
	t.Helper()
	resp, body := do(t, "GET", fmt.Sprintf("%s/pr/%d/scans", e.api, int64(pr)), e.admin, "")
	var page struct{ Items []map[string]any }
	if resp.StatusCode != 200 || json.Unmarshal([]byte(body), &page) != nil {
		t.Fatalf("list scans: %d %s", resp.StatusCode, body)
	}
	return page.Items
}

const cliSecret = "fixture-not-a-live-key-42"

func sha256hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// gitleaksLog is a gitleaks SARIF log of the values given as secrets.
func gitleaksLog(values ...string) []byte {
	var results []string
	for i, v := range values {
		results = append(results, fmt.Sprintf(`{"ruleId":"generic-api-key","message":{"text":"generic-api-key has detected a secret"},`+
			`"locations":[{"physicalLocation":{"artifactLocation":{"uri":"config/test.env"},"region":{"startLine":%d,"snippet":{"text":%q}}}}]}`, i+1, v))
	}
	return []byte(`{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"gitleaks","version":"8.30.1"}},"results":[` + strings.Join(results, ",") + `]}]}`)
}

const semgrepLog = `{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"Semgrep OSS","version":"1.180.0","rules":[` +
	`{"id":"python.flask.security.audit.debug-enabled","defaultConfiguration":{"level":"warning"}}]}},"results":[` +
	`{"ruleId":"python.flask.security.audit.debug-enabled","message":{"text":"debug"},"locations":[{"physicalLocation":` +
	`{"artifactLocation":{"uri":"app.py"},"region":{"startLine":9}}}]}]}]}`

// TestCLIUploadInline: a GitHub Actions job on a pull_request event
// uploads two logs inline; the pull request, repository and head come
// from the event payload and GitHub's variables; findings and allowlists
// work from the same job.
func TestCLIUploadInline(t *testing.T) {
	t.Parallel()
	e := startCLI(t)
	j := e.github(t, e.admin)
	code, out, errOut := e.run(t, j, "upload", "--no-gate", e.file(t, "gitleaks.sarif", gitleaksLog(cliSecret)), e.file(t, "semgrep.sarif", []byte(semgrepLog)))
	if code != 0 || errOut != "" || strings.Count(out, "recorded (inline): 1 result: 1 recorded") != 2 {
		t.Fatalf("upload: exit %d\n%s%s", code, out, errOut)
	}
	prs := e.prs(t, 1, cienvtest.GitHubRepoID)
	if len(prs) != 1 || prs[0]["pr_id"] != float64(cienvtest.GitHubPR) || prs[0]["pr_name"] != cienvtest.GitHubPRName ||
		prs[0]["pr_link"] != cienvtest.GitHubPRLink || prs[0]["webhook_id"] != float64(1) || prs[0]["secret_count"] != float64(1) {
		t.Fatalf("the PR as recorded: %v", prs)
	}
	scans := e.scansOf(t, prs[0]["id"].(float64))
	if len(scans) != 2 || scans[0]["repo_name"] != cienvtest.GitHubRepo || scans[0]["vc_type"] != "github" || scans[0]["vc_name"] != "github.com" {
		t.Errorf("the scans as recorded: %v", scans)
	}

	// The findings of the PR's newest scans, from the same job.
	name := "sha256:" + sha256hex(cliSecret)
	code, out, errOut = e.run(t, j, "findings")
	if code != 0 || !strings.Contains(out, name) || !strings.Contains(out, "python.flask.security.audit.debug-enabled") || !strings.Contains(out, "2 findings in 2 scans") {
		t.Errorf("findings: exit %d\n%s%s", code, out, errOut)
	}
	// An allowlist for the secret: it stops counting.
	code, out, errOut = e.run(t, j, "allowlist", "create", "--type", "SECRET", "--name", name, "--repo", fmt.Sprint(cienvtest.GitHubRepoID),
		"--reason", "used_in_tests", "--expires", "30d", "--comment", "test fixture")
	if code != 0 || out != fmt.Sprintf("allowlist 1 created (SECRET %s): 1 secret and 0 vulnerabilities judged anew\n", name) {
		t.Errorf("allowlist create: exit %d %q %q", code, out, errOut)
	}
	code, out, _ = e.run(t, j, "findings")
	if code != 0 || strings.Contains(out, name) || !strings.Contains(out, "1 finding in 2 scans") {
		t.Errorf("findings after the allowlist: exit %d\n%s", code, out)
	}
	code, out, _ = e.run(t, j, "findings", "--all", "--json")
	var doc struct {
		Scans []struct {
			Scan     struct{ ID int64 }
			Findings []struct {
				Name         string
				SuppressedBy []int64 `json:"suppressed_by"`
			}
		}
	}
	if code != 0 || json.Unmarshal([]byte(out), &doc) != nil || len(doc.Scans) != 2 {
		t.Fatalf("findings --all --json: exit %d %s", code, out)
	}
	var suppressed []string
	for _, s := range doc.Scans {
		for _, f := range s.Findings {
			suppressed = append(suppressed, fmt.Sprint(f.Name, f.SuppressedBy))
		}
	}
	sort.Strings(suppressed)
	if want := "[python.flask.security.audit.debug-enabled[] " + name + "[1]]"; fmt.Sprint(suppressed) != want {
		t.Errorf("findings --all: %v, want %s", suppressed, want)
	}
	// Switched off, it covers nothing again; the list shows it.
	code, out, _ = e.run(t, j, "allowlist", "update", "1", "--active=false", "--comment", "rotated")
	if code != 0 || !strings.Contains(out, "allowlist 1 updated") || !strings.Contains(out, "1 secret and") {
		t.Errorf("allowlist update: exit %d %q", code, out)
	}
	code, out, _ = e.run(t, j, "allowlist", "list", "--type", "SECRET")
	if code != 0 || !strings.Contains(out, "1   SECRET  "+name+"  no      repo 186853002  -      used_in_tests") {
		t.Errorf("allowlist list: exit %d\n%s", code, out)
	}
	if _, err := e.db.Store.Check(t.Context()); err != nil {
		t.Error(err)
	}
}

// bigLog is a gitleaks log whose gzip is over the 6 MB inline limit:
// three results with messages of random text (each JSON value under the
// service's 8 MiB bound).
func bigLog(t *testing.T) []byte {
	t.Helper()
	var results []string
	for i := range 3 {
		noise := make([]byte, 2_400_000)
		if _, err := rand.Read(noise); err != nil {
			t.Fatal(err)
		}
		results = append(results, fmt.Sprintf(`{"ruleId":"generic-api-key","message":{"text":%q},"locations":[{"physicalLocation":`+
			`{"artifactLocation":{"uri":"keys/%d.pem"},"region":{"startLine":1,"snippet":{"text":"big-fixture-%d"}}}}]}`,
			base64.StdEncoding.EncodeToString(noise), i, i))
	}
	return []byte(`{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"gitleaks","version":"8.30.1"}},"results":[` + strings.Join(results, ",") + `]}]}`)
}

// TestCLIUploadPresigned: a GitLab CI job of a merge request uploads a log
// too large to go inline through S3 (the local stack's embedded S3 and its
// ObjectCreated emulation), and a small one through S3 on request.
func TestCLIUploadPresigned(t *testing.T) {
	t.Parallel()
	e := startCLI(t)
	j := e.gitlab(e.admin)
	code, out, errOut := e.run(t, j, "upload", "--no-gate", "--json", e.file(t, "big.sarif", bigLog(t)))
	var doc struct {
		Uploads []struct {
			File, Via string
			UploadID  int64 `json:"upload_id"`
			Result    struct {
				Status   string
				ScanIDs  []int64 `json:"scan_ids"`
				Recorded int
			}
		}
	}
	if code != 0 || json.Unmarshal([]byte(out), &doc) != nil || len(doc.Uploads) != 1 {
		t.Fatalf("upload: exit %d\n%s%s", code, out, errOut)
	}
	if u := doc.Uploads[0]; u.Via != "presigned" || u.UploadID == 0 || u.Result.Status != "complete" || u.Result.Recorded != 3 || len(u.Result.ScanIDs) != 1 {
		t.Errorf("the upload: %+v", u)
	}
	if errOut != "" {
		t.Errorf("a progress bar or a message on standard error, which is not a terminal: %q", errOut)
	}
	code, out, errOut = e.run(t, j, "upload", "--no-gate", "--presigned", e.file(t, "gitleaks.sarif", gitleaksLog(cliSecret)))
	if code != 0 || !strings.Contains(out, "gitleaks.sarif: recorded (presigned upload ") || !strings.Contains(out, ": completed, 1 secret, 0 vulnerabilities, blocks: yes") {
		t.Errorf("a small log through S3: exit %d\n%s%s", code, out, errOut)
	}
	prs := e.prs(t, 2, cienvtest.GitLabProjectID)
	if len(prs) != 1 || prs[0]["pr_id"] != float64(cienvtest.GitLabMR) || prs[0]["pr_name"] != cienvtest.GitLabMRName || prs[0]["pr_link"] != cienvtest.GitLabMRLink {
		t.Fatalf("the merge request as recorded: %v", prs)
	}
	scans := e.scansOf(t, prs[0]["id"].(float64))
	if len(scans) != 2 || scans[0]["repo_name"] != cienvtest.GitLabProject || scans[0]["vc_type"] != "gitlab" || scans[0]["vc_name"] != "gitlab.example.com" {
		t.Errorf("the scans as recorded: %v", scans)
	}
	e.check(t, 2)
}

// TestCLIFailures: a service that does not answer, a refused token, a job
// outside a pull request and a log the service refuses are exit 2 with a
// message, and no token is shown.
func TestCLIFailures(t *testing.T) {
	t.Parallel()
	e := startCLI(t)
	log := e.file(t, "gitleaks.sarif", gitleaksLog(cliSecret))
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	for _, c := range []struct {
		name string
		j    job
		args []string
		want string
	}{
		{"service down", e.github(t, e.admin), []string{"upload", "--url", down.URL + "/api", log}, "did not answer"},
		{"service down", e.github(t, e.admin), []string{"gate", "--url", down.URL + "/api"}, "did not answer"},
		{"bad token", e.github(t, "sgt_1_"+strings.Repeat("A", 48)), []string{"upload", "--no-gate", log}, "401 Unauthorized"},
		{"bad token", e.gitlab("sgt_1_" + strings.Repeat("B", 48)), []string{"findings"}, "401 Unauthorized"},
		{"no token", job{env: map[string]string{"SCANGATE_URL": e.api}}, []string{"gate", "--pr-id", "1"}, "no token: set SCANGATE_TOKEN"},
		{"not SARIF", e.github(t, e.admin), []string{"upload", "--no-gate", e.file(t, "bad.sarif", []byte(`{"version":"2.1.0","runs":[{"tool":{}}]}`))},
			"422 Unprocessable Entity: the SARIF log is not SARIF 2.1.0 as scangate reads it\n  /sarif/runs/0/tool/driver: "},
		{"not SARIF through S3", e.gitlab(e.admin), []string{"upload", "--no-gate", "--presigned", "bad.sarif"},
			"failed:\n422 Unprocessable Entity: the SARIF log is not SARIF 2.1.0 as scangate reads it\n  /runs/0/tool/driver: "},
		{"no file", e.github(t, e.admin), []string{"upload", "--no-gate", "missing.sarif"}, "missing.sarif: open missing.sarif: no such file"},
	} {
		code, out, errOut := e.run(t, c.j, c.args...)
		if code != 2 || out != "" || !strings.Contains(errOut, c.want) {
			t.Errorf("%s: scangate %v: exit %d, stdout %q, stderr %q; want exit 2 and %q", c.name, c.args, code, out, errOut, c.want)
		}
	}

	// Outside a pull request: a push event on GitHub, a branch pipeline on GitLab.
	push := e.github(t, e.admin)
	if err := os.WriteFile(push.env["GITHUB_EVENT_PATH"], []byte(`{"ref":"refs/heads/master","after":"`+cienvtest.GitHubHeadSHA+`"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	push.env["GITHUB_EVENT_NAME"], push.env["GITHUB_REF"] = "push", "refs/heads/master"
	branch := e.gitlab(e.admin)
	for k := range branch.env {
		if strings.HasPrefix(k, "CI_MERGE_REQUEST_") {
			delete(branch.env, k)
		}
	}
	branch.env["CI_PIPELINE_SOURCE"], branch.env["CI_COMMIT_BRANCH"] = "push", "main"
	for _, c := range []struct {
		j    job
		want string
	}{
		{push, `not in a pull request: GitHub Actions event "push" has no pull_request in its payload`},
		{branch, `not in a pull request: GitLab pipeline "push" has no merge request (CI_MERGE_REQUEST_IID is unset)`},
	} {
		for _, args := range [][]string{{"upload", log}, {"gate"}, {"findings"}} {
			code, out, errOut := e.run(t, c.j, args...)
			if code != 2 || out != "" || !strings.Contains(errOut, c.want) {
				t.Errorf("scangate %v outside a PR: exit %d, stdout %q, stderr %q", args, code, out, errOut)
			}
		}
	}
	e.check(t, 0)
}

// TestCLITokenCreate: a personal token made with the client is printed
// once, alone on standard output, and works for the client at once; the
// caller's token came from standard input.
func TestCLITokenCreate(t *testing.T) {
	t.Parallel()
	e := startCLI(t)
	j := job{env: map[string]string{"SCANGATE_URL": e.api}, stdin: e.admin + "\n"}
	code, out, errOut := e.run(t, j, "token", "create", "--token-stdin", "--name", "ci-gate", "--days", "7", "--scope", "read")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if code != 0 || len(lines) != 1 || !strings.HasPrefix(lines[0], "sgt_") || !strings.Contains(errOut, `"ci-gate" (scope read)`) {
		t.Fatalf("token create: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	ci := e.github(t, lines[0])
	code, out, errOut = e.run(t, ci, "allowlist", "list", "--json")
	if code != 0 || out != "{\"items\":[],\"next_cursor\":null}\n" {
		t.Errorf("the new token reads: exit %d %q %q", code, out, errOut)
	}
	// A read token may not record (403, as the service says).
	code, _, errOut = e.run(t, ci, "upload", "--no-gate", e.file(t, "x.sarif", gitleaksLog(cliSecret)))
	if code != 2 || !strings.Contains(errOut, "403 Forbidden") {
		t.Errorf("a read token uploading: exit %d %q", code, errOut)
	}
}

// TestReadmeCLIFlow runs the README's example of the client, as written,
// with the built binary on PATH.
func TestReadmeCLIFlow(t *testing.T) {
	t.Parallel()
	bin := scangateBinary(t)
	got := runDocBlock(t, "../../README.md", "cli-flow", []string{"PATH=" + filepath.Dir(bin) + ":" + os.Getenv("PATH")}, "sha256sum")
	// The secret is the run's own; its name is what findings show.
	m := regexp.MustCompile(`(sha256:[0-9a-f]{64})  generic-api-key  config/test.env:3  -\n1 finding in 1 scan\n`).FindStringSubmatch(got)
	if m == nil {
		t.Fatalf("the CLI flow's output lacks the finding that blocks:\n%s", got)
	}
	name := m[1]
	for _, want := range []string{
		"leaks.sarif: recorded (inline): 1 result: 1 recorded (0 of them suppressed in source), 0 duplicates merged, 0 skipped\n",
		"acme/payments#12: BLOCKED (gate of pull request ", "scangate upload: exit 1\n",
		"repository 101 #12: not blocked (gate of pull request ",
		"allowlist 1 created (SECRET " + name + "): 1 secret and 0 vulnerabilities judged anew\n",
		name + "  generic-api-key  config/test.env:3  allowlist 1\n1 finding in 1 scan\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the CLI flow's output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "sgt_") {
		t.Errorf("the CLI flow printed a token:\n%s", got)
	}
}
