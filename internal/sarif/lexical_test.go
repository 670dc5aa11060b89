package sarif

import "testing"

// TestLexicalRules: the hand-written checks that replace regular
// expressions (compiled at every Lambda's start) match what those
// expressions matched: ^[0-9a-fA-F]{1,128}$ and ^[a-zA-Z][a-zA-Z0-9+.-]+:.
func TestLexicalRules(t *testing.T) {
	for s, want := range map[string]bool{
		"": false, "0": true, "deadBEEF09": true, "g": false, "12 34": false, "-1": false,
		string(make([]byte, 129)): false,
	} {
		if got := isHex(s, 128); got != want {
			t.Errorf("isHex(%q) = %v", s, got)
		}
	}
	long := ""
	for range 128 {
		long += "a"
	}
	if !isHex(long, 128) || isHex(long+"a", 128) {
		t.Error("isHex: the bound is 128 digits")
	}
	for u, want := range map[string]bool{
		"file:///src/a.go": true, "https://x/y": true, "svn+ssh://h/p": true, "a.b-c+d:x": true,
		"C:/src/a.go": false, "c:\\src": false, "src/a.go": false, "1http://x": false, ":x": false,
		"/abs/path": true, "rel:": true, "a b:c": false, "": false,
	} {
		if got := absolute(u); got != want {
			t.Errorf("absolute(%q) = %v; want %v", u, got, want)
		}
	}
}
