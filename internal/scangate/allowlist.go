package scangate

import (
	"regexp"
	"slices"
	"time"

	"github.com/bmatcuk/doublestar/v4"
)

// Allowlist suppresses the findings it covers.
type Allowlist struct {
	ID        int64
	Rule      Rule
	Reason    string  // one of Reasons, or "" for none
	ExpiresAt *Time   // nil: it never expires
	Comments  []int64 // ids of its comments, oldest first
	CreatedBy int64
	UpdatedBy int64
	CreatedOn Time
	UpdatedOn Time
}

// Expired reports whether the allowlist has expired at now: its expiry has
// passed, whether or not the scheduled function has applied it yet.
func (a Allowlist) Expired(now time.Time) bool {
	return a.Rule.Expired || a.ExpiresAt != nil && !now.Before(a.ExpiresAt.Time)
}

// Reasons are the reasons an allowlist may give.
var Reasons = []string{"false_positive", "used_in_tests", "accepted_risk", "wont_fix", "revoked"}

// Limits of an allowlist's lifecycle fields.
const (
	MaxPaths       = 50
	MaxPathGlobLen = 256
	// MaxExpiryYears bounds an expiry: at most this many calendar years
	// ahead (time.AddDate), to the second.
	MaxExpiryYears = 5
)

// Rule is what decides which findings an allowlist covers.
type Rule struct {
	Type   ScanType
	Name   string
	Active bool
	Global bool
	Repos  []int64
	Vcs    []int64
	Paths  []string // globs of repository-relative paths; empty: any path
	// Fingerprints, when any, are the only findings' fingerprints it
	// covers (GitHub's "dismiss this alert"); empty: any fingerprint.
	Fingerprints []string
	Expired      bool // its expiry has been applied: it covers nothing

	globs []*regexp.Regexp // Paths compiled (Compiled), or nil
}

// Compiled returns the rule with its path globs compiled once, for a rule
// that will judge many findings; Covers compiles them at every call
// otherwise.
func (r Rule) Compiled() Rule {
	r.globs = compileGlobs(r.Paths)
	return r
}

// compileGlobs compiles globs that were checked when stored; one that does
// not compile (none can) matches nothing.
func compileGlobs(globs []string) []*regexp.Regexp {
	out := make([]*regexp.Regexp, 0, len(globs))
	for _, g := range globs {
		if re, err := compileGlob(g); err == nil {
			out = append(out, re)
		}
	}
	return out
}

// FindingRef is what matching needs to know of a finding.
type FindingRef struct {
	Type    ScanType
	Name    string
	Aliases []string // other ids of the same advisory (vulnerabilities only)
	RepoID  int64
	VcID    int64
	Path    string
	// Fingerprint is its identity across scans ("" for a finding
	// recorded before fingerprints: no allowlist with fingerprints
	// covers it).
	Fingerprint string
}

