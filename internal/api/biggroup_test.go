package api_test

import (
	"encoding/json"
	"testing"
)

// TestManyLargeAllowlistsOfOneName: 18 allowlists of one type and name
// with 1,000 repos and 1,000 vcs each (about 430 KB of scope together)
// are all created, a later modify succeeds, and counts stay exact: no item
// holds more than one allowlist's scope, so none nears DynamoDB's 400 KB
// (DynamoDB Local, which enforces the limit, runs this in CI).
func TestManyLargeAllowlistsOfOneName(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	// Findings in repo 5000 + k and vc 9000 + k for a few k.
	for k := range 3 {
		mustOK(t, h.record(scanReq{Type: "SECRET", Status: "completed", RepoID: int64(5000 + k), VcID: int64(9000 + k), Findings: []string{"sha256:shared"}}))
	}
	scope := func(base int64) []int64 {
		ids := make([]int64, 1000)
		for i := range ids {
			ids[i] = base + int64(i)*7
		}
		return ids
	}
	for i := range 18 {
		// Allowlist i covers repo 5000 only when i == 0.
		repos, vcs := scope(int64(100_000+i*10_000)), scope(int64(900_000+i*10_000))
		if i == 0 {
			repos[0] = 5000
		}
		body, _ := json.Marshal(map[string]any{"type": "SECRET", "name": "sha256:shared", "repos": repos, "vcs": vcs})
		a := mustOK(t, h.allow(string(body)))
		want := 0.0
		if i == 0 {
			want = 1
		}
		if a["secrets_updated"] != want {
			t.Fatalf("allowlist %d: secrets_updated %v; want %v", i+1, a["secrets_updated"], want)
		}
	}
	if s, _, _ := h.counts(1); s != 0 {
		t.Errorf("scan 1: %v secrets; the first allowlist covers its finding", s)
	}
	// The last allowlist now also covers vc 9001 and 9002.
	vcs := append(scope(900_000 + 17*10_000)[:998], 9001, 9002)
	body, _ := json.Marshal(map[string]any{"vcs": vcs})
	if a := mustOK(t, h.modify(18, string(body))); a["secrets_updated"] != 2.0 {
		t.Errorf("modify: secrets_updated %v; want 2", a["secrets_updated"])
	}
	for id := 1; id <= 3; id++ {
		if s, _, _ := h.counts(id); s != 0 {
			t.Errorf("scan %d: %v secrets; want 0", id, s)
		}
	}
	h.noDrift()
}
