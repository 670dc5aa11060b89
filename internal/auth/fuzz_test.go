package auth

import (
	"strings"
	"testing"
)

// FuzzParseToken: no input panics; what parses names a positive user id and
// carries a matching checksum, so one changed character is refused.
func FuzzParseToken(f *testing.F) {
	tok, _ := NewToken(12)
	for _, s := range []string{tok, "", "sgt_", "sgt_1_", tok[:len(tok)-1], strings.ToUpper(tok), "sgt_0_" + tok[7:], "Bearer " + tok} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := ParseToken(s)
		if err != nil {
			return
		}
		if id < 1 || !strings.HasPrefix(s, "sgt_") {
			t.Fatalf("accepted %q as user %d", s, id)
		}
		b := []byte(s)
		i := len(b) - 20
		b[i] ^= 1
		if _, err := ParseToken(string(b)); err == nil {
			t.Fatalf("a changed token %q still parses", b)
		}
		if h, ok := BearerToken("Bearer " + s); !ok || h != s {
			t.Fatalf("BearerToken lost %q", s)
		}
	})
}
