package scangate

// What the read side of the service shows (docs/API.md, Reading): a scan's
// findings as recorded and judged, allowlist comments, and the filters of
// the listings.

// RecordedFinding is one finding of a recorded scan, as it stands now.
type RecordedFinding struct {
	Index   int // its place in the scan, from 0 (the API's id is Index+1)
	Name    string
	Aliases []string
	Rule    string // "" when the scanner gave none
	Path    string // "" when the scanner gave none
	Line    *int64
	// Suppressed: in the scanner's source, or by some allowlist.
	Suppressed bool
	// SuppressedBy lists the allowlists that cover it, by id, ascending.
	SuppressedBy []int64
	// InSource: suppressed in the scanner's source (SARIF).
	InSource bool
	Severity Severity
	// Fingerprint and FingerprintSource: "" for findings recorded before
	// fingerprints.
	Fingerprint, FingerprintSource string
	// BaselineState is new or unchanged ("" when not classified).
	BaselineState string
}

// FindingFilter selects a scan's findings: by whether they are
// suppressed, and at or above a severity. Zero values select all.
type FindingFilter struct {
	Suppressed *bool
	Severity   Severity
	// BaselineState selects findings of that baseline state.
	BaselineState string
}

// Comment is one comment of an allowlist.
type Comment struct {
	ID   int64
	Text string
	By   int64 // user id
	At   Time
}

// PRFilter selects pull requests: of one repository (VcID and RepoID both
// set, or neither), with Number too the one PR of that number in its
// version-control system (pr.pr_id), and, when Blocked is set, by their
// blocked state.
type PRFilter struct {
	VcID, RepoID int64
	Number       int64
	Blocked      *bool
	// RepoName, when set, keeps the PRs whose newest scan names that
	// repository, ignoring ASCII case (what a person knows of it).
	RepoName string
	// Repos, when not nil, keeps the PRs of those repositories only (a
	// token scoped to them lists these).
	Repos []RepoRef
}

// AllowlistFilter selects allowlists: by type, by name (matched as
// suppression matches it: exactly for secrets, ignoring case for
// vulnerabilities) and by whether they are active. Zero values select all.
type AllowlistFilter struct {
	Type   ScanType
	Name   string
	Active *bool
}

// UserFilter selects users by role and by whether they are active.
type UserFilter struct {
	Role   Role
	Active *bool
}

// Page is one page of a listing: its items, where the listing goes on
// after each of them (so that a page can be cut short: docs/API.md,
// Reading), and after the page.
type Page[T any] struct {
	Items []T
	// After[i] is where the listing goes on after Items[i]: the next
	// page's start, were the page cut after it.
	After []map[string]string
	// Next is where the next page starts; nil at the end of the listing.
	Next map[string]string
}

// AbsentFinding is a finding of a pull request's scan's baseline that
// the scan no longer has (fixed by the pull request).
type AbsentFinding struct {
	ScanType       ScanType
	Category       string
	ScanID         int64 // the pull request's scan
	BaselineScanID int64
	Index          int // its place in the baseline scan, from 0
	Name           string
	Aliases        []string
	Rule, Path     string
	Line           *int64
	Severity       Severity
	Fingerprint    string
	// FingerprintSource is where its fingerprint came from.
	FingerprintSource string
}
