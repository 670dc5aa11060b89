package scangate

import "time"

// Token is a stored bearer token. Only the SHA-256 hash of the token is kept.
type Token struct {
	Hash      string
	UserID    int64
	Kind      string // "login" or "cli"
	CreatedAt time.Time
	ExpiresAt time.Time
	Revoked   bool
}

// LoginFailures are the recent failed logins for one lowercased username,
// existing or not, with the version that guards their update.
type LoginFailures struct {
	Times []time.Time
	Ver   int64
}
