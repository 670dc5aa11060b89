package scangate

import (
	"cmp"
	"slices"
)

// The gate (docs/API.md, The gate): what a pull request's newest scans
// say under the gate policy, stored on its record whenever it changes.

// SevCounts counts findings per severity, in the order of Severities
// (critical first, none last).
type SevCounts [5]int64

// sevIndex is a severity's place in SevCounts; an unknown one counts as
// high, the severity of findings recorded before severities.
func sevIndex(s Severity) int {
	if i := slices.Index(Severities, string(s)); i >= 0 {
		return i
	}
	return 1
}

// Add adds d findings of severity s.
func (c *SevCounts) Add(s Severity, d int64) { c[sevIndex(s)] += d }

// Total is the number of findings of every severity.
func (c SevCounts) Total() int64 {
	var n int64
	for _, v := range c {
		n += v
	}
	return n
}

// AtLeast is the number of findings at or above min.
func (c SevCounts) AtLeast(min Severity) int64 {
	var n int64
	for i := 0; i <= sevIndex(min); i++ {
		n += c[i]
	}
	return n
}

// Requirement is a (scan type, category) a policy requires a scan of.
type Requirement struct {
	Type     ScanType `json:"scan_type"`
	Category string   `json:"category"`
}

// Policy decides when a pull request may merge: the lowest severity that
// blocks, per scan type; the (scan type, category) pairs that must have a
// scan; and whether a missing one blocks.
type Policy struct {
	BlockSeverity  map[ScanType]Severity `json:"block_severity"`
	Required       []Requirement         `json:"required"`
	BlockOnMissing bool                  `json:"block_on_missing"`
}

// MaxRequired bounds a policy's required pairs (and a pull request's
// categories: MaxCategories).
const MaxRequired = MaxCategories

// MaxCategories bounds the (scan type, category) pairs of one pull
// request: its record keeps the newest scan of each, and a change of them
// all fits one transaction.
const MaxCategories = 50

// DefaultPolicy blocks on every unsuppressed finding and on every scan
// that did not complete, and requires nothing: the behaviour before
// policies.
func DefaultPolicy() Policy {
	return Policy{BlockSeverity: map[ScanType]Severity{ScanSecret: SeverityNone, ScanVulnerability: SeverityNone},
		Required: []Requirement{}, BlockOnMissing: true}
}

// PolicyOverride is a repository's policy: each member that is set
// replaces the global policy's (per scan type for block_severity).
type PolicyOverride struct {
	BlockSeverity  map[ScanType]Severity `json:"block_severity,omitempty"`
	Required       *[]Requirement        `json:"required,omitempty"`
	BlockOnMissing *bool                 `json:"block_on_missing,omitempty"`
}

// With is the policy p with o's members over it (o may be nil).
func (p Policy) With(o *PolicyOverride) Policy {
	out := Policy{BlockSeverity: map[ScanType]Severity{}, Required: slices.Clone(p.Required), BlockOnMissing: p.BlockOnMissing}
	for _, t := range []ScanType{ScanSecret, ScanVulnerability} {
		out.BlockSeverity[t] = cmp.Or(p.BlockSeverity[t], SeverityNone)
	}
	if out.Required == nil {
		out.Required = []Requirement{}
	}
	if o == nil {
		return out
	}
	for t, s := range o.BlockSeverity {
		out.BlockSeverity[t] = s
	}
	if o.Required != nil {
		out.Required = slices.Clone(*o.Required)
	}
	if o.BlockOnMissing != nil {
		out.BlockOnMissing = *o.BlockOnMissing
	}
	return out
}

// Equal reports whether two policies decide alike.
func (p Policy) Equal(o Policy) bool {
	return p.BlockSeverity[ScanSecret] == o.BlockSeverity[ScanSecret] &&
		p.BlockSeverity[ScanVulnerability] == o.BlockSeverity[ScanVulnerability] &&
		p.BlockOnMissing == o.BlockOnMissing && slices.Equal(p.Required, o.Required)
}

// ScanBlocks is a scan's block status under p: it blocks unless it
// completed and has no unsuppressed finding at or above its type's
// block severity.
func (p Policy) ScanBlocks(t ScanType, status string, sev SevCounts) bool {
	return status != "completed" || sev.AtLeast(p.BlockSeverity[t]) > 0
}

// validateRequired checks a policy's required pairs: at most
// MaxRequired, each a valid category, none twice.
func validateRequired(p *Problems, req []Requirement) {
	if len(req) > MaxRequired {
		p.Add("/required", "may hold at most %d pairs", MaxRequired)
		return
	}
	seen := map[Requirement]bool{}
	for i, r := range req {
		if !ValidCategory(r.Category) {
			p.Add("/required/"+itoa(i)+"/category", "must be 1 to %d characters of A-Z a-z 0-9 . _ / -", MaxCategoryLen)
		}
		if seen[r] {
			p.Add("/required/"+itoa(i), "repeats an earlier pair")
		}
		seen[r] = true
	}
}

// Validate checks a global policy's bounds (types and enums were checked
// when its body was read).
func (p Policy) Validate(pr *Problems) { validateRequired(pr, p.Required) }

// Validate checks an override's bounds.
func (o PolicyOverride) Validate(pr *Problems) {
	if o.Required != nil {
		validateRequired(pr, *o.Required)
	}
}

