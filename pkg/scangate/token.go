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
