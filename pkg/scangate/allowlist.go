package scangate

import "slices"

// Allowlist suppresses the findings it covers.
type Allowlist struct {
	ID        int64
	Rule      Rule
	Comments  []int64 // ids of its comments, oldest first
	CreatedBy int64
	UpdatedBy int64
	CreatedOn Time
	UpdatedOn Time
}

// Rule is what decides which findings an allowlist covers.
type Rule struct {
	Type   ScanType
	Name   string
	Active bool
	Global bool
	Repos  []int64
	Vcs    []int64
}

// FindingRef is what matching needs to know of a finding.
type FindingRef struct {
	Type    ScanType
	Name    string
	Aliases []string // other ids of the same advisory (vulnerabilities only)
	RepoID  int64
	VcID    int64
	Path    string
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
// (ignoring case for vulnerabilities), and global or naming the finding's
// repository or integration.
func (r Rule) Covers(f FindingRef) bool {
	return r.Active && r.Type == f.Type && slices.Contains(f.Keys(), FindingKey(r.Type, r.Name)) &&
		(r.Global || slices.Contains(r.Repos, f.RepoID) || slices.Contains(r.Vcs, f.VcID))
}

// Equal reports whether two rules are the same.
func (r Rule) Equal(o Rule) bool {
	return r.Type == o.Type && r.Name == o.Name && r.Active == o.Active && r.Global == o.Global &&
		slices.Equal(r.Repos, o.Repos) && slices.Equal(r.Vcs, o.Vcs)
}

// AllowlistChange is a partial update: nil fields stay as they are.
type AllowlistChange struct {
	Type    *ScanType
	Name    *string
	Active  *bool
	Global  *bool
	Repos   *[]int64
	Vcs     *[]int64
	Comment string // appended when not empty
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
	return r
}

// Limits of allowlists.
const (
	MaxScopeIDs   = 1000 // repos or vcs of one allowlist
	MaxCommentLen = 4000
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
