package localstack_test

import (
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
			Name string `yaml:"name"`
			Uses string `yaml:"uses"`
			Run  string `yaml:"run"`
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
// GitHub's workflow runs on pull requests and ends with scangate upload,
// which gates; GitLab's job runs in merge request pipelines and does too.
func TestCIDocsSnippets(t *testing.T) {
	t.Parallel()
	wf, gl := ciSnippets(t)
	if _, ok := wf.On["pull_request"]; !ok || len(wf.Jobs) != 1 {
		t.Errorf("the workflow runs on %v with %d jobs; want pull_request, one job", wf.On, len(wf.Jobs))
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
	if !ok || len(job.Rules) != 1 || !strings.Contains(job.Rules[0].If, `"merge_request_event"`) || len(job.Script) == 0 {
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
