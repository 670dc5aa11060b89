package localstack_test

import (
	"bufio"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// TestReadmeFromClone does what the README and docs/CI.md tell a new user,
// from a clean clone of the committed branch: make run, then the blocks in
// a second shell at the clone's root, once with the generated password
// (.build/admin-password) and once with SCANGATE_ADMIN_PASSWORD set in
// both shells. The blocks run three ways: in order on one make run
// started empty (make run FRESH=1); in order with make run restarted
// before each, on the state the earlier ones left (what make run keeps,
// and the admin's password still valid); and each alone, on a make run
// started empty. Each block must run to its end and show its own story's
// last step, the password that was set must show nowhere, and the clone
// must be left as it was cloned: git status --porcelain empty. It tests
// HEAD, not uncommitted changes.
func TestReadmeFromClone(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"git", "make", "curl", "gzip", "base64", "sha256sum"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skip(tool + " is not installed")
		}
	}
	head, err := exec.Command("git", "-C", "../..", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skip("not in a git checkout: " + err.Error())
	}
	bin := scangateBinary(t) // the client, for the cli-flow and first-token blocks
	clone := filepath.Join(t.TempDir(), "scangate")
	git(t, "", "clone", "--quiet", "--no-checkout", "../..", clone)
	git(t, clone, "checkout", "--quiet", strings.TrimSpace(string(head)))

	for _, c := range []struct{ name, password string }{
		{"generated password", ""},
		{"SCANGATE_ADMIN_PASSWORD", "a chosen $password-1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := withoutEnv(os.Environ(), "SCANGATE_ADMIN_PASSWORD", "API", "SCANGATE_URL", "SCANGATE_TOKEN", "SCANGATE_STATE", "SCANGATE_FRESH", "FRESH")
			if c.password != "" {
				env = append(env, "SCANGATE_ADMIN_PASSWORD="+c.password)
			}
			// start runs make run, started empty or on the kept state, and
			// checks what it says and writes of the password.
			start := func(t *testing.T, fresh bool) (string, func()) {
				t.Helper()
				api, printed, stop := makeRun(t, clone, env, fresh)
				_, err := os.Stat(filepath.Join(clone, ".build", "admin-password"))
				switch {
				case c.password != "" && strings.Contains(printed, c.password):
					t.Errorf("make run printed the password that was set: %s", printed)
				case c.password != "" && !errors.Is(err, fs.ErrNotExist):
					t.Errorf("make run left .build/admin-password with a password set: %v", err)
				case c.password == "" && err != nil:
					t.Errorf("make run generated a password but wrote no .build/admin-password: %v", err)
				case fresh != strings.Contains(printed, "state: started empty"):
					t.Errorf("make run (fresh %v) says:\n%s", fresh, printed)
				case !fresh && !strings.Contains(printed, "items loaded from .build/local-state.json"):
					t.Errorf("make run after a restart kept nothing:\n%s", printed)
				}
				return api, stop
			}
			run := func(t *testing.T, api string, b docStep) {
				t.Helper()
				cmd := exec.Command("bash", "-c", docBlock(t, filepath.Join(clone, b.doc), b.block))
				cmd.Dir = clone
				cmd.Env = append(env, "API="+api, "PATH="+filepath.Dir(bin)+":"+os.Getenv("PATH"))
				password := c.password
				if password == "" {
					password = adminPassword(t, clone)
				}
				// The password a person types at scangate login's prompt.
				cmd.Stdin = strings.NewReader(password + "\n")
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("%s's %s stopped: %v\n%s", b.doc, b.block, err, out)
				}
				for _, want := range b.shows {
					if !strings.Contains(string(out), want) {
						t.Errorf("%s's %s does not show %s:\n%s", b.doc, b.block, want, out)
					}
				}
				if c.password != "" && strings.Contains(string(out), c.password) {
					t.Errorf("%s's %s shows the password:\n%s", b.doc, b.block, out)
				}
			}

			t.Run("in order", func(t *testing.T) {
				api, stop := start(t, true)
				for _, b := range docSteps {
					run(t, api, b)
				}
				stop()
			})
			t.Run("in order, make run restarted before each", func(t *testing.T) {
				for _, b := range docSteps {
					api, stop := start(t, false)
					run(t, api, b)
					stop()
				}
			})
			t.Run("each alone", func(t *testing.T) {
				for _, b := range docSteps {
					api, stop := start(t, true)
					run(t, api, b)
					stop()
				}
			})
			if st := git(t, clone, "status", "--porcelain"); st != "" {
				t.Errorf("the blocks left the clone changed:\n%s", st)
			}
		})
	}
}

// docStep is a block a new user pastes, and what it must show: the steps
// of its story (a secret that blocks, then passes once allowlisted), its
// last step last.
type docStep struct {
	doc, block string
	shows      []string
}

// docSteps are the README's blocks and docs/CI.md's, in the order they come.
var docSteps = []docStep{
	{"README.md", "curl-flow", []string{`"secrets_updated":`, `"title":"Forbidden","status":403`, `"action":"allowlist.create"`}},
	{"README.md", "sarif-flow", []string{`"block_status":true`, `"secrets_updated":1`, `"blocked":false`}},
	{"README.md", "upload-flow", []string{`"status":"complete"`}},
	{"README.md", "cli-flow", []string{"#12: BLOCKED", "scangate upload: exit 1\n", "1 secret and 0 vulnerabilities judged anew", "#12: not blocked"}},
	{"README.md", "events-flow", []string{`"type":"webhook.test"`, "\n204\n"}},
	{"docs/CI.md", "first-token", []string{"\nsgt_"}},
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func withoutEnv(env []string, names ...string) []string {
	var out []string
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		keep := true
		for _, n := range names {
			keep = keep && name != n
		}
		if keep {
			out = append(out, kv)
		}
	}
	return out
}

// makeRun starts make run in dir on a free port (with FRESH=1 when fresh)
// and returns its API's URL once it listens, what it printed until then,
// and what stops it (its process group sent SIGTERM, as Ctrl-C would,
// then waited for: it has saved its state when stop returns). It is
// stopped when the test ends, if not before.
func makeRun(t *testing.T, dir string, env []string, fresh bool) (string, string, func()) {
	t.Helper()
	args := []string{"--no-print-directory", "run"}
	if fresh {
		args = append(args, "FRESH=1")
	}
	cmd := exec.Command("make", args...)
	cmd.Dir = dir
	cmd.Env = append(env, "SCANGATE_ADDR=127.0.0.1:0")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop := func() {
		once.Do(func() {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
			_ = cmd.Wait()
		})
	}
	t.Cleanup(stop)
	listening := regexp.MustCompile(`^scangate listening on (http://\S+/api)$`)
	var printed strings.Builder
	lines := bufio.NewScanner(stdout)
	for lines.Scan() {
		printed.WriteString(lines.Text() + "\n")
		if m := listening.FindStringSubmatch(lines.Text()); m != nil {
			// The admin's line follows; then drain the rest.
			if lines.Scan() {
				printed.WriteString(lines.Text() + "\n")
			}
			go func() { _, _ = io.Copy(io.Discard, stdout) }()
			return m[1], printed.String(), stop
		}
	}
	_ = cmd.Wait()
	t.Fatalf("make run ended before it listened:\n%s%s", printed.String(), stderr.String())
	return "", "", nil
}
