package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/scangate/scangate/internal/ddbtest"
	"github.com/scangate/scangate/internal/queue/work"
	"github.com/scangate/scangate/internal/retry"
	"github.com/scangate/scangate/internal/scangate"
	"github.com/scangate/scangate/internal/store"
	"github.com/scangate/scangate/internal/trigger"
	"github.com/scangate/scangate/internal/usecase"
)

// modelScan is what the brute-force model knows of a recorded scan.
type modelScan struct {
	id        int
	typ       scangate.ScanType
	category  string
	status    string
	repo, vc  int64
	pr        string
	prID      int
	createdAt string
	findings  []scangate.FindingRef // type, repo and vc filled in
	sevs      []scangate.Severity   // each finding's
	fps       []string              // each finding's fingerprint
	branch    string                // a branch analysis's branch ("" for a PR's scan)
	base      string                // a PR scan's base_ref
}

// modelPolicy is what the model knows of the gate policy.
type modelPolicy struct {
	global scangate.Policy
	repos  map[int64]*scangate.PolicyOverride
}

// modelRule is what the model knows of an allowlist: its rule and expiry.
type modelRule struct {
	scangate.Rule
	expires *time.Time
}

// tryOK is mustOK for other goroutines than the test's; a change whose
// work runs on (202: the scheduled function of the same round took it
// over) is made too.
func tryOK(t *testing.T, resp events.APIGatewayProxyResponse) (map[string]any, bool) {
	if resp.StatusCode != 200 && resp.StatusCode != 201 && resp.StatusCode != 202 {
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
	if r.IntN(3) == 0 {
		fps := [][]string{{"fa"}, {"fa", "fb"}, {"fb"}}
		if partial {
			fps = append(fps, []string{}) // any fingerprint again: on modify only
		}
		maybe("fingerprints", fps[r.IntN(len(fps))])
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
	if v, ok := m["fingerprints"]; ok {
		rule.Fingerprints = v.([]string)
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
// vocabulary of names, aliases, paths, fingerprints (fc: one no allowlist
// lists) and severities.
func randomFindings(r *rand.Rand, typ scangate.ScanType) ([]scangate.FindingRef, []scangate.Severity, []string, string) {
	var refs []scangate.FindingRef
	var sevs []scangate.Severity
	var fps, objs []string
	for range r.IntN(4) {
		f := scangate.FindingRef{Type: typ, Path: []string{"", "src/a.go", "test/b.go", "docs/c.md"}[r.IntN(4)]}
		if typ == scangate.ScanVulnerability {
			f.Name = []string{"CVE-1", "cve-1", "CVE-2"}[r.IntN(3)]
			f.Aliases = [][]string{nil, {"GHSA-1"}, {"cve-2"}}[r.IntN(3)]
		} else {
			f.Name = []string{"sha256:aa", "sha256:bb"}[r.IntN(2)]
		}
		fp := []string{"fa", "fb", "fc"}[r.IntN(3)]
		f.Fingerprint = fp
		o := map[string]any{"name": f.Name, "fingerprint": fp}
		sev := scangate.SeverityHigh
		if k := r.IntN(6); k < 5 {
			sev = scangate.Severity(scangate.Severities[k])
			o["severity"] = sev
		}
		if f.Path != "" {
			o["path"] = f.Path
		}
		if f.Aliases != nil {
			o["aliases"] = f.Aliases
		}
		b, _ := json.Marshal(o)
		refs, sevs, fps, objs = append(refs, f), append(sevs, sev), append(fps, fp), append(objs, string(b))
	}
	return refs, sevs, fps, "[" + strings.Join(objs, ",") + "]"
}

// randomPolicy is a random policy body over a small vocabulary; a
// repository's override (repo != 0) may leave members out, or be deleted
// (nil body).
func randomPolicy(r *rand.Rand, repo int64) (*string, *scangate.PolicyOverride) {
	if repo != 0 && r.IntN(4) == 0 {
		return nil, nil
	}
	o := &scangate.PolicyOverride{}
	m := map[string]any{}
	if repo == 0 || r.IntN(2) == 0 {
		bs := map[string]any{}
		o.BlockSeverity = map[scangate.ScanType]scangate.Severity{}
		for _, t := range scangate.ScanTypes {
			if r.IntN(3) > 0 {
				sev := scangate.Severity(scangate.Severities[r.IntN(5)])
				bs[t], o.BlockSeverity[scangate.ScanType(t)] = sev, sev
			}
		}
		m["block_severity"] = bs
	}
	if repo == 0 || r.IntN(2) == 0 {
		req := []scangate.Requirement{}
		for _, c := range []scangate.Requirement{{Type: scangate.ScanSecret, Category: "a"}, {Type: scangate.ScanVulnerability, Category: "b"}} {
			if r.IntN(2) == 0 {
				req = append(req, c)
			}
		}
		m["required"], o.Required = req, &req
	}
	if repo == 0 || r.IntN(2) == 0 {
		b := r.IntN(2) == 0
		m["block_on_missing"], o.BlockOnMissing = b, &b
	}
	if repo == 0 || r.IntN(2) == 0 {
		b := scangate.BlockOns[r.IntN(2)]
		m["block_on"], o.BlockOn = b, &b
	}
	body, _ := json.Marshal(m)
	str := string(body)
	return &str, o
}

// TestAllowlistsRandomized runs random sequences of scan recordings (of
// random categories and severities), allowlist creations and changes and
// gate policy changes, some at once, and after every round compares every
// stored count, block status and gate with a brute-force model (the
// allowlists and the policy as they are), and check finds no drift.
func TestAllowlistsRandomized(t *testing.T) {
	t.Parallel()
	for seed := uint64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			t.Parallel()
			randomized(t, newHarness(t), seed, nil)
		})
	}
}

// TestAllowlistsRandomizedFannedOut is TestAllowlistsRandomized with
// every re-evaluation of more than 2 findings dispatched to a queue in
// steps of about 4 (a store so configured), whose messages are handled
// by the work function in goroutines of their own, every third twice at
// once, while the round's recordings, allowlist changes, policy changes
// and expiries go on: at the end of each round the queue is drained,
// the scheduled function finishes what is left, and check and the model
// agree.
func TestAllowlistsRandomizedFannedOut(t *testing.T) {
	t.Parallel()
	for seed := uint64(5); seed <= 7; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			h.store = store.New(h.env.DB, h.env.Table, store.WithRetry(retry.Default), store.WithReevaluation(2, 4))
			q := &stepQueue{t: t, handle: trigger.RunWork(usecase.Runner(h.store, time.Now, nil), h.log)}
			h.queue = q
			randomized(t, h, seed, q)
			if q.sent.Load() == 0 {
				t.Error("no work was dispatched: the test does not fan out")
			}
			t.Logf("%d step messages", q.sent.Load())
		})
	}
}

