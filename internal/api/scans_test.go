package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/scangate/scangate/internal/scangate"
)

// scanReq is a scan to record; fields left empty get plausible values.
type scanReq struct {
	Type     string
	VcID     int64
	RepoID   int64
	PR       int64
	Status   string
	Findings []string
	Extra    string // more members, with a leading comma
}

func (s scanReq) body() string {
	if s.Type == "" {
		s.Type = "SECRET"
	}
	if s.VcID == 0 {
		s.VcID = 10
	}
	if s.RepoID == 0 {
		s.RepoID = 100
	}
	if s.PR == 0 {
		s.PR = 7
	}
	var fs []string
	for _, n := range s.Findings {
		fs = append(fs, fmt.Sprintf(`{"name":%q,"rule":"rule-1","path":"src/main.go","line":12}`, n))
	}
	status := ""
	if s.Status != "" {
		status = fmt.Sprintf(`,"status":%q`, s.Status)
	}
	return fmt.Sprintf(`{"scan_type":%q,"vc_type":"github","vc_id":%d,"vc_name":"acme-github","repo_id":%d,"repo_name":"acme/api",`+
		`"webhook_id":3,"pr":{"pr_id":%d,"pr_name":"Add login","pr_link":"https://github.com/acme/api/pull/%d"},"findings":[%s]%s%s}`,
		s.Type, s.VcID, s.RepoID, s.PR, s.PR, strings.Join(fs, ","), status, s.Extra)
}

func (h *harness) record(s scanReq) events.APIGatewayProxyResponse {
	h.t.Helper()
	return h.call("record-scan", jsonReq(&h.admin, s.body()))
}

func (h *harness) get(c *scangate.Caller, id string) events.APIGatewayProxyResponse {
	h.t.Helper()
	return h.call("get-scan", request{caller: c, params: map[string]string{"pr_scan_id": id}})
}

func sortedKeys(m map[string]any) []string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func TestScanShapeAndDefaults(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	resp := h.record(scanReq{})
	if resp.StatusCode != http.StatusCreated || resp.Headers["Location"] != "/api/pr/scan/1" {
		t.Fatalf("record: %d %v %s", resp.StatusCode, resp.Headers, resp.Body)
	}
	var got events.APIGatewayProxyResponse
	trips := h.env.CountTrips(func() { got = h.get(&h.admin, "1") })
	if trips > 2 {
		t.Errorf("get scan: %d round trips; budget 2", trips)
	}
	if got.StatusCode != http.StatusOK {
		t.Fatalf("get: %d %s", got.StatusCode, got.Body)
	}
	if got.Body != resp.Body {
		t.Errorf("GET answers %s\nbut the record answered %s", got.Body, resp.Body)
	}
	sc := decode(t, got)
	want := []string{"block_status", "branch", "created_at", "id", "other_details", "pr", "pr_id", "repo_id", "repo_name", "scan_type", "secret_count",
		"stat_url", "status", "vc_id", "vc_name", "vc_type", "vulnerability_count", "webhook_id"}
	if k := sortedKeys(sc); !reflect.DeepEqual(k, want) {
		t.Fatalf("scan fields %v; want %v", k, want)
	}
	pr := sc["pr"].(map[string]any)
	wantPR := []string{"base_ref", "base_sha", "created_at", "id", "last_scan", "pr_id", "pr_link", "pr_name", "repo_id", "secret_count", "vc_id",
		"vulnerability_count", "webhook_id"}
	if k := sortedKeys(pr); !reflect.DeepEqual(k, wantPR) {
		t.Fatalf("PR fields %v; want %v", k, wantPR)
	}
	checks := map[string]any{
		"id": 1.0, "pr_id": 1.0, "vc_id": 10.0, "webhook_id": 3.0, "repo_id": 100.0, "vc_type": "github", "scan_type": "SECRET",
		"vc_name": "acme-github", "repo_name": "acme/api", "status": "pending", "block_status": true, "stat_url": nil,
		"secret_count": 0.0, "vulnerability_count": 0.0, "branch": nil,
	}
	for k, v := range checks {
		if sc[k] != v {
			t.Errorf("%s = %v; want %v", k, sc[k], v)
		}
	}
	if d, ok := sc["other_details"].(map[string]any); !ok || !reflect.DeepEqual(d, map[string]any{"category": "default"}) {
		t.Errorf("other_details = %v; want its category alone, default", sc["other_details"])
	}
	prChecks := map[string]any{"id": 1.0, "pr_id": 7.0, "pr_name": "Add login", "pr_link": "https://github.com/acme/api/pull/7",
		"repo_id": 100.0, "vc_id": 10.0, "webhook_id": 3.0, "last_scan": sc["created_at"], "created_at": sc["created_at"],
		"secret_count": 0.0, "vulnerability_count": 0.0, "base_ref": nil, "base_sha": nil}
	for k, v := range prChecks {
		if pr[k] != v {
			t.Errorf("pr.%s = %v; want %v", k, pr[k], v)
		}
	}
}

