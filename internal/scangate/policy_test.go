package scangate_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/scangate/scangate/internal/scangate"
)

// TestDecide: the gate blocks for a newest scan that blocks (findings at
// or above the policy's severity, pending or processing, failed) and for
// a required pair without a scan when the policy blocks on missing ones;
// reasons come in the order of the categories, missing pairs last.
func TestDecide(t *testing.T) {
	t.Parallel()
	cats := []scangate.CategoryScan{
		{Type: scangate.ScanVulnerability, Category: "semgrep", ScanID: 4, Status: "completed", Sev: scangate.SevCounts{0, 0, 2, 1}},
		{Type: scangate.ScanSecret, Category: "gitleaks", ScanID: 1, Status: "completed", Sev: scangate.SevCounts{0, 1}},
		{Type: scangate.ScanVulnerability, Category: "trivy", ScanID: 3, Status: "processing"},
		{Type: scangate.ScanVulnerability, Category: "bandit", ScanID: 2, Status: "failed", Sev: scangate.SevCounts{0, 0, 0, 0, 5}},
	}
	reasons := func(g scangate.Gate) []string {
		var out []string
		for _, r := range g.Reasons {
			id := "-"
			if r.ScanID != nil {
				id = fmt.Sprint(*r.ScanID)
			}
			out = append(out, fmt.Sprintf("%s %s/%s %s %d", r.Kind, r.Type, r.Category, id, r.Count))
		}
		return out
	}
	p := scangate.DefaultPolicy()
	g := scangate.Decide(p, cats, scangate.Time{})
	want := []string{"findings SECRET/gitleaks 1 1", "failed VULNERABILITY/bandit 2 5", "findings VULNERABILITY/semgrep 4 3", "pending VULNERABILITY/trivy 3 0"}
	if !g.Blocked || !slices.Equal(reasons(g), want) {
		t.Errorf("default policy: %v %q; want %q", g.Blocked, reasons(g), want)
	}
	p = p.With(&scangate.PolicyOverride{BlockSeverity: map[scangate.ScanType]scangate.Severity{scangate.ScanVulnerability: scangate.SeverityHigh},
		Required: &[]scangate.Requirement{{Type: scangate.ScanSecret, Category: "trufflehog"}, {Type: scangate.ScanSecret, Category: "gitleaks"}}})
	g = scangate.Decide(p, cats, scangate.Time{})
	want = []string{"findings SECRET/gitleaks 1 1", "failed VULNERABILITY/bandit 2 0", "pending VULNERABILITY/trivy 3 0", "missing SECRET/trufflehog - 0"}
	if !slices.Equal(reasons(g), want) || p.BlockSeverity[scangate.ScanSecret] != scangate.SeverityNone {
		t.Errorf("high vulnerabilities, two required: %q; want %q", reasons(g), want)
	}
	off := false
	p = p.With(&scangate.PolicyOverride{BlockOnMissing: &off})
	if g = scangate.Decide(p, cats[:1], scangate.Time{}); g.Blocked || len(g.Reasons) != 0 {
		t.Errorf("medium and low findings under high, missing pairs not blocking: %v %q", g.Blocked, reasons(g))
	}
	if g := scangate.Decide(scangate.DefaultPolicy(), nil, scangate.Time{}); g.Blocked || g.Reasons == nil {
		t.Errorf("no scan, nothing required: %+v", g)
	}
}

// TestSevCounts: counts at or above a severity; a severity that is not
// one counts as high (findings recorded before severities).
func TestSevCounts(t *testing.T) {
	t.Parallel()
	var c scangate.SevCounts
	for _, s := range []scangate.Severity{"critical", "high", "medium", "medium", "low", "none", ""} {
		c.Add(s, 1)
	}
	for sev, want := range map[scangate.Severity]int64{"critical": 1, "high": 3, "medium": 5, "low": 6, "none": 7} {
		if got := c.AtLeast(sev); got != want {
			t.Errorf("at least %s: %d; want %d", sev, got, want)
		}
	}
	if c.Total() != 7 {
		t.Errorf("total %d", c.Total())
	}
}
