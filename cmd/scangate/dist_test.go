package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestDist builds the client as make dist does, for this machine's
// platform only, and reads its version: the commit of the checkout, its
// date and git describe's name, as make dist injected them.
func TestDist(t *testing.T) {
	for _, tool := range []string{"make", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skip(tool + " is not installed")
		}
	}
	dir := t.TempDir()
	platform := runtime.GOOS + "/" + runtime.GOARCH
	out, err := exec.Command("make", "-C", "../..", "dist", "DIST_DIR="+dir, "DIST_PLATFORMS="+platform).CombinedOutput()
	if err != nil {
		t.Fatalf("make dist: %v\n%s", err, out)
	}
	bin := filepath.Join(dir, "scangate-"+runtime.GOOS+"-"+runtime.GOARCH)
	sums, err := os.ReadFile(filepath.Join(dir, "SHA256SUMS"))
	if err != nil || !strings.HasSuffix(strings.TrimSpace(string(sums)), "  scangate-"+runtime.GOOS+"-"+runtime.GOARCH) {
		t.Errorf("SHA256SUMS: %q %v", sums, err)
	}
	out, err = exec.Command(bin, "version", "--json").Output()
	if err != nil {
		t.Fatal(err)
	}
	var b build
	if err := json.Unmarshal(out, &b); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	head := gitOut(t, "rev-parse", "HEAD")
	describe := gitOut(t, "describe", "--tags", "--always", "--dirty")
	date := gitOut(t, "log", "-1", "--format=%cd", "--date=format-local:%Y-%m-%dT%H:%M:%SZ")
	if b.Commit != head || b.Version != describe || b.Date != date || b.OS != runtime.GOOS || b.Arch != runtime.GOARCH {
		t.Errorf("version %+v; want commit %s, version %s, date %s", b, head, describe, date)
	}
}

func gitOut(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Env = append(os.Environ(), "TZ=UTC")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %v: %v", args, err)
	}
	return strings.TrimSpace(string(out))
}
