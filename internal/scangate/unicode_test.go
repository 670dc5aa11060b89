package scangate_test

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/scangate/scangate/internal/emailfold"
	"github.com/scangate/scangate/internal/scangate"
)

// TestFoldIsNFKCAndFullCaseFolding: the form under which usernames and
// e-mail addresses are unique makes one key of every spelling that Unicode
// calls the same, and keeps apart what it does not.
func TestFoldIsNFKCAndFullCaseFolding(t *testing.T) {
	for _, same := range [][]string{
		{"σ@example.com", "ς@example.com", "Σ@example.com"},                // final sigma, capital sigma
		{"kevin@example.com", "\u212Aevin@example.com"},                    // Kelvin sign
		{"kevin@example.com", "ｋｅｖｉｎ@ｅｘａｍｐｌｅ.ｃｏｍ"},                         // full-width forms
		{"strasse@example.com", "STRAßE@example.com"},                      // full folding: ß is ss
		{"office@example.com", "o\uFB03ce@example.com"},                    // the ffi ligature
		{"café@example.com", "cafe\u0301@example.com", "CAFÉ@example.com"}, // composed and decomposed
		{"Alice.B_c-1", "alice.b_c-1"},
	} {
		want := emailfold.Fold(same[0])
		for _, s := range same[1:] {
			if got := emailfold.Fold(s); got != want {
				t.Errorf("Fold(%+q) = %+q; want %+q, the fold of %+q", s, got, want, same[0])
			}
		}
	}
	for _, apart := range [][2]string{
		{"kevin@example.com", "kevin@example.co"},
		{"σ@example.com", "o@example.com"},
		{"alice", "alice."},
	} {
		if emailfold.Fold(apart[0]) == emailfold.Fold(apart[1]) {
			t.Errorf("Fold makes %+q and %+q one", apart[0], apart[1])
		}
	}
}

// TestValidUsername decides which login usernames may reach the database.
func TestValidUsername(t *testing.T) {
	for _, s := range []string{"abc", "Alice.B_c-1", strings.Repeat("a", scangate.UsernameMax)} {
		if !scangate.ValidUsername(s) {
			t.Errorf("ValidUsername(%q) = false", s)
		}
	}
	for _, s := range []string{
		"", "ab", strings.Repeat("a", scangate.UsernameMax+1), strings.Repeat("a", 2100),
		"\u212Aevin", "ｋevin", "kévin", "ke vin", "kevin\x00", "ke\u200bvin", "kevin\u202e", "kev@in",
	} {
		if scangate.ValidUsername(s) {
			t.Errorf("ValidUsername(%+q) = true", s)
		}
	}
}

func pointers(p scangate.Problems) []string {
	var out []string
	for _, e := range p {
		out = append(out, e.Pointer)
	}
	return out
}

// hidden are control (Cc) and format (Cf) characters an attacker would hide
// in an identifier: NUL, a line feed, DEL, zero-width space, zero-width
// joiner, left-to-right mark, right-to-left override, a byte-order mark, a
// soft hyphen and a tag character.
var hidden = []string{"\x00", "\n", "\x7f", "\u200b", "\u200d", "\u200e", "\u202e", "\ufeff", "\u00ad", "\U000E0041"}

// TestIdentifiersRefuseControlAndFormatCharacters: e-mail addresses,
// allowlist names and finding names never hold Cc or Cf characters.
func TestIdentifiersRefuseControlAndFormatCharacters(t *testing.T) {
	for _, h := range hidden {
		var p scangate.Problems
		scangate.NewUser{Username: "alice", Email: "ali" + h + "ce@example.com", Password: "a long password", Role: scangate.RoleUser}.Validate(&p)
		if got := pointers(p); len(got) != 1 || got[0] != "/user_email" {
			t.Errorf("new user with e-mail holding %+q: problems %v; want /user_email", h, p)
		}
		p = nil
		scangate.UserChange{Email: "alice@exa" + h + "mple.com", Role: scangate.RoleUser}.Validate(&p)
		if got := pointers(p); len(got) != 1 || got[0] != "/user_email" {
			t.Errorf("user change with e-mail holding %+q: problems %v; want /user_email", h, p)
		}
		p = nil
		name := "CVE-2021-" + h + "44228"
		scangate.AllowlistChange{Name: &name}.Validate(&p)
		if got := pointers(p); len(got) != 1 || got[0] != "/name" {
			t.Errorf("allowlist name holding %+q: problems %v; want /name", h, p)
		}
		p = nil
		ns := validScan()
		ns.Findings = []scangate.Finding{{Name: "sha256:aa"}, {Name: "sha256:" + h + "bb"}}
		ns.Validate(&p)
		if got := pointers(p); len(got) != 1 || got[0] != "/findings/1/name" {
			t.Errorf("finding name holding %+q: problems %v; want /findings/1/name", h, p)
		}
	}
	// Visible non-ASCII characters stay welcome.
	var p scangate.Problems
	name := "sha256:π😀"
	scangate.AllowlistChange{Name: &name}.Validate(&p)
	scangate.UserChange{Email: "σ@παράδειγμα.ελ", Role: scangate.RoleUser}.Validate(&p)
	if len(p) > 0 {
		t.Errorf("visible non-ASCII identifiers refused: %v", p)
	}
}

