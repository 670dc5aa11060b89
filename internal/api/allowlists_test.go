package api_test

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/scangate/scangate/internal/scangate"
)

// allow creates an allowlist as the admin; a body without a reason gets
// false_positive (creating one requires a reason: TestCreateNeedsAReason).
func (h *harness) allow(body string) events.APIGatewayProxyResponse {
	h.t.Helper()
	return h.call("create-allowlist", jsonReq(&h.admin, withReason(body)))
}

// withReason adds a reason to an allowlist body that has none.
func withReason(body string) string {
	if strings.Contains(body, `"reason"`) || !strings.HasPrefix(body, "{") || strings.TrimSpace(body) == "{}" {
		return body
	}
	return `{"reason":"false_positive",` + strings.TrimPrefix(body, "{")
}

func (h *harness) modify(id int, body string) events.APIGatewayProxyResponse {
	h.t.Helper()
	r := jsonReq(&h.admin, body)
	r.params = map[string]string{"whitelist_id": strconv.Itoa(id)}
	return h.call("update-allowlist", r)
}

// mustOK decodes a 200 or 201 answer.
func mustOK(t testing.TB, resp events.APIGatewayProxyResponse) map[string]any {
	t.Helper()
	if resp.StatusCode != 200 && resp.StatusCode != 201 {
		t.Fatalf("status %d: %s", resp.StatusCode, resp.Body)
	}
	return decode(t, resp)
}

// counts reads a scan's secret and vulnerability counts and block status.
func (h *harness) counts(id int) (float64, float64, bool) {
	h.t.Helper()
	sc := mustOK(h.t, h.get(&h.admin, strconv.Itoa(id)))
	return sc["secret_count"].(float64), sc["vulnerability_count"].(float64), sc["block_status"].(bool)
}

func (h *harness) noDrift() {
	h.t.Helper()
	r, err := h.env.Store.Check(context.Background())
	if err != nil {
		h.t.Fatal(err)
	}
	if len(r.Drift) > 0 {
		h.t.Fatalf("check reports drift:\n%v", r.Drift)
	}
	if len(r.Running)+len(r.Pending) > 0 {
		h.t.Fatalf("check reports work still running %v, and gates it is to correct %v", r.Running, r.Pending)
	}
}

// matchingScans records the scans the matching cases run against:
// 1: SECRET in vc 10, repo 100, PR 1: sha256:aa, sha256:bb
// 2: VULNERABILITY in vc 10, repo 100, PR 1: CVE-2021-44228, CVE-2022-0001
// 3: SECRET in vc 11, repo 200, PR 2: sha256:aa
// 4: SECRET in vc 10, repo 101, PR 3: SHA256:AA (secrets compare exactly)
func matchingScans(h *harness) {
	h.t.Helper()
	for _, s := range []scanReq{
		{VcID: 10, RepoID: 100, PR: 1, Status: "completed", Findings: []string{"sha256:aa", "sha256:bb"}},
		{Type: "VULNERABILITY", VcID: 10, RepoID: 100, PR: 1, Status: "completed", Findings: []string{"CVE-2021-44228", "CVE-2022-0001"}},
		{VcID: 11, RepoID: 200, PR: 2, Status: "completed", Findings: []string{"sha256:aa"}},
		{VcID: 10, RepoID: 101, PR: 3, Status: "completed", Findings: []string{"SHA256:AA"}},
	} {
		mustOK(h.t, h.record(s))
	}
}

