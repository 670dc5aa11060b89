package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/scangate/scangate/internal/scangate"
)

// read calls a read operation with path parameters and a query string.
func (h *harness) read(fn string, c *scangate.Caller, params map[string]string, query string) events.APIGatewayProxyResponse {
	h.t.Helper()
	q, err := url.ParseQuery(query)
	if err != nil {
		h.t.Fatal(err)
	}
	ev := events.APIGatewayProxyRequest{HTTPMethod: "GET", PathParameters: params}
	if len(q) > 0 {
		ev.MultiValueQueryStringParameters = q
		ev.QueryStringParameters = map[string]string{}
		for k, v := range q {
			ev.QueryStringParameters[k] = v[len(v)-1]
		}
	}
	h.present(&ev, c)
	resp, err := h.fn(fn)(context.Background(), ev)
	if err != nil {
		h.t.Fatalf("%s returned an error to Lambda: %v", fn, err)
	}
	return resp
}

// page is one answer of a listing.
type page struct {
	Items      []map[string]any `json:"items"`
	NextCursor *string          `json:"next_cursor"`
	link       string
}

func decodePage(t testing.TB, resp events.APIGatewayProxyResponse) page {
	t.Helper()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, resp.Body)
	}
	var p page
	dec := json.NewDecoder(strings.NewReader(resp.Body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil || p.Items == nil {
		t.Fatalf("a page is {items, next_cursor}: %s (%v)", resp.Body, err)
	}
	if !strings.Contains(resp.Body, `"next_cursor":`) {
		t.Fatalf("no next_cursor in %s", resp.Body)
	}
	p.link = resp.Headers["Link"]
	if (p.NextCursor != nil) != (p.link != "") {
		t.Fatalf("next_cursor %v but Link %q", p.NextCursor, p.link)
	}
	return p
}

// walk reads every page of a listing, limit a page, following next_cursor,
// and checks that each Link repeats the path, the filters and the limit
// with the cursor. With trips set it checks that no page takes more than
// two round trips.
func (h *harness) walk(fn string, c *scangate.Caller, params map[string]string, path, query string, limit int, trips bool) []map[string]any {
	h.t.Helper()
	var all []map[string]any
	cursor := ""
	for n := 0; ; n++ {
		q := query
		if q != "" {
			q += "&"
		}
		q += "limit=" + strconv.Itoa(limit)
		if cursor != "" {
			q += "&cursor=" + url.QueryEscape(cursor)
		}
		var resp events.APIGatewayProxyResponse
		rt := h.env.CountTrips(func() { resp = h.read(fn, c, params, q) })
		if trips && rt > 2 {
			h.t.Errorf("%s ?%s: page %d took %d round trips", fn, q, n+1, rt)
		}
		p := decodePage(h.t, resp)
		if len(p.Items) > limit {
			h.t.Fatalf("%s: a page of %d items; limit %d", fn, len(p.Items), limit)
		}
		all = append(all, p.Items...)
		if p.NextCursor == nil {
			return all
		}
		checkLink(h.t, p.link, path, query, limit, *p.NextCursor)
		cursor = *p.NextCursor
		if n > 1000 {
			h.t.Fatalf("%s: more than 1000 pages", fn)
		}
	}
}

// checkLink checks a Link header: the path, the filters of query, the limit
// and the cursor, rel="next".
func checkLink(t testing.TB, link, path, query string, limit int, cursor string) {
	t.Helper()
	target, ok := strings.CutPrefix(link, "<")
	target, rest, ok2 := strings.Cut(target, ">")
	if !ok || !ok2 || rest != `; rel="next"` {
		t.Fatalf("Link %q", link)
	}
	u, err := url.Parse(target)
	if err != nil || u.Path != path {
		t.Fatalf("Link %q: path %q; want %q", link, u.Path, path)
	}
	want, _ := url.ParseQuery(query)
	want.Set("limit", strconv.Itoa(limit))
	want.Set("cursor", cursor)
	if got := u.Query(); !reflect.DeepEqual(got, want) {
		t.Fatalf("Link %q: query %v; want %v", link, got, want)
	}
}

// ids lists the id of each item.
func ids(items []map[string]any) []int {
	out := make([]int, len(items))
	for i, it := range items {
		out[i] = int(it["id"].(float64))
	}
	return out
}

// sameJSON compares a value with JSON text as JSON.
func sameJSON(t testing.TB, what string, got any, want string) {
	t.Helper()
	var w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(got)
	var g any
	_ = json.Unmarshal(b, &g)
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s:\n got %s\nwant %s", what, b, want)
	}
}

