package auth

import (
	"strings"
	"testing"
)

func TestTokenRoundTrip(t *testing.T) {
	tok, err := NewToken(42)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(tok, "sgt_42_") || len(tok) != len("sgt_42_")+64+8 {
		t.Fatalf("token %q has the wrong shape", tok)
	}
	id, err := ParseToken(tok)
	if err != nil || id != 42 {
		t.Fatalf("ParseToken = %d, %v; want 42", id, err)
	}
	other, _ := NewToken(42)
	if other == tok {
		t.Fatal("two tokens are equal")
	}
	if HashToken(tok) == HashToken(other) || len(HashToken(tok)) != 64 {
		t.Fatal("token hashes are not distinct SHA-256 hex digests")
	}
}

func TestParseTokenRejectsMistypes(t *testing.T) {
	tok, _ := NewToken(7)
	flip := func(i int) string {
		b := []byte(tok)
		if b[i] == 'a' {
			b[i] = 'b'
		} else {
			b[i] = 'a'
		}
		return string(b)
	}
	for name, bad := range map[string]string{
		"empty":            "",
		"no prefix":        tok[4:],
		"other prefix":     "ghp_" + tok[4:],
		"truncated":        tok[:len(tok)-1],
		"extended":         tok + "0",
		"secret typo":      flip(20),
		"checksum typo":    flip(len(tok) - 1),
		"user id changed":  "sgt_8" + tok[5:],
		"leading zero id":  "sgt_07" + tok[5:],
		"upper case hex":   strings.ToUpper(tok[:0]) + "sgt_7_" + strings.ToUpper(tok[6:]),
		"no id separator":  "sgt_7" + tok[6:],
		"negative user id": "sgt_-7" + tok[5:],
	} {
		if _, err := ParseToken(bad); err == nil {
			t.Errorf("%s: ParseToken(%q) accepted it", name, bad)
		}
	}
}

func TestBearerToken(t *testing.T) {
	for header, want := range map[string]string{
		"Bearer abc":    "abc",
		"bearer abc":    "abc",
		"BEARER  abc ":  "abc",
		"Basic abc":     "",
		"Bearer":        "",
		"Bearer ":       "",
		"abc":           "",
		"Bearer a b":    "",
		"Bearerabc":     "",
		"Token abc def": "",
	} {
		got, ok := BearerToken(header)
		if got != want || ok != (want != "") {
			t.Errorf("BearerToken(%q) = %q, %v; want %q", header, got, ok, want)
		}
	}
}

func TestWholeAPI(t *testing.T) {
	got := WholeAPI("arn:aws:execute-api:eu-west-1:123456789012:abc123/prod/GET/api/pr/scan/1")
	if got != "arn:aws:execute-api:eu-west-1:123456789012:abc123/prod/*/*" {
		t.Fatalf("WholeAPI = %q", got)
	}
}
