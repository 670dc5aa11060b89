package commitstatus_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scangate/scangate/internal/egress"
	"github.com/scangate/scangate/internal/events/commitstatus"
)

// gitlabStandIn plays GitLab's POST /projects/:id/statuses/:sha as its
// documentation describes it: the project by its id (42 here), the
// token in PRIVATE-TOKEN, state one of pending, running, success, failed,
// canceled; a status set again to the state it has is refused with 400
// "Cannot transition status", as GitLab does.
type gitlabStandIn struct {
	mu     sync.Mutex
	posted []map[string]string
	state  map[string]string // name@sha -> state
}

func (g *gitlabStandIn) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	answer := func(status int, body any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(body)
	}
	const prefix = "/api/v4/projects/42/statuses/"
	sha, ok := strings.CutPrefix(r.URL.EscapedPath(), prefix)
	switch {
	case r.Method != http.MethodPost || !ok:
		answer(404, map[string]string{"message": "404 Project Not Found"})
		return
	case r.Header.Get("PRIVATE-TOKEN") != "glpat-standin":
		answer(401, map[string]string{"message": "401 Unauthorized"})
		return
	}
	var body map[string]string
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		answer(400, map[string]string{"error": "body is not JSON"})
		return
	}
	switch body["state"] {
	case "pending", "running", "success", "failed", "canceled":
	default:
		answer(400, map[string]string{"error": "state does not have a valid value"})
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	key := body["name"] + "@" + sha
	if g.state[key] == body["state"] {
		answer(400, map[string]string{"message": fmt.Sprintf("Cannot transition status via :%s from :%s", body["state"], body["state"])})
		return
	}
	if g.state == nil {
		g.state = map[string]string{}
	}
	g.state[key] = body["state"]
	body["sha"] = sha
	g.posted = append(g.posted, body)
	answer(201, map[string]any{"id": len(g.posted), "sha": sha, "status": body["state"], "name": body["name"]})
}

func TestGitLabStatuses(t *testing.T) {
	standIn := &gitlabStandIn{}
	srv := httptest.NewServer(standIn)
	defer srv.Close()
	p, err := commitstatus.New(commitstatus.Integration{Type: "gitlab", APIURL: srv.URL + "/api/v4", Token: "glpat-standin"}, local, local.Client(10*time.Second), nil)
	if err != nil {
		t.Fatal(err)
	}
	c := commitstatus.Commit{RepoID: 42, SHA: sha}
	for _, s := range []commitstatus.Status{
		{State: commitstatus.Failure, Description: "Blocked: 2 secrets", TargetURL: "https://scangate.example.com/#/pr/3"},
		{State: commitstatus.Failure, Description: "Blocked: 2 secrets", TargetURL: "https://scangate.example.com/#/pr/3"}, // a retry
		{State: commitstatus.Pending, Description: "Pending: secret/gitleaks", TargetURL: "https://scangate.example.com/#/pr/3"},
		{State: commitstatus.Success, Description: "Not blocked: 1 scan, no blocking finding", TargetURL: "https://scangate.example.com/#/pr/3"},
	} {
		if err := p.Post(context.Background(), c, s); err != nil {
			t.Fatalf("%s: %v", s.State, err)
		}
	}
	var got []string
	for _, b := range standIn.posted {
		if b["name"] != "scangate" || b["sha"] != sha || b["target_url"] != "https://scangate.example.com/#/pr/3" {
			t.Errorf("posted %v", b)
		}
		got = append(got, b["state"]+":"+b["description"])
	}
	want := "failed:Blocked: 2 secrets|pending:Pending: secret/gitleaks|success:Not blocked: 1 scan, no blocking finding"
	if strings.Join(got, "|") != want {
		t.Fatalf("posted %q, want %q", strings.Join(got, "|"), want)
	}

	wrong, _ := commitstatus.New(commitstatus.Integration{Type: "gitlab", APIURL: srv.URL + "/api/v4", Token: "glpat-wrong"}, local, local.Client(10*time.Second), nil)
	err = wrong.Post(context.Background(), c, commitstatus.Status{State: commitstatus.Success})
	var e *commitstatus.Error
	if !errors.As(err, &e) || e.StatusCode != 401 || !commitstatus.Retryable(err) || strings.Contains(err.Error(), "glpat") {
		t.Fatalf("a wrong token: %v", err)
	}
	err = p.Post(context.Background(), c, commitstatus.Status{State: "blocked"})
	if !errors.As(err, &e) || e.StatusCode != 400 || commitstatus.Retryable(err) {
		t.Fatalf("an invalid state: %v, want a permanent 400", err)
	}
}

// An integration's API URL follows the egress rules: https, and never a
// metadata address, even where private networks are allowed (GitHub
// Enterprise Server on the deployment's network).
func TestIntegrationURLs(t *testing.T) {
	hc := egress.Policy{}.Client(time.Second)
	cases := []struct {
		in     commitstatus.Integration
		policy egress.Policy
		want   string
	}{
		{commitstatus.Integration{Type: "github", Token: "t"}, egress.Policy{}, ""},
		{commitstatus.Integration{Type: "github", APIURL: "https://ghe.example.com/api/v3", Token: "t"}, egress.Policy{}, ""},
		{commitstatus.Integration{Type: "gitlab", Token: "t"}, egress.Policy{}, ""},
		{commitstatus.Integration{Type: "github", APIURL: "https://10.0.0.5/api/v3", Token: "t"}, egress.Policy{Private: true}, ""},
		{commitstatus.Integration{Type: "github", APIURL: "https://10.0.0.5/api/v3", Token: "t"}, egress.Policy{}, "private address"},
		{commitstatus.Integration{Type: "github", APIURL: "http://ghe.example.com/api/v3", Token: "t"}, egress.Policy{}, "must use https"},
		{commitstatus.Integration{Type: "github", APIURL: "https://169.254.169.254/", Token: "t"}, egress.Policy{Private: true}, "cloud metadata"},
		{commitstatus.Integration{Type: "gitlab", APIURL: "https://[fd00:ec2::254]/api/v4", Token: "t"}, egress.Policy{Private: true}, "cloud metadata"},
		{commitstatus.Integration{Type: "github", APIURL: "https://user:pw@ghe.example.com/", Token: "t"}, egress.Policy{}, "user name or password"},
		{commitstatus.Integration{Type: "github", APIURL: "https://ghe.example.com/api/v3?x=1", Token: "t"}, egress.Policy{}, "query or a fragment"},
		{commitstatus.Integration{Type: "gitlab", APIURL: "https://gitlab.example.com/api/v4#", Token: "t"}, egress.Policy{}, "query or a fragment"},
		{commitstatus.Integration{Type: "bitbucket", Token: "t"}, egress.Policy{}, `no integration of type "bitbucket" (github, github_app, gitlab)`},
		{commitstatus.Integration{Type: "github"}, egress.Policy{}, "no token"},
	}
	for _, c := range cases {
		_, err := commitstatus.New(c.in, c.policy, hc, nil)
		if (c.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.in, err, c.want)
		}
	}
}
