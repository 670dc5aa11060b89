package localstack_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/scangate/scangate/internal/cienv/cienvtest"
)

// TestScannerNewCode: real gitleaks, semgrep and bandit over a git
// repository of the scanners' fixtures. A push to main records its
// analyses through the client; then a pull request's branch inserts lines
// at the top of every file (each old finding moves down) and adds one new
// finding for each scanner (a GitLab token in a new file; yaml.load in a
// new module, which semgrep and bandit both report). Its upload, by the
// same client from the checkout (which computes every result's
// primaryLocationLineHash and the merge base), is judged against main's
// analyses at that merge base: in each of the three categories exactly
// the added finding is new, every moved one unchanged, none fixed (semgrep's
// secret rule makes a fourth category, of one unchanged finding).
func TestScannerNewCode(t *testing.T) {
	t.Parallel()
	scanners := os.Getenv("SCANGATE_SCANNERS")
	if scanners == "" {
		t.Skip("set SCANGATE_SCANNERS to the scanners make test-scanners installs (.build/scanners)")
	}
	e := startCLI(t)
	repo := newFixtureRepo(t)
	base := repo.commit("the fixtures")
	out := t.TempDir() // the logs, outside the checkout the scanners read
	home := t.TempDir()
	scan := func(label string) []string {
		t.Helper()
		logs := []string{filepath.Join(out, label+"-gitleaks.sarif"), filepath.Join(out, label+"-semgrep.sarif"), filepath.Join(out, label+"-bandit.sarif")}
		rules, err := filepath.Abs("../sarif/testdata/scanners/semgrep-rules.yml")
		if err != nil {
			t.Fatal(err)
		}
		for _, argv := range [][]string{
			{filepath.Join(scanners, "bin", "gitleaks"), "dir", ".", "--no-banner", "--log-level", "error", "--exit-code", "0", "--report-format", "sarif", "--report-path", logs[0]},
			{filepath.Join(scanners, "semgrep", "bin", "semgrep"), "scan", "--metrics=off", "--disable-version-check", "--config", rules, "--sarif", "--output", logs[1], "--quiet", "."},
			{filepath.Join(scanners, "bandit", "bin", "bandit"), "-r", ".", "-q", "-x", "./.git", "-f", "sarif", "-o", logs[2], "--exit-zero"},
		} {
			cmd := exec.Command(argv[0], argv[1:]...)
			cmd.Dir = repo.dir
			cmd.Env = []string{"HOME=" + home, "PATH=/usr/local/bin:/usr/bin:/bin", "SEMGREP_ENABLE_VERSION_CHECK=0", "SEMGREP_SEND_METRICS=off"}
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", filepath.Base(argv[0]), err, b)
			}
		}
		return logs
	}
	upload := func(env map[string]string, logs []string) (int, string) {
		t.Helper()
		// git is on the job's PATH, as on CI runners (the merge base).
		env["SCANGATE_URL"], env["SCANGATE_TOKEN"], env["PATH"] = e.api, e.admin, "/usr/local/bin:/usr/bin:/bin"
		code, stdout, stderr := e.run(t, job{env: env}, append([]string{"upload", "--checkout", repo.dir}, logs...)...)
		if stderr != "" {
			t.Errorf("upload said on standard error (results it could not hash?): %s", stderr)
		}
		return code, stdout
	}

	// The push to main: three branch analyses at the base commit.
	code, stdout := upload(cienvtest.GitHubPush(t, t.TempDir(), "main", base), scan("main"))
	if code != 0 || !strings.Contains(stdout, "branch main analysed at "+base[:12]+" (3 logs)") || strings.Contains(stdout, "\nbase ") {
		t.Fatalf("the push's upload: exit %d\n%s", code, stdout)
	}

	// The pull request: main moves on after it branched (its tip is what
	// the payload names), the PR inserts lines and adds one finding each.
	repo.git("checkout", "-q", "-b", "feature")
	for _, f := range []string{".env", "deploy.sh", "config/settings.yaml", "app.py"} {
		repo.insertTop(f, "# Lines the pull request inserts above every finding.\n#\n#\n")
	}
	repo.write("config/gitlab.env", "# Fake token generated for scangate's scanner tests; it grants nothing.\nGITLAB_TOKEN=glpat-Xq7RmB2kLp9VwZt4NcYh\n")
	repo.write("worker.py", "\"\"\"A worker the pull request adds (scangate's scanner tests). Never run it.\"\"\"\nimport yaml\n\n\ndef parse(text):\n    return yaml.load(text)\n")
	head := repo.commit("the pull request")
	prLogs := scan("pr")
	repo.git("checkout", "-q", "main")
	repo.write("README.md", "main moved on\n")
	tip := repo.commit("main moves on")
	repo.git("checkout", "-q", "feature")

	env := cienvtest.GitHubPullRequest(t, t.TempDir())
	payload := fmt.Sprintf(`{"pull_request":{"number":7,"title":"Add a worker","html_url":"https://github.com/%s/pull/7",`+
		`"head":{"sha":%q},"base":{"ref":"main","sha":%q}}}`, cienvtest.GitHubRepo, head, tip)
	if err := os.WriteFile(env["GITHUB_EVENT_PATH"], []byte(payload), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout = upload(env, prLogs)
	if code != 1 || !strings.Contains(stdout, "base main ("+base[:12]+", the merge base of the head and main in the checkout)") ||
		!strings.Contains(stdout, "new in this pull request (not on main): 3 findings\n") {
		t.Fatalf("the pull request's upload: exit %d\n%s", code, stdout)
	}

	// The gate: each category compared with main's analysis at the merge
	// base, exactly one new, none fixed.
	env["SCANGATE_URL"], env["SCANGATE_TOKEN"] = e.api, e.admin
	code, stdout, _ = e.run(t, job{env: env}, "gate", "--json")
	var g struct {
		BaseRef    string `json:"base_ref"`
		Categories []struct {
			ScanType string `json:"scan_type"`
			Category string
			Baseline *struct {
				CommitSHA string `json:"commit_sha"`
				Match     string
			}
			New       int64 `json:"new_count"`
			Unchanged int64 `json:"unchanged_count"`
			Absent    int64 `json:"absent_count"`
		}
	}
	if code != 1 || json.Unmarshal([]byte(stdout), &g) != nil || g.BaseRef != "main" || len(g.Categories) != 4 {
		t.Fatalf("gate --json: exit %d %s", code, stdout)
	}
	wantNew := map[string]int64{"SECRET gitleaks": 1, "SECRET semgrep-oss": 0, "VULNERABILITY bandit": 1, "VULNERABILITY semgrep-oss": 1}
	for _, c := range g.Categories {
		k := c.ScanType + " " + c.Category
		if want, ok := wantNew[k]; !ok || c.Baseline == nil || c.Baseline.Match != "exact" || c.Baseline.CommitSHA != base || c.New != want || c.Absent != 0 || c.Unchanged == 0 {
			t.Errorf("%s: baseline %+v, %d new, %d unchanged, %d fixed; want main at %s (exact), %d new, none fixed",
				k, c.Baseline, c.New, c.Unchanged, c.Absent, base[:12], want)
		}
	}

	// The new findings are the added ones, by rule and file.
	code, stdout, _ = e.run(t, job{env: env}, "findings", "--all", "--baseline-state", "new", "--json")
	var doc struct {
		Scans []struct {
			Scan struct {
				OtherDetails struct{ Category string } `json:"other_details"`
			}
			Findings []struct {
				Rule, Path string
				Line       int64
			}
		}
	}
	if code != 0 || json.Unmarshal([]byte(stdout), &doc) != nil {
		t.Fatalf("findings --baseline-state new: exit %d %s", code, stdout)
	}
	var added []string
	for _, s := range doc.Scans {
		for _, f := range s.Findings {
			// semgrep names a rule after its file's path: the rule's own id is last.
			rule := f.Rule[strings.LastIndex(f.Rule, ".")+1:]
			added = append(added, fmt.Sprintf("%s %s %s:%d", s.Scan.OtherDetails.Category, rule, f.Path, f.Line))
		}
	}
	sort.Strings(added)
	want := []string{"bandit B506 worker.py:6", "gitleaks gitlab-pat config/gitlab.env:2", "semgrep-oss yaml-unsafe-load worker.py:6"}
	if fmt.Sprint(added) != fmt.Sprint(want) {
		t.Errorf("the new findings:\n%s\nwant\n%s", strings.Join(added, "\n"), strings.Join(want, "\n"))
	}
	e.check(t, 8)
}

