package scangate_test

import (
	"slices"
	"testing"

	"github.com/scangate/scangate/internal/scangate"
)

// TestBlocks: under the default policy a scan blocks unless it completed
// with nothing unsuppressed; pending, processing and failed scans block
// whatever they found.
func TestBlocks(t *testing.T) {
	t.Parallel()
	type row struct {
		status                   string
		secrets, vulnerabilities int64
		want                     bool
	}
	rows := []row{
		{"completed", 0, 0, false},
		{"completed", 1, 0, true},
		{"completed", 0, 1, true},
		{"completed", 2, 3, true},
		{"pending", 0, 0, true},
		{"pending", 1, 0, true},
		{"pending", 0, 1, true},
		{"pending", 2, 3, true},
		{"processing", 0, 0, true},
		{"processing", 1, 0, true},
		{"processing", 0, 1, true},
		{"processing", 2, 3, true},
		{"failed", 0, 0, true},
		{"failed", 1, 0, true},
		{"failed", 0, 1, true},
		{"failed", 2, 3, true},
		// Not statuses of the API: only "completed" unblocks.
		{"", 0, 0, true},
		{"Completed", 0, 0, true},
		{"COMPLETED", 0, 0, true},
	}
	for _, c := range rows {
		p := scangate.DefaultPolicy()
		got := p.ScanBlocks(scangate.ScanSecret, c.status, scangate.SevCounts{0, c.secrets}) ||
			p.ScanBlocks(scangate.ScanVulnerability, c.status, scangate.SevCounts{0, 0, c.vulnerabilities})
		if got != c.want {
			t.Errorf("Blocks(%q, %d, %d) = %v; want %v", c.status, c.secrets, c.vulnerabilities, got, c.want)
		}
	}
	// Every status of the API has its rows above.
	for _, s := range scangate.ScanStatuses {
		if !slices.ContainsFunc(rows, func(r row) bool { return r.status == s }) {
			t.Errorf("status %q has no row", s)
		}
	}
	if len(scangate.ScanStatuses) != 4 || scangate.ScanStatuses[0] != "pending" {
		t.Errorf("statuses %v; the API has pending (the default), completed, processing, failed", scangate.ScanStatuses)
	}
}

// TestCounts: a scan's count of its type is its findings that no allowlist
// suppresses; the other type's count is 0.
func TestCounts(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		typ                      scangate.ScanType
		suppressed               []bool
		secrets, vulnerabilities int64
	}{
		{secret, nil, 0, 0},
		{secret, []bool{}, 0, 0},
		{secret, []bool{false}, 1, 0},
		{secret, []bool{true}, 0, 0},
		{secret, []bool{false, true, false}, 2, 0},
		{secret, []bool{true, true, true}, 0, 0},
		{vuln, nil, 0, 0},
		{vuln, []bool{false}, 0, 1},
		{vuln, []bool{true}, 0, 0},
		{vuln, []bool{false, true, false, false}, 0, 3},
		{vuln, []bool{true, true}, 0, 0},
	} {
		s, v := scangate.Counts(c.typ, c.suppressed)
		if s != c.secrets || v != c.vulnerabilities {
			t.Errorf("Counts(%s, %v) = %d, %d; want %d, %d", c.typ, c.suppressed, s, v, c.secrets, c.vulnerabilities)
		}
	}
}
