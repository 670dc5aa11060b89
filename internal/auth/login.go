package auth

import (
	"context"
	"fmt"
	"time"

	"github.com/scangate/scangate/internal/scangate"
)

// LoginStore is what logging in reads and writes: it reserves an attempt
// before the password is verified (or refuses with KindTooMany), and then
// settles the reservation.
type LoginStore interface {
	ReserveLogin(ctx context.Context, username string, now time.Time) (scangate.LoginAttempt, error)
	LoginSucceeded(ctx context.Context, username string, a scangate.LoginAttempt, t scangate.Token, who scangate.Who) error
	LoginFailed(ctx context.Context, username string, a scangate.LoginAttempt, who scangate.Who) error
	TokenID(ctx context.Context) (int64, error)
}

// PasswordChecker checks a password against its stored hash; an empty
// hash costs the same time as a real one and never matches
// (internal/auth/password.Argon2id).
type PasswordChecker interface {
	Check(hash, password string) (bool, error)
}

// Login exchanges a username and password for a bearer token.
type Login struct {
	Store     LoginStore
	Passwords PasswordChecker
	TokenTTL  time.Duration
	Now       func() time.Time
}

// Issued is a new token and how long it lives.
type Issued struct {
	Token     string
	ID        int64
	ExpiresIn time.Duration
}

// Login checks the password and issues a token. Unknown usernames, wrong
// passwords and inactive users get the same 401 after the same work. An
// attempt is reserved before the password is verified, so however many
// logins for one username arrive at once, at most
// scangate.MaxLoginAttempts passwords are verified within the window; the
// others answer 429. A username that no user can have
// (scangate.ValidUsername) gets the 401 at once: it is neither read nor
// counted, so it never reaches a key.
//
// who tells the request for the audit entries: the failure's (no actor),
// or the new token's (its user as the actor).
func (l Login) Login(ctx context.Context, username, password string, who scangate.Who) (Issued, error) {
	if !scangate.ValidUsername(username) {
		return Issued{}, scangate.Errorf(scangate.KindUnauthorized, "the username or password is wrong")
	}
	now := l.Now()
	a, id, err := l.reserve(ctx, username, now)
	if err != nil {
		return Issued{}, err
	}
	ok, err := l.Passwords.Check(a.PasswordHash, password)
	if err != nil {
		return Issued{}, fmt.Errorf("check password of user %d: %w", a.UserID, err)
	}
	if !ok || !a.Active || a.UserID == 0 {
		if err := l.Store.LoginFailed(ctx, username, a, who); err != nil {
			return Issued{}, err
		}
		return Issued{}, scangate.Errorf(scangate.KindUnauthorized, "the username or password is wrong")
	}
	token, err := NewToken(a.UserID)
	if err != nil {
		return Issued{}, err
	}
	t := scangate.Token{ID: id, Hash: HashToken(token), UserID: a.UserID, Kind: scangate.TokenLogin, Scope: scangate.ScopeWrite,
		CreatedAt: now, ExpiresAt: now.Add(l.TokenTTL)}
	who.Actor = &scangate.Actor{UserID: a.UserID, Username: username, TokenID: id}
	if err := l.Store.LoginSucceeded(ctx, username, a, t, who); err != nil {
		return Issued{}, err
	}
	return Issued{Token: token, ID: id, ExpiresIn: l.TokenTTL}, nil
}

// reserve reserves an attempt and, beside it (so that a login waits for
// no more round trips than before), allocates the id of the token it may
// issue; a failed login leaves a gap in the ids.
func (l Login) reserve(ctx context.Context, username string, now time.Time) (scangate.LoginAttempt, int64, error) {
	var id int64
	var idErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		id, idErr = l.Store.TokenID(ctx)
	}()
	a, err := l.Store.ReserveLogin(ctx, username, now)
	<-done
	if err != nil {
		return a, 0, err
	}
	return a, id, idErr
}
