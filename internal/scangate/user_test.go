package scangate_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/scangate/scangate/internal/emailfold"
	"github.com/scangate/scangate/internal/scangate"
)

// Addresses of exactly 254 and 255 characters: a 64-character local part,
// "@", and a domain of 63 + 1 + 63 + 1 + 57 (or 58) + 4 characters.
var (
	email254 = strings.Repeat("a", 64) + "@" + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + "." + strings.Repeat("d", 57) + ".com"
	email255 = strings.Repeat("a", 64) + "@" + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + "." + strings.Repeat("d", 58) + ".com"
)

// TestNewUserValidate changes one field of a valid new user per row and
// lists the pointers of the problems found: one problem per wrong field.
func TestNewUserValidate(t *testing.T) {
	t.Parallel()
	if len(email254) != 254 || len(email255) != 255 {
		t.Fatalf("the test's addresses have %d and %d characters", len(email254), len(email255))
	}
	valid := scangate.NewUser{Username: "alice", Email: "alice@example.com", Password: "password-123", Role: scangate.RoleUser, Active: true}
	username := func(s string) scangate.NewUser { u := valid; u.Username = s; return u }
	email := func(s string) scangate.NewUser { u := valid; u.Email = s; return u }
	password := func(s string) scangate.NewUser { u := valid; u.Password = s; return u }
	role := func(r scangate.Role) scangate.NewUser { u := valid; u.Role = r; return u }
	for _, c := range []struct {
		name string
		user scangate.NewUser
		want []string
	}{
		{"valid", valid, nil},
		{"inactive", scangate.NewUser{Username: "alice", Email: "alice@example.com", Password: "password-123", Role: scangate.RoleUser}, nil},
		{"nothing", scangate.NewUser{}, []string{"/username", "/user_email", "/password", "/role"}},

		// Usernames: 3 to 64 of A-Z a-z 0-9 . _ -
		{"username of 3", username("abc"), nil},
		{"username of 2", username("ab"), []string{"/username"}},
		{"username of 1", username("a"), []string{"/username"}},
		{"empty username", username(""), []string{"/username"}},
		{"username of 64", username(strings.Repeat("a", 64)), nil},
		{"username of 65", username(strings.Repeat("a", 65)), []string{"/username"}},
		{"username of every allowed kind", username("Az09._-"), nil},
		{"username in capitals", username("ALICE"), nil},
		{"username of digits", username("123"), nil},
		{"username of punctuation", username("._-"), nil},
		{"username with a space", username("ali ce"), []string{"/username"}},
		{"username with @", username("alice@example.com"), []string{"/username"}},
		{"username with +", username("alice+1"), []string{"/username"}},
		{"username with /", username("a/b"), []string{"/username"}},
		{"username with a letter not A-Z", username("ålice"), []string{"/username"}},
		{"username with a NUL", username("ali\x00ce"), []string{"/username"}},
		{"username with a tab", username("ali\tce"), []string{"/username"}},
		{"username too short and with a bad character: one problem", username("a!"), []string{"/username"}},
		{"username too long and with bad characters: one problem", username(strings.Repeat("!", 65)), []string{"/username"}},

		// E-mail: one plain address, at most 254 characters.
		{"e-mail in capitals", email("Alice@Example.COM"), nil},
		{"e-mail with dots, plus and subdomain", email("a.b+tag@mail.example.co.uk"), nil},
		{"e-mail of 254", email(email254), nil},
		{"e-mail of 255", email(email255), []string{"/user_email"}},
		{"empty e-mail", email(""), []string{"/user_email"}},
		{"e-mail without @", email("alice.example.com"), []string{"/user_email"}},
		{"e-mail without local part", email("@example.com"), []string{"/user_email"}},
		{"e-mail without domain", email("alice@"), []string{"/user_email"}},
		{"e-mail with two @", email("alice@@example.com"), []string{"/user_email"}},
		{"e-mail domain without a dot", email("alice@localhost"), []string{"/user_email"}},
		{"e-mail with a display name", email("Alice <alice@example.com>"), []string{"/user_email"}},
		{"e-mail in angle brackets", email("<alice@example.com>"), []string{"/user_email"}},
		{"e-mail with a leading space", email(" alice@example.com"), []string{"/user_email"}},
		{"e-mail with a trailing space", email("alice@example.com "), []string{"/user_email"}},
		{"e-mail with a space inside", email("ali ce@example.com"), []string{"/user_email"}},
		{"two e-mail addresses", email("alice@example.com, bob@example.com"), []string{"/user_email"}},
		{"e-mail with a comment", email("alice@example.com (Alice)"), []string{"/user_email"}},
		{"e-mail with a NUL", email("ali\x00ce@example.com"), []string{"/user_email"}},
		{"e-mail with a newline", email("alice@example.com\n"), []string{"/user_email"}},

		// Passwords: 12 to 128 characters, counted in code points.
		{"password of 12", password(strings.Repeat("x", 12)), nil},
		{"password of 11", password(strings.Repeat("x", 11)), []string{"/password"}},
		{"empty password", password(""), []string{"/password"}},
		{"password of 128", password(strings.Repeat("x", 128)), nil},
		{"password of 129", password(strings.Repeat("x", 129)), []string{"/password"}},
		{"password of 12 two-byte characters", password(strings.Repeat("é", 12)), nil},
		{"password of 11 two-byte characters (22 bytes)", password(strings.Repeat("é", 11)), []string{"/password"}},
		{"password of 128 two-byte characters (256 bytes)", password(strings.Repeat("é", 128)), nil},
		{"password of 129 two-byte characters", password(strings.Repeat("é", 129)), []string{"/password"}},
		{"password of 12 four-byte characters", password(strings.Repeat("🔑", 12)), nil},
		{"password of 3 four-byte characters (12 bytes)", password(strings.Repeat("🔑", 3)), []string{"/password"}},
		{"password of 128 four-byte characters (512 bytes)", password(strings.Repeat("🔑", 128)), nil},
		{"password of spaces", password(strings.Repeat(" ", 12)), nil},

		// Roles.
		{"role admin", role(scangate.RoleAdmin), nil},
		{"role readonly", role(scangate.RoleReadonly), nil},
		{"no role", role(""), []string{"/role"}},
		{"role in capitals", role("Admin"), []string{"/role"}},
		{"unknown role", role("superuser"), []string{"/role"}},

		// Several fields wrong: one problem each, in the body's order.
		{"username and password", scangate.NewUser{Username: "a", Email: "alice@example.com", Password: "short", Role: scangate.RoleUser}, []string{"/username", "/password"}},
		{"e-mail and role", scangate.NewUser{Username: "alice", Email: "alice", Password: "password-123", Role: "root"}, []string{"/user_email", "/role"}},
	} {
		var p scangate.Problems
		c.user.Validate(&p)
		if got := pointers(p); !slices.Equal(got, c.want) {
			t.Errorf("%s: problems at %v; want %v (%v)", c.name, got, c.want, p)
		}
		if err := p.Err(); (err != nil) != (len(c.want) > 0) || err != nil && scangate.KindOf(err) != scangate.KindInvalid {
			t.Errorf("%s: Err() = %v", c.name, err)
		}
		for _, f := range p {
			if f.Detail == "" {
				t.Errorf("%s: a problem at %s without a detail", c.name, f.Pointer)
			}
		}
	}
}