func TestAllowlistMatching(t *testing.T) {
	t.Parallel()
	type counts struct{ s1, v2, s3, s4 float64 }
	for _, c := range []struct {
		name         string
		body         string
		secrets, vul float64
		want         counts
	}{
		{"inactive", `{"type":"SECRET","name":"sha256:aa","global_":true,"active":false}`, 0, 0, counts{2, 2, 1, 1}},
		{"other type", `{"type":"VULNERABILITY","name":"sha256:aa","global_":true}`, 0, 0, counts{2, 2, 1, 1}},
		{"other name", `{"type":"SECRET","name":"sha256:zz","global_":true}`, 0, 0, counts{2, 2, 1, 1}},
		{"secret name compared exactly", `{"type":"SECRET","name":"SHA256:aa","global_":true}`, 0, 0, counts{2, 2, 1, 1}},
		{"vulnerability ignoring case", `{"type":"VULNERABILITY","name":"cve-2021-44228","global_":true}`, 0, 1, counts{2, 1, 1, 1}},
		{"global", `{"type":"SECRET","name":"sha256:aa","global_":true}`, 2, 0, counts{1, 2, 0, 1}},
		{"not global, no scope", `{"type":"SECRET","name":"sha256:aa"}`, 0, 0, counts{2, 2, 1, 1}},
		{"repo scope", `{"type":"SECRET","name":"sha256:aa","repos":[200]}`, 1, 0, counts{2, 2, 0, 1}},
		{"integration scope", `{"type":"SECRET","name":"sha256:aa","vcs":[10]}`, 1, 0, counts{1, 2, 1, 1}},
		{"integration scope, vulnerability", `{"type":"VULNERABILITY","name":"CVE-2022-0001","vcs":[10, 11]}`, 0, 1, counts{2, 1, 1, 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			matchingScans(h)
			resp := h.allow(c.body)
			a := mustOK(t, resp)
			if resp.StatusCode != http.StatusCreated || resp.Headers["Location"] != "/api/whitelist/1" {
				t.Fatalf("create: %d %v", resp.StatusCode, resp.Headers)
			}
			if a["secrets_updated"] != c.secrets || a["vulnerabilities_updated"] != c.vul {
				t.Errorf("updated %v/%v; want %v/%v", a["secrets_updated"], a["vulnerabilities_updated"], c.secrets, c.vul)
			}
			s1, _, _ := h.counts(1)
			_, v2, _ := h.counts(2)
			s3, _, b3 := h.counts(3)
			s4, _, _ := h.counts(4)
			if got := (counts{s1, v2, s3, s4}); got != c.want {
				t.Errorf("counts %+v; want %+v", got, c.want)
			}
			if b3 != (c.want.s3 > 0) {
				t.Errorf("scan 3 block status %v with %v secrets", b3, c.want.s3)
			}
			h.noDrift()
		})
	}
}

func TestAllowlistResponse(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	a := mustOK(t, h.allow(`{"type":"SECRET","name":"sha256:aa","comment":"test key, not a real secret"}`))
	want := []string{"comments", "created_by", "created_on", "id", "name", "secrets_updated", "type", "updated_by", "vulnerabilities_updated"}
	if k := sortedKeys(a); !reflect.DeepEqual(k, want) {
		t.Fatalf("fields %v; want %v", k, want)
	}
	if a["id"] != 1.0 || a["created_by"] != 1.0 || a["updated_by"] != 1.0 || a["name"] != "sha256:aa" || a["type"] != "SECRET" ||
		!reflect.DeepEqual(a["comments"], []any{1.0}) || a["secrets_updated"] != 0.0 || a["vulnerabilities_updated"] != 0.0 {
		t.Errorf("allowlist %v", a)
	}
	b := mustOK(t, h.allow(`{"type":"VULNERABILITY","name":"CVE-1"}`))
	if !reflect.DeepEqual(b["comments"], []any{}) {
		t.Errorf("comments %v; want []", b["comments"])
	}
	// A user may change it; updated_by follows, created_by stays.
	u := h.member("ursula", scangate.RoleUser)
	r := jsonReq(&u, `{"comment":"second"}`)
	r.params = map[string]string{"whitelist_id": "1"}
	c := mustOK(t, h.call("update-allowlist", r))
	if c["created_by"] != 1.0 || c["updated_by"] != float64(u.ID) || c["created_on"] != a["created_on"] || !reflect.DeepEqual(c["comments"], []any{1.0, 2.0}) {
		t.Errorf("after a user's change: %v", c)
	}
	ro := h.member("rory", scangate.RoleReadonly)
	r.caller = &ro
	expectProblem(t, h.call("update-allowlist", r), 403)
	expectProblem(t, h.call("create-allowlist", jsonReq(&ro, `{"type":"SECRET","name":"x"}`)), 403)
}

