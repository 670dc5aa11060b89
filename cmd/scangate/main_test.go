package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scangate/scangate/internal/cienv/cienvtest"
	"github.com/scangate/scangate/pkg/client"
)

const testToken = "sgt_1_unit-test-token-never-printed"

// A gate in the shape of GET /pr/{pr_id}/gate: blocked by the findings of
// one category and a missing required one.
const blockedGate = `{"pr_id":7,"blocked":true,"head_sha":"ec26c3e57ca3a959ca5aad62de7213c562f8c821",` +
	`"reasons":[{"kind":"findings","scan_type":"SECRET","category":"gitleaks","scan_id":21,"count":3,"new_count":0},` +
	`{"kind":"missing","scan_type":"VULNERABILITY","category":"trivy","scan_id":null,"count":0}],` +
	`"categories":[{"scan_type":"SECRET","category":"gitleaks","scan_id":21,"status":"completed","block_status":true,` +
	`"secret_count":3,"vulnerability_count":0,"created_at":"2026-11-22T09:00:00.120Z"},` +
	`{"scan_type":"VULNERABILITY","category":"semgrep","scan_id":22,"status":"completed","block_status":false,` +
	`"secret_count":0,"vulnerability_count":0,"created_at":"2026-11-22T09:00:00.130Z"}],` +
	`"policy":{"block_severity":{"SECRET":"none","VULNERABILITY":"none"},"required":[{"scan_type":"VULNERABILITY","category":"trivy"}],"block_on_missing":true},` +
	`"evaluated_at":"2026-11-22T09:00:01.000Z"}`

const openGate = `{"pr_id":7,"blocked":false,"head_sha":null,"reasons":[],` +
	`"categories":[{"scan_type":"SECRET","category":"gitleaks","scan_id":23,"status":"completed","block_status":false,` +
	`"secret_count":0,"vulnerability_count":0,"created_at":"2026-11-22T09:05:00.000Z"}],` +
	`"policy":{"block_severity":{"SECRET":"none","VULNERABILITY":"none"},"required":[],"block_on_missing":true},"evaluated_at":"2026-11-22T09:05:01.000Z"}`

// fakeAPI serves the routes the CLI calls, in the shapes of docs/API.md
// and of the gate's contract, and records what it was sent.
type fakeAPI struct {
	t    *testing.T
	srv  *httptest.Server
	gate string // the gate's body; "" answers 404

	mu       sync.Mutex
	requests []string // method and path (with query) of each request
	bodies   map[string][]byte
	put      []byte
	upload   string // the status GET uploads/1 answers: complete or failed
	idToken  string // the id token POST /auth/oidc/token exchanges for testToken
}

func newFakeAPI(t *testing.T) *fakeAPI {
	f := &fakeAPI{t: t, gate: blockedGate, bodies: map[string][]byte{}, upload: "complete"}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeAPI) url() string { return f.srv.URL + "/api" }

