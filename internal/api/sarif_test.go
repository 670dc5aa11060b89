package api_test

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
)

// upload sends a SARIF log (as it is, or base64 of its gzip) in the
// envelope of a scan of repo 100, PR 7.
func (h *harness) upload(log any, extra string) events.APIGatewayProxyResponse {
	h.t.Helper()
	b, _ := json.Marshal(log)
	return h.uploadRaw(string(b), extra)
}

// uploadRaw sends sarif, the JSON text of the sarif member as it is, in the
// envelope of a scan of repo 100, PR 7, with extra members.
func (h *harness) uploadRaw(sarif, extra string) events.APIGatewayProxyResponse {
	h.t.Helper()
	env := `{"vc_type":"github","vc_id":10,"vc_name":"acme","repo_id":100,"repo_name":"acme/api","webhook_id":3,` +
		`"pr":{"pr_id":7,"pr_name":"Add login","pr_link":"https://git.example.com/acme/api/pull/7"}` + extra + `,"sarif":` + sarif + `}`
	return h.send("record-sarif", &h.admin, events.APIGatewayProxyRequest{Body: env, Headers: map[string]string{"Content-Type": "application/json"}})
}

func golden(t *testing.T, name string) map[string]any {
	t.Helper()
	b, err := os.ReadFile("../sarif/testdata/golden/" + name)
	if err != nil {
		t.Fatal(err)
	}
	var log map[string]any
	if err := json.Unmarshal(b, &log); err != nil {
		t.Fatal(err)
	}
	return log
}

func gzipBase64(t testing.TB, log any) string {
	t.Helper()
	b, _ := json.Marshal(log)
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	_, _ = w.Write(b)
	_ = w.Close()
	return base64.StdEncoding.EncodeToString(buf.Bytes())
}

func sha(v string) string {
	s := sha256.Sum256([]byte(v))
	return "sha256:" + hex.EncodeToString(s[:])
}

// TestSARIFUploadRecordsGitleaks: gitleaks' real log, sent as base64 of its
// gzip, becomes one SECRET scan recorded as POST /pr/scan records one;
// its findings are named sha256 of the planted values; a global allowlist
// for one planted value suppresses exactly its occurrences.
func TestSARIFUploadRecordsGitleaks(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	resp := h.upload(gzipBase64(t, golden(t, "gitleaks.sarif")), `,"other_details":{"job":"ci-17"}`)
	out := mustOK(t, resp)
	if resp.StatusCode != 201 || out["results"] != 8.0 || out["recorded"] != 7.0 || out["skipped"] != 0.0 || out["suppressed_in_source"] != 0.0 {
		t.Fatalf("answer %s", resp.Body)
	}
	scans := out["scans"].([]any)
	if len(scans) != 1 {
		t.Fatalf("%d scans; want one SECRET scan", len(scans))
	}
	sc := scans[0].(map[string]any)
	details := sc["other_details"].(map[string]any)
	tools, _ := json.Marshal(details["tools"])
	if sc["scan_type"] != "SECRET" || sc["status"] != "completed" || sc["secret_count"] != 7.0 || sc["block_status"] != true ||
		details["job"] != "ci-17" || !strings.Contains(string(tools), `"name":"gitleaks"`) {
		t.Fatalf("scan %v", sc)
	}
	// Read back as GET shows it.
	got := mustOK(t, h.get(&h.admin, fmt.Sprint(sc["id"])))
	if got["secret_count"] != 7.0 || got["id"] != sc["id"] {
		t.Errorf("GET answers %v", got)
	}
	// The AWS key is planted once; the GitHub token twice (a duplicate on
	// the same line is recorded once, so 2 of the 7).
	a := mustOK(t, h.allow(fmt.Sprintf(`{"type":"SECRET","name":%q,"global_":true}`, sha("AKIAF5MAYXPHDO7ZX2XD"))))
	if a["secrets_updated"] != 1.0 {
		t.Errorf("the AWS key's allowlist covers %v findings; want 1", a["secrets_updated"])
	}
	if s, _, _ := h.counts(int(sc["id"].(float64))); s != 6 {
		t.Errorf("after the allowlist: %v secrets; want 6", s)
	}
	h.noDrift()
	for _, it := range h.items() {
		for _, v := range it {
			if strings.Contains(v, "AKIAF5MAYXPHDO7ZX2XD") || strings.Contains(v, "ghp_PuhyO35HYJodIBWbMEgBpb3ysHrvYkp3YhaB") {
				t.Fatalf("a planted secret value is stored: %v", it)
			}
		}
	}
}

// TestSARIFRedactedNamesByLocation: gitleaks run with --redact records its
// findings under loc: names.
func TestSARIFRedactedNamesByLocation(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	sc := mustOK(t, h.upload(golden(t, "gitleaks-redacted.sarif"), "")) // sent as an object
	id := fmt.Sprint(sc["scans"].([]any)[0].(map[string]any)["id"])
	n := 0
	for _, it := range h.items() {
		if it["PK"] == `{"Value":"SCAN#`+id+`"}` && strings.HasPrefix(it["SK"], `{"Value":"FINDING#`) {
			n++
			if !strings.HasPrefix(it["name"], `{"Value":"loc:`) {
				t.Errorf("a redacted finding named %s", it["name"])
			}
		}
	}
	if n == 0 {
		t.Fatal("no findings recorded")
	}
}

// osvLog is an osv-scanner-style log: a CVE with its GHSA alias, no location.
func osvLog(extraResult string) map[string]any {
	var log map[string]any
	_ = json.Unmarshal([]byte(`{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"osv-scanner","version":"1.9.0","rules":[
		{"id":"CVE-2021-44228","deprecatedIds":["GHSA-jfh8-c2jp-5v3q"]}]}},
		"results":[{"ruleId":"CVE-2021-44228","message":{"text":"log4j"}}`+extraResult+`]}]}`), &log)
	return log
}

