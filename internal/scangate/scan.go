package scangate

import (
	"bytes"
	"cmp"
	"encoding/json"
	"slices"
	"strings"
	"unicode/utf8"
)

// ScanType is what a scan looks for.
type ScanType string

// The scan types.
const (
	ScanSecret        ScanType = "SECRET"
	ScanVulnerability ScanType = "VULNERABILITY"
)

// ScanTypes lists the scan types.
var ScanTypes = []string{string(ScanSecret), string(ScanVulnerability)}

// ScanStatuses lists a scan's statuses; the first is the default.
var ScanStatuses = []string{"pending", StatusCompleted, "processing", "failed"}

// StatusCompleted is the status of a scan that completed: only such a
// branch analysis is a baseline, and only such a PR scan is classified
// against one.
const StatusCompleted = "completed"

// Limits of a recorded scan.
const (
	MaxFindings     = 1000
	MaxOtherDetails = 64 << 10 // serialized bytes
	MaxNameLen      = 256      // a finding's name, a repo's or integration's name
	MaxTextLen      = 2048     // links, paths, titles
	// MaxAliases bounds a finding's aliases, each of which is an index
	// entry of its own.
	MaxAliases = 20
)

// Finding is one secret or vulnerability found by a scan. It has the scan's
// type, repository and version-control integration.
type Finding struct {
	Name     string   // a secret's fingerprint or an advisory id
	Aliases  []string // other ids of the same advisory (vulnerabilities only)
	Rule     string
	Path     string
	Line     *int64
	InSource bool // suppressed in the scanned source (SARIF): never counted
	// Severity is how severe the finding is (docs/DECISIONS.md): a SARIF
	// log's findings always have one; "" where nothing gave one.
	Severity Severity
	// Fingerprint is the finding's identity across scans (with scan type,
	// category and rule), at most MaxFingerprintLen characters, and
	// FingerprintSource where it comes from (FingerprintLineHash,
	// FingerprintScanner, FingerprintDerived).
	Fingerprint, FingerprintSource string
}

// PRRef identifies a pull request as the scanner knows it.
type PRRef struct {
	Number int64 // pr.pr_id: the pull request's number in its repository
	Name   string
	Link   string
}

// NewScan is a request to record a scan.
type NewScan struct {
	Type      ScanType
	VcType    string
	VcID      int64
	VcName    string
	RepoID    int64
	RepoName  string
	WebhookID int64
	PR        PRRef
	// Branch is the branch a branch analysis is of (its name, a leading
	// refs/heads/ removed): set in place of PR.
	Branch       string
	Status       string
	StatURL      *string
	OtherDetails json.RawMessage // a JSON object
	Findings     []Finding
	// Category is what produced the scan (DefaultCategory when the client
	// names none); one scan per (type, category) stands for a PR.
	Category string
	// CommitSHA and Ref are the commit and ref scanned, when sent.
	CommitSHA, Ref string
	// BaseRef and BaseSHA are a pull request's base branch (refs/heads/
	// removed) and the merge base of its head and base, when sent.
	BaseRef, BaseSHA string
}

// Scan is a recorded scan.
type Scan struct {
	ID                 int64
	PRID               int64 // the PR record's id
	PRNumber           int64
	VcID               int64
	WebhookID          int64
	RepoID             int64
	VcType             string
	Type               ScanType
	CreatedAt          Time
	VcName             string
	RepoName           string
	Status             string
	BlockStatus        bool
	OtherDetails       json.RawMessage
	StatURL            *string
	SecretCount        int64
	VulnerabilityCount int64
	Category           string
	CommitSHA, Ref     string
	// BranchID and Branch name the branch of a branch analysis (PRID and
	// PRNumber are then 0); both are zero for a pull request's scan.
	BranchID int64
	Branch   string
	// BaseRef and BaseSHA are a pull request's scan's base, when sent.
	BaseRef, BaseSHA string
	// Class is its classification against its baseline (a PR's scan).
	Class Classification
	// Sev counts its unsuppressed findings per severity: the counts above
	// are their sum, and its block status is judged from them.
	Sev SevCounts
	// NewSev counts those of them new against its baseline: all of them
	// for a scan without one (and for a branch analysis).
	NewSev SevCounts
}

