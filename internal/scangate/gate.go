package scangate

import "slices"

// Categories: what produced a scan, as GitHub's code scanning calls it
// (docs/DECISIONS.md, "One SARIF reader").
const (
	// DefaultCategory is the category of a scan recorded without one.
	DefaultCategory = "default"
	// MaxCategoryLen bounds a category, in characters (all ASCII).
	MaxCategoryLen = 100
)

// categoryChar reports a character a category may hold: A–Z a–z 0–9 . _ / -.
func categoryChar(c rune) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '/' || c == '-'
}

// ValidCategory reports whether s is a category: 1 to MaxCategoryLen
// characters of A–Z a–z 0–9 . _ / -.
func ValidCategory(s string) bool {
	if len(s) < 1 || len(s) > MaxCategoryLen {
		return false
	}
	for _, c := range s {
		if !categoryChar(c) {
			return false
		}
	}
	return true
}

// NormalizeCategory replaces each run of characters outside a category's
// set with one "-" ("Semgrep OSS" gives "Semgrep-OSS"). It neither changes
// case nor bounds the length: a result that is empty or longer than
// MaxCategoryLen is still no category (ValidCategory).
func NormalizeCategory(s string) string {
	out := make([]byte, 0, len(s))
	for _, c := range s {
		switch {
		case categoryChar(c):
			out = append(out, byte(c))
		case len(out) == 0 || out[len(out)-1] != '-':
			out = append(out, '-')
		}
	}
	return string(out)
}

// Severity is how severe a finding is (docs/DECISIONS.md, "One SARIF reader").
type Severity string

// The severities, from the most severe.
const (
	SeverityCritical Severity = "critical"
	SeverityHigh     Severity = "high"
	SeverityMedium   Severity = "medium"
	SeverityLow      Severity = "low"
	SeverityNone     Severity = "none"
)

// Severities lists the severities from the most severe to the least.
var Severities = []string{string(SeverityCritical), string(SeverityHigh), string(SeverityMedium), string(SeverityLow), string(SeverityNone)}

// rank is a severity's place: 4 for critical down to 0 for none, -1 for
// anything else.
func (s Severity) rank() int {
	if i := slices.Index(Severities, string(s)); i >= 0 {
		return len(Severities) - 1 - i
	}
	return -1
}

// Valid reports whether s is one of the severities.
func (s Severity) Valid() bool { return s.rank() >= 0 }

// AtLeast reports whether s is at or above min: high is at least medium,
// every severity is at least none. A severity that is not one of the five
// is at least nothing, and nothing is at least it.
func (s Severity) AtLeast(min Severity) bool {
	r, m := s.rank(), min.rank()
	return r >= 0 && m >= 0 && r >= m
}
