package cienv_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scangate/scangate/internal/cienv"
	"github.com/scangate/scangate/internal/cienv/cienvtest"
)

func lookup(env map[string]string) func(string) string {
	return func(k string) string { return env[k] }
}

// A job on a pull_request event: the head commit from the payload, not
// GITHUB_SHA (GitHub's merge commit).
func TestGitHubPullRequest(t *testing.T) {
	env := cienvtest.GitHubPullRequest(t, t.TempDir())
	got, err := cienv.Read(lookup(env), os.ReadFile)
	if err != nil {
		t.Fatal(err)
	}
	want := cienv.Context{CI: "github", Event: "pull_request", VcType: "github", VcName: "github.com",
		RepoID: cienvtest.GitHubRepoID, RepoName: cienvtest.GitHubRepo, PR: cienvtest.GitHubPR, PRName: cienvtest.GitHubPRName,
		PRLink: cienvtest.GitHubPRLink, CommitSHA: cienvtest.GitHubHeadSHA, Ref: "refs/pull/2/merge"}
	if got != want {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

// A push event's payload has no pull request: outside a PR, whatever
// GITHUB_SHA is.
func TestGitHubPush(t *testing.T) {
	dir := t.TempDir()
	env := cienvtest.GitHubPullRequest(t, dir)
	if err := os.WriteFile(env["GITHUB_EVENT_PATH"], []byte(`{"ref":"refs/heads/main","after":"`+cienvtest.GitHubHeadSHA+`"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	env["GITHUB_EVENT_NAME"], env["GITHUB_REF"] = "push", "refs/heads/main"
	got, err := cienv.Read(lookup(env), os.ReadFile)
	if err != nil || got.PR != 0 || got.CommitSHA != "" || got.RepoID != cienvtest.GitHubRepoID || got.Event != "push" {
		t.Errorf("push: %+v %v", got, err)
	}
}

// Without a payload that describes it, a pull request's number is read
// from its ref; the commit stays unknown (GITHUB_SHA is a merge commit).
func TestGitHubRefOnly(t *testing.T) {
	env := cienvtest.GitHubPullRequest(t, t.TempDir())
	delete(env, "GITHUB_EVENT_PATH")
	got, err := cienv.Read(lookup(env), os.ReadFile)
	if err != nil || got.PR != 2 || got.PRLink != cienvtest.GitHubPRLink || got.CommitSHA != "" {
		t.Errorf("ref only: %+v %v", got, err)
	}
}

func TestGitHubErrors(t *testing.T) {
	dir := t.TempDir()
	env := cienvtest.GitHubPullRequest(t, dir)
	env["GITHUB_EVENT_PATH"] = filepath.Join(dir, "missing.json")
	if _, err := cienv.Read(lookup(env), os.ReadFile); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing payload: %v", err)
	}
	env["GITHUB_EVENT_PATH"] = filepath.Join(dir, "bad.json")
	if err := os.WriteFile(env["GITHUB_EVENT_PATH"], []byte("not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := cienv.Read(lookup(env), os.ReadFile); err == nil {
		t.Error("a payload that is not JSON: no error")
	}
	env = cienvtest.GitHubPullRequest(t, dir)
	env["GITHUB_REPOSITORY_ID"] = "Hello-World"
	if _, err := cienv.Read(lookup(env), os.ReadFile); err == nil || !strings.Contains(err.Error(), "GITHUB_REPOSITORY_ID") {
		t.Errorf("a repository id that is not a number: %v", err)
	}
}

// In a merge request pipeline and in a merged results pipeline alike, the
// commit is the source branch's head.
func TestGitLabMergeRequest(t *testing.T) {
	want := cienv.Context{CI: "gitlab", Event: "merge_request_event", VcType: "gitlab", VcName: "gitlab.example.com",
		RepoID: cienvtest.GitLabProjectID, RepoName: cienvtest.GitLabProject, PR: cienvtest.GitLabMR, PRName: cienvtest.GitLabMRName,
		PRLink: cienvtest.GitLabMRLink, CommitSHA: cienvtest.GitLabHeadSHA, Ref: "refs/merge-requests/17/head"}
	for _, merged := range []bool{false, true} {
		got, err := cienv.Read(lookup(cienvtest.GitLabMergeRequest(merged)), os.ReadFile)
		if err != nil || got != want {
			t.Errorf("merged results %v:\ngot  %+v %v\nwant %+v", merged, got, err, want)
		}
	}
}

// A branch pipeline has no merge request.
func TestGitLabBranch(t *testing.T) {
	env := cienvtest.GitLabMergeRequest(false)
	for k := range env {
		if strings.HasPrefix(k, "CI_MERGE_REQUEST_") {
			delete(env, k)
		}
	}
	env["CI_PIPELINE_SOURCE"], env["CI_COMMIT_BRANCH"] = "push", "main"
	got, err := cienv.Read(lookup(env), os.ReadFile)
	if err != nil || got.PR != 0 || got.Ref != "refs/heads/main" || got.RepoID != cienvtest.GitLabProjectID {
		t.Errorf("branch pipeline: %+v %v", got, err)
	}
}

func TestNoCI(t *testing.T) {
	got, err := cienv.Read(lookup(map[string]string{"CI": "true"}), os.ReadFile)
	if err != nil || got != (cienv.Context{}) {
		t.Errorf("no CI recognised: %+v %v", got, err)
	}
}