func TestAllowlistPartialUpdate(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	matchingScans(h)
	a := mustOK(t, h.allow(`{"type":"SECRET","name":"sha256:aa","global_":true,"comment":"first"}`))
	for _, body := range []string{`{}`, `{"type":null,"name":null,"active":null,"global_":null,"repos":null,"vcs":null,"comment":null}`, `{"comment":""}`} {
		b := mustOK(t, h.modify(1, body))
		if b["name"] != "sha256:aa" || b["type"] != "SECRET" || !reflect.DeepEqual(b["comments"], []any{1.0}) ||
			b["secrets_updated"] != 0.0 || b["vulnerabilities_updated"] != 0.0 || b["created_on"] != a["created_on"] {
			t.Errorf("%s changed the allowlist: %v", body, b)
		}
		if s1, _, _ := h.counts(1); s1 != 1 {
			t.Errorf("%s: scan 1 has %v secrets; want 1 (still suppressed)", body, s1)
		}
	}
	expectProblem(t, h.modify(2, `{}`), 404)
	for body, ptrs := range map[string][]string{
		`{"type":"secret"}`:        {"/type"},
		`{"repos":[1,"2"]}`:        {"/repos/1"},
		`{"vcs":[1.5]}`:            {"/vcs/0"},
		`{"repos":"1"}`:            {"/repos"},
		`{"active":"yes"}`:         {"/active"},
		`{"name":""}`:              {"/name"},
		`{"comment":5}`:            {"/comment"},
		`{"global":true}`:          {"/global"},
		`{"repos":[0]}`:            {"/repos/0"},
		`{"name":1,"type":"NONE"}`: {"/type", "/name"},
	} {
		if got := expectProblem(t, h.modify(1, body), 422); !reflect.DeepEqual(got, ptrs) {
			t.Errorf("%s: pointers %v; want %v", body, got, ptrs)
		}
	}
	for body, ptrs := range map[string][]string{
		`{}`:                                          {"/type", "/name", "/reason"},
		`{"type":null,"name":"x"}`:                    {"/type", "/reason"},
		`{"type":"SECRET","name":null}`:               {"/name", "/reason"},
		`{"type":"SECRET","name":"x"}`:                {"/reason"},
		`{"type":"SECRET","name":"x","reason":null}`:  {"/reason"},
		`{"type":"SECRET","name":"x","reason":"yes"}`: {"/reason"},
	} {
		if got := expectProblem(t, h.call("create-allowlist", jsonReq(&h.admin, body)), 422); !reflect.DeepEqual(got, ptrs) {
			t.Errorf("create %s: pointers %v; want %v", body, got, ptrs)
		}
	}
	if !strings.Contains(h.call("create-allowlist", jsonReq(&h.admin, `{"type":"SECRET","name":"x"}`)).Body, "is required: one of false_positive") {
		t.Error("a create without a reason is not told the reasons it may give")
	}
	expectProblem(t, h.call("update-allowlist", request{caller: &h.admin, body: `{}`, params: map[string]string{"whitelist_id": "x"}, headers: map[string]string{"Content-Type": "application/json"}}), 422)
	if n := h.countItems()["ALLOW"]; n != 1 {
		t.Fatalf("%d allowlists stored; want 1", n)
	}
	h.noDrift()
}

