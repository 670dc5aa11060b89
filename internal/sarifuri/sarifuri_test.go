package sarifuri

import "testing"

// A file: URI or an absolute path gives its decoded path; any other URI
// none. (Absolute is tested with the service's other lexical rules, in
// internal/sarif.)
func TestFilePath(t *testing.T) {
	for u, want := range map[string]string{
		"/src/a%20b.go": "/src/a b.go", "/src/100%": "/src/100%", "file:///src/a%20b.go": "/src/a b.go",
		"FILE:///x": "/x", "file:/x": "/x", "file:rel%2Fx": "rel/x", "https://h/x": "", "src/a.go": "", "": "",
	} {
		if got := FilePath(u); got != want {
			t.Errorf("FilePath(%q) = %q; want %q", u, got, want)
		}
	}
}