// PR is the record of one pull request, identified by (VcID, RepoID, Number).
type PR struct {
	ID                 int64
	Number             int64
	Name               string
	Link               string
	RepoID             int64
	VcID               int64
	WebhookID          int64
	CreatedAt          Time
	LastScan           Time
	SecretCount        int64
	VulnerabilityCount int64
	// BaseRef and BaseSHA are the base of its newest scan that named one
	// ("" when none did).
	BaseRef, BaseSHA string
}

// Blocks reports a scan's block status: it blocks unless it completed and
// found nothing that no allowlist suppresses.
func Blocks(status string, secrets, vulnerabilities int64) bool {
	return status != "completed" || secrets > 0 || vulnerabilities > 0
}

// FindingKey is the key of the group (docs/DATA.md) a name belongs to:
// the name for secrets, upper-cased by Unicode's rules for vulnerabilities.
// Every name that SameName matches with another has its key, so a group
// holds all the names an allowlist's name matches; it may hold more (ſ
// upper-cases to S), which SameName tells apart. Kept as it is: it is the
// key of groups, findings and indexes already stored.
func FindingKey(t ScanType, name string) string {
	if t == ScanVulnerability {
		return strings.ToUpper(name)
	}
	return name
}

// SameName reports whether an allowlist's name names a finding's name (or
// alias): exactly for secrets; for vulnerabilities, whose names are
// advisory ids (CVE-..., GHSA-...), ignoring the case of ASCII letters
// only, so that ghſa-… (U+017F) is not GHSA-….
func SameName(t ScanType, a, b string) bool {
	if t != ScanVulnerability {
		return a == b
	}
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		if asciiUpper(a[i]) != asciiUpper(b[i]) {
			return false
		}
	}
	return true
}

func asciiUpper(c byte) byte {
	if 'a' <= c && c <= 'z' {
		return c - 'a' + 'A'
	}
	return c
}

// Counts returns a scan's secret and vulnerability counts from its findings
// and whether each is suppressed.
func Counts(t ScanType, suppressed []bool) (secrets, vulnerabilities int64) {
	var n int64
	for _, s := range suppressed {
		if !s {
			n++
		}
	}
	if t == ScanSecret {
		return n, 0
	}
	return 0, n
}

// Validate checks the bounds of a scan to record; types were checked when
// the body was read.
func (s NewScan) Validate(p *Problems) {
	s.ValidateEnvelope(p)
	s.validateFindings(p)
}

