package api_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/scangate/scangate/internal/scangate"
	"github.com/scangate/scangate/internal/trigger"
)

// recordFindings records a completed scan of repo 100 with findings given
// as JSON objects.
func (h *harness) recordFindings(typ string, findings ...string) map[string]any {
	h.t.Helper()
	body := fmt.Sprintf(`{"scan_type":%q,"vc_type":"github","vc_id":10,"vc_name":"acme","repo_id":100,"repo_name":"acme/api",`+
		`"webhook_id":3,"status":"completed","pr":{"pr_id":7,"pr_name":"n","pr_link":"l"},"findings":[%s]}`, typ, strings.Join(findings, ","))
	return mustOK(h.t, h.call("record-scan", jsonReq(&h.admin, body)))
}

// expireAt runs the scheduled function as if it were the given time.
func (h *harness) expireAt(at time.Time) {
	h.t.Helper()
	run := trigger.ExpireAllowlists(h.store, h.store.Runner(func() time.Time { return at }, h.queue), func() time.Time { return at }, slog.New(slog.NewJSONHandler(testWriter{h.t}, nil)))
	if err := run(context.Background(), events.EventBridgeEvent{ID: "test"}); err != nil {
		h.t.Fatal(err)
	}
}

func future(d time.Duration) string { return scangate.At(time.Now().Add(d)).String() }

// TestAllowlistExpiry: an allowlist suppresses until its expiry; when the
// scheduled function runs past it, counts, block status and the PR's
// counts return; extending the expiry, or removing it, suppresses again.
// Running the function twice, or twice at once, changes nothing more.
func TestAllowlistExpiry(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	sc := h.recordFindings("VULNERABILITY", `{"name":"CVE-2021-44228","path":"go.sum"}`)
	id := int(sc["id"].(float64))
	expires := future(time.Hour)
	mustOK(t, h.allow(`{"type":"VULNERABILITY","name":"CVE-2021-44228","global_":true,"reason":"accepted_risk","expires_at":"`+expires+`"}`))
	if _, v, block := h.counts(id); v != 0 || block {
		t.Fatalf("before the expiry: %v, block %v", v, block)
	}
	h.expireAt(time.Now()) // not due yet
	if _, v, _ := h.counts(id); v != 0 {
		t.Fatal("an allowlist expired before its time")
	}
	later := time.Now().Add(2 * time.Hour)
	var wg sync.WaitGroup
	for range 2 { // twice at once
		wg.Go(func() { h.expireAt(later) })
	}
	wg.Wait()
	sc2 := mustOK(t, h.get(&h.admin, fmt.Sprint(id)))
	pr := sc2["pr"].(map[string]any)
	if sc2["vulnerability_count"] != 1.0 || sc2["block_status"] != true || pr["vulnerability_count"] != 1.0 {
		t.Fatalf("after the expiry: %v", sc2)
	}
	if n := len(h.auditEntries("allowlist.expire")); n != 1 {
		t.Errorf("%d allowlist.expire entries; want 1", n)
	}
	h.expireAt(later.Add(time.Minute)) // again: nothing more
	if n := len(h.auditEntries("allowlist.expire")); n != 1 {
		t.Errorf("a second run wrote %d more entries", n-1)
	}
	h.noDrift()
	// Extended, it applies again; then "never" keeps it.
	mustOK(t, h.modify(1, `{"expires_at":"`+future(3*time.Hour)+`"}`))
	if _, v, block := h.counts(id); v != 0 || block {
		t.Fatalf("after extending: %v, block %v", v, block)
	}
	h.expireAt(later) // before the new expiry
	if _, v, _ := h.counts(id); v != 0 {
		t.Fatal("the extended expiry was applied early")
	}
	mustOK(t, h.modify(1, `{"expires_at":"never"}`))
	h.expireAt(time.Now().Add(100 * 24 * time.Hour))
	if _, v, _ := h.counts(id); v != 0 {
		t.Fatal("an allowlist that never expires expired")
	}
	h.noDrift()
}