func problem(w http.ResponseWriter, status int, detail string) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"type":"about:blank","title":%q,"status":%d,"detail":%q}`, http.StatusText(status), status, detail)
}

const scan21 = `{"id":21,"pr_id":7,"scan_type":"SECRET","status":"completed","block_status":true,"other_details":{"category":"gitleaks"},"secret_count":3,"vulnerability_count":0}`

func (f *fakeAPI) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.requests = append(f.requests, r.Method+" "+r.URL.RequestURI())
	f.bodies[r.Method+" "+r.URL.Path] = body
	f.mu.Unlock()
	if r.Method == http.MethodPut && strings.HasPrefix(r.URL.Path, "/s3/") {
		if r.Header.Get("Authorization") != "" || r.Header.Get("Content-Type") != "application/gzip" {
			w.WriteHeader(403)
			return
		}
		f.mu.Lock()
		f.put = body
		f.mu.Unlock()
		return
	}
	if r.Method+" "+r.URL.Path == "POST /api/auth/oidc/token" {
		f.exchange(w, r, body)
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+testToken {
		w.Header().Set("WWW-Authenticate", `Bearer realm="scangate", error="invalid_token"`)
		problem(w, 401, "Unauthorized")
		return
	}
	switch r.Method + " " + r.URL.Path {
	case "GET /api/pr":
		fmt.Fprint(w, `{"items":[{"id":7,"pr_id":2,"repo_id":186853002,"vc_id":1}],"next_cursor":null}`)
	case "GET /api/pr/7/gate":
		if f.gate == "" {
			problem(w, 404, "no such route")
			return
		}
		fmt.Fprint(w, f.gate)
	case "POST /api/pr/scan/sarif":
		w.WriteHeader(201)
		fmt.Fprintf(w, `{"scans":[%s],"results":3,"recorded":3,"suppressed_in_source":0,"skipped":0}`, scan21)
	case "POST /api/pr/scan/sarif/uploads":
		w.WriteHeader(201)
		fmt.Fprintf(w, `{"id":1,"status":"awaiting_upload","upload_url":"%s/s3/uploads/1?X-Amz-Signature=abc","upload_headers":{"Content-Type":"application/gzip"},"expires_at":"2026-11-22T09:15:00.000Z"}`, f.srv.URL)
	case "GET /api/pr/scan/sarif/uploads/1":
		f.mu.Lock()
		status := f.upload
		f.mu.Unlock()
		if status == "failed" {
			fmt.Fprint(w, `{"id":1,"status":"failed","errors":[{"type":"about:blank","title":"Unprocessable Entity","status":422,"detail":"the SARIF log is not SARIF 2.1.0 as scangate reads it","errors":[{"pointer":"/runs/0/results/7/locations","detail":"must be an array"}]}],"scan_ids":[],"results":0,"recorded":0}`)
			return
		}
		fmt.Fprint(w, `{"id":1,"status":"complete","errors":[],"scan_ids":[21],"results":3,"recorded":3,"suppressed_in_source":0,"skipped":0}`)
	case "GET /api/pr/scan/21":
		fmt.Fprint(w, scan21)
	case "GET /api/pr/scan/21/findings":
		fmt.Fprint(w, `{"items":[{"id":1,"name":"CVE-2021-44228","aliases":[],"rule":"r","path":"go.sum","line":4,"suppressed":false,"suppressed_by":[],"baseline_state":"new"}],"next_cursor":null}`)
	default:
		problem(w, 404, "no such route")
	}
}

func (f *fakeAPI) sent() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.requests...)
}

// cli runs the command in process with env as its whole environment.
type cli struct {
	env      map[string]string
	stdin    string
	terminal bool
	password string // what is typed at a terminal's password prompt (terminal)
}

func (c cli) run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	a := &app{stdin: strings.NewReader(c.stdin), stdout: &stdout, stderr: &stderr, getenv: func(k string) string { return c.env[k] },
		readFile: os.ReadFile, terminal: c.terminal, stdinTerminal: c.terminal,
		readPassword: func() ([]byte, error) { return []byte(c.password), nil }}
	code := a.run(context.Background(), args)
	if strings.Contains(stdout.String()+stderr.String(), testToken) {
		t.Errorf("scangate %v printed the token", args)
	}
	return code, stdout.String(), stderr.String()
}

// github is the environment of a GitHub Actions job on the recorded
// pull_request event, with scangate's URL and token.
func github(t *testing.T, api string) cli {
	env := cienvtest.GitHubPullRequest(t, t.TempDir())
	env["SCANGATE_URL"], env["SCANGATE_TOKEN"] = api, testToken
	return cli{env: env}
}

func TestGateBlocked(t *testing.T) {
	f := newFakeAPI(t)
	code, out, errOut := github(t, f.url()).run(t, "gate")
	if code != exitBlocked || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{
		"Codertocat/Hello-World#2: BLOCKED (gate of pull request 7, head ec26c3e57ca3, evaluated 2026-11-22T09:00:01.000Z)",
		"TYPE           CATEGORY  SCAN  STATUS     SECRETS  VULNERABILITIES  BLOCKS",
		"SECRET         gitleaks  21    completed  3        0                yes",
		"VULNERABILITY  semgrep   22    completed  0        0                no",
		"blocked by:\n  SECRET gitleaks: scan 21: 3 unsuppressed findings at or above the policy's severity (0 new)\n" +
			"  VULNERABILITY trivy: no scan, and the policy requires one\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the gate lacks %q:\n%s", want, out)
		}
	}
	if got := f.sent(); len(got) != 2 || got[0] != "GET /api/pr?number=2&repo_id=186853002&vc_id=1" || got[1] != "GET /api/pr/7/gate" {
		t.Errorf("requests %v", got)
	}
	// --json: the service's body as it is.
	code, out, _ = github(t, f.url()).run(t, "gate", "--json")
	if code != exitBlocked || out != blockedGate+"\n" {
		t.Errorf("--json: exit %d\n%s", code, out)
	}
}

func TestGateNotBlocked(t *testing.T) {
	f := newFakeAPI(t)
	f.gate = openGate
	code, out, _ := github(t, f.url()).run(t, "gate", "--pr-id", "7")
	if code != exitOK || !strings.Contains(out, "Codertocat/Hello-World#2: not blocked (gate of pull request 7, evaluated") || strings.Contains(out, "blocked by") {
		t.Errorf("exit %d:\n%s", code, out)
	}
	if got := f.sent(); len(got) != 1 {
		t.Errorf("--pr-id still looked the PR up: %v", got)
	}
}

// Every failure is exit 2 with the service's words, and never the token.
func TestGateErrors(t *testing.T) {
	f := newFakeAPI(t)
	f.gate = ""
	c := github(t, f.url())
	code, out, errOut := c.run(t, "gate")
	if code != exitError || out != "" || errOut != "scangate gate: GET /pr/7/gate: 404 Not Found: no such route\n" {
		t.Errorf("no gate route: exit %d %q %q", code, out, errOut)
	}
	c.env["SCANGATE_TOKEN"] = "sgt_1_wrong"
	code, _, errOut = c.run(t, "gate")
	if code != exitError || !strings.Contains(errOut, "401 Unauthorized") || strings.Contains(errOut, "sgt_1_wrong") {
		t.Errorf("bad token: exit %d %q", code, errOut)
	}
	c.env["SCANGATE_URL"] = "http://127.0.0.1:1/api"
	code, _, errOut = c.run(t, "gate")
	if code != exitError || !strings.Contains(errOut, "the service at http://127.0.0.1:1/api did not answer") {
		t.Errorf("service down: exit %d %q", code, errOut)
	}
	delete(c.env, "SCANGATE_TOKEN")
	code, _, errOut = c.run(t, "gate")
	if code != exitError || !strings.Contains(errOut, "no token: set SCANGATE_TOKEN") {
		t.Errorf("no token: exit %d %q", code, errOut)
	}
}

// Outside a pull request, the commands that need one say so (exit 2).
func TestOutsidePR(t *testing.T) {
	f := newFakeAPI(t)
	c := github(t, f.url())
	if err := os.WriteFile(c.env["GITHUB_EVENT_PATH"], []byte(`{"ref":"refs/heads/main"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	c.env["GITHUB_EVENT_NAME"], c.env["GITHUB_REF"] = "push", "refs/heads/main"
	sarif := filepath.Join(t.TempDir(), "x.sarif")
	if err := os.WriteFile(sarif, []byte(`{}`), 0o600); err != nil {
		t.Fatal(err)
	}
	// A push to a branch has no pull request to gate or list.
	for _, args := range [][]string{{"gate"}, {"findings"}} {
		code, out, errOut := c.run(t, args...)
		want := `not in a pull request: a push to branch "main" (scangate upload records it as a branch analysis); pass --pr N for a pull request`
		if code != exitError || out != "" || !strings.Contains(errOut, want) {
			t.Errorf("%v: exit %d %q %q", args, code, out, errOut)
		}
	}
	// A push of a tag is neither a pull request nor a branch.
	c.env["GITHUB_REF"] = "refs/tags/v1"
	for _, args := range [][]string{{"gate"}, {"findings"}, {"upload", sarif}} {
		code, out, errOut := c.run(t, args...)
		want := `GitHub Actions event "push" has no pull_request in its payload`
		if code != exitError || out != "" || !strings.Contains(errOut, want) {
			t.Errorf("%v: exit %d %q %q", args, code, out, errOut)
		}
	}
	noCI := cli{env: map[string]string{"SCANGATE_URL": f.url(), "SCANGATE_TOKEN": testToken}}
	if code, _, errOut := noCI.run(t, "gate", "--repo-id", "5"); code != exitError || !strings.Contains(errOut, "not in a pull request: no CI recognised") {
		t.Errorf("no CI: exit %d %q", code, errOut)
	}
	if got := f.sent(); len(got) != 0 {
		t.Errorf("requests sent outside a PR: %v", got)
	}
}

