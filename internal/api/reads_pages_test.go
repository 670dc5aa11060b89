package api_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/scangate/scangate/internal/scangate"
)

// listing is a listing route as the tests call it.
type listing struct {
	fn     string
	params map[string]string
	path   string
}

var (
	findingsOf1 = listing{"list-findings", map[string]string{"pr_scan_id": "1"}, "/api/pr/scan/1/findings"}
	scansOfPR1  = listing{"list-pr-scans", map[string]string{"pr_id": "1"}, "/api/pr/1/scans"}
	allPRs      = listing{"list-prs", nil, "/api/pr"}
	allowlists  = listing{"list-allowlists", nil, "/api/whitelist"}
	users       = listing{"list-users", nil, "/api/users"}
)

// firstCursor is the next_cursor of a listing's first page.
func (h *harness) firstCursor(l listing, query string) string {
	h.t.Helper()
	p := decodePage(h.t, h.read(l.fn, &h.admin, l.params, query))
	if p.NextCursor == nil {
		h.t.Fatalf("%s ?%s has one page", l.fn, query)
	}
	return *p.NextCursor
}

// expect422 checks a 422 that names the parameter and shows nothing else.
func expect422(t *testing.T, resp events.APIGatewayProxyResponse, what, param string) {
	t.Helper()
	if resp.StatusCode != http.StatusUnprocessableEntity || resp.Headers["Content-Type"] != "application/problem+json" {
		t.Errorf("%s: %d %s; want 422", what, resp.StatusCode, resp.Body)
		return
	}
	var p struct {
		Detail string
		Errors []struct{ Parameter string }
	}
	if err := json.Unmarshal([]byte(resp.Body), &p); err != nil {
		t.Fatal(err)
	}
	var named []string
	for _, e := range p.Errors {
		named = append(named, e.Parameter)
	}
	if !slices.Contains(named, param) {
		t.Errorf("%s: the 422 names %v; want %q (%s)", what, named, param, resp.Body)
	}
	for _, secret := range []string{"items", "sha256:", "CVE-", "@example.com", "FINDING#", "SCAN#", "USER#", "PRS"} {
		if strings.Contains(resp.Body, secret) {
			t.Errorf("%s: the 422 shows %q: %s", what, secret, resp.Body)
		}
	}
}

// readsFixture records what the listings of the tests below list: scan 1
// (PR 1) with 5 findings, scans 2 to 5 of PR 1, PRs 2 to 5, allowlists 1
// to 5, users 2 to 5.
func readsFixture(h *harness) {
	h.t.Helper()
	mustOK(h.t, h.record(scanReq{VcID: 1, RepoID: 10, PR: 1, Findings: []string{"sha256:a1", "sha256:a2", "sha256:a3", "sha256:a4", "sha256:a5"}}))
	for i := range 4 {
		mustOK(h.t, h.record(scanReq{VcID: 1, RepoID: 10, PR: 1, Type: []string{"SECRET", "VULNERABILITY"}[i%2]}))
	}
	for pr := 2; pr <= 5; pr++ {
		mustOK(h.t, h.record(scanReq{VcID: 1, RepoID: 10, PR: int64(pr)}))
	}
	for i := 1; i <= 5; i++ {
		mustOK(h.t, h.allow(fmt.Sprintf(`{"type":"SECRET","name":"sha256:a%d","global_":true}`, i)))
	}
	for _, name := range []string{"una", "rita", "vic", "wes"} {
		h.member(name, scangate.RoleUser)
	}
}

