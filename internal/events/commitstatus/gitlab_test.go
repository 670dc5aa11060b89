package commitstatus_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/scangate/scangate/internal/egress"
	"github.com/scangate/scangate/internal/events/commitstatus"
	"github.com/scangate/scangate/internal/events/commitstatus/gitlabtest"
)

// TestGitLabStatuses: statuses go to the project of the commit's
// repository id on the GitLab stand-in (internal/events/commitstatus/gitlabtest,
// which checks paths, token and bodies as GitLab documents them); a
// retry of the state the commit has counts as posted; a wrong token is
// retried, an invalid state is not, and no error shows the token.
func TestGitLabStatuses(t *testing.T) {
	gl := gitlabtest.Start(t, "glpat-standin")
	gl.AddProject(42)
	p, err := commitstatus.New(commitstatus.Integration{Type: "gitlab", APIURL: gl.API(), Token: "glpat-standin"}, local, local.Client(10*time.Second), nil)
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
	for _, b := range gl.Statuses() {
		if b.Name != "scangate" || b.SHA != sha || b.Project != 42 || b.Target != "https://scangate.example.com/#/pr/3" {
			t.Errorf("posted %+v", b)
		}
		got = append(got, b.State+":"+b.Description)
	}
	want := "failed:Blocked: 2 secrets|pending:Pending: secret/gitleaks|success:Not blocked: 1 scan, no blocking finding"
	if strings.Join(got, "|") != want {
		t.Fatalf("posted %q, want %q", strings.Join(got, "|"), want)
	}

	wrong, _ := commitstatus.New(commitstatus.Integration{Type: "gitlab", APIURL: gl.API(), Token: "glpat-wrong"}, local, local.Client(10*time.Second), nil)
	err = wrong.Post(context.Background(), c, commitstatus.Status{State: commitstatus.Success})
	var e *commitstatus.Error
	if !errors.As(err, &e) || e.StatusCode != 401 || !commitstatus.Retryable(err) || strings.Contains(err.Error(), "glpat") ||
		!strings.HasPrefix(err.Error(), "gitlab: status not posted (401): ") {
		t.Fatalf("a wrong token: %v", err)
	}
	err = p.Post(context.Background(), c, commitstatus.Status{State: "blocked"})
	if !errors.As(err, &e) || e.StatusCode != 400 || commitstatus.Retryable(err) {
		t.Fatalf("an invalid state: %v, want a permanent 400", err)
	}
}

// TestGitLabNoteCreatedOnceThenEdited: a merge request's note is created
// by the first sync (POST .../merge_requests/7/notes) and edited by the
// next (PUT .../notes/{id}), one note whatever the gates; a note someone
// deleted is created again; a merge request GitLab does not have is an
// error (retried: it may be a token without access), and a wrong token
// too, without showing it.
func TestGitLabNoteCreatedOnceThenEdited(t *testing.T) {
	gl := gitlabtest.Start(t, "glpat-standin")
	gl.AddMergeRequest(42, 7)
	p, err := commitstatus.New(commitstatus.Integration{Type: "gitlab", APIURL: gl.API(), Token: "glpat-standin"}, local, local.Client(10*time.Second), nil)
	if err != nil {
		t.Fatal(err)
	}
	g := p.(*commitstatus.GitLab)
	var id int64
	for i, body := range []string{"first", "second", "third", "fourth"} {
		if id, err = g.SyncNote(context.Background(), 42, 7, id, body); err != nil || id == 0 {
			t.Fatalf("sync %d: note %d, %v (refused %+v)", i+1, id, err, gl.Refusals())
		}
	}
	notes := gl.Notes()
	if len(notes) != 1 || notes[0].ID != id || notes[0].Body != "fourth" || notes[0].Edits != 3 || notes[0].MR != 7 || notes[0].Project != 42 {
		t.Fatalf("notes %+v", notes)
	}
	want := "POST /projects/42/merge_requests/7/notes,PUT /projects/42/merge_requests/7/notes/1,PUT /projects/42/merge_requests/7/notes/1,PUT /projects/42/merge_requests/7/notes/1"
	if got := strings.Join(gl.Requests(), ","); got != want {
		t.Errorf("requests %s, want %s", got, want)
	}
	gl.DeleteNote(id)
	if id, err = g.SyncNote(context.Background(), 42, 7, id, "again"); err != nil || id != 2 {
		t.Fatalf("after the note was deleted: note %d, %v", id, err)
	}
	if n := gl.Notes(); len(n) != 1 || n[0].Body != "again" {
		t.Fatalf("notes %+v", n)
	}
	var e *commitstatus.Error
	if _, err = g.SyncNote(context.Background(), 42, 8, 0, "x"); !errors.As(err, &e) || e.StatusCode != 404 || !commitstatus.Retryable(err) ||
		!strings.HasPrefix(err.Error(), "gitlab: note not posted (404): ") {
		t.Fatalf("an unknown merge request: %v", err)
	}
	wrong, _ := commitstatus.New(commitstatus.Integration{Type: "gitlab", APIURL: gl.API(), Token: "glpat-wrong"}, local, local.Client(10*time.Second), nil)
	if _, err = wrong.(*commitstatus.GitLab).SyncNote(context.Background(), 42, 7, 2, "x"); !errors.As(err, &e) || e.StatusCode != 401 || strings.Contains(err.Error(), "glpat") ||
		!strings.HasPrefix(err.Error(), "gitlab: note not posted (401): ") {
		t.Fatalf("a wrong token: %v", err)
	}
	if got := len(gl.Refusals()); got != 3 { // the deleted note's PUT, and the two above
		t.Errorf("refused %+v, want three", gl.Refusals())
	}
}

// The stand-in refuses what GitLab would, so the tests above can fail:
// an attribute a note does not have, an empty body, a note of another
// merge request, a path it does not serve.
func TestGitLabStandInRefuses(t *testing.T) {
	gl := gitlabtest.Start(t, "glpat-standin")
	gl.AddMergeRequest(42, 7)
	gl.AddMergeRequest(42, 9)
	g, _ := commitstatus.New(commitstatus.Integration{Type: "gitlab", APIURL: gl.API(), Token: "glpat-standin"}, local, local.Client(10*time.Second), nil)
	id, err := g.(*commitstatus.GitLab).SyncNote(context.Background(), 42, 7, 0, "")
	if err == nil || id != 0 {
		t.Fatalf("an empty note: %d, %v", id, err)
	}
	id, _ = g.(*commitstatus.GitLab).SyncNote(context.Background(), 42, 7, 0, "on 7")
	if _, err := g.(*commitstatus.GitLab).SyncNote(context.Background(), 42, 9, id, "moved"); err != nil {
		t.Fatal(err) // 404 on 9: a new note there
	}
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/projects/42/merge_requests/7/notes", `{"body":"x","note":"y"}`},
		{"PUT", "/projects/42/merge_requests/7/notes", `{"body":"x"}`},
		{"POST", "/projects/42/merge_requests/7/notes?x=1", `{"body":"x"}`},
		{"POST", "/projects/42/issues/7/notes", `{"body":"x"}`},
	} {
		req, _ := http.NewRequest(c.method, gl.API()+c.path, strings.NewReader(c.body))
		req.Header.Set("PRIVATE-TOKEN", "glpat-standin")
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode < 400 {
			t.Errorf("%s %s %s: %d", c.method, c.path, c.body, resp.StatusCode)
		}
	}
	if n := gl.Notes(); len(n) != 2 || n[0].MR != 7 || n[0].Body != "on 7" || n[1].MR != 9 {
		t.Errorf("notes %+v", n)
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
