package scangate

import (
	"strings"
	"testing"
)

func TestCategories(t *testing.T) {
	for s, want := range map[string]bool{
		"default": true, "gitleaks": true, "semgrep-oss": true, "/language-go": true, "a.b_c/d-E9": true,
		strings.Repeat("c", 100): true, strings.Repeat("c", 101): false,
		"": false, "semgrep oss": false, "a:b": false, "é": false, "tab\t": false,
	} {
		if got := ValidCategory(s); got != want {
			t.Errorf("ValidCategory(%q) = %v", s, got)
		}
	}
	for in, want := range map[string]string{
		"gitleaks": "gitleaks", "Semgrep OSS": "Semgrep-OSS", "/language:go": "/language-go",
		"a  ::  b": "a-b", " lead": "-lead", "trail!!": "trail-", "Sémgrep": "S-mgrep", "日本語": "-", "": "",
		"a\x00b": "a-b", "ok-as/is_1.0": "ok-as/is_1.0",
	} {
		if got := NormalizeCategory(in); got != want {
			t.Errorf("NormalizeCategory(%q) = %q; want %q", in, got, want)
		}
		if got := NormalizeCategory(in); got != "" && !ValidCategory(got) {
			t.Errorf("NormalizeCategory(%q) = %q is no category", in, got)
		}
	}
}

func TestSeverities(t *testing.T) {
	order := []Severity{SeverityCritical, SeverityHigh, SeverityMedium, SeverityLow, SeverityNone}
	for i, s := range order {
		if !s.Valid() || string(s) != Severities[i] {
			t.Errorf("%q: not the %d-th severity", s, i)
		}
		for j, m := range order {
			if got := s.AtLeast(m); got != (i <= j) {
				t.Errorf("%s.AtLeast(%s) = %v", s, m, got)
			}
		}
	}
	for _, bad := range []Severity{"", "HIGH", "severe"} {
		if bad.Valid() || bad.AtLeast(SeverityNone) || SeverityCritical.AtLeast(bad) {
			t.Errorf("%q is taken for a severity", bad)
		}
	}
}