// On a push to a branch, upload records a branch analysis (branch and the
// commit pushed, no pull request and no base) and exits 0 without asking
// for a gate; on GitLab, a branch pipeline does the same.
func TestUploadPush(t *testing.T) {
	sha := strings.Repeat("5e", 20)
	for name, env := range map[string]map[string]string{
		"github": cienvtest.GitHubPush(t, t.TempDir(), "main", sha),
		"gitlab": cienvtest.GitLabBranch("main", sha),
	} {
		f := newFakeAPI(t)
		env["SCANGATE_URL"], env["SCANGATE_TOKEN"] = f.url(), testToken
		code, out, errOut := cli{env: env}.run(t, "upload", gzipSized(t, 100))
		if code != exitOK || errOut != "" || !strings.Contains(out, ": branch main analysed at 5e5e5e5e5e5e (1 log); the baseline of its pull requests, no gate") {
			t.Errorf("%s: exit %d\n%s%s", name, code, out, errOut)
		}
		var body map[string]any
		if err := json.Unmarshal(f.bodies["POST /api/pr/scan/sarif"], &body); err != nil {
			t.Fatal(err)
		}
		_, hasPR := body["pr"]
		_, hasBase := body["base_ref"]
		if body["branch"] != "main" || hasPR || hasBase || body["commit_sha"] != sha {
			t.Errorf("%s: the envelope %v", name, body)
		}
		if got := f.sent(); len(got) != 1 {
			t.Errorf("%s: requests %v, want the upload alone", name, got)
		}
		// --json: the uploads and the branch.
		code, out, _ = cli{env: env}.run(t, "upload", "--json", gzipSized(t, 100))
		if code != exitOK || !strings.HasPrefix(out, `{"branch":"main","uploads":[{"file":`) {
			t.Errorf("%s --json: exit %d %s", name, code, out)
		}
	}
	// --branch records a branch analysis from any job.
	f := newFakeAPI(t)
	c := github(t, f.url())
	if code, out, errOut := c.run(t, "upload", "--branch", "refs/heads/release", gzipSized(t, 100)); code != exitOK {
		t.Errorf("--branch: exit %d %s%s", code, out, errOut)
	}
	var body map[string]any
	_ = json.Unmarshal(f.bodies["POST /api/pr/scan/sarif"], &body)
	if _, hasPR := body["pr"]; body["branch"] != "refs/heads/release" || hasPR {
		t.Errorf("--branch: the envelope %v", body)
	}
}