func validScan() scangate.NewScan {
	return scangate.NewScan{Type: scangate.ScanSecret, VcType: "github", VcID: 1, VcName: "gh", RepoID: 1, RepoName: "o/r",
		WebhookID: 1, PR: scangate.PRRef{Number: 1, Name: "n", Link: "l"}, Status: "completed", OtherDetails: []byte("{}")}
}

// TestKeyFormingStringsAreBounded: whatever a valid request sends, the
// keyed form of each string that becomes part of a DynamoDB key stays
// within its documented byte bound, so no key reaches DynamoDB's limits
// (2,048 bytes in a partition key, 1,024 in a sort key).
func TestKeyFormingStringsAreBounded(t *testing.T) {
	if scangate.UsernameKeyMax+len("LOGINFAIL#") > 1024 || scangate.EmailKeyMax+len("EMAIL#") > 1024 ||
		scangate.NameKeyMax+len("FINDING#VULNERABILITY#") > 2048 {
		t.Fatalf("documented bounds %d, %d, %d leave no room for a key prefix", scangate.UsernameKeyMax, scangate.EmailKeyMax, scangate.NameKeyMax)
	}
	// E-mail addresses whose folded form grows: U+FDFA is 3 bytes and 18
	// characters (33 bytes) under NFKC; U+0390 folds to three code points.
	grown, refused := 0, 0
	for _, r := range []string{"\uFDFA", "\u0390", "ß", "\uFB03", "\u3392", "Ⱥ"} {
		for n := 1; len(r)*n+len("@example.com") <= scangate.EmailMax; n++ {
			email := strings.Repeat(r, n) + "@example.com"
			var p scangate.Problems
			scangate.UserChange{Email: email, Role: scangate.RoleUser}.Validate(&p)
			scangate.CheckEmailKey(&p, emailfold.Fold(email))
			folded := len(emailfold.Fold(email))
			switch {
			case len(p) == 0 && folded > scangate.EmailKeyMax:
				t.Fatalf("%d × %+q: a valid address whose folded form is %d bytes, over %d", n, r, folded, scangate.EmailKeyMax)
			case len(p) == 0 && folded > len(email):
				grown++
			case len(p) > 0 && folded > scangate.EmailKeyMax:
				refused++
			}
		}
	}
	if grown == 0 || refused == 0 {
		t.Fatalf("%d valid addresses grew when folded and %d were refused for it; the cases test nothing", grown, refused)
	}
	// Names: 256 characters of the widest kinds, upper-cased as vulnerability
	// names are keyed.
	for _, r := range []rune{'ɐ', 'ı', 'ß', '\uFDFA', '😀', 'ǆ', 'ΐ'} {
		name := strings.Repeat(string(r), scangate.MaxNameLen)
		var p scangate.Problems
		scangate.AllowlistChange{Name: &name}.Validate(&p)
		if len(p) > 0 {
			t.Fatalf("%d × %+q refused: %v", scangate.MaxNameLen, r, p)
		}
		for _, typ := range []scangate.ScanType{scangate.ScanSecret, scangate.ScanVulnerability} {
			if k := scangate.FindingKey(typ, name); len(k) > scangate.NameKeyMax || !utf8.ValidString(k) {
				t.Fatalf("%s key of %d × %+q is %d bytes; bound %d", typ, scangate.MaxNameLen, r, len(k), scangate.NameKeyMax)
			}
		}
	}
	// Usernames: any valid one is its own length in bytes once folded.
	for _, s := range []string{strings.Repeat("Z", scangate.UsernameMax), strings.Repeat("a.", scangate.UsernameMax/2)} {
		if !scangate.ValidUsername(s) || len(emailfold.Fold(s)) > scangate.UsernameKeyMax || scangate.FoldUsername(s) != emailfold.Fold(s) {
			t.Fatalf("username %q: valid %v, folded %d bytes", s, scangate.ValidUsername(s), len(emailfold.Fold(s)))
		}
	}
}

// TestAliasesAreBoundedIdentifiers: a vulnerability finding's aliases
// become index keys of their own, so each is bounded like a name and free
// of control and format characters, and a finding has at most MaxAliases.
func TestAliasesAreBoundedIdentifiers(t *testing.T) {
	check := func(aliases []string) []string {
		ns := validScan()
		ns.Type = scangate.ScanVulnerability
		ns.Findings = []scangate.Finding{{Name: "CVE-2021-44228", Aliases: aliases}}
		var p scangate.Problems
		ns.Validate(&p)
		return pointers(p)
	}
	many := make([]string, scangate.MaxAliases+1)
	for i := range many {
		many[i] = fmt.Sprintf("GHSA-%04d", i)
	}
	for _, c := range []struct {
		aliases []string
		want    string
	}{
		{[]string{"GHSA-jfh8-c2jp-5v3q", "GO-2021-\u200b0001"}, "/findings/0/aliases/1"},
		{[]string{"\x00"}, "/findings/0/aliases/0"},
		{[]string{"GHSA-jfh8-c2jp-5v3q", strings.Repeat("é", scangate.MaxNameLen+1)}, "/findings/0/aliases/1"},
		{[]string{""}, "/findings/0/aliases/0"},
		{many, "/findings/0/aliases"},
	} {
		if got := check(c.aliases); len(got) != 1 || got[0] != c.want {
			t.Errorf("aliases %.60q: problems %v; want [%s]", c.aliases, got, c.want)
		}
	}
	if got := check(many[:scangate.MaxAliases]); len(got) != 0 {
		t.Errorf("%d aliases refused: %v", scangate.MaxAliases, got)
	}
}
