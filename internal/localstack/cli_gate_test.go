package localstack_test

// The tests of the client that need the gate (GET /pr/{pr_id}/gate).

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scangate/scangate/internal/cienv/cienvtest"
)

// TestCLIGate: a CI job's upload of a log with a secret is blocked (exit
// 1), so is its gate; an allowlist for the secret in the GitHub
// repository unblocks the GitHub pull request (exit 0) and not the GitLab
// merge request with the same secret, until the allowlist names its
// project too.
func TestCLIGate(t *testing.T) {
	t.Parallel()
	e := startCLI(t)
	gh, gl := e.github(t, e.admin), e.gitlab(e.admin)
	leaks := e.file(t, "gitleaks.sarif", gitleaksLog(cliSecret))
	code, out, errOut := e.run(t, gh, "upload", leaks)
	if code != 1 || !strings.Contains(out, "Codertocat/Hello-World#2: BLOCKED") || !strings.Contains(out, "blocked by:\n  SECRET gitleaks: scan ") {
		t.Fatalf("upload: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = e.run(t, gh, "gate", "--json")
	var g struct {
		PRID    int64  `json:"pr_id"`
		HeadSHA string `json:"head_sha"`
		Blocked bool
		Reasons []struct {
			Kind, Category string
			ScanType       string `json:"scan_type"`
			Count          int64
		}
		Categories []struct{ Category string }
	}
	if code != 1 || json.Unmarshal([]byte(out), &g) != nil || !g.Blocked || len(g.Reasons) != 1 || g.Reasons[0].Kind != "findings" ||
		g.Reasons[0].Category != "gitleaks" || g.Reasons[0].Count != 1 || len(g.Categories) != 1 {
		t.Errorf("gate --json: exit %d %s", code, out)
	}
	// The head of the pull request, from the event payload, not GITHUB_SHA.
	if g.HeadSHA != cienvtest.GitHubHeadSHA {
		t.Errorf("the gate's head_sha %q; want the pull request's head %s", g.HeadSHA, cienvtest.GitHubHeadSHA)
	}
	if code, _, _ := e.run(t, gl, "upload", leaks); code != 1 {
		t.Errorf("the GitLab merge request's upload: exit %d, want 1", code)
	}

	name := "sha256:" + sha256hex(cliSecret)
	if code, out, errOut := e.run(t, gh, "allowlist", "create", "--type", "SECRET", "--name", name,
		"--repo", fmt.Sprint(cienvtest.GitHubRepoID), "--reason", "used_in_tests"); code != 0 {
		t.Fatalf("allowlist create: exit %d %s%s", code, out, errOut)
	}
	code, out, _ = e.run(t, gh, "gate")
	if code != 0 || !strings.Contains(out, "Codertocat/Hello-World#2: not blocked") || strings.Contains(out, "blocked by") {
		t.Errorf("the GitHub gate after the allowlist: exit %d\n%s", code, out)
	}
	if code, _, _ := e.run(t, gh, "upload", leaks); code != 0 {
		t.Errorf("an upload of the allowlisted secret: exit %d, want 0", code)
	}
	if code, _, _ := e.run(t, gl, "gate"); code != 1 {
		t.Errorf("the GitLab gate, which the allowlist does not cover: exit %d, want 1", code)
	}
	if code, _, _ := e.run(t, gl, "allowlist", "update", "1", "--repo", fmt.Sprint(cienvtest.GitHubRepoID), "--repo", fmt.Sprint(cienvtest.GitLabProjectID)); code != 0 {
		t.Errorf("allowlist update: exit %d", code)
	}
	if code, out, _ := e.run(t, gl, "gate"); code != 0 || !strings.Contains(out, "acme/payments#17: not blocked") {
		t.Errorf("the GitLab gate after the allowlist names its project: exit %d\n%s", code, out)
	}
}

// TestCIDocs runs the scan and upload steps of docs/CI.md's GitHub Actions
// workflow and GitLab CI job, as written, with the environment each CI
// sets for a pull request, over a checkout of the scanners' fixtures
// (planted secrets and vulnerable code), against the local server: the
// gate blocks (exit 1); once every finding is allowlisted, the same step
// passes (exit 0). The install steps are replaced by the pinned scanners
// of make test-scanners and the client built here, on PATH; semgrep reads
// the fixtures' rules instead of p/default (no network).
func TestCIDocs(t *testing.T) {
	t.Parallel()
	scanners := os.Getenv("SCANGATE_SCANNERS")
	if scanners == "" {
		t.Skip("set SCANGATE_SCANNERS to the scanners make test-scanners installs (.build/scanners)")
	}
	wf, gl := ciSnippets(t)
	bin := filepath.Join(t.TempDir(), "bin")
	for name, target := range map[string]string{
		"scangate": scangateBinary(t), "gitleaks": filepath.Join(scanners, "bin", "gitleaks"),
		"semgrep": filepath.Join(scanners, "semgrep", "bin", "semgrep"),
	} {
		if err := os.MkdirAll(bin, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	rules, err := filepath.Abs("../sarif/testdata/scanners/semgrep-rules.yml")
	if err != nil {
		t.Fatal(err)
	}
	t.Run("github", func(t *testing.T) {
		t.Parallel()
		e := startCLI(t)
		env := e.github(t, e.admin).env
		var steps []string
		for _, job := range wf.Jobs {
			for k, v := range job.Env {
				if !strings.Contains(v, "${{") {
					env[k] = v
				}
			}
			for _, s := range job.Steps {
				if s.Run != "" && !strings.HasPrefix(s.Name, "Install") {
					steps = append(steps, s.Run)
				}
			}
		}
		runCISteps(t, e, env, bin, rules, steps, "Codertocat/Hello-World#2")
	})
	t.Run("gitlab", func(t *testing.T) {
		t.Parallel()
		e := startCLI(t)
		env := e.gitlab(e.admin).env
		job := gl["scangate"]
		for k, v := range job.Variables {
			env[k] = v
		}
		// GitLab runs the script's lines in one shell, stopping at the first that fails.
		runCISteps(t, e, env, bin, rules, []string{strings.Join(job.Script[:len(job.Script)-1], "\n"), job.Script[len(job.Script)-1]}, "acme/payments#17")
	})
}

// runCISteps runs a job's steps in a checkout of the fixtures; the last
// step (the upload) must block, then pass once every finding is
// allowlisted.
func runCISteps(t *testing.T, e cliEnv, env map[string]string, bin, rules string, steps []string, label string) {
	t.Helper()
	// A checkout of the fixtures the scanners run over, alone (startCLI's
	// holds files of the other tests' logs).
	e.dir = t.TempDir()
	if err := os.CopyFS(e.dir, os.DirFS("../sarif/testdata/scanners/secrets")); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(e.dir, os.DirFS("../sarif/testdata/scanners/python")); err != nil {
		t.Fatal(err)
	}
	env["PATH"], env["HOME"], env["SEMGREP_RULES"] = bin+":/usr/local/bin:/usr/bin:/bin", t.TempDir(), rules
	step := func(script string) (int, string) {
		cmd := exec.Command("bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script)
		cmd.Dir = e.dir
		for k, v := range env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		out, err := cmd.CombinedOutput()
		if strings.Contains(string(out), env["SCANGATE_TOKEN"]) {
			t.Errorf("step %q printed the token", script)
		}
		if exit, ok := err.(*exec.ExitError); ok {
			return exit.ExitCode(), string(out)
		} else if err != nil {
			t.Fatal(err)
		}
		return 0, string(out)
	}
	for _, s := range steps[:len(steps)-1] {
		if code, out := step(s); code != 0 {
			t.Fatalf("step %q: exit %d\n%s", s, code, out)
		}
	}
	for _, f := range []string{"gitleaks.sarif", "semgrep.sarif"} {
		if _, err := os.Stat(filepath.Join(e.dir, f)); err != nil {
			t.Fatalf("the scan step wrote no %s: %v", f, err)
		}
	}
	upload := steps[len(steps)-1]
	code, out := step(upload)
	if code != 1 || !strings.Contains(out, label+": BLOCKED") || !strings.Contains(out, "SECRET") || !strings.Contains(out, "VULNERABILITY") {
		t.Fatalf("the upload step: exit %d, want 1 (blocked)\n%s", code, out)
	}
	allowlistAll(t, e, env)
	if code, out := step(upload); code != 0 || !strings.Contains(out, label+": not blocked") {
		t.Errorf("the upload step once every finding is allowlisted: exit %d\n%s", code, out)
	}
	if _, err := fs.Stat(os.DirFS(e.dir), "gitleaks.sarif"); err != nil {
		t.Error(err)
	}
}

// allowlistAll allowlists, with the client, every finding that counts
// against the job's pull request.
func allowlistAll(t *testing.T, e cliEnv, env map[string]string) {
	t.Helper()
	j := job{env: env}
	code, out, errOut := e.run(t, j, "findings", "--json")
	var doc struct {
		Scans []struct {
			Scan struct {
				ScanType string `json:"scan_type"`
				RepoID   int64  `json:"repo_id"`
			}
			Findings []struct{ Name string }
		}
	}
	if code != 0 || json.Unmarshal([]byte(out), &doc) != nil {
		t.Fatalf("findings: exit %d %s%s", code, out, errOut)
	}
	done := map[string]bool{}
	for _, s := range doc.Scans {
		for _, f := range s.Findings {
			if done[s.Scan.ScanType+f.Name] {
				continue
			}
			done[s.Scan.ScanType+f.Name] = true
			if code, out, errOut := e.run(t, j, "allowlist", "create", "--type", s.Scan.ScanType, "--name", f.Name,
				"--repo", fmt.Sprint(s.Scan.RepoID), "--reason", "false_positive"); code != 0 {
				t.Fatalf("allowlist create %s: exit %d %s%s", f.Name, code, out, errOut)
			}
		}
	}
	if len(done) == 0 {
		t.Fatal("no finding to allowlist")
	}
}