// TestModifyRacingExpiry: modifies racing the scheduled function leave
// exact counts.
func TestModifyRacingExpiry(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for i := range 6 {
		h.recordFindings("SECRET", fmt.Sprintf(`{"name":"sha256:%d","path":"src/a.go"}`, i%2), `{"name":"sha256:1","path":"test/b.go"}`)
	}
	for i := range 4 {
		mustOK(t, h.allow(fmt.Sprintf(`{"type":"SECRET","name":"sha256:%d","global_":true,"expires_at":%q}`, i%2, future(time.Hour))))
	}
	later := time.Now().Add(2 * time.Hour)
	var wg sync.WaitGroup
	wg.Go(func() { h.expireAt(later) })
	for i := 1; i <= 4; i++ {
		body := []string{`{"paths":["test/**"]}`, `{"expires_at":"never"}`, `{"active":false}`, `{"expires_at":"` + future(5*time.Hour) + `"}`}[i-1]
		wg.Go(func() { tryOK(t, h.modify(i, body)) })
	}
	wg.Wait()
	h.expireAt(later)
	h.noDrift()
}

// TestPathGlobs checks the glob rules of section 10 through the service.
func TestPathGlobs(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		glob string
		in   []string
		out  []string
	}{
		{"test/**", []string{"test/a.go", "test/x/y/z.go"}, []string{"src/test/a.go", "tests/a.go", ""}},
		{"**/*.spec.ts", []string{"a.spec.ts", "web/src/a.spec.ts"}, []string{"a.spec.tsx", "web/a.ts"}},
		{"src/*.go", []string{"src/a.go"}, []string{"src/x/a.go", "a.go"}},
		{"src/?.go", []string{"src/a.go"}, []string{"src/ab.go"}},
		{"*", []string{"Makefile"}, []string{"a/b", ""}},
		{"config/[ab].env", []string{"config/a.env"}, []string{"config/c.env"}},
	} {
		r := scangate.Rule{Type: scangate.ScanSecret, Name: "s", Active: true, Global: true, Paths: []string{c.glob}}
		for _, p := range c.in {
			if !r.Covers(scangate.FindingRef{Type: scangate.ScanSecret, Name: "s", Path: p}) {
				t.Errorf("%s does not cover %q", c.glob, p)
			}
		}
		for _, p := range c.out {
			if r.Covers(scangate.FindingRef{Type: scangate.ScanSecret, Name: "s", Path: p}) {
				t.Errorf("%s covers %q", c.glob, p)
			}
		}
	}
	// Through the service: the paths of an allowlist limit what it covers.
	h := newHarness(t)
	sc := h.recordFindings("SECRET", `{"name":"sha256:f","path":"test/fixtures/k.env"}`, `{"name":"sha256:f","path":"src/k.env"}`,
		`{"name":"sha256:f"}`)
	a := mustOK(t, h.allow(`{"type":"SECRET","name":"sha256:f","global_":true,"paths":["test/**"]}`))
	if a["secrets_updated"] != 1.0 {
		t.Errorf("test/** covers %v findings; want 1", a["secrets_updated"])
	}
	id := int(sc["id"].(float64))
	if s, _, _ := h.counts(id); s != 2 {
		t.Errorf("%v secrets count; want 2", s)
	}
	// Widening the paths counts the findings judged differently.
	if a := mustOK(t, h.modify(1, `{"paths":["**/*.env"]}`)); a["secrets_updated"] != 1.0 {
		t.Errorf("**/*.env: secrets_updated %v; want 1 (src/k.env; the finding without a path stays)", a["secrets_updated"])
	}
	if a := mustOK(t, h.modify(1, `{"paths":[]}`)); a["secrets_updated"] != 1.0 {
		t.Errorf("no paths: secrets_updated %v; want 1 (the finding without a path)", a["secrets_updated"])
	}
	h.noDrift()
}