// TestSARIFAliasesMeetAllowlists: an allowlist named with the GHSA alias
// suppresses the CVE finding that lists it, whichever comes first.
func TestSARIFAliasesMeetAllowlists(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	first := mustOK(t, h.upload(osvLog(""), ""))["scans"].([]any)[0].(map[string]any)
	if first["scan_type"] != "VULNERABILITY" || first["vulnerability_count"] != 1.0 {
		t.Fatalf("scan %v", first)
	}
	a := mustOK(t, h.allow(`{"type":"VULNERABILITY","name":"ghsa-jfh8-c2jp-5v3q","global_":true}`))
	if a["vulnerabilities_updated"] != 1.0 {
		t.Errorf("the alias's allowlist covers %v findings; want 1", a["vulnerabilities_updated"])
	}
	if _, v, _ := h.counts(int(first["id"].(float64))); v != 0 {
		t.Errorf("the CVE finding still counts: %v", v)
	}
	// Recorded after the allowlist, a finding listing the alias is suppressed at once.
	later := mustOK(t, h.upload(osvLog(""), ""))["scans"].([]any)[0].(map[string]any)
	if later["vulnerability_count"] != 0.0 || later["block_status"] != false {
		t.Errorf("a later upload: %v", later)
	}
	h.noDrift()
}

// TestSARIFInSourceSuppression: a result suppressed in source is recorded
// suppressed and never counts.
func TestSARIFInSourceSuppression(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	out := mustOK(t, h.upload(osvLog(`,{"ruleId":"CVE-2021-44228","message":{"text":"again"},
		"locations":[{"physicalLocation":{"artifactLocation":{"uri":"go.sum"},"region":{"startLine":4}}}],
		"suppressions":[{"kind":"inSource","status":"accepted"}]}`), ""))
	sc := out["scans"].([]any)[0].(map[string]any)
	if out["suppressed_in_source"] != 1.0 || sc["vulnerability_count"] != 1.0 {
		t.Fatalf("answer %v", out)
	}
	// An allowlist that covers both takes only the counted one away.
	if a := mustOK(t, h.allow(`{"type":"VULNERABILITY","name":"CVE-2021-44228","global_":true}`)); a["vulnerabilities_updated"] != 2.0 {
		t.Errorf("vulnerabilities_updated %v; want 2 (its own rule covers both)", a["vulnerabilities_updated"])
	}
	if _, v, block := h.counts(int(sc["id"].(float64))); v != 0 || block {
		t.Errorf("after the allowlist: %v, block %v", v, block)
	}
	mustOK(t, h.modify(1, `{"active":false}`))
	if _, v, _ := h.counts(int(sc["id"].(float64))); v != 1 {
		t.Errorf("after deactivating: %v; the in-source suppression stays", v)
	}
	h.noDrift()
}

// TestSARIFBadInputStoresNothing: every bad input answers its status and
// stores nothing.
func TestSARIFBadInputStoresNothing(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	before := len(h.items())
	results := func(n int) []any {
		r := make([]any, n)
		for i := range r {
			r[i] = map[string]any{"ruleId": "B101", "message": map[string]any{"text": "x"}}
		}
		return r
	}
	run := func(r []any) map[string]any {
		return map[string]any{"tool": map[string]any{"driver": map[string]any{"name": "bandit"}}, "results": r}
	}
	runs := make([]any, 21)
	for i := range runs {
		runs[i] = run(nil)
	}
	var bomb bytes.Buffer
	w := gzip.NewWriter(&bomb)
	_, _ = w.Write([]byte(`{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"x"}},"results":[],"properties":{"p":"`))
	zeros := bytes.Repeat([]byte("0"), 1<<20)
	for range 101 {
		_, _ = w.Write(zeros)
	}
	_ = w.Close()
	for _, c := range []struct {
		name   string
		log    any
		extra  string
		status int
		ptr    string
	}{
		{"21 runs", map[string]any{"version": "2.1.0", "runs": runs}, "", 413, ""},
		{"25,001 results", map[string]any{"version": "2.1.0", "runs": []any{run(results(25_001))}}, "", 413, ""},
		{"a gzip bomb", base64.StdEncoding.EncodeToString(bomb.Bytes()), "", 413, ""},
		{"not base64", "@@@", "", 400, ""},
		{"base64 of no gzip", base64.StdEncoding.EncodeToString([]byte("plain")), "", 400, ""},
		{"version 2.0.0", map[string]any{"version": "2.0.0", "runs": []any{}}, "", 422, "/sarif/version"},
		{"a result without message", map[string]any{"version": "2.1.0", "runs": []any{run([]any{map[string]any{"ruleId": "B101"}})}}, "", 422, "/sarif/runs/0/results/0/message"},
		{"no sarif", nil, "", 422, "/sarif"},
		{"a bad envelope", osvLog(""), `,"status":"done"`, 422, "/status"},
	} {
		var resp events.APIGatewayProxyResponse
		if c.log == nil {
			resp = h.upload(nil, c.extra)
		} else {
			resp = h.upload(c.log, c.extra)
		}
		ptrs := expectProblem(t, resp, c.status)
		if c.ptr != "" && (len(ptrs) == 0 || ptrs[0] != c.ptr) {
			t.Errorf("%s: pointers %v; want %s", c.name, ptrs, c.ptr)
		}
	}
	if after := len(h.items()); after != before {
		t.Errorf("bad uploads stored %d items", after-before)
	}
}
