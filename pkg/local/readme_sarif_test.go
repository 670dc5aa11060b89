package local_test

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// TestReadmeSARIFFlow runs the README's SARIF example, as written: a log
// gzipped and base64-encoded into the envelope by a shell pipe, then an
// allowlist named sha256 of the secret's value, which covers it.
func TestReadmeSARIFFlow(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl is not installed")
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)<!-- sarif-flow -->\n```sh\n(.*?)```\n<!-- /sarif-flow -->").FindSubmatch(readme)
	if m == nil {
		t.Fatal("README.md has no sarif-flow block")
	}
	_, api, dir := startStack(t, -1)
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", string(m[1]))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "API="+api)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the SARIF flow failed: %v\n%s", err, out)
	}
	got := string(out)
	for _, want := range []string{
		`"scan_type":"SECRET"`, `"secret_count":1`, `"tools":[{"name":"gitleaks","version":"8.30.1"}]`,
		`"results":1,"recorded":1,"suppressed_in_source":0,"skipped":0}`,
		`"secrets_updated":1`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the SARIF flow's output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "fixture-not-a-live-key-42") {
		t.Errorf("an answer shows the secret's value:\n%s", got)
	}
}