// CategoryScan is a pull request's newest scan of one (scan type,
// category): what its gate is decided from.
type CategoryScan struct {
	Type      ScanType
	Category  string
	ScanID    int64
	CreatedAt Time
	Status    string
	Sev       SevCounts // its unsuppressed findings per severity
	// Class is its classification against its baseline (re-evaluations
	// never change it: suppression is not identity).
	Class Classification
}

// Counts are the scan's secret and vulnerability counts.
func (c CategoryScan) Counts() (secrets, vulnerabilities int64) {
	if c.Type == ScanSecret {
		return c.Sev.Total(), 0
	}
	return 0, c.Sev.Total()
}

// The kinds of reason a gate blocks.
const (
	ReasonFindings = "findings" // unsuppressed findings at or above the policy's severity
	ReasonPending  = "pending"  // the scan is pending or processing
	ReasonFailed   = "failed"   // the scan failed
	ReasonMissing  = "missing"  // a required (scan type, category) has no scan
)

// GateReason is one reason a gate blocks: of one (scan type, category),
// the newest scan (none when missing) and its findings at or above the
// policy's severity.
type GateReason struct {
	Kind     string   `json:"kind"`
	Type     ScanType `json:"scan_type"`
	Category string   `json:"category"`
	ScanID   *int64   `json:"scan_id"`
	Count    int64    `json:"count"`
}

// Gate is a pull request's decision: whether it is blocked and why, by
// the policy it was judged by, when.
type Gate struct {
	Blocked     bool         `json:"blocked"`
	Reasons     []GateReason `json:"reasons"`
	Policy      Policy       `json:"policy"`
	EvaluatedAt Time         `json:"evaluated_at"`
}

// Same reports whether two gates decide alike, by the same policy
// (whenever they were made).
func (g Gate) Same(o Gate) bool {
	return g.Blocked == o.Blocked && g.Policy.Equal(o.Policy) && SameReasons(g.Reasons, o.Reasons)
}

// SameReasons reports whether two lists of reasons are equal.
func SameReasons(a, b []GateReason) bool {
	return slices.EqualFunc(a, b, func(r, s GateReason) bool {
		return r.Kind == s.Kind && r.Type == s.Type && r.Category == s.Category && r.Count == s.Count &&
			(r.ScanID == nil) == (s.ScanID == nil) && (r.ScanID == nil || *r.ScanID == *s.ScanID)
	})
}

// PRGate is a pull request's stored gate, with its newest scan of each
// (scan type, category) and the commit of its newest scan that named one.
type PRGate struct {
	PRID       int64
	VcID       int64
	RepoID     int64
	HeadSHA    string // "" when no scan named a commit
	BaseRef    string // "" when no scan named a base
	Gate       Gate
	Categories []CategoryScan
}

// SortCategories orders a pull request's categories by scan type, then
// category.
func SortCategories(cats []CategoryScan) {
	slices.SortFunc(cats, func(a, b CategoryScan) int {
		return cmp.Or(cmp.Compare(a.Type, b.Type), cmp.Compare(a.Category, b.Category))
	})
}

// Decide is the gate of a pull request whose newest scans per (scan
// type, category) are cats, under p: blocked when any of them blocks, or
// when a required pair has no scan and p.BlockOnMissing is set. Reasons
// come in the order of the categories, missing pairs last.
func Decide(p Policy, cats []CategoryScan, at Time) Gate {
	cats = slices.Clone(cats)
	SortCategories(cats)
	g := Gate{Reasons: []GateReason{}, Policy: p, EvaluatedAt: at}
	have := map[Requirement]bool{}
	for _, c := range cats {
		have[Requirement{c.Type, c.Category}] = true
		id := c.ScanID
		r := GateReason{Type: c.Type, Category: c.Category, ScanID: &id, Count: c.Sev.AtLeast(p.BlockSeverity[c.Type])}
		switch {
		case c.Status == "pending" || c.Status == "processing":
			r.Kind = ReasonPending
		case c.Status == "failed":
			r.Kind = ReasonFailed
		case r.Count > 0:
			r.Kind = ReasonFindings
		default:
			continue
		}
		g.Reasons = append(g.Reasons, r)
	}
	if p.BlockOnMissing {
		for _, req := range p.Required {
			if !have[req] {
				g.Reasons = append(g.Reasons, GateReason{Kind: ReasonMissing, Type: req.Type, Category: req.Category})
			}
		}
	}
	g.Blocked = len(g.Reasons) > 0
	return g
}

// StoredPolicy is the global gate policy, or a repository's, as stored.
type StoredPolicy struct {
	RepoID   int64           // 0 for the global policy
	Global   Policy          // the global policy
	Override *PolicyOverride // a repository's own members; nil for none
	// Version is the policy's version: every change, global or of a
	// repository, moves it.
	Version   int64
	UpdatedAt *Time  // of the item shown (global or the repository's); nil if never set
	UpdatedBy *int64 // its last writer
}

// Effective is the policy that judges the repository's pull requests (the
// global one for RepoID 0).
func (p StoredPolicy) Effective() Policy { return p.Global.With(p.Override) }

// PolicyChange sets the global policy (RepoID 0) or a repository's
// override (Override nil: the repository returns to the global policy).
type PolicyChange struct {
	RepoID   int64
	Global   Policy
	Override *PolicyOverride
}
