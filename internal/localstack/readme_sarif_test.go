package localstack_test

import (
	"strings"
	"testing"
)

// TestReadmeSARIFFlow runs the README's SARIF example, as written: a log
// gzipped and base64-encoded into the envelope by a shell pipe, then an
// allowlist named sha256 of the secret's value, which covers it.
func TestReadmeSARIFFlow(t *testing.T) {
	t.Parallel()
	got := runReadmeBlock(t, "sarif-flow")
	for _, want := range []string{
		`"scan_type":"SECRET"`, `"secret_count":1`, `"tools":[{"name":"gitleaks","version":"8.30.1"}]`,
		`"results":1,"recorded":1,"suppressed_in_source":0,"skipped":0}`,
		`"block_status":true`, `"secrets_updated":1`, `"blocked":false,`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the SARIF flow's output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "fixture-not-a-live-key-") {
		t.Errorf("an answer shows the secret's value:\n%s", got)
	}
}