// ValidateEnvelope checks the bounds of everything but the findings (a
// SARIF upload's findings are checked as its log is read).
func (s NewScan) ValidateEnvelope(p *Problems) {
	text := func(ptr, v string, lo, hi int) {
		if n := len([]rune(v)); n < lo || n > hi {
			p.Add(ptr, "must be %d to %d characters", lo, hi)
		}
	}
	positive := func(ptr string, v int64) {
		if v < 1 {
			p.Add(ptr, "must be a positive integer")
		}
	}
	text("/vc_type", s.VcType, 1, 64)
	checkHidden(p, "/vc_type", s.VcType)
	positive("/vc_id", s.VcID)
	text("/vc_name", s.VcName, 1, MaxNameLen)
	checkControl(p, "/vc_name", s.VcName)
	positive("/repo_id", s.RepoID)
	checkRepoName(p, s.VcType, s.RepoName)
	positive("/webhook_id", s.WebhookID)
	if s.Branch == "" {
		positive("/pr/pr_id", s.PR.Number)
		text("/pr/pr_name", s.PR.Name, 1, MaxTextLen)
		checkControl(p, "/pr/pr_name", s.PR.Name)
		text("/pr/pr_link", s.PR.Link, 1, MaxTextLen)
		checkControl(p, "/pr/pr_link", s.PR.Link)
	} else {
		CheckBranchName(p, "/branch", s.Branch)
	}
	switch {
	case s.Branch != "" && (s.BaseRef != "" || s.BaseSHA != ""):
		p.Add("/base_ref", "only a pull request's scan has a base; a branch analysis takes neither base_ref nor base_sha")
	case s.BaseSHA != "" && s.BaseRef == "":
		p.Add("/base_ref", "is required with base_sha")
	case s.BaseRef != "":
		CheckBranchName(p, "/base_ref", s.BaseRef)
	}
	if s.BaseSHA != "" && !ValidSHA(s.BaseSHA) {
		p.Add("/base_sha", "must be a commit's hash: 40 or 64 hexadecimal digits")
	}
	if s.StatURL != nil {
		text("/stat_url", *s.StatURL, 0, MaxTextLen)
		checkControl(p, "/stat_url", *s.StatURL)
	}
	if len(s.OtherDetails) > MaxOtherDetails {
		p.Add("/other_details", "must be at most %d bytes of JSON", MaxOtherDetails)
	} else if len(s.OtherDetails) > 0 {
		// As numbers, so that one no float64 holds (1e309) does not stop
		// the decoding, and the check of the strings with it.
		d := json.NewDecoder(bytes.NewReader(s.OtherDetails))
		d.UseNumber()
		var v any
		if err := d.Decode(&v); err != nil {
			p.Add("/other_details", "must be a JSON object")
		} else {
			checkControlIn(p, "/other_details", v)
		}
	}
	if s.Category != "" && !ValidCategory(s.Category) {
		p.Add("/category", "must be 1 to %d characters of A-Z a-z 0-9 . _ / -", MaxCategoryLen)
	}
	if s.CommitSHA != "" && !ValidSHA(s.CommitSHA) {
		p.Add("/commit_sha", "must be a commit's hash: 40 or 64 hexadecimal digits")
	}
	if s.Ref != "" {
		text("/ref", s.Ref, 1, MaxRefLen)
		checkHidden(p, "/ref", s.Ref)
	}
}

// IsBranch reports whether the scan to record is a branch analysis.
func (s NewScan) IsBranch() bool { return s.Branch != "" }

// MaxBranchLen bounds a branch's name, in characters.
const MaxBranchLen = 255

// BranchName is a branch's name as given: without a leading refs/heads/.
func BranchName(s string) string { return strings.TrimPrefix(s, "refs/heads/") }

// CheckBranchName checks a branch's name (as BranchName leaves it): 1 to
// MaxBranchLen characters, no control or format character.
func CheckBranchName(p *Problems, ptr, name string) {
	if n := len([]rune(name)); n < 1 || n > MaxBranchLen {
		p.Add(ptr, "must be 1 to %d characters (after a leading refs/heads/)", MaxBranchLen)
		return
	}
	checkHidden(p, ptr, name)
}

// MaxRefLen bounds a scan's ref, in characters.
const MaxRefLen = 255

// CommitHash is a commit's hash as kept: in lower case when it is one
// (ValidSHA), since either case names the same commit; anything else as
// given, for the check to refuse.
func CommitHash(s string) string {
	if ValidSHA(s) {
		return strings.ToLower(s)
	}
	return s
}