// TestListingParameters: limit 0, 101 and abc, a cursor altered by one
// character, taken from another listing, another filter or another scan,
// bad filter values and unknown or repeated parameters all answer 422
// naming the parameter, and show nothing of what is stored.
func TestListingParameters(t *testing.T) {
	h := newHarness(t)
	readsFixture(h)
	all := []listing{findingsOf1, scansOfPR1, allPRs, allowlists, users}
	for _, l := range all {
		for _, q := range []string{"limit=0", "limit=101", "limit=abc", "limit=-1", "limit=01", "limit=+5", "limit=", "limit=1.5", "limit=1&limit=2"} {
			expect422(t, h.read(l.fn, &h.admin, l.params, q), l.fn+" ?"+q, "limit")
		}
		for _, q := range []string{"cursor=", "cursor=abc", "cursor=" + strings.Repeat("A", 60), "colour=red", "Limit=3"} {
			param, _, _ := strings.Cut(q, "=")
			expect422(t, h.read(l.fn, &h.admin, l.params, q), l.fn+" ?"+q, param)
		}
		// Every one-character change of a real cursor is refused.
		cur := h.firstCursor(l, "limit=1")
		const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
		for i := range cur {
			changed := []byte(cur)
			changed[i] = alphabet[(strings.IndexByte(alphabet, cur[i])+1+rand.IntN(len(alphabet)-1))%len(alphabet)]
			expect422(t, h.read(l.fn, &h.admin, l.params, "limit=1&cursor="+url.QueryEscape(string(changed))), l.fn+" altered cursor", "cursor")
		}
		expect422(t, h.read(l.fn, &h.admin, l.params, "limit=1&cursor="+url.QueryEscape(cur[:len(cur)-1])), l.fn+" truncated cursor", "cursor")
		// A cursor of every other listing.
		for _, other := range all {
			if other.fn != l.fn {
				oc := h.firstCursor(other, "limit=1")
				expect422(t, h.read(l.fn, &h.admin, l.params, "limit=1&cursor="+url.QueryEscape(oc)), l.fn+" with a cursor of "+other.fn, "cursor")
			}
		}
		// The same listing's cursor is good, with another limit too.
		if resp := h.read(l.fn, &h.admin, l.params, "limit=2&cursor="+url.QueryEscape(cur)); resp.StatusCode != 200 {
			t.Errorf("%s: its own cursor: %d %s", l.fn, resp.StatusCode, resp.Body)
		}
	}
	// Another filter, another scan or PR: another listing.
	for _, c := range []struct {
		l           listing
		from, to    string
		otherParams map[string]string
		description string
	}{
		{findingsOf1, "limit=1", "suppressed=true", nil, "findings ?suppressed=true"},
		{findingsOf1, "limit=1&suppressed=true", "", nil, "findings without the filter"},
		{findingsOf1, "limit=1&suppressed=true", "suppressed=false", nil, "findings ?suppressed=false"},
		{findingsOf1, "limit=1", "", map[string]string{"pr_scan_id": "2"}, "the findings of another scan"},
		{scansOfPR1, "limit=1", "scan_type=SECRET", nil, "scans ?scan_type=SECRET"},
		{scansOfPR1, "limit=1", "", map[string]string{"pr_id": "2"}, "the scans of another PR"},
		{allPRs, "limit=1", "vc_id=1&repo_id=10", nil, "one repository's PRs"},
		{allPRs, "limit=1&vc_id=1&repo_id=10", "vc_id=1&repo_id=11", nil, "another repository's PRs"},
		{allPRs, "limit=1", "blocked=true", nil, "blocked PRs"},
		{allowlists, "limit=1", "type=SECRET", nil, "secret allowlists"},
		{allowlists, "limit=1&type=SECRET", "type=VULNERABILITY", nil, "allowlists of another type"},
		{allowlists, "limit=1", "name=sha256:a1", nil, "allowlists of a name"},
		{users, "limit=1", "role=user", nil, "users of a role"},
		{users, "limit=1", "active=true", nil, "active users"},
	} {
		cur := h.firstCursor(c.l, c.from)
		params := c.l.params
		if c.otherParams != nil {
			params = c.otherParams
		}
		q := "cursor=" + url.QueryEscape(cur)
		if c.to != "" {
			q += "&" + c.to
		}
		expect422(t, h.read(c.l.fn, &h.admin, params, q), c.description, "cursor")
	}
	// Bad filters.
	for _, c := range []struct {
		l            listing
		query, param string
	}{
		{findingsOf1, "suppressed=maybe", "suppressed"},
		{findingsOf1, "suppressed=TRUE", "suppressed"},
		{scansOfPR1, "scan_type=X", "scan_type"},
		{scansOfPR1, "scan_type=secret", "scan_type"},
		{allPRs, "blocked=maybe", "blocked"},
		{allPRs, "vc_id=1", "repo_id"},
		{allPRs, "repo_id=10", "vc_id"},
		{allPRs, "vc_id=0&repo_id=10", "vc_id"},
		{allPRs, "vc_id=1&repo_id=x", "repo_id"},
		{allPRs, "vc_id=1&repo_id=9223372036854775808", "repo_id"},
		{allPRs, "vc_id=1&vc_id=2&repo_id=10", "vc_id"},
		{allowlists, "type=X", "type"},
		{allowlists, "active=yes", "active"},
		{allowlists, "name=", "name"},
		{allowlists, "name=" + strings.Repeat("a", 257), "name"},
		{allowlists, "name=a%00b", "name"},
		{allowlists, "name=a%E2%80%8Bb", "name"},
		{allowlists, "name=%FF", "name"},
		{users, "role=x", "role"},
		{users, "role=Admin", "role"},
		{users, "active=1", "active"},
	} {
		expect422(t, h.read(c.l.fn, &h.admin, c.l.params, c.query), c.l.fn+" ?"+c.query, c.param)
	}
	// Several problems: each is named.
	resp := h.read(allPRs.fn, &h.admin, nil, "limit=0&blocked=x&sort=name")
	for _, p := range []string{"limit", "blocked", "sort"} {
		expect422(t, resp, "three bad parameters", p)
	}
	// Path ids come first (422), then the parameters, then existence (404).
	if ptrs := expectProblem(t, h.read(findingsOf1.fn, &h.admin, map[string]string{"pr_scan_id": "x"}, "limit=0"), 422); !slices.Equal(ptrs, []string{"/pr_scan_id"}) {
		t.Errorf("bad path id and limit: %v", ptrs)
	}
	expect422(t, h.read(findingsOf1.fn, &h.admin, map[string]string{"pr_scan_id": "99"}, "limit=0"), "unknown scan, bad limit", "limit")
	expectProblem(t, h.read(findingsOf1.fn, &h.admin, map[string]string{"pr_scan_id": "99"}, ""), 404)
}

