package localstack_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/scangate/scangate/internal/ddbtest"
	"github.com/scangate/scangate/internal/events/commitstatus/githubtest"
	"github.com/scangate/scangate/internal/events/commitstatus/gitlabtest"
	"github.com/scangate/scangate/internal/localstack"
	"github.com/scangate/scangate/internal/scangate"
)

// gitHub starts the stand-in of GitHub's API that validates every request
// against GitHub's published description (make test-github installs it),
// or skips the test without it.
func gitHub(t *testing.T, token string) *githubtest.Server {
	return githubtest.Start(t, filepath.Join("..", ".."), token)
}

// gateChanged writes a pr.gate_changed event of PR 1 (vc_id 1, acme/api)
// as putPR writes one (made up here, to send gates out of order): its
// sequence, whether it blocks, its commit.
func gateChanged(t *testing.T, e *eventStack, seq int64, blocked bool, sha string) scangate.Event {
	t.Helper()
	return gateChangedOf(t, e, 1, "acme/api", seq, blocked, sha)
}

// gateChangedOf is gateChanged for PR 1 of vc_id, its repository (repo_id 5)
// named repoName.
func gateChangedOf(t *testing.T, e *eventStack, vcID int64, repoName string, seq int64, blocked bool, sha string) scangate.Event {
	t.Helper()
	var reasons []map[string]any
	if blocked {
		reasons = append(reasons, map[string]any{"kind": "findings", "scan_type": "SECRET", "category": "gitleaks", "scan_id": 1, "count": 2})
	}
	data := map[string]any{"pr_id": 1, "vc_id": vcID, "repo_id": 5, "repo_name": repoName, "number": 7, "head_sha": sha,
		"sequence": seq, "cause": "scan", "blocked": blocked, "reasons": scangate.NonNil(reasons),
		"categories": []map[string]any{{"scan_type": "SECRET", "category": "gitleaks", "scan_id": 1, "status": "completed"}},
		"policy":     map[string]any{"block_severity": map[string]string{"SECRET": "none", "VULNERABILITY": "none"}},
		"previous":   map[string]any{"blocked": !blocked}}
	ev, err := e.stack.Store.RecordEvent(context.Background(), scangate.NewEvent(scangate.EventGateChanged, e.clock.Now(), data))
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

func states(s *githubtest.Server, sha string) []string {
	var out []string
	for _, st := range s.Statuses() {
		if st.SHA == sha {
			out = append(out, st.State)
		}
	}
	return out
}

// TestCommitStatusesFollowTheGate: each change of a PR's gate posts the
// commit status of its commit through go-github to a stand-in that
// validates every request against GitHub's published description:
// failure, success, failure, in that order, with the description and the
// dashboard's link; an older gate that arrives after a newer one is not
// posted (superseded), even when it is a retry that failed first; the
// token set by PUT /integrations is the one used, and never shown; no
// check run is made (a plain github integration's token is not an App's).
func TestCommitStatusesFollowTheGate(t *testing.T) {
	t.Parallel()
	gh := gitHub(t, "ghp_standin")
	gh.AddRepo(5, "acme", "api")
	e := startEvents(t, func(o *localstack.Options, _ *ddbtest.Env) { o.DashboardURL = "https://scangate.example.com" })
	e.call(t, 200, "PUT", "/integrations/1", `{"type":"github","api_url":"`+gh.URL+`","token":"ghp_standin"}`)
	sha := strings.Repeat("a", 40)
	for seq, blocked := range []bool{true, false, true} {
		gateChanged(t, e, int64(seq+1), blocked, sha)
		drain(t, e.stack, e.clock)
	}
	if got := states(gh, sha); !slices.Equal(got, []string{"failure", "success", "failure"}) {
		t.Fatalf("statuses %v (refused %+v)", got, gh.Refusals())
	}
	// A plain github integration (a personal token) makes no check run:
	// only a GitHub App may, GitHub answers 403 to the token (as the
	// stand-in does).
	if runs, refused := gh.CheckRuns(), gh.Refusals(); len(runs) != 0 || len(refused) != 0 {
		t.Errorf("check runs %+v, refused %+v: want none", runs, refused)
	}
	last := gh.Statuses()[2]
	if last.Owner != "acme" || last.Repo != "api" || last.Context != "scangate" || last.Description != "Blocked: 2 secrets" ||
		last.TargetURL != "https://scangate.example.com/#/pr/1" {
		t.Errorf("status %+v", last)
	}

	// Out of order: the newer gate posted first, the older one after it
	// is dropped.
	other := strings.Repeat("b", 40)
	gateChanged(t, e, 5, false, other)
	drain(t, e.stack, e.clock)
	older := gateChanged(t, e, 4, true, other)
	drain(t, e.stack, e.clock)
	if got := states(gh, other); !slices.Equal(got, []string{"success"}) {
		t.Errorf("statuses of the commit whose gates came out of order: %v", got)
	}
	d, err := e.stack.Store.Delivery(context.Background(), scangate.Destination{Kind: scangate.DestIntegration, ID: 1}, older.ID)
	if err != nil || d.Status != scangate.DeliverySuperseded {
		t.Errorf("the older gate's delivery %+v %v", d, err)
	}

	// A gate whose post fails (a wrong token: 401, retried), then a newer
	// one posted once the token is fixed: the first one's retry is dropped.
	third := strings.Repeat("c", 40)
	e.call(t, 200, "PUT", "/integrations/1", `{"type":"github","api_url":"`+gh.URL+`","token":"ghp_wrong"}`)
	failing := gateChanged(t, e, 6, true, third)
	settle(t, e.stack) // its first attempt fails; its retry waits
	e.call(t, 200, "PUT", "/integrations/1", `{"type":"github","api_url":"`+gh.URL+`","token":"ghp_standin"}`)
	gateChanged(t, e, 7, false, third)
	settle(t, e.stack)
	e.clock.Advance(time.Hour)
	drain(t, e.stack, e.clock)
	if got := states(gh, third); !slices.Equal(got, []string{"success"}) {
		t.Errorf("statuses after a failed post and a newer gate: %v", got)
	}
	if d, _ := e.stack.Store.Delivery(context.Background(), scangate.Destination{Kind: scangate.DestIntegration, ID: 1}, failing.ID); d.Status != scangate.DeliverySuperseded ||
		d.Attempts != 1 || d.Last == nil || d.Last.StatusCode != 401 {
		t.Errorf("the failed gate's delivery %+v (%+v)", d, d.Last)
	}
	if in := e.call(t, 200, "GET", "/integrations/1", ""); strings.Contains(in, "ghp_") {
		t.Errorf("GET shows the token: %s", in)
	}
	for _, r := range gh.Refusals() {
		if r.Status != 401 {
			t.Errorf("the stand-in refused %+v", r)
		}
	}
	var audit struct {
		Items []struct {
			Changes map[string]json.RawMessage `json:"changes"`
		} `json:"items"`
	}
	log := e.call(t, 200, "GET", "/audit?action=integration.update", "")
	_ = json.Unmarshal([]byte(log), &audit)
	if len(audit.Items) != 3 || string(audit.Items[0].Changes["token"]) != `{"to":"set"}` || strings.Contains(log, "ghp_") {
		t.Errorf("audit of the integration: %s", log)
	}
}

// TestCommitStatusesGoToTheRepositoryOfRepoID (issue 30, item 2): a
// recorder's repo_name never steers a status. Names that would rewrite the
// path or query (../.., ../gists?, o/r#frag, ..) are refused when a scan is
// recorded (422, nothing stored), and a gate change that carries one (as
// one recorded before that rule would) posts its status to the repository
// of its repo_id alone: on GitHub (the stand-in that checks every request
// against GitHub's description) the repository GET /repositories/5 names,
// looked up once.
func TestCommitStatusesGoToTheRepositoryOfRepoID(t *testing.T) {
	t.Parallel()
	gh := gitHub(t, "ghp_standin")
	gh.AddRepo(5, "acme", "api")
	e := startEvents(t)
	e.call(t, 200, "PUT", "/integrations/1", `{"type":"github","api_url":"`+gh.URL+`","token":"ghp_standin"}`)
	for i, name := range hostileRepoNames {
		refuseRepoName(t, e, "github", name)
		gateChangedOf(t, e, 1, name, int64(i+1), true, strings.Repeat(string(rune('a'+i)), 40))
		drain(t, e.stack, e.clock)
	}
	e.call(t, 404, "GET", "/pr/scan/1", "") // no scan was stored
	var where []string
	for _, s := range gh.Statuses() {
		where = append(where, s.Prefix+"/repos/"+s.Owner+"/"+s.Repo+"/statuses/"+s.SHA[:1])
	}
	if want := []string{"/repos/acme/api/statuses/a", "/repos/acme/api/statuses/b", "/repos/acme/api/statuses/c", "/repos/acme/api/statuses/d"}; !slices.Equal(where, want) {
		t.Errorf("GitHub statuses %v, want %v (refused %+v)", where, want, gh.Refusals())
	}
	if r := gh.Refusals(); len(r) != 0 || gh.Lookups() != 1 {
		t.Errorf("GitHub refused %+v; %d lookups of repository 5, want 1", r, gh.Lookups())
	}
}

// TestCommitStatusesGoToTheGitLabProjectOfRepoID is the same on GitLab:
// the status goes to the project of repo_id, /projects/5/statuses/{sha},
// and the merge request's note to /projects/5/merge_requests/7/notes
// (created once, then edited), whatever repo_name says.
func TestCommitStatusesGoToTheGitLabProjectOfRepoID(t *testing.T) {
	t.Parallel()
	gl := gitlabtest.Start(t, "glpat-standin")
	gl.AddMergeRequest(5, 7)
	e := startEvents(t)
	e.call(t, 200, "PUT", "/integrations/2", `{"type":"gitlab","api_url":"`+gl.API()+`","token":"glpat-standin"}`)
	var want []string
	for i, name := range hostileRepoNames {
		refuseRepoName(t, e, "gitlab", name)
		sha := strings.Repeat(string(rune('a'+i)), 40)
		gateChangedOf(t, e, 2, name, int64(i+1), true, sha)
		drain(t, e.stack, e.clock)
		note := "POST /projects/5/merge_requests/7/notes"
		if i > 0 {
			note = "PUT /projects/5/merge_requests/7/notes/1"
		}
		want = append(want, "POST /projects/5/statuses/"+sha, note)
	}
	e.call(t, 404, "GET", "/pr/scan/1", "") // no scan was stored
	if got := gl.Requests(); !slices.Equal(got, want) {
		t.Errorf("GitLab requests %v, want %v", got, want)
	}
	if r := gl.Refusals(); len(r) != 0 {
		t.Errorf("refused %+v", r)
	}
}

// hostileRepoNames are the repo_names of the review (issue 30) that
// rewrote a status's path or query.
var hostileRepoNames = []string{"../..", "../gists?", "o/r#frag", ".."}

// refuseRepoName records a scan of vcType named name and expects 422 at
// /repo_name.
func refuseRepoName(t *testing.T, e *eventStack, vcType, name string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"scan_type": "SECRET", "vc_type": vcType, "vc_id": 1, "vc_name": "v", "repo_id": 5,
		"repo_name": name, "webhook_id": 1, "pr": map[string]any{"pr_id": 7, "pr_name": "n", "pr_link": "l"}})
	if got := e.call(t, 422, "POST", "/pr/scan", string(body)); !strings.Contains(got, `"/repo_name"`) {
		t.Errorf("%s repo_name %q: %s", vcType, name, got)
	}
}