// TestFindingsShowWhyAPRIsBlocked: a scan's findings in the order
// recorded, in their full shape, suppressed and suppressed_by following
// every allowlist change exactly, also with several allowlists (of one
// name, and of an alias) on one finding; the scan's count agrees.
func TestFindingsShowWhyAPRIsBlocked(t *testing.T) {
	h := newHarness(t)
	mustOK(t, h.recordWith(scanReq{Type: "VULNERABILITY", VcID: 1, RepoID: 10, PR: 5, Status: "completed"}, `[`+
		`{"name":"CVE-2021-44228","aliases":["GHSA-jfh8-c2jp-5v3q"],"rule":"log4j","path":"pom.xml","line":12},`+
		`{"name":"CVE-2022-0001"},`+
		`{"name":"cve-2021-44228","path":"lib/pom.xml"}]`))
	reader := h.member("rita", scangate.RoleReadonly)
	scan := map[string]string{"pr_scan_id": "1"}
	findings := func(query string) []map[string]any {
		t.Helper()
		return h.walk("list-findings", &reader, scan, "/api/pr/scan/1/findings", query, 2, true)
	}
	expect := func(step string, by1, by2, by3 string) {
		t.Helper()
		all := findings("")
		sup := func(by string) string { return strconv.FormatBool(by != "[]") }
		fp := func(rule, path, name string) string {
			return `,"fingerprint":"` + scangate.DerivedFingerprint(rule, path, name, nil) + `:1","fingerprint_source":"derived","baseline_state":"new"`
		}
		sameJSON(t, step+": findings", all, `[`+
			`{"id":1,"name":"CVE-2021-44228","aliases":["GHSA-jfh8-c2jp-5v3q"],"rule":"log4j","path":"pom.xml","line":12,"severity":"high","suppressed":`+sup(by1)+`,"suppressed_by":`+by1+fp("log4j", "pom.xml", "CVE-2021-44228")+`},`+
			`{"id":2,"name":"CVE-2022-0001","aliases":[],"rule":null,"path":null,"line":null,"severity":"high","suppressed":`+sup(by2)+`,"suppressed_by":`+by2+fp("", "", "CVE-2022-0001")+`},`+
			`{"id":3,"name":"cve-2021-44228","aliases":[],"rule":null,"path":"lib/pom.xml","line":null,"severity":"high","suppressed":`+sup(by3)+`,"suppressed_by":`+by3+fp("", "lib/pom.xml", "cve-2021-44228")+`}]`)
		var suppressed, open []int
		for _, f := range all {
			if f["suppressed"].(bool) {
				suppressed = append(suppressed, int(f["id"].(float64)))
			} else {
				open = append(open, int(f["id"].(float64)))
			}
		}
		if got := ids(findings("suppressed=true")); !slices.Equal(got, suppressed) {
			t.Errorf("%s: ?suppressed=true lists %v; want %v", step, got, suppressed)
		}
		if got := ids(findings("suppressed=false")); !slices.Equal(got, open) {
			t.Errorf("%s: ?suppressed=false lists %v; want %v", step, got, open)
		}
		if _, vul, _ := h.counts(1); int(vul) != len(open) {
			t.Errorf("%s: the scan counts %v vulnerabilities; its findings show %d", step, vul, len(open))
		}
	}
	expect("recorded", "[]", "[]", "[]")
	mustOK(t, h.allow(`{"type":"VULNERABILITY","name":"CVE-2021-44228","global_":true}`))        // 1: both, by name
	mustOK(t, h.allow(`{"type":"VULNERABILITY","name":"GHSA-jfh8-c2jp-5v3q","repos":[10]}`))     // 2: the first, by its alias
	mustOK(t, h.allow(`{"type":"VULNERABILITY","name":"cve-2021-44228","vcs":[1]}`))             // 3: both, the same name in other case
	mustOK(t, h.allow(`{"type":"SECRET","name":"CVE-2022-0001","global_":true}`))                // 4: another type: none
	mustOK(t, h.allow(`{"type":"VULNERABILITY","name":"CVE-2022-0001","repos":[11],"vcs":[2]}`)) // 5: another repo: none
	expect("three allowlists", "[1,2,3]", "[]", "[1,3]")
	mustOK(t, h.modify(1, `{"active":false}`))
	expect("the first deactivated", "[2,3]", "[]", "[3]")
	mustOK(t, h.modify(3, `{"name":"CVE-1999-0001"}`))
	expect("the third renamed", "[2]", "[]", "[]")
	mustOK(t, h.modify(2, `{"repos":[99]}`))
	expect("the second narrowed", "[]", "[]", "[]")
	mustOK(t, h.modify(1, `{"active":true}`))
	mustOK(t, h.modify(5, `{"repos":[10]}`))
	expect("the first active again, the fifth widened", "[1]", "[5]", "[1]")
	h.noDrift()
}

// recordWith records the scan with the findings given as JSON.
func (h *harness) recordWith(s scanReq, findings string) events.APIGatewayProxyResponse {
	h.t.Helper()
	s.Findings = nil
	return h.call("record-scan", jsonReq(&h.admin, strings.Replace(s.body(), `"findings":[]`, `"findings":`+findings, 1)))
}
