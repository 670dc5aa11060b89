package local_test

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
	"syscall"
	"testing"
)

// TestReadmeFromClone does what the README tells a new user, from a clean
// clone of the committed branch: make run, then the README's blocks in
// order in a second shell at the clone's root, once with the generated
// password (.build/admin-password) and once with SCANGATE_ADMIN_PASSWORD
// set in both shells. Each block must run to its end, the password that
// was set must show nowhere, and the clone must be left as it was cloned:
// git status --porcelain empty. It tests HEAD, not uncommitted changes.
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
	bin := scangateBinary(t) // the client, for the cli-flow block
	clone := filepath.Join(t.TempDir(), "scangate")
	git(t, "", "clone", "--quiet", "--no-checkout", "../..", clone)
	git(t, clone, "checkout", "--quiet", strings.TrimSpace(string(head)))

	for _, c := range []struct{ name, password string }{
		{"generated password", ""},
		{"SCANGATE_ADMIN_PASSWORD", "a chosen $password-1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := withoutEnv(os.Environ(), "SCANGATE_ADMIN_PASSWORD", "API")
			if c.password != "" {
				env = append(env, "SCANGATE_ADMIN_PASSWORD="+c.password)
			}
			api, printed := makeRun(t, clone, env)
			_, err := os.Stat(filepath.Join(clone, ".build", "admin-password"))
			switch {
			case c.password != "" && strings.Contains(printed, c.password):
				t.Errorf("make run printed the password that was set: %s", printed)
			case c.password != "" && !errors.Is(err, fs.ErrNotExist):
				t.Errorf("make run left .build/admin-password with a password set: %v", err)
			case c.password == "" && err != nil:
				t.Errorf("make run generated a password but wrote no .build/admin-password: %v", err)
			}
			for _, b := range []struct{ block, last string }{
				{"curl-flow", `"action":"allowlist.create"`},
				{"sarif-flow", `"secrets_updated":1`},
				{"upload-flow", `"status":"complete"`},
				{"cli-flow", "#12: not blocked"},
				{"events-flow", `"type":"webhook.test"`},
			} {
				cmd := exec.Command("bash", "-c", docBlock(t, filepath.Join(clone, "README.md"), b.block))
				cmd.Dir = clone
				cmd.Env = append(env, "API="+api, "PATH="+filepath.Dir(bin)+":"+os.Getenv("PATH"))
				out, err := cmd.CombinedOutput()
				switch {
				case err != nil:
					t.Fatalf("the README's %s stopped: %v\n%s", b.block, err, out)
				case !strings.Contains(string(out), b.last):
					t.Errorf("the README's %s did not get to %s:\n%s", b.block, b.last, out)
				case c.password != "" && strings.Contains(string(out), c.password):
					t.Errorf("the README's %s shows the password:\n%s", b.block, out)
				}
			}
			if st := git(t, clone, "status", "--porcelain"); st != "" {
				t.Errorf("the README's flows left the clone changed:\n%s", st)
			}
		})
	}
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

// makeRun starts make run in dir on a free port and returns its API's URL
// once it listens, and what it printed until then. It is stopped (its
// process group sent SIGTERM, as Ctrl-C would) when the test ends.
func makeRun(t *testing.T, dir string, env []string) (string, string) {
	t.Helper()
	cmd := exec.Command("make", "--no-print-directory", "run")
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
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		_ = cmd.Wait()
	})
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
			return m[1], printed.String()
		}
	}
	_ = cmd.Wait()
	t.Fatalf("make run ended before it listened:\n%s%s", printed.String(), stderr.String())
	return "", ""
}
