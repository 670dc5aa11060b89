package scangate

import (
	"time"
	"unicode/utf8"
)

// Token is a stored bearer token. Only the SHA-256 hash of the token is kept.
type Token struct {
	ID         int64
	Hash       string
	UserID     int64
	Kind       string // TokenLogin or TokenPersonal
	Name       string // a personal token's name
	Scope      string // ScopeWrite, ScopeRead or ScopeScan
	CreatedAt  time.Time
	ExpiresAt  time.Time
	Revoked    bool
	LastUsedAt time.Time // zero until first used
	// Repos are the repositories a personal token is scoped to: it
	// records and reads scans, PRs, gates and findings of those only, and
	// nothing else of the service. Nil: every repository.
	Repos []RepoRef
}

// Kinds and scopes of tokens.
const (
	TokenLogin    = "login"    // issued by logging in
	TokenPersonal = "personal" // created by its user (or the admin CLI) for a CI job or dashboard
	ScopeWrite    = "write"
	ScopeRead     = "read" // GET routes and logging out only
	// ScopeScan is a CI job's: it records scans (inline, SARIF, uploads),
	// reads, and logs out; nothing else.
	ScopeScan = "scan"
)

// Scopes lists the scopes of personal tokens; the first is the default.
var Scopes = []string{ScopeWrite, ScopeRead, ScopeScan}

// Limits of personal tokens.
const (
	MaxPersonalTokens  = 20 // unexpired, per user
	TokenNameMax       = 100
	TokenDaysMax       = 366
	TokenDaysDefault   = 90
	LastUsedResolution = time.Minute // last_used_at is written at most this often
)

// NewToken is a request for a personal token.
type NewToken struct {
	Name  string
	Days  int64
	Scope string
	Repos []RepoRef // nil: every repository
}

// Validate checks the rules of a personal token request.
func (t NewToken) Validate(p *Problems) {
	if n := utf8.RuneCountInString(t.Name); n < 1 || n > TokenNameMax {
		p.Add("/name", "must be 1 to %d characters", TokenNameMax)
	} else {
		checkHidden(p, "/name", t.Name)
	}
	if t.Days < 1 || t.Days > TokenDaysMax {
		p.Add("/expires_in_days", "must be 1 to %d", TokenDaysMax)
	}
	if t.Scope != ScopeWrite && t.Scope != ScopeRead && t.Scope != ScopeScan {
		p.Add("/scope", "must be write, read or scan")
	}
	ValidateRepos(p, "/repos", t.Repos)
}

// Login throttling: at most MaxLoginAttempts password verifications per
// username within LoginWindow. An attempt is reserved before its password
// is verified; a successful login gives its reservation back, a failed one
// keeps it as the record of the failure. Once a username's attempts are
// all taken, every login for it answers 429 until the oldest leaves the
// window.
const (
	MaxLoginAttempts = 5
	LoginWindow      = 15 * time.Minute
)

// LoginAttempt is a reserved attempt to log in as a username: what the
// password is checked against, and which reservation to settle.
type LoginAttempt struct {
	UserID       int64 // 0 when no user holds the username
	PasswordHash string
	Active       bool
	Slot         int       // the reservation's place
	At           time.Time // when it was reserved
	// Last reports that this reservation took the username's last free
	// place: if it fails, the username is throttled from now on.
	Last bool
}
