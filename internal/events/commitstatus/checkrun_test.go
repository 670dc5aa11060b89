package commitstatus_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/scangate/scangate/internal/events/commitstatus"
)

func annotations(n int) []commitstatus.Annotation {
	out := make([]commitstatus.Annotation, n)
	for i := range out {
		out[i] = commitstatus.Annotation{Path: fmt.Sprintf("src/f%d.go", i), StartLine: i + 1, Title: "gitleaks: aws-access-key", Message: "A secret"}
	}
	return out
}

// A gate that changes three times gives one check run named scangate on
// the head commit, created once and updated after, its annotations sent
// 50 a request (120: a create and two updates), its conclusion and
// summary the newest gate's; every request and answer valid per GitHub's
// description, through a GitHub App's installation token.
func TestGitHubCheckRunCreatedOnceUpdatedInBatches(t *testing.T) {
	srv := standIn(t, "ghp_unused")
	srv.AddRepo(7, "acme", "payments")
	k, key := appKey(t)
	srv.AddApp(4242, 99, &k.PublicKey, time.Hour)
	gh := githubApp(t, srv.URL, key, 4242, 99, commitstatus.NewNames(time.Hour, 100)).(*commitstatus.GitHub)
	c := commitstatus.Commit{RepoID: 7, SHA: sha}
	blocked := gate(t, `{"pr_id":17,"blocked":true,"head_sha":"`+sha+`","reasons":[{"kind":"findings","scan_type":"SECRET","category":"gitleaks","count":120}],`+
		`"categories":[{"scan_type":"SECRET","category":"gitleaks","new_count":120,"unchanged_count":3,"absent_count":1}],`+policyCritical+`}`)
	clear := gate(t, `{"pr_id":17,"blocked":false,"head_sha":"`+sha+`","reasons":[],"categories":[{"scan_type":"SECRET","category":"gitleaks"}],`+policyCritical+`}`)
	missing := gate(t, `{"pr_id":17,"blocked":true,"head_sha":"`+sha+`","reasons":[{"kind":"missing","scan_type":"VULNERABILITY","category":"trivy"}],"categories":[],`+policyCritical+`}`)

	var id int64
	var err error
	for i, step := range []struct {
		run        commitstatus.CheckRun
		conclusion string
	}{
		{commitstatus.CheckRunOf(blocked, "https://scangate.example.com", annotations(120)), "failure"},
		{commitstatus.CheckRunOf(clear, "https://scangate.example.com", nil), "success"},
		{commitstatus.CheckRunOf(missing, "", nil), "action_required"},
	} {
		if step.run.Conclusion != step.conclusion {
			t.Fatalf("gate %d: conclusion %s, want %s", i+1, step.run.Conclusion, step.conclusion)
		}
		var sent int
		if id, sent, err = gh.SyncCheckRun(context.Background(), c, id, step.run); err != nil || id == 0 || sent != len(step.run.Annotations) {
			t.Fatalf("gate %d: run %d, %v (refused %+v)", i+1, id, err, srv.Refusals())
		}
	}
	runs := srv.CheckRuns()
	if len(runs) != 1 {
		t.Fatalf("check runs %+v, want one", runs)
	}
	r := runs[0]
	if r.Name != "scangate" || r.SHA != sha || r.Owner != "acme" || r.Repo != "payments" || r.Conclusion != "action_required" ||
		r.Status != "completed" || r.Title != "Blocked: missing: vulnerability/trivy" || r.Updates != 4 {
		t.Errorf("check run %+v", r)
	}
	if got := strings.Join(srv.CheckRunRequests(), ","); got != "create,update 1,update 1,update 1,update 1" {
		t.Errorf("requests %s", got)
	}
	if len(r.Annotations) != 120 || r.Annotations[119].Path != "src/f119.go" || r.Annotations[0].Level != "failure" || r.Annotations[0].EndLine != 1 {
		t.Errorf("annotations %d: %+v", len(r.Annotations), r.Annotations[:1])
	}
	if !strings.Contains(r.Summary, "| VULNERABILITY | trivy | 0 |  |  |  | missing |") {
		t.Errorf("summary %q", r.Summary)
	}
	if first := commitstatus.CheckRunOf(blocked, "", nil).Summary; !strings.Contains(first, "| SECRET | gitleaks | 120 | 120 | 3 | 1 |  |") {
		t.Errorf("summary of the blocked gate %q", first)
	}
	if rf := srv.Refusals(); len(rf) != 0 {
		t.Errorf("refused %+v", rf)
	}
}

// The stand-in refuses a check run written with a personal access token,
// as GitHub does (403: only a GitHub App writes check runs), so a test
// that a plain github integration makes none can fail.
func TestGitHubStandInRefusesACheckRunFromAPersonalToken(t *testing.T) {
	srv := standIn(t, "ghp_standin")
	srv.AddRepo(7, "acme", "payments")
	gh := github(t, srv.URL, "ghp_standin").(*commitstatus.GitHub)
	_, _, err := gh.SyncCheckRun(context.Background(), commitstatus.Commit{RepoID: 7, SHA: sha}, 0, commitstatus.CheckRun{Conclusion: "success", Title: "t", Summary: "s"})
	if err == nil || len(srv.Refusals()) != 1 || srv.Refusals()[0].Status != 403 || len(srv.CheckRuns()) != 0 ||
		!strings.HasPrefix(err.Error(), "github: check run not posted (403): annotations batch 1 of 1: ") {
		t.Fatalf("check run with the personal token: %v (refused %+v)", err, srv.Refusals())
	}
}

// The stand-in refuses more than 50 annotations in one request and an
// update of a run it does not have, so the test above can fail.
func TestGitHubStandInRefusesACheckRunItDoesNotHave(t *testing.T) {
	srv := standIn(t, "ghp_unused")
	srv.AddRepo(7, "acme", "payments")
	k, key := appKey(t)
	srv.AddApp(4242, 99, &k.PublicKey, time.Hour)
	gh := githubApp(t, srv.URL, key, 4242, 99, commitstatus.NewNames(time.Hour, 100)).(*commitstatus.GitHub)
	_, _, err := gh.SyncCheckRun(context.Background(), commitstatus.Commit{RepoID: 7, SHA: sha}, 5, commitstatus.CheckRun{Conclusion: "success", Title: "t", Summary: "s"})
	if err == nil || len(srv.Refusals()) != 1 || srv.Refusals()[0].Status != 404 {
		t.Fatalf("update of run 5: %v (refused %+v)", err, srv.Refusals())
	}
	_, _, err = gh.SyncCheckRun(context.Background(), commitstatus.Commit{RepoID: 7, SHA: sha}, 0, commitstatus.CheckRun{Conclusion: "blocked", Title: "t", Summary: "s"})
	if err == nil || srv.Refusals()[1].Status != 422 || len(srv.CheckRuns()) != 0 {
		t.Fatalf("a conclusion GitHub does not have: %v (refused %+v)", err, srv.Refusals())
	}
}
