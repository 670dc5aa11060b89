package localstack_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/scangate/scangate/internal/ddbtest"
	"github.com/scangate/scangate/internal/events/commitstatus"
	"github.com/scangate/scangate/internal/events/commitstatus/githubtest"
	"github.com/scangate/scangate/internal/events/commitstatus/gitlabtest"
	"github.com/scangate/scangate/internal/scangate"
)

// gateSteps drives one pull request's gate (PR 7 of repository 5 on
// vc_id, head commit sha) through four gates, each delivered before the
// next: 60 blocking secrets (10 of them one name), then 50 (that name
// allowlisted), then 53 (a semgrep scan adds 3 vulnerabilities), then
// none (the policy blocks only criticals). after runs after each gate is
// delivered.
func gateSteps(t *testing.T, e *eventStack, vcType string, vcID int64, sha string, after func(step int)) {
	t.Helper()
	scan := func(typ, category string, findings []map[string]any) {
		body, _ := json.Marshal(map[string]any{"scan_type": typ, "status": "completed", "vc_type": vcType, "vc_id": vcID, "vc_name": "v",
			"repo_id": 5, "repo_name": "acme/api", "webhook_id": 1, "pr": map[string]any{"pr_id": 7, "pr_name": "n", "pr_link": "l"},
			"commit_sha": sha, "category": category, "findings": findings})
		e.call(t, 201, "POST", "/pr/scan", string(body))
	}
	var secrets []map[string]any
	for i := range 60 {
		name := fmt.Sprintf("sha256:%02d", i)
		if i < 10 {
			name = "sha256:fixture"
		}
		secrets = append(secrets, map[string]any{"name": name, "rule": "aws-access-key", "path": fmt.Sprintf("src/f%02d.go", i), "line": i + 1})
	}
	steps := []func(){
		func() { scan("SECRET", "gitleaks", secrets) },
		func() {
			e.call(t, 201, "POST", "/whitelist", `{"type":"SECRET","name":"sha256:fixture","global_":true,"reason":"used_in_tests"}`)
		},
		func() {
			scan("VULNERABILITY", "semgrep", []map[string]any{
				{"name": "python.sqli", "rule": "sqli", "path": "app.py", "line": 3, "severity": "high"},
				{"name": "python.xss", "rule": "xss", "path": "app.py", "line": 9, "severity": "medium"},
				{"name": "python.eval", "rule": "eval", "path": "lib.py", "line": 1, "severity": "high"},
			})
		},
		func() {
			e.call(t, 200, "PUT", "/gate/policy", `{"block_severity":{"SECRET":"critical","VULNERABILITY":"critical"}}`)
		},
	}
	for i, step := range steps {
		step()
		drain(t, e.stack, e.clock)
		after(i + 1)
	}
}

// gitHubApp starts the GitHub stand-in (or skips the test without its
// description) knowing repository 5 as acme/api and App 31's
// installation 4001, and returns it with the App's private key (PEM).
func gitHubApp(t *testing.T) (*githubtest.Server, string) {
	t.Helper()
	gh := gitHub(t, "ghp_unused")
	gh.AddRepo(5, "acme", "api")
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	gh.AddApp(31, 4001, &k.PublicKey, time.Hour)
	return gh, string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}))
}

// putApp makes vc_id 1 post through the stand-in's App installation.
func putApp(t *testing.T, e *eventStack, gh *githubtest.Server, key string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"type": "github_app", "api_url": gh.URL, "app_id": 31, "installation_id": 4001, "private_key": key})
	e.call(t, 200, "PUT", "/integrations/1", string(body))
}

// described reads PR 1's gate and returns its description, as its
// status, check run and note show it, after checking that it counts
// blocking findings.
func described(t *testing.T, e *eventStack, blocking int64) string {
	t.Helper()
	var g commitstatus.Gate
	if err := json.Unmarshal([]byte(e.call(t, 200, "GET", "/pr/1/gate", "")), &g); err != nil {
		t.Fatal(err)
	}
	if n := commitstatus.Blocking(g); n != blocking || g.Blocked != (blocking > 0) {
		t.Fatalf("the gate counts %d blocking findings (blocked %v), want %d", n, g.Blocked, blocking)
	}
	_, desc := commitstatus.Describe(g)
	return desc
}