// gzipSized writes a file that is gzip already (sent as it is) of n bytes.
func gzipSized(t *testing.T, n int) string {
	b := bytes.Repeat([]byte{'x'}, n)
	b[0], b[1] = 0x1f, 0x8b
	path := filepath.Join(t.TempDir(), fmt.Sprintf("log-%d.sarif.gz", n))
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// The largest log whose body fits the 6 MB limit goes inline, one byte
// more through the presigned upload; then the gate decides the exit.
func TestUploadChoosesBySize(t *testing.T) {
	c := github(t, "")
	e, err := (&app{getenv: func(k string) string { return c.env[k] }, readFile: os.ReadFile}).resolve(target{})
	if err != nil {
		t.Fatal(err)
	}
	envJSON, _ := json.Marshal(e.envelope)
	largest := 0
	for n := (client.MaxInlineBody-len(envJSON))*3/4 - 100; client.InlineSize(len(envJSON), n) <= client.MaxInlineBody; n++ {
		largest = n
	}
	f := newFakeAPI(t)
	c.env["SCANGATE_URL"] = f.url()
	code, out, errOut := c.run(t, "upload", gzipSized(t, largest))
	inline := f.bodies["POST /api/pr/scan/sarif"]
	if code != exitBlocked || len(inline) > client.MaxInlineBody || len(inline) < client.MaxInlineBody-3 || f.put != nil {
		t.Fatalf("largest inline: exit %d, inline body %d bytes, PUT %d bytes; stderr %s", code, len(inline), len(f.put), errOut)
	}
	if !strings.Contains(out, "recorded (inline): 3 results: 3 recorded") || !strings.Contains(out, "Codertocat/Hello-World#2: BLOCKED") {
		t.Errorf("output:\n%s", out)
	}
	var env map[string]any
	if err := json.Unmarshal(inline, &env); err != nil || env["repo_id"] != float64(186853002) || env["pr"].(map[string]any)["pr_id"] != float64(2) {
		t.Errorf("inline envelope %v %v", env["repo_id"], err)
	}
	// The pull request's head, not GITHUB_SHA (the merge commit); no category unless asked.
	if env["commit_sha"] != cienvtest.GitHubHeadSHA || env["ref"] != "refs/pull/2/merge" || env["category"] != nil {
		t.Errorf("inline envelope: commit_sha %v, ref %v, category %v", env["commit_sha"], env["ref"], env["category"])
	}
	f.gate = openGate
	code, out, _ = c.run(t, "upload", gzipSized(t, largest+1))
	if code != exitOK || len(f.put) != largest+1 || !strings.Contains(out, "recorded (presigned upload 1)") || !strings.Contains(out, "scan 21 SECRET gitleaks") {
		t.Errorf("one byte more: exit %d, PUT %d bytes:\n%s", code, len(f.put), out)
	}
	if f.bodies["POST /api/pr/scan/sarif/uploads"] == nil || !bytes.Equal(f.bodies["POST /api/pr/scan/sarif/uploads"], envJSON) {
		t.Errorf("the upload's envelope %s, want %s", f.bodies["POST /api/pr/scan/sarif/uploads"], envJSON)
	}
}

// A progress bar on a terminal, none otherwise; --json gives one document.
func TestUploadProgress(t *testing.T) {
	f := newFakeAPI(t)
	log := gzipSized(t, 4096)
	c := github(t, f.url())
	code, _, errOut := c.run(t, "upload", "--presigned", "--no-gate", log)
	if code != exitOK || errOut != "" {
		t.Errorf("not a terminal: exit %d, stderr %q", code, errOut)
	}
	c.terminal = true
	code, out, errOut := c.run(t, "upload", "--presigned", "--no-gate", "--json", log)
	if code != exitOK || !strings.Contains(errOut, "uploading "+log) || !strings.Contains(errOut, "100%") {
		t.Errorf("a terminal: exit %d, stderr %q", code, errOut)
	}
	var doc struct {
		Uploads []struct {
			File, Via string
			UploadID  int64 `json:"upload_id"`
			Result    struct {
				Status  string  `json:"status"`
				ScanIDs []int64 `json:"scan_ids"`
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Uploads) != 1 || doc.Uploads[0].Via != "presigned" ||
		doc.Uploads[0].UploadID != 1 || doc.Uploads[0].Result.Status != "complete" || strings.Count(out, "\n") != 1 {
		t.Errorf("--json: %v\n%s", err, out)
	}
}

// A failed upload's problems are printed as the service gives them.
func TestUploadFailed(t *testing.T) {
	f := newFakeAPI(t)
	f.upload = "failed"
	code, _, errOut := github(t, f.url()).run(t, "upload", "--presigned", gzipSized(t, 100))
	want := "upload 1 failed:\n422 Unprocessable Entity: the SARIF log is not SARIF 2.1.0 as scangate reads it\n  /runs/0/results/7/locations: must be an array\n"
	if code != exitError || !strings.Contains(errOut, want) {
		t.Errorf("exit %d:\n%s", code, errOut)
	}
}

// token create writes the token, and nothing else, on standard output;
// --token-stdin reads the caller's token from standard input.
func TestTokenCreate(t *testing.T) {
	var got TokenSeen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = TokenSeen{r.Header.Get("Authorization"), string(b)}
		w.WriteHeader(201)
		fmt.Fprint(w, `{"id":3,"name":"ci","scope":"write","created_at":"2026-11-22T09:00:00.000Z","expires_at":"2026-12-22T09:00:00.000Z","last_used_at":null,"access_token":"sgt_1_new","token_type":"Bearer"}`)
	}))
	defer srv.Close()
	c := cli{env: map[string]string{"SCANGATE_URL": srv.URL + "/api"}, stdin: testToken + "\n"}
	code, out, errOut := c.run(t, "token", "create", "--token-stdin", "--name", "ci", "--days", "30")
	if code != exitOK || out != "sgt_1_new\n" || !strings.Contains(errOut, `token 3 "ci" (scope write)`) {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if got.auth != "Bearer "+testToken || got.body != `{"name":"ci","expires_in_days":30}` {
		t.Errorf("sent %+v", got)
	}
	// --repo scopes it to repositories.
	code, _, errOut = c.run(t, "token", "create", "--token-stdin", "--name", "ci", "--scope", "scan", "--repo", "10/100", "--repo", "11/5")
	if want := `{"name":"ci","scope":"scan","repos":[{"vc_id":10,"repo_id":100},{"vc_id":11,"repo_id":5}]}`; code != exitOK || got.body != want {
		t.Errorf("exit %d %q: sent %s, want %s", code, errOut, got.body, want)
	}
	for _, bad := range []string{"100", "10/", "a/b", "0/5", "10/-1", "10/100/1"} {
		got = TokenSeen{}
		if code, _, errOut := c.run(t, "token", "create", "--token-stdin", "--name", "ci", "--repo", bad); code == exitOK || got.body != "" {
			t.Errorf("--repo %s: exit %d %q, sent %q", bad, code, errOut, got.body)
		}
	}
}

// TokenSeen is what the service was sent.
type TokenSeen struct{ auth, body string }

// allowlist create sends what its flags say; update only the flags given.
func TestAllowlistBodies(t *testing.T) {
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies = append(bodies, r.Method+" "+r.URL.Path+" "+string(b))
		w.WriteHeader(201)
		fmt.Fprint(w, `{"id":4,"created_by":1,"updated_by":1,"created_on":"2026-11-22T09:00:00.000Z","name":"CVE-2021-44228","secrets_updated":0,"vulnerabilities_updated":2,"comments":[],"type":"VULNERABILITY"}`)
	}))
	defer srv.Close()
	c := cli{env: map[string]string{"SCANGATE_URL": srv.URL + "/api", "SCANGATE_TOKEN": testToken}}
	code, out, errOut := c.run(t, "allowlist", "create", "--type", "VULNERABILITY", "--name", "CVE-2021-44228", "--repo", "101", "--repo", "102",
		"--path", "test/**", "--reason", "accepted_risk", "--expires", "2030-01-02T03:04:05Z", "--comment", "not reachable")
	if code != exitOK || out != "allowlist 4 created (VULNERABILITY CVE-2021-44228): 0 secrets and 2 vulnerabilities judged anew\n" {
		t.Errorf("create: exit %d %q %q", code, out, errOut)
	}
	code, _, errOut = c.run(t, "allowlist", "update", "4", "--active=false", "--expires", "never", "--repo", "103")
	if code != exitOK {
		t.Errorf("update: exit %d %q", code, errOut)
	}
	want := []string{
		`POST /api/whitelist {"comment":"not reachable","expires_at":"2030-01-02T03:04:05Z","name":"CVE-2021-44228","paths":["test/**"],"reason":"accepted_risk","repos":[101,102],"type":"VULNERABILITY"}`,
		`PUT /api/whitelist/4 {"active":false,"expires_at":"never","repos":[103]}`,
	}
	if fmt.Sprint(bodies) != fmt.Sprint(want) {
		t.Errorf("sent\n%s\nwant\n%s", strings.Join(bodies, "\n"), strings.Join(want, "\n"))
	}
	for _, args := range [][]string{
		{"allowlist", "create", "--name", "x"}, {"allowlist", "update", "--reason", "wont_fix"}, {"allowlist", "update", "4"},
		{"allowlist", "create", "--type", "SECRET", "--name", "x", "--expires", "soon"}, {"allowlist", "delete"},
	} {
		if code, _, errOut := c.run(t, args...); code != exitError || !strings.Contains(errOut, "Run scangate ") {
			t.Errorf("%v: exit %d %q", args, code, errOut)
		}
	}
	if len(bodies) != 2 {
		t.Errorf("a usage error sent a request: %v", bodies[2:])
	}
}

