package scangate

import "cmp"

// The findings that block a gate, as a check run's annotations and a
// merge request's note show them (docs/API.md, Commit statuses).

// BlockingScan names a newest scan of a pull request whose findings block
// its gate, and what of them blocks: unsuppressed findings at or above
// Min, and only those new against the baseline when NewOnly (the policy's
// block_on new).
type BlockingScan struct {
	ScanID   int64
	Type     ScanType
	Category string
	Min      Severity
	NewOnly  bool
}

// Blocks reports whether a finding of the scan blocks.
func (b BlockingScan) Blocks(f RecordedFinding) bool {
	return !f.Suppressed && f.Severity.AtLeast(b.Min) && (!b.NewOnly || f.BaselineState == BaselineNew)
}

// BlockingFinding is a finding that blocks a gate, with its scan.
type BlockingFinding struct {
	ScanID   int64
	Type     ScanType
	Category string
	// Order is the place of its scan among those read (BlockingScan's).
	Order int
	RecordedFinding
}

// CompareBlocking orders blocking findings as they are shown: new ones
// first, then the most severe, then by scan (in the order given) and by
// their place in it.
func CompareBlocking(a, b BlockingFinding) int {
	an, bn := a.BaselineState == BaselineNew, b.BaselineState == BaselineNew
	switch {
	case an && !bn:
		return -1
	case bn && !an:
		return 1
	}
	return cmp.Or(cmp.Compare(b.Severity.rank(), a.Severity.rank()), cmp.Compare(a.Order, b.Order), cmp.Compare(a.Index, b.Index))
}