// fixtureRepo is a git repository of the scanners' secrets and Python
// fixtures.
type fixtureRepo struct {
	t   *testing.T
	dir string
}

func newFixtureRepo(t *testing.T) fixtureRepo {
	t.Helper()
	r := fixtureRepo{t: t, dir: t.TempDir()}
	for _, src := range []string{"../sarif/testdata/scanners/secrets", "../sarif/testdata/scanners/python"} {
		if err := os.CopyFS(r.dir, os.DirFS(src)); err != nil {
			t.Fatal(err)
		}
	}
	r.git("init", "-q", "-b", "main")
	return r
}

// git runs git in the repository, as a user of its own.
func (r fixtureRepo) git(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", append([]string{"-C", r.dir, "-c", "user.name=scangate tests", "-c", "user.email=tests@example.invalid", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// commit commits every change and gives the commit's hash.
func (r fixtureRepo) commit(message string) string {
	r.git("add", "-A")
	r.git("commit", "-q", "-m", message)
	return r.git("rev-parse", "HEAD")
}

func (r fixtureRepo) write(name, text string) {
	r.t.Helper()
	if err := os.WriteFile(filepath.Join(r.dir, name), []byte(text), 0o600); err != nil {
		r.t.Fatal(err)
	}
}

// insertTop inserts text at the top of a file.
func (r fixtureRepo) insertTop(name, text string) {
	r.t.Helper()
	b, err := os.ReadFile(filepath.Join(r.dir, name))
	if err != nil {
		r.t.Fatal(err)
	}
	r.write(name, text+string(b))
}
