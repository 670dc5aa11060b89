// The race detector is left out of this file's one test: it writes 6 MB of
// scans and 100 large allowlists, one sequential request after another,
// into the embedded server, which copies its table at every transaction
// (minutes under -race on two cores, seconds without); it has no
// concurrency of its own for the detector to check.

//go:build !race

package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/scangate/scangate/internal/scangate"
)

// lambdaLimit is Lambda's bound on a synchronous response, 6 MB, counted
// as Lambda counts it: the JSON of the whole proxy answer, whose body is a
// JSON string (every byte JSON escapes counts more than once).
const lambdaLimit = 6_000_000

// TestPagesStayUnderLambdasResponseLimit: a listing of 100 large items
// (each within what valid requests make) answers fewer items than asked, with
// a next_cursor, so that its answer stays under Lambda's 6 MB; following
// the cursors gives every item once, in the listing's order, as pages of
// 10 do.
func TestPagesStayUnderLambdasResponseLimit(t *testing.T) {
	t.Parallel()
	// Two stores: the embedded server copies its table at each
	// transaction, and 100 allowlists written after 6 MB of scans took
	// minutes under the race detector; and in a store of their own, the
	// allowlists' audit entries are the newest of the whole log.
	h, lists := newHarness(t), newHarness(t)
	ctx := context.Background()
	// 100 scans of one PR, each with 60 KiB of other_details.
	blob := strings.Repeat("x", 60<<10)
	var pr float64
	for range 100 {
		sc := mustOK(t, h.call("record-scan", jsonReq(&h.admin, scanReq{Extra: `,"other_details":{"blob":"` + blob + `"}`}.body())))
		pr = sc["pr_id"].(float64)
	}
	// 100 allowlists with 50 paths of 256 characters that Lambda's JSON
	// escapes, and so 100 audit entries of their creation.
	for i := range 100 {
		var paths []string
		for k := range 50 {
			paths = append(paths, fmt.Sprintf("%q", strings.Repeat("<", 250)+fmt.Sprintf("%06d", k)))
		}
		mustOK(t, lists.allow(fmt.Sprintf(`{"type":"SECRET","name":"sha256:%02x","paths":[%s]}`, i, strings.Join(paths, ","))))
	}
	// A scan of 100 findings as large as findings may be: a name, a rule
	// and 20 aliases of 256 characters, a path of 2,048, each character
	// one that the body escapes and Lambda's JSON escapes again (U+2028
	// in names, which hold no control character, U+0001 elsewhere).
	findings := make([]scangate.Finding, 100)
	for i := range findings {
		f := scangate.Finding{Name: strings.Repeat("\u2028", 252) + fmt.Sprintf("%04d", i), Rule: strings.Repeat("\x01", 256),
			Path: strings.Repeat("\x01", 2048)}
		for k := range scangate.MaxAliases {
			f.Aliases = append(f.Aliases, strings.Repeat("\u2028", 252)+fmt.Sprintf("%04d", k))
		}
		findings[i] = f
	}
	big, _, err := h.env.Store.RecordScan(ctx, scangate.NewScan{Type: scangate.ScanVulnerability, VcType: "github", VcID: 10, VcName: "gh",
		RepoID: 100, RepoName: "o/r", WebhookID: 1, PR: scangate.PRRef{Number: 8, Name: "n", Link: "l"}, Status: "completed",
		OtherDetails: []byte("{}"), Findings: findings}, scangate.Who{RequestID: "direct"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []struct {
		h              *harness
		name, fn, path string
		params         map[string]string
		query          string
		want           int
	}{
		{h, "a PR's scans", "list-pr-scans", fmt.Sprintf("/api/pr/%v/scans", pr), map[string]string{"pr_id": fmt.Sprint(pr)}, "", 100},
		{h, "a scan's findings", "list-findings", fmt.Sprintf("/api/pr/scan/%d/findings", big.ID), map[string]string{"pr_scan_id": fmt.Sprint(big.ID)}, "", 100},
		{lists, "allowlists", "list-allowlists", "/api/whitelist", nil, "", 100},
		{lists, "the audit log", "list-audit", "/api/audit", nil, "", 100 + 2}, // and the bootstrap's, the harness's token's
		{lists, "the audit log of one action", "list-audit", "/api/audit", nil, "action=allowlist.create", 100},
	} {
		q := "limit=100"
		if l.query != "" {
			q = l.query + "&" + q
		}
		h := l.h
		resp := h.read(l.fn, &h.admin, l.params, q)
		whole, _ := json.Marshal(resp)
		p := decodePage(t, resp)
		if len(whole) > lambdaLimit || len(p.Items) >= 100 || p.NextCursor == nil {
			t.Errorf("%s: %d bytes for Lambda, %d items, next_cursor %v; want under %d bytes, fewer items, a cursor",
				l.name, len(whole), len(p.Items), p.NextCursor != nil, lambdaLimit)
		}
		ids := func(items []map[string]any) []string {
			var out []string
			for _, it := range items {
				out = append(out, fmt.Sprint(it["id"]))
			}
			return out
		}
		all, tens := ids(h.walk(l.fn, &h.admin, l.params, l.path, l.query, 100, false)), ids(h.walk(l.fn, &h.admin, l.params, l.path, l.query, 10, false))
		if len(all) < l.want || !slices.Equal(all, tens) || len(slices.Compact(slices.Clone(all))) != len(all) {
			t.Errorf("%s: pages of 100 give %d items, pages of 10 %d; want the same %d or more, each once", l.name, len(all), len(tens), l.want)
		}
	}
}
