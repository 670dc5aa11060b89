package commitstatus_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/scangate/scangate/internal/egress"
	"github.com/scangate/scangate/internal/events/commitstatus"
	"github.com/scangate/scangate/internal/events/commitstatus/githubtest"
)

// The GitHub tests post through go-github to githubtest's stand-in, which
// validates every request against GitHub's published description
// (@octokit/openapi). make test-github installs it into .build/octokit and
// sets SCANGATE_GITHUB_OPENAPI, so CI fails when it is missing; without
// either, they are skipped.

// standIn starts a GitHub stand-in that accepts token.
func standIn(t *testing.T, token string) *githubtest.Server {
	return githubtest.Start(t, filepath.Join("..", ".."), token)
}

// local lets the client reach the stand-in on loopback, as the local stack does.
var local = egress.Policy{LoopbackHTTP: true}

func github(t *testing.T, apiURL, token string) commitstatus.Poster {
	t.Helper()
	return githubNames(t, apiURL, token, commitstatus.NewNames(time.Hour, 100))
}

func githubNames(t *testing.T, apiURL, token string, names *commitstatus.Names) commitstatus.Poster {
	t.Helper()
	p, err := commitstatus.New(commitstatus.Integration{Type: "github", APIURL: apiURL, Token: token}, local, local.Client(10*time.Second), names)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

const sha = "6dcb09b5b57875f334f61aebed695e2e4193db5e"

// Three gates of one pull request, blocked, unblocked by an allowlist,
// blocked again: three statuses, failure, success, failure, in that order,
// each as GitHub's description allows.
func TestGitHubStatusesFollowTheGate(t *testing.T) {
	srv := standIn(t, "ghp_standin")
	srv.AddRepo(7, "acme", "payments")
	o := commitstatus.Ordered{Poster: github(t, srv.URL, "ghp_standin"), Claims: &memClaims{}}
	gates := []string{
		`{"pr_id":17,"blocked":true,"head_sha":"` + sha + `","reasons":[{"kind":"findings","scan_type":"SECRET","category":"gitleaks","scan_id":1,"count":2},` +
			`{"kind":"findings","scan_type":"VULNERABILITY","category":"trivy","scan_id":2,"count":1}],` + policyCritical + `}`,
		`{"pr_id":17,"blocked":false,"head_sha":"` + sha + `","reasons":[],"categories":[{"scan_type":"SECRET","category":"gitleaks"},{"scan_type":"VULNERABILITY","category":"trivy"}],` + policyCritical + `}`,
		`{"pr_id":17,"blocked":true,"head_sha":"` + sha + `","reasons":[{"kind":"findings","scan_type":"SECRET","category":"gitleaks","scan_id":1,"count":1}],` + policyCritical + `}`,
	}
	k := commitstatus.Key{VcID: 1, RepoID: 7, SHA: sha}
	for i, doc := range gates {
		posted, err := o.Post(context.Background(), k, int64(i+1), commitstatus.FromGate(gate(t, doc), "https://scangate.example.com"))
		if err != nil || !posted {
			t.Fatalf("gate %d: posted %v, %v", i+1, posted, err)
		}
	}
	want := []githubtest.Status{
		{Owner: "acme", Repo: "payments", SHA: sha, State: "failure", Context: "scangate", Description: "Blocked: 2 secrets, 1 critical vulnerability", TargetURL: "https://scangate.example.com/#/pr/17"},
		{Owner: "acme", Repo: "payments", SHA: sha, State: "success", Context: "scangate", Description: "Not blocked: 2 scans, no blocking finding", TargetURL: "https://scangate.example.com/#/pr/17"},
		{Owner: "acme", Repo: "payments", SHA: sha, State: "failure", Context: "scangate", Description: "Blocked: 1 secret", TargetURL: "https://scangate.example.com/#/pr/17"},
	}
	got := srv.Statuses()
	if len(got) != len(want) {
		t.Fatalf("statuses %+v\nrefused %+v", got, srv.Refusals())
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("status %d: %+v, want %+v", i+1, got[i], want[i])
		}
	}
	if r := srv.Refusals(); len(r) != 0 {
		t.Fatalf("refused %+v", r)
	}
}