func TestScanCountsAndBlockStatus(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for _, c := range []struct {
		req          scanReq
		secrets, vul float64
		block        bool
	}{
		{scanReq{Status: "completed", Findings: []string{"sha256:aa", "sha256:bb", "sha256:aa"}}, 3, 0, true},
		{scanReq{Status: "completed"}, 0, 0, false},
		{scanReq{Status: "failed"}, 0, 0, true},
		{scanReq{Status: "processing"}, 0, 0, true},
		{scanReq{Type: "VULNERABILITY", Status: "completed", Findings: []string{"CVE-2021-44228"}}, 0, 1, true},
	} {
		sc := decode(t, h.record(c.req))
		if sc["secret_count"] != c.secrets || sc["vulnerability_count"] != c.vul || sc["block_status"] != c.block || sc["status"] != c.req.Status {
			t.Errorf("%+v: got %v %v %v %v", c.req, sc["secret_count"], sc["vulnerability_count"], sc["block_status"], sc["status"])
		}
	}
	// The details given are returned as given, with the scan's category.
	sc := decode(t, h.record(scanReq{Extra: `,"stat_url":"https://ci.example.com/1","other_details":{"tool":"gitleaks","args":["-v"]}`}))
	if sc["stat_url"] != "https://ci.example.com/1" ||
		!reflect.DeepEqual(sc["other_details"], map[string]any{"tool": "gitleaks", "args": []any{"-v"}, "category": "default"}) {
		t.Errorf("details: %v %v", sc["stat_url"], sc["other_details"])
	}
}

func TestPRRecord(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	first := decode(t, h.record(scanReq{Status: "completed", Findings: []string{"a", "b"}}))
	vuln := decode(t, h.record(scanReq{Type: "VULNERABILITY", Status: "completed", Findings: []string{"CVE-1", "CVE-2", "CVE-3"}}))
	third := decode(t, h.record(scanReq{Status: "completed", Findings: []string{"c"}, Extra: ``}))
	other := decode(t, h.record(scanReq{PR: 8}))
	if first["pr_id"] != vuln["pr_id"] || first["pr_id"] != third["pr_id"] || other["pr_id"] == first["pr_id"] {
		t.Fatalf("PR ids %v %v %v %v: one PR for the first three, another for the fourth", first["pr_id"], vuln["pr_id"], third["pr_id"], other["pr_id"])
	}
	// Reading the first scan shows its PR as it is now.
	pr := decode(t, h.get(&h.admin, "1"))["pr"].(map[string]any)
	if pr["last_scan"] != third["created_at"] || pr["created_at"] != first["created_at"] || pr["secret_count"] != 1.0 || pr["vulnerability_count"] != 3.0 {
		t.Errorf("PR %v: last_scan should be the third scan's, counts those of the newest scan of each type (1, 3)", pr)
	}
	// The same number in another repository or integration is another PR.
	a := decode(t, h.record(scanReq{RepoID: 101}))
	b := decode(t, h.record(scanReq{VcID: 11}))
	if a["pr_id"] == first["pr_id"] || b["pr_id"] == first["pr_id"] || a["pr_id"] == b["pr_id"] {
		t.Errorf("PR ids %v %v %v", first["pr_id"], a["pr_id"], b["pr_id"])
	}
}