// --expires takes a time from now.
func TestExpiry(t *testing.T) {
	now, _ := time.Parse(time.RFC3339, "2026-11-22T09:00:00Z")
	for in, want := range map[string]string{"30d": "2026-12-22T09:00:00Z", "12h": "2026-11-22T21:00:00Z", "2027-01-01T00:00:00Z": "2027-01-01T00:00:00Z"} {
		if got, err := expiry(in, false, now); err != nil || got != want {
			t.Errorf("%s: %s %v, want %s", in, got, err, want)
		}
	}
	if _, err := expiry("never", false, now); err == nil {
		t.Error("never on create: no error")
	}
}

// findings lists the newest scan of each (type, category) of the PR.
func TestFindingsNewest(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/pr/7/scans":
			fmt.Fprint(w, `{"items":[`+
				`{"id":30,"pr_id":7,"scan_type":"SECRET","other_details":{"category":"gitleaks"}},`+
				`{"id":29,"pr_id":7,"scan_type":"VULNERABILITY","other_details":{"category":"semgrep"}},`+
				`{"id":28,"pr_id":7,"scan_type":"SECRET","other_details":{"category":"gitleaks"}},`+
				`{"id":27,"pr_id":7,"scan_type":"VULNERABILITY","other_details":{"category":"trivy"}}],"next_cursor":null}`)
		case "/api/pr/scan/30/findings", "/api/pr/scan/29/findings", "/api/pr/scan/27/findings":
			if r.URL.Query().Get("suppressed") != "false" {
				t.Errorf("%s without suppressed=false", r.URL)
			}
			fmt.Fprint(w, `{"items":[{"id":1,"name":"CVE-2021-44228","aliases":[],"rule":"r","path":"go.sum","line":4,"suppressed":false,"suppressed_by":[]}],"next_cursor":null}`)
		default:
			t.Errorf("request %s", r.URL)
			problem(w, 404, "no")
		}
	}))
	defer srv.Close()
	c := cli{env: map[string]string{"SCANGATE_URL": srv.URL + "/api", "SCANGATE_TOKEN": testToken}}
	code, out, errOut := c.run(t, "findings", "--pr-id", "7")
	if code != exitOK || strings.Count(out, "CVE-2021-44228") != 3 || !strings.Contains(out, "3 findings in 3 scans") ||
		!strings.Contains(out, "29    VULNERABILITY  semgrep   -         -         CVE-2021-44228  r     go.sum:4  -") {
		t.Errorf("exit %d:\n%s%s", code, out, errOut)
	}
}

