package api_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
)

// findingsOf reads a scan's findings (one page of up to 100) as the
// listing shows them.
func (h *harness) findingsOf(scanID int) []map[string]any {
	h.t.Helper()
	resp := h.read("list-findings", &h.admin, map[string]string{"pr_scan_id": strconv.Itoa(scanID)}, "limit=100")
	var out []map[string]any
	for _, f := range mustOK(h.t, resp)["items"].([]any) {
		out = append(out, f.(map[string]any))
	}
	return out
}

// TestAllowlistFingerprints: an allowlist with fingerprints covers only
// the findings of its type, name and scope whose fingerprint it lists,
// when it is made, when a scan is recorded later and when its
// fingerprints change; an empty list on modify covers every fingerprint
// again; each change's counts are the findings judged differently, the
// audit entry says what changed, and check finds no drift.
func TestAllowlistFingerprints(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	sc := h.recordFindings("SECRET", `{"name":"sha256:f","path":"a.env","fingerprint":"fa"}`,
		`{"name":"sha256:f","path":"b.env","fingerprint":"fb"}`, `{"name":"sha256:f","path":"c.env"}`,
		`{"name":"sha256:g","path":"a.env","fingerprint":"fa"}`)
	id := int(sc["id"].(float64))
	a := mustOK(t, h.allow(`{"type":"SECRET","name":"sha256:f","repos":[100],"fingerprints":["fa"],"reason":"false_positive"}`))
	if a["secrets_updated"] != 1.0 {
		t.Errorf("fingerprints [fa]: secrets_updated %v; want 1 (sha256:g has fa too, but another name)", a["secrets_updated"])
	}
	if s, _, _ := h.counts(id); s != 3 {
		t.Errorf("secret count %v; want 3", s)
	}
	sup := func() []string {
		var out []string
		for _, f := range h.findingsOf(id) {
			out = append(out, fmt.Sprintf("%s:%v", f["path"], f["suppressed_by"]))
		}
		return out
	}
	if got, want := sup(), []string{"a.env:[1]", "b.env:[]", "c.env:[]", "a.env:[]"}; !slices.Equal(got, want) {
		t.Errorf("suppressed_by %v; want %v", got, want)
	}
	got := mustOK(t, h.read("get-allowlist", &h.admin, map[string]string{"whitelist_id": "1"}, ""))
	if fmt.Sprint(got["fingerprints"]) != "[fa]" {
		t.Errorf("GET shows fingerprints %v", got["fingerprints"])
	}
	// Another repository's finding of that fingerprint is outside its scope.
	other := mustOK(t, h.call("record-scan", jsonReq(&h.admin, `{"scan_type":"SECRET","vc_type":"github","vc_id":10,"vc_name":"acme",`+
		`"repo_id":101,"repo_name":"acme/web","webhook_id":3,"status":"completed","pr":{"pr_id":8,"pr_name":"n","pr_link":"l"},`+
		`"findings":[{"name":"sha256:f","fingerprint":"fa"}]}`)))
	if other["secret_count"] != 1.0 {
		t.Errorf("repository 101: secret count %v; want 1", other["secret_count"])
	}
	// A scan recorded after it: judged at recording.
	later := h.recordFindings("SECRET", `{"name":"sha256:f","fingerprint":"fa"}`, `{"name":"sha256:f","fingerprint":"fc"}`)
	if later["secret_count"] != 1.0 {
		t.Errorf("a later scan: secret count %v; want 1 (fc)", later["secret_count"])
	}
	// Adding one fingerprint counts its finding.
	if a := mustOK(t, h.modify(1, `{"fingerprints":["fa","fb"]}`)); a["secrets_updated"] != 1.0 {
		t.Errorf("[fa fb]: secrets_updated %v; want 1", a["secrets_updated"])
	}
	if s, _, _ := h.counts(id); s != 2 {
		t.Errorf("secret count %v; want 2", s)
	}
	// An empty list: every fingerprint of the name in its scope (c.env, whose
	// fingerprint is derived, and the later scan's fc).
	if a := mustOK(t, h.modify(1, `{"fingerprints":[]}`)); a["secrets_updated"] != 2.0 {
		t.Errorf("[]: secrets_updated %v; want 2", a["secrets_updated"])
	}
	if s, _, _ := h.counts(id); s != 1 {
		t.Errorf("secret count %v; want 1 (sha256:g)", s)
	}
	var changes []string
	for _, e := range h.auditEntries("allowlist.update") {
		c := e.Changes["fingerprints"]
		changes = append(changes, fmt.Sprint(c.From, "→", c.To))
	}
	if want := []string{"[fa fb]→[]", "[fa]→[fa fb]"}; !slices.Equal(changes, want) {
		t.Errorf("the audit entries' changes of fingerprints %v; want %v", changes, want)
	}
	h.noDrift()
}

// TestAllowlistFingerprintsRefused: bad fingerprints are 422 with
// pointers, on create and modify, and store nothing; an empty list is
// refused on create only.
func TestAllowlistFingerprintsRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	mustOK(t, h.allow(`{"type":"SECRET","name":"x"}`))
	before := len(h.items())
	many := make([]string, 101)
	for i := range many {
		many[i] = strconv.Quote("f" + strconv.Itoa(i))
	}
	for body, ptr := range map[string]string{
		`{"fingerprints":[` + strings.Join(many, ",") + `]}`:        "/fingerprints",
		`{"fingerprints":[""]}`:                                     "/fingerprints/0",
		`{"fingerprints":["a","` + strings.Repeat("é", 257) + `"]}`: "/fingerprints/1",
		`{"fingerprints":["a\u0007b"]}`:                             "/fingerprints/0",
		`{"fingerprints":["a\nb"]}`:                                 "/fingerprints/0",
		`{"fingerprints":"fa"}`:                                     "/fingerprints",
		`{"fingerprints":[1]}`:                                      "/fingerprints",
		`{"fingerprints":{"fa":true}}`:                              "/fingerprints",
		`{"fingerprints":["ok"],"paths":["a/[b"]}`:                  "/paths/0",
	} {
		for _, send := range []func(string) events.APIGatewayProxyResponse{
			func(b string) events.APIGatewayProxyResponse { return h.modify(1, b) },
			func(b string) events.APIGatewayProxyResponse {
				return h.allow(`{"type":"SECRET","name":"y",` + strings.TrimPrefix(b, "{"))
			},
		} {
			if ptrs := expectProblem(t, send(body), 422); !slices.Contains(ptrs, ptr) {
				t.Errorf("%s: pointers %v; want %s", body, ptrs, ptr)
			}
		}
	}
	if ptrs := expectProblem(t, h.allow(`{"type":"SECRET","name":"y","fingerprints":[]}`), 422); !slices.Contains(ptrs, "/fingerprints") {
		t.Errorf("[] on create: %v", ptrs)
	}
	if after := len(h.items()); after != before {
		t.Errorf("refused changes stored %d items", after-before)
	}
	// 100 fingerprints of 256 characters each are taken.
	max := make([]string, 100)
	for i := range max {
		max[i] = strconv.Quote(fmt.Sprintf("%03d", i) + strings.Repeat("é", 253))
	}
	mustOK(t, h.allow(`{"type":"SECRET","name":"y","fingerprints":[`+strings.Join(max, ",")+`]}`))
}
