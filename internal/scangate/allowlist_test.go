package scangate_test

import (
	"slices"
	"testing"
	"time"

	"github.com/scangate/scangate/internal/scangate"
)

const (
	secret = scangate.ScanSecret
	vuln   = scangate.ScanVulnerability
)

// TestRuleCovers: one row per rule of suppression (docs/API.md): active, of
// the finding's type, of its name (exact for secrets, ignoring case for
// vulnerabilities), and global or naming its repository or integration.
// Every finding below is in repository 100 of integration 10.
func TestRuleCovers(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		rule    scangate.Rule
		finding scangate.FindingRef // RepoID 100, VcID 10 are added
		want    bool
	}{
		// Name and type.
		{"secret, same name, global", scangate.Rule{Type: secret, Name: "sha256:aa", Active: true, Global: true}, scangate.FindingRef{Type: secret, Name: "sha256:aa"}, true},
		{"secret, name in other case", scangate.Rule{Type: secret, Name: "SHA256:AA", Active: true, Global: true}, scangate.FindingRef{Type: secret, Name: "sha256:aa"}, false},
		{"secret, finding in other case", scangate.Rule{Type: secret, Name: "sha256:aa", Active: true, Global: true}, scangate.FindingRef{Type: secret, Name: "sha256:aA"}, false},
		{"secret, other name", scangate.Rule{Type: secret, Name: "sha256:aa", Active: true, Global: true}, scangate.FindingRef{Type: secret, Name: "sha256:ab"}, false},
		{"vulnerability, same name", scangate.Rule{Type: vuln, Name: "CVE-2021-44228", Active: true, Global: true}, scangate.FindingRef{Type: vuln, Name: "CVE-2021-44228"}, true},
		{"vulnerability, rule lower case", scangate.Rule{Type: vuln, Name: "cve-2021-44228", Active: true, Global: true}, scangate.FindingRef{Type: vuln, Name: "CVE-2021-44228"}, true},
		{"vulnerability, finding mixed case", scangate.Rule{Type: vuln, Name: "CVE-2021-44228", Active: true, Global: true}, scangate.FindingRef{Type: vuln, Name: "Cve-2021-44228"}, true},
		{"vulnerability, GHSA id in other case", scangate.Rule{Type: vuln, Name: "ghsa-jfh8-c2jp-5v3q", Active: true, Global: true}, scangate.FindingRef{Type: vuln, Name: "GHSA-JFH8-C2JP-5V3Q"}, true},
		{"vulnerability, other id", scangate.Rule{Type: vuln, Name: "CVE-2021-44228", Active: true, Global: true}, scangate.FindingRef{Type: vuln, Name: "CVE-2021-44229"}, false},
		{"vulnerability rule, secret finding of that name", scangate.Rule{Type: vuln, Name: "sha256:aa", Active: true, Global: true}, scangate.FindingRef{Type: secret, Name: "sha256:aa"}, false},
		{"secret rule, vulnerability finding of that name", scangate.Rule{Type: secret, Name: "CVE-1", Active: true, Global: true}, scangate.FindingRef{Type: vuln, Name: "CVE-1"}, false},
		{"secret rule, vulnerability finding in other case", scangate.Rule{Type: secret, Name: "cve-1", Active: true, Global: true}, scangate.FindingRef{Type: vuln, Name: "CVE-1"}, false},

		// Active.
		{"inactive, global", scangate.Rule{Type: secret, Name: "sha256:aa", Global: true}, scangate.FindingRef{Type: secret, Name: "sha256:aa"}, false},
		{"inactive, repo listed", scangate.Rule{Type: secret, Name: "sha256:aa", Repos: []int64{100}}, scangate.FindingRef{Type: secret, Name: "sha256:aa"}, false},
		{"inactive, vulnerability", scangate.Rule{Type: vuln, Name: "CVE-1", Global: true}, scangate.FindingRef{Type: vuln, Name: "cve-1"}, false},

		// Scope: global, repos, vcs.
		{"not global, no repos, no vcs", scangate.Rule{Type: secret, Name: "sha256:aa", Active: true}, scangate.FindingRef{Type: secret, Name: "sha256:aa"}, false},
		{"repo listed", scangate.Rule{Type: secret, Name: "sha256:aa", Active: true, Repos: []int64{100}}, scangate.FindingRef{Type: secret, Name: "sha256:aa"}, true},
		{"repo listed among others", scangate.Rule{Type: secret, Name: "sha256:aa", Active: true, Repos: []int64{7, 100, 300}}, scangate.FindingRef{Type: secret, Name: "sha256:aa"}, true},
		{"other repo", scangate.Rule{Type: secret, Name: "sha256:aa", Active: true, Repos: []int64{101}}, scangate.FindingRef{Type: secret, Name: "sha256:aa"}, false},
		{"vc listed", scangate.Rule{Type: secret, Name: "sha256:aa", Active: true, Vcs: []int64{10}}, scangate.FindingRef{Type: secret, Name: "sha256:aa"}, true},
		{"other vc", scangate.Rule{Type: secret, Name: "sha256:aa", Active: true, Vcs: []int64{11}}, scangate.FindingRef{Type: secret, Name: "sha256:aa"}, false},
		{"repo listed, vc not", scangate.Rule{Type: secret, Name: "sha256:aa", Active: true, Repos: []int64{100}, Vcs: []int64{11}}, scangate.FindingRef{Type: secret, Name: "sha256:aa"}, true},
		{"vc listed, repo not", scangate.Rule{Type: secret, Name: "sha256:aa", Active: true, Repos: []int64{101}, Vcs: []int64{10}}, scangate.FindingRef{Type: secret, Name: "sha256:aa"}, true},
		{"neither listed", scangate.Rule{Type: secret, Name: "sha256:aa", Active: true, Repos: []int64{101}, Vcs: []int64{11}}, scangate.FindingRef{Type: secret, Name: "sha256:aa"}, false},
		{"global, other repos and vcs listed", scangate.Rule{Type: secret, Name: "sha256:aa", Active: true, Global: true, Repos: []int64{101}, Vcs: []int64{11}}, scangate.FindingRef{Type: secret, Name: "sha256:aa"}, true},
		{"the vc's id in repos", scangate.Rule{Type: secret, Name: "sha256:aa", Active: true, Repos: []int64{10}}, scangate.FindingRef{Type: secret, Name: "sha256:aa"}, false},
		{"the repo's id in vcs", scangate.Rule{Type: secret, Name: "sha256:aa", Active: true, Vcs: []int64{100}}, scangate.FindingRef{Type: secret, Name: "sha256:aa"}, false},
		{"vulnerability, vc listed, other case", scangate.Rule{Type: vuln, Name: "cve-2022-0001", Active: true, Vcs: []int64{10, 11}}, scangate.FindingRef{Type: vuln, Name: "CVE-2022-0001"}, true},

		// Aliases: other ids of the same advisory, vulnerabilities only.
		{"vulnerability named by an alias", scangate.Rule{Type: vuln, Name: "GHSA-jfh8-c2jp-5v3q", Active: true, Global: true}, scangate.FindingRef{Type: vuln, Name: "CVE-2021-44228", Aliases: []string{"GHSA-jfh8-c2jp-5v3q"}}, true},
		{"vulnerability named by an alias in other case", scangate.Rule{Type: vuln, Name: "ghsa-JFH8-c2jp-5v3q", Active: true, Repos: []int64{100}}, scangate.FindingRef{Type: vuln, Name: "CVE-2021-44228", Aliases: []string{"GHSA-jfh8-c2jp-5v3q"}}, true},
		{"vulnerability named by its second alias", scangate.Rule{Type: vuln, Name: "OSV-2", Active: true, Global: true}, scangate.FindingRef{Type: vuln, Name: "CVE-1", Aliases: []string{"OSV-1", "OSV-2"}}, true},
		{"vulnerability, no alias named", scangate.Rule{Type: vuln, Name: "OSV-3", Active: true, Global: true}, scangate.FindingRef{Type: vuln, Name: "CVE-1", Aliases: []string{"OSV-1", "OSV-2"}}, false},
		{"alias named, inactive", scangate.Rule{Type: vuln, Name: "OSV-1", Global: true}, scangate.FindingRef{Type: vuln, Name: "CVE-1", Aliases: []string{"OSV-1"}}, false},
		{"alias named, other repo", scangate.Rule{Type: vuln, Name: "OSV-1", Active: true, Repos: []int64{101}}, scangate.FindingRef{Type: vuln, Name: "CVE-1", Aliases: []string{"OSV-1"}}, false},
		{"secret findings have no aliases", scangate.Rule{Type: secret, Name: "sha256:bb", Active: true, Global: true}, scangate.FindingRef{Type: secret, Name: "sha256:aa", Aliases: []string{"sha256:bb"}}, false},
		{"an alias does not cross types", scangate.Rule{Type: secret, Name: "OSV-1", Active: true, Global: true}, scangate.FindingRef{Type: vuln, Name: "CVE-1", Aliases: []string{"OSV-1"}}, false},
	} {
		f := c.finding
		f.RepoID, f.VcID = 100, 10
		if got := c.rule.Covers(f); got != c.want {
			t.Errorf("%s: %+v covers %+v = %v; want %v", c.name, c.rule, f, got, c.want)
		}
	}
}