// Every command has --help (exit 0, on standard output); a command line
// that cannot run is exit 2.
func TestHelpAndUsage(t *testing.T) {
	c := cli{env: map[string]string{}}
	for _, args := range [][]string{
		{"--help"}, {"help"}, {"upload", "--help"}, {"gate", "-h"}, {"findings", "--help"}, {"allowlist", "--help"},
		{"allowlist", "create", "--help"}, {"allowlist", "update", "--help"}, {"allowlist", "list", "--help"},
		{"token", "--help"}, {"token", "create", "--help"}, {"version", "--help"}, {"login", "--help"},
	} {
		code, out, errOut := c.run(t, args...)
		if code != exitOK || !strings.Contains(out, "usage: scangate") || errOut != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errOut)
		}
	}
	for _, args := range [][]string{{}, {"frobnicate"}, {"upload"}, {"gate", "--bogus"}, {"gate", "extra"}, {"token"}, {"token", "create"}, {"login"}} {
		if code, out, _ := c.run(t, args...); code != exitError || out != "" {
			t.Errorf("%v: exit %d, stdout %q", args, code, out)
		}
	}
	// Flags may follow the arguments; all after "--" are arguments.
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	n := fs.Int("n", 0, "")
	args, err := (&app{stdout: io.Discard}).parse(fs, []string{"a", "--n", "3", "b", "--", "--c", "d"}, -1)
	if err != nil || *n != 3 || fmt.Sprint(args) != "[a b --c d]" {
		t.Errorf("parse: %v %d %v", args, *n, err)
	}
}

func TestVersion(t *testing.T) {
	version, commit, date = "v1.2.3", "4b22d9e0", "2026-11-22T09:00:00Z"
	defer func() { version, commit, date = "", "", "" }()
	code, out, _ := cli{}.run(t, "version")
	if code != exitOK || !strings.HasPrefix(out, "scangate v1.2.3\ncommit 4b22d9e0\ndate 2026-11-22T09:00:00Z\nbuilt with go") {
		t.Errorf("exit %d:\n%s", code, out)
	}
	code, out, _ = cli{}.run(t, "version", "--json")
	var b build
	if code != exitOK || json.Unmarshal([]byte(out), &b) != nil || b.Version != "v1.2.3" || b.Commit != "4b22d9e0" {
		t.Errorf("--json: exit %d %s", code, out)
	}
}