func TestAllowlistChangesMoveFindings(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	matchingScans(h)
	mustOK(t, h.allow(`{"type":"SECRET","name":"sha256:aa","global_":true}`))
	type want struct {
		secrets, vul float64
		s1, v2, s3   float64
		pr1s, pr2s   float64
	}
	step := func(body string, w want) {
		t.Helper()
		a := mustOK(t, h.modify(1, body))
		if a["secrets_updated"] != w.secrets || a["vulnerabilities_updated"] != w.vul {
			t.Errorf("%s: updated %v/%v; want %v/%v", body, a["secrets_updated"], a["vulnerabilities_updated"], w.secrets, w.vul)
		}
		s1, _, b1 := h.counts(1)
		_, v2, _ := h.counts(2)
		s3, _, b3 := h.counts(3)
		if s1 != w.s1 || v2 != w.v2 || s3 != w.s3 || b1 != (w.s1 > 0) || b3 != (w.s3 > 0) {
			t.Errorf("%s: counts %v %v %v blocks %v %v; want %v %v %v", body, s1, v2, s3, b1, b3, w.s1, w.v2, w.s3)
		}
		pr1 := mustOK(t, h.get(&h.admin, "1"))["pr"].(map[string]any)
		pr2 := mustOK(t, h.get(&h.admin, "3"))["pr"].(map[string]any)
		if pr1["secret_count"] != w.pr1s || pr1["vulnerability_count"] != w.v2 || pr2["secret_count"] != w.pr2s {
			t.Errorf("%s: PR counts %v/%v and %v", body, pr1["secret_count"], pr1["vulnerability_count"], pr2["secret_count"])
		}
		h.noDrift()
	}
	step(`{"active":false}`, want{2, 0, 2, 2, 1, 2, 1})
	step(`{"active":true}`, want{2, 0, 1, 2, 0, 1, 0})
	step(`{"global_":false,"repos":[100]}`, want{1, 0, 1, 2, 1, 1, 1})
	step(`{"repos":[],"vcs":[11]}`, want{2, 0, 2, 2, 0, 2, 0})
	step(`{"name":"sha256:bb","vcs":[10]}`, want{2, 0, 1, 2, 1, 1, 1})
	step(`{"type":"VULNERABILITY","name":"CVE-2021-44228"}`, want{1, 1, 2, 1, 1, 2, 1})
	step(`{"global_":true,"name":"cve-2022-0001","vcs":[]}`, want{0, 2, 2, 1, 1, 2, 1})
}

func TestTwoAllowlistsOnOneFinding(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	matchingScans(h)
	mustOK(t, h.allow(`{"type":"SECRET","name":"sha256:aa","repos":[100]}`))
	b := mustOK(t, h.allow(`{"type":"SECRET","name":"sha256:aa","vcs":[10]}`))
	if b["secrets_updated"] != 1.0 {
		t.Errorf("the second allowlist's own rule covers one more finding: %v", b["secrets_updated"])
	}
	a := mustOK(t, h.modify(1, `{"active":false}`))
	if a["secrets_updated"] != 1.0 {
		t.Errorf("deactivating: secrets_updated %v; want 1 by its own rule", a["secrets_updated"])
	}
	if s1, _, _ := h.counts(1); s1 != 1 {
		t.Fatalf("scan 1 has %v secrets; the other allowlist still suppresses sha256:aa", s1)
	}
	mustOK(t, h.modify(2, `{"active":false}`))
	if s1, _, _ := h.counts(1); s1 != 2 {
		t.Fatalf("scan 1 has %v secrets; want 2", s1)
	}
	h.noDrift()
}

func TestRecordingAppliesAllowlists(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	mustOK(t, h.allow(`{"type":"VULNERABILITY","name":"CVE-2021-44228","repos":[100]}`))
	sc := mustOK(t, h.record(scanReq{Type: "VULNERABILITY", Status: "completed", RepoID: 100, Findings: []string{"cve-2021-44228"}}))
	if sc["vulnerability_count"] != 0.0 || sc["block_status"] != false {
		t.Fatalf("a covered finding counted: %v", sc)
	}
	sc = mustOK(t, h.record(scanReq{Type: "VULNERABILITY", Status: "completed", RepoID: 101, Findings: []string{"cve-2021-44228"}}))
	if sc["vulnerability_count"] != 1.0 {
		t.Fatalf("a finding in another repository was suppressed: %v", sc)
	}
	h.noDrift()
	_ = fmt.Sprint()
}
