package api

import (
	"encoding/json"
	"testing"
)

// TestEscapedLen: escapedLen is the length encoding/json gives a string
// of the bytes (less its quotes), for every byte alone and for
// characters that encoding/json escapes or leaves as they are.
func TestEscapedLen(t *testing.T) {
	cases := []string{"", "plain", "\b\f\n\r\t\"\\", "<&>", "\x00\x1f\x7f", "é€😀", "\u2028\u2029", "\xff\xe2\x80", "a\xe2\x80\xa8b"}
	for c := range 256 {
		cases = append(cases, string([]byte{byte(c)}))
	}
	for _, s := range cases {
		b, _ := json.Marshal(s)
		if got := escapedLen([]byte(s)); got != len(b)-2 {
			t.Errorf("escapedLen(%q) = %d, encoding/json %d", s, got, len(b)-2)
		}
	}
}

// FuzzEscapedLen: escapedLen agrees with encoding/json on any bytes.
func FuzzEscapedLen(f *testing.F) {
	f.Add([]byte("\b<\u2028\xff"))
	f.Fuzz(func(t *testing.T, p []byte) {
		b, _ := json.Marshal(string(p))
		if got := escapedLen(p); got != len(b)-2 {
			t.Errorf("escapedLen(%q) = %d, encoding/json %d", p, got, len(b)-2)
		}
	})
}
