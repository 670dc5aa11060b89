package api_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/scangate/scangate/internal/ddbtest"
	"github.com/scangate/scangate/pkg/scangate"
)

// modelScan is what the brute-force model knows of a recorded scan.
type modelScan struct {
	id        int
	typ       scangate.ScanType
	status    string
	repo, vc  int64
	pr        string
	createdAt string
	findings  []scangate.FindingRef // type, repo and vc filled in
}

// modelRule is what the model knows of an allowlist: its rule and expiry.
type modelRule struct {
	scangate.Rule
	expires *time.Time
}

// tryOK is mustOK for other goroutines than the test's.
func tryOK(t *testing.T, resp events.APIGatewayProxyResponse) (map[string]any, bool) {
	if resp.StatusCode != 200 && resp.StatusCode != 201 {
		t.Errorf("status %d: %s", resp.StatusCode, resp.Body)
		return nil, false
	}
	return decode(t, resp), true
}

// randomRule is a random allowlist body over a small vocabulary, so that
// rules and findings meet often.
func randomRule(r *rand.Rand, partial bool) (string, map[string]any) {
	m := map[string]any{}
	maybe := func(k string, v any) {
		if !partial || r.IntN(2) == 0 {
			m[k] = v
		}
	}
	typ := []string{"SECRET", "VULNERABILITY"}[r.IntN(2)]
	maybe("type", typ)
	names := []string{"sha256:aa", "sha256:bb", "CVE-1", "cve-1", "CVE-2", "ghsa-1"}
	maybe("name", names[r.IntN(len(names))])
	maybe("active", r.IntN(4) != 0)
	maybe("global_", r.IntN(4) == 0)
	maybe("repos", []int64{int64(100 + r.IntN(3))}[:r.IntN(2)])
	maybe("vcs", []int64{int64(10 + r.IntN(2))}[:r.IntN(2)])
	if r.IntN(3) == 0 {
		maybe("paths", [][]string{{}, {"src/**"}, {"test/**", "**/*.md"}}[r.IntN(3)])
	}
	switch r.IntN(4) {
	case 0:
		maybe("expires_at", future(time.Duration(1+r.IntN(3))*time.Hour))
	case 1:
		if partial {
			maybe("expires_at", "never")
		}
	}
	if !partial {
		m["type"], m["name"] = typ, names[r.IntN(len(names))]
	}
	b, _ := json.Marshal(m)
	return string(b), m
}

func applyRule(rule modelRule, m map[string]any) modelRule {
	if v, ok := m["type"]; ok {
		rule.Type = scangate.ScanType(v.(string))
	}
	if v, ok := m["name"]; ok {
		rule.Name = v.(string)
	}
	if v, ok := m["active"]; ok {
		rule.Active = v.(bool)
	}
	if v, ok := m["global_"]; ok {
		rule.Global = v.(bool)
	}
	if v, ok := m["repos"]; ok {
		rule.Repos = v.([]int64)
	}
	if v, ok := m["vcs"]; ok {
		rule.Vcs = v.([]int64)
	}
	if v, ok := m["paths"]; ok {
		rule.Paths = v.([]string)
	}
	switch v, ok := m["expires_at"]; {
	case !ok:
	case v == "never":
		rule.expires, rule.Expired = nil, false
	default:
		t, _ := time.Parse(time.RFC3339Nano, v.(string))
		rule.expires, rule.Expired = &t, false
	}
	return rule
}

// randomFindings are up to three findings of a type over a small
// vocabulary of names, aliases and paths.
func randomFindings(r *rand.Rand, typ scangate.ScanType) ([]scangate.FindingRef, string) {
	var refs []scangate.FindingRef
	var objs []string
	for range r.IntN(4) {
		f := scangate.FindingRef{Type: typ, Path: []string{"", "src/a.go", "test/b.go", "docs/c.md"}[r.IntN(4)]}
		if typ == scangate.ScanVulnerability {
			f.Name = []string{"CVE-1", "cve-1", "CVE-2"}[r.IntN(3)]
			f.Aliases = [][]string{nil, {"GHSA-1"}, {"cve-2"}}[r.IntN(3)]
		} else {
			f.Name = []string{"sha256:aa", "sha256:bb"}[r.IntN(2)]
		}
		o := map[string]any{"name": f.Name}
		if f.Path != "" {
			o["path"] = f.Path
		}
		if f.Aliases != nil {
			o["aliases"] = f.Aliases
		}
		b, _ := json.Marshal(o)
		refs, objs = append(refs, f), append(objs, string(b))
	}
	return refs, "[" + strings.Join(objs, ",") + "]"
}

