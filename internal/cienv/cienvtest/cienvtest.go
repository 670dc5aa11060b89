// Package cienvtest holds, for tests, the environments that CI systems set
// for a job run on a pull request: GitHub Actions with a recorded
// pull_request event payload, and GitLab CI's predefined variables of a
// merge request pipeline.
package cienvtest

import (
	_ "embed"
	"os"
	"path/filepath"
	"testing"
)

// The pull request of the recorded payload (testdata/README.md).
const (
	GitHubRepoID   = 186853002
	GitHubRepo     = "Codertocat/Hello-World"
	GitHubPR       = 2
	GitHubPRName   = "Update the README with new information."
	GitHubPRLink   = "https://github.com/Codertocat/Hello-World/pull/2"
	GitHubHeadSHA  = "ec26c3e57ca3a959ca5aad62de7213c562f8c821"
	GitHubMergeSHA = "9b2c7d0c1f1e1d6a8e2f3c4b5a69788796a5b4c3" // GITHUB_SHA: the merge commit
)

//go:embed testdata/github-pull_request-synchronize.json
var pullRequestEvent []byte

// GitHubPullRequest is the environment GitHub Actions sets for a job run on
// the recorded pull_request event, whose payload it writes into dir (as
// the runner writes it to GITHUB_EVENT_PATH). GITHUB_SHA is the merge
// commit GitHub made, not the pull request's head.
func GitHubPullRequest(t testing.TB, dir string) map[string]string {
	t.Helper()
	path := filepath.Join(dir, "event.json")
	if err := os.WriteFile(path, pullRequestEvent, 0o600); err != nil {
		t.Fatal(err)
	}
	return map[string]string{
		"CI": "true", "GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": "pull_request", "GITHUB_EVENT_PATH": path,
		"GITHUB_REPOSITORY": GitHubRepo, "GITHUB_REPOSITORY_ID": "186853002",
		"GITHUB_REPOSITORY_OWNER": "Codertocat", "GITHUB_SERVER_URL": "https://github.com",
		"GITHUB_API_URL": "https://api.github.com", "GITHUB_REF": "refs/pull/2/merge", "GITHUB_REF_NAME": "2/merge",
		"GITHUB_REF_TYPE": "branch", "GITHUB_HEAD_REF": "changes", "GITHUB_BASE_REF": "master",
		"GITHUB_SHA": GitHubMergeSHA, "GITHUB_WORKFLOW": "scangate", "GITHUB_JOB": "scan",
		"GITHUB_RUN_ID": "1658821493", "GITHUB_RUN_NUMBER": "7", "GITHUB_ACTOR": "Codertocat",
		"RUNNER_OS": "Linux", "RUNNER_ARCH": "X64",
	}
}

// The merge request of GitLabMergeRequest.
const (
	GitLabProjectID = 4242
	GitLabProject   = "acme/payments"
	GitLabMR        = 17
	GitLabMRName    = "Rotate the payment keys"
	GitLabMRLink    = "https://gitlab.example.com/acme/payments/-/merge_requests/17"
	GitLabHeadSHA   = "1f0e2d3c4b5a69788796a5b4c3d2e1f0a9b8c7d6"
	GitLabMergeSHA  = "aaaa2d3c4b5a69788796a5b4c3d2e1f0a9b8c7d6"
)

// GitLabMergeRequest is the environment of a GitLab CI job in a merge
// request pipeline (GitLab's predefined variables); merged says whether it
// is a merged results pipeline, whose CI_COMMIT_SHA is the merge's commit
// and CI_MERGE_REQUEST_SOURCE_BRANCH_SHA the head.
func GitLabMergeRequest(merged bool) map[string]string {
	env := map[string]string{
		"CI": "true", "GITLAB_CI": "true", "CI_PIPELINE_SOURCE": "merge_request_event",
		"CI_SERVER_HOST": "gitlab.example.com", "CI_SERVER_URL": "https://gitlab.example.com",
		"CI_PROJECT_ID": "4242", "CI_PROJECT_PATH": GitLabProject, "CI_PROJECT_URL": "https://gitlab.example.com/acme/payments",
		"CI_MERGE_REQUEST_ID": "90417", "CI_MERGE_REQUEST_IID": "17", "CI_MERGE_REQUEST_TITLE": GitLabMRName,
		"CI_MERGE_REQUEST_PROJECT_ID": "4242", "CI_MERGE_REQUEST_PROJECT_PATH": GitLabProject,
		"CI_MERGE_REQUEST_PROJECT_URL":        "https://gitlab.example.com/acme/payments",
		"CI_MERGE_REQUEST_REF_PATH":           "refs/merge-requests/17/head",
		"CI_MERGE_REQUEST_SOURCE_BRANCH_NAME": "rotate-keys", "CI_MERGE_REQUEST_TARGET_BRANCH_NAME": "main",
		"CI_COMMIT_SHA": GitLabHeadSHA, "CI_COMMIT_REF_NAME": "rotate-keys", "CI_JOB_NAME": "scangate",
		"CI_PIPELINE_ID": "1048576", "CI_JOB_ID": "7340032",
	}
	if merged {
		env["CI_COMMIT_SHA"] = GitLabMergeSHA
		env["CI_MERGE_REQUEST_SOURCE_BRANCH_SHA"] = GitLabHeadSHA
		env["CI_MERGE_REQUEST_EVENT_TYPE"] = "merged_result"
	}
	return env
}
