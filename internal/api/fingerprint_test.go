package api_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

// findingsOf lists a scan's findings (one page).
func findingsOf(h *harness, scan string) []map[string]any {
	h.t.Helper()
	page := mustOK(h.t, h.read("list-findings", &h.admin, map[string]string{"pr_scan_id": scan}, "limit=100"))
	var out []map[string]any
	for _, it := range page["items"].([]any) {
		out = append(out, it.(map[string]any))
	}
	return out
}

// TestInlineFingerprints: POST /pr/scan findings take an optional
// fingerprint (source scanner), else derived (:N in line order); the
// same findings moved down keep theirs; an allowlist's re-evaluation
// keeps them; bad fingerprints are 422.
func TestInlineFingerprints(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	body := func(shift int) string {
		return `{"scan_type":"SECRET","vc_type":"github","vc_id":10,"vc_name":"v","repo_id":100,"repo_name":"o/r","webhook_id":3,` +
			`"pr":{"pr_id":7,"pr_name":"n","pr_link":"l"},"findings":[` +
			`{"name":"sha256:aa","rule":"k","path":"a.go","line":` + strconv.Itoa(20+shift) + `},` +
			`{"name":"sha256:aa","rule":"k","path":"a.go","line":` + strconv.Itoa(10+shift) + `},` +
			`{"name":"sha256:bb","rule":"k","path":"a.go","line":3,"fingerprint":"gh/abc:1"}]}`
	}
	mustOK(t, h.call("record-scan", jsonReq(&h.admin, body(0))))
	fs := findingsOf(h, "1")
	if len(fs) != 3 || fs[2]["fingerprint"] != "gh/abc:1" || fs[2]["fingerprint_source"] != "scanner" ||
		fs[0]["fingerprint_source"] != "derived" || !strings.HasSuffix(fs[0]["fingerprint"].(string), ":2") ||
		!strings.HasSuffix(fs[1]["fingerprint"].(string), ":1") || len(fs[0]["fingerprint"].(string)) != 66 {
		b, _ := json.Marshal(fs)
		t.Fatalf("findings %s", b)
	}
	mustOK(t, h.call("record-scan", jsonReq(&h.admin, body(7))))
	moved := findingsOf(h, "2")
	for i := range fs {
		if moved[i]["fingerprint"] != fs[i]["fingerprint"] {
			t.Errorf("finding %d moved down 7 lines: fingerprint %v, was %v", i, moved[i]["fingerprint"], fs[i]["fingerprint"])
		}
	}
	mustOK(t, h.allow(`{"type":"SECRET","name":"sha256:aa","global_":true,"reason":"false_positive"}`))
	after := findingsOf(h, "1")
	for i := range fs {
		if after[i]["fingerprint"] != fs[i]["fingerprint"] || after[i]["fingerprint_source"] != fs[i]["fingerprint_source"] {
			t.Errorf("finding %d after re-evaluation: %v, was %v", i, after[i], fs[i])
		}
	}
	if after[0]["suppressed"] != true {
		t.Errorf("the allowlist did not re-evaluate: %v", after[0])
	}
	for name, fp := range map[string]string{"empty": `""`, "long": `"` + strings.Repeat("f", 257) + `"`, "control": `"a\u0000b"`, "number": `7`} {
		b := strings.Replace(body(0), `"fingerprint":"gh/abc:1"`, `"fingerprint":`+fp, 1)
		if resp := h.call("record-scan", jsonReq(&h.admin, b)); resp.StatusCode != 422 {
			t.Errorf("%s fingerprint: %d %s", name, resp.StatusCode, resp.Body)
		}
	}
}

// TestSARIFFingerprints: a result's primaryLocationLineHash is kept as
// given; its other partialFingerprints (or fingerprints) sorted and
// joined (scanner); else derived from the rule, path, name and snippet,
// which holds when lines above it move.
func TestSARIFFingerprints(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	log := func(shift int) map[string]any {
		res := func(line int, extra map[string]any) map[string]any {
			r := map[string]any{"ruleId": "py.sqli", "message": map[string]any{"text": "m"},
				"locations": []any{map[string]any{"physicalLocation": map[string]any{"artifactLocation": map[string]any{"uri": "app.py"},
					"region": map[string]any{"startLine": line + shift, "snippet": map[string]any{"text": "cur.execute(q % x)"}}}}}}
			for k, v := range extra {
				r[k] = v
			}
			return r
		}
		return map[string]any{"version": "2.1.0", "runs": []any{map[string]any{
			"tool": map[string]any{"driver": map[string]any{"name": "semgrep", "rules": []any{map[string]any{"id": "py.sqli"}}}},
			"results": []any{
				res(3, map[string]any{"partialFingerprints": map[string]any{"primaryLocationLineHash": "abc123:1"}}),
				res(5, map[string]any{"partialFingerprints": map[string]any{"z": "2", "a": "1"}}),
				res(7, map[string]any{"fingerprints": map[string]any{"k/v1": "x"}}),
				res(9, nil),
			}}}}
	}
	mustOK(t, h.upload(log(0), ""))
	fs := findingsOf(h, "1")
	if len(fs) != 4 {
		t.Fatalf("%d findings", len(fs))
	}
	want := [][2]string{{"abc123:1", "primaryLocationLineHash"}, {"a=1;z=2", "scanner"}, {"k/v1=x", "scanner"}}
	for i, w := range want {
		if fs[i]["fingerprint"] != w[0] || fs[i]["fingerprint_source"] != w[1] {
			t.Errorf("finding %d: %v %v; want %v", i, fs[i]["fingerprint"], fs[i]["fingerprint_source"], w)
		}
	}
	if fs[3]["fingerprint_source"] != "derived" || !strings.HasSuffix(fs[3]["fingerprint"].(string), ":1") {
		t.Errorf("the derived one: %v", fs[3])
	}
	mustOK(t, h.upload(log(12), ""))
	moved := findingsOf(h, "2")
	if moved[3]["fingerprint"] != fs[3]["fingerprint"] || moved[3]["line"] == fs[3]["line"] {
		t.Errorf("moved 12 lines down: %v, was %v", moved[3], fs[3])
	}
}