// GitLab CI's merge request: vc_id 2 by default, its project and IID.
func TestGitLabEnvelope(t *testing.T) {
	env := cienvtest.GitLabMergeRequest(true)
	a := &app{getenv: func(k string) string { return env[k] }, readFile: os.ReadFile}
	p, err := a.resolve(target{})
	want := client.Envelope{VcType: "gitlab", VcID: 2, VcName: "gitlab.example.com", RepoID: cienvtest.GitLabProjectID, RepoName: cienvtest.GitLabProject,
		WebhookID: 1, PR: client.PRRef{Number: cienvtest.GitLabMR, Name: cienvtest.GitLabMRName, Link: cienvtest.GitLabMRLink},
		CommitSHA: cienvtest.GitLabHeadSHA, Ref: "refs/merge-requests/17/head", BaseRef: cienvtest.GitLabTarget, BaseSHA: cienvtest.GitLabDiffBase}
	if err != nil || p.envelope != want {
		t.Errorf("got  %+v %v\nwant %+v", p.envelope, err, want)
	}
	// scangate's variables, then flags, override the CI's.
	env2 := maps.Clone(env)
	env2["SCANGATE_VC_ID"], env2["SCANGATE_WEBHOOK_ID"], env2["SCANGATE_VC_NAME"] = "9", "77", "corp-gitlab"
	a.getenv = func(k string) string { return env2[k] }
	p, err = a.resolve(target{repoID: 5, pr: 6, prName: strings.Repeat("é", 300)})
	e := p.envelope
	if err != nil || e.VcID != 9 || e.WebhookID != 77 || e.VcName != "corp-gitlab" || e.RepoID != 5 || e.PR.Number != 6 || len([]rune(e.PR.Name)) != 256 {
		t.Errorf("overrides: %+v %v", e, err)
	}
	env2["SCANGATE_VC_ID"] = "one"
	if _, err := a.resolve(target{}); err == nil {
		t.Error("SCANGATE_VC_ID=one: no error")
	}
}

// --category names the scans of one log; flags override the commit.
func TestUploadCategory(t *testing.T) {
	f := newFakeAPI(t)
	c := github(t, f.url())
	log := gzipSized(t, 100)
	code, _, _ := c.run(t, "upload", "--no-gate", "--category", "gitleaks/pr", "--commit-sha", strings.Repeat("ab", 20), log)
	var env map[string]any
	if err := json.Unmarshal(f.bodies["POST /api/pr/scan/sarif"], &env); code != exitOK || err != nil ||
		env["category"] != "gitleaks/pr" || env["commit_sha"] != strings.Repeat("ab", 20) {
		t.Errorf("exit %d, envelope %v %v", code, env, err)
	}
	if code, _, errOut := c.run(t, "upload", "--category", "x", log, log); code != exitError || !strings.Contains(errOut, "--category names the scans of one log") {
		t.Errorf("--category with two files: exit %d %q", code, errOut)
	}
}