// copyLastGateChange records again the newest pr.gate_changed event's
// gate change (a new event id, the same sequence), as an interrupted
// re-evaluation can leave, and delivers it.
func copyLastGateChange(t *testing.T, e *eventStack) int64 {
	t.Helper()
	changes := ddbtest.GateChanges(t, e.env.DB, e.env.Table)
	var last scangate.GateChange
	for _, cs := range changes {
		last = cs[len(cs)-1]
	}
	if _, err := e.stack.Store.RecordEvent(context.Background(), scangate.NewEvent(scangate.EventGateChanged, e.clock.Now(), last)); err != nil {
		t.Fatal(err)
	}
	drain(t, e.stack, e.clock)
	return last.Sequence
}

// TestCheckRunAnnotatesTheBlockingFindings (issue 35): through a GitHub
// App, a gate that changes three times after its first gives one check
// run on the head commit, created once and updated on each change, every
// request and answer valid per @octokit/openapi; the blocking findings
// are annotated on their path and line at failure level, 50 a request,
// each once (GitHub appends a run's annotations: 63 in all, not one per
// gate; the allowlisted ones stay, as GitHub keeps them); the conclusion and summary follow the gate; a copy of the last
// gate change sends nothing more.
func TestCheckRunAnnotatesTheBlockingFindings(t *testing.T) {
	t.Parallel()
	gh, key := gitHubApp(t)
	e := startEvents(t)
	putApp(t, e, gh, key)
	sha := strings.Repeat("c", 40)
	type want struct {
		requests    string
		conclusion  string
		blocking    int64
		annotations int
	}
	wants := []want{
		{"create,update 1", "failure", 60, 60},
		{"create,update 1,update 1", "failure", 50, 60},
		{"create,update 1,update 1,update 1", "failure", 53, 63},
		{"create,update 1,update 1,update 1,update 1", "success", 0, 63},
	}
	gateSteps(t, e, "github", 1, sha, func(step int) {
		w := wants[step-1]
		runs := gh.CheckRuns()
		if got := strings.Join(gh.CheckRunRequests(), ","); got != w.requests || len(runs) != 1 {
			t.Fatalf("gate %d: check-run requests %s (runs %d), want %s (refused %+v)", step, got, len(runs), w.requests, gh.Refusals())
		}
		r, title := runs[0], described(t, e, w.blocking)
		if r.SHA != sha || r.Name != "scangate" || r.Conclusion != w.conclusion || r.Title != title || len(r.Annotations) != w.annotations {
			t.Errorf("gate %d: run %s %s %q with %d annotations, want %+v titled %q", step, r.Name, r.Conclusion, r.Title, len(r.Annotations), w, title)
		}
	})
	r := gh.CheckRuns()[0]
	seen := map[string]bool{}
	for _, a := range r.Annotations {
		where := fmt.Sprintf("%s:%d", a.Path, a.StartLine)
		if seen[where] || a.Level != "failure" || a.EndLine != a.StartLine {
			t.Errorf("annotation %+v (twice: %v)", a, seen[where])
		}
		seen[where] = true
	}
	if !seen["src/f00.go:1"] || !seen["src/f59.go:60"] || !seen["app.py:3"] || !seen["app.py:9"] || !seen["lib.py:1"] {
		t.Errorf("annotated %v: want every secret and vulnerability", seen)
	}
	if !strings.Contains(r.Summary, "| SECRET | gitleaks | 0 |") || !strings.Contains(r.Summary, "| VULNERABILITY | semgrep | 0 |") {
		t.Errorf("summary %q", r.Summary)
	}
	copyLastGateChange(t, e)
	if got := strings.Join(gh.CheckRunRequests(), ","); got != wants[3].requests {
		t.Errorf("after a copy of the last gate change: %s", got)
	}
	if ex := gh.Exchanges(); len(ex) != 1 {
		t.Errorf("token exchanges %+v, want one", ex)
	}
	if rf := gh.Refusals(); len(rf) != 0 {
		t.Errorf("refused %+v", rf)
	}
}