// TestFindingKey: secrets are matched exactly, vulnerabilities ignoring
// (ASCII) case. The key's exact form matters too: it is part of stored
// partition keys (an allowlist group's), so a new form would orphan them.
func TestFindingKey(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		typ        scangate.ScanType
		name, want string
	}{
		{secret, "sha256:5f2b9c0e8d1a", "sha256:5f2b9c0e8d1a"},
		{secret, "sha256:5F2B9C0E8D1A", "sha256:5F2B9C0E8D1A"},
		{secret, "AKIA-Mixed-Case", "AKIA-Mixed-Case"},
		{secret, "", ""},
		{vuln, "CVE-2021-44228", "CVE-2021-44228"},
		{vuln, "cve-2021-44228", "CVE-2021-44228"},
		{vuln, "Cve-2021-44228", "CVE-2021-44228"},
		{vuln, "ghsa-jfh8-c2jp-5v3q", "GHSA-JFH8-C2JP-5V3Q"},
		{vuln, "", ""},
	} {
		if got := scangate.FindingKey(c.typ, c.name); got != c.want {
			t.Errorf("FindingKey(%s, %q) = %q; want %q", c.typ, c.name, got, c.want)
		}
	}
	// Two names match when their keys are equal.
	for _, c := range []struct {
		typ  scangate.ScanType
		a, b string
		same bool
	}{
		{vuln, "cve-2021-44228", "CVE-2021-44228", true},
		{vuln, "GHSA-jfh8-C2JP-5v3q", "ghsa-JFH8-c2jp-5V3Q", true},
		{vuln, "CVE-2021-44228", "CVE-2021-4422", false},
		{secret, "sha256:aa", "sha256:aa", true},
		{secret, "sha256:aa", "SHA256:AA", false},
		{secret, "sha256:aa", "sha256:aa ", false},
	} {
		if got := scangate.FindingKey(c.typ, c.a) == scangate.FindingKey(c.typ, c.b); got != c.same {
			t.Errorf("%s %q and %q match: %v; want %v", c.typ, c.a, c.b, got, c.same)
		}
	}
}