// ValidSHA reports a SHA-1 or SHA-256 commit hash: 40 or 64 hex digits.
func ValidSHA(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for i := range len(s) {
		if c := s[i] | 0x20; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

func (s NewScan) validateFindings(p *Problems) {
	text := func(ptr, v string, lo, hi int) {
		if n := len([]rune(v)); n < lo || n > hi {
			p.Add(ptr, "must be %d to %d characters", lo, hi)
		}
	}
	if len(s.Findings) > MaxFindings {
		p.Add("/findings", "may hold at most %d findings", MaxFindings)
		return
	}
	for i, f := range s.Findings {
		ptr := "/findings/" + itoa(i)
		checkName(p, ptr+"/name", f.Name)
		if len(f.Aliases) > 0 && s.Type != ScanVulnerability {
			p.Add(ptr+"/aliases", "only vulnerabilities have aliases")
		} else if len(f.Aliases) > MaxAliases {
			p.Add(ptr+"/aliases", "may hold at most %d aliases", MaxAliases)
		} else {
			for k, a := range f.Aliases {
				checkName(p, ptr+"/aliases/"+itoa(k), a)
			}
		}
		text(ptr+"/rule", f.Rule, 0, MaxNameLen)
		checkHidden(p, ptr+"/rule", f.Rule)
		text(ptr+"/path", f.Path, 0, MaxTextLen)
		checkHidden(p, ptr+"/path", f.Path)
		if f.Line != nil && *f.Line < 1 {
			p.Add(ptr+"/line", "must be a positive integer")
		}
		if f.Severity != "" && !f.Severity.Valid() {
			p.Add(ptr+"/severity", "must be one of critical, high, medium, low, none")
		}
	}
}

// checkName checks a name that findings are matched by (a finding's name or
// alias, an allowlist's name): 1 to MaxNameLen characters, none of them a
// control or format character.
func checkName(p *Problems, ptr, s string) {
	if n := utf8.RuneCountInString(s); n < 1 || n > MaxNameLen {
		p.Add(ptr, "must be 1 to %d characters", MaxNameLen)
		return
	}
	checkHidden(p, ptr, s)
}

// checkControlIn checks every string of a decoded JSON value, its members'
// names too, with checkControl: the first one found is the problem, at its
// JSON pointer under ptr.
func checkControlIn(p *Problems, ptr string, v any) bool {
	switch v := v.(type) {
	case string:
		return checkControl(p, ptr, v)
	case []any:
		for i, e := range v {
			if checkControlIn(p, ptr+"/"+itoa(i), e) {
				return true
			}
		}
	case map[string]any:
		for k, e := range v {
			at := ptr + "/" + strings.NewReplacer("~", "~0", "/", "~1").Replace(k)
			if checkControl(p, at, k) || checkControlIn(p, at, e) {
				return true
			}
		}
	}
	return false
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

// Branch is a branch's record: its newest scan of each (scan type,
// category), as branch analyses recorded them.
type Branch struct {
	ID         int64
	VcID       int64
	RepoID     int64
	Name       string
	LastScan   Time
	Categories []BranchCategory
}

// BranchCategory is a branch's newest scan of one (scan type, category).
type BranchCategory struct {
	Type               ScanType
	Category           string
	ScanID             int64
	CommitSHA          string
	CreatedAt          Time
	SecretCount        int64
	VulnerabilityCount int64
}

// BranchFilter selects the branches of one repository, or the one of a
// name.
type BranchFilter struct {
	VcID, RepoID int64
	Name         string
}

// SortBranchCategories orders a branch's categories by scan type, then
// category.
func SortBranchCategories(cats []BranchCategory) {
	slices.SortFunc(cats, func(a, b BranchCategory) int {
		return cmp.Or(cmp.Compare(a.Type, b.Type), cmp.Compare(a.Category, b.Category))
	})
}

// A finding's baseline state, as SARIF names them: new (its identity is
// not in the baseline), unchanged (it is); absent: a baseline's finding
// that the pull request's scan no longer has.
const (
	BaselineNew       = "new"
	BaselineUnchanged = "unchanged"
	BaselineAbsent    = "absent"
)

// BaselineStates are the states a finding of a PR's scan may have.
var BaselineStates = []string{BaselineNew, BaselineUnchanged}

// How a baseline was found: the base branch's analysis of the PR's
// base_sha, or its newest one.
const (
	MatchExact  = "exact"
	MatchNewest = "newest"
)

// Classification is a pull request's scan's classification against its
// baseline (BaselineScanID 0 when it has none: every finding is new).
type Classification struct {
	Classified             bool
	BaselineScanID         int64
	BaselineSHA, Match     string
	New, Unchanged, Absent int64
}