// TestMergeRequestNoteFollowsTheGate (issue 35): on GitLab, the same four
// gates give one note on the merge request, created by the first and
// edited by each of the three changes, beside each commit status; the
// note lists the blocking findings, new first, and ends clear; a copy of
// the last gate change sends no note again.
func TestMergeRequestNoteFollowsTheGate(t *testing.T) {
	t.Parallel()
	gl := gitlabtest.Start(t, "glpat-standin")
	gl.AddMergeRequest(5, 7)
	e := startEvents(t)
	e.call(t, 200, "PUT", "/integrations/2", `{"type":"gitlab","api_url":"`+gl.API()+`","token":"glpat-standin"}`)
	sha := strings.Repeat("d", 40)
	const notes = "/projects/5/merge_requests/7/notes"
	wants := []struct {
		state    string
		blocking int64
		rows     int
	}{
		{"failed", 60, 50},
		{"failed", 50, 50},
		{"failed", 53, 50},
		{"success", 0, 0},
	}
	var want []string
	noteRequests := func() []string {
		var out []string
		for _, r := range gl.Requests() {
			if strings.Contains(r, "/notes") {
				out = append(out, r)
			}
		}
		return out
	}
	gateSteps(t, e, "gitlab", 2, sha, func(step int) {
		w := wants[step-1]
		note := "POST " + notes
		if step > 1 {
			note = "PUT " + notes + "/1"
		}
		want = append(want, note)
		if got := noteRequests(); !slices.Equal(got, want) {
			t.Fatalf("gate %d: note requests %v, want %v (refused %+v)", step, got, want, gl.Refusals())
		}
		ns := gl.Notes()
		if len(ns) != 1 || ns[0].Edits != step-1 || !strings.HasPrefix(ns[0].Body, commitstatus.NoteMarker) ||
			!strings.Contains(ns[0].Body, "scangate: "+described(t, e, w.blocking)+"\n") ||
			strings.Count(ns[0].Body, "| `new` |") != w.rows {
			t.Fatalf("gate %d: notes %+v", step, ns)
		}
		// The status beside it (a status of the state the commit has
		// already is refused as GitLab does, and counts as posted).
		if st := gl.Statuses(); st[len(st)-1].State != w.state || st[len(st)-1].SHA != sha {
			t.Errorf("gate %d: status %+v", step, st[len(st)-1])
		}
	})
	body := ""
	for _, n := range gl.Notes() {
		body = n.Body
	}
	if strings.Contains(body, "sha256:fixture") || strings.Contains(body, "**Blocking findings**") {
		t.Errorf("the last note shows findings:\n%s", body)
	}
	copyLastGateChange(t, e)
	if got := noteRequests(); !slices.Equal(got, want) {
		t.Errorf("a copy of the last gate change wrote the note again: %v", got)
	}
	for _, r := range gl.Refusals() {
		if !strings.Contains(r.Reason, "Cannot transition status") {
			t.Errorf("refused %+v", r)
		}
	}
}

// TestCheckRunAnnotationsAfterAFailedBatch: 120 blocking findings go in a
// create and two updates; when GitHub fails the first update (502), the
// attempt is retried and sends the 70 annotations not sent yet, not the
// 50 the run has already: 120 annotations, each once, in one run.
func TestCheckRunAnnotationsAfterAFailedBatch(t *testing.T) {
	t.Parallel()
	gh, key := gitHubApp(t)
	e := startEvents(t)
	putApp(t, e, gh, key)
	var findings []map[string]any
	for i := range 120 {
		findings = append(findings, map[string]any{"name": fmt.Sprintf("sha256:%03d", i), "path": "src/config.go", "line": i + 1})
	}
	body, _ := json.Marshal(map[string]any{"scan_type": "SECRET", "status": "completed", "vc_type": "github", "vc_id": 1, "vc_name": "v",
		"repo_id": 5, "repo_name": "acme/api", "webhook_id": 1, "pr": map[string]any{"pr_id": 7, "pr_name": "n", "pr_link": "l"},
		"commit_sha": strings.Repeat("e", 40), "findings": findings})
	gh.FailCheckRun(1)
	e.call(t, 201, "POST", "/pr/scan", string(body))
	drain(t, e.stack, e.clock)
	if got := strings.Join(gh.CheckRunRequests(), ","); got != "create,update 1,update 1" {
		t.Errorf("check-run requests %s, want the create, then (after the failed update) two updates", got)
	}
	runs := gh.CheckRuns()
	if len(runs) != 1 || len(runs[0].Annotations) != 120 || runs[0].Conclusion != "failure" {
		t.Fatalf("runs %+v", runs)
	}
	lines := map[int]bool{}
	for _, a := range runs[0].Annotations {
		lines[a.StartLine] = true
	}
	if len(lines) != 120 {
		t.Errorf("%d lines annotated, want 120 each once", len(lines))
	}
	if rf := gh.Refusals(); len(rf) != 1 || rf[0].Status != 502 {
		t.Errorf("refused %+v, want the one 502", rf)
	}
}