// TestWalkEveryListing: walking every page of each listing, 3 items a
// page, returns each item exactly once, in order, also while other
// requests insert items (and record scans and change allowlists) at the
// same time; no page takes more than two round trips.
func TestWalkEveryListing(t *testing.T) {
	h := newHarness(t)
	readsFixture(h)
	reader := h.member("rita2", scangate.RoleReadonly)
	type check struct {
		l     listing
		query string
		want  []int // every item there before the walk, in order
		// byID: the listing's order is its items' ids (up or down); the
		// others are ordered by time, which concurrent requests may not
		// take in the order of their ids.
		byID bool
	}
	checks := []check{
		{findingsOf1, "", []int{1, 2, 3, 4, 5}, true},
		{findingsOf1, "suppressed=true", []int{1, 2, 3, 4, 5}, true},
		{scansOfPR1, "", []int{5, 4, 3, 2, 1}, false},
		// PR 1 is scanned again meanwhile: it moves to the front.
		{allPRs, "", []int{5, 4, 3, 2}, false},
		{allowlists, "", []int{5, 4, 3, 2, 1}, true},
		{users, "", []int{1, 2, 3, 4, 5, 6}, true},
	}
	// Alone: exactly the items, in order, within two round trips a page.
	for _, c := range checks {
		caller := &reader
		if c.l.fn == "list-users" {
			caller = &h.admin
		}
		got := ids(h.walk(c.l.fn, caller, c.l.params, c.l.path, c.query, 3, true))
		if c.l.fn == "list-prs" {
			got = slices.DeleteFunc(got, func(id int) bool { return id == 1 })
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s ?%s: %v; want %v", c.l.fn, c.query, got, c.want)
		}
	}
	// While others insert: new PRs, scans of PR 1 and of others,
	// allowlists, users, and changes of the allowlists. A scan of PR 1
	// moves it to the front of GET /pr; none is recorded while GET /pr is
	// walked, since the embedded server places a cursor on an index by its
	// item's table key, wherever the item has moved since (DynamoDB places
	// it by the index key, where the item was).
	stop := make(chan struct{})
	var moving sync.RWMutex
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				switch i % 4 {
				case 0:
					mustOK(t, h.record(scanReq{VcID: 2, RepoID: 20, PR: int64(100*w + i), Findings: []string{"sha256:a1"}}))
				case 1:
					moving.RLock()
					mustOK(t, h.record(scanReq{VcID: 1, RepoID: 10, PR: 1}))
					moving.RUnlock()
				case 2:
					mustOK(t, h.allow(fmt.Sprintf(`{"type":"SECRET","name":"sha256:b%d","global_":true}`, 100*w+i)))
					mustOK(t, h.modify(1+i%5, fmt.Sprintf(`{"active":%v}`, i%3 != 0)))
				case 3:
					h.member(fmt.Sprintf("new%d-%d", w, i), scangate.RoleReadonly)
				}
			}
		})
	}
	for round := range 3 {
		for _, c := range checks {
			caller := &reader
			if c.l.fn == "list-users" {
				caller = &h.admin
			}
			if c.l.fn == "list-prs" {
				moving.Lock()
			}
			got := ids(h.walk(c.l.fn, caller, c.l.params, c.l.path, c.query, 3, false))
			if c.l.fn == "list-prs" {
				moving.Unlock()
				got = slices.DeleteFunc(got, func(id int) bool { return id == 1 })
			}
			if c.query == "suppressed=true" {
				continue // allowlists 1 to 5 are switched on and off meanwhile
			}
			seen := map[int]bool{}
			var before []int // the items there before, in the order listed
			for i, id := range got {
				if seen[id] {
					t.Errorf("round %d, %s: %d twice in %v", round, c.l.fn, id, got)
				}
				seen[id] = true
				if c.byID && i > 0 && (got[i-1] < id) != (c.want[0] < c.want[1]) {
					t.Errorf("round %d, %s: out of order: %v", round, c.l.fn, got)
				}
				if slices.Contains(c.want, id) {
					before = append(before, id)
				}
			}
			if !slices.Equal(before, c.want) {
				t.Errorf("round %d, %s ?%s: lists %v of %v; want %v", round, c.l.fn, c.query, before, got, c.want)
			}
		}
	}
	close(stop)
	wg.Wait()
	h.noDrift()
}