// TestAllowlistsRandomized runs random sequences of scan recordings and
// allowlist creations and changes, some at once, and then compares every
// stored count with a brute-force recount from the final allowlists.
func TestAllowlistsRandomized(t *testing.T) {
	t.Parallel()
	for seed := uint64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			r := rand.New(rand.NewPCG(seed, 99))
			var mu sync.Mutex
			rules := map[int]modelRule{}
			start := time.Now()
			var scans []modelScan
			for round := 0; round < 8; round++ {
				var wg sync.WaitGroup
				busy := map[int]bool{} // one change per allowlist per round: their order is then known
				for op := 0; op < 6; op++ {
					switch k := r.IntN(3); {
					case k == 0 || len(rules) == 0:
						body, m := randomRule(r, false)
						wg.Go(func() {
							a, ok := tryOK(t, h.allow(body))
							if !ok {
								return
							}
							mu.Lock()
							rules[int(a["id"].(float64))] = applyRule(modelRule{Rule: scangate.Rule{Active: true}}, m)
							mu.Unlock()
						})
					case k == 1:
						mu.Lock()
						id := 1 + r.IntN(len(rules))
						mu.Unlock()
						if busy[id] {
							continue
						}
						busy[id] = true
						body, m := randomRule(r, true)
						wg.Go(func() {
							if _, ok := tryOK(t, h.modify(id, body)); !ok {
								return
							}
							mu.Lock()
							rules[id] = applyRule(rules[id], m)
							mu.Unlock()
						})
					default:
						s := scanReq{VcID: int64(10 + r.IntN(2)), RepoID: int64(100 + r.IntN(3)), PR: int64(1 + r.IntN(3)),
							Status: scangate.ScanStatuses[r.IntN(4)], Type: []string{"SECRET", "VULNERABILITY"}[r.IntN(2)]}
						refs, findings := randomFindings(r, scangate.ScanType(s.Type))
						body := fmt.Sprintf(`{"scan_type":%q,"vc_type":"github","vc_id":%d,"vc_name":"v","repo_id":%d,"repo_name":"r",`+
							`"webhook_id":3,"status":%q,"pr":{"pr_id":%d,"pr_name":"n","pr_link":"l"},"findings":%s}`,
							s.Type, s.VcID, s.RepoID, s.Status, s.PR, findings)
						for i := range refs {
							refs[i].RepoID, refs[i].VcID = s.RepoID, s.VcID
						}
						wg.Go(func() {
							sc, ok := tryOK(t, h.call("record-scan", jsonReq(&h.admin, body)))
							if !ok {
								return
							}
							mu.Lock()
							scans = append(scans, modelScan{id: int(sc["id"].(float64)), typ: scangate.ScanType(s.Type), status: s.Status,
								repo: s.RepoID, vc: s.VcID, pr: fmt.Sprint(s.VcID, s.RepoID, s.PR), createdAt: sc["created_at"].(string), findings: refs})
							mu.Unlock()
						})
					}
				}
				// Some rounds, the scheduled function runs while the changes
				// do, at a time half an hour later each round; once they are
				// done it runs again, so that every expiry due is applied.
				at := start.Add(time.Duration(round) * 30 * time.Minute)
				if round%2 == 1 {
					wg.Go(func() { h.expireAt(at) })
				}
				wg.Wait()
				h.expireAt(at)
				for id, rule := range rules {
					if rule.expires != nil && !rule.expires.After(at) {
						rule.Expired = true
						rules[id] = rule
					}
				}
			}
			// The model: a finding counts unless a final rule covers it.
			want := map[int][2]float64{}
			newest := map[string]map[scangate.ScanType]modelScan{}
			for _, s := range scans {
				n := 0.0
				for _, f := range s.findings {
					covered := false
					for _, rule := range rules {
						covered = covered || rule.Covers(f)
					}
					if !covered {
						n++
					}
				}
				if s.typ == scangate.ScanSecret {
					want[s.id] = [2]float64{n, 0}
				} else {
					want[s.id] = [2]float64{0, n}
				}
				if newest[s.pr] == nil {
					newest[s.pr] = map[scangate.ScanType]modelScan{}
				}
				if o, ok := newest[s.pr][s.typ]; !ok || s.createdAt > o.createdAt || s.createdAt == o.createdAt && s.id > o.id {
					newest[s.pr][s.typ] = s
				}
			}
			for _, s := range scans {
				sc := mustOK(t, h.get(&h.admin, strconv.Itoa(s.id)))
				w := want[s.id]
				block := s.status != "completed" || w[0]+w[1] > 0
				if sc["secret_count"] != w[0] || sc["vulnerability_count"] != w[1] || sc["block_status"] != block {
					t.Errorf("scan %d: %v/%v block %v; the model says %v/%v block %v", s.id, sc["secret_count"], sc["vulnerability_count"], sc["block_status"], w[0], w[1], block)
				}
				pr := sc["pr"].(map[string]any)
				ws, wv := 0.0, 0.0
				if n, ok := newest[s.pr][scangate.ScanSecret]; ok {
					ws = want[n.id][0]
				}
				if n, ok := newest[s.pr][scangate.ScanVulnerability]; ok {
					wv = want[n.id][1]
				}
				if pr["secret_count"] != ws || pr["vulnerability_count"] != wv {
					t.Errorf("scan %d's PR: %v/%v; the model says %v/%v", s.id, pr["secret_count"], pr["vulnerability_count"], ws, wv)
				}
			}
			h.noDrift()
		})
	}
}