// Deliveries retried out of order: the newest gate's status is the last
// one GitHub gets.
func TestGitHubNewestGateIsPostedLast(t *testing.T) {
	srv := standIn(t, "ghp_standin")
	srv.AddRepo(7, "acme", "payments")
	o := commitstatus.Ordered{Poster: github(t, srv.URL, "ghp_standin"), Claims: &memClaims{}}
	k := commitstatus.Key{VcID: 1, RepoID: 7, SHA: sha}
	states := map[int64]commitstatus.State{1: commitstatus.Failure, 2: commitstatus.Pending, 3: commitstatus.Success}
	for _, seq := range []int64{1, 3, 2, 1, 3} {
		if _, err := o.Post(context.Background(), k, seq, commitstatus.Status{State: states[seq], Description: "gate", TargetURL: "https://scangate.example.com/#/pr/1"}); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, s := range srv.Statuses() {
		got = append(got, s.State)
	}
	if strings.Join(got, ",") != "failure,success,success" {
		t.Fatalf("states posted %v, want failure,success,success", got)
	}
}

// The stand-in refuses what GitHub's description does not allow, so the
// tests above can fail: a state GitHub does not have, a wrong token.
func TestGitHubStandInRefusesAnInvalidRequest(t *testing.T) {
	srv := standIn(t, "ghp_standin")
	srv.AddRepo(7, "acme", "payments")
	p := github(t, srv.URL, "ghp_standin")
	err := p.Post(context.Background(), commitstatus.Commit{RepoID: 7, SHA: sha}, commitstatus.Status{State: "blocked", Description: "Blocked"})
	var e *commitstatus.Error
	if !errors.As(err, &e) || e.StatusCode != 422 || !e.Permanent || commitstatus.Retryable(err) {
		t.Fatalf("state blocked: %v, want a permanent 422", err)
	}
	refused := srv.Refusals()
	if len(refused) != 1 || refused[0].Status != 422 || !strings.Contains(refused[0].Reason, "state") || len(srv.Statuses()) != 0 {
		t.Fatalf("refused %+v, statuses %+v", refused, srv.Statuses())
	}

	err = github(t, srv.URL, "ghp_wrong").Post(context.Background(), commitstatus.Commit{RepoID: 7, SHA: sha}, commitstatus.Status{State: commitstatus.Success})
	if !errors.As(err, &e) || e.StatusCode != 401 || !commitstatus.Retryable(err) || strings.Contains(err.Error(), "ghp_wrong") ||
		!strings.HasPrefix(err.Error(), "github: status not posted (401): ") {
		t.Fatalf("a wrong token: %v, want a 401 to retry, not showing the token", err)
	}

	err = p.Post(context.Background(), commitstatus.Commit{RepoID: 99, SHA: sha}, commitstatus.Status{State: commitstatus.Success})
	if !errors.As(err, &e) || e.StatusCode != 404 || len(srv.Refusals()) != 3 || len(srv.Statuses()) != 0 {
		t.Fatalf("a repository id GitHub does not know: %v (refused %+v), want its 404 and no status", err, srv.Refusals())
	}
}

// A GitHub Enterprise Server's API is at https://HOST/api/v3: the same
// requests, under that prefix.
func TestGitHubEnterpriseServerURL(t *testing.T) {
	srv := standIn(t, "ghp_standin")
	srv.AddRepo(7, "acme", "payments")
	p := github(t, srv.URL+"/api/v3", "ghp_standin")
	if err := p.Post(context.Background(), commitstatus.Commit{RepoID: 7, SHA: sha}, commitstatus.Status{State: commitstatus.Pending, Description: "Pending: secret/gitleaks"}); err != nil {
		t.Fatal(err)
	}
	if got := srv.Statuses(); len(got) != 1 || got[0].Prefix != githubtest.EnterprisePrefix || got[0].State != "pending" {
		t.Fatalf("statuses %+v", got)
	}
}

// A status goes to the repository GitHub names for the recorded repo_id
// (GET /repositories/{id}), looked up once and cached; the recorder's
// repo_name is not part of the request at all, whatever it says.
func TestGitHubStatusGoesToTheRepositoryOfItsID(t *testing.T) {
	srv := standIn(t, "ghp_standin")
	srv.AddRepo(7, "acme", "payments")
	srv.AddRepo(8, "acme", "api")
	names := commitstatus.NewNames(time.Hour, 100)
	p := githubNames(t, srv.URL, "ghp_standin", names)
	for _, id := range []int64{7, 8, 7, 8, 7} {
		if err := p.Post(context.Background(), commitstatus.Commit{RepoID: id, SHA: sha}, commitstatus.Status{State: commitstatus.Success}); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, s := range srv.Statuses() {
		got = append(got, s.Owner+"/"+s.Repo)
	}
	if strings.Join(got, ",") != "acme/payments,acme/api,acme/payments,acme/api,acme/payments" {
		t.Fatalf("statuses went to %v", got)
	}
	if n := srv.Lookups(); n != 2 {
		t.Fatalf("%d lookups of a repository by id, want 2 (one per repository, then the cache)", n)
	}
	// Another poster of the same API shares the cache (a deliverer keeps
	// one for its execution environment).
	if err := githubNames(t, srv.URL, "ghp_standin", names).Post(context.Background(), commitstatus.Commit{RepoID: 7, SHA: sha},
		commitstatus.Status{State: commitstatus.Failure}); err != nil || srv.Lookups() != 2 {
		t.Fatalf("a second poster: %v, %d lookups", err, srv.Lookups())
	}
}

// A name GitHub would never answer (a dot segment) is refused, not sent.
func TestGitHubRefusesADotSegmentName(t *testing.T) {
	srv := standIn(t, "ghp_standin")
	srv.AddRepo(9, "..", "..")
	err := github(t, srv.URL, "ghp_standin").Post(context.Background(), commitstatus.Commit{RepoID: 9, SHA: sha}, commitstatus.Status{State: commitstatus.Success})
	var e *commitstatus.Error
	if !errors.As(err, &e) || !e.Permanent || len(srv.Statuses()) != 0 || len(srv.Refusals()) != 0 {
		t.Fatalf("a repository named ../..: %v, statuses %+v, refused %+v", err, srv.Statuses(), srv.Refusals())
	}
}