// TestIntegrationDelete: DELETE /integrations/{vc_id} (admin only) answers
// 204 and leaves an integration.delete audit entry that names what the
// integration was and never its token; the integration is gone (GET and a
// second DELETE are 404), and a gate change of that vc_id with a commit is
// no longer delivered to it.
func TestIntegrationDelete(t *testing.T) {
	t.Parallel()
	e := startEvents(t)
	e.call(t, 200, "PUT", "/integrations/5", `{"type":"gitlab","token":"glpat_secret"}`)
	e.call(t, 201, "POST", "/users", `{"username":"uma","user_email":"uma@example.com","password":"password-123","role":"user"}`)
	uma := loginToken(t, e.api, "uma", "password-123")
	if resp, body := do(t, "DELETE", e.api+"/integrations/5", uma, ""); resp.StatusCode != 403 {
		t.Fatalf("a user deleting an integration: %d %s", resp.StatusCode, body)
	}
	e.call(t, 204, "DELETE", "/integrations/5", "")
	e.call(t, 404, "GET", "/integrations/5", "")
	e.call(t, 404, "DELETE", "/integrations/5", "")
	log := e.call(t, 200, "GET", "/audit?action=integration.delete", "")
	if !strings.Contains(log, `"target":{"type":"integration","id":"5"}`) || !strings.Contains(log, `"type":{"from":"gitlab"}`) ||
		!strings.Contains(log, `"token":{"from":"set"}`) || strings.Contains(log, "glpat_") || strings.Count(log, `"action":"integration.delete"`) != 1 {
		t.Errorf("audit of the deletion: %s", log)
	}
	sha := strings.Repeat("d", 40)
	ev, err := e.stack.Store.RecordEvent(context.Background(), scangate.NewEvent(scangate.EventGateChanged, e.clock.Now(),
		scangate.GateChange{GateView: scangate.GateView{PRID: 1, HeadSHA: &sha}, VcID: 5, RepoName: "acme/api", Sequence: 1}))
	if err != nil {
		t.Fatal(err)
	}
	drain(t, e.stack, e.clock)
	if d, err := e.stack.Store.Delivery(context.Background(), scangate.Destination{Kind: scangate.DestIntegration, ID: 5}, ev.ID); scangate.KindOf(err) != scangate.KindNotFound {
		t.Errorf("a delivery to the deleted integration: %+v %v", d, err)
	}
}