// stepQueue delivers each message it is sent to the work function in a
// goroutine of its own, every third one twice at once, and again while
// the function answers it failed (a partial batch response).
type stepQueue struct {
	t      *testing.T
	handle trigger.QueueHandler
	sent   atomic.Int64
	wg     sync.WaitGroup
}

func (q *stepQueue) Send(_ context.Context, bodies []string) error {
	for _, b := range bodies {
		n := q.sent.Add(1)
		for c := range 1 + int(n%3/2) {
			id := fmt.Sprintf("m%d-%d", n, c)
			q.wg.Go(func() {
				for attempt := 0; ; attempt++ {
					resp, err := q.handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{{MessageId: id, Body: b}}})
					if err == nil && len(resp.BatchItemFailures) == 0 {
						return
					}
					if attempt == 20 {
						q.t.Errorf("message %s %s: %+v %v", id, b, resp, err)
						return
					}
				}
			})
		}
	}
	return nil
}

// settle drains the queue and has the scheduled function (at at) take
// over what is left, until no work runs.
func (q *stepQueue) settle(h *harness, at time.Time) {
	for range 10 {
		q.wg.Wait()
		r, err := h.store.Check(context.Background())
		if err != nil {
			q.t.Fatal(err)
		}
		if len(r.Running) == 0 {
			return
		}
		h.expireAt(at.Add(work.DefaultDispatchLease + time.Minute))
	}
	q.t.Fatal("work still running after the queue drained ten times")
}