// gitRepo makes a repository whose main has commit base, then head on a
// branch from it, then tip on main: it gives the three commits.
func gitRepo(t *testing.T) (dir, base, head, tip string) {
	t.Helper()
	dir = t.TempDir()
	run := func(args ...string) string {
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	run("init", "-q", "-b", "main")
	commit := func(file, text string) string {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		run("add", file)
		run("commit", "-q", "-m", file)
		return run("rev-parse", "HEAD")
	}
	base = commit("a.txt", "base\n")
	run("checkout", "-q", "-b", "feature")
	head = commit("b.txt", "head\n")
	run("checkout", "-q", "main")
	tip = commit("c.txt", "tip\n")
	run("checkout", "-q", "feature")
	return dir, base, head, tip
}

// The gate of a pull request on base main with one new finding.
const newGate = `{"pr_id":7,"blocked":true,"head_sha":null,"base_ref":"main","reasons":[{"kind":"findings","scan_type":"SECRET","category":"gitleaks","scan_id":21,"count":1,"new_count":1}],` +
	`"categories":[{"scan_type":"SECRET","category":"gitleaks","scan_id":21,"status":"completed","block_status":true,"secret_count":3,"vulnerability_count":0,` +
	`"created_at":"2026-11-22T09:00:00.120Z","baseline":{"scan_id":20,"commit_sha":"` + "f95f852bd8fca8fcc58a9a2d6c842781e32a215e" + `","match":"exact"},"new_count":1,"unchanged_count":2,"absent_count":1}],` +
	`"policy":{"block_severity":{"SECRET":"none","VULNERABILITY":"none"},"required":[],"block_on_missing":true,"block_on":"new"},"evaluated_at":"2026-11-22T09:00:01.000Z"}`

// On a pull request, upload sends its base: the merge base of the head and
// the base branch's tip when the checkout has both (git merge-base), else
// the payload's pull_request.base.sha, or --base-sha as given. It prints
// the findings the pull request adds before its gate.
func TestUploadBase(t *testing.T) {
	repo, base, head, tip := gitRepo(t)
	payload := fmt.Sprintf(`{"pull_request":{"number":2,"title":"t","html_url":"https://github.com/o/r/pull/2","head":{"sha":%q},"base":{"ref":"main","sha":%q}}}`, head, tip)
	sent := func(c cli, args ...string) (map[string]any, string) {
		t.Helper()
		f := newFakeAPI(t)
		f.gate = newGate
		c.env["SCANGATE_URL"] = f.url()
		if err := os.WriteFile(c.env["GITHUB_EVENT_PATH"], []byte(payload), 0o600); err != nil {
			t.Fatal(err)
		}
		code, out, errOut := c.run(t, append([]string{"upload"}, append(args, gzipSized(t, 100))...)...)
		if code != exitBlocked {
			t.Fatalf("%v: exit %d %s%s", args, code, out, errOut)
		}
		var body map[string]any
		if err := json.Unmarshal(f.bodies["POST /api/pr/scan/sarif"], &body); err != nil {
			t.Fatal(err)
		}
		if got := f.sent(); got[len(got)-2] != "GET /api/pr/7/gate" || got[len(got)-1] != "GET /api/pr/scan/21/findings?baseline_state=new&limit=100&suppressed=false" {
			t.Errorf("%v: requests %v", args, got)
		}
		return body, out
	}
	body, out := sent(github(t, ""), "--checkout", repo)
	if body["base_ref"] != "main" || body["base_sha"] != base {
		t.Errorf("the merge base: %v %v, want main %s", body["base_ref"], body["base_sha"], base)
	}
	if !strings.Contains(out, "base main ("+base[:12]+", the merge base of the head and main in the checkout)") {
		t.Errorf("the base is not said:\n%s", out)
	}
	// The new findings come first, then the gate, which says the baseline.
	newAt, gateAt := strings.Index(out, "new in this pull request (not on main): 1 finding\n"), strings.Index(out, "Codertocat/Hello-World#2: BLOCKED (gate of pull request 7, base main")
	if newAt < 0 || gateAt < newAt || !strings.Contains(out, "SECRET  gitleaks  -         CVE-2021-44228  r     go.sum:4") ||
		!strings.Contains(out, "3        0                yes     1    2          1      scan 20 at f95f852bd8fc (exact)") ||
		!strings.Contains(out, "scan 21: 1 unsuppressed finding at or above the policy's severity (1 new)") {
		t.Errorf("the new findings before the gate:\n%s", out)
	}
	// A checkout without the commits (not a repository: a shallow clone
	// lacks them alike): the payload's base commit.
	body, _ = sent(github(t, ""), "--checkout", t.TempDir())
	if body["base_sha"] != tip {
		t.Errorf("without the commits: base_sha %v, want the payload's %s", body["base_sha"], tip)
	}
	body, _ = sent(github(t, ""), "--checkout", repo, "--base-sha", strings.Repeat("c", 40), "--base-ref", "develop")
	if body["base_sha"] != strings.Repeat("c", 40) || body["base_ref"] != "develop" {
		t.Errorf("--base-sha: %v %v", body["base_ref"], body["base_sha"])
	}
	// --json: the new findings beside the uploads and the gate.
	f := newFakeAPI(t)
	f.gate = newGate
	c := github(t, f.url())
	_ = os.WriteFile(c.env["GITHUB_EVENT_PATH"], []byte(payload), 0o600)
	code, out, _ := c.run(t, "upload", "--json", gzipSized(t, 100))
	var doc struct {
		NewFindings []struct {
			ScanID  int64 `json:"scan_id"`
			Finding struct{ Name string }
		} `json:"new_findings"`
	}
	if code != exitBlocked || json.Unmarshal([]byte(out), &doc) != nil || len(doc.NewFindings) != 1 || doc.NewFindings[0].ScanID != 21 || doc.NewFindings[0].Finding.Name != "CVE-2021-44228" {
		t.Errorf("--json: exit %d %s", code, out)
	}
}

// findings --baseline-state asks the service for the findings of that
// state; the new ones are listed first; a state that is neither is a
// usage error.
func TestFindingsBaselineState(t *testing.T) {
	var queries []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/pr/7/scans":
			fmt.Fprint(w, `{"items":[{"id":30,"pr_id":7,"scan_type":"SECRET","other_details":{"category":"gitleaks"}}],"next_cursor":null}`)
		case "/api/pr/scan/30/findings":
			queries = append(queries, r.URL.RawQuery)
			fmt.Fprint(w, `{"items":[{"id":1,"name":"old","rule":"r","path":"a","line":4,"suppressed":false,"suppressed_by":[],"baseline_state":"unchanged"},`+
				`{"id":2,"name":"added","rule":"r","path":"b","line":9,"suppressed":false,"suppressed_by":[],"baseline_state":"new"}],"next_cursor":null}`)
		default:
			problem(w, 404, "no")
		}
	}))
	defer srv.Close()
	c := cli{env: map[string]string{"SCANGATE_URL": srv.URL + "/api", "SCANGATE_TOKEN": testToken}}
	code, out, errOut := c.run(t, "findings", "--pr-id", "7", "--baseline-state", "new")
	if code != exitOK || len(queries) != 1 || queries[0] != "baseline_state=new&limit=100&suppressed=false" {
		t.Errorf("--baseline-state new: exit %d %v %s", code, queries, errOut)
	}
	if added, old := strings.Index(out, "new        -         added"), strings.Index(out, "unchanged  -         old"); added < 0 || old < added {
		t.Errorf("the new findings are not first:\n%s", out)
	}
	if code, out, errOut := c.run(t, "findings", "--pr-id", "7", "--baseline-state", "absent"); code != exitError || out != "" || !strings.Contains(errOut, "it is new or unchanged") {
		t.Errorf("--baseline-state absent: exit %d %q %q", code, out, errOut)
	}
}