// TestAllowlistFailureMidway fails the database in the middle of a
// re-evaluation; the same request sent again completes it, counting
// nothing twice.
func TestAllowlistFailureMidway(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	// 30 scans of 40 findings each of one vulnerability: re-evaluating
	// them takes several transactions.
	names := make([]string, 40)
	for i := range names {
		names[i] = "CVE-2021-44228"
	}
	for i := range 30 {
		mustOK(t, h.record(scanReq{Type: "VULNERABILITY", Status: "completed", PR: int64(1 + i%5), RepoID: int64(100 + i%3), Findings: names}))
	}
	mustOK(t, h.allow(`{"type":"VULNERABILITY","name":"CVE-2021-44228","repos":[100]}`))
	h.noDrift()

	// From the third transaction on, every attempt of every call fails
	// with an HTTP 500: the database goes down midway.
	var txs atomic.Int64
	var down atomic.Bool
	hook := func(op string) {
		if op == "TransactWriteItems" && txs.Add(1) == 3 {
			down.Store(true)
		}
	}
	fault := func(string, any) error {
		if down.Load() {
			return ddbtest.InternalServerError()
		}
		return nil
	}
	h.env.Hook.Store(&hook)
	h.env.Fault.Store(&fault)
	resp := h.modify(1, `{"repos":[101, 102]}`)
	h.env.Hook.Store(nil)
	h.env.Fault.Store(nil)
	if !down.Load() {
		t.Fatalf("the modify made %d transactions; the test needs at least 3", txs.Load())
	}
	expectProblem(t, resp, 503)
	if resp.Headers["Retry-After"] == "" {
		t.Error("a 503 without Retry-After")
	}
	if r, _ := h.env.Store.Check(t.Context()); len(r.Drift) == 0 {
		t.Fatal("the failure left nothing half-done: the test does not fail midway")
	}
	mustOK(t, h.modify(1, `{"repos":[101, 102]}`))
	h.noDrift()
	for id := 1; id <= 30; id++ {
		_, v, _ := h.counts(id)
		want := 0.0
		if (id-1)%3 == 0 {
			want = 40
		}
		if v != want {
			t.Errorf("scan %d: %v vulnerabilities; want %v", id, v, want)
		}
	}
}
