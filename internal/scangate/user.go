package scangate

import (
	"net/mail"
	"strings"
	"time"
	"unicode/utf8"
)

// Role is what a user may do.
type Role string

// The roles of the API.
const (
	RoleAdmin    Role = "admin"
	RoleUser     Role = "user"
	RoleReadonly Role = "readonly"
)

// Roles lists every role, in the order the API documents them.
var Roles = []string{string(RoleAdmin), string(RoleUser), string(RoleReadonly)}

// Valid reports whether r is one of the roles.
func (r Role) Valid() bool {
	return r == RoleAdmin || r == RoleUser || r == RoleReadonly
}

// User is a stored user account. PasswordHash never leaves the service.
type User struct {
	ID           int64
	Username     string
	Email        string
	EmailKey     string // Email folded (internal/emailfold): what makes it unique
	Role         Role
	Active       bool
	PasswordHash string
	CreatedAt    Time
	UpdatedAt    Time
	AddedBy      *int64
	UpdatedBy    *int64
	// TokensValidFrom is when the user was last deactivated: every token
	// issued before it stays invalid, also after a reactivation.
	TokensValidFrom time.Time
}

// NewUser is a request to create a user.
type NewUser struct {
	Username string
	Email    string
	Password string
	Role     Role
	Active   bool
}

// UserChange is a request to update a user: every field is replaced.
type UserChange struct {
	Email  string
	Role   Role
	Active bool
}

// Caller is the authenticated user a request acts for, as the authorizer
// (or its cached answer) told.
type Caller struct {
	ID       int64
	Username string
	Role     Role
	IssuedAt time.Time // when the caller's token was issued
	TokenID  int64     // the token's id (0 for tokens from before ids)
	Scope    string    // the token's scope: ScopeWrite, ScopeRead (GET routes only) or ScopeScan
	// TokenHash is the SHA-256 of the token (hex), known once a write has
	// checked it; never the token itself.
	TokenHash string
	// Repos are the repositories the token is scoped to (nil: every one;
	// Reaches).
	Repos []RepoRef
}

// Actor is the caller as an audit entry names it.
func (c Caller) Actor() *Actor {
	return &Actor{UserID: c.ID, Username: c.Username, TokenID: c.TokenID}
}

// Current checks the caller against its current user record u: a write
// acts only for an active user, with a token issued after its last
// deactivation (401 otherwise), in a role that may call the operation
// (403). It returns the caller with its current role.
func (c Caller) Current(u User, roles ...Role) (Caller, error) {
	if !u.Active || c.IssuedAt.Before(u.TokensValidFrom) {
		return Caller{}, Errorf(KindUnauthorized, "the token's user is not active")
	}
	c.Role, c.Username = u.Role, u.Username
	if len(roles) > 0 && !c.Allowed(roles...) {
		return Caller{}, Errorf(KindForbidden, "the role %s may not do this", c.Role)
	}
	return c, nil
}

// Allowed reports whether the caller holds one of the roles.
func (c Caller) Allowed(roles ...Role) bool {
	for _, r := range roles {
		if c.Role == r {
			return true
		}
	}
	return false
}

// Limits of user fields.
const (
	UsernameMin = 3
	UsernameMax = 64
	EmailMax    = 254
	PasswordMin = 12
	PasswordMax = 128
)

// Byte bounds of the strings of a valid request that become part of a
// DynamoDB key, in their keyed form (Fold, FindingKey). DynamoDB takes at
// most 2,048 bytes in a partition key and 1,024 in a sort key; these leave
// room for any prefix of the store's keys.
const (
	// UsernameKeyMax: usernames are ASCII, and folding keeps their length;
	// a login for any other name never reaches a key.
	UsernameKeyMax = UsernameMax
	// EmailKeyMax: an address is at most 254 bytes as sent and, checked
	// apart since NFKC can make a character 11 times longer, once folded.
	EmailKeyMax = EmailMax
	// NameKeyMax: finding names, their aliases and allowlist names are at
	// most MaxNameLen characters of at most 4 bytes; FindingKey maps each
	// character to one. Such a key fits a partition key with a prefix, not
	// a sort key.
	NameKeyMax = 4 * MaxNameLen
)

// Validate checks the rules of a new user, adding one problem per field.
func (u NewUser) Validate(p *Problems) {
	checkUsername(p, u.Username)
	checkEmail(p, u.Email)
	n := utf8.RuneCountInString(u.Password)
	if n < PasswordMin || n > PasswordMax {
		p.Add("/password", "must be %d to %d characters", PasswordMin, PasswordMax)
	}
	checkRole(p, u.Role)
}

// Validate checks the rules of a user change.
func (c UserChange) Validate(p *Problems) {
	checkEmail(p, c.Email)
	checkRole(p, c.Role)
}

func checkUsername(p *Problems, s string) {
	if len(s) < UsernameMin || len(s) > UsernameMax {
		p.Add("/username", "must be %d to %d characters", UsernameMin, UsernameMax)
		return
	}
	if !usernameChars(s) {
		p.Add("/username", "may hold only letters A-Z and a-z, digits and . _ -")
	}
}

func usernameChars(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// ValidUsername reports whether some user could have the username s: 3 to
// 64 ASCII letters, digits and . _ -. A login for any other name fails
// without a database read.
func ValidUsername(s string) bool {
	return len(s) >= UsernameMin && len(s) <= UsernameMax && usernameChars(s)
}

func checkEmail(p *Problems, s string) {
	if len(s) > EmailMax {
		p.Add("/user_email", "must be at most %d bytes", EmailMax)
		return
	}
	if checkHidden(p, "/user_email", s) {
		return
	}
	a, err := mail.ParseAddress(s)
	if err != nil || a.Name != "" || a.Address != s || !strings.Contains(s[strings.LastIndexByte(s, '@')+1:], ".") {
		p.Add("/user_email", "must be one plain e-mail address such as name@example.com")
		return
	}
}

// CheckEmailKey checks the folded form of an address (internal/emailfold), which is
// what makes it unique: NFKC can make a character many times longer.
func CheckEmailKey(p *Problems, key string) {
	if n := len(key); n > EmailKeyMax {
		p.Add("/user_email", "must be at most %d bytes once normalised (NFKC, case folded); this address is %d", EmailKeyMax, n)
	}
}

func checkRole(p *Problems, r Role) {
	if !r.Valid() {
		p.Add("/role", "must be one of %s", strings.Join(Roles, ", "))
	}
}

// FoldUsername is the form under which usernames are unique: valid
// usernames are ASCII, so folding them is lower-casing (internal/emailfold agrees).
func FoldUsername(s string) string { return strings.ToLower(s) }