// TestUserChangeValidate: an update checks its e-mail and role by the
// rules of a new user, and nothing else.
func TestUserChangeValidate(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		change scangate.UserChange
		want   []string
	}{
		{"valid", scangate.UserChange{Email: "bob@example.com", Role: scangate.RoleReadonly, Active: true}, nil},
		{"deactivation", scangate.UserChange{Email: "bob@example.com", Role: scangate.RoleAdmin}, nil},
		{"e-mail in another case", scangate.UserChange{Email: "BOB@EXAMPLE.COM", Role: scangate.RoleUser}, nil},
		{"e-mail of 254", scangate.UserChange{Email: email254, Role: scangate.RoleUser}, nil},
		{"e-mail of 255", scangate.UserChange{Email: email255, Role: scangate.RoleUser}, []string{"/user_email"}},
		{"e-mail with a display name", scangate.UserChange{Email: "Bob <bob@example.com>", Role: scangate.RoleUser}, []string{"/user_email"}},
		{"e-mail domain without a dot", scangate.UserChange{Email: "bob@example", Role: scangate.RoleUser}, []string{"/user_email"}},
		{"no e-mail", scangate.UserChange{Role: scangate.RoleUser}, []string{"/user_email"}},
		{"no role", scangate.UserChange{Email: "bob@example.com"}, []string{"/role"}},
		{"unknown role", scangate.UserChange{Email: "bob@example.com", Role: "owner"}, []string{"/role"}},
		{"nothing", scangate.UserChange{}, []string{"/user_email", "/role"}},
	} {
		var p scangate.Problems
		c.change.Validate(&p)
		if got := pointers(p); !slices.Equal(got, c.want) {
			t.Errorf("%s: problems at %v; want %v (%v)", c.name, got, c.want, p)
		}
	}
}