// randomized runs rounds of random concurrent changes on h, with seed,
// and compares the service with a brute-force model after each; q, when
// set, is the queue of the work the rounds dispatch.
func randomized(t *testing.T, h *harness, seed uint64, q *stepQueue) {
	r := rand.New(rand.NewPCG(seed, 99))
	var mu sync.Mutex
	rules := map[int]modelRule{}
	policy := modelPolicy{global: scangate.DefaultPolicy(), repos: map[int64]*scangate.PolicyOverride{}}
	start := time.Now()
	var scans []modelScan
	for round := 0; round < 8; round++ {
		var wg sync.WaitGroup
		busy := map[int]bool{} // one change per allowlist per round: their order is then known
		policyBusy := false    // one policy change per round, likewise
		for op := 0; op < 7; op++ {
			switch k := r.IntN(5); {
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
			case k == 2 && !policyBusy:
				policyBusy = true
				repo := []int64{0, 0, 100, 101}[r.IntN(4)]
				body, o := randomPolicy(r, repo)
				wg.Go(func() {
					var resp events.APIGatewayProxyResponse
					if body == nil {
						resp = h.call("delete-repo-gate-policy", request{caller: &h.admin, params: map[string]string{"repo_id": fmt.Sprint(repo)}})
					} else {
						resp = h.setPolicy(int(repo), *body)
					}
					if _, ok := tryOK(t, resp); !ok {
						return
					}
					mu.Lock()
					if repo == 0 {
						policy.global = scangate.DefaultPolicy().With(o)
					} else {
						policy.repos[repo] = o
					}
					mu.Unlock()
				})
			default:
				s := scanReq{VcID: int64(10 + r.IntN(2)), RepoID: int64(100 + r.IntN(3)), PR: int64(1 + r.IntN(3)),
					Status: scangate.ScanStatuses[r.IntN(4)], Type: []string{"SECRET", "VULNERABILITY"}[r.IntN(2)]}
				if r.IntN(2) == 0 { // mostly completed: only a completed PR scan is classified
					s.Status = scangate.StatusCompleted
				}
				category := []string{"a", "b", "default"}[r.IntN(3)]
				var like *modelScan // an analysis of the base of a PR scanned before, of its pair
				if k == 4 {
					mu.Lock()
					var based []modelScan
					for _, o := range scans {
						if o.base != "" {
							based = append(based, o)
						}
					}
					if len(based) > 0 && r.IntN(4) > 0 {
						o := based[r.IntN(len(based))]
						like = &o
						s.VcID, s.RepoID, s.Type, category = o.vc, o.repo, string(o.typ), o.category
					}
					mu.Unlock()
				}
				refs, sevs, fps, findings := randomFindings(r, scangate.ScanType(s.Type))
				// PR 1 is based on main, PR 2 on dev, PR 3 on nothing;
				// k 4 is an analysis of main or dev instead (mostly
				// completed: one that is not is no baseline).
				target := fmt.Sprintf(`"pr":{"pr_id":%d,"pr_name":"n","pr_link":"l"}`, s.PR)
				branch, base := "", []string{"main", "dev", ""}[s.PR-1]
				if base != "" {
					target += fmt.Sprintf(`,"base_ref":%q`, base)
				}
				if k == 4 {
					branch, base = []string{"main", "dev"}[r.IntN(2)], ""
					if r.IntN(4) > 0 {
						s.Status = scangate.StatusCompleted
					}
					if like != nil {
						branch = like.base
					}
					target = fmt.Sprintf(`"branch":%q`, branch)
				}
				body := fmt.Sprintf(`{"scan_type":%q,"vc_type":"github","vc_id":%d,"vc_name":"v","repo_id":%d,"repo_name":"o/r",`+
					`"webhook_id":3,"status":%q,%s,"findings":%s,"category":%q}`,
					s.Type, s.VcID, s.RepoID, s.Status, target, findings, category)
				for i := range refs {
					refs[i].RepoID, refs[i].VcID = s.RepoID, s.VcID
				}
				wg.Go(func() {
					sc, ok := tryOK(t, h.call("record-scan", jsonReq(&h.admin, body)))
					if !ok {
						return
					}
					mu.Lock()
					ms := modelScan{id: int(sc["id"].(float64)), typ: scangate.ScanType(s.Type), category: category,
						status: s.Status, repo: s.RepoID, vc: s.VcID, pr: fmt.Sprint(s.VcID, s.RepoID, s.PR),
						createdAt: sc["created_at"].(string), findings: refs, sevs: sevs, fps: fps, branch: branch, base: base}
					if branch == "" {
						ms.prID = int(sc["pr_id"].(float64))
					}
					scans = append(scans, ms)
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
		if q != nil {
			q.settle(h, at)
		}
		for id, rule := range rules {
			if rule.expires != nil && !rule.expires.After(at) {
				rule.Expired = true
				rules[id] = rule
			}
		}
		h.noDrift()
		compareModel(t, h, scans, rules, policy)
	}
	// Whatever the rounds did (which scans end first is the machine's),
	// one base moves for certain: a completed scan of PR 1 (based on
	// main), then a newer completed analysis of main of its pair, which
	// re-classifies it. At the last round's time: no expiry comes due.
	at := start.Add(7 * 30 * time.Minute)
	for _, branch := range []string{"", "main"} {
		refs, sevs, fps, findings := randomFindings(r, scangate.ScanSecret)
		target, base := `"pr":{"pr_id":1,"pr_name":"n","pr_link":"l"},"base_ref":"main"`, "main"
		if branch != "" {
			target, base = `"branch":"main"`, ""
		}
		sc := mustOK(t, h.call("record-scan", jsonReq(&h.admin, fmt.Sprintf(`{"scan_type":"SECRET","vc_type":"github","vc_id":10,"vc_name":"v",`+
			`"repo_id":100,"repo_name":"o/r","webhook_id":3,"status":"completed",%s,"findings":%s,"category":"a"}`, target, findings))))
		for i := range refs {
			refs[i].RepoID, refs[i].VcID = 100, 10
		}
		ms := modelScan{id: int(sc["id"].(float64)), typ: scangate.ScanSecret, category: "a", status: scangate.StatusCompleted, repo: 100, vc: 10,
			pr: fmt.Sprint(int64(10), int64(100), int64(1)), createdAt: sc["created_at"].(string), findings: refs, sevs: sevs, fps: fps, branch: branch, base: base}
		if branch == "" {
			ms.prID = int(sc["pr_id"].(float64))
		}
		scans = append(scans, ms)
	}
	h.expireAt(at)
	if q != nil {
		q.settle(h, at)
	}
	h.noDrift()
	compareModel(t, h, scans, rules, policy)
	// Re-classified: a PR's newest scan whose baseline is newer than it.
	moved := 0
	byID := map[float64]modelScan{}
	for _, sc := range scans {
		byID[float64(sc.id)] = sc
	}
	for _, sc := range scans {
		if sc.branch != "" {
			continue
		}
		for _, c := range h.gate(sc.prID)["categories"].([]any) {
			c := c.(map[string]any)
			if b, ok := c["baseline"].(map[string]any); ok && c["scan_id"] == float64(sc.id) && byID[b["scan_id"].(float64)].createdAt > sc.createdAt {
				moved++
			}
		}
	}
	if moved == 0 {
		t.Error("no PR's scan was re-classified against a newer analysis of its base: the test does not move bases")
	}
	t.Logf("%d newest scans re-classified against a newer base", moved)
}

// compareModel compares every scan's counts, every newest scan's block
// status and classification, and every PR's gate with what the model
// decides: a finding counts unless a rule covers it; the newest scan of
// each (type, category) of a PR stands for it, classified (when it
// completed) against the newest completed analysis of that pair of the
// PR's base branch (a finding is new unless its fingerprint is among the
// analysis's; none absent from a scan that did not complete); the policy
// judges them, by all their findings or the new ones (block_on).
func compareModel(t *testing.T, h *harness, scans []modelScan, rules map[int]modelRule, policy modelPolicy) {
	t.Helper()
	sev, covered := map[int]scangate.SevCounts{}, map[int][]bool{}
	newest := map[int]map[string]modelScan{} // by PR id, then type#category
	branches := map[string]modelScan{}       // by vc, repo, branch, type#category
	newer := func(s, o modelScan) bool {
		return s.createdAt > o.createdAt || s.createdAt == o.createdAt && s.id > o.id
	}
	for _, s := range scans {
		var c scangate.SevCounts
		cov := make([]bool, len(s.findings))
		for i, f := range s.findings {
			for _, rule := range rules {
				cov[i] = cov[i] || rule.Covers(f)
			}
			if !cov[i] {
				c.Add(s.sevs[i], 1)
			}
		}
		sev[s.id], covered[s.id] = c, cov
		k := string(s.typ) + "#" + s.category
		if s.branch != "" {
			bk := fmt.Sprint(s.vc, s.repo, s.branch, k)
			if o, ok := branches[bk]; s.status == scangate.StatusCompleted && (!ok || newer(s, o)) {
				branches[bk] = s
			}
			continue
		}
		if newest[s.prID] == nil {
			newest[s.prID] = map[string]modelScan{}
		}
		if o, ok := newest[s.prID][k]; !ok || newer(s, o) {
			newest[s.prID][k] = s
		}
	}
	for _, s := range scans {
		sc := mustOK(t, h.get(&h.admin, strconv.Itoa(s.id)))
		secrets, vulns := scangate.CategoryScan{Type: s.typ, Sev: sev[s.id]}.Counts()
		if sc["secret_count"] != float64(secrets) || sc["vulnerability_count"] != float64(vulns) {
			t.Errorf("scan %d: %v/%v; the model says %v/%v", s.id, sc["secret_count"], sc["vulnerability_count"], secrets, vulns)
		}
	}
	for prID, cats := range newest {
		var repo int64
		var list []scangate.CategoryScan
		for k, s := range cats {
			repo = s.repo
			c := scangate.CategoryScan{Type: s.typ, Category: s.category, ScanID: int64(s.id), Status: s.status, Sev: sev[s.id]}
			base := map[string]bool{}
			if b, ok := branches[fmt.Sprint(s.vc, s.repo, s.base, k)]; ok && s.base != "" && s.status == scangate.StatusCompleted {
				c.Class.BaselineScanID = int64(b.id)
				for _, fp := range b.fps {
					base[fp] = true
				}
			}
			for i, fp := range s.fps {
				if base[fp] {
					c.Class.Unchanged++
					continue
				}
				c.Class.New++
				if !covered[s.id][i] {
					c.NewSev.Add(s.sevs[i], 1)
				}
			}
			list = append(list, c)
		}
		p := policy.global.With(policy.repos[repo])
		want := scangate.Decide(p, list, scangate.Time{})
		g := h.gate(prID)
		var got []string
		for _, r := range g["reasons"].([]any) {
			m := r.(map[string]any)
			got = append(got, fmt.Sprintf("%s:%s/%s:%v/%v", m["kind"], m["scan_type"], m["category"], m["count"], m["new_count"]))
		}
		var exp []string
		for _, r := range want.Reasons {
			exp = append(exp, fmt.Sprintf("%s:%s/%s:%d/%d", r.Kind, r.Type, r.Category, r.Count, r.NewCount))
		}
		if g["blocked"] != want.Blocked || !slices.Equal(got, exp) {
			t.Errorf("PR %d: blocked %v by %v; the model says %v by %v", prID, g["blocked"], got, want.Blocked, exp)
		}
		byScan := map[float64]map[string]any{}
		for _, c := range g["categories"].([]any) {
			byScan[c.(map[string]any)["scan_id"].(float64)] = c.(map[string]any)
		}
		for _, c := range list {
			if _, _, b := h.counts(int(c.ScanID)); b != p.ScanBlocks(c.Type, c.Status, c.Sev, c.NewSev) {
				t.Errorf("scan %d, the newest %s#%s of PR %d: block status %v; the model says %v", c.ScanID, c.Type, c.Category, prID, b, !b)
			}
			gc := byScan[float64(c.ScanID)]
			var bl any
			if b, ok := gc["baseline"].(map[string]any); ok {
				bl = b["scan_id"]
			}
			wantBL := any(nil)
			if c.Class.BaselineScanID != 0 {
				wantBL = float64(c.Class.BaselineScanID)
			}
			if gc["new_count"] != float64(c.Class.New) || gc["unchanged_count"] != float64(c.Class.Unchanged) || bl != wantBL ||
				c.Status != scangate.StatusCompleted && gc["absent_count"] != 0.0 {
				t.Errorf("scan %d, the newest %s#%s of PR %d: %v new, %v unchanged against %v; the model says %d, %d against %v",
					c.ScanID, c.Type, c.Category, prID, gc["new_count"], gc["unchanged_count"], bl, c.Class.New, c.Class.Unchanged, wantBL)
			}
		}
	}
}

// TestAllowlistFailureMidway fails the database in the middle of a
// re-evaluation: the change is made, and answers 202 with its
// re-evaluation running; the scheduled function completes it, nobody
// sending anything again, counting nothing twice.
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
	id := expectRunning(t, resp)["reevaluation"].(map[string]any)["id"]
	r := h.reevaluation(id)
	if r["status"] != "running" || r["findings_total"] != 1200.0 || r["secrets_updated"] != nil {
		t.Errorf("the re-evaluation before the scheduled function: %v", r)
	}
	if rep, _ := h.env.Store.Check(t.Context()); len(rep.Drift) > 0 || len(rep.Running) != 1 || len(rep.Pending) == 0 {
		t.Fatalf("check after the failure: drift %v, running %v, pending %d: the test does not fail midway", rep.Drift, rep.Running, len(rep.Pending))
	}
	// The request could not give its lease up (the database was down):
	// the scheduled function takes the work over once the lease has run
	// out.
	h.expireAt(time.Now().Add(work.DefaultLease + time.Second))
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
	r = h.reevaluation(id)
	if r["status"] != "complete" || r["findings_total"] != 1200.0 || r["findings_done"] != 1200.0 || r["vulnerabilities_updated"] != 1200.0 ||
		r["secrets_updated"] != 0.0 || r["completed_at"] == nil || r["cause"] != "allowlist" || r["allowlist_id"] != 1.0 {
		t.Errorf("the re-evaluation once complete: %v", r)
	}
}

// reevaluation reads GET /reevaluations/{id}.
func (h *harness) reevaluation(id any) map[string]any {
	h.t.Helper()
	return mustOK(h.t, h.read("get-reevaluation", &h.admin, map[string]string{"reevaluation_id": fmt.Sprint(id)}, ""))
}