// TestPRListingAfterConcurrentRecordings: after concurrent recordings of
// scans of every type and status and concurrent allowlist changes, GET /pr
// lists the PRs in the order of their last scans, and its blocked filter
// agrees with a recomputation from the PRs' scans: blocked when the
// newest scan of either type blocks. check finds no drift.
func TestPRListingAfterConcurrentRecordings(t *testing.T) {
	h := newHarness(t)
	names := []string{"sha256:c1", "sha256:c2", "CVE-2024-0001", "CVE-2024-0002"}
	var mu sync.Mutex
	scanIDs := map[int][]string{} // PR id: its scan ids
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 12))
			for range 12 {
				typ := []string{"SECRET", "VULNERABILITY"}[r.IntN(2)]
				s := scanReq{Type: typ, VcID: int64(1 + r.IntN(2)), RepoID: 10, PR: int64(1 + r.IntN(4)),
					Status: []string{"completed", "completed", "completed", "completed", "pending", "failed"}[r.IntN(6)]}
				for _, n := range names {
					if (typ == "SECRET") == strings.HasPrefix(n, "sha256:") && r.IntN(3) == 0 {
						s.Findings = append(s.Findings, n)
					}
				}
				sc := mustOK(t, h.record(s))
				mu.Lock()
				pr := int(sc["pr_id"].(float64))
				scanIDs[pr] = append(scanIDs[pr], strconv.Itoa(int(sc["id"].(float64))))
				mu.Unlock()
			}
		})
	}
	for w := range 2 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 34))
			for i := range 6 {
				n := names[r.IntN(len(names))]
				typ := "VULNERABILITY"
				if strings.HasPrefix(n, "sha256:") {
					typ = "SECRET"
				}
				a := mustOK(t, h.allow(fmt.Sprintf(`{"type":%q,"name":%q,"global_":%v}`, typ, n, i%2 == 0)))
				mustOK(t, h.modify(int(a["id"].(float64)), fmt.Sprintf(`{"active":%v,"vcs":[1]}`, r.IntN(2) == 0)))
			}
		})
	}
	wg.Wait()
	h.noDrift()

	// The recomputation: each PR's scans as they are now.
	type want struct {
		id       int
		lastScan string
		blocked  bool
		vc       int
	}
	var prs []want
	for pr, scans := range scanIDs {
		type newest struct {
			at string
			id int
		}
		var last newest
		byType := map[string]newest{}
		blocks := map[string]bool{}
		for _, id := range scans {
			sc := mustOK(t, h.get(&h.admin, id))
			n := newest{sc["created_at"].(string), int(sc["id"].(float64))}
			later := func(a, b newest) bool { return a.at > b.at || a.at == b.at && a.id > b.id }
			if later(n, last) {
				last = n
			}
			typ := sc["scan_type"].(string)
			if later(n, byType[typ]) {
				byType[typ], blocks[typ] = n, sc["block_status"].(bool)
			}
		}
		vc := int(mustOK(t, h.read("get-pr", &h.admin, map[string]string{"pr_id": strconv.Itoa(pr)}, ""))["vc_id"].(float64))
		prs = append(prs, want{id: pr, lastScan: last.at, blocked: blocks["SECRET"] || blocks["VULNERABILITY"], vc: vc})
	}
	sort.Slice(prs, func(i, j int) bool {
		return prs[i].lastScan > prs[j].lastScan || prs[i].lastScan == prs[j].lastScan && prs[i].id > prs[j].id
	})
	expected := func(keep func(want) bool) []int {
		out := []int{}
		for _, p := range prs {
			if keep(p) {
				out = append(out, p.id)
			}
		}
		return out
	}
	for query, keep := range map[string]func(want) bool{
		"":                                func(want) bool { return true },
		"blocked=true":                    func(p want) bool { return p.blocked },
		"blocked=false":                   func(p want) bool { return !p.blocked },
		"vc_id=1&repo_id=10":              func(p want) bool { return p.vc == 1 },
		"vc_id=2&repo_id=10&blocked=true": func(p want) bool { return p.vc == 2 && p.blocked },
	} {
		got := h.walk("list-prs", &h.admin, nil, "/api/pr", query, 3, true)
		if w := expected(keep); !slices.Equal(ids(got), w) {
			t.Errorf("GET /pr?%s: %v; its scans say %v", query, ids(got), w)
		}
	}
	if n := len(expected(func(p want) bool { return p.blocked })); n == 0 || n == len(prs) {
		t.Errorf("%d of %d PRs are blocked: the filter is not put to the test", n, len(prs))
	}
}