// Keys returns the keys under which the finding is matched, distinct: its
// name's first, then its aliases' (vulnerabilities only).
func (f FindingRef) Keys() []string {
	keys := []string{FindingKey(f.Type, f.Name)}
	if f.Type != ScanVulnerability {
		return keys
	}
	for _, a := range f.Aliases {
		if k := FindingKey(f.Type, a); !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	return keys
}

// Covers reports whether the rule suppresses the finding: it is active, of
// the finding's type, named by the finding's name or one of its aliases
// (SameName: ignoring ASCII case for vulnerabilities), and global or
// naming the finding's repository or integration.
//
// With paths, the finding's repository-relative path must match one of
// them: `*` and `?` within one segment, `**` across segments; a finding
// without a path is not covered. With fingerprints, the finding's
// fingerprint must be one of them (exactly). An expired rule covers
// nothing.
func (r Rule) Covers(f FindingRef) bool {
	return r.Active && !r.Expired && r.Type == f.Type && r.names(f) &&
		(r.Global || slices.Contains(r.Repos, f.RepoID) || slices.Contains(r.Vcs, f.VcID)) && r.coversPath(f.Path) &&
		(len(r.Fingerprints) == 0 || f.Fingerprint != "" && slices.Contains(r.Fingerprints, f.Fingerprint))
}

// names reports whether the rule's name names the finding's name or, for a
// vulnerability, one of its aliases.
func (r Rule) names(f FindingRef) bool {
	if SameName(r.Type, r.Name, f.Name) {
		return true
	}
	return r.Type == ScanVulnerability && slices.ContainsFunc(f.Aliases, func(a string) bool { return SameName(r.Type, r.Name, a) })
}

func (r Rule) coversPath(path string) bool {
	if len(r.Paths) == 0 {
		return true
	}
	if path == "" {
		return false
	}
	globs := r.globs
	if globs == nil {
		globs = compileGlobs(r.Paths)
	}
	for _, re := range globs {
		if re.MatchString(path) {
			return true
		}
	}
	return false
}

// Equal reports whether two rules are the same.
func (r Rule) Equal(o Rule) bool {
	return r.Type == o.Type && r.Name == o.Name && r.Active == o.Active && r.Global == o.Global &&
		slices.Equal(r.Repos, o.Repos) && slices.Equal(r.Vcs, o.Vcs) && slices.Equal(r.Paths, o.Paths) && slices.Equal(r.Fingerprints, o.Fingerprints) && r.Expired == o.Expired
}

// AllowlistChange is a partial update: nil fields stay as they are.
type AllowlistChange struct {
	Type   *ScanType
	Name   *string
	Active *bool
	Global *bool
	Repos  *[]int64
	Vcs    *[]int64
	Paths  *[]string
	// Fingerprints replaces the fingerprints (an empty list, on modify:
	// any fingerprint again).
	Fingerprints *[]string
	Reason       *string
	ExpiresAt    *Time  // a new expiry
	NoExpiry     bool   // "never": the allowlist no longer expires
	Comment      string // appended when not empty
}

// ApplyTo returns the allowlist with the change made: its rule, reason and
// expiry. A new expiry, or none, makes an expired allowlist apply again.
func (c AllowlistChange) ApplyTo(a Allowlist) Allowlist {
	a.Rule = c.Apply(a.Rule)
	if c.Reason != nil {
		a.Reason = *c.Reason
	}
	switch {
	case c.NoExpiry:
		a.ExpiresAt, a.Rule.Expired = nil, false
	case c.ExpiresAt != nil:
		a.ExpiresAt, a.Rule.Expired = c.ExpiresAt, false
	}
	return a
}

// Apply returns the rule with the change made.
func (c AllowlistChange) Apply(r Rule) Rule {
	if c.Type != nil {
		r.Type = *c.Type
	}
	if c.Name != nil {
		r.Name = *c.Name
	}
	if c.Active != nil {
		r.Active = *c.Active
	}
	if c.Global != nil {
		r.Global = *c.Global
	}
	if c.Repos != nil {
		r.Repos = *c.Repos
	}
	if c.Vcs != nil {
		r.Vcs = *c.Vcs
	}
	if c.Paths != nil {
		r.Paths, r.globs = *c.Paths, nil
	}
	if c.Fingerprints != nil {
		r.Fingerprints = *c.Fingerprints
	}
	return r
}

// Limits of allowlists.
const (
	MaxScopeIDs   = 1000 // repos or vcs of one allowlist
	MaxCommentLen = 4000
	// MaxAllowlistFingerprints bounds the fingerprints of one allowlist
	// (each at most MaxFingerprintLen characters).
	MaxAllowlistFingerprints = 100
)

// Validate checks the bounds of a change's values.
func (c AllowlistChange) Validate(p *Problems) {
	if c.Name != nil {
		checkName(p, "/name", *c.Name)
	}
	for _, l := range []struct {
		ptr string
		ids *[]int64
	}{{"/repos", c.Repos}, {"/vcs", c.Vcs}} {
		ptr, ids := l.ptr, l.ids
		if ids == nil {
			continue
		}
		if len(*ids) > MaxScopeIDs {
			p.Add(ptr, "may hold at most %d ids", MaxScopeIDs)
		}
		for i, id := range *ids {
			if id < 1 {
				p.Add(ptr+"/"+itoa(i), "must be a positive integer")
			}
		}
	}
	if len([]rune(c.Comment)) > MaxCommentLen {
		p.Add("/comment", "must be at most %d characters", MaxCommentLen)
	}
	c.validatePaths(p)
	c.validateFingerprints(p)
	if c.Reason != nil && !slices.Contains(Reasons, *c.Reason) {
		p.Add("/reason", "must be one of false_positive, used_in_tests, accepted_risk, wont_fix, revoked")
	}
}

func (c AllowlistChange) validatePaths(p *Problems) {
	if c.Paths == nil {
		return
	}
	if len(*c.Paths) > MaxPaths {
		p.Add("/paths", "may hold at most %d globs", MaxPaths)
		return
	}
	for i, g := range *c.Paths {
		ptr := "/paths/" + itoa(i)
		switch n := len([]rune(g)); {
		case n < 1 || n > MaxPathGlobLen:
			p.Add(ptr, "must be 1 to %d characters", MaxPathGlobLen)
		case checkHidden(p, ptr, g):
		case !doublestar.ValidatePattern(g):
			p.Add(ptr, "is not a valid glob (* and ? within a segment, ** across segments, [...] classes)")
		default:
			if _, err := compileGlob(g); err != nil {
				p.Add(ptr, "is not a valid glob: %s", err)
			}
		}
	}
}

// validateFingerprints checks the fingerprints of a change: at most
// MaxAllowlistFingerprints, each 1 to MaxFingerprintLen characters
// without control characters. Whether an empty list may be sent is the
// caller's (RequireFingerprints).
func (c AllowlistChange) validateFingerprints(p *Problems) {
	if c.Fingerprints == nil {
		return
	}
	if len(*c.Fingerprints) > MaxAllowlistFingerprints {
		p.Add("/fingerprints", "may hold at most %d fingerprints", MaxAllowlistFingerprints)
		return
	}
	for i, fp := range *c.Fingerprints {
		ptr := "/fingerprints/" + itoa(i)
		if n := len([]rune(fp)); n < 1 || n > MaxFingerprintLen {
			p.Add(ptr, "must be 1 to %d characters", MaxFingerprintLen)
			continue
		}
		checkControl(p, ptr, fp)
	}
}

// RequireFingerprints refuses an empty list of fingerprints, on create
// (where leaving it out means any fingerprint).
func (c AllowlistChange) RequireFingerprints(p *Problems) {
	if c.Fingerprints != nil && len(*c.Fingerprints) == 0 {
		p.Add("/fingerprints", "must hold 1 to %d fingerprints; leave it out to cover every fingerprint", MaxAllowlistFingerprints)
	}
}

// ValidateExpiry checks a new expiry at now: in the future, at most
// MaxExpiryYears calendar years ahead.
func (c AllowlistChange) ValidateExpiry(p *Problems, now time.Time) {
	switch {
	case c.ExpiresAt == nil:
	case !c.ExpiresAt.After(now):
		p.Add("/expires_at", "must be in the future")
	case c.ExpiresAt.After(now.AddDate(MaxExpiryYears, 0, 0)):
		p.Add("/expires_at", "must be at most %d calendar years ahead", MaxExpiryYears)
	}
}

// Reevaluation is the durable work that re-evaluates what an allowlist
// covers after a change or an expiry.
type Reevaluation struct {
	ID            int64
	AllowlistID   int64
	Cause         string // allowlist (a create or a modify) or expiry
	Status        string // running or complete
	FindingsTotal *int64 // nil until planned; the findings judged, once complete
	FindingsDone  int64
	StartedAt     Time
	CompletedAt   *Time
	Updated       *Updated // once complete
}

// Updated counts the findings, every occurrence in every scan, that the
// stored and the new version of one allowlist judge differently by its own
// rule alone.
type Updated struct {
	Secrets         int64
	Vulnerabilities int64
}

// Count adds a finding to the tally if the old and new rule judge it differently.
func (u *Updated) Count(old, new Rule, f FindingRef) {
	if old.Covers(f) == new.Covers(f) {
		return
	}
	if f.Type == ScanSecret {
		u.Secrets++
	} else {
		u.Vulnerabilities++
	}
}