func TestGetScanErrors(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.record(scanReq{})
	expectProblem(t, h.get(&h.admin, "2"), 404)
	for _, bad := range []string{"abc", "0", "-1", "9223372036854775808", "1e3", " 1"} {
		ptrs := expectProblem(t, h.get(&h.admin, bad), 422)
		if !reflect.DeepEqual(ptrs, []string{"/pr_scan_id"}) {
			t.Errorf("%q: pointers %v", bad, ptrs)
		}
	}
	expectProblem(t, h.get(nil, "1"), 401)
	for _, role := range []scangate.Role{scangate.RoleUser, scangate.RoleReadonly} {
		c := scangate.Caller{ID: 50, Username: "x", Role: role}
		if resp := h.get(&c, "1"); resp.StatusCode != 200 {
			t.Errorf("%s reading a scan: %d", role, resp.StatusCode)
		}
	}
	ro := h.member("rory", scangate.RoleReadonly)
	expectProblem(t, h.call("record-scan", jsonReq(&ro, scanReq{}.body())), 403)
	u := h.member("yves", scangate.RoleUser)
	if resp := h.call("record-scan", jsonReq(&u, scanReq{}.body())); resp.StatusCode != 201 {
		t.Errorf("user recording a scan: %d %s", resp.StatusCode, resp.Body)
	}
}

// countItems counts the table's items by kind.
func (h *harness) countItems() map[string]int {
	n := map[string]int{}
	for _, it := range h.items() {
		var sk struct{ Value string }
		_ = json.Unmarshal([]byte(it["SK"]), &sk)
		kind, _, _ := strings.Cut(sk.Value, "#")
		n[kind]++
	}
	return n
}

func TestRecordScanValidation(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	many := make([]string, 1001)
	for i := range many {
		many[i] = fmt.Sprintf("f%d", i)
	}
	for _, c := range []struct {
		name, body string
		status     int
		pointers   []string
	}{
		{"empty", `{}`, 422, []string{"/scan_type", "/vc_type", "/vc_id", "/vc_name", "/repo_id", "/repo_name", "/webhook_id", "/pr"}},
		{"pr members", strings.Replace(scanReq{}.body(), `"pr":{"pr_id":7,`, `"pr":{"pr_id":"7","x":1,`, 1), 422, []string{"/pr/pr_id", "/pr/x"}},
		{"enums", scanReq{Type: "secret", Status: "done"}.body(), 422, []string{"/scan_type", "/status"}},
		{"wrong types", strings.Replace(scanReq{}.body(), `"vc_id":10`, `"vc_id":10.5`, 1), 422, []string{"/vc_id"}},
		{"non-positive id", strings.Replace(scanReq{}.body(), `"repo_id":100`, `"repo_id":0`, 1), 422, []string{"/repo_id"}},
		{"id past int64", strings.Replace(scanReq{}.body(), `"repo_id":100`, `"repo_id":9223372036854775808`, 1), 422, []string{"/repo_id"}},
		{"null other_details", scanReq{Extra: `,"other_details":null`}.body(), 422, []string{"/other_details"}},
		{"other_details not an object", scanReq{Extra: `,"other_details":[1]`}.body(), 422, []string{"/other_details"}},
		{"other_details over 64 KiB", scanReq{Extra: `,"other_details":{"x":"` + strings.Repeat("x", 64<<10) + `"}`}.body(), 422, []string{"/other_details"}},
		{"1001 findings", scanReq{Findings: many}.body(), 422, []string{"/findings"}},
		{"finding without name", strings.Replace(scanReq{Findings: []string{"a", "b"}}.body(), `{"name":"b",`, `{`, 1), 422, []string{"/findings/1/name"}},
		{"finding with empty name", scanReq{Findings: []string{"a", ""}}.body(), 422, []string{"/findings/1/name"}},
		{"finding not an object", strings.Replace(scanReq{}.body(), `"findings":[]`, `"findings":["x"]`, 1), 422, []string{"/findings/0"}},
		{"unknown field", scanReq{Extra: `,"secret_count":3`}.body(), 422, []string{"/secret_count"}},
		{"malformed", `{"scan_type":`, 400, nil},
	} {
		ptrs := expectProblem(t, h.call("record-scan", jsonReq(&h.admin, c.body)), c.status)
		if !reflect.DeepEqual(ptrs, c.pointers) {
			t.Errorf("%s: pointers %v; want %v", c.name, ptrs, c.pointers)
		}
	}
	if n := h.countItems(); n["SCAN"]+n["FINDING"]+n["PR"] != 0 {
		t.Fatalf("invalid scans stored items: %v", n)
	}
}

