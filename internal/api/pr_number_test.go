package api_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"testing"

	"github.com/scangate/scangate/internal/scangate"
)

// TestPRByNumber: GET /pr?vc_id=&repo_id=&number= finds a PR by the number
// its version-control system gave it (a scan's pr.pr_id), in one round
// trip, as a page of that one PR (as GET /pr/{pr_id} shows it, under
// scangate's id, which is the scans' pr_id), or an empty page; blocked
// filters it as it filters the listing; number without vc_id and repo_id,
// or not a positive integer, is 422 naming it.
func TestPRByNumber(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	reader := h.member("rita", scangate.RoleReadonly)
	mustOK(t, h.record(scanReq{VcID: 1, RepoID: 10, PR: 7, Status: "completed"}))
	scan := mustOK(t, h.record(scanReq{VcID: 1, RepoID: 10, PR: 42, Findings: []string{"sha256:aa"}}))
	mustOK(t, h.record(scanReq{VcID: 2, RepoID: 10, PR: 42, Status: "completed"})) // another integration's #42
	prID := strconv.Itoa(int(scan["pr_id"].(float64)))
	if prID == "42" {
		t.Fatalf("scangate's id of PR #42 is 42 too; the test would not tell them apart")
	}
	want, _ := json.Marshal(mustOK(t, h.read("get-pr", &reader, map[string]string{"pr_id": prID}, "")))

	for _, c := range []struct {
		query string
		found bool
	}{
		{"vc_id=1&repo_id=10&number=42", true},
		{"vc_id=1&repo_id=10&number=42&blocked=true", true}, // its scan is pending: blocked
		{"vc_id=1&repo_id=10&number=42&blocked=false", false},
		{"vc_id=1&repo_id=10&number=" + prID, false}, // scangate's id is not a number
		{"vc_id=1&repo_id=11&number=42", false},
		{"vc_id=3&repo_id=10&number=42", false},
	} {
		var p page
		trips := h.env.CountTrips(func() { p = decodePage(t, h.read("list-prs", &reader, nil, c.query)) })
		if trips != 1 {
			t.Errorf("?%s: %d round trips; want 1 (one GetItem)", c.query, trips)
		}
		if p.NextCursor != nil {
			t.Errorf("?%s: a next page", c.query)
		}
		switch {
		case !c.found && len(p.Items) != 0:
			t.Errorf("?%s: %v; want an empty page", c.query, p.Items)
		case c.found && len(p.Items) != 1:
			t.Errorf("?%s: %v; want PR %s", c.query, p.Items, prID)
		case c.found:
			sameJSON(t, "PR #42 by its number", p.Items[0], string(want))
			if p.Items[0]["pr_id"] != float64(42) {
				t.Errorf("?%s: pr_id %v; want the number 42", c.query, p.Items[0]["pr_id"])
			}
		}
	}
	for query, param := range map[string]string{
		"number=42":                            "number",
		"vc_id=1&number=42":                    "number",
		"repo_id=10&number=42":                 "number",
		"vc_id=1&repo_id=10&number=0":          "number",
		"vc_id=1&repo_id=10&number=x":          "number",
		"vc_id=1&repo_id=10&number=4&number=2": "number",
	} {
		expect422(t, h.read("list-prs", &reader, nil, query), "?"+query, param)
	}
	if resp := h.read("list-prs", &reader, nil, "vc_id=1&repo_id=10&number=42&cursor=abc"); resp.StatusCode != http.StatusUnprocessableEntity {
		t.Errorf("a cursor with number: %d %s; want 422", resp.StatusCode, resp.Body)
	}
}