// TestAliasesBothWays: an allowlist named with any id of an advisory
// covers a finding that lists it, whichever comes first, ignoring case.
func TestAliasesBothWays(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	mustOK(t, h.allow(`{"type":"VULNERABILITY","name":"ghsa-jfh8-c2jp-5v3q","global_":true}`))
	first := h.recordFindings("VULNERABILITY", `{"name":"CVE-2021-44228","aliases":["GHSA-JFH8-C2JP-5V3Q"]}`)
	if first["vulnerability_count"] != 0.0 {
		t.Errorf("allowlist first: %v", first["vulnerability_count"])
	}
	later := h.recordFindings("VULNERABILITY", `{"name":"GHSA-xxxx-yyyy-zzzz","aliases":["cve-2022-22965"]}`)
	if a := mustOK(t, h.allow(`{"type":"VULNERABILITY","name":"CVE-2022-22965","global_":true}`)); a["vulnerabilities_updated"] != 1.0 {
		t.Errorf("finding first: vulnerabilities_updated %v", a["vulnerabilities_updated"])
	}
	if _, v, _ := h.counts(int(later["id"].(float64))); v != 0 {
		t.Errorf("finding first: %v still counts", v)
	}
	// Aliases belong to vulnerabilities.
	resp := h.call("record-scan", jsonReq(&h.admin, `{"scan_type":"SECRET","vc_type":"g","vc_id":1,"vc_name":"v","repo_id":1,"repo_name":"o/r",`+
		`"webhook_id":1,"pr":{"pr_id":1,"pr_name":"n","pr_link":"l"},"findings":[{"name":"s","aliases":["t"]}]}`))
	if ptrs := expectProblem(t, resp, 422); !slices.Contains(ptrs, "/findings/0/aliases") {
		t.Errorf("a secret with aliases: %v", ptrs)
	}
	h.noDrift()
}

// at is t in RFC 3339, to the second, with an offset other than Z.
func at(t time.Time) string {
	return t.In(time.FixedZone("", 2*3600)).Format(time.RFC3339)
}

// TestLifecycleValidation: bad lifecycle members are 422 with pointers and
// store nothing.
func TestLifecycleValidation(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	mustOK(t, h.allow(`{"type":"SECRET","name":"x"}`))
	before := len(h.items())
	y2 := fmt.Sprint(time.Now().Year() + 2) // a year ahead whatever the day
	paths := make([]string, 51)
	for i := range paths {
		paths[i] = fmt.Sprintf("%q", fmt.Sprintf("p%d/**", i))
	}
	for body, ptr := range map[string]string{
		`{"expires_at":"` + scangate.At(time.Now().Add(-time.Minute)).String() + `"}`: "/expires_at",
		`{"expires_at":"` + future(6*365*24*time.Hour) + `"}`:                         "/expires_at",
		`{"expires_at":"tomorrow"}`:                                                   "/expires_at",
		// RFC 3339 only: no offset of 24 hours or 60 minutes, no comma
		// before the fraction, no space for the T, nothing past the
		// calendar year of five years ahead.
		`{"expires_at":"` + y2 + `-01-31T00:00:00+24:00"}`:         "/expires_at",
		`{"expires_at":"` + y2 + `-01-31T00:00:00+00:60"}`:         "/expires_at",
		`{"expires_at":"` + y2 + `-01-31T00:00:00,5Z"}`:            "/expires_at",
		`{"expires_at":"` + y2 + `-01-31 00:00:00Z"}`:              "/expires_at",
		`{"expires_at":"` + y2 + `-01-31T00:00Z"}`:                 "/expires_at",
		`{"expires_at":"` + at(time.Now().AddDate(5, 0, 1)) + `"}`: "/expires_at",
		`{"reason":"because"}`:                                     "/reason",
		`{"paths":[` + strings.Join(paths, ",") + `]}`:             "/paths",
		`{"paths":["a/[b"]}`:                                       "/paths/0",
		`{"paths":[""]}`:                                           "/paths/0",
		`{"paths":"test/**"}`:                                      "/paths",
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
	if after := len(h.items()); after != before {
		t.Errorf("refused changes stored %d items", after-before)
	}
	// Five calendar years ahead is accepted (1,826 days across a 29
	// February); RFC 3339's lower-case t and z and any offset too.
	for i, expires := range []string{at(time.Now().AddDate(5, 0, 0)), y2 + "-01-31t00:00:00.5z", y2 + "-01-31T00:00:00-23:59"} {
		mustOK(t, h.modify(1, `{"expires_at":"`+expires+`"}`))
		mustOK(t, h.allow(fmt.Sprintf(`{"type":"SECRET","name":"z%d","expires_at":%q}`, i, expires)))
	}
	before = len(h.items())
	// "never" only on modify.
	if ptrs := expectProblem(t, h.allow(`{"type":"SECRET","name":"y","expires_at":"never"}`), 422); !slices.Contains(ptrs, "/expires_at") {
		t.Errorf("never on create: %v", ptrs)
	}
	if after := len(h.items()); after != before {
		t.Errorf("refused changes stored %d items", after-before)
	}
}