// TestFoldASCII: usernames (scangate.FoldUsername) and e-mail addresses
// (fold.Fold) are unique ignoring ASCII case, and only case: each folding
// maps the spellings of one name to one key and keeps different names
// apart. On valid usernames the two foldings agree.
func TestFoldASCII(t *testing.T) {
	t.Parallel()
	folds := map[string]func(string) string{"username": scangate.FoldUsername, "e-mail": emailfold.Fold}
	for _, c := range []struct {
		kind string
		a, b string
		same bool
	}{
		{"username", "alice", "ALICE", true},
		{"username", "Alice", "aLiCe", true},
		{"username", "a.b_c-1", "A.B_C-1", true},
		{"username", "alice", "alice1", false},
		{"username", "a.b", "a_b", false},
		{"username", "a-b", "a_b", false},
		{"e-mail", "Alice@Example.COM", "alice@example.com", true},
		{"e-mail", "ALICE@EXAMPLE.COM", "alice@example.com", true},
		{"e-mail", "alice@example.com", "alice@example.co", false},
		{"e-mail", "alice@example.com", "alice+x@example.com", false},
		{"e-mail", "a.lice@example.com", "alice@example.com", false},
	} {
		f := folds[c.kind]
		if got := f(c.a) == f(c.b); got != c.same {
			t.Errorf("%s: %q and %q fold alike: %v; want %v", c.kind, c.a, c.b, got, c.same)
		}
		if k := f(c.a); f(k) != k {
			t.Errorf("%s: folding %q twice gives %q, not %q", c.kind, c.a, f(k), k)
		}
	}
	for _, u := range []string{"abc", "Alice.B_c-1", "ZZZ", "._-", strings.Repeat("Q", scangate.UsernameMax)} {
		if scangate.FoldUsername(u) != emailfold.Fold(u) {
			t.Errorf("username %q: FoldUsername %q, fold.Fold %q", u, scangate.FoldUsername(u), emailfold.Fold(u))
		}
	}
}

// TestRoles: the three roles of the API, and which calls each may make.
func TestRoles(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		role  scangate.Role
		valid bool
	}{
		{"admin", true}, {"user", true}, {"readonly", true},
		{"", false}, {"Admin", false}, {"ADMIN", false}, {"read-only", false}, {"root", false},
	} {
		if c.role.Valid() != c.valid {
			t.Errorf("Role(%q).Valid() = %v", c.role, !c.valid)
		}
	}
	if !slices.Equal(scangate.Roles, []string{"admin", "user", "readonly"}) {
		t.Errorf("Roles = %v", scangate.Roles)
	}
	for _, c := range []struct {
		caller  scangate.Role
		allowed []scangate.Role
		want    bool
	}{
		{scangate.RoleAdmin, []scangate.Role{scangate.RoleAdmin}, true},
		{scangate.RoleUser, []scangate.Role{scangate.RoleAdmin, scangate.RoleUser}, true},
		{scangate.RoleReadonly, []scangate.Role{scangate.RoleAdmin, scangate.RoleUser}, false},
		{scangate.RoleAdmin, nil, false},
		{"", []scangate.Role{scangate.RoleAdmin, scangate.RoleUser, scangate.RoleReadonly}, false},
	} {
		if got := (scangate.Caller{ID: 1, Role: c.caller}).Allowed(c.allowed...); got != c.want {
			t.Errorf("%q allowed among %v: %v; want %v", c.caller, c.allowed, got, c.want)
		}
	}
}