func TestStoredRecordWithoutDefaults(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.record(scanReq{Status: "completed", Findings: []string{"x"}, Extra: `,"stat_url":"u","other_details":{"a":1}`})
	// Rewrite the item as an older writer might have stored it.
	ctx := context.Background()
	k := map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "SCAN#1"}, "SK": &types.AttributeValueMemberS{Value: "SCAN"}}
	out, err := h.env.DB.GetItem(ctx, &dynamodb.GetItemInput{TableName: &h.env.Table, Key: k})
	if err != nil || out.Item == nil {
		t.Fatal(err)
	}
	for _, a := range []string{"status", "block_status", "secret_count", "vulnerability_count", "other_details", "stat_url"} {
		delete(out.Item, a)
	}
	if _, err := h.env.DB.PutItem(ctx, &dynamodb.PutItemInput{TableName: &h.env.Table, Item: out.Item}); err != nil {
		t.Fatal(err)
	}
	sc := decode(t, h.get(&h.admin, "1"))
	if sc["status"] != "pending" || sc["block_status"] != true || sc["secret_count"] != 0.0 || sc["vulnerability_count"] != 0.0 ||
		sc["stat_url"] != nil || fmt.Sprint(sc["other_details"]) != "map[]" || sc["scan_type"] != "SECRET" {
		t.Fatalf("a record without its optional attributes reads as %v", sc)
	}
}

func TestConcurrentFirstScans(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var wg sync.WaitGroup
	scans := make([]map[string]any, 20)
	for i := range 20 {
		wg.Go(func() {
			req := scanReq{Status: "completed", PR: 42, Findings: make([]string, i%4)}
			if i%2 == 1 {
				req.Type = "VULNERABILITY"
			}
			for j := range req.Findings {
				req.Findings[j] = fmt.Sprintf("n%d", j)
			}
			resp := h.record(req)
			if resp.StatusCode != 201 {
				t.Errorf("scan %d: %d %s", i, resp.StatusCode, resp.Body)
				return
			}
			scans[i] = decode(t, resp)
		})
	}
	wg.Wait()
	if n := h.countItems()["PR"]; n != 1 {
		t.Fatalf("%d PR records for one pull request; want 1", n)
	}
	newest := map[string]map[string]any{}
	isNewer := func(a, b map[string]any) bool {
		return b == nil || a["created_at"].(string) > b["created_at"].(string) ||
			a["created_at"] == b["created_at"] && a["id"].(float64) > b["id"].(float64)
	}
	for _, sc := range scans {
		if sc["pr_id"] != scans[0]["pr_id"] {
			t.Fatalf("scans name PRs %v and %v", sc["pr_id"], scans[0]["pr_id"])
		}
		for _, k := range []string{"all", sc["scan_type"].(string)} {
			if isNewer(sc, newest[k]) {
				newest[k] = sc
			}
		}
	}
	pr := decode(t, h.get(&h.admin, "1"))["pr"].(map[string]any)
	if pr["last_scan"] != newest["all"]["created_at"] || pr["secret_count"] != newest["SECRET"]["secret_count"] ||
		pr["vulnerability_count"] != newest["VULNERABILITY"]["vulnerability_count"] {
		t.Fatalf("PR %v; newest scans %v %v %v", pr, newest["all"], newest["SECRET"], newest["VULNERABILITY"])
	}
}

func TestThousandFindings(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	names := make([]string, 1000)
	for i := range names {
		names[i] = "sha256:" + strings.Repeat(fmt.Sprintf("%04d", i), 16)
	}
	resp := h.record(scanReq{Status: "completed", Findings: names, Extra: `,"other_details":{"x":"` + strings.Repeat("d", 60<<10) + `"}`})
	if resp.StatusCode != 201 || decode(t, resp)["secret_count"] != 1000.0 {
		t.Fatalf("record: %d %s", resp.StatusCode, resp.Body[:min(len(resp.Body), 300)])
	}
	if n := h.countItems()["FINDING"]; n != 1000 {
		t.Fatalf("%d findings stored; want 1000", n)
	}
	if tx, b := h.env.MaxTransactItems.Load(), h.env.MaxBatchItems.Load(); tx > 100 || b > 25 {
		t.Fatalf("a transaction of %d items or a batch of %d: over DynamoDB's limits (100, 25)", tx, b)
	}
	for _, it := range h.items() {
		size := 0
		for k, v := range it {
			size += len(k) + len(v)
		}
		if size > 400<<10 {
			t.Fatalf("an item of about %d bytes: over DynamoDB's 400 KB", size)
		}
	}
}