// TestFindingKeys: a finding is matched under its name's key and, for a
// vulnerability, its aliases' keys, each once, the name's first.
func TestFindingKeys(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		f    scangate.FindingRef
		want []string
	}{
		{scangate.FindingRef{Type: secret, Name: "sha256:aa"}, []string{"sha256:aa"}},
		{scangate.FindingRef{Type: secret, Name: "sha256:aa", Aliases: []string{"sha256:bb"}}, []string{"sha256:aa"}},
		{scangate.FindingRef{Type: vuln, Name: "cve-1"}, []string{"CVE-1"}},
		{scangate.FindingRef{Type: vuln, Name: "cve-1", Aliases: []string{"ghsa-x", "OSV-1"}}, []string{"CVE-1", "GHSA-X", "OSV-1"}},
		{scangate.FindingRef{Type: vuln, Name: "CVE-1", Aliases: []string{"cve-1", "GHSA-x", "ghsa-X"}}, []string{"CVE-1", "GHSA-X"}},
	} {
		if got := c.f.Keys(); !slices.Equal(got, c.want) {
			t.Errorf("%+v: keys %q; want %q", c.f, got, c.want)
		}
	}
}

// TestUpdatedCount: a change of one allowlist counts the findings its old
// and new rule judge differently, by type.
func TestUpdatedCount(t *testing.T) {
	t.Parallel()
	off := scangate.Rule{Type: secret, Name: "sha256:aa", Global: true}
	on := scangate.Rule{Type: secret, Name: "sha256:aa", Global: true, Active: true}
	vOff := scangate.Rule{Type: vuln, Name: "CVE-1", Repos: []int64{100}}
	vOn := scangate.Rule{Type: vuln, Name: "cve-1", Repos: []int64{100}, Active: true}
	aa := scangate.FindingRef{Type: secret, Name: "sha256:aa", RepoID: 100, VcID: 10}
	bb := scangate.FindingRef{Type: secret, Name: "sha256:bb", RepoID: 100, VcID: 10}
	cve := scangate.FindingRef{Type: vuln, Name: "CVE-1", RepoID: 100, VcID: 10}
	cveElsewhere := scangate.FindingRef{Type: vuln, Name: "CVE-1", RepoID: 200, VcID: 10}
	for _, c := range []struct {
		name     string
		old, new scangate.Rule
		findings []scangate.FindingRef
		want     scangate.Updated
	}{
		{"activated: its finding counts", off, on, []scangate.FindingRef{aa}, scangate.Updated{Secrets: 1}},
		{"deactivated: counts the same", on, off, []scangate.FindingRef{aa}, scangate.Updated{Secrets: 1}},
		{"every occurrence counts", off, on, []scangate.FindingRef{aa, aa, aa}, scangate.Updated{Secrets: 3}},
		{"a finding it never covers", off, on, []scangate.FindingRef{bb}, scangate.Updated{}},
		{"unchanged rule", on, on, []scangate.FindingRef{aa, bb}, scangate.Updated{}},
		{"vulnerabilities apart", vOff, vOn, []scangate.FindingRef{cve, cve, cveElsewhere}, scangate.Updated{Vulnerabilities: 2}},
		{"renamed within case only", vOn, scangate.Rule{Type: vuln, Name: "CVE-1", Repos: []int64{100}, Active: true}, []scangate.FindingRef{cve}, scangate.Updated{}},
		{"type changed", on, scangate.Rule{Type: vuln, Name: "sha256:aa", Global: true, Active: true}, []scangate.FindingRef{aa}, scangate.Updated{Secrets: 1}},
		{"on create the stored version covers nothing", scangate.Rule{}, vOn, []scangate.FindingRef{cve, cveElsewhere}, scangate.Updated{Vulnerabilities: 1}},
	} {
		var u scangate.Updated
		for _, f := range c.findings {
			u.Count(c.old, c.new, f)
		}
		if u != c.want {
			t.Errorf("%s: %+v; want %+v", c.name, u, c.want)
		}
	}
}

// TestExpiryFiveCalendarYears: an expiry may be five calendar years ahead
// to the second (1,826 days when they hold a 29 February), not one second
// more.
func TestExpiryFiveCalendarYears(t *testing.T) {
	now := time.Date(2026, 11, 25, 9, 30, 0, 0, time.UTC)
	for at, ok := range map[time.Time]bool{
		time.Date(2031, 11, 25, 9, 30, 0, 0, time.UTC): true,
		time.Date(2031, 11, 25, 9, 30, 1, 0, time.UTC): false,
		now.Add(1826 * 24 * time.Hour):                 true,
		now.Add(time.Millisecond):                      true,
		now:                                            false,
	} {
		var p scangate.Problems
		x := scangate.At(at)
		scangate.AllowlistChange{ExpiresAt: &x}.ValidateExpiry(&p, now)
		if (len(p) == 0) != ok {
			t.Errorf("%s: %v; want accepted %v", x, p, ok)
		}
	}
}
