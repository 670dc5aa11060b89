package localstack_test

import (
	"fmt"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// githubWorkflow is what the tests read of docs/CI.md's GitHub Actions
// workflow.
type githubWorkflow struct {
	On   map[string]any `yaml:"on"`
	Jobs map[string]struct {
		Env   map[string]string `yaml:"env"`
		Steps []struct {
			Name string         `yaml:"name"`
			Uses string         `yaml:"uses"`
			With map[string]any `yaml:"with"`
			Run  string         `yaml:"run"`
		} `yaml:"steps"`
	} `yaml:"jobs"`
}

// gitlabJob is what the tests read of docs/CI.md's GitLab CI job.
type gitlabJob struct {
	Rules []struct {
		If string `yaml:"if"`
	} `yaml:"rules"`
	Variables    map[string]string `yaml:"variables"`
	BeforeScript []string          `yaml:"before_script"`
	Script       []string          `yaml:"script"`
}

// ciSnippets reads docs/CI.md's two snippets.
func ciSnippets(t *testing.T) (githubWorkflow, map[string]gitlabJob) {
	t.Helper()
	var wf githubWorkflow
	if err := yaml.Unmarshal([]byte(docBlock(t, "../../docs/CI.md", "github-workflow")), &wf); err != nil {
		t.Fatalf("the GitHub Actions workflow: %v", err)
	}
	var gl map[string]gitlabJob
	if err := yaml.Unmarshal([]byte(docBlock(t, "../../docs/CI.md", "gitlab-job")), &gl); err != nil {
		t.Fatalf("the GitLab CI job: %v", err)
	}
	return wf, gl
}

// TestCIDocsSnippets: the snippets of docs/CI.md are what CI systems read
// (the test that runs them against the local server is TestCIDocs):
// GitHub's workflow runs on pull requests and on pushes to the default
// branch, fetches the history (the merge base) and ends with scangate
// upload, which gates; GitLab's job runs in merge request pipelines and
// the default branch's push pipelines and does too.
func TestCIDocsSnippets(t *testing.T) {
	t.Parallel()
	wf, gl := ciSnippets(t)
	push, _ := wf.On["push"].(map[string]any)
	if _, ok := wf.On["pull_request"]; !ok || len(wf.Jobs) != 1 || fmt.Sprint(push["branches"]) != "[main]" {
		t.Errorf("the workflow runs on %v with %d jobs; want pull_request and push to main, one job", wf.On, len(wf.Jobs))
	}
	for name, job := range wf.Jobs {
		if co := job.Steps[0]; co.Uses != "actions/checkout@v4" || fmt.Sprint(co.With["fetch-depth"]) != "0" {
			t.Errorf("job %s: the checkout %+v does not fetch the history", name, co)
		}
	}
	for name, job := range wf.Jobs {
		if job.Env["SCANGATE_TOKEN"] != "${{ secrets.SCANGATE_TOKEN }}" || job.Env["SCANGATE_URL"] == "" {
			t.Errorf("job %s: the token does not come from the secrets: %v", name, job.Env)
		}
		last := job.Steps[len(job.Steps)-1].Run
		if !strings.HasPrefix(last, "scangate upload ") || strings.Contains(last, "--no-gate") {
			t.Errorf("job %s ends with %q; want scangate upload, gating", name, last)
		}
	}
	job, ok := gl["scangate"]
	if !ok || len(job.Rules) != 2 || !strings.Contains(job.Rules[0].If, `"merge_request_event"`) ||
		job.Rules[1].If != `$CI_PIPELINE_SOURCE == "push" && $CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH` || len(job.Script) == 0 {
		t.Fatalf("the GitLab job: %+v", gl)
	}
	if last := job.Script[len(job.Script)-1]; !strings.HasPrefix(last, "scangate upload ") || strings.Contains(last, "--no-gate") {
		t.Errorf("the GitLab job ends with %q; want scangate upload, gating", last)
	}
	for _, line := range append(job.Script, job.BeforeScript...) {
		if strings.Contains(line, "SCANGATE_TOKEN") {
			t.Errorf("a line names the token: %q", line)
		}
	}
}
